"""normops.onnx.InferenceSession: multi-node models bit for bit against the
normops functions and close to ONNX Runtime, the plumbing operators exactly
as ONNX Runtime computes them, load-time refusals, feeds, threads, flavours
and the Backend interface."""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

import normops  # noqa: E402
from normops import InvalidInputError, UnsupportedError, _registry  # noqa: E402
from normops.onnx import Backend, ExactBackend, FastBackend, InferenceSession, PLUMBING_OPERATORS  # noqa: E402

from bits import assert_same_array_bits  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:  # optional
    ort = None

needs_ort = pytest.mark.skipif(ort is None, reason="onnxruntime is not installed")


def make_model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=(), **kwargs):
    graph = h.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers), **kwargs)
    opsets = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    return h.make_model(graph, opset_imports=opsets)


def unknown_output(name, elem_type):
    """A graph output of unknown shape: onnx.checker wants a shape field, so
    it is an empty one (ONNX Runtime reads that as rank 0 but does not check)."""
    value = h.make_tensor_value_info(name, elem_type, None)
    value.type.tensor_type.shape.SetInParent()
    return value


def ort_run(model, feeds, output_names=None):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(output_names, feeds)


# --------------------------------------------------------------------------
# A multi-node model: Reshape -> LayerNormalization -> Mul -> Softmax


RNG = np.random.default_rng(20261129)
WIDTH = 24
SCALE = RNG.standard_normal(WIDTH).astype(np.float32)
BIAS = RNG.standard_normal(WIDTH).astype(np.float32)
TEMPERATURE = np.float32(0.75)


def transformer_block(opset=17):
    nodes = [
        h.make_node("Reshape", ["x", "shape"], ["rows"], name="reshape"),
        h.make_node("LayerNormalization", ["rows", "scale", "bias"], ["normed", "mean", "inv_std"],
                    axis=-1, epsilon=1e-5, name="ln"),
        h.make_node("Constant", [], ["t"], value_float=float(TEMPERATURE)),
        h.make_node("Mul", ["normed", "t"], ["logits"]),
        h.make_node("Softmax", ["logits"], ["probs"], axis=-1, name="softmax"),
    ]
    initializers = [nh.from_array(SCALE, "scale"), nh.from_array(BIAS, "bias"),
                    nh.from_array(np.array([-1, WIDTH], np.int64), "shape")]
    return make_model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 2 * WIDTH])],
        [h.make_tensor_value_info("probs", T.FLOAT, ["rows", WIDTH]),
         h.make_tensor_value_info("mean", T.FLOAT, ["rows", 1])],
        initializers, opset=opset)


def direct(x, mode=None):
    """The same computation through the normops functions."""
    y, mean, _ = normops.layer_normalization(x.reshape(-1, WIDTH), SCALE, BIAS, epsilon=1e-5,
                                             full_output=True, mode=mode)
    return normops.ops.softmax(y * TEMPERATURE, axis=-1, mode=mode), mean


def batch(rows=7, seed=0):
    return np.random.default_rng(seed).standard_normal((rows, 2 * WIDTH)).astype(np.float32)


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_block_is_bit_identical_to_the_functions(mode):
    session = InferenceSession(transformer_block(), mode=mode)
    x = batch()
    probs, mean = session.run(None, {"x": x})
    want_probs, want_mean = direct(x, mode)
    assert_same_array_bits(probs, want_probs)
    assert_same_array_bits(mean, want_mean)
    (only_probs,) = session.run(["probs"], {"x": x})
    assert_same_array_bits(only_probs, want_probs)


