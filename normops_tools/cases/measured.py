"""The benchmark's cases (the measured half of the one registry of cases,
`normops_tools.cases`).

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
    numpy_fn : callable(inputs, attributes, acc) -> ndarray, or None
        Equivalent NumPy expression accumulating in dtype `acc`; it also
        serves, with ``acc=np.float64``, as the accuracy check (None: no
        check, no NumPy runtime).
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
    #: outputs the ONNX node must declare after Y (BatchNormalization in
    #: training mode needs its running statistics); only Y is compared
    extra_outputs: tuple[str, ...] = ()
    #: what the case compares: "operator" (one ONNX node, every runtime),
    #: "small" (the same on a tiny input: the per-call cost), "route"
    #: (`normops.run` against the named function), "numpy-style" (normops'
    #: NumPy/SciPy-style function against NumPy/SciPy), "session" (an ONNX
    #: model in `normops.onnx.InferenceSession` against ONNX Runtime)
    group: str = "operator"
    #: the runtimes that measure this case (None: every runtime that can)
    contenders: tuple[str, ...] | None = None
    #: runtime name -> builder(inputs, threads) -> zero-argument callable,
    #: for the runtimes whose call is not the default one for the case
    builders: dict[str, Callable[..., Any]] = dataclasses.field(default_factory=dict)
    #: builder(inputs) -> onnx.ModelProto for ONNX Runtime (default: one node)
    onnx_model: Callable[..., Any] | None = None
    #: the label of the case's family in the charts (default: op_type)
    family_label: str | None = None

    @property
    def family(self) -> str:
        """The family the charts group this case in."""
        return self.family_label or self.op_type

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


def call_as_written(fn: Callable, args: Sequence[Any] = (), kwargs: dict | None = None) -> Callable[[], Any]:
    """A zero-argument callable that makes the call ``fn(a0, a1, k=v, ...)``
    as a user writes it, compiled from source as `timeit` does: unpacking
    ``fn(*args, **kwargs)`` in the timed lambda would add its own cost
    (about 0.3 µs a call here) to every call measured."""
    kwargs = dict(kwargs or {})
    names = {"fn": fn}
    parts = []
    for i, a in enumerate(args):
        names[f"a{i}"] = a
        parts.append(f"a{i}")
    for k, v in kwargs.items():
        if not k.isidentifier():
            raise ValueError(f"keyword {k!r} is not an identifier")
        names[f"k_{k}"] = v
        parts.append(f"{k}=k_{k}")
    return eval(f"lambda: fn({', '.join(parts)})", names)  # noqa: S307 - source built above


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

# ------------------------------------- Instance, Group and BatchNormalization

def _make_channel_inputs(shape, n_params, n_stats):
    def make(rng: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        x = rng.standard_normal(shape, dtype=np.float32)
        x += rng.uniform(-1.0, 1.0, size=shape[:2] + (1,) * (len(shape) - 2)).astype(np.float32)
        out = [x, rng.uniform(0.5, 1.5, n_params).astype(np.float32),
               rng.uniform(-0.5, 0.5, n_params).astype(np.float32)]
        if n_stats:
            out += [rng.uniform(-0.5, 0.5, n_stats).astype(np.float32),
                    rng.uniform(0.5, 1.5, n_stats).astype(np.float32)]
        return [a.astype(dtype) for a in out]

    return make


def _channel_view(a, ndim):
    return a.reshape((1, -1) + (1,) * (ndim - 2))


def _np_group_norm(inputs, attributes, acc=np.float32):
    x, scale, bias = (a.astype(acc, copy=False) for a in inputs)
    groups = attributes.get("num_groups", x.shape[1])  # InstanceNormalization: one per channel
    g = x.reshape(x.shape[0], groups, -1)
    d = g - g.mean(axis=2, keepdims=True)
    y = (d / np.sqrt(np.mean(d * d, axis=2, keepdims=True) + acc(attributes.get("epsilon", 1e-5))))
    y = y.reshape(x.shape) * _channel_view(scale, x.ndim) + _channel_view(bias, x.ndim)
    return y.astype(inputs[0].dtype if acc is np.float32 else acc, copy=False)


def _np_batch_norm(inputs, attributes, acc=np.float32):
    x, scale, bias, mean, var = (a.astype(acc, copy=False) for a in inputs)
    if attributes.get("training_mode"):
        axes = (0,) + tuple(range(2, x.ndim))
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    inv = 1 / np.sqrt(var + acc(attributes.get("epsilon", 1e-5)))
    y = (x - _channel_view(mean, x.ndim)) * _channel_view(inv * scale, x.ndim) + _channel_view(bias, x.ndim)
    return y.astype(inputs[0].dtype if acc is np.float32 else acc, copy=False)


def _torch_instance_norm(torch, tensors, attributes):
    x, scale, bias = tensors
    return torch.nn.functional.instance_norm(x, weight=scale, bias=bias, eps=attributes.get("epsilon", 1e-5))


def _torch_group_norm(torch, tensors, attributes):
    x, scale, bias = tensors
    return torch.nn.functional.group_norm(x, attributes["num_groups"], scale, bias,
                                          attributes.get("epsilon", 1e-5))


def _torch_batch_norm(torch, tensors, attributes):
    x, scale, bias, mean, var = tensors
    if attributes.get("training_mode"):
        mean, var = mean.clone(), var.clone()  # torch updates them in place
    return torch.nn.functional.batch_norm(x, mean, var, scale, bias, bool(attributes.get("training_mode")),
                                          1 - attributes.get("momentum", 0.9), attributes.get("epsilon", 1e-5))


def channel_norm_case(op_type: str, shape: Sequence[int], *, num_groups: int | None = None,
                      training_mode: int = 0, dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) an Instance/Group/BatchNormalization case
    (GroupNormalization at opset 21: per-channel scale and bias)."""
    shape = tuple(int(d) for d in shape)
    C = shape[1]
    spatial = int(np.prod(shape[2:], dtype=np.int64))
    name = f"{op_type}_{'x'.join(map(str, shape))}"
    attrs: dict[str, Any] = {"epsilon": 1e-5}
    if op_type == "InstanceNormalization":
        opset, fn, np_fn, torch_fn, width, n_stats = 22, "instance_normalization", _np_group_norm, \
            _torch_instance_norm, spatial, 0
        names = ("input", "scale", "B")
    elif op_type == "GroupNormalization":
        opset, fn, np_fn, torch_fn, width, n_stats = 21, "group_normalization", _np_group_norm, \
            _torch_group_norm, C // num_groups * spatial, 0
        attrs["num_groups"] = int(num_groups)
        name += f"_g{num_groups}"
        names = ("X", "scale", "bias")
    else:
        opset, fn, np_fn, torch_fn, n_stats = 15, "batch_normalization", _np_batch_norm, _torch_batch_norm, C
        width = shape[0] * spatial if training_mode else spatial
        if training_mode:
            attrs.update(training_mode=1, momentum=0.9)
            name += "_training"
        names = ("X", "scale", "B", "input_mean", "input_var")
    return Case(
        extra_outputs=("running_mean", "running_var") if training_mode else (),
        name=name, op_type=op_type, opset=opset, shape=shape, attributes=attrs,
        dtypes=tuple(np.dtype(d).name for d in dtypes), make_inputs=_make_channel_inputs(shape, C, n_stats),
        numpy_fn=np_fn, torch_fn=torch_fn, normops_fn=fn, width=width, input_names=names,
    )


