"""Models with nodes normops does not serve: the partition into ONNX Runtime
pieces, results against ONNX Runtime alone (within its tolerance) and the
normops nodes' exact bits (each served node run alone on the session's own
intermediate values), dynamic shapes, initializers, optional outputs,
opset-dependent attributes, control flow, nodes sent to ONNX Runtime for
their input types, and the refusal without onnxruntime."""

import itertools
import random
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

import normops  # noqa: E402
from normops import InvalidInputError, UnsupportedError, _registry  # noqa: E402
from normops.onnx import InferenceSession, examples  # noqa: E402
from normops.onnx import _ort, _partition  # noqa: E402

from bits import assert_same_bits  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:  # optional
    ort = None

needs_ort = pytest.mark.skipif(ort is None, reason="onnxruntime is not installed")
DATA = Path(__file__).resolve().parent / "data"

# ONNX Runtime alone against normops + ONNX Runtime: float32 models whose
# normalisations are computed in a different order; the largest absolute
# difference measured on the example models is 1.4e-6 on outputs up to 6
# (docs/onnx.md, "Tolerance").
RTOL, ATOL = 1e-4, 1e-5


def make_model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=(), **kwargs):
    graph = h.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers), **kwargs)
    opsets = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    return h.make_model(graph, opset_imports=opsets)


def ort_run(model, feeds, output_names=None):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(output_names, feeds)


