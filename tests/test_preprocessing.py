"""normops.preprocessing: scikit-learn's estimator checks, and the bits of
every transformer against the normops function it wraps."""
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import normops  # noqa: E402
from normops import InvalidInputError  # noqa: E402
from normops.preprocessing import (  # noqa: E402
    ColumnStandardizer, LayerNormalizer, RMSNormalizer, SoftmaxTransformer,
)

from bits import same_bits  # noqa: E402


@parametrize_with_checks([LayerNormalizer(), LayerNormalizer(scale=2.0, bias=-1.0), RMSNormalizer(),
                          SoftmaxTransformer(), SoftmaxTransformer(log=True), ColumnStandardizer()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    return rng.standard_normal((300, 130)) * rng.uniform(0.1, 5, 130) + rng.uniform(-3, 3, 130)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_normalizer_is_layer_normalization(data, dtype):
    X = data.astype(dtype)
    scale = np.linspace(0.5, 2, X.shape[1])
    bias = np.linspace(-1, 1, X.shape[1])
    got = LayerNormalizer(scale=scale, bias=bias, epsilon=1e-3).fit_transform(X)
    want = normops.layer_normalization(X, scale.astype(dtype), bias.astype(dtype), epsilon=1e-3)
    assert got.dtype == dtype and same_bits(got, want)
    plain = LayerNormalizer().transform(X)  # stateless: no fit needed
    assert same_bits(plain, normops.layer_normalization(X, np.ones(X.shape[1], dtype)))
    # plain (x - mean) / sqrt(var + eps), to within float32 rounding
    ref = (data - data.mean(1, keepdims=True)) / np.sqrt(data.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(plain, ref, rtol=0, atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rms_normalizer_is_rms_normalization(data, dtype):
    X = data.astype(dtype)
    scale = np.linspace(0.5, 2, X.shape[1])
    got = RMSNormalizer(scale=scale).fit(X).transform(X)
    assert got.dtype == dtype
    assert same_bits(got, normops.rms_normalization(X, scale.astype(dtype)))
    ref = data / np.sqrt((data ** 2).mean(1, keepdims=True) + 1e-5) * scale
    np.testing.assert_allclose(got, ref, rtol=2e-6 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_transformer(data, log):
    scipy_special = pytest.importorskip("scipy.special")
    for dtype in (np.float32, np.float64):
        X = data.astype(dtype)
        got = SoftmaxTransformer(log=log).fit_transform(X)
        fn = normops.log_softmax if log else normops.softmax
        assert same_bits(got, fn(X, axis=1))
    ref = (scipy_special.log_softmax if log else scipy_special.softmax)(data, axis=1)
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-14)


def test_row_transformers_same_bits_for_every_thread_count(data):
    X = np.tile(data.astype(np.float32), (4, 1))  # above the serial threshold
    for est in (LayerNormalizer(), RMSNormalizer(), SoftmaxTransformer(), SoftmaxTransformer(log=True)):
        outs = [est.set_params(n_threads=t).fit_transform(X) for t in (1, 2, 3)]
        assert all(same_bits(outs[0], o) for o in outs[1:]), type(est).__name__
    fast = SoftmaxTransformer(mode="fast").fit_transform(X)
    assert fast.dtype == np.float32 and np.allclose(fast.sum(1), 1, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_standardizer_statistics_are_layer_normalization_statistics(data, dtype):
    X = data.astype(dtype)
    est = ColumnStandardizer().fit(X)
    n = X.shape[0]
    # the same mean and variance as LayerNormalization of the rows of X.T:
    # its InvStdDev output is 1 / sqrt(var + epsilon) in float32
    if dtype == np.float32:
        _, mean, inv = normops.layer_normalization(np.ascontiguousarray(X.T), np.ones(n, dtype),
                                                   epsilon=1e-5, full_output=True)
        assert same_bits(est.mean_, mean.ravel())
        assert same_bits(np.float32(1) / np.sqrt(est.var_ + np.float32(1e-5)), inv.ravel())
    assert est.mean_.dtype == est.var_.dtype == dtype
    ss = StandardScaler().fit(X)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(est.mean_, ss.mean_, rtol=tol, atol=tol)
    np.testing.assert_allclose(est.var_, ss.var_, rtol=4 * tol)
    np.testing.assert_allclose(est.transform(X), ss.transform(X), rtol=0, atol=20 * tol)
    np.testing.assert_allclose(est.inverse_transform(est.transform(X)), X, rtol=0, atol=50 * tol * 8)
    assert est.n_samples_seen_ == n


def test_column_standardizer_threads_and_runs_give_the_same_bits():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5000, 40)).astype(np.float32) * 10 + 3  # 200000 elements: split over threads
    fits = [ColumnStandardizer(n_threads=t).fit(X) for t in (1, 2, 3, 2)]
    for f in fits[1:]:
        assert same_bits(f.mean_, fits[0].mean_) and same_bits(f.var_, fits[0].var_)
        assert same_bits(f.transform(X), fits[0].transform(X))


def test_column_standardizer_options_match_standard_scaler(data):
    X = data.copy()
    X[:, 3] = 2.5  # a constant column is left unscaled, as StandardScaler does
    for kw in ({}, {"with_mean": False}, {"with_std": False}, {"with_mean": False, "with_std": False}):
        ours, theirs = ColumnStandardizer(**kw).fit(X), StandardScaler(**kw).fit(X)
        np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=0, atol=1e-12)
        assert (ours.scale_ is None) == (theirs.scale_ is None)
        if ours.scale_ is not None:
            assert ours.scale_[3] == 1 == theirs.scale_[3]
    assert np.array_equal(X, np.where(np.arange(X.shape[1]) == 3, 2.5, data))  # input untouched


def test_inputs_are_not_mutated_and_dtype_is_kept(data):
    X32 = data.astype(np.float32)
    saved = X32.copy()
    for est in (LayerNormalizer(), RMSNormalizer(), SoftmaxTransformer(), ColumnStandardizer()):
        out = est.fit_transform(X32)
        assert out.dtype == np.float32 and out is not X32
        assert np.array_equal(X32, saved)
    F = np.asfortranarray(data)  # X.T is then C-contiguous: a view the statistics must not write to
    saved = F.copy()
    ColumnStandardizer().fit(F)
    assert np.array_equal(F, saved)
    ints = np.arange(24).reshape(4, 6)
    assert LayerNormalizer().fit_transform(ints).dtype == np.float64  # like scikit-learn


def test_bad_parameters_raise_naming_them(data):
    with pytest.raises(InvalidInputError, match="'scale' has shape \\(3,\\)"):
        LayerNormalizer(scale=[1.0, 2.0, 3.0]).fit(data)
    with pytest.raises(InvalidInputError, match="'bias'"):
        LayerNormalizer(bias=np.ones((2, 2))).fit(data)
    with pytest.raises(InvalidInputError, match="'scale'"):
        RMSNormalizer(scale="abc").fit(data)
    with pytest.raises(InvalidInputError, match="'log'"):
        SoftmaxTransformer(log="yes").fit(data)
    with pytest.raises(InvalidInputError, match="'with_mean'"):
        ColumnStandardizer(with_mean=None).fit(data)
    with pytest.raises(InvalidInputError, match="n_threads"):
        ColumnStandardizer(n_threads=0).fit(data)
    with pytest.raises(InvalidInputError, match="mode"):
        LayerNormalizer(mode="slow").fit(data)  # fit checks what transform will use
    with pytest.raises(InvalidInputError, match="^RMSNormalizer: .*epsilon"):
        RMSNormalizer(epsilon="small").fit(data)
    with pytest.raises(InvalidInputError, match="^LayerNormalizer: .*epsilon"):
        LayerNormalizer(epsilon="x").fit(data)  # the operator's message, under the transformer's name
    with pytest.raises(InvalidInputError, match="^LayerNormalizer: .*'scale'"):
        LayerNormalizer(scale="abc").fit(data)  # already named: not prefixed twice

    class MyNormalizer(LayerNormalizer):
        pass

    with pytest.raises(InvalidInputError, match="^MyNormalizer: parameter 'scale'"):
        MyNormalizer(scale="abc").fit(data)  # a subclass is named once, by its own name
    with pytest.raises(InvalidInputError, match="n_threads"):
        SoftmaxTransformer(n_threads=-2).fit(data)
    with pytest.raises(ValueError, match="features"):
        LayerNormalizer().fit(data).transform(data[:, :5])


def test_set_output_pandas_and_feature_names(data):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(data[:, :4], columns=["a", "b", "c", "d"], index=np.arange(300) * 2)
    for est in (LayerNormalizer(), RMSNormalizer(), SoftmaxTransformer(), ColumnStandardizer()):
        out = est.set_output(transform="pandas").fit_transform(df)
        assert isinstance(out, pd.DataFrame)
        assert list(out.columns) == ["a", "b", "c", "d"] and out.index.equals(df.index)
        assert list(est.get_feature_names_out()) == ["a", "b", "c", "d"]
        est.set_output(transform="default")
        assert same_bits(out.to_numpy(), est.transform(df))


def test_pipeline(data):
    linear_model = pytest.importorskip("sklearn.linear_model")
    y = (data[:, 0] > data[:, 1]).astype(int)
    pipe = make_pipeline(ColumnStandardizer(), LayerNormalizer(), linear_model.LogisticRegression())
    pipe.fit(data, y)
    assert pipe.score(data, y) > 0.8
    assert list(pipe[:-1].get_feature_names_out()) == [f"x{i}" for i in range(data.shape[1])]
