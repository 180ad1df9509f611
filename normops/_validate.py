"""The one place that checks inputs, attributes and axes.

Every message starts with the operator name and names the argument, so a
user sees at once which call and which input or attribute is wrong.
"""
import math
import numbers
import operator

import numpy as np

from ._errors import InvalidInputError, UnsupportedError

#: TensorProto element types of the floating types (stash_type values).
FLOAT_TENSOR_TYPES = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}

_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)
_FLOAT16 = np.dtype(np.float16)


_FLOAT_DTYPE_CACHE = {}


def is_float_dtype(dtype):
    """float16/32/64, or ml_dtypes' bfloat16 (not longdouble: ONNX has no
    such type, and the kernels would not compute it in its precision)."""
    try:
        return _FLOAT_DTYPE_CACHE[dtype]
    except KeyError:
        pass
    result = (dtype.kind == "f" and dtype.itemsize in (2, 4, 8)) or dtype.name == "bfloat16"
    _FLOAT_DTYPE_CACHE[dtype] = result
    return result


def is_bfloat16(dtype):
    return is_float_dtype(dtype) and dtype.kind != "f"


def kernel_storage(dtype, compute):
    """The dtype the kernel reads or writes for an array of ``dtype``: its
    own when the kernel converts it (float16/bfloat16 around float32
    arithmetic), else the arithmetic type."""
    from . import _isa

    if compute == _FLOAT32 and (dtype == _FLOAT16 and _isa.routes.float16_storage() or is_bfloat16(dtype)):
        return dtype
    return compute


def compute_dtype(*dtypes):
    """The arithmetic type: float64 if any operand is float64, else float32
    (float16 and bfloat16 are widened exactly to float32, docs/specification.md §4.1)."""
    return _FLOAT64 if any(d == _FLOAT64 for d in dtypes) else _FLOAT32


def array_input(op, name, value):
    """``value`` as a native-endian ndarray (strides left as they are)."""
    if type(value) is not np.ndarray:
        if value is None:
            raise InvalidInputError(f"{op}: input {name!r} is required")
        if isinstance(value, np.ma.MaskedArray):
            raise InvalidInputError(f"{op}: input {name!r} is a masked array; pass its data "
                                    f"(np.ma.getdata) or fill it (.filled()) first")
        try:
            value = np.asarray(value)  # subclasses such as np.matrix become plain arrays
        except Exception as exc:  # noqa: BLE001 - report any conversion failure
            raise InvalidInputError(f"{op}: input {name!r} is not an array: {exc}") from None
    if not value.dtype.isnative:
        value = value.astype(value.dtype.newbyteorder("="))
    return value


def float_input(op, name, value):
    """A floating input (ONNX type constraint of normalisation operators)."""
    value = array_input(op, name, value)
    if not is_float_dtype(value.dtype):
        if value.dtype.kind == "b":  # docs/specification.md §15.4: bool is not served
            raise UnsupportedError(f"{op}: input {name!r} is bool, which {op} does not take (not served)")
        raise InvalidInputError(
            f"{op}: input {name!r} has dtype {value.dtype}; {op} takes float16, bfloat16, float32 or float64")
    return value


def rounded_to(y, dtype):
    """``y`` rounded once to ``dtype`` (the float16/bfloat16 rule of
    docs/specification.md §4.2); overflow to inf is the IEEE result, and a canonical
    NaN stays canonical."""
    if y.dtype == dtype:
        return y
    with np.errstate(over="ignore"):
        return y.astype(dtype)


def contiguous(a, dtype):
    """C-contiguous, aligned copy of ``a`` in ``dtype`` (no copy when it already is)."""
    if a.dtype == dtype and a.flags.c_contiguous and a.flags.aligned:
        return a
    # a fresh array: ascontiguousarray would keep an unaligned contiguous one
    return np.array(a, dtype=dtype, order="C")


def int_attribute(op, name, value):
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise InvalidInputError(f"{op}: attribute {name!r} must be an integer, not {value!r}") from None


