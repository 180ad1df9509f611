"""MeanVarianceNormalization and LpNormalization: kernels against the
executable specification bit for bit (shapes, axes, dtypes, special values,
threads, ISA builds), ONNX Runtime's zero-norm and no-epsilon behaviour,
errors, and a numerical comparison with ONNX Runtime."""

import numpy as np
import pytest

import normops
import normops._isa
import normops.reference
from normops import InvalidInputError, UnsupportedError
from test_normalization import (  # noqa: F401  (the fixture is used by name)
    FLOAT_DTYPES, make_x, parallel_even_when_small,
)

from bits import assert_same_bits

MVN, LP = "MeanVarianceNormalization", "LpNormalization"


def check(op, x, attributes, opset=None, **kw):
    got = normops.run(op, [x], attributes, opset=opset, **kw)
    want = normops.reference.run(op, [x], attributes, opset=opset)
    assert len(got) == len(want) == 1
    assert_same_bits(got[0], want[0], f"{op} {x.shape} {x.dtype} {attributes} {kw}")
    return got[0]


def random_axes(rng, ndim):
    k = int(rng.integers(0, ndim + 1))
    axes = [int(a) for a in rng.permutation(ndim)[:k]]
    return [a - ndim if rng.random() < 0.5 else a for a in axes]  # some negative, unsorted


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("seed", range(6))
def test_random_shapes_and_axes(seed, dtype):
    rng = np.random.default_rng([seed, dtype.itemsize])
    for _ in range(6):
        ndim = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 9, size=ndim))
        x = make_x(rng, shape, dtype, special=bool(seed % 2))
        check(MVN, x, {"axes": random_axes(rng, ndim)})
        check(LP, x, {"axis": int(rng.integers(-ndim, ndim)), "p": int(rng.integers(1, 3))})


@pytest.mark.parametrize("width", [1, 2, 15, 16, 17, 33, 257, 4097, 16385])
def test_widths_and_special_values(width):
    rng = np.random.default_rng(width)
    for dtype in FLOAT_DTYPES:
        x = make_x(rng, (5, width), dtype, special=True)
        check(MVN, x, {"axes": [1]})
        check(MVN, x, {"axes": [0, 1]})
        for p in (1, 2):
            check(LP, x, {"axis": 1, "p": p})
            check(LP, x, {"axis": 0, "p": p})


def test_ort_rules_constant_rows_and_zero_norms():
    x = np.array([[1, 1, 1, 1], [1, 2, 3, 4]], np.float32)
    y = normops.mean_variance_normalization(x, axes=[1])
    assert np.isnan(y[0]).all() and y.view(np.uint32)[0, 0] == 0x7FC00000  # 0 / 0, canonical
    assert np.array_equal(y[1], np.array([-3, -1, 1, 3], np.float32) / np.sqrt(np.float32(5)))
    z = np.array([[0, -0.0, 0], [3, 4, 0], [1e-30, 1e-30, 0], [np.inf, 1, 0], [np.nan, 0, 0]], np.float32)
    y2 = normops.lp_normalization(z, axis=1, p=2)
    assert y2.view(np.uint32)[0].tolist() == [0, 0, 0]          # zero norm: +0 throughout
    assert y2[1].tolist() == [np.float32(3) / np.float32(5), np.float32(4) / np.float32(5), 0]
    assert y2.view(np.uint32)[2].tolist() == [0, 0, 0]          # the sum of squares underflows to 0
    assert np.isnan(y2[3, 0]) and y2[3, 1:].tolist() == [0, 0]  # inf / inf, 1 / inf
    assert np.isnan(y2[4]).all()
    y1 = normops.lp_normalization(z, axis=1, p=1)
    assert y1[1].tolist() == [np.float32(3) / np.float32(7), np.float32(4) / np.float32(7), 0]
    assert y1[2].tolist() == [0.5, 0.5, 0]


