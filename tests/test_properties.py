"""Property-based tests of every served operator through ``normops.run``.

Hypothesis draws the case: an operator version, a dtype (the served ones,
and bool, complex, object and others as refusals), inputs of the shapes the
operator takes or of any shape (0-d, empty, up to rank 6), laid out in
memory every way NumPy allows (Fortran order, negative strides, every other
element, the other byte order), and attributes that are valid or broken.
Whatever it draws, normops must do one of two things:

* raise ``InvalidInputError`` or ``UnsupportedError`` naming the operator,
  exactly as the executable specification (which validates through the same
  code) does; or
* return outputs with the bits of ``normops.reference.run``, at any thread
  count, and in the fast flavour too for the operators whose flavours agree;

and the inputs are never modified. ``--hypothesis-profile=long`` (profiles
in conftest.py) runs many thousands of examples per operator.
"""
import numpy as np
import pytest

pytest.importorskip("hypothesis")
from hypothesis import event, given, note, strategies as st  # noqa: E402

import normops  # noqa: E402
from normops import InvalidInputError, UnsupportedError  # noqa: E402
from normops._registry import lookup, served_operators  # noqa: E402
from normops_tools.cases import GENERATORS, Gen  # noqa: E402
from normops_tools.cases import dtype_named as _dtype  # noqa: E402

from bits import bits  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a test dependency
    ml_dtypes = None

# Operators whose fast flavour uses other transcendental approximations
# (docs/specification.md §2.3): their fast results are checked for shape and dtype only.
TRANSCENDENTAL = {"Softmax", "LogSoftmax", "Sigmoid", "Gelu", "BiasGelu", "ReduceLogSumExp"}

# dtypes every operator refuses (docs/specification.md §15.4: bool is not served) or
# that no ONNX operator here takes
REFUSED_DTYPES = ("bool", "complex64", "complex128", "object", "U3", "datetime64[s]")
OTHER_DTYPES = ("int8", "uint8", "int16", "uint16", "uint32", "uint64", "int32", "int64",
                "float16", "float32", "float64")

OPERATORS = [key for key in served_operators() if key in GENERATORS]


def _name(key):
    domain, op_type = key
    return f"{domain}:{op_type}" if domain else op_type


# --------------------------------------------------------------------------
# Layouts: the same values, other memory


def _fortran(a):
    return np.asfortranarray(a)


def _negative_strides(a):
    if a.ndim == 0:
        return a
    flip = (slice(None, None, -1),) * a.ndim
    return np.ascontiguousarray(a[flip])[flip]


def _every_other(a):
    if a.ndim == 0:
        return a
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    view = wide[..., ::2]
    view[...] = a
    return view


def _byteswapped(a):
    if a.dtype.itemsize == 1 or a.dtype.kind not in "iuf" or (
            ml_dtypes is not None and a.dtype == np.dtype(ml_dtypes.bfloat16)):
        return a
    return a.astype(a.dtype.newbyteorder("S"))


def _unaligned(a):
    if a.dtype.itemsize == 1 or a.dtype.kind not in "iuf":
        return a
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    out = raw[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


LAYOUTS = {
    "C": lambda a: a,
    "F": _fortran,
    "negative": _negative_strides,
    "every-other": _every_other,
    "byteswapped": _byteswapped,
    "unaligned": _unaligned,
}


# --------------------------------------------------------------------------
# Drawing a case


def _random_array(draw, rng, dtype_name):
    rank = draw(st.integers(0, 6))
    limit = 4 if rank > 3 else 9
    shape = tuple(draw(st.lists(st.integers(0, limit), min_size=rank, max_size=rank)))
    return _random_array_like(rng, shape, dtype_name)


_BROKEN_VALUES = (-7, 7, 1000, -1, 0, 2, 1.5, "x", None, [0, 0], [], [9], float("nan"))


@st.composite
def cases(draw, key):
    op = lookup(key[1], key[0])
    gen = GENERATORS[key]
    version = draw(st.sampled_from(op.versions))
    # the opset asked for: the version itself, or any later opset it serves
    later = [v for v in range(version, normops.MAX_OPSET + 1) if op.version_for(v) == version]
    opset = draw(st.sampled_from(later)) if key[0] == "" else version
    valid_dtypes = tuple(gen.dtypes(version))
    kind = draw(st.sampled_from(("valid",) * 6 + ("refused", "other", "any-shape", "any-shape")))
    if kind == "refused":
        dtype_name = draw(st.sampled_from(REFUSED_DTYPES))
    elif kind == "other":
        dtype_name = draw(st.sampled_from(OTHER_DTYPES))
    else:
        dtype_name = draw(st.sampled_from(valid_dtypes))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    g = Gen(rng, specials=draw(st.booleans()))
    make_dtype = _dtype(dtype_name) if dtype_name in valid_dtypes else _dtype(valid_dtypes[0])
    inputs, attrs = gen.make(g, version, make_dtype)
    inputs = list(inputs)
    if kind in ("refused", "other") and inputs[0] is not None:
        # the data input in the drawn dtype, same shape
        inputs[0] = _random_array_like(rng, inputs[0].shape, dtype_name)
    if kind == "any-shape":
        inputs[0] = _random_array(draw, rng, dtype_name)
    # attributes: sometimes one broken or one unknown
    broken = draw(st.sampled_from(("none",) * 4 + ("value", "unknown", "dropped")))
    names = sorted(op.attributes(version))
    if broken == "value" and names:
        attrs[draw(st.sampled_from(names))] = draw(st.sampled_from(_BROKEN_VALUES))
    elif broken == "unknown":
        attrs["no_such_attribute"] = 1
    elif broken == "dropped" and len(inputs) > 1:
        inputs = inputs[:draw(st.integers(1, len(inputs) - 1))]
    layouts = []
    for i, a in enumerate(inputs):
        if isinstance(a, np.ndarray):
            layout = draw(st.sampled_from(sorted(LAYOUTS)))
            layouts.append(layout)
            inputs[i] = LAYOUTS[layout](a)
    n_threads = draw(st.sampled_from((1, 2, 3, 8)))
    summary = (f"{_name(key)} v{version} opset {opset} {kind} {dtype_name} broken={broken} "
               f"layouts={layouts} threads={n_threads} attrs={attrs} "
               f"shapes={[None if a is None else getattr(a, 'shape', a) for a in inputs]}")
    note(summary)
    return Case(op, opset, inputs, attrs, n_threads, kind == "refused" and broken == "none", summary)


class Case:
    """One drawn call; its repr is the short summary (the arrays are large)."""

    def __init__(self, op, opset, inputs, attrs, n_threads, only_dtype_refused, summary):
        self.op, self.opset, self.inputs, self.attrs = op, opset, inputs, attrs
        self.n_threads, self.only_dtype_refused, self.summary = n_threads, only_dtype_refused, summary

    def __repr__(self):
        return self.summary


def _random_array_like(rng, shape, dtype_name):
    size = int(np.prod(shape, dtype=np.int64))
    if dtype_name in ("object", "U3", "datetime64[s]"):
        return np.zeros(shape, dtype=dtype_name)
    dtype = _dtype(dtype_name)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=size).astype(bool).reshape(shape)
    if dtype.kind in "iu":
        return rng.integers(0, 5, size=size).astype(dtype).reshape(shape)
    values = rng.standard_normal(size)
    if dtype.kind == "c":
        return (values + 1j * values[::-1]).astype(dtype).reshape(shape)
    return values.astype(np.float32).astype(dtype).reshape(shape)