@needs_ort
def test_block_is_close_to_onnxruntime():
    model = transformer_block()
    x = batch(rows=33, seed=1)
    got = InferenceSession(model).run(None, {"x": x})
    want = ort_run(model, {"x": x})
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_model_from_proto_bytes_path_and_external_data(tmp_path):
    model = transformer_block()
    x = batch(seed=2)
    want = InferenceSession(model).run(None, {"x": x})
    path = tmp_path / "block.onnx"
    onnx.save(model, str(path))
    external = tmp_path / "external" / "block.onnx"
    external.parent.mkdir()
    copy = onnx.ModelProto()
    copy.CopyFrom(model)  # saving with external data rewrites the proto
    onnx.save(copy, str(external), save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    assert (external.parent / "weights.bin").is_file()
    for source in (model.SerializeToString(), bytearray(model.SerializeToString()), str(path), path,
                   str(external)):
        got = InferenceSession(source).run(None, {"x": x})
        for g, w in zip(got, want):
            assert_same_array_bits(g, w)
    # external data that was not loaded cannot be read
    bare = onnx.load(str(external), load_external_data=False)
    with pytest.raises(InvalidInputError, match="'scale'.*external file"):
        InferenceSession(bare)


def test_bad_model_arguments(tmp_path):
    with pytest.raises(InvalidInputError, match="no model file"):
        InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(InvalidInputError, match="not an ONNX model"):
        InferenceSession(b"\xff\xff not a model")
    with pytest.raises(InvalidInputError, match="must be a path, bytes or an onnx.ModelProto"):
        InferenceSession(42)
    with pytest.raises(InvalidInputError, match="'mode'"):
        InferenceSession(transformer_block(), mode="quick")
    with pytest.raises(InvalidInputError, match="'n_threads'"):
        InferenceSession(transformer_block(), n_threads=0)


def test_inputs_and_outputs_describe_the_graph():
    session = InferenceSession(transformer_block())
    (x,) = session.get_inputs()
    assert (x.name, x.type, x.shape) == ("x", "tensor(float)", ["batch", 2 * WIDTH])
    assert [(o.name, o.type, o.shape) for o in session.get_outputs()] == [
        ("probs", "tensor(float)", ["rows", WIDTH]), ("mean", "tensor(float)", ["rows", 1])]
    assert session.get_overridable_initializers() == []


# --------------------------------------------------------------------------
# Load-time refusals


def test_every_unserved_operator_is_named_at_once():
    then = h.make_graph([h.make_node("Identity", ["a"], ["o"])], "then", [],
                        [h.make_tensor_value_info("o", T.FLOAT, [2])])
    nodes = [
        h.make_node("Exp", ["x"], ["e1"]),
        h.make_node("Exp", ["e1"], ["e2"]),
        h.make_node("Relu", ["e2"], ["r"]),
        h.make_node("Softmax", ["r"], ["s"], axis=-1),  # served: not listed
        h.make_node("FancyNorm", ["s"], ["f"], domain="com.example"),
        h.make_node("Add", ["f", "x"], ["y"]),
        h.make_node("If", ["c"], ["z"], then_branch=then, else_branch=then),
        h.make_node("LayerNormalization", ["x", "x"], ["ln"]),  # served from opset 17 only
    ]
    model = make_model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [2]), h.make_tensor_value_info("c", T.BOOL, []),
         h.make_tensor_value_info("a", T.FLOAT, [2])],
        [h.make_tensor_value_info("y", T.FLOAT, [2]), h.make_tensor_value_info("z", T.FLOAT, [2]),
         h.make_tensor_value_info("ln", T.FLOAT, [2])],
        opset=13, extra_opsets=[("com.example", 3)])
    with pytest.raises(UnsupportedError) as info:
        InferenceSession(model, use_onnxruntime=False)  # normops alone (tests/test_onnx_models.py: with it)
    message = str(info.value)
    assert "use_onnxruntime=False: ONNX Runtime may not run them (node 0 (Exp), node 1 (Exp), node 2 (Relu)," in message
    assert "5 operators" in message
    assert "LayerNormalization (domain ai.onnx, opset 13, 1 node): not defined at opset 13 (first version: 17)" in message
    assert "Exp (domain ai.onnx, opset 13, 2 nodes)" in message
    assert "Relu (domain ai.onnx, opset 13, 1 node)" in message
    assert "FancyNorm (domain com.example, opset 3, 1 node)" in message
    assert "If (domain ai.onnx, opset 13, 1 node)" in message and "subgraph" in message
    assert "Softmax" not in message and "Add" not in message


@pytest.mark.parametrize("node, opset, reason", [
    (h.make_node("Add", ["x", "x"], ["y"]), 6, "legacy broadcasting"),
    (h.make_node("Cast", ["x"], ["y"], to=T.STRING), 13, "cast to STRING"),
    (h.make_node("Cast", ["x"], ["y"], to=T.BFLOAT16), 9, "cast to BFLOAT16"),
    (h.make_node("Cast", ["x"], ["y"], to=T.FLOAT8E4M3FN), 21, "cast to FLOAT8E4M3FN"),
    (h.make_node("Constant", [], ["y"], value_strings=["a"]), 13, "string value"),
    (h.make_node("Softmax", ["x"], ["y"]), 27 + 1, "newer than this build knows"),
])
def test_refused_plumbing_versions_and_values(node, opset, reason):
    model = make_model([node], [h.make_tensor_value_info("x", T.FLOAT, [2])],
                       [h.make_tensor_value_info("y", T.FLOAT, [2])], opset=opset)
    model.ir_version = 8
    with pytest.raises(UnsupportedError, match=f"{node.op_type} \\(domain ai.onnx, opset {opset}, 1 node\\): .*{reason}"):
        InferenceSession(model, use_onnxruntime=False)


