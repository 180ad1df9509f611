"""The NumPy- and SciPy-style functions' own arithmetic
(docs/specification.md §16.2): ``where=`` and ``initial=`` of sum, prod,
max, min and mean, an integer ``dtype=`` of mean, ``var`` and ``std``,
and SciPy's accurate, weighted ``logsumexp``.

Each is compared with the executable specification
(normops/reference/_numpy_style.py) bit for bit through integer views, at
1, 2, 3 and 8 threads; with NumPy and SciPy for the values (within the
bounds stated at each test); and its refusals are checked by class and
message.
"""
import math
import warnings

import numpy as np
import pytest

import normops
from normops import InvalidInputError, UnsupportedError
from normops.reference import _numpy_style as spec

from bits import assert_same_bits

try:
    import ml_dtypes

    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # optional dependency
    BF16 = None

THREADS = (1, 2, 3, 8)


def data(rng, shape, dtype, specials=False):
    x = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind in "iu":
        x = np.abs(x) * 5 if np.dtype(dtype).kind == "u" else x * 5
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    x = np.asarray(x).astype(dtype)
    if specials and x.size > 6 and np.dtype(dtype).kind == "f":
        flat = x.reshape(-1)
        for v in (np.nan, np.inf, -np.inf, -0.0, 0.0):
            flat[rng.integers(flat.size)] = v
    return x


def random_axes(rng, ndim):
    choice = rng.integers(4)
    if choice == 0 or ndim == 0:
        return None
    if choice == 1:
        return int(rng.integers(-ndim, ndim))
    k = int(rng.integers(1, ndim + 1))
    return tuple(int(a) for a in rng.permutation(ndim)[:k])


def normalized(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim for a in axes))


def random_mask(rng, shape):
    """A bool mask that broadcasts to shape (some axes of extent 1)."""
    mshape = tuple(1 if rng.random() < 0.3 else n for n in shape)
    return rng.random(mshape) < 0.6


def shapes(rng, count):
    out = [(7,), (5, 33), (3, 4, 17), (1, 9), (2, 1, 5), (40, 3), (4, 3, 2, 5)]
    while len(out) < count:
        out.append(tuple(int(n) for n in rng.integers(1, 9, rng.integers(1, 4))))
    return out


# ------------------------------------------------------------ where=, initial=

SUM_DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "int16", "bool"]


@pytest.mark.parametrize("dtype", SUM_DTYPES)
@pytest.mark.parametrize("name, kind", [("sum", "ReduceSum"), ("prod", "ReduceProd")])
def test_sum_prod_where_initial_match_the_specification(name, kind, dtype):
    rng = np.random.default_rng([1, SUM_DTYPES.index(dtype), kind == "ReduceProd"])
    for shape in shapes(rng, 12):
        x = data(rng, shape, dtype, specials=True)
        if name == "prod" and np.dtype(dtype).kind == "f":
            x = (np.abs(x) * 0.3 + 0.8).astype(dtype)
        axis = random_axes(rng, len(shape))
        where = random_mask(rng, shape)
        keepdims = bool(rng.integers(2))
        acc = np.sum(np.zeros(1, dtype)).dtype  # NumPy's accumulation type
        for initial in (None, 2, 0.5, -3):
            if (acc.kind in "iu" and initial == 0.5) or (acc.kind == "u" and initial == -3):
                continue  # (NumPy refuses a negative Python int for an unsigned type too)
            kw = dict(axis=axis, keepdims=keepdims, where=where)
            if initial is not None:
                kw["initial"] = initial
            want = spec.masked_reduce(kind, x, normalized(axis, len(shape)), keepdims, acc, where,
                                      None if initial is None else np.asarray(initial).astype(acc)[()])
            for n in THREADS:
                got = getattr(normops, name)(x, n_threads=n, **kw)
                assert_same_bits(got, want, f"{name} {shape} {dtype} {kw} n={n}")
            with np.errstate(all="ignore"):
                numpy_value = getattr(np, name)(x, **kw)
            got = np.asarray(getattr(normops, name)(x, **kw))
            assert np.asarray(numpy_value).dtype == got.dtype
            if acc.kind in "iu":
                assert np.array_equal(got, numpy_value)
            else:  # float sums: within NumPy's own rounding, relative to sum |x|
                rtol = {"float16": 4e-3, "float32": 2e-6, "float64": 1e-13}[dtype]
                scale = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims, where=where) + 3
                finite = np.isfinite(numpy_value)
                assert np.array_equal(finite, np.isfinite(got))
                with np.errstate(invalid="ignore"):
                    err = np.abs(got.astype(np.float64) - np.asarray(numpy_value, np.float64))
                bound = rtol * (scale if name == "sum" else np.abs(np.asarray(numpy_value, np.float64)))
                assert np.all(err[finite] <= np.broadcast_to(bound, err.shape)[finite] + 1e-300), (name, kw)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "uint8", "int64", "bool"])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_where_initial_match_the_specification_and_numpy(name, dtype):
    rng = np.random.default_rng([2, len(dtype), name == "max"])
    kind = f"numpy.{name}"
    for shape in shapes(rng, 12):
        x = data(rng, shape, dtype, specials=True)
        axis = random_axes(rng, len(shape))
        where = random_mask(rng, shape)
        keepdims = bool(rng.integers(2))
        for initial in ((True, False) if dtype == "bool" else (0, -2.5, 7, np.nan) if "float" in dtype else (0, 3)):
            for w in (where, None):
                kw = dict(axis=axis, keepdims=keepdims, initial=initial)
                if w is not None:
                    kw["where"] = w
                want = spec.masked_reduce(kind, x, normalized(axis, len(shape)), keepdims, x.dtype, w,
                                          np.asarray(initial).astype(x.dtype)[()])
                for n in THREADS:
                    assert_same_bits(getattr(normops, name)(x, n_threads=n, **kw), want, f"{name} {kw} n={n}")
                numpy_value = getattr(np, name)(x, **kw)
                got = getattr(normops, name)(x, **kw)
                assert type(got) is type(numpy_value)
                # the values equal NumPy's (a zero's sign may differ, docs/specification.md §16.3)
                assert np.array_equal(np.asarray(got), np.asarray(numpy_value), equal_nan=dtype != "bool" and
                                      np.asarray(got).dtype.kind == "f"), (name, kw)


