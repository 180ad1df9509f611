"""normops' own exponential and logarithms on float32 arrays.

``exp32``, ``log32`` and ``log1p32`` are correctly rounded (to nearest, ties to even)
for every float32 input, with the same bits on every CPU, ISA level and
thread count (docs/transcendentals.md; ``python -m normops
verify-transcendentals`` checks all 2^32 inputs). They are the exp and log
of the exact flavour of Softmax, LogSoftmax and the Reduce* operators;
log1p32 serves ``normops.logsumexp``.
"""
import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError
from ._validate import array_input

_FLOAT32 = np.dtype(np.float32)


def _map(name, kernel, x, out, n_threads):
    x = array_input(name, "x", x)
    if x.dtype != _FLOAT32:
        raise InvalidInputError(f"{name}: input 'x' has dtype {x.dtype}; {name} takes float32 only")
    n_threads = _config.kernel_threads(n_threads, name)
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise InvalidInputError(f"{name}: argument 'out' must be a float32 ndarray, not {type(out).__name__}")
        if out.dtype.kind != "f" or out.dtype.itemsize != 4:
            raise InvalidInputError(f"{name}: argument 'out' has dtype {out.dtype}; it must be float32")
        if out.shape != x.shape:
            raise InvalidInputError(f"{name}: argument 'out' has shape {out.shape}; it must be {x.shape} like 'x'")
        if not out.flags.writeable:
            raise InvalidInputError(f"{name}: argument 'out' is read-only")
    # the kernel wants aligned, native, C-contiguous arrays
    src = x if x.flags.c_contiguous and x.flags.aligned else np.array(x, dtype=_FLOAT32, order="C")
    direct = (out is not None and out.flags.c_contiguous and out.flags.aligned and out.dtype.isnative
              and (out is src or not np.may_share_memory(out, src)
                   or (out.__array_interface__["data"][0] == src.__array_interface__["data"][0]
                       and out.strides == src.strides)))
    dst = out if direct else np.empty(x.shape, _FLOAT32)
    kernel(src.reshape(-1), dst.reshape(-1), n_threads)
    if out is None:
        return dst
    if dst is not out:
        out[...] = dst
    return out


def exp32(x, out=None, *, n_threads=None):
    """e^x, correctly rounded, element-wise on a float32 array.

    ``x``: float32 array of any shape and strides (another dtype raises
    InvalidInputError). ``out``: optional float32 array of x's shape that
    receives the result (it may be x itself). Returns the result array
    (``out`` when given). exp32(NaN) = NaN, exp32(+inf) = +inf,
    exp32(-inf) = +0; results above the float32 range are +inf, results
    below it the correctly rounded subnormal or +0.
    """
    return _map("exp32", _isa.kernels.exp32_into, x, out, n_threads)


def log32(x, out=None, *, n_threads=None):
    """The natural logarithm, correctly rounded, element-wise on a float32
    array (arguments as in exp32). log32(x < 0) = NaN, log32(+-0) = -inf,
    log32(+inf) = +inf, log32(1) = +0, subnormal inputs exact.
    """
    return _map("log32", _isa.kernels.log32_into, x, out, n_threads)


def log1p32(x, out=None, *, n_threads=None):
    """log(1 + x), correctly rounded, element-wise on a float32 array
    (arguments as in exp32). log1p32(x < -1) = NaN, log1p32(-1) = -inf,
    log1p32(+inf) = +inf, log1p32(+-0) = +-0; tiny inputs keep their
    relative accuracy (docs/specification.md §5.1).
    """
    return _map("log1p32", _isa.kernels.log1p32_into, x, out, n_threads)
