"""The direct per-call route of the reductions (the kernels'
``reduce_direct``, ``arg_direct`` and ``cum_direct``) against the general
path.

Every call is made twice in the same state: once as it is (the direct
route where it applies) and once with the direct route switched off (the
three kernel entries made to return None, "not applicable", at every ISA
level, so the general path, the one the rest of the suite checks against
the reference, computes it). The results must have the same bits, dtype,
shape and type; the errors the same class and message. Counters on the
direct entries show which calls took the direct route, so a route that
silently always falls back fails here too.
"""
import numpy as np
import pytest

import normops
import normops._isa
import normops.ops
import normops.reference
from normops import InvalidInputError, UnsupportedError
from normops._spec import LONG_TERMS

from bits import UINT, bits

RNG = np.random.default_rng(20261130)
FLOATS = [np.float32, np.float64]
# the kernel builds' direct entries, and the routes module's named
# CumSum/CumProd route (which calls cum_direct in C: spied on itself)
DIRECT_ENTRIES = ("reduce_direct", "arg_direct", "cum_direct")
ROUTE_ENTRIES = ("cum_named",)


class Routes:
    """Calls a function by the direct route and by the general path."""

    def __init__(self, monkeypatch):
        self.taken = 0
        self.direct_on = True
        for level in normops._isa.available_levels():
            kernels = normops._isa.load(level)
            for name in DIRECT_ENTRIES:
                monkeypatch.setattr(kernels, name, self._switched(getattr(kernels, name)))
        for name in ROUTE_ENTRIES:
            monkeypatch.setattr(normops._isa.routes, name, self._switched(getattr(normops._isa.routes, name)))

    def _switched(self, entry):
        def switched(*args):
            if not self.direct_on:
                return None
            y = entry(*args)
            self.taken += y is not None
            return y
        return switched

    def call(self, direct, f, *args, **kwargs):
        """(result or exception, whether the direct route produced it)."""
        self.direct_on = direct
        before = self.taken
        try:
            return f(*args, **kwargs), self.taken > before
        except (InvalidInputError, UnsupportedError, ValueError, TypeError) as exc:
            return exc, self.taken > before
        finally:
            self.direct_on = True

    def both(self, f, *args, **kwargs):
        """Results (direct, general) and whether the first took the direct route."""
        got, taken = self.call(True, f, *args, **kwargs)
        want, general_taken = self.call(False, f, *args, **kwargs)
        assert not general_taken
        return got, want, taken


@pytest.fixture
def routes(monkeypatch):
    return Routes(monkeypatch)


def assert_identical(got, want, label):
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want), f"{label}: {got!r} != {want!r}"
        return
    assert not isinstance(got, Exception), f"{label}: direct raised {got!r}, general gave a result"
    assert type(got) is type(want), f"{label}: type {type(got)} != {type(want)}"
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{label}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    assert np.array_equal(bits(got), bits(want)), f"{label}: bits differ"


def special(shape, dtype):
    """Normal data with NaNs (quiet, negative, with payloads), infinities,
    zeros of both signs and subnormals sprinkled in."""
    x = np.asarray(RNG.standard_normal(shape)).astype(dtype)
    flat = x.reshape(-1)
    u = UINT[flat.itemsize]
    nan_payload = np.array([0x7FC00001 if flat.itemsize == 4 else 0x7FF8000000000001], u).view(dtype)[0]
    neg_nan = np.array([0xFFC00000 if flat.itemsize == 4 else 0xFFF8000000000000], u).view(dtype)[0]
    values = [np.inf, -np.inf, 0.0, -0.0, np.finfo(dtype).smallest_subnormal, nan_payload, neg_nan, np.nan]
    for v in values:
        if flat.size > 8:
            flat[RNG.integers(flat.size)] = v
    return x


SHAPES = [(1,), (7,), (5, 33), (1, 9), (9, 1), (3, 4, 17), (2, 1, 5), (4, 3, 2, 5)]
# (logsumexp has no direct route: SciPy's accurate form is composed in Python)
NUMPY_FUNCTIONS = [normops.sum, normops.prod, normops.mean, normops.max, normops.min, normops.amax,
                   normops.amin]