for _shape in ((8, 16, 128), (4, 32, 16, 16), (2, 8, 64, 8), (2, 16, 4, 8, 8)):
    register(channel_norm_case("InstanceNormalization", _shape))
for _shape in ((32, 128), (8, 16, 64), (4, 32, 16, 16), (8, 64, 8, 8)):
    register(channel_norm_case("BatchNormalization", _shape))
register(channel_norm_case("BatchNormalization", (4, 32, 8, 8), training_mode=1))
register(channel_norm_case("GroupNormalization", (8, 16, 128), num_groups=4))
register(channel_norm_case("GroupNormalization", (4, 32, 16, 16), num_groups=8))

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


def _np_hardmax(inputs, attributes, acc=np.float32):
    x = inputs[0]
    first = np.expand_dims(np.argmax(x, axis=attributes["axis"]), attributes["axis"])
    y = np.zeros_like(x)
    np.put_along_axis(y, first, 1, axis=attributes["axis"])
    return y


def _torch_hardmax(torch, tensors, attributes):
    x, axis = tensors[0], attributes["axis"]
    return torch.zeros_like(x).scatter_(axis, torch.argmax(x, dim=axis, keepdim=True), 1.0)


_SOFTMAX_OPS = {
    "Softmax": ("ops.softmax", _np_softmax, _torch_softmax),
    "LogSoftmax": ("ops.log_softmax", _np_log_softmax, _torch_log_softmax),
    "Hardmax": ("ops.hardmax", _np_hardmax, _torch_hardmax),
}


