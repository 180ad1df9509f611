"""Every served operator gives the same bits and the same errors through
each entry point: the named function (``normops.ops``), ``normops.run``, an
ONNX ``InferenceSession`` of one node and, where one mirrors it, the
NumPy/SciPy-style function. The routes differ (direct kernel calls for
plain arrays, the validated path otherwise), so the cases include plain
arrays, arrays the direct routes do not take, both flavours and bad input.
"""
import re

import numpy as np
import pytest

import normops
from normops import _registry

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from normops.onnx import InferenceSession  # noqa: E402

from normops_tools.cases import GENERATORS, make_cases  # noqa: E402

from bits import bits_key  # noqa: E402

RNG = np.random.default_rng(18)


def _x(shape, dtype=np.float32, positive=False):
    x = RNG.standard_normal(shape).astype(dtype)
    return np.abs(x) + dtype(0.5) if positive else x


def _cases():
    """op_type -> list of (inputs, attributes), inputs in ONNX order: the
    compare-ort generators' cases (the one registry of cases) at the newest
    version, in float32, some with special values."""
    cases = {}
    for domain, op_type in _registry.served_operators():
        newest = _registry.lookup(op_type, domain).versions[-1]
        made = make_cases(GENERATORS[(domain, op_type)], 18, 3, versions=(newest,), dtypes=("float32",))
        cases[op_type] = [(case.inputs, case.attributes) for case in made]
    return cases


CASES = _cases()
SERVED = _registry.served_operators()
DOMAIN = {op_type: domain for domain, op_type in SERVED}


def test_every_operator_has_cases():
    assert sorted(CASES) == sorted(op_type for _, op_type in SERVED)