def numpy_axes(ndim):
    axes = [None, 0, -1, tuple(range(ndim)), ()]
    if ndim >= 2:
        axes += [1, (0, 1), (-1, 0)]
    if ndim >= 3:
        axes += [(0, 2), (1, 2), -2]
    return axes


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES + [(), (3, 0)])
def test_numpy_style_reductions_same_bits(routes, dtype, shape):
    x = special(shape, dtype)
    taken = 0
    for f in NUMPY_FUNCTIONS:
        for axis in numpy_axes(len(shape)):
            for keepdims in (False, True):
                for n_threads in (None, 1, 3):
                    label = f"{f.__name__}{shape} {np.dtype(dtype)} axis={axis} keepdims={keepdims} n={n_threads}"
                    got, want, took = routes.both(f, x, axis=axis, keepdims=keepdims, n_threads=n_threads)
                    assert_identical(got, want, label)
                    taken += took
    assert taken > 0 or 0 in shape


ONNX_FUNCTIONS = [normops.ops.reduce_sum, normops.ops.reduce_mean, normops.ops.reduce_max,
                  normops.ops.reduce_min, normops.ops.reduce_prod, normops.ops.reduce_l1, normops.ops.reduce_l2,
                  normops.ops.reduce_sum_square, normops.ops.reduce_log_sum, normops.ops.reduce_log_sum_exp]


def onnx_axes(ndim):
    axes = [None, np.array([0]), np.array([-1]), [0], (-1,), np.array([], np.int64), [],
            np.array(list(range(ndim)), np.int32), np.arange(ndim, dtype=np.uint64)]
    if ndim >= 2:
        axes += [np.array([1, 0]), [0, 1]]
    if ndim >= 3:
        axes += [np.array([0, 2]), [1, 2]]
    return axes


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES + [(), (3, 0)])
def test_onnx_reductions_same_bits(routes, dtype, shape):
    x = special(shape, dtype)
    if dtype is np.float64 or len(shape) < 3:  # positive data for the logarithms too
        x = np.asarray(np.abs(x))  # a 0-d array stays an array
    taken = 0
    for f in ONNX_FUNCTIONS:
        for axes in onnx_axes(len(shape)):
            for keepdims in (0, 1):
                for n_threads in (None, 2, 8):
                    label = f"{f.__name__}{shape} {np.dtype(dtype)} axes={axes!r} keepdims={keepdims} n={n_threads}"
                    got, want, took = routes.both(f, x, axes, keepdims=keepdims, n_threads=n_threads)
                    assert_identical(got, want, label)
                    taken += took
    assert taken > 0 or 0 in shape


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES + [(), (3, 0)])
def test_arg_reductions_same_bits(routes, dtype, shape):
    x = special(shape, dtype)
    if x.size > 3:
        x.reshape(-1)[2] = x.reshape(-1)[1]  # a tie
    ndim = len(shape)
    taken = 0
    for f in (normops.argmax, normops.argmin):
        for axis in [None] + list(range(-ndim, ndim)):
            for keepdims in (False, True):
                for n_threads in (None, 1, 4):
                    got, want, took = routes.both(f, x, axis=axis, keepdims=keepdims, n_threads=n_threads)
                    assert_identical(got, want, f"{f.__name__}{shape} axis={axis} keepdims={keepdims}")
                    taken += took
    for f in (normops.ops.arg_max, normops.ops.arg_min):
        for axis in range(-ndim, ndim):
            for keepdims in (0, 1):
                for last in (0, 1):
                    for opset in (None, 11, 12, 13):
                        got, want, took = routes.both(f, x, axis=axis, keepdims=keepdims, select_last_index=last,
                                                      opset=opset, n_threads=2)
                        assert_identical(got, want, f"{f.__name__}{shape} axis={axis} last={last} opset={opset}")
                        taken += took
    assert taken > 0 or 0 in shape or not shape  # a 0-d input takes the general path


def test_long_reductions_same_bits(routes):
    """Reductions of 2^20 terms and more go in blocks (docs/specification.md §11.4)."""
    x = special(LONG_TERMS + 37, np.float32)
    for f in (normops.sum, normops.max, normops.ops.reduce_log_sum_exp, normops.argmin):
        got, want, took = routes.both(f, x, n_threads=2)
        assert_identical(got, want, f.__name__)
        assert took
    got, want, took = routes.both(normops.ops.reduce_sum, x.reshape(-1, 1)[:LONG_TERMS], [0], n_threads=3)
    assert_identical(got, want, "ReduceSum column")
    assert took