def test_max_min_nan_rule_scans_match_the_specification_on_every_build():
    """np.max / np.min (any NaN wins) over rows long enough for the vector
    scans (four accumulators, four rows side by side, tails), with NaN,
    infinities and zero ties at random places, and over columns, on every
    ISA build."""
    from normops import _isa

    rng = np.random.default_rng(41)
    for dtype in (np.float32, np.float64):
        for cols in (1, 15, 16, 17, 63, 64, 65, 130, 257):
            x = data(rng, (9, cols), dtype)
            flat = x.reshape(-1)
            for v in (np.nan, np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan):
                flat[rng.integers(flat.size)] = v
            x[3] = -0.0 if cols % 2 else 0.0  # a row of zeros: the first one's sign
            x[5, -1] = np.nan  # a NaN in a row's tail
            for name in ("max", "min"):
                for axis in (1, 0):
                    want = spec.masked_reduce(f"numpy.{name}", x, (axis,), False, x.dtype, None, None)
                    for level in _isa.available_levels():
                        with _isa.use(level):
                            for n in (1, 2):
                                assert_same_bits(getattr(normops, name)(x, axis=axis, n_threads=n), want,
                                                 f"{name} {dtype.__name__} cols={cols} axis={axis} {level} n={n}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "bool"])
def test_mean_where_and_integer_dtype_match_the_specification_and_numpy(dtype):
    rng = np.random.default_rng([3, len(dtype)])
    for shape in shapes(rng, 14):
        x = data(rng, shape, dtype, specials=dtype != "bool")
        axis = random_axes(rng, len(shape))
        where = random_mask(rng, shape)
        keepdims = bool(rng.integers(2))
        for out_dtype in (None, "int64", "int8", "float32"):
            kw = dict(axis=axis, keepdims=keepdims, where=where)
            if out_dtype is not None:
                kw["dtype"] = out_dtype
            target = np.dtype(out_dtype) if out_dtype else (x.dtype if x.dtype.kind == "f" else np.dtype("f8"))
            if target.kind in "iu" and x.dtype.kind == "f":
                x = np.where(np.isfinite(x), x, 1).astype(x.dtype)  # NumPy casts NaN to an integer its own way
            want = spec.mean(x, normalized(axis, len(shape)), keepdims, target, where)
            for n in THREADS:
                assert_same_bits(normops.mean(x, n_threads=n, **kw), want, f"mean {shape} {kw} n={n}")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                numpy_value = np.asarray(np.mean(x, **kw))
            got = np.asarray(normops.mean(x, **kw))
            assert got.dtype == numpy_value.dtype and got.shape == numpy_value.shape
            if target.kind in "iu":
                empty = np.asarray(np.count_nonzero(np.broadcast_to(where, x.shape), axis=axis,
                                                    keepdims=keepdims)) == 0
                # the integer sum may wrap in int8 alike; an empty selection is NaN cast: skip it
                assert np.array_equal(got[~empty], numpy_value[~empty]), kw
            else:
                rtol = {"float16": 4e-3, "float32": 2e-6}.get(target.name, 1e-13)
                scale = np.mean(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims, where=where)
                finite = np.isfinite(numpy_value)
                assert np.array_equal(finite, np.isfinite(got))
                err = np.abs(got.astype(np.float64) - numpy_value.astype(np.float64))[finite]
                assert np.all(err <= rtol * (np.asarray(scale)[finite] + 1)), kw


def test_where_and_initial_follow_numpy_rules():
    x = np.arange(12.0).reshape(3, 4)
    # where= keeps each element's place: the masked sum is the sum with zeros in those places
    m = np.array([True, False, True, True])
    assert normops.sum(x, axis=1, where=m).tolist() == np.sum(x, axis=1, where=m).tolist()
    assert normops.sum(x, where=True) == normops.sum(x)
    assert normops.sum(x, where=False) == 0.0
    assert normops.prod(x + 1, axis=0, where=[[True], [False], [True]]).tolist() == [9.0, 20.0, 33.0, 48.0]
    # initial joins the result; None means none, as in NumPy
    assert normops.sum(x, initial=10) == 76.0
    assert normops.prod(np.array([2.0, 3.0]), initial=None) == 6.0
    assert normops.max(np.zeros((0, 3)), axis=0, initial=5).tolist() == [5.0, 5.0, 5.0]
    assert normops.min(x, where=False, initial=-7) == -7.0
    assert np.isnan(normops.max(x, initial=np.nan)) and np.isnan(normops.min(x, initial=np.nan))
    assert normops.max(np.array([1.0, np.nan]), where=[True, False], initial=0) == 1.0
    assert np.isnan(normops.max(np.array([1.0, np.nan]), where=[False, True], initial=0))
    # integer initials are cast as NumPy casts them
    assert normops.sum(np.arange(6, dtype=np.int8), initial=2.5) == np.sum(np.arange(6, dtype=np.int8), initial=2.5)
    assert normops.max(np.arange(6, dtype=np.int8), initial=-3.5) == 5
    big = np.array([100, 100], np.int8)
    assert normops.sum(big, dtype=np.int8, initial=100) == np.sum(big, dtype=np.int8, initial=100)  # wraps
    # the NaN of a result is canonical
    nan = normops.sum(np.array([1.0, 2.0], np.float32), initial=np.float32(np.nan))
    assert np.asarray(nan).view(np.uint32) == 0x7FC00000
    # mean: the count is the selection's; nothing selected is NaN, as in NumPy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(normops.mean(x, axis=1, where=[[False] * 4, [True] * 4, [True, False] * 2]),
                              np.mean(x, axis=1, where=[[False] * 4, [True] * 4, [True, False] * 2]), equal_nan=True)
    assert normops.mean(np.array([1.5, 2.5, 4.0]), dtype=np.int64) == 2  # summed as integers, as NumPy
    assert normops.mean(np.array([-7, 2]), dtype=np.int64) == -2         # truncated toward zero
    out = np.empty(3)
    assert normops.max(x, axis=1, initial=0, where=m, out=out) is out and out.tolist() == [3.0, 7.0, 11.0]