def test_invalid_models_are_refused_by_the_checker():
    model = make_model([h.make_node("Softmax", ["x"], ["y"], axis="last")],
                       [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    with pytest.raises(InvalidInputError, match="onnx.checker"):
        InferenceSession(model)
    undefined = make_model([h.make_node("Softmax", ["nowhere"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, [2])],
                           [h.make_tensor_value_info("y", T.FLOAT, [2])])
    with pytest.raises(InvalidInputError, match="'nowhere'.*not defined"):
        InferenceSession(undefined)


def test_unsorted_graph_runs_and_cycles_are_refused():
    model = transformer_block()
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(reversed(nodes))
    x = batch(seed=3)
    for g, w in zip(InferenceSession(model).run(None, {"x": x}), InferenceSession(transformer_block()).run(None, {"x": x})):
        assert_same_array_bits(g, w)
    cycle = make_model([h.make_node("Identity", ["b"], ["a"]), h.make_node("Identity", ["a"], ["b"]),
                        h.make_node("Add", ["a", "x"], ["y"])],
                       [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])])
    with pytest.raises(InvalidInputError, match="cycle"):
        InferenceSession(cycle)


def test_non_tensor_inputs_and_sparse_initializers_are_not_served():
    seq = h.make_tensor_sequence_value_info("s", T.FLOAT, None)
    model = make_model([h.make_node("Identity", ["s"], ["y"])], [seq], [h.make_tensor_sequence_value_info("y", T.FLOAT, None)])
    with pytest.raises(UnsupportedError, match="'s' is not a tensor"):
        InferenceSession(model)
    sparse = h.make_sparse_tensor(nh.from_array(np.array([1.0], np.float32), "w"),
                                  nh.from_array(np.array([0], np.int64), "w_i"), [2])
    model = make_model([h.make_node("Add", ["x", "w"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, [2])],
                       [h.make_tensor_value_info("y", T.FLOAT, [2])], sparse_initializer=[sparse])
    with pytest.raises(UnsupportedError, match="sparse initializers"):
        InferenceSession(model)


def test_unknown_attribute_of_a_served_operator():
    # onnx has no schema for SimplifiedLayerNormalization, so only normops can object
    model = make_model([h.make_node("SimplifiedLayerNormalization", ["x", "s"], ["y"], flavour=2)],
                       [h.make_tensor_value_info("x", T.FLOAT, [2, 4]), h.make_tensor_value_info("s", T.FLOAT, [4])],
                       [h.make_tensor_value_info("y", T.FLOAT, [2, 4])])
    with pytest.raises(InvalidInputError, match="node 0 \\(SimplifiedLayerNormalization\\).*unknown attribute 'flavour'"):
        InferenceSession(model)


# --------------------------------------------------------------------------
# Feeds


def test_bad_feeds_name_the_input():
    session = InferenceSession(transformer_block())
    x = batch()
    with pytest.raises(InvalidInputError, match="missing input 'x'"):
        session.run(None, {})
    with pytest.raises(InvalidInputError, match="'y' is not an input"):
        session.run(None, {"x": x, "y": x})
    with pytest.raises(InvalidInputError, match="'x' has dtype float64; the model declares tensor\\(float\\)"):
        session.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(InvalidInputError, match="'x' has shape \\(7, 3\\); the model declares \\['batch', 48\\]"):
        session.run(None, {"x": x[:, :3]})
    with pytest.raises(InvalidInputError, match="'x' has shape"):
        session.run(None, {"x": x[0]})
    with pytest.raises(InvalidInputError, match="must be a numpy array, not list"):
        session.run(None, {"x": x.tolist()})
    with pytest.raises(InvalidInputError, match="must be a mapping"):
        session.run(None, [x])
    with pytest.raises(InvalidInputError, match="'ln' is not an output"):
        session.run(["ln"], {"x": x})
    with pytest.raises(InvalidInputError, match="unknown run option"):
        session.run(None, {"x": x}, run_options={"log_level": 3})


def test_feeds_are_not_modified_and_outputs_are_owned():
    nodes = [h.make_node("Identity", ["x"], ["same"]), h.make_node("Identity", ["w"], ["weights"]),
             h.make_node("Transpose", ["x"], ["xt"])]
    w = np.arange(3, dtype=np.float32)
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                       [h.make_tensor_value_info("same", T.FLOAT, [2, 3]), h.make_tensor_value_info("weights", T.FLOAT, [3]),
                        h.make_tensor_value_info("xt", T.FLOAT, [3, 2])],
                       [nh.from_array(w, "w")])
    session = InferenceSession(model)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = x.copy()
    same, weights, xt = session.run(None, {"x": x})
    assert not np.shares_memory(same, x) and xt.flags.c_contiguous
    np.testing.assert_array_equal(xt, x.T)
    same[...] = -1
    weights[...] = -1
    np.testing.assert_array_equal(x, before)
    np.testing.assert_array_equal(session.run(["weights"], {"x": x})[0], w)


def test_outputs_of_one_value_are_separate_arrays():
    model = make_model([h.make_node("Softmax", ["x"], ["a"]), h.make_node("Identity", ["a"], ["b"])],
                       [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                       [h.make_tensor_value_info("a", T.FLOAT, [2, 3]), h.make_tensor_value_info("b", T.FLOAT, [2, 3])])
    x = np.random.default_rng(12).standard_normal((2, 3)).astype(np.float32)
    a, b, a2 = InferenceSession(model).run(["a", "b", "a"], {"x": x})
    want = normops.ops.softmax(x)
    a[...] = 0
    assert_same_array_bits(b, want)
    assert_same_array_bits(a2, want)


def test_errors_of_served_nodes_name_the_node():
    model = make_model([h.make_node("Cast", ["x"], ["i"], to=T.INT32), h.make_node("Softmax", ["i"], ["y"], name="sm")],
                       [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [unknown_output("y", T.INT32)])
    with pytest.raises(InvalidInputError, match="node 1 \\(Softmax, 'sm'\\): Softmax: input 'input' has dtype int32"):
        InferenceSession(model).run(None, {"x": np.zeros((2, 3), np.float32)})


def test_byte_swapped_and_numpy_scalar_feeds():
    model = make_model([h.make_node("Add", ["x", "y"], ["z"])],
                       [h.make_tensor_value_info("x", T.FLOAT, [3]), h.make_tensor_value_info("y", T.FLOAT, [])],
                       [h.make_tensor_value_info("z", T.FLOAT, [3])])
    x = np.array([1.5, -2.0, 3.25], dtype=">f4")
    (z,) = InferenceSession(model).run(None, {"x": x, "y": np.float32(0.5)})
    np.testing.assert_array_equal(z, np.array([2.0, -1.5, 3.75], np.float32))
    assert x.dtype == np.dtype(">f4")


def test_overridable_initializer_and_optional_inputs():
    scale = np.full(4, 2.0, np.float32)
    nodes = [h.make_node("LayerNormalization", ["x", "scale", ""], ["y"], axis=-1)]
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [3, 4]), h.make_tensor_value_info("scale", T.FLOAT, [4])],
                       [h.make_tensor_value_info("y", T.FLOAT, [3, 4])], [nh.from_array(scale, "scale")])
    session = InferenceSession(model)
    assert [a.name for a in session.get_inputs()] == ["x"]
    assert [a.name for a in session.get_overridable_initializers()] == ["scale"]
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    assert_same_array_bits(session.run(None, {"x": x})[0], normops.layer_normalization(x, scale))
    other = np.linspace(-1, 1, 4, dtype=np.float32)
    assert_same_array_bits(session.run(None, {"x": x, "scale": other})[0], normops.layer_normalization(x, other))


