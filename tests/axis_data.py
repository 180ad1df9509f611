"""Inputs and checks shared by the ArgMax/ArgMin (test_arg_reduce.py) and
CumSum/CumProd (test_cumulative.py) tests: random data with ties and
special values, and the all-ISA, all-thread-count bit check."""
import numpy as np

import normops
import normops._isa as isa

from bits import assert_same_bits

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional
    BF16 = None

FLOATS = [np.dtype(t) for t in (np.float32, np.float64, np.float16)] + ([BF16] if BF16 is not None else [])
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
CUM_INTS = [np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64)]


def data(rng, shape, dtype, specials=True):
    """Values with many ties; floats also with NaN, +-inf and -0."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        small = rng.integers(max(info.min, -3), 4, shape).astype(dtype)
        return np.where(rng.random(shape) < 0.5, wide, small)
    x = rng.integers(-4, 5, shape).astype(np.float64) + np.where(rng.random(shape) < 0.3,
                                                                 rng.standard_normal(shape), 0)
    if specials:
        mask = rng.random(shape) < 0.1
        x[mask] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], mask.sum())
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def same_everywhere(op, inputs, attrs):
    """The specification's bits on every ISA level and thread count, with
    the serial threshold off so that small inputs take the parallel path."""
    want = normops.reference.run(op, inputs, attrs)[0]
    old = isa.routes.set_threads_always(True)
    try:
        for level in isa.available_levels():
            with isa.use(level):
                for t in (1, 2, 3, 8):
                    assert_same_bits(normops.run(op, inputs, attrs, n_threads=t)[0], want)
    finally:
        isa.routes.set_threads_always(old)