def test_where_and_initial_refusals():
    x = np.arange(12.0).reshape(3, 4)
    for name in ("max", "min", "amax", "amin"):
        with pytest.raises(InvalidInputError, match=f"{name[-3:]}: argument 'where' needs an 'initial'"):
            getattr(normops, name)(x, where=x > 3)
        with pytest.raises(ValueError):  # NumPy raises ValueError too
            getattr(np, name)(x, where=x > 3)
    with pytest.raises(InvalidInputError, match="sum: argument 'where' needs an 'initial' other than None"):
        normops.sum(x, where=x > 3, initial=None)
    with pytest.raises(InvalidInputError, match="sum: argument 'where' must hold bools"):
        normops.sum(x, where=np.array([1, 0, 1, 0]))
    with pytest.raises(InvalidInputError, match="prod: argument 'where' of shape \\(5,\\) does not broadcast"):
        normops.prod(x, where=np.ones(5, bool))
    with pytest.raises(InvalidInputError, match="mean: argument 'where' of shape \\(2, 3, 4\\)"):
        normops.mean(x, where=np.ones((2, 3, 4), bool))  # where cannot enlarge a
    with pytest.raises(InvalidInputError, match="sum: argument 'initial' must be a real scalar"):
        normops.sum(x, initial=[1, 2])
    with pytest.raises(InvalidInputError, match="max: argument 'initial'=300 is out of range for int8"):
        normops.max(np.arange(3, dtype=np.int8), initial=300)
    with pytest.raises(UnsupportedError, match="sum: a complex argument 'initial'"):
        normops.sum(x, initial=1j)
    with pytest.raises(UnsupportedError, match="sum: complex input 'a'"):
        normops.sum(x.astype(np.complex64), where=x > 1, initial=0)


def test_where_keeps_positions_in_long_reductions_and_threads():
    # a row longer than 2^20 terms (blocks, docs/specification.md §11.4) and a column layout
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, (1 << 20) + 77)).astype(np.float32)
    m = rng.random(x.shape[1]) < 0.7
    want = spec.masked_reduce("ReduceSum", x, (1,), False, np.float32, np.broadcast_to(m, x.shape),
                              np.float32(1.5))
    for n in THREADS:
        assert_same_bits(normops.sum(x, axis=1, where=m, initial=1.5, n_threads=n), want, f"n={n}")
    y = rng.standard_normal((600, 300)).astype(np.float32)
    w = rng.random(y.shape) < 0.5
    want = spec.mean(y, (0,), False, np.float32, w)
    for n in THREADS:
        assert_same_bits(normops.mean(y, axis=0, where=w, n_threads=n), want, f"mean n={n}")