# --------------------------------------------------------------------------
# Flavours, threads


def test_mode_and_n_threads_reach_every_served_node(monkeypatch):
    from normops import _isa

    calls = []
    kernels = _isa.kernels
    row_normalize_nd, softmax_direct = kernels.row_normalize_nd, kernels.softmax_direct

    def spy_ln(*args):
        calls.append(("LayerNormalization", args[8]))  # n_threads (no flavour: the same arithmetic)
        return row_normalize_nd(*args)

    def spy_softmax(x, axis, version, kind, fast, n_threads):
        calls.append(("Softmax", "fast" if fast else "exact", n_threads))
        return softmax_direct(x, axis, version, kind, fast, n_threads)

    monkeypatch.setattr(kernels, "row_normalize_nd", spy_ln)
    monkeypatch.setattr(kernels, "softmax_direct", spy_softmax)
    x = batch()
    InferenceSession(transformer_block(), mode="fast", n_threads=3).run(None, {"x": x})
    assert calls == [("LayerNormalization", 3), ("Softmax", "fast", 3)]
    calls.clear()
    InferenceSession(transformer_block(), mode="fast", n_threads=3).run(None, {"x": x},
                                                                       run_options={"mode": "exact", "n_threads": 1})
    assert calls == [("LayerNormalization", 1), ("Softmax", "exact", 1)]
    calls.clear()
    with normops.config(n_threads=2, mode="fast"):  # the configured count: -2, under the thread budget
        InferenceSession(transformer_block()).run(None, {"x": x})
    assert calls == [("LayerNormalization", -2), ("Softmax", "fast", -2)]


@pytest.mark.parametrize("declared", [("y",), ("y", "mean"), ("y", "", "inv"), ("y", "mean", "inv")])
def test_layer_normalization_computes_only_the_declared_outputs(monkeypatch, declared):
    from normops import _isa

    asked = []
    original = _isa.kernels.row_normalize_nd

    def spy(*args):
        asked.append(tuple(map(bool, args[-2:])))  # (want the mean, want the statistics)
        return original(*args)

    monkeypatch.setattr(_isa.kernels, "row_normalize_nd", spy)
    x = batch()
    w = np.linspace(0.5, 1.5, x.shape[1], dtype=np.float32)
    node = h.make_node("LayerNormalization", ["x", "w"], list(declared))
    shapes = {"y": list(x.shape), "mean": [x.shape[0], 1], "inv": [x.shape[0], 1]}
    outputs = [h.make_tensor_value_info(name, T.FLOAT, shapes[name]) for name in declared if name]
    model = make_model([node], [h.make_tensor_value_info("x", T.FLOAT, list(x.shape))], outputs,
                       initializers=[nh.from_array(w, "w")])
    got = InferenceSession(model).run(None, {"x": x})
    assert asked == [(False, False) if declared == ("y",) else (True, True)]
    y, mean, inv = normops.layer_normalization(x, w, full_output=True)
    want = {"y": y, "mean": mean, "inv": inv}
    assert len(got) == len([n for n in declared if n])
    for name, value in zip([n for n in declared if n], got):
        assert_same_array_bits(value, want[name])


def test_intermediate_values_are_freed_after_their_last_use(monkeypatch):
    import weakref

    from normops import _isa

    original, produced, alive = _isa.kernels.softmax_direct, [], []

    def spy(*args):
        alive.append([ref() is not None for ref in produced])
        y = original(*args)
        produced.append(weakref.ref(y))
        return y

    monkeypatch.setattr(_isa.kernels, "softmax_direct", spy)
    nodes = [h.make_node("Softmax", [a], [b]) for a, b in [("x", "a"), ("a", "b"), ("b", "c")]]
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [4, 5])], [h.make_tensor_value_info("c", T.FLOAT, [4, 5])])
    (c,) = InferenceSession(model).run(None, {"x": np.ones((4, 5), np.float32)})
    assert alive == [[], [True], [False, True]]  # 'a' is gone once 'b' is computed


def test_default_mode_follows_the_calling_threads_config():
    session = InferenceSession(transformer_block())
    x = batch(rows=64, seed=5)
    exact = session.run(["probs"], {"x": x})[0]
    with normops.config(mode="fast"):
        fast = session.run(["probs"], {"x": x})[0]
    assert_same_array_bits(exact, direct(x, "exact")[0])
    assert_same_array_bits(fast, direct(x, "fast")[0])


def test_exact_results_do_not_depend_on_threads():
    x = batch(rows=2048, seed=6)
    results = [InferenceSession(transformer_block(), n_threads=n).run(None, {"x": x}) for n in (1, 2)]
    for a, b in zip(*results):
        assert_same_array_bits(a, b)


