"""Bit-for-bit comparison of arrays: the one helper module of the tests.

normops promises bits, not closeness, so the tests compare results through
integer views of their elements, never with ``allclose`` (CONTRIBUTING.md,
"Tests compare bit for bit"). Two floats compare equal here exactly when
they are the same pattern: +0 and -0 differ (``==`` calls them equal), a
NaN equals the same NaN (``==`` never does), and NaNs of different payloads
or signs differ (``array_equal(..., equal_nan=True)`` calls them equal).

The integer type follows the element size: float16 and bfloat16 (like
int16) as uint16, float32 as uint32, float64 and complex64 as uint64, bool
and int8 as uint8; any other size (complex128, longdouble) as its bytes, one
more axis of uint8.

An array in the other byte order is first swapped byte for byte (no
conversion of values, so NaN payloads survive), so that the integers are the
patterns of the values. pytest puts tests/ on ``sys.path`` (the test files
are not a package; conftest.py imports ``installed_extras`` the same way),
so a test module imports these with ``from bits import ...``.
"""
import numpy as np

#: element size in bytes -> the unsigned integer type of the same size
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(a):
    """The elements of ``a`` (an array, a NumPy scalar or anything
    ``np.asarray`` takes) as unsigned integers of their size, in native byte
    order; a view where no byte swap is needed. A 0-d array or a scalar
    gives shape (1,), as ``np.ascontiguousarray`` does, so that
    ``bits(y)[0]`` reads a scalar result."""
    a = np.asarray(a)
    if a.ndim == 0:
        a = a.reshape(1)
    if not a.dtype.isnative:
        a = a.byteswap().view(a.dtype.newbyteorder("="))
    u = UINT.get(a.dtype.itemsize)
    if u is not None:
        return a.view(u)
    c = a if a.flags.c_contiguous else a.copy(order="C")
    return c.reshape(-1).view(np.uint8).reshape(a.shape + (a.dtype.itemsize,))


def same_bits(a, b):
    """True when ``a`` and ``b`` have the same dtype, shape and bits."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(bits(a), bits(b))


def assert_same_bits(got, want, label=""):
    """Raise AssertionError, naming the first differing element with its
    value and pattern, unless ``got`` and ``want`` have the same dtype,
    shape and bits (``label`` starts the message)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{label}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{label}: shape {got.shape} != {want.shape}"
    if got.size == 0:
        return
    gb, wb = (bits(x).reshape(got.size, -1) for x in (got, want))  # one row per element
    differ = (gb != wb).any(axis=1)
    if differ.any():
        k = int(np.flatnonzero(differ)[0])
        at = np.unravel_index(k, got.shape)
        if gb.shape[1] == 1:  # an integer per element: show the patterns
            width = 2 * gb.dtype.itemsize
            got_text = f"{got[at]!r} (0x{int(gb[k, 0]):0{width}x})"
            want_text = f"{want[at]!r} (0x{int(wb[k, 0]):0{width}x})"
        else:
            got_text, want_text = repr(got[at]), repr(want[at])
        raise AssertionError(f"{label}: {int(differ.sum())} of {got.size} elements differ; first at "
                             f"{tuple(int(i) for i in at)}: got {got_text}, want {want_text}")


def assert_same_array_bits(got, want, label=""):
    """``assert_same_bits`` for results that must be ndarrays, not NumPy
    scalars (what an ONNX session returns)."""
    assert isinstance(got, np.ndarray) and isinstance(want, np.ndarray), (
        f"{label}: not both ndarrays: {type(got).__name__}, {type(want).__name__}")
    assert_same_bits(got, want, label)


def bits_key(a):
    """``(dtype, shape, bytes)`` of an array or scalar: a value that compares
    equal exactly when the results have the same dtype, shape and bits, for
    comparing lists of outputs with ``==``."""
    a = np.asarray(a)
    return a.dtype, a.shape, a.tobytes()