def test_nan_results_are_canonical_on_the_direct_route(routes):
    x = np.zeros((4, 6), np.float32)
    x[1, 2] = np.inf
    x[2, 2] = -np.inf  # inf - inf: x86 gives the negative default NaN
    x[0, 4] = np.array([0xFFC00123], np.uint32).view(np.float32)[0]
    y, taken = routes.call(True, normops.sum, x, axis=0)
    assert taken
    assert bits(y)[2] == 0x7FC00000 and bits(y)[4] == 0x7FC00000
    assert np.array_equal(np.isnan(y), [False, False, True, False, True, False])


def test_direct_route_is_taken_for_the_common_calls(routes):
    a = RNG.standard_normal((16, 32)).astype(np.float32)
    calls = [
        lambda: normops.sum(a, axis=0), lambda: normops.sum(a), lambda: normops.max(a, axis=0),
        lambda: normops.min(a, axis=(0, 1)), lambda: normops.prod(a, axis=-1, keepdims=True),
        lambda: normops.argmax(a, axis=-1), lambda: normops.argmin(a),
        lambda: normops.reduce_sum(a, np.array([0])), lambda: normops.reduce_log_sum_exp(a),
        lambda: normops.reduce_max(a, [1], keepdims=0), lambda: normops.ops.arg_max(a, axis=1),
        lambda: normops.sum(a, axis=0, mode="exact", n_threads=2), lambda: normops.cumsum(a, axis=1),
        lambda: normops.cumprod(a), lambda: normops.ops.cum_sum(a, 1), lambda: normops.ops.cum_prod(a, np.array(0)),
        lambda: normops.ops.arg_min(a, axis=0, select_last_index=1, n_threads=1),
        lambda: normops.reduce_l2(a, (0, 1), keepdims=0, mode="fast"),
    ]
    for i, call in enumerate(calls):
        _, taken = routes.call(True, call)
        assert taken, i


class Subclass(np.ndarray):
    pass


def test_fallbacks(routes):
    """Inputs and arguments the direct route does not take go the general
    way, with the same results."""
    a = RNG.standard_normal((6, 8)).astype(np.float32)
    unaligned = np.frombuffer(np.zeros(6 * 8 * 4 + 1, np.uint8)[1:].tobytes(), np.float32).reshape(6, 8)
    inputs = {
        "strided": a[:, ::2], "fortran": np.asfortranarray(a), "float16": a.astype(np.float16),
        "int32": (a * 10).astype(np.int32), "byteswapped": a.astype(">f4"), "list": a.tolist(),
        "empty": np.zeros((0, 8), np.float32), "subclass": a.view(Subclass),
    }
    if unaligned.flags.aligned is False:
        inputs["unaligned"] = unaligned
    for name, x in inputs.items():
        for f, kwargs in ((normops.sum, {"axis": 0}), (normops.max, {}), (normops.argmax, {"axis": 1}),
                          (normops.reduce_sum, {}), (normops.ops.arg_min, {"axis": 1})):
            got, want, taken = routes.both(f, x, **kwargs)
            assert_identical(got, want, f"{f.__name__} {name}")
            assert not taken, f"{f.__name__} {name}"
    x3 = RNG.standard_normal((3, 4, 5)).astype(np.float64)
    arguments = [
        (normops.sum, (x3,), {"axis": (0, 2)}),  # needs a transposition
        (normops.sum, (a,), {"dtype": np.float64}), (normops.sum, (a,), {"keepdims": 1}),
        (normops.sum, (a,), {"out": np.empty(8, np.float32), "axis": 0}),
        (normops.sum, (a,), {"n_threads": np.int64(2)}), (normops.max, (a,), {"initial": 0.0, "keepdims": 1}),
        (normops.argmax, (a,), {"axis": np.int64(1)}), (normops.argmax, (a,), {"out": np.empty(6, np.intp), "axis": 1}),
        (normops.reduce_sum, (a, [0]), {"keepdims": True}), (normops.reduce_sum, (a, [0.0]), {}),
        (normops.reduce_sum, (a, np.array([[0]])), {}), (normops.reduce_sum, (a, np.array(0)), {}),
        (normops.reduce_sum, (a, None), {"noop_with_empty_axes": 1}),
        (normops.reduce_sum, (a, [0]), {"opset": 11}), (normops.reduce_max, (a,), {"opset": 17}),
        (normops.reduce_sum, (a, [0]), {"full_output": True}), (normops.reduce_sum, (a, [0]), {"opset": np.int64(13)}),
        (normops.ops.arg_max, (a,), {"axis": 1, "keepdims": False}), (normops.ops.arg_max, (a,), {"full_output": True}),
    ]
    for f, args, kwargs in arguments:
        got, want, taken = routes.both(f, *args, **kwargs)
        assert_identical(got, want, f"{f.__name__} {kwargs}")
        assert not taken, f"{f.__name__} {kwargs}"