# --------------------------------------------------------------------------
# The property


def _snapshot(inputs):
    return [None if not isinstance(a, np.ndarray) else
            (a.shape, a.strides, a.dtype, a.flags.writeable, a.tobytes(), a.__array_interface__["data"][0])
            for a in inputs]


def _outcome(fn):
    try:
        return "ok", fn()
    except (InvalidInputError, UnsupportedError) as exc:
        return "error", exc


def _assert_same_outputs(got, want, what):
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert (g is None) == (w is None), (what, i)
        if g is None:
            continue
        assert g.dtype == w.dtype and g.shape == w.shape, (what, i, g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_array_equal(bits(g), bits(w), err_msg=f"{what}: output {i}")


def _check_error(exc, op_type):
    assert op_type in str(exc), f"error does not name {op_type}: {exc}"


@pytest.mark.parametrize("key", OPERATORS, ids=[_name(k) for k in OPERATORS])
def test_run_matches_reference_or_refuses(key):
    @given(cases(key))
    def check(case):
        op, opset, inputs, attrs, n_threads = case.op, case.opset, case.inputs, case.attrs, case.n_threads
        before = _snapshot(inputs)
        domain = op.domain
        status, result = _outcome(lambda: normops.run(op.op_type, inputs, dict(attrs), opset=opset,
                                                      domain=domain, n_threads=n_threads))
        assert _snapshot(inputs) == before, "normops.run modified an input"
        ref_status, ref = _outcome(lambda: normops.reference.run(op.op_type, inputs, dict(attrs),
                                                                  opset=opset, domain=domain))
        assert _snapshot(inputs) == before, "the reference modified an input"
        event(f"normops: {status}" + ("" if status == "ok" else f" {type(result).__name__}"))
        data = inputs[0]
        if case.only_dtype_refused and isinstance(data, np.ndarray) and data.dtype.kind == "b":
            # docs/specification.md §15.4: bool inputs are not served, whatever else is wrong
            assert status == "error" and isinstance(result, UnsupportedError), result
        if status == "error":
            _check_error(result, op.op_type)
            assert ref_status == "error", f"normops refused what the reference computes: {result}"
            assert type(result) is type(ref), (result, ref)
            return
        assert ref_status == "ok", f"normops computed what the reference refuses: {ref}"
        _assert_same_outputs(result, ref, f"{op.op_type} exact")
        fast = normops.run(op.op_type, inputs, dict(attrs), opset=opset, domain=domain,
                           mode="fast", n_threads=n_threads)
        assert _snapshot(inputs) == before, "the fast flavour modified an input"
        if op.op_type in TRANSCENDENTAL:
            assert [None if f is None else (f.dtype, f.shape) for f in fast] == \
                [None if r is None else (r.dtype, r.shape) for r in result]
        else:
            _assert_same_outputs(fast, result, f"{op.op_type} fast")

    check()


def test_every_served_operator_is_drawn():
    # a new operator without a case generator would escape these properties
    assert set(served_operators()) == set(OPERATORS)