# --------------------------------------------------------------- var, std

def exact_var(x, axis, ddof, where=None):
    """float64 values of the variance from mpmath sums at 200 bits."""
    import mpmath

    x = np.asarray(x, np.float64)
    axes = normalized(axis, x.ndim)
    kept = [i for i in range(x.ndim) if i not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape(-1, math.prod(x.shape[i] for i in axes))
    w = None if where is None else np.transpose(np.broadcast_to(where, x.shape), kept + list(axes)).reshape(
        rows.shape)
    out = []
    with mpmath.workprec(200):
        for r in range(rows.shape[0]):
            vals = rows[r] if w is None else rows[r][w[r]]
            n = len(vals)
            if n - ddof <= 0 or n == 0:
                out.append(np.nan)
                continue
            mean = mpmath.fsum(mpmath.mpf(float(v)) for v in vals) / n
            out.append(float(mpmath.fsum((mpmath.mpf(float(v)) - mean) ** 2 for v in vals) / (n - ddof)))
    return np.array(out)


VAR_DTYPES = ["float32", "float64", "float16", "int32", "int64", "bool"]


@pytest.mark.parametrize("dtype", VAR_DTYPES)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_match_the_specification(name, dtype):
    rng = np.random.default_rng([5, VAR_DTYPES.index(dtype), name == "std"])
    for shape in shapes(rng, 14):
        x = data(rng, shape, dtype, specials=rng.random() < 0.3)
        axis = random_axes(rng, len(shape))
        keepdims = bool(rng.integers(2))
        ddof = int(rng.integers(0, 3))
        where = random_mask(rng, shape) if rng.random() < 0.4 else None
        kw = dict(axis=axis, keepdims=keepdims, ddof=ddof)
        if where is not None:
            kw["where"] = where
        target = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
        want = getattr(spec, name)(x, normalized(axis, len(shape)), keepdims, target, ddof, where)
        for n in THREADS:
            assert_same_bits(getattr(normops, name)(x, n_threads=n, **kw), want, f"{name} {shape} {dtype} {kw} n={n}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            numpy_value = getattr(np, name)(x, **kw)
        got = getattr(normops, name)(x, **kw)
        assert type(got) is type(numpy_value) and np.shape(got) == np.shape(numpy_value)
        assert np.asarray(got).dtype == np.asarray(numpy_value).dtype


@pytest.mark.parametrize("dtype, mean_offset", [("float32", 0.0), ("float32", 30.0), ("float64", 0.0),
                                                ("float64", 1e4), ("float16", 0.0)])
def test_var_is_as_accurate_as_numpy(dtype, mean_offset):
    """Against mpmath (200-bit sums of the float64 values): normops' error is
    at most twice NumPy's plus 4 ulps of the result, on every output, and at
    most NumPy's on the median (both use two passes; Sum16 and NumPy's
    pairwise sum have errors of the same order)."""
    rng = np.random.default_rng([6, len(dtype), int(mean_offset)])
    cases = [((64, 500), -1), ((500, 64), 0), ((8, 9, 70), (0, 2)), ((3000,), None), ((40, 33), 1)]
    ours_all, numpy_all = [], []
    for shape, axis in cases:
        x = (rng.standard_normal(shape) * 2 + mean_offset).astype(dtype)
        exact = exact_var(x, axis, 1).reshape(np.shape(np.var(x, axis=axis)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = np.asarray(normops.var(x, axis=axis, ddof=1), np.float64)
            theirs = np.asarray(np.var(x, axis=axis, ddof=1), np.float64)
        ulp = np.spacing(np.abs(exact).astype(dtype)).astype(np.float64)
        e_ours, e_numpy = np.abs(ours - exact) / ulp, np.abs(theirs - exact) / ulp
        assert np.all(e_ours <= 2 * e_numpy + 4), (shape, axis, e_ours.max(), e_numpy.max())
        ours_all.append(e_ours.ravel())
        numpy_all.append(e_numpy.ravel())
    assert np.median(np.concatenate(ours_all)) <= np.median(np.concatenate(numpy_all)) + 0.5


def test_var_std_rows_and_threads():
    # rows along a non-trailing axis (moved last), a long row, many short rows
    rng = np.random.default_rng(7)
    for shape, axis in [((300, 257), 0), ((3, (1 << 20) + 5), 1), ((5000, 7), 1), ((6, 7, 8), (0, 2))]:
        x = rng.standard_normal(shape).astype(np.float32)
        want = spec.var(x, normalized(axis, x.ndim), False, np.dtype(np.float32))
        for n in THREADS:
            assert_same_bits(normops.var(x, axis=axis, n_threads=n), want, f"var {shape} axis={axis} n={n}")
            assert_same_bits(normops.std(x, axis=axis, n_threads=n), np.sqrt(want), f"std {shape} axis={axis} n={n}")


def test_var_std_arguments():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    # correction is ddof's other name; both is an error, as NumPy's ValueError
    assert_same_bits(normops.var(x, correction=1), normops.var(x, ddof=1))
    with pytest.raises(InvalidInputError, match="var: arguments 'ddof' and 'correction' cannot both be given"):
        normops.var(x, ddof=1, correction=1)
    # ddof beyond the count: max(n - ddof, 0) = 0 divides, as NumPy (inf, or NaN for 0 / 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(normops.var(x, axis=0, ddof=5), np.var(x, axis=0, ddof=5))
        assert np.isnan(normops.var(np.ones(3), ddof=3)) and np.isnan(np.var(np.ones(3), ddof=3))
        assert np.isnan(normops.var(np.zeros((0, 3)), axis=0)).all()
    assert normops.var(x, ddof=1.5) == pytest.approx(np.var(x.astype(np.float64), ddof=1.5), rel=1e-6)
    # mean= (broadcast against a, in the arithmetic type), keepdims, dtype, out
    m = np.mean(x, axis=1, keepdims=True)
    assert_same_bits(normops.var(x, axis=1, mean=m), spec.var(x, (1,), False, np.dtype(np.float32), mean=m))
    np.testing.assert_allclose(normops.var(x, axis=1, mean=m), np.var(x, axis=1, mean=m), rtol=1e-6)
    assert normops.std(x, axis=0, keepdims=True).shape == (1, 6)
    assert normops.var(np.arange(6), dtype=np.float32).dtype == np.float32
    assert normops.var(np.arange(6)).dtype == np.float64 and normops.var(x.astype(np.float16)).dtype == np.float16
    assert type(normops.var(x)) is np.float32
    out = np.empty(6, np.float64)
    assert normops.std(x, axis=0, out=out) is out
    np.testing.assert_allclose(out, np.std(x, axis=0), rtol=1e-6)
    assert normops.var(np.float32(3)) == 0.0
    with pytest.raises(InvalidInputError, match="var: argument 'axis'"):
        normops.var(np.float32(3), axis=0)  # NumPy refuses it too
    with pytest.raises(UnsupportedError, match="var: integer argument 'dtype'"):
        normops.var(x, dtype=np.int64)
    with pytest.raises(UnsupportedError, match="std: complex input 'a'"):
        normops.std(x.astype(np.complex64))
    with pytest.raises(UnsupportedError, match="var: input 'a' of dtype object"):
        normops.var(np.array([1, "a"], object))
    with pytest.raises(InvalidInputError, match="var: argument 'ddof' must be a real number"):
        normops.var(x, ddof="1")
    with pytest.raises(InvalidInputError, match="std: argument 'mean' of shape \\(5,\\) does not broadcast"):
        normops.std(x, mean=np.zeros(5))


def test_var_two_passes_of_sum16():
    # constant rows give exactly 0 (the second pass sees exact zeros); a
    # huge offset cancels in the deviations, not in a sum of squares
    x = np.full((3, 1000), 1e4, np.float32)
    assert normops.var(x, axis=1).tolist() == [0.0, 0.0, 0.0]
    y = (np.float32(1e4) + np.arange(16, dtype=np.float32)).reshape(1, 16)
    assert normops.var(y, axis=1)[0] == np.float32(np.var(np.arange(16.0)))


# --------------------------------------------------------------- logsumexp

special_mod = pytest.importorskip("scipy.special")


def lse_cases(rng, count):
    for shape in shapes(rng, count):
        axis = random_axes(rng, len(shape))
        kind = rng.integers(4)
        if kind == 0:
            b = None
        elif kind == 1:
            b = rng.standard_normal(shape)            # negative weights
        elif kind == 2:
            b = np.where(rng.random(shape) < 0.3, 0.0, rng.random(shape) * 3)   # zeros
        else:
            b = rng.random(tuple(1 if rng.random() < 0.4 else n for n in shape)) + 0.5  # broadcast
        yield shape, axis, b


LSE_DTYPES = ["float32", "float64", "float16", "int32", "int64"]


@pytest.mark.parametrize("dtype", LSE_DTYPES)
@pytest.mark.parametrize("return_sign", [False, True])
def test_logsumexp_matches_the_specification(dtype, return_sign):
    rng = np.random.default_rng([9, LSE_DTYPES.index(dtype), return_sign])
    for shape, axis, b in lse_cases(rng, 16):
        a = data(rng, shape, dtype, specials=rng.random() < 0.3)
        keepdims = bool(rng.integers(2))
        if b is not None and dtype == "float32" and rng.random() < 0.5:
            b = b.astype(np.float32)
        result = np.result_type(a, *(() if b is None else (b,)))
        result = result if result.kind == "f" else np.dtype(np.float64)
        bb = None if b is None else np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape))
        aa = np.broadcast_to(a, a.shape if b is None else bb.shape)
        want = spec.logsumexp(aa, normalized(axis, aa.ndim), bb, keepdims, return_sign, result)
        for n in THREADS:
            got = normops.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign, n_threads=n)
            label = f"{shape} {dtype} axis={axis} b={None if b is None else b.shape} n={n}"
            if return_sign:
                assert_same_bits(got[0], want[0], label)
                assert_same_bits(got[1], want[1], label + " sign")
            else:
                assert_same_bits(got, want, label)


def _close_to_scipy(got, want, rtol, label):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, label
    same_kind = (np.isnan(got) == np.isnan(want)) & (np.isinf(got) == np.isinf(want))
    assert same_kind.all(), f"{label}: {got[~same_kind]} vs {want[~same_kind]}"
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), label
    finite = np.isfinite(want)
    err = np.abs(got[finite] - want[finite])
    assert np.all(err <= rtol * np.maximum(np.abs(want[finite]), 1)), f"{label}: {err.max()}"


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_logsumexp_agrees_with_scipy(dtype):
    """Values within 4 float32 (1e-13 float64) relative units of
    max(|result|, 1) (the errors of both libraries), the same infinities
    and NaNs, the same signs."""
    rng = np.random.default_rng([10, len(dtype)])
    rtol = 4e-6 if dtype == "float32" else 1e-13
    for shape, axis, b in lse_cases(rng, 30):
        a = data(rng, shape, dtype, specials=rng.random() < 0.4)
        if b is not None and rng.random() < 0.3:
            b = np.where(rng.random(b.shape) < 0.1, np.inf, b)
        if b is not None and b.ndim and b.size == math.prod(np.broadcast_shapes(a.shape, b.shape)) and (
                b == 0).any() and a.dtype.kind == "f":
            a = np.where(np.broadcast_to(b, a.shape) == 0, 1.0, a).astype(a.dtype)  # see the zero-weight test
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for return_sign in (False, True):
                want = special_mod.logsumexp(a, axis=axis, b=b, return_sign=return_sign)
                got = normops.logsumexp(a, axis=axis, b=b, return_sign=return_sign)
                label = f"{shape} {dtype} axis={axis} b={b is not None} sign={return_sign}"
                if return_sign:
                    _close_to_scipy(got[0], want[0], rtol, label)
                    assert np.array_equal(np.asarray(got[1]), np.asarray(want[1]), equal_nan=True), label
                    assert type(got[1]) is type(want[1]) and np.asarray(got[1]).dtype == np.asarray(want[1]).dtype
                else:
                    _close_to_scipy(got, want, rtol, label)
                    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype, label