def test_errors_unchanged(routes):
    """Bad arguments with an input the direct route would take: the same
    error, whichever route the call starts on."""
    a = RNG.standard_normal((4, 5)).astype(np.float32)
    bad = [
        (normops.sum, (a,), {"axis": 2}), (normops.sum, (a,), {"axis": -3}), (normops.sum, (a,), {"axis": (0, 0)}),
        (normops.sum, (a,), {"axis": (0, -2)}), (normops.sum, (a,), {"axis": 1.0}), (normops.sum, (a,), {"axis": True}),
        (normops.sum, (a,), {"axis": [0]}), (normops.max, (a,), {"axis": (0, 5)}), (normops.min, (a,), {"axis": "0"}),
        (normops.mean, (a,), {"axis": (1, 1)}), (normops.prod, (a,), {"axis": 3}),
        (normops.logsumexp, (a,), {"axis": 7}), (normops.logsumexp, (a,), {"b": a.astype(np.complex64)}),
        (normops.sum, (a,), {"mode": "slow"}), (normops.sum, (a,), {"mode": 1}), (normops.max, (a,), {"n_threads": 0}),
        (normops.sum, (a,), {"n_threads": 1.5}), (normops.sum, (a,), {"n_threads": True}),
        (normops.sum, (a,), {"n_threads": 5000}), (normops.sum, (a,), {"mode": "slow", "axis": 9}),
        (normops.sum, (a,), {"n_threads": -1, "axis": 9}), (normops.sum, (a,), {"where": np.ones(5, np.int8)}),
        (normops.max, (a,), {"where": a > 0}), (normops.min, (a,), {"where": a > 0, "initial": 1j}),
        (normops.argmax, (a,), {"axis": 2}), (normops.argmax, (a,), {"axis": -3}), (normops.argmin, (a,), {"axis": 0.5}),
        (normops.argmax, (a,), {"n_threads": 0}), (normops.argmax, (a,), {"axis": True}),
        (normops.reduce_sum, (a, [2]), {}), (normops.reduce_sum, (a, np.array([0, 0])), {}),
        (normops.reduce_sum, (a, [1, -1]), {}), (normops.reduce_sum, (a, np.array([-3])), {}),
        (normops.reduce_sum, (a, np.array([2 ** 63], np.uint64)), {}), (normops.reduce_sum, (a, [2 ** 70]), {}),
        (normops.reduce_sum, (a, np.array([0.5])), {}), (normops.reduce_sum, (a, np.array([[0]])), {}),
        (normops.reduce_max, (a, ["x"]), {}), (normops.reduce_sum, (a, [0]), {"keepdims": 2}),
        (normops.reduce_sum, (a, [0]), {"keepdims": True}), (normops.reduce_sum, (a, [0]), {"noop_with_empty_axes": 2}),
        (normops.reduce_sum, (a, [0]), {"mode": "slow"}), (normops.reduce_sum, (a, [0]), {"n_threads": 0}),
        (normops.reduce_sum, (a, [7]), {"n_threads": 0}), (normops.reduce_log_sum_exp, (a, [0, 0]), {"opset": 18}),
        (normops.reduce_sum, (a, [0]), {"opset": 0}), (normops.reduce_sum, (a, [0]), {"opset": 99}),
        (normops.reduce_sum, (a, [0]), {"opset": 13.0}),
        (normops.ops.arg_max, (a,), {"axis": 2}), (normops.ops.arg_max, (a,), {"axis": -3}),
        (normops.ops.arg_min, (a,), {"axis": 0, "keepdims": 3}), (normops.ops.arg_min, (a,), {"axis": True}),
        (normops.ops.arg_max, (a,), {"select_last_index": 1, "opset": 11}),
        (normops.ops.arg_max, (a,), {"select_last_index": 2}), (normops.ops.arg_max, (a,), {"mode": "slow"}),
        (normops.ops.arg_max, (a,), {"n_threads": 0}), (normops.ops.arg_max, (a,), {"opset": 99}),
    ]
    for f, args, kwargs in bad:
        got, want, _ = routes.both(f, *args, **kwargs)
        assert isinstance(want, Exception), f"{f.__name__} {kwargs}: the general path did not refuse"
        assert_identical(got, want, f"{f.__name__} {kwargs}")
        assert type(want).__name__ in ("InvalidInputError", "UnsupportedError"), (f.__name__, kwargs, want)