def test_mvn_axes_semantics():
    rng = np.random.default_rng(3)
    x = make_x(rng, (2, 3, 4, 5), np.dtype(np.float32))
    default = normops.mean_variance_normalization(x)
    assert_same_bits(normops.mean_variance_normalization(x, axes=[3, -4, 2]), default)
    assert_same_bits(normops.mean_variance_normalization(x, axes=[]),
                     normops.mean_variance_normalization(x, axes=[0, 1, 2, 3]))
    # the row is the reduced index tuples in row-major order
    moved = np.ascontiguousarray(np.transpose(x, (1, 0, 2, 3))).reshape(3, -1)
    want = normops.mean_variance_normalization(moved, axes=[1]).reshape(3, 2, 4, 5).transpose(1, 0, 2, 3)
    assert_same_bits(default, np.ascontiguousarray(want))


@pytest.mark.parametrize("shape", [(2000, 64), (37, 16385), (1500, 33)], ids=str)
def test_thread_count_invariance(shape):
    rng = np.random.default_rng(list(shape))
    for dtype in (np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)):
        x = make_x(rng, shape, dtype, special=shape[1] == 33)
        for op, attrs in ((MVN, {"axes": [1]}), (MVN, {"axes": [0]}), (LP, {"axis": -1, "p": 2}),
                          (LP, {"axis": 0, "p": 1})):
            want = normops.reference.run(op, [x], attrs)[0]
            for n in (1, 2, 3, 8):
                assert_same_bits(normops.run(op, [x], attrs, n_threads=n)[0], want, f"{op} {attrs} n={n}")


def test_isa_levels_threads_and_small_parallel(parallel_even_when_small):
    rng = np.random.default_rng(11)
    cases = [((9, 3), [1]), ((300, 57), [0]), ((17, 1000), [1]), ((3, 4, 5, 6), [0, 2, 3])]
    for shape, axes in cases:
        dtype = np.dtype(rng.choice([np.float32, np.float64, np.float16]))
        x = make_x(rng, shape, dtype, special=True)
        want_mvn = normops.reference.run(MVN, [x], {"axes": axes})[0]
        want_lp = normops.reference.run(LP, [x], {"axis": axes[0], "p": 2})[0]
        for level in normops._isa.available_levels():
            with normops._isa.use(level):
                for n in (1, 2, 3, 8):
                    for mode in ("exact", "fast"):
                        assert_same_bits(normops.run(MVN, [x], {"axes": axes}, n_threads=n, mode=mode)[0],
                                         want_mvn, f"MVN {shape} {level} {n} {mode}")
                        assert_same_bits(normops.run(LP, [x], {"axis": axes[0], "p": 2}, n_threads=n,
                                                     mode=mode)[0], want_lp, f"LP {shape} {level} {n} {mode}")


def test_opsets_and_named_functions():
    rng = np.random.default_rng(5)
    x = make_x(rng, (2, 3, 4, 5), np.dtype(np.float32))
    for opset in (9, 13, 22):
        check(MVN, x, {}, opset=opset)
    for opset in (1, 13, 22):
        check(LP, x, {}, opset=opset)
    with pytest.raises(UnsupportedError, match="MeanVarianceNormalization"):
        normops.run(MVN, [x], {}, opset=8)
    assert_same_bits(normops.mean_variance_normalization(x), normops.run(MVN, [x])[0])
    assert_same_bits(normops.ops.lp_normalization(x, axis=1, p=1), normops.run(LP, [x], {"axis": 1, "p": 1})[0])
    (y,) = normops.lp_normalization(x, full_output=True)
    assert_same_bits(y, normops.reference.lp_normalization(x, 3, 2)[0])


