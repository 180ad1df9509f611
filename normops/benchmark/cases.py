"""The registry of benchmark cases.

A case is one ONNX node at one input shape: the operator, its opset, its
attributes, the dtypes it is measured in, how its inputs are made from a
seed, and the equivalent NumPy and torch expressions. Every runtime of the
benchmark builds its callable from the same `Case`, so adding an operator
to the benchmark means registering cases here (see `register`) and nothing
else.

Only NumPy is imported at module level: the worker processes of the other
runtimes import this module too, and must not pull in anything they do not
measure.
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from typing import Any, Callable, Iterable, Sequence

import numpy as np

__all__ = [
    "Case",
    "CASES",
    "register",
    "get_case",
    "select_cases",
    "OVERHEAD_CASE",
]


@dataclasses.dataclass(frozen=True)
class Case:
    """One benchmarked node.

    Attributes
    ----------
    name : str
        Unique name, used by ``--case REGEX`` and in every report.
    op_type, opset, domain : str, int, str
        The ONNX node. `opset` is the operator's since_version used to build
        the ONNX Runtime model; `opset_import` (default: `opset`) is the
        version of `domain` the model imports.
    shape : tuple of int
        Shape of the first input X.
    attributes : dict
        ONNX attributes, passed as keywords to the normops function too.
    dtypes : tuple of str
        The dtypes this case is measured in.
    make_inputs : callable(rng, dtype) -> list of ndarray
        The node's inputs in ONNX order. Only the first (X) is fed to ONNX
        Runtime at run time; the others become initializers (weights).
    numpy_fn : callable(inputs, attributes, acc) -> ndarray
        Equivalent NumPy expression accumulating in dtype `acc`; it also
        serves, with ``acc=np.float64``, as the accuracy check.
    torch_fn : callable(torch, tensors, attributes) -> tensor, or None
        Equivalent torch expression, None when torch has none.
    normops_fn : str
        Name of the normops function taking the same inputs and attributes.
    width : int
        Number of elements one output depends on (the normalized size); the
        plot's x axis shows `elements`, the table shows both.
    hidden : bool
        Hidden cases (the per-call overhead probe) are only selected by
        name, never by a default selection.
    """

    name: str
    op_type: str
    opset: int
    shape: tuple[int, ...]
    attributes: dict[str, Any]
    dtypes: tuple[str, ...]
    make_inputs: Callable[[np.random.Generator, np.dtype], list[np.ndarray]]
    numpy_fn: Callable[..., np.ndarray]
    torch_fn: Callable[..., Any] | None
    normops_fn: str
    width: int
    domain: str = ""
    opset_import: int | None = None
    input_names: tuple[str, ...] = ("X",)
    hidden: bool = False

    @property
    def elements(self) -> int:
        """Number of elements of the input X."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def shape_str(self) -> str:
        return "x".join(str(d) for d in self.shape)

    def inputs(self, dtype: str, seed: int = 0) -> list[np.ndarray]:
        """The inputs for `dtype`, identical in every process and runtime.

        The generator is seeded by `seed` and the case name, so the data do
        not depend on which other cases run in the same process.
        """
        key = zlib.crc32(f"{self.name}/{dtype}".encode())
        rng = np.random.default_rng([seed, key])
        return self.make_inputs(rng, np.dtype(dtype))

    def bytes_moved(self, dtype: str) -> int:
        """Bytes a perfect implementation moves: read X once, write Y once.

        Parameters (scale, bias) are small next to X and left out.
        """
        return 2 * self.elements * np.dtype(dtype).itemsize


CASES: dict[str, Case] = {}


def register(case: Case) -> Case:
    """Add `case` to the registry (names are unique)."""
    if case.name in CASES:
        raise ValueError(f"benchmark case {case.name!r} is already registered")
    CASES[case.name] = case
    return case


def get_case(name: str) -> Case:
    try:
        return CASES[name]
    except KeyError:
        raise KeyError(f"unknown benchmark case {name!r}") from None