def softmax_case(op_type: str, shape: Sequence[int], *, axis: int = -1,
                 dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) a Softmax / LogSoftmax / Hardmax case (opset 13)."""
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
# the tail-latency case measured with one core busy (fast Softmax)
register(softmax_case("Softmax", (256, 1024)))
register(softmax_case("Hardmax", (256, 1024)))

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


def _np_mvn(inputs, attributes, acc=np.float32):
    x = inputs[0].astype(acc)
    axes = tuple(attributes["axes"])
    d = x - x.mean(axis=axes, keepdims=True)
    return (d / np.sqrt((d * d).mean(axis=axes, keepdims=True))).astype(inputs[0].dtype)


def _torch_mvn(torch, tensors, attributes):
    x = tensors[0]
    dims = list(attributes["axes"])
    d = x - x.mean(dim=dims, keepdim=True)
    return d / (d * d).mean(dim=dims, keepdim=True).sqrt()


def _np_lp(inputs, attributes, acc=np.float32):
    x = inputs[0].astype(acc)
    a = np.abs(x) if attributes["p"] == 1 else x * x
    norm = a.sum(axis=attributes["axis"], keepdims=True)
    norm = norm if attributes["p"] == 1 else np.sqrt(norm)
    return (x / np.where(norm == 0, 1, norm)).astype(inputs[0].dtype)


def _torch_lp(torch, tensors, attributes):
    return torch.nn.functional.normalize(tensors[0], p=attributes["p"], dim=attributes["axis"], eps=0.0)


def row_divide_case(op_type: str, shape: Sequence[int], attributes: dict,
                    dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) a MeanVarianceNormalization (opset 13,
    ``axes``) or LpNormalization (opset 22, ``axis``, ``p``) case."""
    shape = tuple(int(d) for d in shape)
    if op_type == "MeanVarianceNormalization":
        suffix, np_fn, torch_fn, fn, opset = "_axes" + "".join(map(str, attributes["axes"])), _np_mvn, \
            _torch_mvn, "mean_variance_normalization", 13
        width = int(np.prod([shape[a] for a in attributes["axes"]]))
    else:
        suffix, np_fn, torch_fn, fn, opset = f"_axis{attributes['axis']}_p{attributes['p']}", _np_lp, \
            _torch_lp, "lp_normalization", 22
        width = shape[attributes["axis"]]

    def make(rng, dtype):
        return [(rng.standard_normal(shape) * 3 + 1).astype(dtype)]

    return Case(
        name=f"{op_type}_{'x'.join(map(str, shape))}{suffix}", op_type=op_type, opset=opset,
        shape=shape, attributes=dict(attributes), dtypes=tuple(np.dtype(d).name for d in dtypes),
        make_inputs=make, numpy_fn=np_fn, torch_fn=torch_fn, normops_fn=fn, width=width,
        input_names=("X",) if op_type == "MeanVarianceNormalization" else ("input",),
    )


register(row_divide_case("MeanVarianceNormalization", (8, 64, 32, 32), {"axes": (0, 2, 3)}))
register(row_divide_case("MeanVarianceNormalization", (32, 64, 1024), {"axes": (2,)}))
register(row_divide_case("LpNormalization", (1024, 1024), {"axis": 1, "p": 2}))
register(row_divide_case("LpNormalization", (1024, 1024), {"axis": 0, "p": 1}))
# ------------------------------------------------ ArgMax, ArgMin, CumSum, CumProd