def test_bad_inputs():
    x = np.ones((2, 3, 4, 5), np.float32)
    cases = [
        (lambda: normops.mean_variance_normalization(x, axes=[1, 1]), "axes"),
        (lambda: normops.mean_variance_normalization(x, axes=[0, -4]), "axes"),
        (lambda: normops.mean_variance_normalization(x, axes=[4]), "axes"),
        (lambda: normops.mean_variance_normalization(x, axes=3), "axes"),
        (lambda: normops.mean_variance_normalization(x, axes=[1.5]), "axes"),
        (lambda: normops.mean_variance_normalization(x[0, 0, 0], axes=[0, 2, 3]), "axes"),
        (lambda: normops.mean_variance_normalization(np.float32(1), axes=[]), "X"),
        (lambda: normops.mean_variance_normalization(x.astype(np.int32)), "X"),
        (lambda: normops.lp_normalization(x, p=3), "'p'"),
        (lambda: normops.lp_normalization(x, p=0), "'p'"),
        (lambda: normops.lp_normalization(x, axis=4), "axis"),
        (lambda: normops.lp_normalization(x, axis=None), "axis"),
    ]
    for call, arg in cases:
        with pytest.raises(InvalidInputError) as info:
            call()
        assert arg in str(info.value) and ("MeanVarianceNormalization" in str(info.value)
                                           or "LpNormalization" in str(info.value)), str(info.value)
    # bool inputs are not served (docs/specification.md §15.4)
    with pytest.raises(UnsupportedError, match="LpNormalization.*'input'.*bool"):
        normops.lp_normalization(np.ones(3, bool))


def test_layouts_inputs_untouched_and_empty():
    rng = np.random.default_rng(8)
    base = make_x(rng, (6, 8, 10), np.dtype(np.float32), special=True)
    want = normops.mean_variance_normalization(base, axes=[0, 2])
    views = [base[:, :, ::-1][:, :, ::-1], np.asfortranarray(base), base.astype(base.dtype.newbyteorder(">"))]
    for v in views:
        before = v.tobytes()
        assert_same_bits(normops.mean_variance_normalization(v, axes=[0, 2]), want)
        assert v.tobytes() == before
    for shape, axes in (((0, 3), [1]), ((3, 0), [1]), ((0, 3), [0])):
        x = np.ones(shape, np.float32)
        assert normops.mean_variance_normalization(x, axes=axes).shape == shape
        assert normops.lp_normalization(x, axis=axes[0]).shape == shape
        assert normops.reference.run(MVN, [x], {"axes": axes})[0].shape == shape


def test_against_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    helper = pytest.importorskip("onnx.helper")
    from onnx import TensorProto

    def ort_run(op, x, opset, **attrs):
        node = helper.make_node(op, ["X"], ["Y"], **attrs)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape)],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return sess.run(None, {"X": x})[0]

    rng = np.random.default_rng(2024)
    x = (rng.standard_normal((3, 4, 5, 6)) * 3 + 1).astype(np.float32)
    x[0, 0] = 0  # LpNormalization zero-norm rows
    for axes in ([0, 2, 3], [1], [-1, 0], [3, 1, 2]):
        got = normops.mean_variance_normalization(x, axes=axes)
        np.testing.assert_allclose(got, ort_run(MVN, x, 13, axes=axes), rtol=1e-5, atol=1e-5)
    for axis in (-1, 0, 1, 2):
        for p in (1, 2):
            got = normops.lp_normalization(x, axis=axis, p=p)
            np.testing.assert_allclose(got, ort_run(LP, x, 22, axis=axis, p=p), rtol=1e-5, atol=1e-6)
    const = np.array([[2, 2, 2], [1, 2, 4]], np.float32)
    np.testing.assert_array_equal(normops.mean_variance_normalization(const, axes=[1]),
                                  ort_run(MVN, const, 13, axes=[1]))  # NaN where ORT has NaN


def test_onnx_backend_node_cases_pass_in_both_flavours():
    pytest.importorskip("onnx")
    from normops_tools import conformance

    cases = [c for c in conformance.discover("mvn|normalization_axis|lpnormalization") if c.served]
    assert {c.op_type for c in cases} == {MVN, LP} and len(cases) >= 7
    for case in cases:
        for mode in ("exact", "fast"):
            outcome = conformance.run_case(case, mode)
            assert outcome.status == conformance.PASSED, (case.name, mode, outcome)