def test_concurrent_runs_of_one_session_give_the_serial_bits():
    session = InferenceSession(transformer_block())
    inputs = [batch(rows=256 + 17 * k, seed=100 + k) for k in range(6)]
    serial = [session.run(None, {"x": x}) for x in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(2):
            concurrent = list(pool.map(lambda x: session.run(None, {"x": x}), inputs * 2))
            for got, want in zip(concurrent, serial * 2):
                for g, w in zip(got, want):
                    assert_same_array_bits(g, w)


def test_concurrent_runs_in_different_flavours():
    """mode=None follows each calling thread's own normops.config."""
    session = InferenceSession(transformer_block())
    x = batch(rows=512, seed=14)
    want = {mode: direct(x, mode)[0] for mode in ("exact", "fast")}
    assert (want["exact"].view(np.uint32) != want["fast"].view(np.uint32)).any()  # the flavours are told apart

    def run(mode):
        with normops.config(mode=mode):
            return mode, session.run(["probs"], {"x": x})[0]

    with ThreadPoolExecutor(max_workers=4) as pool:
        for mode, got in pool.map(run, ["exact", "fast"] * 4):
            assert_same_array_bits(got, want[mode])


# --------------------------------------------------------------------------
# Plumbing operators: exactly ONNX Runtime's results


def _plumbing_cases():
    rng = np.random.default_rng(7)
    f = rng.standard_normal((2, 3, 4)).astype(np.float32)
    i = rng.integers(-50, 50, (2, 3, 4)).astype(np.int64)
    d = np.array([7, -7, 7, -7, 0, 9], np.int32)
    e = np.array([2, 2, -2, -2, 5, -4], np.int32)
    ints = lambda *v: np.array(v, np.int64)  # noqa: E731
    return [
        ("Identity", 13, {}, [f]),
        ("Cast", 13, {"to": T.INT32}, [f * 100]),
        ("Cast", 13, {"to": T.FLOAT16}, [f * 1000]),
        ("Cast", 19, {"to": T.UINT8}, [np.abs(i)]),
        ("Cast", 13, {"to": T.BOOL}, [np.array([0.0, -0.0, 1.0, np.nan], np.float32)]),
        ("Cast", 13, {"to": T.DOUBLE}, [np.array([True, False])]),
        ("Reshape", 14, {}, [f, ints(0, -1)]),
        ("Reshape", 14, {"allowzero": 1}, [np.zeros((0, 4), np.float32), ints(4, 0)]),
        ("Reshape", 5, {}, [f, ints(4, 0, 2)]),
        ("Shape", 13, {}, [f]),
        ("Shape", 15, {"start": 1}, [f]),
        ("Shape", 15, {"start": -2, "end": -1}, [f]),
        ("Shape", 15, {"start": 5, "end": -9}, [f]),
        ("Squeeze", 13, {}, [f[:1, :, None, :], ints(-2, 0)]),
        ("Squeeze", 13, {}, [f[:1, :, None, :]]),
        ("Squeeze", 13, {}, [f[:1, :, None, :], ints()]),
        ("Squeeze", 11, {"axes": [0]}, [f[:1]]),
        ("Unsqueeze", 13, {}, [f, ints(-1, 0)]),
        ("Unsqueeze", 11, {"axes": [1, 4]}, [f]),
        ("Transpose", 13, {}, [f]),
        ("Transpose", 13, {"perm": [1, 2, 0]}, [f]),
        ("Concat", 13, {"axis": -1}, [f, f[..., :2]]),
        ("Concat", 4, {"axis": 0}, [i, i[:1]]),
        ("Add", 14, {}, [f, f[0, :, :1]]),
        ("Sub", 14, {}, [i, i[:, :1]]),
        ("Mul", 13, {}, [f.astype(np.float16), f[1].astype(np.float16)]),
        ("Div", 14, {}, [f, f[..., ::-1]]),
        ("Div", 14, {}, [d, e]),
        ("Div", 14, {}, [d.astype(np.int8), e.astype(np.int8)]),
        ("Add", 14, {}, [np.array([120, -120, 5], np.int8), np.array([10, -10, 5], np.int8)]),  # wraps
        ("Mul", 14, {}, [np.array([2**62, 3], np.int64), np.array([4, -5], np.int64)]),
        ("Div", 7, {}, [np.float64(3.0) * f.astype(np.float64), np.array(7.0)]),
    ]


PLUMBING_CASES = _plumbing_cases()


@needs_ort
@pytest.mark.parametrize("op_type, opset, attributes, inputs", PLUMBING_CASES,
                         ids=[f"{c[0]}-{c[1]}-{k}" for k, c in enumerate(PLUMBING_CASES)])
def test_plumbing_matches_onnxruntime_exactly(op_type, opset, attributes, inputs):
    names = [f"in{k}" for k in range(len(inputs))]
    node = h.make_node(op_type, names, ["out"], **attributes)
    value_infos = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in zip(names, inputs)]
    out = unknown_output("out", attributes.get("to", T.INT64 if op_type == "Shape"
                                               else h.np_dtype_to_tensor_dtype(inputs[0].dtype)))
    if op_type in ("Reshape", "Squeeze", "Unsqueeze") and len(inputs) > 1:
        # ONNX Runtime wants shape/axes as initializers to infer the output rank
        model = make_model([node], value_infos[:1], [out], [nh.from_array(inputs[1], names[1])], opset=opset)
        feeds = {names[0]: inputs[0]}
    else:
        model = make_model([node], value_infos, [out], opset=opset)
        feeds = dict(zip(names, inputs))
    snapshots = [a.copy() for a in inputs]
    (got,) = InferenceSession(model).run(None, feeds)
    (want,) = ort_run(model, feeds)
    assert_same_array_bits(got, want)
    for a, b in zip(inputs, snapshots):
        assert_same_array_bits(a, b)