def close_to_ort(model, feeds, session=None, rtol=RTOL, atol=ATOL):
    session = session or InferenceSession(model)
    got = session.run(None, feeds)
    want = ort_run(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def runs_on(session):
    return {p.name or f"#{p.node}": p.runs_on for p in session.placement()}


def served_nodes_give_normops_bits(model, feeds, mode=None):
    """Every node that runs on normops, run alone through ``normops.run`` on
    the session's own intermediate values, gives the session's bits. The
    values are read by exposing them as graph outputs (which changes no
    placement: checked)."""
    plain = InferenceSession(model, mode=mode)
    served = [p.node for p in plain.placement() if p.runs_on == "normops"]
    assert served
    exposed = onnx.ModelProto()
    exposed.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(model)
    elem = {v.name: v.type.tensor_type.elem_type for v in list(inferred.graph.value_info) + list(model.graph.input)}
    have = {o.name for o in exposed.graph.output} | {t.name for t in model.graph.initializer}
    for i in served:
        for name in list(model.graph.node[i].input) + list(model.graph.node[i].output):
            if name and name not in have:
                have.add(name)
                value = h.make_tensor_value_info(name, elem.get(name, T.FLOAT), None)
                value.type.tensor_type.shape.SetInParent()
                exposed.graph.output.append(value)
    session = InferenceSession(exposed, mode=mode)
    assert [(p.runs_on, p.piece) for p in session.placement()] == [(p.runs_on, p.piece) for p in plain.placement()]
    values = dict(zip([o.name for o in exposed.graph.output], session.run(None, feeds)))
    values.update({t.name: nh.to_array(t) for t in model.graph.initializer})
    opsets = {e.domain or "": e.version for e in model.opset_import}
    for i in served:
        node = model.graph.node[i]
        attributes = {a.name: h.get_attribute_value(a) for a in node.attribute}
        inputs = [values[n] if n else None for n in node.input]
        want = normops.run(node.op_type, inputs, attributes, opset=opsets[node.domain or ""],
                           domain=node.domain, mode=mode)
        for name, w in zip(node.output, want):
            if name:
                assert_same_bits(values[name], w)
    # and the plain session gives the exposed one's graph outputs, bit for bit
    for g, w in zip(plain.run(None, feeds), session.run([o.name for o in model.graph.output], feeds)):
        assert_same_bits(g, w)
    return len(served)


# --------------------------------------------------------------------------
# The partition, on its own


def _paths(preds):
    """reach[i] = the nodes reachable from i (descendants)."""
    n = len(preds)
    succ = [[] for _ in range(n)]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    reach = [set() for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for s in succ[i]:
            reach[i].add(s)
            reach[i] |= reach[s]
    return reach


def _check_partition(kinds, preds):
    on_ort, piece, before = _partition.partition(kinds, preds)
    n = len(kinds)
    for i in range(n):
        assert on_ort[i] == (kinds[i] == "ort") or kinds[i] == "plumbing"
        assert (piece[i] is not None) == on_ort[i] and (before[i] is None) == on_ort[i]
    # the run order (normops' side with count b before piece b) respects every edge
    key = [(piece[i], 1) if on_ort[i] else (before[i], 0) for i in range(n)]
    for i, ps in enumerate(preds):
        for p in ps:
            if on_ort[p] and on_ort[i]:
                assert piece[p] <= piece[i]
            else:
                assert key[p] < key[i] or (key[p] == key[i] and not on_ort[i] and p < i)
    # convex: no path from a piece back into it through a node outside it
    reach = _paths(preds)
    for a in range(n):
        if not on_ort[a]:
            continue
        for m in reach[a]:
            if piece[m] != piece[a]:
                assert not any(piece[b] == piece[a] for b in reach[m]), (a, m)
    # no piece of plumbing alone, and every piece number is used
    pieces = sorted({p for p in piece if p is not None})
    assert pieces == list(range(len(pieces)))
    return on_ort, piece, before, len(pieces)


def _alternations(kinds, preds, on_ort):
    """The fewest pieces any partition with this assignment needs: the most
    runs of ONNX Runtime nodes separated by normops' side along one path."""
    best = [0] * len(kinds)  # runs along a path ending at i
    for i in range(len(kinds)):
        b = 0
        for p in preds[i]:
            if on_ort[i]:
                b = max(b, best[p] if on_ort[p] else best[p] + 1)
            else:
                b = max(b, best[p])
        best[i] = max(b, 1) if on_ort[i] else b
    return max(best, default=0)


def test_partition_of_small_graphs():
    # O -> N -> O: two pieces
    assert _check_partition(["ort", "normops", "ort"], [[], [0], [1]])[3] == 2
    # O1 -> N -> O2 and O1 -> O2: O2 cannot join O1 (its input from N is not ready)
    on_ort, piece, before, count = _check_partition(["ort", "normops", "ort"], [[], [0], [0, 1]])
    assert piece == [0, None, 1] and count == 2
    # parallel branches N -> N -> O and N -> O: one piece (nothing separates them)
    _, piece, _, count = _check_partition(["normops", "normops", "ort", "normops", "ort"],
                                          [[], [0], [1], [], [3]])
    assert count == 1 and piece[2] == piece[4] == 0
    # plumbing between two ONNX Runtime nodes joins them; between normops nodes it stays in NumPy
    on_ort, piece, _, count = _check_partition(["ort", "plumbing", "ort", "normops", "plumbing", "normops"],
                                               [[], [0], [1], [2], [3], [4]])
    assert on_ort == [True, True, True, False, False, False] and count == 1
    # plumbing read only by ONNX Runtime nodes joins the first of their pieces
    on_ort, piece, _, count = _check_partition(["normops", "plumbing", "plumbing", "ort", "normops", "ort"],
                                               [[], [0], [1], [2], [3], [2, 4]])
    assert on_ort == [False, True, True, True, False, True] and piece[1] == piece[2] == 0 and count == 2
    # plumbing after an ONNX Runtime node, read by a normops node that an
    # ONNX Runtime node waits for: in NumPy it would cost a second piece
    #   0 N -> 1 P -> 2 O -> 4 O;  1 P -> 3 N -> 4 O
    on_ort, piece, _, count = _check_partition(["normops", "plumbing", "ort", "normops", "ort"],
                                               [[], [0], [1], [1], [2, 3]])
    assert on_ort == [False, False, True, False, True] and count == 1
    # no ONNX Runtime node: everything on normops' side
    assert _check_partition(["plumbing", "normops", "plumbing"], [[], [0], [1]])[3] == 0
    with pytest.raises(ValueError, match="unknown node kind"):
        _partition.partition(["gpu"], [[]])


def test_partition_of_random_graphs_is_convex_and_minimal():
    rng = random.Random(20261206)
    for _ in range(500):
        n = rng.randint(1, 12)
        kinds = [rng.choice(["ort", "normops", "plumbing"]) for _ in range(n)]
        preds = [sorted(rng.sample(range(i), rng.randint(0, min(i, 3)))) for i in range(n)]
        on_ort, piece, before, count = _check_partition(kinds, preds)
        # as few pieces as this assignment allows, and as any placement of
        # the plumbing allows (every one tried)
        assert count == _alternations(kinds, preds, on_ort)
        flexible = [i for i, k in enumerate(kinds) if k == "plumbing"]
        best = min(
            _alternations(kinds, preds, [k == "ort" or (i in chosen) for i, k in enumerate(kinds)])
            for r in range(len(flexible) + 1) for chosen in map(set, itertools.combinations(flexible, r)))
        assert count == best, (kinds, preds)


# --------------------------------------------------------------------------
# The example models


@needs_ort
def test_transformer_block_placement_and_results():
    model = examples.transformer_block(d_model=32, heads=4, ffn=64)
    session = InferenceSession(model)
    placement = session.placement()
    where = runs_on(session)
    assert {name for name, r in where.items() if r == "normops"} == {"ln1", "softmax", "ln2", "gelu"}
    assert all(where[f"{k}_proj"] == "onnxruntime" for k in "qkvo")
    assert max(p.piece for p in placement if p.piece is not None) == 3  # four pieces: the fewest here
    assert {p.reason for p in placement if p.op_type == "MatMul"} == {"not served"}
    assert session.get_providers() == ["normops", "CPUExecutionProvider"]
    for batch, seq in ((1, 7), (3, 16), (2, 1)):  # dynamic shapes
        close_to_ort(model, {"x": examples.transformer_input(batch, seq, 32)}, session)


@needs_ort
@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_transformer_block_normops_nodes_are_exact(mode):
    model = examples.transformer_block(d_model=32, heads=4, ffn=64, seed=3)
    assert served_nodes_give_normops_bits(model, {"x": examples.transformer_input(2, 9, 32, seed=4)}, mode) == 4


@needs_ort
def test_conv_block_placement_results_and_bits():
    model = examples.conv_block(channels=16, groups=4)
    session = InferenceSession(model)
    where = runs_on(session)
    assert where["gn1"] == where["gn2"] == where["sigmoid1"] == where["sigmoid2"] == "normops"
    assert where["conv1"] == where["conv2"] == "onnxruntime"
    # the Mul of two normops results that only conv2 reads joins conv2's
    # piece; the last one and the residual Add feed the output: NumPy
    assert where["silu1"] == "onnxruntime"
    assert where["silu2"] == where["residual"] == "numpy"
    assert max(p.piece for p in session.placement() if p.piece is not None) == 1
    for batch, size in ((1, 8), (2, 13)):
        x = examples.conv_input(batch, 16, size)
        close_to_ort(model, {"x": x}, session)
    assert served_nodes_give_normops_bits(model, {"x": examples.conv_input(2, 16, 10, seed=5)}) == 4


@needs_ort
def test_concurrent_runs_of_a_mixed_session():
    model = examples.transformer_block(d_model=32, heads=2, ffn=64, seed=6)
    session = InferenceSession(model)
    inputs = [examples.transformer_input(1 + k % 3, 5 + k, 32, seed=k) for k in range(6)]
    serial = [session.run(None, {"x": x})[0] for x in inputs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for got, want in zip(pool.map(lambda x: session.run(None, {"x": x})[0], inputs * 2), serial * 2):
            assert_same_bits(got, want)


# --------------------------------------------------------------------------
# Values: initializers, optional outputs, several outputs of a piece


@needs_ort
def test_optional_outputs_overridable_initializers_and_constants():
    w = np.random.default_rng(1).standard_normal((6, 6)).astype(np.float32)
    nodes = [
        h.make_node("MatMul", ["x", "w"], ["a"]),                                   # ORT
        h.make_node("Constant", [], ["two"], value_float=2.0),                      # folded at load
        h.make_node("Mul", ["a", "two"], ["a2"]),                                   # joins the piece
        h.make_node("LayerNormalization", ["a2", "s"], ["ln", "", "inv"], axis=-1),  # normops, an absent output
        h.make_node("Exp", ["ln"], ["e"]),                                          # ORT
        h.make_node("Relu", ["a"], ["r"]),                                          # ORT, the first piece
        h.make_node("Softmax", ["e"], ["sm"], axis=-1),
    ]
    s = np.linspace(0.5, 1.5, 6, dtype=np.float32)
    model = make_model(
        nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n", 6]), h.make_tensor_value_info("s", T.FLOAT, [6])],
        [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("sm", "r", "inv", "a2")],
        [nh.from_array(w, "w"), nh.from_array(s, "s")])
    for value in model.graph.output:
        value.type.tensor_type.shape.SetInParent()
    session = InferenceSession(model)
    assert [a.name for a in session.get_overridable_initializers()] == ["s"]
    x = np.random.default_rng(2).standard_normal((5, 6)).astype(np.float32)
    close_to_ort(model, {"x": x}, session)
    other = s[::-1].copy()
    got = session.run(None, {"x": x, "s": other})
    want = ort_run(model, {"x": x, "s": other})
    for g, wv in zip(got, want):
        np.testing.assert_allclose(g, wv, rtol=RTOL, atol=ATOL)
    # only some outputs: the pieces run for what is asked, with the same bits
    full = session.run(None, {"x": x})
    (r,) = session.run(["r"], {"x": x})
    assert_same_bits(r, full[1])
    inv, a2 = session.run(["inv", "a2"], {"x": x})
    assert_same_bits(inv, full[2])
    assert_same_bits(a2, full[3])


@needs_ort
def test_outputs_of_a_piece_are_owned_and_feeds_untouched():
    nodes = [h.make_node("Identity", ["x"], ["i"]), h.make_node("Exp", ["i"], ["e"]),
             h.make_node("Softmax", ["e"], ["y"])]
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                       [h.make_tensor_value_info("y", T.FLOAT, [2, 3]), h.make_tensor_value_info("i", T.FLOAT, [2, 3])])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = x.copy()
    y, i = InferenceSession(model).run(None, {"x": x})
    assert not np.shares_memory(i, x)
    i[...] = 7
    assert_same_bits(x, before)
    np.testing.assert_allclose(y, normops.ops.softmax(np.exp(before)), rtol=1e-6)


# --------------------------------------------------------------------------
# Opset-dependent attributes and control flow


@needs_ort
@pytest.mark.parametrize("opset", [11, 13, 18])
def test_opset_dependent_attributes_on_both_sides(opset):
    # Softmax's axis (coerced to 2-D before 13) on normops; Split's sizes
    # and ReduceSum's axes (attributes, then inputs) on ONNX Runtime.
    split_sizes = np.array([2, 3], np.int64)
    inits = []
    if opset >= 13:
        split = h.make_node("Split", ["x", "sizes"], ["p", "q"], axis=1)
        reduce = h.make_node("ReduceSum", ["sm", "axes"], ["r"], keepdims=1)
        inits = [nh.from_array(split_sizes, "sizes"), nh.from_array(np.array([1], np.int64), "axes")]
    else:
        split = h.make_node("Split", ["x"], ["p", "q"], axis=1, split=[2, 3])
        reduce = h.make_node("ReduceSum", ["sm"], ["r"], axes=[1], keepdims=1)
    nodes = [split, h.make_node("Softmax", ["q"], ["sm"], axis=1), reduce, h.make_node("Max", ["r", "p"], ["y"])]
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [4, 5, 3])],
                       [h.make_tensor_value_info("y", T.FLOAT, None)], inits, opset=opset)
    model.graph.output[0].type.tensor_type.shape.SetInParent()
    session = InferenceSession(model)
    assert runs_on(session)["#1"] == "normops"
    x = np.random.default_rng(opset).standard_normal((4, 5, 3)).astype(np.float32)
    close_to_ort(model, {"x": x}, session)
    served_nodes_give_normops_bits(model, {"x": x})