def test_in_an_onnx_model():
    helper = pytest.importorskip("onnx.helper")
    from onnx import TensorProto

    import normops.onnx

    shape = [2, 3, 4, 5]
    nodes = [helper.make_node(MVN, ["X"], ["Y"], axes=[0, -1, 2]),
             helper.make_node(LP, ["Y"], ["Z"], axis=1, p=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("Z", TensorProto.FLOAT, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = make_x(np.random.default_rng(9), tuple(shape), np.dtype(np.float32))
    (z,) = normops.onnx.InferenceSession(model.SerializeToString()).run(None, {"X": x})
    want = normops.lp_normalization(normops.mean_variance_normalization(x, axes=[0, 2, 3]), axis=1, p=1)
    assert_same_bits(z, want)


def test_quick_route_of_the_named_functions():
    """Named calls on contiguous float32/float64 with the row last skip the
    validation layer; they must give the reference's bits, and anything
    unusual must still reach the validation."""
    rng = np.random.default_rng(21)
    for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        x = make_x(rng, (3, 5, 40), dtype, special=True)
        for axes in ([2], (-1,), [1, 2], (-1, 1), [0, 1, 2], [2, -2, 0]):
            for n in (None, 1, 3):
                assert_same_bits(normops.mean_variance_normalization(x, axes=axes, n_threads=n),
                                 normops.reference.run(MVN, [x], {"axes": list(axes)})[0], f"{axes}")
        for p in (1, 2):
            for axis in (-1, 2):
                assert_same_bits(normops.lp_normalization(x, axis=axis, p=p, mode="fast"),
                                 normops.reference.run(LP, [x], {"axis": axis, "p": p})[0])
        with pytest.raises(InvalidInputError, match="axes"):
            normops.mean_variance_normalization(x, axes=[2, -1])
        with pytest.raises(InvalidInputError, match="n_threads"):
            normops.mean_variance_normalization(x, axes=[2], n_threads=0)
        with pytest.raises(InvalidInputError, match="mode"):
            normops.lp_normalization(x, mode="quick")
        with pytest.raises(UnsupportedError):
            normops.mean_variance_normalization(x, axes=[2], opset=8)
    assert normops.lp_normalization(np.ones((2, 0), np.float32)).shape == (2, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=str)
def test_lp_along_columns_gives_the_row_codes_bits(dtype, parallel_even_when_small, monkeypatch):
    # LpNormalization along an axis that is not last runs on the columns in
    # place (float32/float64 arithmetic) instead of through a moved copy:
    # spans of neighbouring columns (256 float32 / 128 float64) that stop at
    # each slab, chunks of max(1, 16384 // n) columns split between threads,
    # columns of zeros, NaN, infinities, overflowing sums; bit for bit
    # against the specification at every level and thread count
    import normops.row_divide as rd

    def no_moved_copy(*args, **kwargs):
        raise AssertionError("the column route must not move axes")

    monkeypatch.setattr(rd, "moved_axes", no_moved_copy)
    rng = np.random.default_rng(21)
    dtype = np.dtype(dtype)
    for shape, axis in (((17, 300), 0), ((16, 257), 0), ((15, 129), 0), ((1, 256), 0), ((33, 2), 0),
                        ((3, 40, 255), 1), ((2, 70, 3, 5), 1), ((4, 5, 6, 7), 2), ((1100, 20), 0)):
        x = make_x(rng, shape, dtype, special=True)
        columns = np.moveaxis(x, axis, -1).reshape(-1, shape[axis])
        with np.errstate(all="ignore"):
            columns[0] = 0          # a zero norm: zeros throughout
            columns[-1, 1:] = 0.0
            columns[-1, 0] = np.nan
            if len(columns) > 2:
                columns[1] = -0.0
                columns[2] = np.finfo(dtype).max  # the sum overflows
        x = np.ascontiguousarray(np.moveaxis(columns.reshape(np.moveaxis(x, axis, -1).shape), -1, axis))
        for p in (1, 2):
            want = normops.reference.run(LP, [x], {"axis": axis, "p": p})[0]
            for level in normops._isa.available_levels():
                with normops._isa.use(level):
                    for n in (1, 2, 3, 8):
                        assert_same_bits(normops.run(LP, [x], {"axis": axis, "p": p}, n_threads=n)[0], want,
                                         f"LP {shape} axis={axis} p={p} {level} n={n}")