def float_attribute(op, name, value):
    """A float attribute, rounded to float32 as ONNX stores it (a value
    beyond float32's range becomes +-inf, as it would in a model)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidInputError(f"{op}: attribute {name!r} must be a number, not {value!r}")
    try:
        value = float(value)
    except OverflowError:
        value = math.inf if value > 0 else -math.inf
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def flag_attribute(op, name, value):
    value = int_attribute(op, name, value)
    if value not in (0, 1):
        raise InvalidInputError(f"{op}: attribute {name!r} must be 0 or 1, not {value}")
    return value


def stash_type_attribute(op, value):
    """Read and validated, then ignored: accumulation is float32 (float64 for
    float64 inputs) whatever it says (docs/specification.md §4.4)."""
    value = int_attribute(op, "stash_type", value)
    if value not in FLOAT_TENSOR_TYPES:
        raise InvalidInputError(
            f"{op}: attribute 'stash_type' must be a floating TensorProto type "
            f"({', '.join(f'{k} ({v})' for k, v in FLOAT_TENSOR_TYPES.items())}), not {value}")
    return value


def axis_in_range(op, what, axis, ndim, input_name):
    """An int axis normalised into [0, ndim); ``what`` names it in the error
    ("attribute 'axis'", "input 'axis'")."""
    if not -ndim <= axis < ndim:
        valid = f"valid: {-ndim}..{ndim - 1}" if ndim else "it has no axes"
        raise InvalidInputError(f"{op}: {what}={axis} is out of range for input {input_name!r} of rank {ndim} ({valid})")
    return axis + ndim if axis < 0 else axis


def axis_attribute(op, name, axis, ndim, input_name="X"):
    """Normalise ``axis`` into [0, ndim)."""
    return axis_in_range(op, f"attribute {name!r}", int_attribute(op, name, axis), ndim, input_name)


def truth_argument(name, arg, value):
    """A flag read as NumPy's argmax or SciPy read it: any truth value."""
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 - e.g. an array of several elements
        raise InvalidInputError(f"{name}: argument {arg!r} must be a bool, not {value!r}") from None


def zero_d_axis(name, axis, input_name):
    """NumPy lets a 0-d array take an int axis 0 or -1 (not in a tuple),
    meaning no axis; anything else is refused."""
    if int_attribute(name, "axis", axis) not in (0, -1):
        raise InvalidInputError(f"{name}: argument 'axis'={axis} is out of range for the 0-d input "
                                f"{input_name!r} (it takes 0 or -1 only)")


def axes_argument(name, ndim, axis, input_name):
    """A NumPy-style ``axis`` (None, an int or a tuple of ints) as sorted
    axes in [0, ndim); repeated axes are an error."""
    if axis is None:
        return tuple(range(ndim))
    if ndim == 0 and not isinstance(axis, tuple):
        zero_d_axis(name, axis, input_name)
        return ()
    axes = tuple(sorted(axis_attribute(name, "axis", a, ndim, input_name)
                        for a in (axis if isinstance(axis, tuple) else (axis,))))
    if len(set(axes)) != len(axes):
        raise InvalidInputError(f"{name}: argument 'axis' repeats an axis: {axis!r}")
    return axes


def at_least_rank(op, name, a, rank):
    if a.ndim < rank:
        raise InvalidInputError(f"{op}: input {name!r} must have rank >= {rank}, got a {a.ndim}-d array")


def broadcast_to_suffix(op, name, param, suffix):
    """Check that ``param`` broadcasts right-aligned to the ``suffix`` shape
    (its missing leading dimensions are ones; extra leading ones are
    dropped) and return it with exactly the suffix's rank."""
    shape = list(param.shape)
    while len(shape) > len(suffix) and shape[0] == 1:
        shape.pop(0)
    ok = len(shape) <= len(suffix)
    if ok:
        padded = [1] * (len(suffix) - len(shape)) + shape
        ok = all(p in (1, s) for p, s in zip(padded, suffix))
    if not ok:
        raise InvalidInputError(
            f"{op}: input {name!r} has shape {tuple(param.shape)}, which does not broadcast "
            f"to the normalized shape {tuple(suffix)}")
    return param.reshape(padded)


def product(shape):
    return math.prod(shape)


def unsupported(op, message):
    return UnsupportedError(f"{op}: {message}")