@needs_ort
def test_if_node_reading_a_normops_value_runs_on_onnxruntime():
    # The branches read 'sm', which a normops node computes: the If node's
    # piece runs after it (outer-scope values count as inputs).
    then = h.make_graph([h.make_node("Mul", ["sm", "sm"], ["out"])], "then", [],
                        [h.make_tensor_value_info("out", T.FLOAT, None)])
    other = h.make_graph([h.make_node("Neg", ["sm"], ["out"])], "else", [],
                         [h.make_tensor_value_info("out", T.FLOAT, None)])
    nodes = [h.make_node("If", ["c"], ["z"], then_branch=then, else_branch=other),
             h.make_node("Softmax", ["x"], ["sm"], axis=-1),
             h.make_node("Where", ["c", "z", "x"], ["y"])]  # unsorted on purpose
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [2, 3]),
                               h.make_tensor_value_info("c", T.BOOL, [])],
                       [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], opset=17)
    session = InferenceSession(model)
    assert [(p.op_type, p.runs_on) for p in session.placement()] == [
        ("If", "onnxruntime"), ("Softmax", "normops"), ("Where", "onnxruntime")]
    assert "subgraph" in session.placement()[0].reason
    x = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
    sm = normops.ops.softmax(x)
    for c in (True, False):
        (y,) = session.run(None, {"x": x, "c": np.array(c)})
        np.testing.assert_allclose(y, sm * sm if c else x, rtol=1e-6)  # Where(c, z, x)
        (w,) = ort_run(_sorted(model), {"x": x, "c": np.array(c)})
        np.testing.assert_allclose(y, w, rtol=RTOL, atol=ATOL)