def select_cases(
    pattern: str | None = None,
    dtypes: Iterable[str] | None = None,
    include_hidden: bool = False,
) -> list[tuple[Case, str]]:
    """(case, dtype) pairs whose name matches `pattern` (``re.search``).

    `dtypes` filters the case's own dtypes; a case measured in none of them
    is dropped. Hidden cases are only taken when `include_hidden` or when
    the pattern names them exactly.
    """
    rx = re.compile(pattern) if pattern else None
    wanted = None if dtypes is None else [np.dtype(d).name for d in dtypes]
    out = []
    for case in CASES.values():
        if rx is not None and not rx.search(case.name):
            continue
        if case.hidden and not include_hidden and not (
            pattern is not None and rx.fullmatch(case.name)
        ):
            continue
        for dt in case.dtypes:
            if wanted is None or dt in wanted:
                out.append((case, dt))
    return out


# ---------------------------------------------------------------------------
# Normalisation operators


def _suffix_axes(ndim: int, axis: int) -> tuple[int, ...]:
    axis = axis + ndim if axis < 0 else axis
    return tuple(range(axis, ndim))


def _param_shape(shape: Sequence[int], axis: int) -> tuple[int, ...]:
    return tuple(shape[_suffix_axes(len(shape), axis)[0]:])


def _make_norm_inputs(shape, axis, bias):
    pshape = _param_shape(shape, axis)

    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        # Drawn in float32 then rounded, so float16 data are the float32
        # data rounded (one data set per seed and case).
        x = rng.standard_normal(shape, dtype=np.float32)
        x += rng.uniform(-1.0, 1.0, size=shape[:-1] + (1,)).astype(np.float32)
        scale = rng.uniform(0.5, 1.5, size=pshape).astype(np.float32)
        out = [x.astype(dtype), scale.astype(dtype)]
        if bias:
            b = rng.uniform(-0.5, 0.5, size=pshape).astype(np.float32)
            out.append(b.astype(dtype))
        return out

    return make


def _np_layer_norm(inputs, attributes, acc=np.float32):
    x, scale, *rest = inputs
    axes = _suffix_axes(x.ndim, attributes.get("axis", -1))
    eps = attributes.get("epsilon", 1e-5)
    xa = x.astype(acc, copy=False)
    d = xa - xa.mean(axis=axes, keepdims=True)
    var = np.mean(d * d, axis=axes, keepdims=True)
    y = d / np.sqrt(var + acc(eps)) * scale.astype(acc, copy=False)
    if rest:
        y += rest[0].astype(acc, copy=False)
    return y.astype(x.dtype if acc is np.float32 else acc, copy=False)


def _np_rms_norm(inputs, attributes, acc=np.float32):
    x, scale = inputs
    axes = _suffix_axes(x.ndim, attributes.get("axis", -1))
    eps = attributes.get("epsilon", 1e-5)
    xa = x.astype(acc, copy=False)
    inv = acc(1.0) / np.sqrt(np.mean(xa * xa, axis=axes, keepdims=True) + acc(eps))
    y = xa * inv * scale.astype(acc, copy=False)
    return y.astype(scale.dtype if acc is np.float32 else acc, copy=False)


def _torch_layer_norm(torch, tensors, attributes):
    x, scale, *rest = tensors
    nshape = tuple(x.shape[_suffix_axes(x.dim(), attributes.get("axis", -1))[0]:])
    return torch.nn.functional.layer_norm(
        x, nshape, scale, rest[0] if rest else None, attributes.get("epsilon", 1e-5)
    )


def _torch_rms_norm(torch, tensors, attributes):
    x, scale = tensors
    nshape = tuple(x.shape[_suffix_axes(x.dim(), attributes.get("axis", -1))[0]:])
    return torch.nn.functional.rms_norm(x, nshape, scale, attributes.get("epsilon", 1e-5))


_NORM_OPS = {
    # op_type: (opset, opset_import, normops function, numpy, torch, bias)
    "LayerNormalization": (17, 17, "layer_normalization", _np_layer_norm, _torch_layer_norm, True),
    "RMSNormalization": (23, 23, "rms_normalization", _np_rms_norm, _torch_rms_norm, False),
    # ONNX Runtime registers it in the default domain since version 1; a
    # model importing opset 17 of that domain resolves it.
    "SimplifiedLayerNormalization": (
        1, 17, "simplified_layer_normalization", _np_rms_norm, _torch_rms_norm, False),
}


