"""scikit-learn transformers computed by normops' kernels.

Needs scikit-learn >= 1.6 (``pip install "normops[sklearn]"``); ``import
normops`` does not import this module.

- ``LayerNormalizer``: LayerNormalization of each row (sample) over its
  features, optional fixed ``scale`` and ``bias`` vectors.
- ``RMSNormalizer``: RMSNormalization of each row, optional ``scale``.
- ``SoftmaxTransformer``: softmax (or, with ``log=True``, log-softmax) of
  each row.
- ``ColumnStandardizer``: ``StandardScaler``'s standardisation, with the
  column means and variances summed by normops' canonical Sum16.

The first three are stateless: ``fit`` only checks X and records
``n_features_in_`` (and ``feature_names_in_``), and ``transform`` may be
called without it. All keep float32 and float64 (other numeric input is
converted to float64, as scikit-learn does), have one output feature per
input feature and support ``set_output(transform="pandas")``. See
docs/preprocessing.md.
"""
import concurrent.futures

import numpy as np

try:
    from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "normops.preprocessing needs scikit-learn >= 1.6: pip install 'normops[sklearn]'") from exc

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError
from .normalization import layer_normalization, rms_normalization
from .softmax import scipy_log_softmax, scipy_softmax

__all__ = ["LayerNormalizer", "RMSNormalizer", "SoftmaxTransformer", "ColumnStandardizer"]

_DTYPES = [np.float64, np.float32]  # kept as they are; anything else becomes float64


def _param_vector(owner, name, value, n_features, dtype):
    """A fixed scale/bias parameter as n_features values of X's dtype, or
    None (value None). A scalar broadcasts to every feature."""
    if value is None:
        return None
    try:
        vector = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{owner}: parameter {name!r} must be None, a number or a vector of "
                                f"{n_features} numbers") from None
    if vector.ndim > 1 or (vector.ndim == 1 and vector.shape[0] != n_features):
        raise InvalidInputError(f"{owner}: parameter {name!r} has shape {vector.shape}; X has "
                                f"{n_features} features, so it must be a scalar or of shape ({n_features},)")
    return np.ascontiguousarray(np.broadcast_to(vector, (n_features,)))