def test_logsumexp_is_at_least_as_accurate_as_scipy():
    mpmath = pytest.importorskip("mpmath")
    # one dominant term: log1p of the rest (the value is 4.248e-18, not 0)
    y = normops.logsumexp(np.array([0.0, -40.0]))
    with mpmath.workprec(200):
        exact = float(mpmath.log1p(mpmath.exp(-40)))
    assert abs(y - exact) <= np.spacing(exact) and y == special_mod.logsumexp(np.array([0.0, -40.0]))
    assert normops.logsumexp(np.array([0.0, -40.0], np.float32)) == np.float32(exact)
    # random rows against mpmath: errors at most SciPy's plus one ulp, row by row
    rng = np.random.default_rng(11)
    worse = 0
    for dtype in (np.float32, np.float64):
        for _ in range(150):
            n = int(rng.integers(1, 40))
            a = (rng.standard_normal(n) * rng.choice([0.1, 3, 30])).astype(dtype)
            b = None if rng.random() < 0.5 else rng.random(n).astype(dtype) + 0.01
            with mpmath.workprec(300):
                s = mpmath.fsum((mpmath.mpf(float(b[i])) if b is not None else 1) * mpmath.exp(float(a[i]))
                                for i in range(n))
                exact = float(mpmath.log(s))
            ulp = float(np.spacing(np.abs(dtype(exact))))
            ours = abs(float(normops.logsumexp(a, b=b)) - exact) / ulp
            theirs = abs(float(special_mod.logsumexp(a, b=b)) - exact) / ulp
            assert ours <= theirs + 1.0, (dtype, a, b, ours, theirs)
            worse += ours > theirs
    assert worse < 30


