"""``InferenceSession``: an ONNX model run through normops.

Load time does all the checking (model, operators, opsets, attributes,
graph order); ``run`` only checks the feeds and evaluates the nodes in
order. Nothing a run computes is stored on the session, so several threads
may run one session at once.
"""

from __future__ import annotations

import functools
import heapq
import os
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import onnx
import onnx.checker
import onnx.defs
import onnx.external_data_helper
import onnx.helper
import onnx.numpy_helper
import onnx.shape_inference
from onnx import AttributeProto, TensorProto

from .. import _config, _isa, _registry
from .._errors import InvalidInputError, UnsupportedError
from . import _ort, _partition
from ._plumbing import PLUMBING

_DEFAULT_DOMAINS = ("", "ai.onnx")
# Served default-domain operators onnx has no schema for (ONNX Runtime's
# SimplifiedLayerNormalization) are checked under this domain instead.
_UNCHECKED_DOMAIN = "normops.unchecked"
_WHERE = "InferenceSession"


def _domain_label(domain):
    return "ai.onnx" if domain in _DEFAULT_DOMAINS else domain


def _type_string(elem_type):
    """ONNX Runtime's spelling: tensor(float), tensor(double), tensor(int64)..."""
    return f"tensor({TensorProto.DataType.Name(elem_type).lower()})"


class NodeArg:
    """A graph input or output as ONNX Runtime describes it: ``name``,
    ``type`` ('tensor(float)'...) and ``shape`` (ints, dimension names, or
    None for an unknown dimension; None for an unknown rank)."""

    __slots__ = ("name", "type", "shape", "_dtype", "_fixed")

    def __init__(self, value_info):
        self.name = value_info.name
        tensor = value_info.type.tensor_type
        self.type = _type_string(tensor.elem_type) if tensor.elem_type else "tensor(undefined)"
        self._dtype = None
        if tensor.elem_type:
            try:
                self._dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
            except (KeyError, TypeError, ValueError):
                raise UnsupportedError(
                    f"{_WHERE}: {value_info.name!r} has element type {self.type}, which NumPy cannot hold") from None
        if tensor.HasField("shape"):
            self.shape = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
                          for d in tensor.shape.dim]
            self._fixed = tuple((k, d) for k, d in enumerate(self.shape) if isinstance(d, int))
        else:
            self.shape = None

    def _fits(self, shape):
        """``shape`` has the declared rank and fixed dimensions."""
        if len(shape) != len(self.shape):
            return False
        for k, d in self._fixed:
            if shape[k] != d:
                return False
        return True

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


# --------------------------------------------------------------------------
# Loading


def _load(model):
    if isinstance(model, onnx.ModelProto):
        return model, None
    if isinstance(model, (bytes, bytearray, memoryview)):
        try:
            return onnx.load_model_from_string(bytes(model)), None
        except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise InvalidInputError(f"{_WHERE}: the bytes are not an ONNX model ({exc})") from None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise InvalidInputError(f"{_WHERE}: no model file at {path!r}")
        try:
            return onnx.load(path), path
        except Exception as exc:  # noqa: BLE001
            raise InvalidInputError(f"{_WHERE}: cannot load {path!r}: {type(exc).__name__}: {exc}") from None
    raise InvalidInputError(
        f"{_WHERE}: argument 'model' must be a path, bytes or an onnx.ModelProto, not {type(model).__name__}")


def _attribute_value(attr):
    """Python value of a node attribute (strings decoded, tensors as arrays);
    graphs and sparse tensors raise UnsupportedError."""
    if attr.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
        raise UnsupportedError(f"attribute {attr.name!r} is a subgraph (subgraphs are not served)")
    if attr.type in (AttributeProto.SPARSE_TENSOR, AttributeProto.SPARSE_TENSORS,
                     AttributeProto.TYPE_PROTO, AttributeProto.TYPE_PROTOS):
        raise UnsupportedError(f"attribute {attr.name!r} of type "
                               f"{AttributeProto.AttributeType.Name(attr.type)} is not served")
    value = onnx.helper.get_attribute_value(attr)

    def convert(v):
        if isinstance(v, bytes):
            return v.decode("utf-8")
        if isinstance(v, TensorProto):
            return onnx.numpy_helper.to_array(v)
        return v

    return [convert(v) for v in value] if isinstance(value, list) else convert(value)


def _label(index, node):
    return f"node {index} ({node.op_type}{', ' + repr(node.name) if node.name else ''})"


class _Step:
    """One node, ready to run: ``kind`` is 'served', 'plumbing' or 'ort'
    (a node for ONNX Runtime; its piece is a step of kind 'piece')."""

    __slots__ = ("label", "kind", "impl", "version", "inputs", "outputs", "attributes",
                 "call", "direct", "arguments", "stores", "n_declared", "key", "reason", "index",
                 "node_inputs", "piece", "fallback")

    def prepare(self):
        """What a run needs that does not depend on the feeds, once: the
        input names in ONNX order ("" for an absent one), the call (a served
        operator's direct route, which falls back to its validated path by
        itself; and, where the operator has one, its straight call of the
        kernels with the attributes fixed), the named outputs and how many
        outputs the node declares."""
        self.stores = tuple((k, name) for k, name in enumerate(self.outputs) if name)
        self.n_declared = self.stores[-1][0] + 1 if self.stores else 0
        self.direct = None
        if self.kind == "served":
            op = self.impl
            self.arguments = tuple(self.inputs) + ("",) * (len(op.inputs) - len(self.inputs))
            # the validated route computes no output nobody reads
            self.call = functools.partial(op.call, all_outputs=self.n_declared > 1)
            if op.direct is not None:
                self.direct = op.direct(op, self.version, self.attributes, self.n_declared)
        else:
            self.arguments = tuple(self.inputs)
            self.call = None