@needs_ort
def test_cast_to_bfloat16_matches_onnxruntime():
    """Rounding to bfloat16 (ties to even, overflow, NaN), seen through a cast
    back to float32 because ONNX Runtime cannot return bfloat16 arrays."""
    one = np.float32(1.0)
    x = np.array([one + np.float32(2.0 ** -8), one + np.float32(3 * 2.0 ** -8), one + np.float32(2.0 ** -8 + 2.0 ** -20),
                  -3.0e38, 3.4e38, np.inf, np.nan, -0.0, 1e-40, np.pi], np.float32)
    x = np.concatenate([x, np.random.default_rng(11).standard_normal(100).astype(np.float32)])
    model = make_model([h.make_node("Cast", ["x"], ["b"], to=T.BFLOAT16), h.make_node("Cast", ["b"], ["y"], to=T.FLOAT)],
                       [h.make_tensor_value_info("x", T.FLOAT, [x.size])], [h.make_tensor_value_info("y", T.FLOAT, [x.size])],
                       opset=13)
    (got,) = InferenceSession(model).run(None, {"x": x})
    assert_same_array_bits(got, ort_run(model, {"x": x})[0])
    assert got[0] == 1.0 and got[1] == np.float32(1 + 2.0 ** -6)  # ties to even


def test_every_plumbing_operator_is_covered():
    assert {c[0] for c in PLUMBING_CASES} | {"Constant"} == set(PLUMBING_OPERATORS)
    assert {c[2].get("to") for c in PLUMBING_CASES if c[0] == "Cast"} >= {T.INT32, T.FLOAT16, T.UINT8, T.BOOL, T.DOUBLE}


def test_constant_values():
    nodes = [h.make_node("Constant", [], ["a"], value_floats=[1.5, -2.0]),
             h.make_node("Constant", [], ["b"], value_int=3),
             h.make_node("Constant", [], ["c"], value_ints=[4, 5]),
             h.make_node("Constant", [], ["d"], value=nh.from_array(np.array([[1, 2]], np.int32)))]
    model = make_model(nodes, [], [h.make_tensor_value_info(n, t, s) for n, t, s in
                                   [("a", T.FLOAT, [2]), ("b", T.INT64, []), ("c", T.INT64, [2]), ("d", T.INT32, [1, 2])]])
    a, b, c, d = InferenceSession(model).run(None, {})
    assert_same_array_bits(a, np.array([1.5, -2.0], np.float32))
    assert_same_array_bits(b, np.array(3, np.int64))
    assert_same_array_bits(c, np.array([4, 5], np.int64))
    assert_same_array_bits(d, np.array([[1, 2]], np.int32))


@pytest.mark.parametrize("op_type, attributes, inputs, message", [
    ("Reshape", {}, [np.zeros(6, np.float32), np.array([4, -1], np.int64)], "cannot infer the -1"),
    ("Reshape", {}, [np.zeros(6, np.float32), np.array([-1, -1], np.int64)], "more than one -1"),
    ("Reshape", {}, [np.zeros(6, np.float32), np.array([2, 3], np.int32)], "1-D int64"),
    ("Squeeze", {}, [np.zeros((2, 1), np.float32), np.array([0], np.int64)], "is not 1"),
    ("Unsqueeze", {}, [np.zeros(2, np.float32), np.array([0, 0], np.int64)], "repeat an axis"),
    ("Transpose", {"perm": [0, 0]}, [np.zeros((2, 2), np.float32)], "not a permutation"),
    ("Concat", {"axis": 0}, [np.zeros((2, 2), np.float32), np.zeros((2, 3), np.float32)], "differ outside axis"),
    ("Concat", {"axis": 0}, [np.zeros(2, np.float32), np.zeros(2, np.float64)], "different dtypes"),
    ("Add", {}, [np.zeros(2, np.float32), np.zeros(3, np.float32)], "do not broadcast"),
    ("Add", {}, [np.zeros(2, np.bool_), np.zeros(2, np.bool_)], "not allowed at version 14"),
    ("Div", {}, [np.ones(2, np.int64), np.zeros(2, np.int64)], "division by zero"),
])
def test_plumbing_errors_name_the_node(op_type, attributes, inputs, message):
    names = [f"in{k}" for k in range(len(inputs))]
    value_infos = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in zip(names, inputs)]
    model = make_model([h.make_node(op_type, names, ["out"], name="the_node", **attributes)], value_infos,
                       [unknown_output("out", T.FLOAT)], opset=21)
    with pytest.raises(InvalidInputError, match=f"node 0 \\({op_type}, 'the_node'\\): {op_type}: .*{message}"):
        InferenceSession(model).run(None, dict(zip(names, inputs)))


# --------------------------------------------------------------------------
# SimplifiedLayerNormalization: served, though onnx has no schema for it


@needs_ort
def test_simplified_layer_normalization_model():
    scale = np.random.default_rng(8).standard_normal(16).astype(np.float32)
    model = make_model([h.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], axis=-1, epsilon=1e-6)],
                       [h.make_tensor_value_info("x", T.FLOAT, [5, 16])], [h.make_tensor_value_info("y", T.FLOAT, [5, 16])],
                       [nh.from_array(scale, "scale")])
    x = np.random.default_rng(9).standard_normal((5, 16)).astype(np.float32)
    (y,) = InferenceSession(model).run(None, {"x": x})
    assert_same_array_bits(y, normops.simplified_layer_normalization(x, scale, epsilon=1e-6))
    np.testing.assert_allclose(y, ort_run(model, {"x": x})[0], rtol=1e-5, atol=1e-6)
    # unsorted, behind a plumbing node: checked as a sorted copy with the node in a private domain
    model.graph.node[0].input[0] = "x1"
    model.graph.node.append(h.make_node("Identity", ["x"], ["x1"]))
    assert_same_array_bits(InferenceSession(model).run(None, {"x": x})[0], y)
    assert model.graph.node[0].domain == "" and model.graph.node[0].op_type == "SimplifiedLayerNormalization"


