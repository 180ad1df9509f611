"""The executable specification stays independent: no production route
calls into ``normops/reference/``.

Every function of every module of the package ``normops.reference`` (and
any production module's name bound to one) is replaced by one that raises
``ReferenceCalled``; then every served operator runs through every public
production route: its named function (``normops.ops``), ``normops.run``,
an ONNX ``InferenceSession`` of a one-node model, and the NumPy/SciPy-style
function where one exists. None may reach the reference, and the routes
must agree with one another (the same bits, or the same error class).
Cases come from compare-ort's generators (one per served version and
dtype), so a new operator is covered as soon as it can be compared.
"""
import importlib
import inspect
import pkgutil
import re
import sys
import types

import numpy as np
import pytest

import normops
import normops.ops
import normops.reference
from normops import InvalidInputError, UnsupportedError, _registry

from bits import bits



class ReferenceCalled(AssertionError):
    pass


def _raiser(name):
    def called(*args, **kwargs):
        raise ReferenceCalled(f"production code called normops.reference: {name}")
    return called


@pytest.fixture
def reference_off(monkeypatch):
    """Every function of normops.reference raises ReferenceCalled."""
    modules = [normops.reference] + [
        importlib.import_module(f"normops.reference.{info.name}")
        for info in pkgutil.iter_modules(normops.reference.__path__)]
    originals = {}
    for module in modules:
        for name, value in list(vars(module).items()):
            if callable(value) and not inspect.isclass(value) and getattr(value, "__module__", "").startswith(
                    "normops.reference"):
                originals[id(value)] = value
                monkeypatch.setattr(module, name, _raiser(f"{module.__name__}.{name}"))
    # a production module holding a reference function under its own name
    for module_name, module in list(sys.modules.items()):
        if (module_name.startswith("normops.") and not module_name.startswith("normops.reference")
                and isinstance(module, types.ModuleType)):
            for name, value in list(vars(module).items()):
                if id(value) in originals and originals[id(value)] is value:
                    monkeypatch.setattr(module, name, _raiser(f"{module_name}.{name}"))
    return originals


def test_the_patch_takes_effect(reference_off):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ReferenceCalled):
        normops.reference.run("ReduceSum", [x])
    with pytest.raises(ReferenceCalled):
        normops.reference.run("Softmax", [x])
    assert len(reference_off) > 20


def _outcome(call):
    """The list of outputs, or the error class (ReferenceCalled propagates)."""
    try:
        out = call()
    except (InvalidInputError, UnsupportedError) as exc:
        return type(exc)
    return [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]


def _agree(got, want, label):
    if isinstance(want, type):
        assert got is want, f"{label}: {got!r} != {want!r}"
        return
    assert not isinstance(got, type), f"{label}: raised {got.__name__}, the other route gave a result"
    assert len(got) == len(want), label
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{label}: {g.dtype}{g.shape} != {w.dtype}{w.shape}"
        assert np.array_equal(bits(g), bits(w)), f"{label}: bits differ"