def normalization_case(
    op_type: str,
    shape: Sequence[int],
    *,
    axis: int = -1,
    epsilon: float = 1e-5,
    dtypes: Sequence[str] = ("float32",),
    hidden: bool = False,
    name: str | None = None,
) -> Case:
    """Build (without registering) a LayerNormalization-like case."""
    opset, opset_import, fn, np_fn, torch_fn, bias = _NORM_OPS[op_type]
    shape = tuple(int(d) for d in shape)
    if name is None:
        name = f"{op_type}_{'x'.join(map(str, shape))}"
        if axis != -1:
            name += f"_axis{axis}"
    attrs = {"axis": int(axis), "epsilon": float(epsilon)}
    return Case(
        name=name,
        op_type=op_type,
        opset=opset,
        opset_import=opset_import,
        shape=shape,
        attributes=attrs,
        dtypes=tuple(np.dtype(d).name for d in dtypes),
        make_inputs=_make_norm_inputs(shape, axis, bias),
        numpy_fn=np_fn,
        torch_fn=torch_fn,
        normops_fn=fn,
        width=int(np.prod(_param_shape(shape, axis), dtype=np.int64)),
        input_names=("X", "Scale", "B") if bias else ("X", "scale"),
        hidden=hidden,
    )


HIDDEN_WIDTHS = (64, 896, 1536, 2048, 3584, 4096)

for _w in HIDDEN_WIDTHS:
    for _rows in (32, 1024):
        register(normalization_case("LayerNormalization", (_rows, _w)))
for _shape in ((256, 128), (1, 4096), (128, 4096), (4096, 128)):
    register(normalization_case("LayerNormalization", _shape))
register(normalization_case("LayerNormalization", (8, 16, 512), axis=2))

for _w in HIDDEN_WIDTHS:
    for _rows in (32, 1024):
        register(normalization_case("RMSNormalization", (_rows, _w)))
for _shape in ((1, 4096), (128, 4096)):
    register(normalization_case("RMSNormalization", _shape, dtypes=("float32", "float16")))
for _shape in ((8, 32), (1, 64, 512)):
    register(normalization_case("RMSNormalization", _shape))
register(normalization_case("RMSNormalization", (2, 8, 16), axis=1))

for _shape in ((1, 4096), (128, 4096), (1, 128, 5120), (257, 65)):
    register(normalization_case(
        "SimplifiedLayerNormalization", _shape, dtypes=("float32", "float16")))

# ------------------------------------------------------- the softmax family

def _np_softmax(inputs, attributes, acc=np.float32):
    x = inputs[0].astype(acc)
    e = np.exp(x - x.max(axis=attributes["axis"], keepdims=True))
    return (e / e.sum(axis=attributes["axis"], keepdims=True)).astype(inputs[0].dtype)


def _np_log_softmax(inputs, attributes, acc=np.float32):
    x = inputs[0].astype(acc)
    d = x - x.max(axis=attributes["axis"], keepdims=True)
    return (d - np.log(np.exp(d).sum(axis=attributes["axis"], keepdims=True))).astype(inputs[0].dtype)


def _torch_softmax(torch, tensors, attributes):
    return torch.softmax(tensors[0], dim=attributes["axis"])


def _torch_log_softmax(torch, tensors, attributes):
    return torch.log_softmax(tensors[0], dim=attributes["axis"])


_SOFTMAX_OPS = {
    "Softmax": ("ops.softmax", _np_softmax, _torch_softmax),
    "LogSoftmax": ("ops.log_softmax", _np_log_softmax, _torch_log_softmax),
}