class _RowWise(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Shared machinery of the stateless row-wise transformers."""

    def fit(self, X, y=None):
        """Check X and record ``n_features_in_`` (and ``feature_names_in_``
        when X has string column names). Nothing is learned."""
        X = validate_data(self, X, dtype=_DTYPES)
        self._checked_apply(X[:0])  # checks every parameter now, not on the first transform
        return self

    def transform(self, X):
        """The operator applied to each row of X (n_samples, n_features);
        returns a new array of X's float dtype."""
        X = validate_data(self, X, dtype=_DTYPES, reset=False)
        return self._checked_apply(X)

    def _checked_apply(self, X):
        """_apply, with the operator's errors about a parameter prefixed by
        the transformer's name (the parameter is the transformer's)."""
        name = type(self).__name__
        try:
            return self._apply(X)
        except (InvalidInputError, UnsupportedError) as exc:
            if str(exc).startswith(name + ":"):
                raise
            raise type(exc)(f"{name}: {exc}") from exc

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class LayerNormalizer(_RowWise):
    """LayerNormalization of each sample (row) over its features.

    ``Y = (X - mean) / sqrt(var + epsilon) * scale + bias`` per row,
    computed by ``normops.layer_normalization(X, scale, bias, axis=-1)``:
    exact by default, the same bits for every thread count.

    Parameters
    ----------
    epsilon : float, default 1e-5
        Added to the variance.
    scale, bias : None, float or array of shape (n_features,), default None
        Fixed (not learned) element-wise scale and offset; None means 1
        and 0. They are cast to X's dtype.
    mode : {"exact", "fast"} or None
        normops' flavour; None follows ``normops.config``.
    n_threads : int or None
        Threads of each call; None follows ``normops.config``.
    """

    def __init__(self, *, epsilon=1e-5, scale=None, bias=None, mode=None, n_threads=None):
        self.epsilon = epsilon
        self.scale = scale
        self.bias = bias
        self.mode = mode
        self.n_threads = n_threads

    def _params(self, n_features, dtype):
        scale = _param_vector(type(self).__name__, "scale", self.scale, n_features, dtype)
        bias = _param_vector(type(self).__name__, "bias", self.bias, n_features, dtype)
        return np.ones(n_features, dtype) if scale is None else scale, bias

    def _apply(self, X):
        scale, bias = self._params(X.shape[1], X.dtype)
        return layer_normalization(X, scale, bias, axis=-1, epsilon=self.epsilon,
                                   mode=self.mode, n_threads=self.n_threads)


class RMSNormalizer(_RowWise):
    """RMSNormalization of each sample (row) over its features.

    ``Y = X / sqrt(mean(X**2) + epsilon) * scale`` per row, computed by
    ``normops.rms_normalization(X, scale, axis=-1)``.

    Parameters
    ----------
    epsilon : float, default 1e-5
    scale : None, float or array of shape (n_features,), default None
        Fixed element-wise scale (None: 1), cast to X's dtype.
    mode, n_threads : as in ``LayerNormalizer``.
    """

    def __init__(self, *, epsilon=1e-5, scale=None, mode=None, n_threads=None):
        self.epsilon = epsilon
        self.scale = scale
        self.mode = mode
        self.n_threads = n_threads

    def _scale(self, n_features, dtype):
        scale = _param_vector(type(self).__name__, "scale", self.scale, n_features, dtype)
        return np.ones(n_features, dtype) if scale is None else scale

    def _apply(self, X):
        return rms_normalization(X, self._scale(X.shape[1], X.dtype), axis=-1, epsilon=self.epsilon,
                                 mode=self.mode, n_threads=self.n_threads)


class SoftmaxTransformer(_RowWise):
    """Softmax of each sample (row) over its features, or log-softmax with
    ``log=True``: ``normops.softmax(X, axis=1)`` / ``normops.log_softmax``.

    Parameters
    ----------
    log : bool, default False
        Log-softmax instead of softmax.
    mode, n_threads : as in ``LayerNormalizer`` (the fast flavour uses the
        fast exponential, see docs/usage.md).
    """

    def __init__(self, *, log=False, mode=None, n_threads=None):
        self.log = log
        self.mode = mode
        self.n_threads = n_threads

    def _apply(self, X):
        if not isinstance(self.log, (bool, np.bool_)):
            raise InvalidInputError(f"{type(self).__name__}: parameter 'log' must be True or False, "
                                    f"not {self.log!r}")
        function = scipy_log_softmax if self.log else scipy_softmax
        return function(X, axis=1, mode=self.mode, n_threads=self.n_threads)


# ------------------------------------------------------------ standardiser

_PARALLEL_BELOW = 1 << 16  # elements: smaller inputs are summed on one thread


def _sum16_rows(M, n_threads):
    """Sum16 of each row of the C-contiguous matrix M (kernel sum16_rows),
    the rows split over threads (the kernel runs without the GIL). Each
    row is summed whole by one call, so the bits never depend on the
    split."""
    rows, cols = M.shape
    out = np.empty(rows, M.dtype)
    threads = min(_config.resolve_threads(n_threads, "ColumnStandardizer"), rows)
    if threads <= 1 or M.size < _PARALLEL_BELOW:
        _isa.kernels.sum16_rows(M, out, rows, cols)
        return out
    bounds = [(i * rows // threads, (i + 1) * rows // threads) for i in range(threads)]

    def part(bound):
        lo, hi = bound
        view = out[lo:hi]
        _isa.kernels.sum16_rows(M[lo:hi], view, hi - lo, cols)

    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(part, bounds))
    return out


def column_mean_var(X, n_threads=None):
    """Per-column mean and (biased) variance of the 2-D float array X with
    normops' arithmetic: column j's sum is the canonical Sum16 of
    X[:, j] in row order, divided by n_samples (as a number of X's dtype);
    the variance is the Sum16 of the separately rounded squared deviations
    (x - mean) * (x - mean), divided by n_samples. These are the mean and
    variance LayerNormalization computes for the rows of X.T."""
    Xt = np.ascontiguousarray(X.T)  # one column per row: Sum16 runs on contiguous memory
    n = X.dtype.type(X.shape[0])
    mean = _sum16_rows(Xt, n_threads) / n
    dev = Xt - mean[:, None]  # new array: Xt may be a view of the caller's X
    np.multiply(dev, dev, out=dev)
    var = _sum16_rows(dev, n_threads) / n
    return mean, var


class ColumnStandardizer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise each feature (column): ``(X - mean_) / scale_``, like
    scikit-learn's ``StandardScaler`` (its results within rounding), with
    the statistics summed by normops' canonical Sum16 in a fixed order, so
    ``mean_``, ``var_`` and the output are the same bits for every thread
    count, machine and run.

    Parameters
    ----------
    with_mean : bool, default True
        Centre the data (subtract ``mean_``).
    with_std : bool, default True
        Scale to unit variance (divide by ``scale_``).
    n_threads : int or None
        Threads summing the columns; None follows ``normops.config``.

    Attributes
    ----------
    mean_ : ndarray (n_features,) or None
        Column means (None when ``with_mean=False`` and ``with_std=False``).
    var_ : ndarray (n_features,) or None
        Column variances (divided by n_samples), None when ``with_std=False``.
    scale_ : ndarray (n_features,) or None
        ``sqrt(var_)``, with 1 where the variance is (close to) zero, as
        StandardScaler does. None when ``with_std=False``.
    n_samples_seen_ : int
    n_features_in_, feature_names_in_ : as every scikit-learn estimator.

    Unlike StandardScaler it takes dense input only, no ``sample_weight``,
    no ``partial_fit``, and rejects NaN (StandardScaler ignores it).
    Statistics are accumulated in X's dtype (float32 data: float32 sums,
    as every normops sum; StandardScaler uses float64 accumulators).
    """

    def __init__(self, *, with_mean=True, with_std=True, n_threads=None):
        self.with_mean = with_mean
        self.with_std = with_std
        self.n_threads = n_threads

    def fit(self, X, y=None):
        """Compute ``mean_``, ``var_`` and ``scale_`` from X (n_samples, n_features)."""
        for name in ("with_mean", "with_std"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InvalidInputError(f"ColumnStandardizer: parameter {name!r} must be True or False, "
                                        f"not {getattr(self, name)!r}")
        _config.check_n_threads(self.n_threads, "ColumnStandardizer")
        X = validate_data(self, X, dtype=_DTYPES)
        self.n_samples_seen_ = X.shape[0]
        if self.with_mean or self.with_std:
            mean, var = column_mean_var(X, self.n_threads)
        else:
            mean = var = None
        self.mean_ = mean
        if self.with_std:
            self.var_ = var
            scale = np.sqrt(var)
            # StandardScaler's rule: a column whose variance is within the
            # rounding error of a constant column is left unscaled
            eps = np.finfo(np.float64).eps
            n = X.shape[0]
            constant = var <= n * eps * var + (n * mean * eps) ** 2
            scale[constant | (scale == 0)] = 1
            self.scale_ = scale
        else:
            self.var_ = self.scale_ = None
        return self

    def transform(self, X):
        """Standardised X (a new array of X's dtype)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=_DTYPES, reset=False)
        out = X - self.mean_.astype(X.dtype, copy=False) if self.with_mean else X.copy()
        if self.with_std:
            out /= self.scale_.astype(X.dtype, copy=False)
        return out

    def inverse_transform(self, X):
        """Undo ``transform``: ``X * scale_ + mean_``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=_DTYPES, reset=False)
        out = X * self.scale_.astype(X.dtype, copy=False) if self.with_std else X.copy()
        if self.with_mean:
            out += self.mean_.astype(X.dtype, copy=False)
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