def test_every_isa_level(routes):
    """The direct route calls the kernels of the level in force."""
    import normops._isa

    x = special((33, 70), np.float32)
    for level in normops._isa.available_levels():
        with normops._isa.use(level):
            for f, args, kwargs in ((normops.sum, (x,), {"axis": 0}), (normops.max, (x,), {}),
                                    (normops.argmin, (x,), {"axis": -1}),
                                    (normops.reduce_log_sum_exp, (np.abs(x), [1]), {"n_threads": 2})):
                got, want, taken = routes.both(f, *args, **kwargs)
                assert_identical(got, want, f"{level} {f.__name__}")
                assert taken


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES + [(), (3, 0)])
def test_cumulative_same_bits(routes, dtype, shape):
    x = special(shape, dtype)
    ndim = len(shape)
    taken = 0
    for f in (normops.cumsum, normops.cumprod):
        for axis in [None] + list(range(-ndim, ndim)):
            for n_threads in (None, 1, 3):
                got, want, took = routes.both(f, x, axis=axis, n_threads=n_threads)
                assert_identical(got, want, f"{f.__name__}{shape} axis={axis} n={n_threads}")
                taken += took
    for f in (normops.ops.cum_sum, normops.ops.cum_prod):
        for axis in list(range(-ndim, ndim)) + [np.array(0), np.array([-1], np.int32)]:
            for exclusive in (0, 1):
                for reverse in (0, 1):
                    got, want, took = routes.both(f, x, axis, exclusive=exclusive, reverse=reverse, n_threads=2)
                    assert_identical(got, want, f"{f.__name__}{shape} axis={axis!r} {exclusive} {reverse}")
                    taken += took
    assert taken > 0 or 0 in shape or not shape


def test_cumulative_fallbacks_and_errors(routes):
    a = RNG.standard_normal((6, 8)).astype(np.float32)
    fallbacks = [
        (normops.cumsum, (a,), {"axis": np.int64(0)}), (normops.cumsum, (a,), {"dtype": np.float64}),
        (normops.cumsum, (a,), {"out": np.empty((6, 8), np.float32), "axis": 1}),
        (normops.cumprod, (a.astype(np.float16),), {}), (normops.cumsum, (a.tolist(),), {"axis": 0}),
        (normops.cumsum, (a[:, ::2],), {"axis": 0}), (normops.cumsum, (a,), {"axis": np.array([0])}),
        (normops.ops.cum_sum, (a, np.array([1], np.uint8)), {}), (normops.ops.cum_sum, (a, 1), {"opset": 14}),
        (normops.ops.cum_sum, (a, 1), {"exclusive": True}), (normops.ops.cum_prod, (a, 0), {"full_output": True}),
        (normops.ops.cum_sum, (a, np.int64(1)), {}), (normops.ops.cum_sum, (a.astype(np.float16), 1), {}),
    ]
    for f, args, kwargs in fallbacks:
        got, want, taken = routes.both(f, *args, **kwargs)
        assert_identical(got, want, f"{f.__name__} {kwargs}")
        assert not taken, f"{f.__name__} {kwargs}"
    bad = [
        (normops.cumsum, (a,), {"axis": 2}), (normops.cumsum, (a,), {"axis": -3}), (normops.cumsum, (a,), {"axis": 1.0}),
        (normops.cumsum, (a,), {"axis": [0]}), (normops.cumprod, (a,), {"axis": True}),
        (normops.cumsum, (a,), {"n_threads": 0}), (normops.cumsum, (a,), {"axis": np.array([0])}),
        (normops.ops.cum_sum, (a, 2), {}), (normops.ops.cum_sum, (a, np.array([0, 1])), {}),
        (normops.ops.cum_sum, (a, None), {}), (normops.ops.cum_sum, (a, 1.0), {}),
        (normops.ops.cum_sum, (a, True), {}), (normops.ops.cum_sum, (a, 1), {"exclusive": 2}),
        (normops.ops.cum_sum, (a, 1), {"reverse": -1}), (normops.ops.cum_sum, (a, 1), {"mode": "slow"}),
        (normops.ops.cum_prod, (a, 1), {"n_threads": 0}), (normops.ops.cum_prod, (a, 1), {"opset": 25}),
        (normops.ops.cum_sum, (np.float32(1.0), 0), {}),
    ]
    for f, args, kwargs in bad:
        got, want, _ = routes.both(f, *args, **kwargs)
        if isinstance(want, Exception):
            assert type(want).__name__ in ("InvalidInputError", "UnsupportedError"), (f.__name__, kwargs, want)
        assert_identical(got, want, f"{f.__name__} {args[1:]} {kwargs}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_a_nan_anywhere_gives_the_canonical_nan(dtype):
    """A NaN of either sign or with a payload at each position of short and
    odd rows and columns: the direct route's results (finishing and the
    canonical NaN in the kernel) equal the reference's at every ISA level."""
    u = UINT[np.dtype(dtype).itemsize]
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001] if u is np.uint32 else
                    [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001], u).view(dtype)
    ops = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceProd", "ReduceL2"]
    for n in (1, 7, 17):
        for i in range(n):
            for v in nans:
                z = np.full((3, n), 1.5, dtype)
                z[0, ::3] = np.inf
                z[1, i] = v
                for op in ops:
                    for axes in ([1], [0]):
                        want = normops.reference.run(op, [z, np.array(axes)])[0]
                        for level in normops._isa.available_levels():
                            with normops._isa.use(level):
                                got = normops.run(op, [z, np.array(axes)])[0]
                                assert_identical(got, want, f"{op} {n} {i} {v!r} {axes} {level}")


REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_run_takes_the_direct_route_with_the_same_bits_and_errors(routes, dtype):
    """normops.run (the operator's kept direct function, which ONNX sessions
    use too) goes the named functions' direct route: same results, same errors."""
    taken = 0
    for shape in [(7,), (5, 33), (3, 4, 17)]:
        x = special(shape, dtype)
        for op in REDUCE_OPS:
            for axes in (None, np.array([0]), np.array([-1]), np.array([], np.int64), [0, 0], np.array([5])):
                for attrs in ({}, {"keepdims": 0}, {"noop_with_empty_axes": 1}):
                    for opset in (None, 13, 18):
                        inputs = [x] if axes is None else [x, axes]
                        label = f"{op}{shape} axes={axes} {attrs} opset={opset}"
                        got, want, took = routes.both(normops.run, op, inputs, attrs, opset=opset, n_threads=2)
                        assert_identical(got, want, label)
                        taken += took
        for op in ("ArgMax", "ArgMin"):
            for attrs in ({}, {"axis": -1, "keepdims": 0}, {"axis": -1, "select_last_index": 1},
                          {"axis": 9}, {"axis": 1.5}):
                for opset in (None, 11, 13):
                    label = f"{op}{shape} {attrs} opset={opset}"
                    got, want, took = routes.both(normops.run, op, [x], attrs, opset=opset, n_threads=1)
                    assert_identical(got, want, label)
                    taken += took
        for op in ("CumSum", "CumProd"):
            for axis in (np.array(0), np.array([-1], np.int32), np.array(5), None):
                for attrs in ({}, {"exclusive": 1, "reverse": 1}, {"exclusive": 2}):
                    label = f"{op}{shape} axis={axis!r} {attrs}"
                    got, want, took = routes.both(normops.run, op, [x, axis], attrs, n_threads=1)
                    assert_identical(got, want, label)
                    taken += took
    assert taken > 100


def test_scalar_results_leave_nothing_behind(routes):
    """The direct routes turn a 0-d result into a NumPy scalar with
    PyArray_Return, whose reference counting the kernels do by hand
    (reduction.pxi, scalar_or_array): one reference too many would keep every
    0-d array alive (one too few frees it while in use: the sanitizer run
    catches that). The memory tracemalloc sees stays flat over many calls."""
    import tracemalloc
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    calls = (lambda: normops.sum(x), lambda: normops.max(x), lambda: normops.argmax(x))
    for f in calls:
        got, taken = routes.call(True, f)
        assert taken and isinstance(got, np.generic), f  # the scalar of the direct route
    n = 3000
    for f in calls:
        for _ in range(50):  # caches warm
            f()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(n):
                f()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert grown < n * 16, (f, grown)  # a kept 0-d array is about 100 bytes