def _np_arg(fn):
    def run(inputs, attributes, acc=np.float32):
        return fn(inputs[0], axis=attributes["axis"], keepdims=bool(attributes["keepdims"]))
    return run


def _torch_arg(name):
    def run(torch, tensors, attributes):
        return getattr(torch, name)(tensors[0], dim=attributes["axis"], keepdim=bool(attributes["keepdims"]))
    return run


def _np_cumsum(inputs, attributes, acc=np.float32):
    return np.cumsum(inputs[0], axis=int(inputs[1]), dtype=inputs[0].dtype)


def _torch_cumsum(torch, tensors, attributes):
    return torch.cumsum(tensors[0], dim=int(tensors[1]))


def _np_cumprod(inputs, attributes, acc=np.float32):
    return np.cumprod(inputs[0], axis=int(inputs[1]), dtype=inputs[0].dtype)


def _torch_cumprod(torch, tensors, attributes):
    return torch.cumprod(tensors[0], dim=int(tensors[1]))


_ARG_OR_CUMULATIVE_OPS = {
    # op_type: (opset, normops function, numpy, torch)
    "ArgMax": (13, "ops.arg_max", _np_arg(np.argmax), _torch_arg("argmax")),
    "ArgMin": (13, "ops.arg_min", _np_arg(np.argmin), _torch_arg("argmin")),
    "CumSum": (14, "ops.cum_sum", _np_cumsum, _torch_cumsum),
    "CumProd": (26, "ops.cum_prod", _np_cumprod, _torch_cumprod),
}