def _named_function(op_type):
    return getattr(normops.ops, re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", op_type).lower())


def _cases():
    """compare-ort's cases: every served version in one dtype (float32 where
    the version takes it), and the newest version in every dtype."""
    compare_ort = pytest.importorskip("normops_tools.compare_ort")
    from normops_tools.cases import dtype_named
    cases = []
    for domain, op_type in _registry.served_operators():
        gen = compare_ort.GENERATORS[(domain, op_type)]
        versions = _registry.lookup(op_type, domain).versions
        for version in versions:
            names = compare_ort.schema_dtypes(gen, version)
            if version != versions[-1]:
                names = [n for n in names if n == "float32"] or list(names[:1])
            for index, name in enumerate(names):
                try:
                    dtype = dtype_named(name)
                except ImportError:  # bfloat16 without ml_dtypes
                    continue
                g = compare_ort.Gen(np.random.default_rng([18, version, index]), specials=index % 2 == 1)
                inputs, attributes = gen.make(g, version, dtype)
                cases.append(compare_ort.Case(op_type, domain, version, gen.model_opset(version), name, index,
                                              list(inputs), attributes))
    return cases


def test_every_operator_through_every_route(reference_off):
    onnx = pytest.importorskip("onnx")
    from normops_tools import compare_ort
    from normops.onnx import InferenceSession

    served = {op for _, op in _registry.served_operators()}
    seen = set()
    for case in _cases():
        op = _registry.lookup(case.op_type, case.domain)
        label = case.label
        want = _outcome(lambda: normops.run(case.op_type, case.inputs, case.attributes, opset=case.opset,
                                            domain=case.domain))
        inputs = list(case.inputs)
        while inputs and inputs[-1] is None:
            inputs.pop()
        named = _named_function(case.op_type)
        if set(case.attributes) <= set(inspect.signature(named).parameters):  # not legacy attributes
            got = _outcome(lambda: named(*inputs, opset=case.opset, full_output=True, **case.attributes))
            _agree(got, want, f"named {label}")
        if isinstance(want, type):  # refused: the session refuses it at load or run time
            continue
        model, names = compare_ort.runner._model(case, len(want))
        del model.graph.output[:]  # typed outputs, as a session needs them
        model.graph.output.extend(onnx.helper.make_tensor_value_info(
            f"out{k}", onnx.helper.np_dtype_to_tensor_dtype(w.dtype), w.shape) for k, w in enumerate(want))
        feeds = {n: a for n, a in zip(names, case.inputs) if n}

        try:
            session = InferenceSession(model.SerializeToString())
        except InvalidInputError as exc:  # e.g. a deprecated version: no model can hold this node
            assert "onnx.checker" in str(exc), f"session {label}: {exc}"
        else:
            _agree(_outcome(lambda: session.run(None, feeds)), want, f"session {label}")
        seen.add(case.op_type)
    assert seen == served


RNG = np.random.default_rng(18)


def _numpy_style_calls(x):
    """(label, NumPy/SciPy-style call, the same by a named ONNX function)."""
    ops = normops.ops
    i = (x * 100).astype(np.int64)
    return [
        ("sum", lambda: normops.sum(x, axis=1), lambda: ops.reduce_sum(x, [1], keepdims=0)),
        ("sum all", lambda: normops.sum(x.astype(np.float16)), lambda: ops.reduce_sum(x.astype(np.float16),
                                                                                       keepdims=0)),
        ("mean", lambda: normops.mean(x, axis=(0, 2)), lambda: ops.reduce_mean(x, [0, 2], keepdims=0)),
        ("prod", lambda: normops.prod(x, axis=-1, keepdims=True), lambda: ops.reduce_prod(x, [-1])),
        ("max", lambda: normops.max(np.abs(x), axis=0), lambda: ops.reduce_max(np.abs(x), [0], keepdims=0)),
        ("amin", lambda: normops.amin(x[:, ::2], axis=1), lambda: ops.reduce_min(x[:, ::2], [1], keepdims=0)),
        ("logsumexp", lambda: normops.logsumexp(x, axis=1), lambda: normops.logsumexp(x, axis=1, n_threads=3)),
        ("logsumexp b", lambda: normops.logsumexp(x, axis=(0, 2), b=x[0] - 0.5, return_sign=True)[0],
         lambda: normops.logsumexp(x, axis=(2, 0), b=x[0] - 0.5, return_sign=True, n_threads=2)[0]),
        ("sum where", lambda: normops.sum(x, axis=1, where=x > 0, initial=1.0),
         lambda: ops.reduce_sum(np.where(x > 0, x, 0), [1], keepdims=0) + x.dtype.type(1)),
        ("max where", lambda: normops.max(x, axis=2, where=x < 1, initial=-5.0),
         lambda: np.maximum(ops.reduce_max(np.where(x < 1, x, -np.inf), [2], keepdims=0), x.dtype.type(-5))),
        ("var", lambda: normops.var(x, axis=(0, 2), ddof=1), lambda: normops.var(x, axis=(2, 0), ddof=1,
                                                                                    n_threads=2)),
        ("std", lambda: normops.std(x, axis=1, where=x > -1), lambda: normops.std(x, axis=1, where=x > -1,
                                                                                 n_threads=3)),
        ("argmax", lambda: normops.argmax(x, axis=1), lambda: ops.arg_max(x, axis=1, keepdims=0)),
        ("argmin", lambda: normops.argmin(x.transpose(1, 0, 2), axis=0),
         lambda: ops.arg_min(x.transpose(1, 0, 2), axis=0, keepdims=0)),
        ("cumsum", lambda: normops.cumsum(x, axis=2), lambda: ops.cum_sum(x, 2)),
        ("cumprod", lambda: normops.cumprod(x, axis=0), lambda: ops.cum_prod(x, 0)),
        ("cumsum flat", lambda: normops.cumsum(x.astype(np.float16)),
         lambda: ops.cum_sum(x.astype(np.float16).reshape(-1), 0)),
        ("softmax", lambda: normops.softmax(x, axis=-1), lambda: ops.softmax(x, axis=-1)),
        ("log_softmax", lambda: normops.log_softmax(x, axis=-1), lambda: ops.log_softmax(x, axis=-1)),
        ("sum int", lambda: normops.sum(x.astype(np.int32), axis=1, dtype=np.int64),
         lambda: ops.reduce_sum(x.astype(np.int64), [1], keepdims=0)),
        ("mean int", lambda: normops.mean(i, axis=0), lambda: ops.reduce_mean(i.astype(np.float64), [0], keepdims=0)),
    ]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_style_functions(reference_off, dtype):
    x = RNG.standard_normal((5, 6, 7)).astype(dtype)
    for label, numpy_style, named in _numpy_style_calls(x):
        got = np.asarray(numpy_style())
        want = np.asarray(named())
        assert got.shape == want.shape, label
        assert np.array_equal(bits(got.astype(want.dtype)), bits(want)), label