def softmax_case(op_type: str, shape: Sequence[int], *, axis: int = -1,
                 dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) a Softmax / LogSoftmax case (opset 13)."""
    fn, np_fn, torch_fn = _SOFTMAX_OPS[op_type]
    shape = tuple(int(d) for d in shape)

    def make(rng, dtype):
        return [(rng.standard_normal(shape) * 3).astype(dtype)]

    return Case(
        name=f"{op_type}_{'x'.join(map(str, shape))}" + (f"_axis{axis}" if axis != -1 else ""),
        op_type=op_type, opset=13, shape=shape, attributes={"axis": int(axis)},
        dtypes=tuple(np.dtype(d).name for d in dtypes), make_inputs=make,
        numpy_fn=np_fn, torch_fn=torch_fn, normops_fn=fn, width=shape[axis],
        input_names=("input",),
    )


for _op in ("Softmax", "LogSoftmax"):
    for _shape in ((1, 1024), (32, 1024), (1024, 1024)):
        register(softmax_case(_op, _shape))
    for _w in HIDDEN_WIDTHS:
        for _rows in (32, 1024):
            if _w != 1024:
                register(softmax_case(_op, (_rows, _w)))

def _np_sigmoid(inputs, attributes, acc=np.float32):
    x = inputs[0].astype(acc)
    return (1 / (1 + np.exp(-x))).astype(inputs[0].dtype)


def _torch_sigmoid(torch, tensors, attributes):
    return torch.sigmoid(tensors[0])


def sigmoid_case(n: int, dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) a Sigmoid case on a flat array (opset 13)."""
    def make(rng, dtype):
        return [(rng.standard_normal(n) * 4).astype(dtype)]

    return Case(
        name=f"Sigmoid_{n}", op_type="Sigmoid", opset=13, shape=(int(n),), attributes={},
        dtypes=tuple(np.dtype(d).name for d in dtypes), make_inputs=make,
        numpy_fn=_np_sigmoid, torch_fn=_torch_sigmoid, normops_fn="sigmoid", width=1,
        input_names=("X",),
    )


for _n in (1024, 65536, 1048576, 4194304):
    register(sigmoid_case(_n))

def _np_gelu(inputs, attributes, acc=np.float32):
    v = inputs[0].astype(acc)
    if len(inputs) > 1:
        v = v + inputs[1].astype(acc)
    if attributes.get("approximate", "none") == "tanh":
        g = np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))
    else:
        try:  # NumPy has no erf
            from scipy.special import erf
        except ImportError:
            from math import erf
            erf = np.vectorize(erf, otypes=[acc])
        g = erf(v / np.sqrt(2))
    return (0.5 * v * (1 + g)).astype(inputs[0].dtype)


def _torch_gelu(torch, tensors, attributes):
    v = tensors[0] if len(tensors) == 1 else tensors[0] + tensors[1]
    return torch.nn.functional.gelu(v, approximate=attributes.get("approximate", "none"))


def gelu_case(shape: tuple[int, ...], bias: bool = False, approximate: str = "none",
              dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) a Gelu (opset 20) or com.microsoft
    BiasGelu case; BiasGelu's B (the last dimension) is an initializer."""
    def make(rng, dtype):
        x = [(rng.standard_normal(shape) * 3).astype(dtype)]
        return x + [rng.standard_normal(shape[-1]).astype(dtype)] if bias else x

    op = "BiasGelu" if bias else "Gelu"
    return Case(
        name=f"{op}_{'x'.join(map(str, shape))}" + ("_tanh" if approximate == "tanh" else ""),
        op_type=op, opset=1 if bias else 20, shape=tuple(shape),
        attributes={} if bias else {"approximate": approximate},
        dtypes=tuple(np.dtype(d).name for d in dtypes), make_inputs=make,
        numpy_fn=_np_gelu, torch_fn=_torch_gelu, normops_fn="bias_gelu" if bias else "gelu", width=1,
        domain="com.microsoft" if bias else "", input_names=("A", "B") if bias else ("X",),
    )


register(gelu_case((1048576,)))
for _shape in ((4096, 256), (1024, 1024), (256, 4096)):
    register(gelu_case(_shape, bias=True))

#: The per-call overhead probe: a node so small that the time is the call.
OVERHEAD_CASE = register(normalization_case("LayerNormalization", (1, 8), hidden=True))