def _snake(op_type):
    """LayerNormalization -> layer_normalization, RMSNormalization -> rms_normalization."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", op_type).lower()


def test_snake_case_names():
    assert [_snake(n) for n in ("RMSNormalization", "ReduceL1", "ArgMax", "LpNormalization")] == [
        "rms_normalization", "reduce_l1", "arg_max", "lp_normalization"]


def _named(op_type):
    return getattr(normops.ops, _snake(op_type))


def _value(name, dtype, shape):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)


def _session(op_type, inputs, attributes, output_dtypes, mode):
    """A one-node model of the call (every input fed) and its feeds."""
    domain = DOMAIN[op_type]
    names = [f"in{k}" for k in range(len(inputs))]
    outputs = [f"out{k}" for k in range(len(output_dtypes))]
    node = helper.make_node(op_type, names, outputs, domain=domain or None, **attributes)
    graph = helper.make_graph(
        [node], "one", [_value(n, a.dtype, a.shape) for n, a in zip(names, inputs)],
        [_value(n, dtype, None) for n, dtype in zip(outputs, output_dtypes)])
    for value in graph.output:
        value.type.tensor_type.shape.SetInParent()  # onnx.checker wants the field
    opsets = [helper.make_opsetid("", min(normops.MAX_OPSET, onnx.defs.onnx_opset_version()))]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    return InferenceSession(model, mode=mode), dict(zip(names, inputs))


def _all_routes(op_type, inputs, attributes, mode):
    """The outputs of every route, as lists of arrays."""
    domain = DOMAIN[op_type]
    run = normops.run(op_type, inputs, attributes, domain=domain, mode=mode)
    named = _named(op_type)(*inputs, **attributes, mode=mode, full_output=True)
    named_first = _named(op_type)(*inputs, **attributes, mode=mode)
    session, feeds = _session(op_type, inputs, attributes, [y.dtype for y in run], mode)
    return {"run": list(run), "named": list(named), "named first": [named_first],
            "session": session.run(None, feeds)}


@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("op_type", sorted(CASES))
def test_same_bits_through_every_route(op_type, mode):
    for inputs, attributes in CASES[op_type]:
        variants = [inputs]
        # a float64 copy and a non-contiguous one take other routes
        variants.append([a.astype(np.float64) if a.dtype == np.float32 else a for a in inputs])
        variants.append([np.asfortranarray(inputs[0])] + inputs[1:])
        for args in variants:
            routes = _all_routes(op_type, args, attributes, mode)
            want = [bits_key(y) for y in routes["run"]]
            for route, outputs in routes.items():
                got = [bits_key(y) for y in outputs]
                n = len(got)
                assert got == want[:n], (op_type, attributes, route)
            assert len(routes["named"]) == len(want)


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_run_and_sessions_take_the_operators_one_straight_route(op_type, monkeypatch):
    """Every operator has one straight route (its OpDef's direct hook),
    which normops.run keeps per attribute set and ONNX sessions hold per
    node; a plain float32 call goes through it without the validated path,
    and gives the validated path's bits."""
    domain = DOMAIN[op_type]
    op = _registry.lookup(op_type, domain)
    assert op.direct is not None
    validated = []
    real_call = op.call
    monkeypatch.setattr(op, "call", lambda *args, **kwargs: validated.append(1) or real_call(*args, **kwargs))
    straight = 0
    for inputs, attributes in CASES[op_type]:
        for n_threads in (1, 3):
            del validated[:]
            got = normops.run(op_type, inputs, attributes, domain=domain, mode="exact", n_threads=n_threads)
            straight += not validated
            want = real_call(list(inputs) + [None] * (len(op.inputs) - len(inputs)),
                             op.fill_attributes(op.versions[-1], attributes), None, "exact", n_threads)
            assert [bits_key(y) for y in got] == [bits_key(y) for y in want], (op_type, attributes, n_threads)
        session, feeds = _session(op_type, inputs, attributes, [y.dtype for y in got], "exact")
        del validated[:]
        assert [bits_key(y) for y in session.run(None, feeds)] == [bits_key(y) for y in got]
        straight += not validated
    assert straight, f"{op_type}: no call took the straight route"


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_run_with_both_settings_given_matches_the_configured_call(op_type):
    """normops.run and some named functions take a shorter way when mode
    and n_threads are both given and valid by type; the configured call
    goes another way."""
    domain = DOMAIN[op_type]
    for inputs, attributes in CASES[op_type]:
        for mode in ("exact", "fast"):
            for n_threads in (1, 3):
                got = normops.run(op_type, inputs, attributes, domain=domain, mode=mode, n_threads=n_threads)
                named = _named(op_type)(*inputs, **attributes, mode=mode, n_threads=n_threads)
                with normops.config(mode=mode, n_threads=n_threads):
                    want = normops.run(op_type, inputs, attributes, domain=domain)
                    named_want = _named(op_type)(*inputs, **attributes)
                assert [bits_key(y) for y in got] == [bits_key(y) for y in want], (op_type, mode, n_threads)
                assert bits_key(named) == bits_key(named_want) == bits_key(want[0]), (op_type, mode, n_threads)


@pytest.mark.parametrize("mode, n_threads, message", [
    (np.array(["exact", "fast"]), 1, "'mode' must be"),
    (b"fast", 1, "'mode' must be"),
    ("Fast", 2, "'mode' must be"),
    ("exact", 0, "n_threads"),
    ("exact", True, "n_threads"),
    ("fast", 2.0, "n_threads"),
    ("exact", 10 ** 6, "n_threads"),
])
@pytest.mark.parametrize("op_type", sorted(CASES))
def test_run_refuses_bad_settings_of_any_type(op_type, mode, n_threads, message):
    inputs, attributes = CASES[op_type][0]
    x = inputs[0].copy()
    with pytest.raises(normops.InvalidInputError, match=message) as info:
        normops.run(op_type, inputs, attributes, domain=DOMAIN[op_type], mode=mode, n_threads=n_threads)
    assert str(info.value).startswith(op_type)
    with pytest.raises(normops.InvalidInputError, match=message):
        _named(op_type)(*inputs, **attributes, mode=mode, n_threads=n_threads)
    assert bits_key(inputs[0]) == bits_key(x)


def _error(call):
    with pytest.raises((normops.InvalidInputError, normops.UnsupportedError)) as info:
        call()
    return info.type, str(info.value)


@pytest.mark.parametrize("op_type", sorted(CASES))
def test_same_errors_through_every_route(op_type):
    inputs, attributes = CASES[op_type][0]
    bad_inputs = [inputs[0].astype(np.complex64)] + inputs[1:]
    bad = [(bad_inputs, attributes)]
    if "axis" in _registry.lookup(op_type, DOMAIN[op_type]).defaults(
            _registry.lookup(op_type, DOMAIN[op_type]).versions[-1]):
        bad.append((inputs, dict(attributes, axis=7)))
    for args, attrs in bad:
        domain = DOMAIN[op_type]
        want = _error(lambda: normops.run(op_type, args, attrs, domain=domain))
        assert _error(lambda: _named(op_type)(*args, **attrs)) == want
        assert _error(lambda: _named(op_type)(*args, **attrs, full_output=True)) == want
        session, feeds = _session(op_type, args, attrs, [args[0].dtype], None)
        kind, message = _error(lambda: session.run(None, feeds))
        assert kind is want[0]
        assert message.startswith("InferenceSession: node 0 (") and message.endswith(want[1])


def test_run_refuses_what_the_named_functions_refuse():
    x = _x((4, 8))
    with pytest.raises(normops.InvalidInputError, match="unknown attribute 'axes'"):
        normops.run("Softmax", [x], {"axes": 1})
    with pytest.raises(normops.InvalidInputError, match="takes at most 1 inputs"):
        normops.run("Softmax", [x, x])
    with pytest.raises(normops.InvalidInputError, match="input 'Scale' is required"):
        normops.run("LayerNormalization", (x, None))
    with pytest.raises(normops.InvalidInputError, match="must be a list or tuple"):
        normops.run("Softmax", {"input": x})
    with pytest.raises(normops.InvalidInputError, match="'opset' must be an integer"):
        normops.run("Softmax", [x], opset=True)
    with pytest.raises(normops.InvalidInputError, match="'mode' must be"):
        normops.run("Softmax", [x], mode="slow")
    with pytest.raises(normops.InvalidInputError, match="n_threads"):
        normops.run("Sigmoid", [x], n_threads=0)
    with pytest.raises(normops.UnsupportedError, match="not served"):
        normops.run("Softmax", [x], domain="com.example")


@pytest.mark.parametrize("op_type, good, bad, message", [
    ("LayerNormalization", {"axis": -1}, {"axis": -1.0}, "'axis' must be an integer"),
    ("Softmax", {"axis": 1}, {"axis": True}, "'axis' must be an integer"),
    ("CumSum", {"reverse": 1}, {"reverse": 1.0}, "'reverse'"),
    ("ArgMax", {"axis": 1, "keepdims": 0}, {"axis": 1, "keepdims": False}, "'keepdims'"),
])
def test_run_refuses_an_equal_value_of_a_wrong_type_after_the_valid_one(op_type, good, bad, message):
    # run keeps each attribute set's straight route; -1.0 == -1 and True ==
    # 1 in Python, so the kept set must not stand for them: they are refused
    # as when they come first, at every call
    x = _x((4, 8))
    inputs = {"LayerNormalization": [x, _x(8)], "CumSum": [x, np.array(1, np.int64)]}.get(op_type, [x])
    want = normops.run(op_type, inputs, good, mode="exact", n_threads=1)
    for _ in range(2):
        got = normops.run(op_type, inputs, dict(good), mode="exact", n_threads=1)  # the kept route
        assert [bits_key(a) for a in got] == [bits_key(a) for a in want]
        for settings in ({}, {"mode": "exact", "n_threads": 1}):
            with pytest.raises(normops.InvalidInputError, match=message) as info:
                normops.run(op_type, inputs, bad, **settings)
            assert str(info.value).startswith(op_type)


def test_run_keeps_attribute_lists_strictly():
    # axes as an attribute (ReduceMax before opset 18): a kept list of ints
    # is matched element by element with the types, and a change to the
    # caller's list after the call does not change what was kept
    x = _x((4, 8))
    axes = [1]
    want = normops.run("ReduceMax", [x], {"axes": axes}, opset=13, mode="exact", n_threads=1)
    assert [bits_key(a) for a in want] == [bits_key(np.max(x, axis=1, keepdims=True))]
    axes[0] = 0  # the same list object, now another set
    got = normops.run("ReduceMax", [x], {"axes": axes}, opset=13, mode="exact", n_threads=1)
    assert [bits_key(a) for a in got] == [bits_key(np.max(x, axis=0, keepdims=True))]
    for bad in ([1.0], [True], (1.0,)):
        with pytest.raises(normops.InvalidInputError, match="ReduceMax: .*axes"):
            normops.run("ReduceMax", [x], {"axes": bad}, opset=13, mode="exact", n_threads=1)


def test_run_at_older_opsets_matches_the_named_function():
    x = _x((3, 4, 5))
    for opset in (1, 11, 12, 13, 17):
        for axis in (0, 1, 2, -1):
            (y,) = normops.run("Softmax", [x], {"axis": axis}, opset=opset)
            assert bits_key(y) == bits_key(normops.ops.softmax(x, axis=axis, opset=opset))
    assert bits_key(normops.run("Softmax", [x], opset=11)[0]) == bits_key(normops.ops.softmax(x, opset=11))


# The NumPy/SciPy-style functions against the ONNX operator they mirror
# (logsumexp takes SciPy's accurate form instead of ReduceLogSumExp's
# formula, docs/specification.md §16.2: tests/test_numpy_style.py).
NUMPY_STYLE = [
    ("sum", "ReduceSum"), ("mean", "ReduceMean"), ("max", "ReduceMax"), ("min", "ReduceMin"),
    ("prod", "ReduceProd"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, op_type", NUMPY_STYLE)
def test_numpy_style_reductions_match_onnx(name, op_type, dtype):
    x = _x((4, 8), dtype)
    for axis in (0, 1):
        want = normops.run(op_type, [x, np.array([axis], np.int64)], {"keepdims": 0})[0]
        assert bits_key(getattr(normops, name)(x, axis=axis)) == bits_key(want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_style_scans_and_softmax_match_onnx(dtype):
    x = _x((4, 8), dtype)
    for axis in (0, 1, -1):
        a = axis % 2
        assert bits_key(normops.argmax(x, axis=axis)) == bits_key(normops.ops.arg_max(x, axis=axis, keepdims=0))
        assert bits_key(normops.argmin(x, axis=axis)) == bits_key(normops.ops.arg_min(x, axis=axis, keepdims=0))
        assert bits_key(normops.cumsum(x, axis=axis)) == bits_key(normops.ops.cum_sum(x, np.array(a)))
        assert bits_key(normops.cumprod(x, axis=axis)) == bits_key(normops.ops.cum_prod(x, np.array(a)))
        assert bits_key(normops.softmax(x, axis=axis)) == bits_key(normops.ops.softmax(x, axis=axis))
        assert bits_key(normops.log_softmax(x, axis=axis)) == bits_key(normops.ops.log_softmax(x, axis=axis))
    x3 = _x((3, 5, 7), dtype)  # a middle axis: moved last and back
    for axis in (0, 1, -2):
        assert bits_key(normops.softmax(x3, axis=axis)) == bits_key(normops.ops.softmax(x3, axis=axis))
        assert bits_key(normops.log_softmax(x3, axis=axis)) == bits_key(normops.ops.log_softmax(x3, axis=axis))
    # axis=None: every element is one row
    flat = x.reshape(1, -1)
    assert bits_key(normops.softmax(x)) == bits_key(normops.ops.softmax(flat).reshape(x.shape))
    assert bits_key(normops.log_softmax(x)) == bits_key(normops.ops.log_softmax(flat).reshape(x.shape))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_scipy_style_keeps_scipy_semantics(name):
    special = pytest.importorskip("scipy.special")
    x = _x((3, 5), np.float64)
    for axis in (None, 0, 1, -1, (0, 1)):
        y = getattr(normops, name)(x, axis=axis)
        assert y.shape == x.shape and y.dtype == x.dtype
        np.testing.assert_allclose(y, getattr(special, name)(x, axis=axis), rtol=1e-12, atol=1e-12)
    ints = np.arange(6).reshape(2, 3)
    assert getattr(normops, name)(ints, axis=1).dtype == np.float64  # SciPy computes integers in float64
    assert np.ndim(getattr(normops, name)(np.float64(2.0))) == 0
    with pytest.raises(normops.InvalidInputError):
        getattr(normops, name)(x, axis=2)
    with pytest.raises(normops.InvalidInputError):
        getattr(normops, name)(x.astype(np.complex64), axis=1)
    with pytest.raises(normops.InvalidInputError):
        getattr(normops, name)(x, axis=1, mode="slow")


# The named Softmax family and Sigmoid reach the kernels by a route in C
# (named.pxi) that takes only what it can check by type and declines the
# rest to the validated path. Every argument it declines must still get the
# validated path's answer: the same bits, or the same error.
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "hardmax", "sigmoid"])
def test_named_route_in_c_declines_to_the_validated_path(name):
    f = getattr(normops.ops, name)
    x = _x((3, 4, 5))
    want = f(x, opset=13, mode="exact", n_threads=1)
    # equal values of other types, or other layouts: the same bits
    same = [dict(opset=np.int64(13)), dict(n_threads=np.int32(1)), dict(mode=np.str_("exact"))]
    kept = x.copy()
    inputs = [np.asfortranarray(x), x.astype(">f4"), x[:, :, ::-1][:, :, ::-1]]
    if name != "sigmoid":
        same += [dict(axis=np.int64(-1)), dict(axis=2)]
    for kwargs in same:
        args = dict(dict(opset=13, mode="exact", n_threads=1), **kwargs)
        assert bits_key(f(x, **args)) == bits_key(want), kwargs
    for other in inputs:  # (the byte order of the result may be native: compared as float32)
        assert bits_key(f(other, opset=13, mode="exact", n_threads=1).astype(np.float32)) == bits_key(want)
    wide = f(x.tolist(), opset=13, mode="exact", n_threads=1)  # a list: float64, as NumPy makes it
    assert bits_key(wide) == bits_key(f(x.astype(np.float64), opset=13, mode="exact", n_threads=1))
    # refusals name the operator and the argument
    op_type = {"softmax": "Softmax", "log_softmax": "LogSoftmax", "hardmax": "Hardmax", "sigmoid": "Sigmoid"}[name]
    bad = [(dict(mode="slow"), "'mode'"), (dict(n_threads=0), "n_threads"), (dict(n_threads=True), "n_threads"),
           (dict(opset=12.0), "'opset'"), (dict(opset=0), "opset")]
    if name != "sigmoid":
        bad += [(dict(axis=3), "'axis'"), (dict(axis=-4), "'axis'"), (dict(axis=2 ** 70), "'axis'"),
                (dict(axis=True), "'axis'"), (dict(axis=1.0), "'axis'")]
    for kwargs, message in bad:
        with pytest.raises((normops.InvalidInputError, normops.UnsupportedError)) as info:
            f(x, **kwargs)
        assert str(info.value).startswith(op_type) and message in str(info.value), (kwargs, str(info.value))
    assert bits_key(x) == bits_key(kept)  # the input is untouched


OTHER_NAMED = {"layer_normalization": ("LayerNormalization", ""), "rms_normalization": ("RMSNormalization", ""),
               "simplified_layer_normalization": ("SimplifiedLayerNormalization", ""), "gelu": ("Gelu", ""),
               "bias_gelu": ("BiasGelu", "com.microsoft"), "lp_normalization": ("LpNormalization", ""),
               "mean_variance_normalization": ("MeanVarianceNormalization", "")}


@pytest.mark.parametrize("name", sorted(OTHER_NAMED))
def test_named_routes_in_c_of_the_other_families(name):
    f = getattr(normops.ops, name)
    op_type, domain = OTHER_NAMED[name]
    x = _x((2, 3, 8))
    kept = x.copy()
    extra = {"layer_normalization": (_x((8,)), _x((8,))), "rms_normalization": (_x((8,)),),
             "simplified_layer_normalization": (_x((8,)),), "bias_gelu": (_x((8,)),)}.get(name, ())
    trailing = {"lp_normalization": dict(axis=-1), "mean_variance_normalization": dict(axes=(1, 2))}.get(name, {})
    settings = dict(mode="exact", n_threads=1)
    want = f(x, *extra, **trailing, **settings)
    # what the route in C declines goes the validated way, to the same bits
    for other in (np.asfortranarray(x), x.astype(">f4")):
        assert bits_key(f(other, *extra, **trailing, **settings).astype(want.dtype)) == bits_key(want)
    version = _registry.lookup(op_type, domain).versions[-1]
    for kwargs in (dict(n_threads=np.int64(1)), dict(mode=np.str_("exact")), dict(opset=np.int64(version))):
        assert bits_key(f(x, *extra, **trailing, **dict(settings, **kwargs))) == bits_key(want)
    # and what it refuses is refused with the operator's name
    for kwargs in (dict(mode="slow"), dict(n_threads=0), dict(opset=1.5)):
        with pytest.raises((normops.InvalidInputError, normops.UnsupportedError)) as info:
            f(x, *extra, **trailing, **kwargs)
        assert str(info.value).startswith(op_type)
    assert bits_key(x) == bits_key(kept)


def test_lp_and_cumulative_routes_in_c_decline_to_the_validated_path():
    x = _x((2, 3, 8))
    kept = x.copy()
    settings = dict(mode="exact", n_threads=1)
    # LpNormalization: the route in C takes the last axis with p 1 or 2 as ints
    for p in (1, 2):
        want = normops.reference.run("LpNormalization", [x], {"axis": -1, "p": p})[0]
        for kwargs in (dict(axis=-1), dict(axis=2), dict(axis=np.int64(-1)), dict(axis=2, p=np.int32(p))):
            got = normops.ops.lp_normalization(x, **dict(dict(p=p), **kwargs), **settings)
            assert bits_key(got) == bits_key(want), (p, kwargs)
        assert bits_key(normops.ops.lp_normalization(x.astype(">f4"), axis=-1, p=p, **settings)) == bits_key(want)
    for kwargs, message in ((dict(p=3), "'p'"), (dict(axis=3), "'axis'"), (dict(axis=True), "'axis'"),
                            (dict(p=2.0), "'p'")):
        with pytest.raises((normops.InvalidInputError, normops.UnsupportedError)) as info:
            normops.ops.lp_normalization(x, **kwargs)
        assert str(info.value).startswith("LpNormalization") and message in str(info.value), kwargs
    # CumSum / CumProd: the route in C takes the flags as the ints 0 and 1
    for name, op_type in (("cum_sum", "CumSum"), ("cum_prod", "CumProd")):
        f = getattr(normops.ops, name)
        for exclusive, reverse in ((0, 0), (1, 0), (0, 1), (1, 1)):
            want = normops.reference.run(op_type, [x, np.array(1)], {"exclusive": exclusive, "reverse": reverse})[0]
            for axis in (1, np.int64(1), np.array(1), -2):
                got = f(x, axis, exclusive=exclusive, reverse=reverse, **settings)
                assert bits_key(got) == bits_key(want), (name, exclusive, reverse, axis)
            got = f(x, 1, exclusive=np.int64(exclusive), reverse=np.int32(reverse), **settings)
            assert bits_key(got) == bits_key(want)
        with pytest.raises((normops.InvalidInputError, normops.UnsupportedError)) as info:
            f(x, 1, exclusive=2)
        assert str(info.value).startswith(op_type) and "exclusive" in str(info.value)
    assert bits_key(normops.ops.cum_sum(x, 1, opset=11, **settings)) == bits_key(np.cumsum(x, axis=1, dtype=np.float32))
    assert bits_key(x) == bits_key(kept)