def _implicit_inputs(node):
    """The outer-scope values a node's subgraphs read (If, Loop, Scan): names
    used in a subgraph that the subgraph does not define, at any depth."""
    found = []

    def visit(graph, outer_defined):
        defined = set(outer_defined)
        defined.update(v.name for v in graph.input)
        defined.update(t.name for t in graph.initializer)
        defined.update(t.values.name for t in graph.sparse_initializer)
        for inner in graph.node:
            for name in inner.input:
                if name and name not in defined:
                    found.append(name)
            for attr in inner.attribute:
                for sub in ([attr.g] if attr.type == AttributeProto.GRAPH else
                            list(attr.graphs) if attr.type == AttributeProto.GRAPHS else []):
                    visit(sub, defined)
            defined.update(n for n in inner.output if n)
        for value in graph.output:
            if value.name not in defined:
                found.append(value.name)

    for attr in node.attribute:
        for sub in ([attr.g] if attr.type == AttributeProto.GRAPH else
                    list(attr.graphs) if attr.type == AttributeProto.GRAPHS else []):
            visit(sub, ())
    return list(dict.fromkeys(found))


def _topological_order(graph, available, node_inputs):
    """Node indices in an order where every input is produced before use
    (the file's order whenever it already is one); ``node_inputs[i]`` are
    the values node i reads (its inputs and its subgraphs' outer values)."""
    nodes = graph.node
    producer = {}
    for i, node in enumerate(nodes):
        for name in node.output:
            if not name:
                continue
            if name in producer or name in available:
                raise InvalidInputError(f"{_WHERE}: value {name!r} is produced twice ({_label(i, node)})")
            producer[name] = i
    waiting = [0] * len(nodes)
    consumers = [[] for _ in nodes]
    for i, node in enumerate(nodes):
        for name in set(node_inputs[i]):
            if not name or name in available:
                continue
            if name not in producer:
                raise InvalidInputError(f"{_WHERE}: input {name!r} of {_label(i, node)} is not defined in the graph")
            waiting[i] += 1
            consumers[producer[name]].append(i)
    ready = [i for i, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in consumers[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    if len(order) != len(nodes):
        stuck = [_label(i, nodes[i]) for i in range(len(nodes)) if waiting[i]]
        raise InvalidInputError(f"{_WHERE}: the graph has a cycle through {', '.join(stuck)}")
    return order


def _check(model, order, unchecked):
    """onnx.checker.check_model (full_check=False) on the model, sorted, with
    served operators onnx has no schema for moved to a private domain;
    returns the model checked."""
    if order != sorted(order) or unchecked:
        copy = onnx.ModelProto()
        copy.CopyFrom(model)
        del copy.graph.node[:]
        copy.graph.node.extend(model.graph.node[i] for i in order)
        for i, node in enumerate(copy.graph.node):
            if order[i] in unchecked:
                node.domain = _UNCHECKED_DOMAIN
        if unchecked:
            copy.opset_import.add(domain=_UNCHECKED_DOMAIN, version=1)
        model = copy
    try:
        onnx.checker.check_model(model, full_check=False)
    except (onnx.checker.ValidationError, ValueError) as exc:
        message = str(exc).strip().replace("\n\n", "\n")
        raise InvalidInputError(f"{_WHERE}: the model fails onnx.checker: {message}") from None
    return model


# --------------------------------------------------------------------------
# Types: which node goes to ONNX Runtime for the type of an input

#: Element types ONNX allows for some served operators that normops does not
#: serve (docs/specification.md §15.4: bool, which ReduceMax and ReduceMin
#: take from opset 20). Every other type an operator's ONNX schema allows,
#: normops serves (tests/test_onnx_models.py checks this against the
#: operators themselves).
_TYPES_NOT_SERVED = frozenset({TensorProto.BOOL})


def _refusable_inputs(node, step):
    """Positions of the inputs of a served node whose ONNX schema allows a
    type in _TYPES_NOT_SERVED (none for an operator onnx has no schema for)."""
    domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
    try:
        schema = onnx.defs.get_schema(node.op_type, step.version, domain)
    except onnx.defs.SchemaError:
        return ()
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    refused = {_type_string(t) for t in _TYPES_NOT_SERVED}
    positions = []
    for k, formal in enumerate(schema.inputs):
        types = allowed.get(formal.type_str, {formal.type_str})
        if types & refused:
            if formal.option == onnx.defs.OpSchema.FormalParameterOption.Variadic:
                positions.extend(range(k, len(node.input)))
            else:
                positions.append(k)
    return tuple(p for p in positions if p < len(node.input))


def _elem_type(type_proto):
    """The element type of a tensor TypeProto; None when unknown."""
    if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
        return None
    return type_proto.tensor_type.elem_type or None


# The output types of a served node (docs/specification.md §4.3): Y has X's
# type, RMSNormalization's and SimplifiedLayerNormalization's Y the scale's;
# the statistics of LayerNormalization and SimplifiedLayerNormalization are
# float32; BatchNormalization's statistics have the type of its mean input;
# ArgMax and ArgMin give int64. The operators below keep X's shape in Y.
_Y_FROM_SCALE = ("RMSNormalization", "SimplifiedLayerNormalization")
_FLOAT32_STATISTICS = ("LayerNormalization", "SimplifiedLayerNormalization")
_SHAPE_CHANGING = ("ArgMax", "ArgMin")


def _served_output_types(step, types):
    """name -> TypeProto for the outputs of a served node whose inputs' types
    are known (shapes only where Y keeps X's)."""
    op_type = step.impl.op_type
    names = step.outputs
    x = types.get(step.inputs[0]) if step.inputs and step.inputs[0] else None
    out = {}
    for k, name in enumerate(names):
        if not name:
            continue
        if op_type in ("ArgMax", "ArgMin"):
            elem = TensorProto.INT64
        elif k > 0 and op_type in _FLOAT32_STATISTICS:
            elem = TensorProto.FLOAT
        elif k > 0 and op_type == "BatchNormalization":
            elem = _elem_type(types.get(step.inputs[3]) if len(step.inputs) > 3 and step.inputs[3] else None)
        elif k == 0 and op_type in _Y_FROM_SCALE:
            elem = _elem_type(types.get(step.inputs[1]) if len(step.inputs) > 1 and step.inputs[1] else None)
        else:
            elem = _elem_type(x)
        if elem is None:
            continue
        keeps_shape = (k == 0 and not op_type.startswith("Reduce") and op_type not in _SHAPE_CHANGING
                       and x is not None and x.tensor_type.HasField("shape"))
        if keeps_shape:
            value = onnx.TypeProto()
            value.CopyFrom(x)
            value.tensor_type.elem_type = elem
        else:
            value = onnx.helper.make_tensor_type_proto(elem, None)
        out[name] = value
    return out


def _value_types(model, constants, served):
    """name -> TypeProto of every value whose type the model gives, onnx's
    shape inference finds, or a served node's type rule gives (``served``:
    its steps in topological order; onnx infers no type through some of
    them, GroupNormalization-21 for one). A value left out has a type known
    only at run time."""
    # Inference reads the model without the graph outputs' shapes: a declared
    # shape may be a placeholder (an empty shape field, which onnx.checker
    # wants, reads as rank 0) and inference would spread it.
    base = onnx.ModelProto()
    base.CopyFrom(model)
    for value in base.graph.output:
        if value.type.WhichOneof("value") == "tensor_type":
            value.type.tensor_type.ClearField("shape")
    extra = []  # value infos found by the served nodes' rule, for the next inference
    types = {}
    for _ in range(4):
        source = base
        if extra:
            source = onnx.ModelProto()
            source.CopyFrom(base)
            source.graph.value_info.extend(extra)
        try:
            inferred = onnx.shape_inference.infer_shapes(source, strict_mode=False)
        except Exception:  # noqa: BLE001 - a model inference cannot read: the declared types only
            inferred = source
        types = {}
        for value in inferred.graph.output:  # the element type only: a declared shape may be a placeholder
            elem = _elem_type(value.type)
            if elem is not None:
                types[value.name] = onnx.helper.make_tensor_type_proto(elem, None)
        for value in list(inferred.graph.value_info) + list(source.graph.value_info):
            if value.type.WhichOneof("value") is not None:
                types[value.name] = value.type
        for name, value in constants.items():
            try:
                types[name] = _ort.tensor_type(value.dtype, value.shape)
            except (KeyError, TypeError, ValueError):
                pass
        for value in model.graph.input:  # what the feeds are checked against
            types[value.name] = value.type
        found = False
        for step in served:
            for name, value in _served_output_types(step, types).items():
                if _elem_type(types.get(name)) is None:
                    types[name] = value
                    info = onnx.ValueInfoProto()
                    info.name = name
                    info.type.CopyFrom(value)
                    extra.append(info)
                    found = True
        if not found:
            break
    return types


class _MissingOutput(Exception):
    """A node gave fewer outputs than it declares (raised outside the relabelling)."""


def _missing_output(step, produced):
    missing = [name for name in step.outputs[len(produced):] if name]
    raise _MissingOutput(
        f"{_WHERE}: {step.label} declares output {missing[0]!r}, which the operator does not "
        f"produce with these attributes (it gives {len(produced)} output(s))")


def _relabelled(step, exc):
    """The error of a node, named: the operator's own errors keep their type;
    a plumbing operator's NumPy error becomes an InvalidInputError."""
    if isinstance(exc, (InvalidInputError, UnsupportedError)):
        return type(exc)(f"{_WHERE}: {step.label}: {exc}")
    return InvalidInputError(f"{_WHERE}: {step.label}: {type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------
# The session


class Placement(NamedTuple):
    """Where one node of the model runs (``InferenceSession.placement()``).

    ``node`` is its index in the model's ``graph.node``; ``runs_on`` is
    "normops" (a normops operator), "numpy" (a plumbing operator, run by
    normops in NumPy; a Constant is evaluated once at load) or
    "onnxruntime"; ``piece`` numbers the ONNX Runtime sessions in the order
    they run (None off ONNX Runtime); ``reason`` says why, where there is
    more to say than the operator's name.
    """

    node: int
    name: str
    op_type: str
    domain: str
    runs_on: str
    piece: int | None
    reason: str


class InferenceSession:
    """Run an ONNX model, like ONNX Runtime's ``InferenceSession``: the
    nodes normops serves on normops, the others on ONNX Runtime.

    ``model`` is a path (external data is read next to it), bytes or an
    ``onnx.ModelProto``. ``mode`` ("exact" or "fast") and ``n_threads``
    apply to every normops node; None follows ``normops.config`` in the
    thread that calls ``run``. Nodes normops does not serve run on ONNX
    Runtime (the optional ``ort`` extra), grouped at load into as few
    ONNX Runtime sessions as the graph allows; ``use_onnxruntime=False``
    refuses such models instead. ``sess_options``, an
    ``onnxruntime.SessionOptions``, replaces the options of those sessions
    (by default ``n_threads`` intra-op threads, sleeping between calls).
    ``placement()`` tells where each node runs.
    """

    def __init__(self, model, *, mode=None, n_threads=None, use_onnxruntime=True, sess_options=None):
        self._mode = None if mode is None else _config.check_mode(mode, _WHERE)
        self._n_threads = _config.check_n_threads(n_threads, _WHERE)
        if use_onnxruntime is not True and use_onnxruntime is not False:
            raise InvalidInputError(
                f"{_WHERE}: argument 'use_onnxruntime' must be True or False, not {use_onnxruntime!r}")
        self._use_ort = use_onnxruntime
        self._sess_options = sess_options
        self._ort_factory = None
        model, path = _load(model)
        self._path = path
        graph = model.graph
        self._opsets = {}
        for entry in model.opset_import:
            domain = "" if entry.domain in _DEFAULT_DOMAINS else entry.domain
            self._opsets[domain] = int(entry.version)

        # Values known at load time.
        if len(graph.sparse_initializer):
            raise UnsupportedError(f"{_WHERE}: sparse initializers are not served")
        constants = {}
        for tensor in graph.initializer:
            if onnx.external_data_helper.uses_external_data(tensor):
                raise InvalidInputError(
                    f"{_WHERE}: initializer {tensor.name!r} is stored in an external file; "
                    "load the model from its path so normops can read it")
            try:
                constants[tensor.name] = onnx.numpy_helper.to_array(tensor)
            except Exception as exc:  # noqa: BLE001
                raise UnsupportedError(f"{_WHERE}: initializer {tensor.name!r} cannot be read: {exc}") from None
        for value in list(graph.input) + list(graph.output):
            if value.type.WhichOneof("value") != "tensor_type":
                raise UnsupportedError(
                    f"{_WHERE}: graph input/output {value.name!r} is not a tensor "
                    f"({value.type.WhichOneof('value')}); only tensors are served")
        self._inputs = [NodeArg(v) for v in graph.input if v.name not in constants]
        self._overridable = [NodeArg(v) for v in graph.input if v.name in constants]
        self._outputs = [NodeArg(v) for v in graph.output]
        self._feedable = {a.name: a for a in self._inputs + self._overridable}

        steps, unchecked = self._resolve(graph)
        unserved = [i for i, step in enumerate(steps) if step.kind == "ort"]
        if unserved:  # before anything else, as when normops ran only what it serves
            self._refuse_without_ort(graph, steps, unserved)
        available = set(constants) | {v.name for v in graph.input}
        node_inputs = [list(node.input) + _implicit_inputs(node) for node in graph.node]
        order = _topological_order(graph, available, node_inputs)
        checked = _check(model, order, unchecked)

        # The types the model gives, where a decision needs them: pieces
        # need their inputs' types, and a normops node goes to ONNX Runtime
        # when an input has a type ONNX allows and normops does not serve.
        refusable = {}
        for i, step in enumerate(steps):
            if step.kind == "served":
                positions = _refusable_inputs(graph.node[i], step)
                if positions:
                    refusable[i] = positions
        needs_ort = any(step.kind == "ort" for step in steps)
        served = [steps[i] for i in order if steps[i].kind == "served"]
        types = _value_types(checked, constants, served) if needs_ort or refusable else {}
        self._fallback_nodes = set()
        for i, positions in refusable.items():
            step = steps[i]
            unknown = False
            for k in positions:
                name = step.inputs[k] if k < len(step.inputs) else ""
                if not name:
                    continue
                elem = _elem_type(types.get(name))
                if elem in _TYPES_NOT_SERVED:
                    step.kind = "ort"
                    step.reason = (f"input {step.impl.inputs[k]!r} is {_type_string(elem)}, which normops "
                                   "does not serve (docs/specification.md §15.4)")
                    break
                if elem is None:
                    unknown = True
            else:
                if unknown:
                    self._fallback_nodes.add(i)
        on_ort_nodes = [i for i, step in enumerate(steps) if step.kind == "ort"]
        if on_ort_nodes:
            self._refuse_without_ort(graph, steps, on_ort_nodes)
        if self._fallback_nodes and not (self._use_ort and _ort.available()):
            self._fallback_nodes = set()

        # Constants (normops' plumbing) once; the rest in topological order.
        self._steps = []
        self._placement = [None] * len(graph.node)
        for i in order:
            step = steps[i]
            step.index = i
            step.node_inputs = node_inputs[i]
            if step.kind == "plumbing" and step.impl.op_type == "Constant":
                value = self._run_step(step, [], None, None)[0]
                constants[step.outputs[0]] = value
                self._placement[i] = ("numpy", None, "a constant, evaluated once at load")
            else:
                self._steps.append(step)
        for value in constants.values():
            value.flags.writeable = False  # shared by concurrent runs: nothing may write them
        self._constants = constants
        self._constant_values = list(constants.values())
        self._constant_ids = frozenset(map(id, self._constant_values))  # the arrays live as long as the session
        self._output_names = [a.name for a in self._outputs]
        self._n_pieces = 0
        self._graph_nodes = [onnx.NodeProto() for _ in graph.node]  # what placement() describes
        for kept, node in zip(self._graph_nodes, graph.node):
            kept.op_type, kept.name, kept.domain = node.op_type, node.name, node.domain
        self._schedule(graph, model, checked, types)
        for step in self._steps:
            if step.kind != "piece":
                step.prepare()
        self._plans = {}  # output names -> their compiled evaluation (see _plan)
        self._all_outputs = tuple(self._output_names)
        self._plan(self._all_outputs)

    def _resolve(self, graph):
        """A _Step per node: "served", "plumbing", or "ort" with the reason
        normops does not serve it (``step.reason``, ``step.key``)."""
        steps, unchecked = [], set()
        for i, node in enumerate(graph.node):
            label = _label(i, node)
            domain = "" if node.domain in _DEFAULT_DOMAINS else node.domain
            opset = self._opsets.get(domain)
            if opset is None:
                raise InvalidInputError(
                    f"{_WHERE}: {label} is in domain {_domain_label(domain)!r}, which the model does not import")
            step = _Step()
            step.label = label
            step.inputs = list(node.input)
            step.outputs = list(node.output)
            step.key = (node.op_type, _domain_label(domain), opset)
            step.reason = None
            steps.append(step)
            try:
                attributes = {a.name: _attribute_value(a) for a in node.attribute}
            except UnsupportedError as exc:
                step.kind, step.reason = "ort", str(exc)
                continue
            reason = None
            if _registry.is_served(domain, node.op_type, opset):
                op = _registry.lookup(node.op_type, domain)
                step.kind, step.impl, step.version = "served", op, op.version_for(opset)
                if op.check_node is not None:  # node-level forms the operator does not serve
                    try:
                        reason = op.check_node(step.version, op.fill_attributes(step.version, attributes),
                                               step.outputs)
                    except InvalidInputError as exc:
                        raise InvalidInputError(f"{_WHERE}: {label}: {exc}") from None
                    if reason is not None:
                        step.kind, step.reason = "ort", reason
                        continue
                if len(step.inputs) > len(op.inputs) or len(step.outputs) > len(op.outputs):
                    raise InvalidInputError(
                        f"{_WHERE}: {label} has {len(step.inputs)} inputs and {len(step.outputs)} outputs; "
                        f"{node.op_type} takes at most {len(op.inputs)} and {len(op.outputs)}")
                for k in range(op.n_required):
                    if k >= len(step.inputs) or not step.inputs[k]:
                        raise InvalidInputError(f"{_WHERE}: {label}: input {op.inputs[k]!r} is required")
                try:
                    step.attributes = op.fill_attributes(step.version, attributes)
                except InvalidInputError as exc:
                    raise InvalidInputError(f"{_WHERE}: {label}: {exc}") from None
                if op.node_attributes is not None:  # forms chosen by the declared outputs
                    step.attributes = op.node_attributes(step.version, step.attributes, step.outputs)
                if domain == "" and not onnx.defs.has(node.op_type, ""):
                    unchecked.add(i)
            elif domain == "" and node.op_type in PLUMBING:
                plumbing = PLUMBING[node.op_type]
                try:
                    version = onnx.defs.get_schema(node.op_type, opset, "").since_version
                except onnx.defs.SchemaError:
                    version = None
                if version is None:
                    reason = f"not defined at opset {opset}"
                else:
                    reason = plumbing.reason(version, attributes)
                step.kind, step.impl, step.version, step.attributes = "plumbing", plumbing, version, attributes
            elif (domain, node.op_type) in _registry.served_operators():
                try:  # served at other opsets: the registry says why not this one
                    _registry.lookup(node.op_type, domain).version_for(opset)
                    reason = "not served"  # pragma: no cover - is_served said no
                except (UnsupportedError, InvalidInputError) as exc:
                    message = str(exc)
                    reason = message.split(": ", 1)[1] if message.startswith(node.op_type + ":") else message
            else:
                reason = "not served"
            if reason is not None:
                step.kind, step.reason = "ort", reason
        return steps, unchecked

    def _refuse_without_ort(self, graph, steps, on_ort_nodes):
        """UnsupportedError listing every operator normops does not serve,
        unless ONNX Runtime is there to run those nodes."""
        if self._use_ort and _ort.available():
            return
        problems = {}
        for i in on_ort_nodes:
            problems.setdefault(steps[i].key, []).append(steps[i].reason)
        lines = []
        for (op_type, domain, opset), reasons in problems.items():
            count = f"{len(reasons)} nodes" if len(reasons) > 1 else "1 node"
            lines.append(f"{op_type} (domain {domain}, opset {opset}, {count}): "
                         f"{'; '.join(dict.fromkeys(reasons))}")
        labels = [steps[i].label for i in on_ort_nodes]
        shown = ", ".join(labels[:8]) + (f" and {len(labels) - 8} more" if len(labels) > 8 else "")
        if self._use_ort:
            tail = (f"ONNX Runtime would run {'these nodes' if len(labels) > 1 else 'this node'} ({shown}), "
                    f"but it is not installed: {_ort.INSTALL}")
        else:
            tail = f"use_onnxruntime=False: ONNX Runtime may not run {'them' if len(labels) > 1 else 'it'} ({shown})"
        raise UnsupportedError(
            f"{_WHERE}: the model uses {len(problems)} operator{'s' if len(problems) > 1 else ''} "
            "normops does not serve:\n  " + "\n  ".join(lines) + "\n" + tail)

    def _ort_session_factory(self):
        """onnxruntime's InferenceSession for a model's bytes, with the
        session's options (onnxruntime imported on first use)."""
        if self._ort_factory is None:
            ort = _ort.module()
            if ort is None:  # pragma: no cover - available() said it is there
                raise UnsupportedError(f"{_WHERE}: onnxruntime cannot be imported: {_ort.INSTALL}")
            n = self._n_threads if self._n_threads is not None else _config.get_config()["n_threads"]
            options = _ort.session_options(ort, n, self._sess_options)
            self._ort_factory = _ort.make_session_factory(ort, options)
        return self._ort_factory

    def _schedule(self, graph, model, checked, types):
        """Partition the steps (normops, NumPy plumbing, ONNX Runtime pieces)
        and put them in run order: the normops-side steps that run before
        piece 0, piece 0, the steps between pieces 0 and 1, and so on."""
        steps = self._steps
        producer = {}
        for k, step in enumerate(steps):
            for name in step.outputs:
                if name:
                    producer[name] = k
        # Only nodes a graph output depends on run; the others make no piece.
        live = [False] * len(steps)
        wanted = set(self._output_names)
        for k in range(len(steps) - 1, -1, -1):
            if wanted.intersection(steps[k].outputs):
                live[k] = True
                wanted.update(n for n in steps[k].node_inputs if n)
        kinds = []
        for step, alive in zip(steps, live):
            if step.kind == "ort" and alive:
                kinds.append("ort")
            elif step.kind == "plumbing" and alive:
                kinds.append("plumbing")
            else:
                kinds.append("normops")  # normops' side (a dead unserved node never runs)
        preds = [sorted({producer[n] for n in step.node_inputs if n in producer}) for step in steps]
        on_ort, piece, before = _partition.partition(kinds, preds)
        n_pieces = 1 + max((p for p in piece if p is not None), default=-1)
        self._n_pieces = n_pieces

        for k, step in enumerate(steps):
            if step.kind == "ort" and not live[k]:
                self._placement[step.index] = ("onnxruntime", None, f"{step.reason}; no graph output "
                                               "depends on it, so it never runs")
            elif on_ort[k]:
                reason = step.reason if step.kind == "ort" else \
                    "plumbing next to ONNX Runtime nodes, run in their piece"
                self._placement[step.index] = ("onnxruntime", piece[k], reason)
            elif step.kind == "served":
                reason = ""
                if step.index in self._fallback_nodes:
                    reason = ("input types unknown at load: a run whose inputs normops does not serve "
                              "runs this node on ONNX Runtime")
                self._placement[step.index] = ("normops", None, reason)
            else:
                self._placement[step.index] = ("numpy", None, "")
        if n_pieces == 0:
            self._steps = [s for s in steps if s.kind != "ort"]  # only dead unserved nodes
            self._set_fallbacks(graph, model)
            return

        factory = self._ort_session_factory()
        overridable = {a.name for a in self._overridable}
        graph_outputs = set(self._output_names)
        readers = {}  # value -> steps that read it
        for k, step in enumerate(steps):
            for name in step.node_inputs:
                readers.setdefault(name, set()).add(k)
        initializer_protos = {t.name: t for t in graph.initializer}
        piece_steps = []
        for p in range(n_pieces):
            members = [k for k in range(len(steps)) if piece[k] == p]
            member_set = set(members)
            produced = {n for k in members for n in steps[k].outputs if n}
            inputs, initializers = [], []
            for k in members:
                for name in steps[k].node_inputs:
                    if not name or name in produced or name in inputs:
                        continue
                    if name in self._constants and name not in overridable:
                        if not any(t.name == name for t in initializers):
                            if name in initializer_protos:
                                initializers.append(initializer_protos[name])
                            else:  # a Constant node's value
                                initializers.append(onnx.numpy_helper.from_array(self._constants[name], name))
                        continue
                    inputs.append(name)
            outputs = [n for k in members for n in steps[k].outputs
                       if n and (n in graph_outputs or readers.get(n, set()) - member_set)]
            labels = [steps[k].label for k in members]
            label = (f"ONNX Runtime piece {p} ({len(members)} node{'s' if len(members) > 1 else ''}: "
                     + ", ".join(labels[:3]) + (", ..." if len(labels) > 3 else "") + ")")
            nodes = [graph.node[steps[k].index] for k in members]
            try:
                runner = _ort.Piece(p, label, model, nodes, inputs, [types.get(n) for n in inputs], outputs,
                                    [types.get(n) for n in outputs], initializers, factory)
            except (InvalidInputError, UnsupportedError) as exc:
                raise type(exc)(f"{_WHERE}: {label}: {exc}") from None
            step = _Step()
            step.kind, step.label, step.piece = "piece", label, runner
            step.inputs, step.outputs = list(inputs), list(outputs)
            step.node_inputs = list(inputs)
            step.arguments = tuple(inputs)
            step.call = step.direct = None
            step.n_declared = len(outputs)
            step.fallback = None
            piece_steps.append(step)
        order = sorted(((before[k], 0, k) for k in range(len(steps)) if not on_ort[k] and steps[k].kind != "ort"),
                       key=lambda t: (t[0], t[1], t[2]))
        slots = [(b, 0, k, steps[k]) for b, _, k in order] + [(p, 1, 0, s) for p, s in enumerate(piece_steps)]
        slots.sort(key=lambda t: (t[0], t[1], t[2]))
        self._steps = [s for *_, s in slots]
        self._set_fallbacks(graph, model)

    def _set_fallbacks(self, graph, model):
        for step in self._steps:
            step.fallback = None
            if step.kind == "served" and step.index in self._fallback_nodes:
                step.fallback = _ort.NodeFallback(model, graph.node[step.index], self._lazy_factory)

    def _lazy_factory(self, model_bytes):
        return self._ort_session_factory()(model_bytes)

    # ----------------------------------------------------------------------
    # ONNX Runtime's interface

    def get_inputs(self):
        """The inputs to feed (graph inputs without an initializer)."""
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        """Graph inputs with an initializer: a feed may replace the default."""
        return list(self._overridable)

    def get_providers(self):
        """["normops"], and ONNX Runtime's CPU provider when nodes run on it."""
        if self._n_pieces or self._fallback_nodes:
            return ["normops", "CPUExecutionProvider"]
        return ["normops"]

    def placement(self):
        """Where each node of the model runs: a list of ``Placement`` in the
        order of the model's ``graph.node``, decided once at load."""
        out = []
        for i, node in enumerate(self._graph_nodes):
            runs_on, piece, reason = self._placement[i]
            domain = _domain_label("" if node.domain in _DEFAULT_DOMAINS else node.domain)
            out.append(Placement(i, node.name, node.op_type, domain, runs_on, piece, reason))
        return out

    def run(self, output_names, input_feed, run_options=None):
        """Compute ``output_names`` (None: every graph output) from
        ``input_feed`` (name -> array); returns a list of numpy arrays.

        ``run_options`` is None or a mapping with ``mode`` and/or
        ``n_threads``, which override the session's for this run.
        """
        mode, n_threads = self._mode, self._n_threads
        if run_options is not None:
            if not isinstance(run_options, Mapping):
                raise InvalidInputError(
                    f"{_WHERE}.run: run_options must be None or a mapping, not {type(run_options).__name__}")
            unknown = set(run_options) - {"mode", "n_threads"}
            if unknown:
                raise InvalidInputError(f"{_WHERE}.run: unknown run option {sorted(unknown)[0]!r} "
                                        "(known: mode, n_threads)")
            if run_options.get("mode") is not None:
                mode = _config.check_mode(run_options["mode"], _WHERE)
            if "n_threads" in run_options:
                n_threads = _config.check_n_threads(run_options["n_threads"], _WHERE)
        if output_names is None:
            output_names = self._all_outputs
        elif isinstance(output_names, str):
            raise InvalidInputError(f"{_WHERE}.run: output_names must be a list of names, not a string")
        else:
            output_names = list(output_names)
            for name in output_names:
                if name not in self._output_names:
                    raise InvalidInputError(
                        f"{_WHERE}.run: {name!r} is not an output of the model "
                        f"(outputs: {', '.join(self._output_names)})")
        evaluate = self._plans.get(output_names if type(output_names) is tuple else tuple(output_names))
        if evaluate is None:
            evaluate = self._plan(tuple(output_names))
        feeds = self._checked_feeds(input_feed)
        values = dict(self._constants)
        values.update(feeds)
        # the settings once per run, as each node would resolve them
        mode = _config.resolve_mode(mode, _WHERE)
        threads = _config.kernel_threads(n_threads, _WHERE)
        outputs = evaluate(values, mode, n_threads, _isa.kernels, threads, mode == "fast")
        del values  # intermediate values are gone; what stays is returned

        # The caller owns what it gets: a fresh array that owns its memory
        # cannot share it with a feed or an initializer (made before the
        # run) unless it is one of them (Identity), nor with another output
        # unless it is that one; anything else is checked, and copied when
        # it shares.
        fed = feeds.values()
        results = []
        for out in outputs:
            if type(out) is np.ndarray:
                flags = out.flags
                if (flags.owndata and flags.c_contiguous and id(out) not in self._constant_ids
                        and not any(out is p for p in fed) and not any(out is p for p in results)):
                    results.append(out)
                    continue
            elif not isinstance(out, np.ndarray):
                out = np.asarray(out)
            protected = [*fed, *self._constant_values, *results]
            if not out.flags.c_contiguous or any(np.may_share_memory(out, p) for p in protected):
                out = np.array(out, order="C")
            results.append(out)
        return results

    def _plan(self, output_names):
        """The evaluation of ``output_names``, compiled once: a Python
        function that calls the steps the outputs need in order, holding
        the values in local variables and dropping each one after its last
        use (graph outputs are kept), so that a run costs little more than
        the calls themselves. ``evaluate(values, mode, n_threads, ...)`` takes
        the feeds and initializers by name and returns the outputs;
        ``kernels, threads, fast`` are the run's settings as the nodes'
        straight calls take them."""
        wanted = set(output_names)
        needed = []
        piece_names = {}  # piece step -> the outputs of it this plan reads
        for step in reversed(self._steps):
            if wanted.intersection(step.outputs):
                needed.append(step)
                if step.kind == "piece":
                    piece_names[id(step)] = [n for n in step.outputs if n in wanted]
                wanted.update(n for n in step.node_inputs if n)
        needed.reverse()
        last_use = {}  # value -> index of the last step reading it
        for k, step in enumerate(needed):
            for name in step.arguments:
                if name:
                    last_use[name] = k
        local = {}  # produced value -> its local variable

        def ref(name):
            return "None" if not name else local.get(name, f"values[{name!r}]")

        env = {"InvalidInputError": InvalidInputError, "UnsupportedError": UnsupportedError,
               "Missing": _MissingOutput, "steps": needed, "missing": _missing_output, "relabel": _relabelled}
        body = []
        for k, step in enumerate(needed):
            args = "".join(ref(n) + ", " for n in step.arguments)
            body.append(f"k = {k}")
            if step.kind == "piece":  # one ONNX Runtime session: the outputs read later, by name
                names = piece_names[id(step)]
                env[f"piece{k}"], env[f"names{k}"] = step.piece.run, names
                body.append(f"o = piece{k}(({args}), names{k})")
                stores = list(enumerate(names))
            else:
                env[f"call{k}"], env[f"attributes{k}"], env[f"version{k}"] = (
                    step.call or step.impl.run, step.attributes, step.version)
                calls = []
                if step.direct is not None:  # the kernels straight, else the operator's route
                    env[f"direct{k}"] = step.direct
                    calls.append(f"o = direct{k}(kernels, threads, fast, {args})")
                    calls.append(f"if o is None: o = call{k}(({args}), attributes{k}, version{k}, mode, n_threads)")
                elif step.call is not None:
                    calls.append(f"o = call{k}(({args}), attributes{k}, version{k}, mode, n_threads)")
                else:
                    calls.append(f"o = call{k}(version{k}, ({args}), attributes{k})")
                if getattr(step, "fallback", None) is not None:
                    # types unknown at load: inputs normops refuses go to ONNX Runtime
                    env[f"fallback{k}"] = step.fallback.run
                    body.append("try:")
                    body.extend("    " + line for line in calls)
                    body.append("except UnsupportedError as exc:")
                    body.append(f"    o = fallback{k}(({args}), exc)")
                else:
                    body.extend(calls)
                if step.n_declared > 1:  # a safety net: check_node refuses such nodes at load
                    body.append(f"if len(o) < {step.n_declared}: missing(steps[{k}], o)")
                stores = step.stores
            for index, name in stores:
                local[name] = f"v{len(local)}"
                body.append(f"{local[name]} = o[{index}]")
            for name, last in last_use.items():  # what no later step reads
                if last == k and name in local and name not in output_names:
                    body.append(f"{local[name]} = None")
        body.append("o = None")
        body.append(f"return [{''.join(ref(n) + ', ' for n in output_names)}]")
        source = "\n".join([
            "def evaluate(values, mode, n_threads, kernels, threads, fast):",
            "    k = -1",
            "    try:",
            *("        " + line for line in body),
            "    except Missing as exc:",
            "        raise InvalidInputError(str(exc)) from None",
            "    except (InvalidInputError, UnsupportedError) as exc:",
            "        raise relabel(steps[k], exc) from None",
            "    except (ValueError, TypeError, IndexError) as exc:",
            "        if steps[k].call is not None or steps[k].kind == 'piece':",
            "            raise",
            "        raise relabel(steps[k], exc) from None",
        ])
        exec(compile(source, f"<normops session plan of {len(needed)} steps>", "exec"), env)  # noqa: S102
        self._plans[output_names] = env["evaluate"]
        return env["evaluate"]

    def _checked_feeds(self, input_feed):
        if type(input_feed) is not dict and not isinstance(input_feed, Mapping):
            raise InvalidInputError(
                f"{_WHERE}.run: input_feed must be a mapping of input names to arrays, "
                f"not {type(input_feed).__name__}")
        feeds = {}
        for name, value in input_feed.items():
            arg = self._feedable.get(name)
            if arg is None:
                raise InvalidInputError(
                    f"{_WHERE}.run: {name!r} is not an input of the model "
                    f"(inputs: {', '.join(a.name for a in self._inputs) or 'none'})")
            if not isinstance(value, np.ndarray):
                if isinstance(value, np.generic):
                    value = np.asarray(value)
                else:
                    raise InvalidInputError(
                        f"{_WHERE}.run: input {name!r} must be a numpy array, not {type(value).__name__}")
            dtype = value.dtype
            if not dtype.isnative:
                value = value.astype(dtype.newbyteorder("="))
            if arg._dtype is not None and value.dtype != arg._dtype:
                raise InvalidInputError(
                    f"{_WHERE}.run: input {name!r} has dtype {value.dtype}; the model declares {arg.type}")
            if arg.shape is not None and not arg._fits(value.shape):
                raise InvalidInputError(
                    f"{_WHERE}.run: input {name!r} has shape {value.shape}; the model declares {arg.shape}")
            feeds[name] = value
        missing = [a.name for a in self._inputs if a.name not in feeds]
        if missing:
            raise InvalidInputError(f"{_WHERE}.run: missing input{'s' if len(missing) > 1 else ''} "
                                    f"{', '.join(map(repr, missing))}")
        return feeds

    @staticmethod
    def _run_step(step, inputs, mode, n_threads):
        try:
            if step.kind == "served":
                return step.impl.run(inputs, step.attributes, step.version, mode, n_threads)
            return step.impl.run(step.version, inputs, step.attributes)
        except (InvalidInputError, UnsupportedError) as exc:
            raise type(exc)(f"{_WHERE}: {step.label}: {exc}") from None
        except (ValueError, TypeError, IndexError) as exc:
            if step.kind == "served":
                raise
            raise InvalidInputError(f"{_WHERE}: {step.label}: {type(exc).__name__}: {exc}") from None