def arg_or_cumulative_case(op_type: str, shape: Sequence[int], axis: int,
                dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) an ArgMax / ArgMin / CumSum / CumProd
    case; the axis of CumSum and CumProd is their second input (an
    initializer in the ONNX model)."""
    opset, fn, np_fn, torch_fn = _ARG_OR_CUMULATIVE_OPS[op_type]
    shape = tuple(int(d) for d in shape)
    cumsum = op_type in ("CumSum", "CumProd")

    def make(rng, dtype):
        if op_type == "CumProd":
            # factors exp(N(0, 0.005^2)): the logarithm of a running product is
            # a random walk without drift (sd 10 after 4M terms), so products
            # stay finite and normal; 1 + N(0, 0.01^2) drifts down to
            # subnormals, where every runtime crawls and the case measures that.
            x = np.exp(0.005 * rng.standard_normal(shape)).astype(dtype)
        else:
            x = (rng.standard_normal(shape) * 3).astype(dtype)
        return [x, np.array(axis, np.int64)] if cumsum else [x]

    return Case(
        name=f"{op_type}_{'x'.join(map(str, shape))}_axis{axis}",
        op_type=op_type, opset=opset, shape=shape,
        attributes={} if cumsum else {"axis": int(axis), "keepdims": 1},
        dtypes=tuple(np.dtype(d).name for d in dtypes), make_inputs=make,
        numpy_fn=np_fn, torch_fn=torch_fn, normops_fn=fn, width=shape[axis],
        input_names=("x", "axis") if cumsum else ("data",),
    )


for _op in _ARG_OR_CUMULATIVE_OPS:
    for _shape, _axis in (((1024, 4096), -1), ((1024, 4096), 0), ((4194304,), 0), ((32, 1024, 128), 1)):
        register(arg_or_cumulative_case(_op, _shape, _axis))
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


# ------------------------------------------------------------ the Reduce* family

def _reduce_axes(inputs):
    return tuple(int(a) for a in inputs[1]) if len(inputs) > 1 else None


_NP_REDUCE = {
    # op_type: NumPy expression of (x, axes, acc)
    "ReduceSum": lambda x, ax, acc: x.sum(axis=ax, dtype=acc),
    "ReduceMean": lambda x, ax, acc: x.mean(axis=ax, dtype=acc),
    "ReduceMax": lambda x, ax, acc: x.max(axis=ax).astype(acc),
    "ReduceMin": lambda x, ax, acc: x.min(axis=ax).astype(acc),
    "ReduceProd": lambda x, ax, acc: x.prod(axis=ax, dtype=acc),
    "ReduceL1": lambda x, ax, acc: np.abs(x).sum(axis=ax, dtype=acc),
    "ReduceL2": lambda x, ax, acc: np.sqrt((x * x).sum(axis=ax, dtype=acc)),
    "ReduceSumSquare": lambda x, ax, acc: (x * x).sum(axis=ax, dtype=acc),
    "ReduceLogSum": lambda x, ax, acc: np.log(x.sum(axis=ax, dtype=acc)),
    "ReduceLogSumExp": lambda x, ax, acc: _np_logsumexp(x.astype(acc, copy=False), ax),
}

_TORCH_REDUCE = {
    "ReduceSum": lambda t, x, d: t.sum(x, dim=d),
    "ReduceMean": lambda t, x, d: t.mean(x, dim=d),
    "ReduceMax": lambda t, x, d: t.amax(x, dim=d),
    "ReduceMin": lambda t, x, d: t.amin(x, dim=d),
    "ReduceL1": lambda t, x, d: t.linalg.vector_norm(x, 1, dim=d),
    "ReduceL2": lambda t, x, d: t.linalg.vector_norm(x, 2, dim=d),
    "ReduceSumSquare": lambda t, x, d: t.sum(x * x, dim=d),
    "ReduceLogSum": lambda t, x, d: t.log(t.sum(x, dim=d)),
    "ReduceLogSumExp": lambda t, x, d: t.logsumexp(x, dim=d),
}


def _np_logsumexp(x, axes):
    m = x.max(axis=axes, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=axes, keepdims=True))).squeeze(axis=axes)


def reduce_case(op_type: str, shape: Sequence[int], axes: Sequence[int] | None,
                dtypes: Sequence[str] = ("float32",)) -> Case:
    """Build (without registering) a Reduce* case (opset 18, ReduceSum 13:
    axes as an initializer input; None reduces every axis), keepdims=0."""
    shape = tuple(int(d) for d in shape)
    ndim = len(shape)
    norm_axes = tuple(range(ndim)) if axes is None else tuple(a % ndim for a in axes)
    np_expr = _NP_REDUCE[op_type]
    torch_expr = _TORCH_REDUCE.get(op_type)

    def make(rng, dtype):
        if op_type == "ReduceProd":  # products of many terms stay finite
            x = rng.uniform(0.999, 1.001, shape)
        elif op_type == "ReduceLogSum":
            x = rng.uniform(0.5, 1.5, shape)
        else:
            x = rng.standard_normal(shape)
        x = x.astype(np.float32).astype(dtype)
        return [x] if axes is None else [x, np.array(axes, np.int64)]

    def numpy_fn(inputs, attributes, acc=np.float32):
        ax = _reduce_axes(inputs)
        return np.asarray(np_expr(inputs[0], ax, acc)).astype(
            inputs[0].dtype if acc is np.float32 else acc)

    def torch_fn(torch, tensors, attributes):
        dims = list(range(ndim)) if len(tensors) < 2 else [int(a) for a in tensors[1]]
        return torch_expr(torch, tensors[0], dims)

    label = "all" if axes is None else "axis" + ",".join(map(str, axes))
    snake = "".join("_" + c.lower() if c.isupper() else c for c in op_type[6:]).lstrip("_")
    return Case(
        name=f"{op_type}_{'x'.join(map(str, shape))}" + ("" if ndim == 1 else f"_{label}"),
        op_type=op_type, opset=13 if op_type == "ReduceSum" else 18, shape=shape,
        attributes={"keepdims": 0}, dtypes=tuple(np.dtype(d).name for d in dtypes), make_inputs=make,
        numpy_fn=numpy_fn, torch_fn=None if torch_expr is None else torch_fn,
        normops_fn="reduce_" + snake, width=int(np.prod([shape[a] for a in norm_axes], dtype=np.int64)),
        input_names=("data", "axes"),
    )


for _op in _NP_REDUCE:
    register(reduce_case(_op, (1024, 4096), (-1,)))
    register(reduce_case(_op, (1024, 4096), (0,)))
    register(reduce_case(_op, (1024, 4096), None))
    register(reduce_case(_op, (4194304,), None))
    register(reduce_case(_op, (32, 1024, 128), (1,)))


# ----------------------------------------------- small inputs: the per-call cost
#
# The same ONNX nodes on a 4x8 float32 input, where the time is the call
# itself (validation, dispatch, allocation), against ONNX Runtime and NumPy.

SMALL_SHAPE = (4, 8)


def _small(case: Case) -> Case:
    return dataclasses.replace(case, group="small")


for _op in ("ReduceMax", "ReduceSum", "ReduceMean", "ReduceLogSumExp"):
    register(_small(reduce_case(_op, SMALL_SHAPE, (1,))))
for _op in ("ArgMax", "CumSum"):
    register(_small(arg_or_cumulative_case(_op, SMALL_SHAPE, 1)))
for _op in ("Softmax", "LogSoftmax"):
    register(_small(softmax_case(_op, SMALL_SHAPE)))
register(_small(normalization_case("LayerNormalization", SMALL_SHAPE)))
register(_small(normalization_case("RMSNormalization", SMALL_SHAPE)))


# ------------------------------------- `normops.run` against the named function

def _import_normops():
    import normops

    return normops


def _named_callable(case: Case, mode: str):
    def build(inputs, threads):
        fn = _import_normops()
        for part in case.normops_fn.split("."):
            fn = getattr(fn, part)
        return call_as_written(fn, inputs, dict(case.attributes, mode=mode, n_threads=threads))

    return build


def _run_callable(case: Case, mode: str):
    def build(inputs, threads):
        run = _import_normops().run
        op, attrs, opset, domain = case.op_type, dict(case.attributes), case.opset_import or case.opset, \
            case.domain
        return call_as_written(run, (op, inputs, attrs), dict(opset=opset, domain=domain, mode=mode,
                                                               n_threads=threads))

    return build


def route_case(case: Case, mode: str = "exact") -> Case:
    """`normops.run(op_type, ...)` (runtime ``normops-run``) against the
    named function (``normops-named``) on the inputs of `case`."""
    return dataclasses.replace(
        case, name=f"run_{case.name}" + ("_fast" if mode == "fast" else ""), group="route",
        contenders=("normops-run", "normops-named"),
        builders={"normops-run": _run_callable(case, mode), "normops-named": _named_callable(case, mode)},
        family_label=f"normops.run {case.op_type}")


for _shape in (SMALL_SHAPE, (1, 1024), (32, 4096)):
    register(route_case(softmax_case("Softmax", _shape)))
    register(route_case(softmax_case("Softmax", _shape), mode="fast"))
    register(route_case(normalization_case("LayerNormalization", _shape)))
    register(route_case(reduce_case("ReduceMax", _shape, (1,))))
    register(route_case(arg_or_cumulative_case("CumSum", _shape, 1)))


# ------------------------------------ NumPy/SciPy-style functions against theirs

#: the NumPy/SciPy-style functions that mirror scipy.special (the others: numpy)
SCIPY_STYLE = ("logsumexp", "softmax", "log_softmax")


def _numpy_style_peer(name: str):
    """(runtime, a function returning the NumPy or SciPy function `name`
    mirrors); scipy is imported only when the case runs."""
    if name in SCIPY_STYLE:
        def peer():
            import scipy.special

            return getattr(scipy.special, name)

        return "scipy", peer
    return "numpy", lambda: getattr(np, name)


#: the NumPy/SciPy-style functions and whether they take ``mode=``
NUMPY_STYLE = {"sum": True, "mean": True, "max": True, "min": True, "prod": True, "argmax": False,
               "argmin": False, "cumsum": False, "cumprod": False, "logsumexp": True,
               "softmax": True, "log_softmax": True}
NUMPY_STYLE_SHAPES = (SMALL_SHAPE, (64, 1024), (1024, 4096))


def numpy_style_case(name: str, shape: Sequence[int], axis: int = 1) -> Case:
    """``normops.<name>(x, axis=axis)`` against NumPy's or SciPy's function
    of the same name on the same arguments (float32)."""
    shape = tuple(int(d) for d in shape)
    peer, peer_fn = _numpy_style_peer(name)

    def make(rng, dtype):
        if name == "prod":
            x = rng.uniform(0.999, 1.001, shape)
        elif name == "cumprod":
            x = np.exp(0.005 * rng.standard_normal(shape))
        else:
            x = rng.standard_normal(shape) * 3
        return [x.astype(dtype)]

    def normops_callable(mode):
        def build(inputs, threads):
            fn = getattr(_import_normops(), name)
            kw = {"axis": axis, "n_threads": threads}
            if NUMPY_STYLE[name]:
                kw["mode"] = mode
            return call_as_written(fn, inputs[:1], kw)

        return build

    def peer_callable(inputs, threads):
        return call_as_written(peer_fn(), inputs[:1], {"axis": axis})

    def numpy_fn(inputs, attributes, acc=np.float32):
        x = inputs[0]
        if name in ("argmax", "argmin"):
            return getattr(np, name)(x, axis=axis)
        if acc is not np.float32:
            x = x.astype(acc)
        return np.asarray(peer_fn()(x, axis=axis))

    builders = {"normops-exact": normops_callable("exact"), peer: peer_callable}
    contenders = ("normops-exact", peer)
    if NUMPY_STYLE[name]:
        builders["normops-fast"] = normops_callable("fast")
        contenders = ("normops-exact", "normops-fast", peer)
    return Case(
        name=f"np_{name}_{'x'.join(map(str, shape))}_axis{axis}", op_type=name, opset=0, shape=shape,
        attributes={"axis": axis}, dtypes=("float32",), make_inputs=make, numpy_fn=numpy_fn,
        torch_fn=None, normops_fn=name, width=shape[axis], group="numpy-style",
        contenders=contenders, builders=builders, family_label=f"normops.{name}",
    )


for _name in NUMPY_STYLE:
    for _shape in NUMPY_STYLE_SHAPES:
        register(numpy_style_case(_name, _shape))


# ---------------------------------------------- a 10-node model in a session

#: the chain of the 10-node session case; X feeds the first node, each node the next
SESSION_CHAIN = ("LayerNormalization", "Softmax", "Sigmoid", "RMSNormalization", "LogSoftmax") * 2


def _session_model(inputs):
    from onnx import helper, numpy_helper

    x, ln_scale, ln_bias, rms_scale = inputs
    inits = [numpy_helper.from_array(a, n) for a, n in
             ((ln_scale, "ln_scale"), (ln_bias, "ln_bias"), (rms_scale, "rms_scale"))]
    nodes, prev = [], "X"
    for i, op in enumerate(SESSION_CHAIN):
        out = "Y" if i == len(SESSION_CHAIN) - 1 else f"h{i}"
        ins = {"LayerNormalization": [prev, "ln_scale", "ln_bias"],
               "RMSNormalization": [prev, "rms_scale"]}.get(op, [prev])
        attrs = {"axis": -1} if op != "Sigmoid" else {}
        if op in ("LayerNormalization", "RMSNormalization"):
            attrs["epsilon"] = 1e-5
        nodes.append(helper.make_node(op, ins, [out], name=f"n{i}_{op}", **attrs))
        prev = out
    t = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph(nodes, "session10", [helper.make_tensor_value_info("X", t, x.shape)],
                              [helper.make_tensor_value_info("Y", t, x.shape)], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)


def _np_session(inputs, attributes, acc=np.float32):
    x, ln_scale, ln_bias, rms_scale = inputs
    y = x.astype(acc)
    steps = {
        "LayerNormalization": lambda v: _np_layer_norm([v, ln_scale, ln_bias], {"axis": -1}, acc),
        "Softmax": lambda v: _np_softmax([v], {"axis": -1}, acc),
        "Sigmoid": lambda v: _np_sigmoid([v], {}, acc),
        "RMSNormalization": lambda v: _np_rms_norm([v, rms_scale.astype(acc)], {"axis": -1}, acc),
        "LogSoftmax": lambda v: _np_log_softmax([v], {"axis": -1}, acc),
    }
    for op in SESSION_CHAIN:
        y = steps[op](y)
    return y


def session_case(shape: Sequence[int]) -> Case:
    """The 10-node model of `SESSION_CHAIN` in `normops.onnx.InferenceSession`
    (``normops-exact`` / ``normops-fast``) against ONNX Runtime."""
    shape = tuple(int(d) for d in shape)
    make_ln = _make_norm_inputs(shape, -1, True)

    def make(rng, dtype):
        x, scale, bias = make_ln(rng, dtype)
        return [x, scale, bias, rng.uniform(0.5, 1.5, shape[-1:]).astype(dtype)]

    def normops_session(mode):
        def build(inputs, threads):
            from normops.onnx import InferenceSession

            sess = InferenceSession(_session_model(inputs).SerializeToString(), mode=mode,
                                    n_threads=threads)
            feeds = {"X": inputs[0]}
            return lambda: sess.run(None, feeds)

        return build

    return Case(
        name=f"session10_{'x'.join(map(str, shape))}", op_type="Session", opset=23, shape=shape,
        attributes={}, dtypes=("float32",), make_inputs=make, numpy_fn=_np_session, torch_fn=None,
        normops_fn="onnx.InferenceSession", width=shape[-1], group="session",
        contenders=("normops-exact", "normops-fast", "onnxruntime"),
        builders={"normops-exact": normops_session("exact"), "normops-fast": normops_session("fast")},
        onnx_model=_session_model, family_label="10-node session",
    )


for _shape in ((4, 64), (64, 1024)):
    register(session_case(_shape))


# ---------------------------------------------- whole models: normops + ONNX Runtime

#: (name, builder keyword arguments, input shape) of the model cases: a
#: transformer encoder block and a convolutional block with
#: GroupNormalization (`normops.onnx.examples`), each at two sizes. The
#: normops side runs the normalisations, Softmax, Sigmoid and Gelu and
#: hands every other node to ONNX Runtime (docs/onnx.md, "Models with other
#: operators"); ONNX Runtime alone runs the same model.
MODEL_CASES = (
    ("transformer", {"d_model": 256, "heads": 4, "ffn": 1024}, (1, 128, 256)),
    ("transformer", {"d_model": 512, "heads": 8, "ffn": 2048}, (1, 256, 512)),
    ("convgn", {"channels": 64, "groups": 32}, (1, 64, 32, 32)),
    ("convgn", {"channels": 128, "groups": 32}, (1, 128, 64, 64)),
)


def _example_model(kind, kwargs):
    def build(inputs=None):
        from normops.onnx import examples

        if kind == "transformer":
            return examples.transformer_block(**kwargs)
        return examples.conv_block(**kwargs)

    return build


def model_case(kind: str, kwargs: dict, shape: Sequence[int]) -> Case:
    """A whole example model in `normops.onnx.InferenceSession` (normops'
    nodes on normops, the others on ONNX Runtime) against ONNX Runtime
    alone; no NumPy expression, so no accuracy column (the tests compare
    the outputs: tests/test_onnx_models.py)."""
    shape = tuple(int(d) for d in shape)
    build_model = _example_model(kind, kwargs)

    def make(rng, dtype):
        return [rng.standard_normal(shape, dtype=np.float32).astype(dtype)]

    def normops_session(mode):
        def build(inputs, threads):
            from normops.onnx import InferenceSession

            sess = InferenceSession(build_model().SerializeToString(), mode=mode, n_threads=threads)
            feeds = {"x": inputs[0]}
            return lambda: sess.run(None, feeds)

        return build

    if kind == "transformer":
        label = "transformer block"
        detail = f"d{kwargs['d_model']}"
    else:
        label = "conv block (GroupNormalization)"
        detail = f"c{kwargs['channels']}"
    return Case(
        name=f"model_{kind}_{detail}_{'x'.join(map(str, shape))}", op_type="Model", opset=21, shape=shape,
        attributes={}, dtypes=("float32",), make_inputs=make, numpy_fn=None, torch_fn=None,
        normops_fn="onnx.InferenceSession", width=shape[-1], input_names=("x",), group="session",
        contenders=("normops-exact", "normops-fast", "onnxruntime"),
        builders={"normops-exact": normops_session("exact"), "normops-fast": normops_session("fast")},
        onnx_model=build_model, family_label=label,
    )


for _kind, _kwargs, _shape in MODEL_CASES:
    register(model_case(_kind, _kwargs, _shape))