def test_logsumexp_special_values_follow_scipy():
    inf, nan = np.inf, np.nan
    cases = [
        ([inf, 1.0], None), ([-inf, -inf], None), ([nan, 1.0], None), ([inf, -inf], None), ([1.0, 1.0], None),
        ([inf], [-1.0]), ([inf, inf], [1.0, -1.0]), ([inf, 2.0], [1.0, -5.0]), ([1.0, 1.0], [1.0, -1.0]),
        ([1.0, 1.0, 0.0], [1.0, -1.0, 1.0]), ([1.0, 1.0, 0.0], [1.0, -1.0, -1.0]), ([3.0, 2.0], [1.0, nan]),
        ([1.0, 2.0], [0.0, 0.0]), ([1.0, 10000.0], [1.0, 0.0]), ([5.0, 4.0], [inf, 1.0]), ([5.0, 4.0], [-inf, 1.0]),
        ([-inf, 1.0], [inf, 1.0]), ([0.0, 0.0], [1e-310, 1.0]), ([3.06409428, 0.37251854, 3.87471931],
                                                                 [1.88190708, 2.84174795, -3.85016884]),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in cases:
            a = np.array(a)
            b = None if b is None else np.array(b)
            for return_sign in (False, True):
                want = special_mod.logsumexp(a, b=b, return_sign=return_sign)
                got = normops.logsumexp(a, b=b, return_sign=return_sign)
                for g, w in zip(got if return_sign else (got,), want if return_sign else (want,)):
                    same = (np.isnan(g) and np.isnan(w)) or g == pytest.approx(w, rel=1e-14, abs=1e-300)
                    assert same, (a, b, got, want)
    # NaN results are canonical
    assert np.asarray(normops.logsumexp(np.array([np.nan, 1.0], np.float32))).view(np.uint32) == 0x7FC00000


def test_logsumexp_zero_weights_leave_their_terms_out():
    # docs/specification.md §16.2: even where x is infinite or NaN; SciPy's
    # direct form gives NaN there when it is taken (0 * inf), normops -inf / the others' result
    assert normops.logsumexp(np.array([np.inf, 1.0]), b=np.array([0.0, 0.0])) == -np.inf
    assert normops.logsumexp(np.array([np.nan, np.inf]), b=np.array([0.0, 1.0])) == np.inf
    assert normops.logsumexp(np.array([np.nan, 1.0]), b=np.array([0.0, 2.0])) == pytest.approx(1 + np.log(2))
    r, s = normops.logsumexp(np.zeros((3, 0)), axis=1, return_sign=True)
    assert r.tolist() == [-np.inf] * 3 and s.tolist() == [0.0] * 3  # the sum of nothing: sign 0


def test_logsumexp_shapes_dtypes_and_arguments():
    a = np.ones((4, 1, 2, 1))
    b = np.ones((3, 1, 5))
    assert normops.logsumexp(a, b=b, axis=(1, 3)).shape == special_mod.logsumexp(a, b=b, axis=(1, 3)).shape
    r, s = normops.logsumexp(np.ones((1, 2, 3, 4)), axis=2, b=np.ones((1, 2, 3, 4)), return_sign=True)
    assert r.shape == s.shape == (1, 2, 4)
    for da, db in [("float32", "float32"), ("float32", "float64"), ("int32", "float32"), ("int32", "int32"),
                   ("float16", None), ("float32", "int64"), ("bool", None)]:
        a = np.array([2, 1], da)
        bb = None if db is None else np.array([1, 2], db)
        assert np.asarray(normops.logsumexp(a, b=bb)).dtype == np.asarray(special_mod.logsumexp(a, b=bb)).dtype
    assert normops.logsumexp(1) == special_mod.logsumexp(1)
    assert normops.logsumexp([1000, 1000]) == pytest.approx(1000 + np.log(2))
    assert normops.logsumexp(np.float32(1.5), keepdims=True).shape == (1,)
    x = np.array([5.0, 4.0])
    w = np.array([3.0, 2.0])
    normops.logsumexp(x, b=w)
    assert x.tolist() == [5.0, 4.0] and w.tolist() == [3.0, 2.0]   # never written back
    # fast flavour: deterministic at every thread count
    y = np.random.default_rng(12).standard_normal((64, 300)).astype(np.float32)
    fast = normops.logsumexp(y, axis=1, mode="fast")
    for n in THREADS:
        assert_same_bits(normops.logsumexp(y, axis=1, mode="fast", n_threads=n), fast, f"fast n={n}")
    np.testing.assert_allclose(fast, normops.logsumexp(y, axis=1), rtol=1e-6)


def test_logsumexp_refusals():
    a = np.array([1.0, 2.0])
    with pytest.raises(UnsupportedError, match="logsumexp: complex input 'a'"):
        normops.logsumexp(a.astype(np.complex128))
    with pytest.raises(UnsupportedError, match="logsumexp: complex input 'b'"):
        normops.logsumexp(a, b=np.array([1j, 1]))
    with pytest.raises(UnsupportedError, match="logsumexp: input 'a' of dtype object"):
        normops.logsumexp(np.array([1, None], object))
    with pytest.raises(InvalidInputError, match="logsumexp: argument 'b' of shape \\(3,\\) does not broadcast"):
        normops.logsumexp(a, b=np.ones(3))
    with pytest.raises(InvalidInputError, match="logsumexp: .*axis"):
        normops.logsumexp(a, axis=1)


def test_scipy_own_suite_passes_with_normops_substituted():
    """SciPy's scipy/special/tests/test_logsumexp.py with normops'
    logsumexp, softmax and log_softmax in place of SciPy's
    (tools/scipy_logsumexp_suite.py): every test passes except those with
    complex input, which raise UnsupportedError."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    import os

    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    done = subprocess.run([sys.executable, str(root / "tools" / "scipy_logsumexp_suite.py"), "--json"],
                          capture_output=True, text=True, timeout=600, cwd=root, env=env)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["normops"] == str(root / "normops" / "__init__.py")  # this tree's normops
    assert result["failed"] == 0, result["failures"]
    assert result["complex_refused"] > 0 and result["passed_by_class"]["LogSumExp"] > 0, result
    assert result["passed_by_class"]["Softmax"] > 0 and result["passed_by_class"]["LogSoftmax"] > 0
    import scipy

    if scipy.__version__ == "1.17.1":  # the version the tests pin: 407 tests, 347 of them complex
        assert (result["passed"], result["complex_refused"]) == (60, 347), result


def test_kernel_routes_give_the_general_path_bits(monkeypatch):
    """The one-call kernel routes (reduce_where_direct, variance_direct:
    plain float arrays, same-shape C-contiguous masks, no transposition)
    against the general path with those routes switched off, at 1, 2, 3
    and 8 threads; and they are taken."""
    import normops._isa

    state = {"on": True, "taken": 0}

    def switched(entry):
        def call(*args):
            if not state["on"]:
                return None
            y = entry(*args)
            state["taken"] += y is not None
            return y
        return call

    for level in normops._isa.available_levels():
        kernels = normops._isa.load(level)
        for name in ("reduce_where_direct", "variance_direct"):
            monkeypatch.setattr(kernels, name, switched(getattr(kernels, name)))
    rng = np.random.default_rng(17)
    for dtype in (np.float32, np.float64):
        for shape in [(7, 300), (300, 7), (5, 6, 40), (33,), (2, 3, 1, 70), (4, 20000)]:
            x = data(rng, shape, dtype, specials=True)
            m = rng.random(shape) < 0.6
            nd = len(shape)
            calls = [
                (normops.sum, dict(axis=-1, where=m, initial=1.5)), (normops.sum, dict(axis=0, where=m)),
                (normops.sum, dict(initial=-2.0)), (normops.prod, dict(axis=0, where=m, initial=0.5)),
                (normops.max, dict(axis=-1, where=m, initial=-1.0)), (normops.min, dict(where=m, initial=2.0)),
                (normops.amax, dict(axis=0, initial=np.nan)), (normops.mean, dict(axis=0, where=m)),
                (normops.mean, dict(axis=-1, where=m, keepdims=True)),
                (normops.var, dict(axis=-1)), (normops.var, dict(axis=0, ddof=1)), (normops.std, dict()),
                (normops.std, dict(axis=-1, where=m, ddof=1.5)), (normops.var, dict(axis=0, where=m, keepdims=True)),
            ]
            if nd == 3:
                calls += [(normops.var, dict(axis=(0, 1))), (normops.sum, dict(axis=(0, 1), where=m, initial=1.0))]
            for f, kw in calls:
                for n in THREADS:
                    before = state["taken"]
                    state["on"] = True
                    got = f(x, n_threads=n, **kw)
                    assert state["taken"] == before + 1, (f.__name__, shape, kw)
                    state["on"] = False
                    want = f(x, n_threads=n, **kw)
                    state["on"] = True
                    assert type(got) is type(want)
                    assert_same_bits(got, want, f"{f.__name__} {shape} {np.dtype(dtype)} {kw} n={n}")


def test_logsumexp_fast_takes_the_fast_exponential_for_its_terms(monkeypatch):
    # the specification's accurate form with each term's exponential the
    # kernels' fast exp32 (float32; float64 has no fast flavour), bit for bit
    from normops import _isa

    def fast_exp(d):
        d = np.ascontiguousarray(d)
        if d.dtype != np.float32:
            return spec_exp(d)
        e = np.empty_like(d)
        _isa.kernels.exp32_fast_into(d.reshape(-1), e.reshape(-1), 1)
        return e

    spec_exp = spec._exp
    rng = np.random.default_rng(31)
    x = rng.standard_normal((200, 777)).astype(np.float32)
    b = (rng.random((200, 777)) - 0.1).astype(np.float32)
    assert not np.array_equal(normops.logsumexp(x, axis=1, b=b, mode="fast"), normops.logsumexp(x, axis=1, b=b))
    for level in _isa.available_levels():
        with _isa.use(level):
            monkeypatch.setattr(spec, "_exp", fast_exp)
            want = spec.logsumexp(x, (1,), b, False, False, np.dtype(np.float32))
            monkeypatch.setattr(spec, "_exp", spec_exp)
            for n in THREADS:
                assert_same_bits(normops.logsumexp(x, axis=1, b=b, mode="fast", n_threads=n), want, f"{level} n={n}")


def test_the_old_module_name_warns_and_forwards_to_numpy_style():
    import importlib
    import sys

    import normops.numpy_style

    sys.modules.pop("normops.numpy_reductions", None)
    with pytest.warns(DeprecationWarning, match="normops.numpy_style"):
        old = importlib.import_module("normops.numpy_reductions")
    assert old.var is normops.numpy_style.var
    assert old.logsumexp is normops.numpy_style.logsumexp
