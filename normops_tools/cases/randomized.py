"""The randomized one-node cases: a generator per operator (registered with
:func:`generator`) and the cases made from them for every version served."""

from __future__ import annotations

import dataclasses
import zlib
from typing import Callable

import numpy as np


FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int32", "int64")


def dtype_named(name: str) -> np.dtype:
    """The NumPy dtype of a dtype name, bfloat16 (ml_dtypes) included."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


@dataclasses.dataclass(frozen=True)
class Generator:
    """How to make random cases of one operator.

    ``make(g, version, dtype)`` returns ``(inputs, attributes)``: inputs in
    ONNX order (None for an absent optional input), attributes valid at
    ``version``. ``dtypes(version)`` lists the candidate dtypes (each is
    tried; what ORT or normops does not take is recorded, not failed).
    ``versions`` are the ONNX since_versions, used only while the operator
    is not served (then the registry's versions are used).
    """

    op_type: str
    make: Callable
    dtypes: Callable[[int], tuple]
    versions: tuple
    domain: str = ""
    model_opset: Callable[[int], int] = staticmethod(lambda v: v)


GENERATORS: dict[tuple[str, str], Generator] = {}


def generator(op_type, *, versions, dtypes=FLOATS, domain="", model_opset=None):
    """Decorator registering ``make(g, version, dtype)`` for ``op_type``.

    ``dtypes`` is a tuple of names or a function of the version.
    """

    def register(make):
        key = (domain, op_type)
        if key in GENERATORS:
            raise RuntimeError(f"compare-ort generator for {op_type} registered twice")
        dt = dtypes if callable(dtypes) else (lambda v, _d=tuple(dtypes): _d)
        GENERATORS[key] = Generator(op_type, make, dt, tuple(versions), domain,
                                    model_opset or (lambda v: v))
        return make

    return register


class Gen:
    """A seeded random source with the shapes and values the generators share."""

    WIDTHS = (1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 63)

    def __init__(self, rng: np.random.Generator, specials: bool):
        self.rng = rng
        self.specials = specials  # this case injects special values

    def coin(self, p=0.5) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def shape(self, rank=None, min_rank=1, max_rank=5, max_size=6000):
        if rank is None:
            rank = int(self.rng.integers(min_rank, max_rank + 1))
        dims = [self.choice(self.WIDTHS) for _ in range(rank)]
        if self.coin(0.15) and rank:
            dims[int(self.rng.integers(rank))] = self.choice((129, 257, 1031))
        while int(np.prod(dims)) > max_size:
            i = int(np.argmax(dims))
            dims[i] = max(1, dims[i] // 2 | 1)
        return tuple(dims)

    def axis(self, rank, negative=True):
        return int(self.rng.integers(-rank if negative else 0, rank))

    def axes(self, rank, negative=True):
        """A random non-empty subset of the axes, in random order and sign."""
        k = int(self.rng.integers(1, rank + 1))
        axes = [int(a) for a in self.rng.permutation(rank)[:k]]
        if negative:
            axes = [a - rank if self.coin() else a for a in axes]
        return axes

    def values(self, shape, dtype, *, low=None, high=None, positive=False, specials=True):
        """Random values of ``dtype``; special values when the case asks for them."""
        dtype = np.dtype(dtype)
        rng = self.rng
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            lo = max(info.min, -40 if low is None else low)
            hi = min(info.max, 40 if high is None else high)
            if positive:
                lo = max(lo, 1)
            return rng.integers(lo, hi + 1, size=shape).astype(dtype)
        scale = self.choice((1.0, 1.0, 3.0, 0.01, 100.0))
        if low is not None:
            x = rng.uniform(low, high, size=shape)
        else:
            x = rng.standard_normal(shape) * scale + self.choice((0.0, 0.0, 1.0, -5.0))
        if positive:
            x = np.abs(x) + 1e-3
        x = x.astype(np.float32 if dtype.itemsize < 4 else dtype)
        if specials and self.specials and x.size:
            x = self._inject(x, dtype, positive)
        return x.astype(dtype)

    def _inject(self, x, dtype, positive):
        narrow = dtype.name == "float16"
        kinds = ["nan", "inf", "-inf", "-0", "subnormal", "large"]
        if positive:
            kinds = ["nan", "inf", "subnormal", "large", "-0"]
        chosen = [k for k in kinds if self.coin(0.35)] or [self.choice(kinds)]
        flat = x.reshape(-1).copy()
        finfo = np.finfo(np.float16 if narrow else (np.float64 if dtype == np.float64 else np.float32))
        for kind in chosen:
            n = max(1, int(flat.size * self.choice((0.01, 0.05, 0.2))))
            where = self.rng.integers(flat.size, size=n)
            value = {
                "nan": np.nan, "inf": np.inf, "-inf": -np.inf, "-0": -0.0,
                "subnormal": float(finfo.smallest_subnormal) * 3,
                "large": 3e4 if narrow else 1e15,
            }[kind]
            if kind == "large" and not positive and self.coin():
                value = -value
            flat[where] = value
        return flat.reshape(x.shape)


def _parameter(g, shape, dtype, *, around=1.0):
    """Scale/bias parameters: finite, no special values."""
    return g.values(shape, dtype, low=around - 1.5, high=around + 1.5, specials=False)


def _epsilon(g, attrs):
    if g.coin(0.6):
        attrs["epsilon"] = g.choice((1e-5, 1e-3, 0.1, 1e-6))


# Normalisations ------------------------------------------------------------


@generator("LayerNormalization", versions=(17,))
def _layer_normalization(g, version, dtype):
    shape = g.shape()
    axis = g.axis(len(shape))
    attrs = {} if g.coin(0.2) and axis == -1 else {"axis": axis}
    _epsilon(g, attrs)
    suffix = shape[axis:]
    x = g.values(shape, dtype)
    inputs = [x, _parameter(g, suffix, dtype)]
    if g.coin():
        inputs.append(_parameter(g, suffix, dtype, around=0.0))
    return inputs, attrs


@generator("RMSNormalization", versions=(23,))
def _rms_normalization(g, version, dtype):
    shape = g.shape()
    axis = g.axis(len(shape))
    attrs = {"axis": axis}
    _epsilon(g, attrs)
    return [g.values(shape, dtype), _parameter(g, shape[axis:], dtype)], attrs


# ONNX Runtime registers it in the default domain since 1; a model stamped
# below opset 7 only runs through ORT's legacy support, so the model is 17.
@generator("SimplifiedLayerNormalization", versions=(1,), model_opset=lambda v: max(v, 17))
def _simplified_layer_normalization(g, version, dtype):
    shape = g.shape()
    axis = g.axis(len(shape))
    attrs = {"axis": axis}
    _epsilon(g, attrs)
    # Y has the scale's dtype (type V): a float32 scale with a narrow X too.
    scale_dtype = np.float32 if dtype.itemsize == 2 and g.coin(0.3) else dtype
    return [g.values(shape, dtype), _parameter(g, shape[axis:], scale_dtype)], attrs


def _instance_like(g, dtype, min_rank=3):
    shape = g.shape(min_rank=min_rank, max_rank=5)
    return shape, g.values(shape, dtype)


@generator("InstanceNormalization", versions=(1, 6, 22))
def _instance_normalization(g, version, dtype):
    shape, x = _instance_like(g, dtype)
    c = shape[1]
    attrs = {}
    _epsilon(g, attrs)
    return [x, _parameter(g, (c,), dtype), _parameter(g, (c,), dtype, around=0.0)], attrs


@generator("GroupNormalization", versions=(18, 21))
def _group_normalization(g, version, dtype):
    groups = g.choice((1, 2, 3, 4))
    shape = list(g.shape(min_rank=3, max_rank=5, max_size=3000))
    shape[1] = groups * g.choice((1, 2, 3, 5))
    x = g.values(tuple(shape), dtype)
    n = groups if version < 21 else shape[1]
    attrs = {"num_groups": groups}
    _epsilon(g, attrs)
    return [x, _parameter(g, (n,), dtype), _parameter(g, (n,), dtype, around=0.0)], attrs


@generator("BatchNormalization", versions=(1, 6, 7, 9, 14, 15))
def _batch_normalization(g, version, dtype):
    shape = g.shape(min_rank=2 if version >= 9 else 3, max_rank=5)
    c = shape[1]
    attrs = {}
    _epsilon(g, attrs)
    if version < 7:
        attrs["is_test"] = 1
    if version == 1:
        attrs["consumed_inputs"] = [0, 0, 0, 1, 1]  # required at 1: mean and var updated in place
    params = [_parameter(g, (c,), dtype), _parameter(g, (c,), dtype, around=0.0),
              _parameter(g, (c,), dtype, around=0.0),
              g.values((c,), dtype, low=0.1, high=3.0, specials=False)]
    if g.coin(0.3):
        # training: training_mode=1 from 14; before, the legacy form (is_test=0
        # at 1 and 6; at 7 and 9 the node declares all five outputs, which
        # normops.run spells training_mode=1)
        if version < 7:
            attrs["is_test"] = 0
        else:
            attrs["training_mode"] = 1
        attrs["momentum"] = g.choice((0.9, 0.5))
    return [g.values(shape, dtype), *params], attrs


@generator("MeanVarianceNormalization", versions=(9, 13))
def _mean_variance_normalization(g, version, dtype):
    # axes within the rank (normops refuses out-of-range axes, ORT drops
    # them), default (0, 2, 3) only at rank 4 and above
    shape = g.shape(min_rank=1, max_rank=5)
    attrs = {}
    if len(shape) < 4 or g.coin(0.6):
        attrs["axes"] = sorted(set(g.axes(len(shape), negative=False))) or [0]
    return [g.values(shape, dtype)], attrs


@generator("LpNormalization", versions=(1, 22))
def _lp_normalization(g, version, dtype):
    shape = g.shape()
    attrs = {"axis": g.axis(len(shape)), "p": g.choice((1, 2))}
    return [g.values(shape, dtype)], attrs


# Softmax family and activations ---------------------------------------------


def _softmax_like(g, version, dtype):
    shape = g.shape()
    rank = len(shape)
    attrs = {}
    # Before 13 the default axis is 1, out of range for a rank-1 input.
    if g.coin(0.8) or (version < 13 and rank == 1):
        attrs["axis"] = g.axis(rank, negative=version >= 11)
    return [g.values(shape, dtype)], attrs


for _op in ("Softmax", "LogSoftmax", "Hardmax"):
    generator(_op, versions=(1, 11, 13))(_softmax_like)


@generator("Sigmoid", versions=(1, 6, 13))
def _sigmoid(g, version, dtype):
    return [g.values(g.shape(), dtype)], {}


@generator("Gelu", versions=(20,))
def _gelu(g, version, dtype):
    attrs = {"approximate": g.choice(("none", "tanh"))} if g.coin(0.7) else {}
    return [g.values(g.shape(), dtype)], attrs


@generator("BiasGelu", versions=(1,), domain="com.microsoft")
def _bias_gelu(g, version, dtype):
    shape = g.shape(min_rank=1)
    return [g.values(shape, dtype), _parameter(g, shape[-1:], dtype, around=0.0)], {}


# Reductions -------------------------------------------------------------------

_REDUCE_VERSIONS = {
    "ReduceSum": (1, 11, 13),
    "ReduceMax": (1, 11, 12, 13, 18, 20),
    "ReduceMin": (1, 11, 12, 13, 18, 20),
}
_REDUCE_OPS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
               "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")


def _axes_are_input(op_type, version):
    return version >= (13 if op_type == "ReduceSum" else 18)


def _reduce_dtypes(op_type):
    def dtypes(version):
        if op_type in ("ReduceLogSum", "ReduceLogSumExp", "ReduceL2"):
            return FLOATS + INTS if op_type == "ReduceL2" else FLOATS
        extra = ("int8", "uint8") if op_type in ("ReduceMax", "ReduceMin") and version >= 12 else ()
        return FLOATS + INTS + extra

    return dtypes


def _make_reduce(op_type):
    def make(g, version, dtype):
        shape = g.shape(max_size=4000)
        rank = len(shape)
        kw = {}
        if op_type == "ReduceProd":
            kw = {"low": -2, "high": 2} if dtype.kind in "iu" else {"low": 0.6, "high": 1.4}
        elif op_type == "ReduceLogSum":
            kw = {"positive": True}
        elif op_type in ("ReduceSumSquare", "ReduceL2") and dtype.kind in "iu":
            kw = {"low": -10, "high": 10}
        x = g.values(shape, dtype, **kw)
        attrs = {}
        if g.coin(0.6):
            attrs["keepdims"] = int(g.coin())
        axes = None if g.coin(0.2) else g.axes(rank, negative=version >= 11)
        inputs = [x]
        if _axes_are_input(op_type, version):
            if axes is not None:
                inputs.append(np.array(axes, dtype=np.int64))
            elif g.coin():
                inputs.append(np.zeros(0, dtype=np.int64))
            if g.coin(0.3):
                attrs["noop_with_empty_axes"] = int(g.coin())
        elif axes is not None:
            attrs["axes"] = axes
        return inputs, attrs

    return make


for _op in _REDUCE_OPS:
    generator(_op, versions=_REDUCE_VERSIONS.get(_op, (1, 11, 13, 18)),
              dtypes=_reduce_dtypes(_op))(_make_reduce(_op))


def _make_arg(g, version, dtype):
    shape = g.shape(max_size=4000)
    rank = len(shape)
    # A narrow value range makes ties, which select_last_index decides.
    x = g.values(shape, dtype, low=-4, high=4) if dtype.kind in "iu" or g.coin() else g.values(shape, dtype)
    if dtype.kind == "f" and not g.specials and g.coin():
        x = np.round(x).astype(dtype)  # ties in floats too
    attrs = {}
    if g.coin(0.8):
        attrs["axis"] = g.axis(rank, negative=version >= 11)
    if g.coin(0.6):
        attrs["keepdims"] = int(g.coin())
    if version >= 12 and g.coin(0.5):
        attrs["select_last_index"] = int(g.coin())
    return [x], attrs


for _op in ("ArgMax", "ArgMin"):
    generator(_op, versions=(1, 11, 12, 13), dtypes=FLOATS + INTS + ("int8", "uint8"))(_make_arg)


def _cumulative(g, make_values):
    """Shape, attributes and axis input of a CumSum / CumProd case; the
    values come last (the random stream of CumSum's cases stays as it was)."""
    shape = g.shape(max_size=4000)
    attrs = {}
    if g.coin(0.4):
        attrs["exclusive"] = int(g.coin())
    if g.coin(0.4):
        attrs["reverse"] = int(g.coin())
    axis = np.array(g.axis(len(shape)), dtype=g.choice((np.int32, np.int64)))
    return [make_values(shape), axis], attrs


@generator("CumSum", versions=(11, 14),
           dtypes=lambda v: ("float32", "float64") + INTS + (("float16", "bfloat16") if v >= 14 else ()))
def _cumsum(g, version, dtype):
    return _cumulative(g, lambda shape: g.values(shape, dtype))


@generator("CumProd", versions=(26,), dtypes=("float32", "float64") + INTS + ("float16", "bfloat16"))
def _cumprod(g, version, dtype):
    # factors near 1 keep long products finite for a while; integers small
    # enough to wrap only in the longer lines
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return _cumulative(g, lambda shape: g.values(shape, dtype, low=-1.6, high=1.6))
    return _cumulative(g, lambda shape: g.values(shape, dtype, low=-3, high=3))


# --------------------------------------------------------------------------
# Cases


@dataclasses.dataclass
class Case:
    """One randomized one-node case."""

    op_type: str
    domain: str
    version: int  # the operator's since_version
    opset: int  # the model's opset for the domain
    dtype: str
    index: int
    inputs: list
    attributes: dict

    @property
    def label(self) -> str:
        shapes = ", ".join("-" if a is None else ("x".join(map(str, a.shape)) or "scalar")
                           + ("" if a.dtype.name == self.dtype else f":{a.dtype.name}")
                           + (f"={a.tolist()}" if a.dtype.kind == "i" and a.size <= 5 and a.ndim <= 1
                              and self.op_type.startswith(("Reduce", "CumSum", "CumProd")) and a is not self.inputs[0]
                              else "")
                           for a in self.inputs)
        attrs = ", ".join(f"{k}={v}" for k, v in sorted(self.attributes.items()))
        return f"{self.op_type}-{self.version} {self.dtype} #{self.index} [{shapes}] {{{attrs}}}"

    @property
    def types(self) -> str:
        """The dtype, with the other floating input dtypes when they differ."""
        others = sorted({a.dtype.name for a in self.inputs[1:] if a is not None
                         and (a.dtype.kind == "f" or a.dtype.name == "bfloat16")} - {self.dtype})
        return self.dtype + "".join(f" (+{d})" for d in others)

    @property
    def has_nan(self) -> bool:
        a = self.inputs[0]
        return a.dtype.kind not in "iub" and bool(np.isnan(a.astype(np.float64)).any())


def _case_rng(seed, op_type, version, dtype, index):
    key = zlib.crc32(f"{op_type}/{version}/{dtype}/{index}".encode())
    return np.random.default_rng([seed, key])


def _versions(gen: Generator):
    """The served versions of an operator (None when it is not served)."""
    from normops import _registry
    from normops._errors import UnsupportedError

    try:
        return _registry.lookup(gen.op_type, gen.domain).versions
    except UnsupportedError:
        return None


_ONNX_TYPE = {"float32": "float", "float64": "double"}


def schema_dtypes(gen: Generator, version: int) -> tuple:
    """The candidate dtypes of ``gen`` that ONNX's schema at ``version`` allows
    for the first input (all candidates for a domain onnx does not know)."""
    candidates = tuple(gen.dtypes(version))
    if gen.domain not in ("", "ai.onnx"):
        return candidates
    from normops_tools.compare_ort.comparison import _onnx  # onnx only when asked

    onnx, _ = _onnx()
    try:
        schema = onnx.defs.get_schema(gen.op_type, version, gen.domain)
    except onnx.defs.SchemaError:
        return candidates
    type_str = schema.inputs[0].type_str
    allowed = next((set(c.allowed_type_strs) for c in schema.type_constraints
                    if c.type_param_str == type_str), {type_str})
    return tuple(d for d in candidates if f"tensor({_ONNX_TYPE.get(d, d)})" in allowed)


def make_cases(gen: Generator, seed: int, per_op: int, *, versions=None, dtypes=None) -> list[Case]:
    """``per_op`` cases for every served version of ``gen`` (or those of them
    in ``versions``) and every candidate dtype the ONNX schema of that version
    allows (or those of them in ``dtypes``)."""
    cases = []
    for version in _versions(gen) or ():
        if versions is not None and version not in versions:
            continue
        for dtype_name in schema_dtypes(gen, version):
            if dtypes is not None and dtype_name not in dtypes:
                continue
            try:
                dtype = dtype_named(dtype_name)
            except ImportError:
                continue
            for i in range(per_op):
                rng = _case_rng(seed, gen.op_type, version, dtype_name, i)
                g = Gen(rng, specials=(i % 3 == 2))
                inputs, attrs = gen.make(g, version, dtype)
                cases.append(Case(gen.op_type, gen.domain, version, gen.model_opset(version),
                                  dtype_name, i, list(inputs), attrs))
    return cases


def n_outputs_of(case: Case, n_defined: int) -> int:
    """How many outputs the node of ``case`` requests (ORT computes the optional ones too)."""
    # BatchNormalization's optional outputs exist in training mode only: 3
    # from opset 14, 5 before (with saved_mean and saved_var; at opsets 1 and
    # 6 is_test=0 is training).
    if case.op_type == "BatchNormalization":
        if case.version < 7:
            return 1 if case.attributes.get("is_test", 0) else 5
        return (3 if case.version >= 14 else 5) if case.attributes.get("training_mode") else 1
    return n_defined