# --------------------------------------------------------------------------
# The Backend interface


def test_backend_prepare_run_and_run_node():
    model = transformer_block()
    x = batch(seed=10)
    want = InferenceSession(model).run(None, {"x": x})
    rep = Backend.prepare(model)
    for outputs in (rep.run([x]), rep.run({"x": x}), rep.run(x), Backend.run_model(model, [x])):
        assert len(outputs) == 2
        assert_same_array_bits(outputs[0], want[0])
        assert_same_array_bits(outputs["mean"], want[1])
    node = h.make_node("Softmax", ["x"], ["y"], axis=0)
    (y,) = ExactBackend.run_node(node, [x])
    assert_same_array_bits(y, normops.ops.softmax(x, axis=0, mode="exact"))
    (y,) = FastBackend.run_node(node, [x], opset_version=13)
    assert_same_array_bits(y, normops.ops.softmax(x, axis=0, mode="fast"))
    assert Backend.supports_device("CPU") and not Backend.supports_device("CUDA")
    with pytest.raises(UnsupportedError, match="device 'CUDA'"):
        Backend.prepare(model, "CUDA")
    with pytest.raises(InvalidInputError, match="unknown keyword argument 'threads'"):
        Backend.prepare(model, threads=2)
    with pytest.raises(InvalidInputError, match="got 2 inputs"):
        rep.run([x, x])


def test_import_normops_does_not_import_onnx():
    code = "import sys, normops; print('onnx' in sys.modules, 'normops.onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# --------------------------------------------------------------------------
# docs/onnx.md


