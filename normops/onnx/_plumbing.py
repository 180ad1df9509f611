"""The few non-normops operators a real graph needs, in NumPy.

Each is implemented for the ONNX versions listed in ``PLUMBING`` exactly as
the ONNX specification defines them; older versions with other semantics
(legacy broadcasting, string ``to``...) are refused at load time. They move,
reshape and convert data; the only arithmetic (Add, Sub, Mul, Div) is one
IEEE operation per element, correctly rounded by NumPy (float16 and bfloat16
are computed in float32 and rounded once, which gives the same bits).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto

from .._errors import InvalidInputError, UnsupportedError


def _np(elem_type):
    return onnx.helper.tensor_dtype_to_np_dtype(elem_type)


_INT = [TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64,
        TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64]
_FLOAT = [TensorProto.FLOAT16, TensorProto.FLOAT, TensorProto.DOUBLE]


class Plumbing:
    """One plumbing operator: ``versions`` maps each accepted since_version
    to its type set for ``check_types`` (None: any tensor type);
    ``refused`` maps the refused ones to the reason."""

    def __init__(self, op_type, run, versions, refused, check=None):
        self.op_type = op_type
        self._run = run
        self.versions = versions
        self.refused = refused
        self._check = check

    def reason(self, version, attributes):
        """Why a node of this version/attributes is not served, or None."""
        if version in self.refused:
            return self.refused[version]
        if version not in self.versions:
            return f"version {version} is not one normops implements ({sorted(self.versions)})"
        if self._check is not None:
            return self._check(version, attributes)
        return None

    def run(self, version, inputs, attributes):
        return self._run(version, inputs, attributes)


def _fail(op, message):
    raise InvalidInputError(f"{op}: {message}")


def _int64_vector(op, name, value):
    if value.dtype != np.int64 or value.ndim != 1:
        _fail(op, f"input {name!r} must be a 1-D int64 tensor, got {value.dtype} of shape {value.shape}")
    return [int(v) for v in value]


def _axes(op, axes, rank):
    """Normalised axes, each in [-rank, rank), no duplicates."""
    out = []
    for a in axes:
        if not -rank <= a < rank:
            _fail(op, f"axis {a} is out of range for rank {rank}")
        out.append(a + rank if a < 0 else a)
    if len(set(out)) != len(out):
        _fail(op, f"axes {list(axes)} repeat an axis")
    return out


def _checked_types(op, version, arrays, types):
    """All inputs share one dtype, and it is one the version allows."""
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) > 1:
        _fail(op, f"inputs have different dtypes ({', '.join(sorted(map(str, dtypes)))})")
    dtype = arrays[0].dtype
    if types is not None and dtype not in [np.dtype(_np(t)) for t in types]:
        _fail(op, f"dtype {dtype} is not allowed at version {version}")
    return dtype


# --------------------------------------------------------------------------
# Constant (evaluated once, at load time)

def _constant_check(version, attributes):
    if "sparse_value" in attributes:
        return "a sparse_value (sparse tensors are not served)"
    if "value_string" in attributes or "value_strings" in attributes:
        return "a string value (strings are not served)"
    return None


def _constant(version, inputs, attributes):
    if len(attributes) != 1:
        _fail("Constant", f"needs exactly one value attribute, got {sorted(attributes) or 'none'}")
    (name, value), = attributes.items()
    if name == "value":
        array = np.array(value)  # a copy: outputs never alias the model
    elif name == "value_float":
        array = np.array(value, np.float32)
    elif name == "value_floats":
        array = np.array(list(value), np.float32).reshape(len(value))
    elif name == "value_int":
        array = np.array(value, np.int64)
    elif name == "value_ints":
        array = np.array(list(value), np.int64).reshape(len(value))
    else:
        _fail("Constant", f"unknown attribute {name!r}")
    return [array]


# --------------------------------------------------------------------------
# Identity, Cast

def _identity(version, inputs, attributes):
    return [inputs[0]]


_CAST_TYPES = [*_FLOAT, *_INT, TensorProto.BOOL]


def _cast_types(version):
    return _CAST_TYPES + ([TensorProto.BFLOAT16] if version >= 13 else [])


def _cast_check(version, attributes):
    to = attributes.get("to")
    if not isinstance(to, int) or to not in _cast_types(version):
        try:
            name = TensorProto.DataType.Name(to)
        except (ValueError, TypeError):
            name = repr(to)
        return f"a cast to {name} (served: the float, integer and bool types)"
    if attributes.get("round_mode", "up") != "up":
        return "round_mode other than 'up' (it only concerns float8e8m0)"
    return None


def _cast(version, inputs, attributes):
    x = inputs[0]
    allowed = {np.dtype(_np(t)) for t in _cast_types(version)}
    if x.dtype not in allowed:
        raise UnsupportedError(f"Cast: input dtype {x.dtype} is not served")
    with np.errstate(invalid="ignore", over="ignore"):  # out of range: undefined in ONNX
        return [x.astype(_np(attributes["to"]))]


# --------------------------------------------------------------------------
# Shape manipulation

def _reshape(version, inputs, attributes):
    data, shape = inputs
    dims = _int64_vector("Reshape", "shape", shape)
    allowzero = attributes.get("allowzero", 0) if version >= 14 else 0
    if dims.count(-1) > 1:
        _fail("Reshape", f"shape {dims} has more than one -1")
    if any(d < -1 for d in dims):
        _fail("Reshape", f"shape {dims} has a dimension below -1")
    if allowzero and 0 in dims and -1 in dims:
        _fail("Reshape", f"shape {dims} has both 0 and -1 with allowzero=1")
    out = []
    for i, d in enumerate(dims):
        if d == 0 and not allowzero:
            if i >= data.ndim:
                _fail("Reshape", f"shape {dims} copies dimension {i}, but data has rank {data.ndim}")
            d = data.shape[i]
        out.append(d)
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if known == 0 or data.size % known:
            _fail("Reshape", f"cannot infer the -1 of shape {dims} for data of shape {data.shape}")
        out[out.index(-1)] = data.size // known
    if int(np.prod(out, dtype=np.int64)) != data.size:
        _fail("Reshape", f"cannot reshape data of shape {data.shape} to {dims}")
    return [data.reshape(out)]


def _shape(version, inputs, attributes):
    shape = inputs[0].shape
    rank = len(shape)
    start, end = 0, rank
    if version >= 15:
        start = attributes.get("start", 0)
        end = attributes.get("end", rank)
        start = min(max(start + rank if start < 0 else start, 0), rank)
        end = min(max(end + rank if end < 0 else end, 0), rank)
    return [np.array(shape[start:end], np.int64).reshape(max(end - start, 0))]


def _axes_argument(op, version, inputs, attributes):
    if version >= 13:
        axes = inputs[1] if len(inputs) > 1 else None
        return None if axes is None else _int64_vector(op, "axes", axes)
    axes = attributes.get("axes")
    return None if axes is None else list(axes)


def _squeeze(version, inputs, attributes):
    data = inputs[0]
    axes = _axes_argument("Squeeze", version, inputs, attributes)
    if not axes:  # absent, or empty as ONNX Runtime reads it: every dimension of 1
        axes = [i for i, d in enumerate(data.shape) if d == 1]
    else:
        if version < 11 and any(a < 0 for a in axes):
            _fail("Squeeze", f"negative axes {axes} are not allowed at version {version}")
        axes = _axes("Squeeze", axes, data.ndim)
        for a in axes:
            if data.shape[a] != 1:
                _fail("Squeeze", f"dimension {a} of data shape {data.shape} is not 1")
    return [data.reshape([d for i, d in enumerate(data.shape) if i not in axes])]


def _unsqueeze(version, inputs, attributes):
    data = inputs[0]
    axes = _axes_argument("Unsqueeze", version, inputs, attributes)
    if axes is None:
        _fail("Unsqueeze", "axes are required")
    if version < 11 and any(a < 0 for a in axes):
        _fail("Unsqueeze", f"negative axes {axes} are not allowed at version {version}")
    rank = data.ndim + len(axes)
    axes = set(_axes("Unsqueeze", axes, rank))
    dims = iter(data.shape)
    return [data.reshape([1 if i in axes else next(dims) for i in range(rank)])]


def _transpose(version, inputs, attributes):
    data = inputs[0]
    perm = attributes.get("perm")
    perm = list(range(data.ndim))[::-1] if perm is None else list(perm)
    if sorted(perm) != list(range(data.ndim)):
        _fail("Transpose", f"perm {perm} is not a permutation of the {data.ndim} axes")
    return [np.transpose(data, perm)]


def _concat(version, inputs, attributes):
    if not inputs or any(x is None for x in inputs):
        _fail("Concat", "needs at least one input and no empty input names")
    axis = attributes.get("axis")
    if axis is None:
        _fail("Concat", "attribute 'axis' is required")
    rank = inputs[0].ndim
    if rank == 0:
        _fail("Concat", "inputs must have rank 1 or more")
    if axis < 0 and version < 11:
        _fail("Concat", f"negative axis {axis} is not allowed at version {version}")
    (axis,) = _axes("Concat", [axis], rank)
    _checked_types("Concat", version, inputs, None)
    for x in inputs[1:]:
        if x.ndim != rank or any(a != b for i, (a, b) in enumerate(zip(x.shape, inputs[0].shape)) if i != axis):
            _fail("Concat", f"input shapes {[x.shape for x in inputs]} differ outside axis {axis}")
    return [np.concatenate(inputs, axis=axis)]


# --------------------------------------------------------------------------
# Element-wise arithmetic (multidirectional broadcasting, versions 7+)

_ARITH_TYPES = {
    7: [TensorProto.UINT32, TensorProto.UINT64, TensorProto.INT32, TensorProto.INT64, *_FLOAT],
}
_ARITH_TYPES[13] = _ARITH_TYPES[7] + [TensorProto.BFLOAT16]
_ARITH_TYPES[14] = _INT + _FLOAT + [TensorProto.BFLOAT16]


def _int_divide(a, b):
    """C-style integer division (truncation toward zero), as ONNX Runtime."""
    if np.any(b == 0):
        _fail("Div", "integer division by zero")
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        q = q + ((np.remainder(a, b) != 0) & ((a < 0) != (b < 0))).astype(q.dtype)
    return q


def _arith(op_type, ufunc):
    def run(version, inputs, attributes):
        a, b = inputs
        dtype = _checked_types(op_type, version, [a, b], _ARITH_TYPES[version])
        try:
            np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            _fail(op_type, f"shapes {a.shape} and {b.shape} do not broadcast")
        with np.errstate(all="ignore"):  # IEEE results; integers wrap
            if ufunc is None:
                out = _int_divide(a, b) if dtype.kind in "iu" else np.true_divide(a, b)
            else:
                out = ufunc(a, b)
        return [np.asarray(out, dtype)]
    return run


_LEGACY_BROADCAST = "legacy broadcasting (the 'broadcast' attribute) is not served"


def _arith_op(op_type, ufunc):
    return Plumbing(op_type, _arith(op_type, ufunc), versions={7, 13, 14},
                    refused={1: _LEGACY_BROADCAST, 6: _LEGACY_BROADCAST})


_ALL_SHAPE_VERSIONS = {13, 21, 23, 24, 25}  # later versions only add element types

#: op_type -> Plumbing, the whole list.
PLUMBING = {p.op_type: p for p in [
    Plumbing("Constant", _constant, versions={1, 9, 11, 12, 13, 19, 21, 23, 24, 25}, refused={},
             check=_constant_check),
    Plumbing("Identity", _identity, versions={1, 13, 14, 16, 19, 21, 23, 24, 25}, refused={}),
    Plumbing("Cast", _cast, versions={6, 9, 13, 19, 21, 23, 24, 25},
             refused={1: "version 1 (a string 'to' attribute) is not served"}, check=_cast_check),
    Plumbing("Reshape", _reshape, versions={5, 13, 14, 19, 21, 23, 24, 25},
             refused={1: "version 1 (a 'shape' attribute) is not served"}),
    Plumbing("Shape", _shape, versions={1, 13, 15, 19, 21, 23, 24, 25}, refused={}),
    Plumbing("Squeeze", _squeeze, versions={1, 11} | _ALL_SHAPE_VERSIONS, refused={}),
    Plumbing("Unsqueeze", _unsqueeze, versions={1, 11} | _ALL_SHAPE_VERSIONS, refused={}),
    Plumbing("Transpose", _transpose, versions={1} | _ALL_SHAPE_VERSIONS, refused={}),
    Plumbing("Concat", _concat, versions={4, 11, 13},
             refused={1: "version 1 (an optional 'axis') is not served"}),
    _arith_op("Add", np.add),
    _arith_op("Sub", np.subtract),
    _arith_op("Mul", np.multiply),
    _arith_op("Div", None),
]}