def _sorted(model):
    """``model`` with its nodes in a topological order (ONNX Runtime wants it)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    nodes = list(copy.graph.node)
    del copy.graph.node[:]
    copy.graph.node.extend([nodes[1], nodes[0], nodes[2]])
    return copy


@needs_ort
def test_model_local_functions_and_contrib_operators_run_on_onnxruntime():
    square = h.make_function("custom", "Square", ["a"], ["b"], [h.make_node("Mul", ["a", "a"], ["b"])],
                             [h.make_opsetid("", 17)])
    nodes = [h.make_node("Square", ["x"], ["sq"], domain="custom"),
             h.make_node("LayerNormalization", ["sq", "s"], ["ln"], axis=-1),
             h.make_node("FusedMatMul", ["ln", "w"], ["y"], domain="com.microsoft", alpha=0.5)]
    w = np.random.default_rng(4).standard_normal((4, 4)).astype(np.float32)
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, [3, 4])],
                       [h.make_tensor_value_info("y", T.FLOAT, [3, 4])],
                       [nh.from_array(np.ones(4, np.float32), "s"), nh.from_array(w, "w")],
                       extra_opsets=[("custom", 1), ("com.microsoft", 1)])
    model.functions.append(square)
    session = InferenceSession(model)
    assert [p.runs_on for p in session.placement()] == ["onnxruntime", "normops", "onnxruntime"]
    x = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    close_to_ort(model, {"x": x}, session)


# --------------------------------------------------------------------------
# Types: a node normops serves for some inputs only


def _reduce_max_model(elem_type, shape=(3, 4)):
    nodes = [h.make_node("Greater", ["x", "t"], ["b"]) if elem_type == T.BOOL else h.make_node("Identity", ["x"], ["b"]),
             h.make_node("ReduceMax", ["b"], ["m"], keepdims=0)]
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
                       [h.make_tensor_value_info("m", elem_type, None)],
                       [nh.from_array(np.array(0.5, np.float32), "t")], opset=20)
    model.graph.output[0].type.tensor_type.shape.SetInParent()
    return model


@needs_ort
def test_a_type_normops_does_not_serve_goes_to_onnxruntime_at_load():
    x = np.random.default_rng(6).standard_normal((3, 4)).astype(np.float32)
    model = _reduce_max_model(T.BOOL)
    session = InferenceSession(model)
    (reduce,) = [p for p in session.placement() if p.op_type == "ReduceMax"]
    assert reduce.runs_on == "onnxruntime" and "tensor(bool)" in reduce.reason and "§15.4" in reduce.reason
    (m,) = session.run(None, {"x": x})
    assert m.dtype == np.bool_ and m == (x > 0.5).any()
    assert_same_bits(m, ort_run(model, {"x": x})[0])
    # the same node on float32 stays on normops
    session = InferenceSession(_reduce_max_model(T.FLOAT))
    assert [p.runs_on for p in session.placement()] == ["numpy", "normops"]
    assert_same_bits(session.run(None, {"x": x})[0], normops.ops.reduce_max(x, keepdims=0))


@needs_ort
def test_types_known_only_at_run_time_fall_back_per_call():
    # x has no element type: each run decides. float32 runs on normops;
    # bool, which ReduceMax-20 allows and normops does not serve, runs the
    # node on ONNX Runtime for that call; the piece after it is made for
    # each combination of input types.
    nodes = [h.make_node("ReduceMax", ["x"], ["m"], axes=None, keepdims=0),
             h.make_node("Identity", ["m"], ["m2"]), h.make_node("Size", ["m2"], ["n"])]
    model = make_model(nodes, [h.make_tensor_value_info("x", T.UNDEFINED, [3, 4])],
                       [h.make_tensor_value_info("m", T.UNDEFINED, None), h.make_tensor_value_info("n", T.INT64, None)],
                       opset=20)
    for value in model.graph.output:
        value.type.tensor_type.shape.SetInParent()
    session = InferenceSession(model)
    (reduce, identity, size) = session.placement()
    assert reduce.runs_on == "normops" and "unknown at load" in reduce.reason
    assert identity.runs_on == size.runs_on == "onnxruntime"  # only Size reads the Identity
    x = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    m, n = session.run(None, {"x": x})
    assert_same_bits(m, normops.ops.reduce_max(x, keepdims=0))
    assert n == 1
    b = x > 0
    m, n = session.run(None, {"x": b})
    assert m.dtype == np.bool_ and m == b.any() and n == 1
    m, n = session.run(None, {"x": x.astype(np.float64)})
    assert_same_bits(m, normops.ops.reduce_max(x.astype(np.float64), keepdims=0))
    # a type neither normops nor ONNX Runtime takes: normops' own error
    with pytest.raises(InvalidInputError, match=r"node 0 \(ReduceMax\): ReduceMax: .*complex"):
        session.run(None, {"x": x.astype(np.complex64)})


def test_the_types_normops_refuses_are_the_ones_the_session_sends_away():
    """For every served operator and version, every type ONNX allows for its
    first input is served, except those of _TYPES_NOT_SERVED, which raise
    UnsupportedError: the rule the session decides placement by."""
    from normops_tools.compare_ort import GENERATORS, Gen
    from normops.onnx._session import _TYPES_NOT_SERVED, _type_string

    generators = {(g.domain, g.op_type): g for g in
                  (GENERATORS.values() if isinstance(GENERATORS, dict) else GENERATORS)}
    refused = {_type_string(t)[len("tensor("):-1] for t in _TYPES_NOT_SERVED}
    names = {"float": "float32", "double": "float64"}
    checked = 0
    for domain, op_type in _registry.served_operators():
        op = _registry.lookup(op_type, domain)
        gen = generators[(domain, op_type)]
        for version in op.versions:
            try:
                schema = onnx.defs.get_schema(op_type, version, domain)
            except onnx.defs.SchemaError:
                continue  # no ONNX schema (SimplifiedLayerNormalization, BiasGelu): nothing is sent away
            constraint = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
            allowed = constraint.get(schema.inputs[0].type_str, [schema.inputs[0].type_str])
            for type_str in allowed:
                name = type_str[len("tensor("):-1]
                try:
                    dtype = np.dtype(names.get(name, name))
                except TypeError:
                    if name == "bfloat16":
                        continue  # ml_dtypes; covered by the float cases of the operator tests
                    raise
                inputs, attributes = gen.make(Gen(np.random.default_rng(0), False), version, np.dtype(np.float32))
                same_type = op_type in ("LayerNormalization", "GroupNormalization", "InstanceNormalization",
                                        "BatchNormalization")
                inputs = [x if x is None or (k and not same_type) else x.astype(dtype) for k, x in enumerate(inputs)]
                if name in refused:
                    with pytest.raises(UnsupportedError):
                        normops.run(op_type, inputs, attributes, opset=version, domain=domain)
                else:
                    normops.run(op_type, inputs, attributes, opset=version, domain=domain)
                checked += 1
    assert checked > 200


# --------------------------------------------------------------------------
# Without ONNX Runtime; errors


def test_without_onnxruntime_the_model_is_refused_naming_the_nodes(monkeypatch):
    monkeypatch.setattr(_ort, "available", lambda: False)
    model = examples.conv_block(channels=8, groups=2)
    with pytest.raises(UnsupportedError) as info:
        InferenceSession(model)
    message = str(info.value)
    assert "Conv (domain ai.onnx, opset 21, 2 nodes): not served" in message
    assert "node 0 (Conv, 'conv1'), node 4 (Conv, 'conv2')" in message
    assert "pip install 'normops[ort]'" in message
    # a model normops serves in full does not need it
    x = np.ones((2, 8), np.float32)
    model = make_model([h.make_node("Softmax", ["x"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, [2, 8])],
                       [h.make_tensor_value_info("y", T.FLOAT, [2, 8])])
    session = InferenceSession(model)
    assert session.get_providers() == ["normops"]
    assert [(p.runs_on, p.piece, p.reason) for p in session.placement()] == [("normops", None, "")]
    assert_same_bits(session.run(None, {"x": x})[0], normops.ops.softmax(x))
    # nor is it imported for one
    code = ("import sys, onnx; from onnx import helper as h, TensorProto as T; from normops.onnx import InferenceSession;"
            "m = h.make_model(h.make_graph([h.make_node('Softmax', ['x'], ['y'])], 'g',"
            "[h.make_tensor_value_info('x', T.FLOAT, [2])], [h.make_tensor_value_info('y', T.FLOAT, [2])]));"
            "InferenceSession(m); print('onnxruntime' in sys.modules)")
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]


def test_a_bool_input_without_onnxruntime_is_refused_at_load(monkeypatch):
    monkeypatch.setattr(_ort, "available", lambda: False)
    model = make_model([h.make_node("ReduceMax", ["b"], ["m"], keepdims=0)],
                       [h.make_tensor_value_info("b", T.BOOL, [3])], [h.make_tensor_value_info("m", T.BOOL, [])],
                       opset=20)
    with pytest.raises(UnsupportedError, match=r"ReduceMax \(domain ai.onnx, opset 20, 1 node\): input 'data' is "
                                               r"tensor\(bool\).*\n.*pip install 'normops\[ort\]'"):
        InferenceSession(model)


@needs_ort
def test_errors_of_pieces_name_the_piece():
    nodes = [h.make_node("MatMul", ["x", "w"], ["a"], name="mm"), h.make_node("Softmax", ["a"], ["y"])]
    model = make_model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n", "k"]),
                               h.make_tensor_value_info("w", T.FLOAT, ["k", 3])],
                       [h.make_tensor_value_info("y", T.FLOAT, ["n", 3])])
    session = InferenceSession(model)
    with pytest.raises(InvalidInputError, match=r"InferenceSession: ONNX Runtime piece 0 \(1 node: node 0 "
                                                r"\(MatMul, 'mm'\)\): ONNX Runtime: .*MatMul"):
        session.run(None, {"x": np.ones((2, 4), np.float32), "w": np.ones((5, 3), np.float32)})
    unknown = make_model([h.make_node("FancyNorm", ["x"], ["y"], domain="com.example")],
                         [h.make_tensor_value_info("x", T.FLOAT, [2])], [h.make_tensor_value_info("y", T.FLOAT, [2])],
                         extra_opsets=[("com.example", 1)])
    with pytest.raises(UnsupportedError, match=r"ONNX Runtime piece 0 \(1 node: node 0 \(FancyNorm\)\): "
                                               r"ONNX Runtime cannot load it: .*FancyNorm"):
        InferenceSession(unknown)
    with pytest.raises(InvalidInputError, match="'use_onnxruntime' must be True or False"):
        InferenceSession(model, use_onnxruntime="yes")


@needs_ort
def test_threads_and_session_options_reach_onnxruntime(monkeypatch):
    made = []
    original = _ort.make_session_factory

    def spy(module, options, providers=("CPUExecutionProvider",)):
        made.append(options)
        return original(module, options, providers)

    monkeypatch.setattr(_ort, "make_session_factory", spy)
    model = examples.conv_block(channels=8, groups=2)
    InferenceSession(model, n_threads=1)
    assert made[-1].intra_op_num_threads == 1
    assert made[-1].get_session_config_entry("session.intra_op.allow_spinning") == "0"
    mine = ort.SessionOptions()
    mine.intra_op_num_threads = 2
    session = InferenceSession(model, sess_options=mine)
    assert made[-1] is mine
    close_to_ort(model, {"x": examples.conv_input(1, 8, 6)}, session)


# --------------------------------------------------------------------------
# A model made by a real exporter (tools/export_torch_model.py)


@needs_ort
def test_torch_exported_model():
    model = onnx.load(str(DATA / "torch_small_convnet.onnx"))
    session = InferenceSession(model)
    where = [p.runs_on for p in session.placement()]
    ops = {p.op_type for p in session.placement() if p.runs_on == "normops"}
    assert "onnxruntime" in where and ops >= {"LayerNormalization", "Softmax"}
    assert ops & {"GroupNormalization", "InstanceNormalization"}
    with np.load(DATA / "torch_small_convnet_io.npz") as io:
        x, torch_out = io["x"], io["y"]
    got = close_to_ort(model, {session.get_inputs()[0].name: x}, session)
    np.testing.assert_allclose(got[0], torch_out, rtol=RTOL, atol=ATOL)
    served_nodes_give_normops_bits(model, {session.get_inputs()[0].name: x})


def test_torch_export_script_reproduces_the_committed_model(tmp_path):
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    try:
        import export_torch_model
    finally:
        sys.path.pop(0)
    path, io_path = export_torch_model.export(tmp_path)
    fresh = onnx.load(str(path))
    committed = onnx.load(str(DATA / "torch_small_convnet.onnx"))
    assert [n.op_type for n in fresh.graph.node] == [n.op_type for n in committed.graph.node]
    with np.load(io_path) as a, np.load(DATA / "torch_small_convnet_io.npz") as b:
        assert_same_bits(a["x"], b["x"])
        np.testing.assert_allclose(a["y"], b["y"], rtol=1e-5, atol=1e-6)
    assert torch.__version__


# --------------------------------------------------------------------------
# The command line and the backend


@needs_ort
def test_run_model_shows_the_placement_and_runs_mixed_models(tmp_path, capsys):
    from normops.__main__ import main

    model = examples.conv_block(channels=8, groups=2)
    path = tmp_path / "conv.onnx"
    onnx.save(model, str(path))
    assert main(["run-model", str(path)]) == 0
    out = capsys.readouterr().out
    assert "normops runs some nodes, ONNX Runtime runs the others" in out
    assert "normops: 4 nodes (GroupNormalization x2, Sigmoid x2)" in out
    assert "onnxruntime in 2 pieces: 3 nodes (Conv x2, Mul)" in out
    assert main(["run-model", str(path), "--placement"]) == 0
    out = capsys.readouterr().out
    assert "     0  onnxruntime      0  Conv ('conv1'): not served" in out
    assert "     1  normops             GroupNormalization ('gn1')" in out
    x = examples.conv_input(1, 8, 5)
    np.save(tmp_path / "x.npy", x)
    assert main(["run-model", str(path), "-i", f"x={tmp_path / 'x.npy'}", "-o", str(tmp_path / "y.npz")]) == 0
    with np.load(tmp_path / "y.npz") as saved:
        assert_same_bits(saved["y"], InferenceSession(model).run(None, {"x": x})[0])
    assert main(["run-model", str(path), "--normops-only"]) == 1
    assert "use_onnxruntime=False" in capsys.readouterr().err


@needs_ort
def test_backend_hands_nodes_to_onnxruntime_only_when_asked():
    from normops.onnx import Backend, ExactBackend

    model = examples.conv_block(channels=8, groups=2)
    with pytest.raises(UnsupportedError, match="Conv"):
        ExactBackend.prepare(model)
    rep = Backend.prepare(model, use_onnxruntime=True)
    x = examples.conv_input(1, 8, 5)
    assert_same_bits(rep.run([x])[0], InferenceSession(model).run(None, {"x": x})[0])