def test_user_guide_examples(tmp_path, monkeypatch):
    """Every ```python block of docs/onnx.md, in order, in one namespace."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "onnx.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "onnx_user_guide"}
    for k, block in enumerate(blocks):
        exec(compile(block, f"docs/onnx.md block {k}", "exec"), namespace)  # noqa: S102
    assert (tmp_path / "block.onnx").is_file()


# --------------------------------------------------------------------------
# python -m normops run-model


def test_run_model_command(tmp_path, capsys):
    from normops.__main__ import main

    model_path = tmp_path / "block.onnx"
    onnx.save(transformer_block(), str(model_path))
    x = batch(seed=13)
    np.save(tmp_path / "x.npy", x)

    assert main(["run-model", str(model_path)]) == 0
    out = capsys.readouterr().out
    assert "normops serves every node" in out and "x: tensor(float) ['batch', 48]" in out

    saved = tmp_path / "out.npz"
    assert main(["run-model", str(model_path), "-i", f"x={tmp_path / 'x.npy'}", "-o", str(saved), "--mode", "fast"]) == 0
    want = InferenceSession(transformer_block(), mode="fast").run(None, {"x": x})
    with np.load(saved) as data:
        assert_same_array_bits(data["probs"], want[0])
        assert_same_array_bits(data["mean"], want[1])
    assert "probs: float32 [14, 24]" in capsys.readouterr().out

    np.save(tmp_path / "x64.npy", x.astype(np.float64))
    assert main(["run-model", str(model_path), "-i", f"x={tmp_path / 'x64.npy'}"]) == 1
    assert "'x' has dtype float64" in capsys.readouterr().err
    assert main(["run-model", str(model_path), "-i", "x"]) == 2

    unserved = make_model([h.make_node("Exp", ["x"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, [2])],
                          [h.make_tensor_value_info("y", T.FLOAT, [2])])
    onnx.save(unserved, str(tmp_path / "exp.onnx"))
    assert main(["run-model", str(tmp_path / "exp.onnx"), "--normops-only"]) == 1
    assert "Exp (domain ai.onnx, opset 17, 1 node)" in capsys.readouterr().err
    if ort is not None:  # ONNX Runtime runs it (tests/test_onnx_models.py has the rest)
        assert main(["run-model", str(tmp_path / "exp.onnx")]) == 0
        out = capsys.readouterr().out
        assert "ONNX Runtime runs every node" in out and "onnxruntime in 1 piece: 1 node (Exp)" in out


def _batch_norm_model(opset, outputs, extra_nodes=(), **attributes):
    """One BatchNormalization node over a (2, 3, 4) input, parameters as
    initializers, declaring ``outputs`` ("" for an absent one)."""
    c = 3
    nodes = [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], list(outputs), **attributes),
             *extra_nodes]
    inits = [nh.from_array(np.full(c, value, np.float32), name)
             for name, value in (("s", 1.5), ("b", 0.25), ("m", 0.5), ("v", 2.0))]
    declared = [o for o in outputs if o] + [o for n in extra_nodes for o in n.output]
    graph_outputs = [unknown_output(o, T.FLOAT) for o in declared]
    return make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, c, 4])], graph_outputs,
                      inits, opset=opset)


def test_batch_norm_statistics_outside_training_mode_are_refused_at_load():
    # BatchNormalization-15 gives running statistics only with training_mode=1
    # (ONNX: the extra outputs are invalid otherwise): the load names the node
    # and the output, before any run.
    for outputs in (["y", "rm", "rv"], ["y", "", "rv"]):
        model = _batch_norm_model(15, outputs)
        with pytest.raises(InvalidInputError) as info:
            InferenceSession(model)
        message = str(info.value)
        assert "node 0 (BatchNormalization)" in message and "training_mode=0" in message
        assert repr(outputs[1] or outputs[2]) in message
    # Y alone, absent optional outputs, and training mode load and run.
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = InferenceSession(_batch_norm_model(15, ["y", "", ""])).run(None, {"x": x})
    assert_same_array_bits(
        y, normops.batch_normalization(x, *(np.full(3, v, np.float32) for v in (1.5, 0.25, 0.5, 2.0))))
    y, rm, rv = InferenceSession(_batch_norm_model(15, ["y", "rm", "rv"], training_mode=1)).run(None, {"x": x})
    assert rm.shape == rv.shape == (3,)


def _legacy_feed(seed=0):
    return np.random.default_rng(seed).standard_normal((2, 3, 4)).astype(np.float32) * 3 + 1


def test_legacy_batch_norm_training_forms_run():
    """Before opset 14 the declared outputs (7, 9) or is_test=0 (1, 6) select
    training: the outputs are normops.run's in training mode, bit for bit,
    whichever trailing outputs are absent (empty names)."""
    x = _legacy_feed()
    params = [np.full(3, v, np.float32) for v in (1.5, 0.25, 0.5, 2.0)]
    for opset in (7, 9):
        want = normops.run("BatchNormalization", [x, *params], {"training_mode": 1}, opset=opset)
        assert len(want) == 5
        got = InferenceSession(_batch_norm_model(opset, ["y", "mean", "var", "sm", "sv"])).run(None, {"x": x})
        for a, b in zip(got, want):
            assert_same_array_bits(a, b)
        got = InferenceSession(_batch_norm_model(opset, ["y", "mean", "var", "", ""])).run(None, {"x": x})
        assert len(got) == 3
        for a, b in zip(got, want):
            assert_same_array_bits(a, b)
        # Y alone (or only empty names): inference with the given statistics
        inference = normops.batch_normalization(x, *params, opset=opset)
        for outputs in (["y"], ["y", "", "", "", ""]):
            (y,) = InferenceSession(_batch_norm_model(opset, outputs)).run(None, {"x": x})
            assert_same_array_bits(y, inference)
    # opsets 1 and 6: is_test=0, the default, trains, with Y alone too
    train6 = normops.batch_normalization(x, *params, opset=6, is_test=0, full_output=True)
    (y,) = InferenceSession(_batch_norm_model(6, ["y"])).run(None, {"x": x})
    assert_same_array_bits(y, train6[0])
    got = InferenceSession(_batch_norm_model(6, ["y", "mean", "var", "sm", "sv"])).run(None, {"x": x})
    for a, b in zip(got, train6):
        assert_same_array_bits(a, b)
    (y,) = InferenceSession(_batch_norm_model(6, ["y"], is_test=1)).run(None, {"x": x})
    assert_same_array_bits(y, normops.batch_normalization(x, *params, opset=9))
    assert not np.array_equal(y, train6[0])


@needs_ort
@pytest.mark.parametrize("opset", [7, 9])
def test_legacy_batch_norm_training_is_close_to_onnxruntime(opset):
    """ORT 1.31.1 runs the five-output form and the form with saved_mean and
    saved_var absent; saved_var is the inverse standard deviation."""
    x = _legacy_feed(seed=opset)
    for outputs in (["y", "mean", "var", "sm", "sv"], ["y", "mean", "var", "", ""]):
        model = _batch_norm_model(opset, outputs)
        got = InferenceSession(model).run(None, {"x": x})
        want = ort_run(model, {"x": x})
        assert len(got) == len(want) == len([o for o in outputs if o])
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)
    # saved_var is 1 / sqrt(batch variance + epsilon), per channel
    sv = InferenceSession(_batch_norm_model(opset, ["y", "mean", "var", "sm", "sv"])).run(["sv"], {"x": x})[0]
    plain = 1 / np.sqrt(x.astype(np.float64).var(axis=(0, 2)) + np.float32(1e-5))
    np.testing.assert_allclose(sv, plain, rtol=1e-6)


def test_refused_legacy_batch_norm_forms_are_listed_at_load():
    # spatial=0 (per-element statistics) is not served: reported at load
    # with every other unserved operator.
    exp = h.make_node("Exp", ["y"], ["e"])
    for opset, outputs in ((7, ["y"]), (7, ["y", "mean", "var", "sm", "sv"]), (6, ["y"])):
        model = _batch_norm_model(opset, outputs, [exp], spatial=0)
        with pytest.raises(UnsupportedError) as info:
            InferenceSession(model, use_onnxruntime=False)
        message = str(info.value)
        assert "2 operators" in message
        assert (f"BatchNormalization (domain ai.onnx, opset {opset}, 1 node): opset {opset}: attribute "
                "'spatial'=0") in message
        assert f"Exp (domain ai.onnx, opset {opset}, 1 node)" in message
    # ONNX allows one or five output slots before opset 14 (the checker says so)
    with pytest.raises(InvalidInputError, match="output size 3 not in allowed output sizes"):
        InferenceSession(_batch_norm_model(9, ["y", "mean", "var"]))
    # is_test=1 (inference) declaring the training outputs is invalid
    with pytest.raises(InvalidInputError, match=r"node 0 \(BatchNormalization\).*'mean'.*is_test=1"):
        InferenceSession(_batch_norm_model(6, ["y", "mean", "var", "sm", "sv"], is_test=1))
