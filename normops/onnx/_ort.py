"""ONNX Runtime for the nodes normops does not serve.

A *piece* is a set of nodes that runs as one ONNX Runtime session, built
once from a subgraph of the model (``onnx.helper``): the values it reads
from the rest of the model are its graph inputs, the initializers it reads
are its own, and the values the rest of the model or the caller reads are
its graph outputs. A *node fallback* is one normops node run alone on ONNX
Runtime for a call whose input types normops does not serve (types the
model leaves unknown until run time).

onnxruntime is imported only when a model needs it.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
from onnx import TensorProto

from .._errors import InvalidInputError, UnsupportedError

#: what to install for the nodes normops does not serve
INSTALL = "pip install 'normops[ort]'"

# ONNX Runtime's exception classes (onnxruntime.capi.onnxruntime_pybind11_state)
# that mean the model or the inputs are wrong; the rest means "not served".
_INVALID_AT_LOAD = ("InvalidGraph", "InvalidArgument", "InvalidProtobuf", "NoSuchFile")
_UNSUPPORTED_AT_RUN = ("NotImplemented",)


def available():
    """Whether onnxruntime can be imported (without importing it)."""
    try:
        return importlib.util.find_spec("onnxruntime") is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


def module():
    """The onnxruntime module, or None when it cannot be imported."""
    try:
        return importlib.import_module("onnxruntime")
    except ImportError:
        return None


def _message(exc):
    return " ".join(str(exc).split())


def load_error(exc):
    """The normops error for an ONNX Runtime session that cannot be made."""
    kind = InvalidInputError if type(exc).__name__ in _INVALID_AT_LOAD else UnsupportedError
    return kind(f"ONNX Runtime cannot load it: {_message(exc)}")


def run_error(exc):
    kind = UnsupportedError if type(exc).__name__ in _UNSUPPORTED_AT_RUN else InvalidInputError
    return kind(f"ONNX Runtime: {_message(exc)}")


def session_options(ort, n_threads, given):
    """The options of every ONNX Runtime session of one normops session: the
    caller's ``sess_options`` as given, or the defaults: ``n_threads``
    intra-op threads (0: ONNX Runtime's choice), sequential execution, no
    logging below fatal (errors come back as exceptions), and worker threads
    that sleep rather than spin between calls, since normops' own threads
    run in between (docs/onnx.md, "Threads")."""
    if given is not None:
        return given
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(n_threads or 0)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 4
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return so


def _value_info(name, type_proto):
    value = onnx.ValueInfoProto()
    value.name = name
    if type_proto is not None:
        value.type.CopyFrom(type_proto)
    return value


def tensor_type(dtype, shape=None):
    """A TypeProto of a tensor of NumPy ``dtype`` (shape unknown when None)."""
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return onnx.helper.make_tensor_type_proto(elem, shape)


def _elem_only(type_proto):
    """``type_proto`` without its shape (output shapes are ONNX Runtime's to infer)."""
    if type_proto is None or type_proto.WhichOneof("value") != "tensor_type":
        return type_proto
    out = onnx.TypeProto()
    out.tensor_type.elem_type = type_proto.tensor_type.elem_type
    return out


def build_model(base, nodes, inputs, outputs, initializers, name):
    """A model of ``nodes`` (NodeProtos in order) with the given graph
    ``inputs`` and ``outputs`` (lists of (name, TypeProto or None)) and
    ``initializers`` (TensorProtos), with ``base``'s opsets, IR version and
    model-local functions."""
    graph = onnx.helper.make_graph(
        list(nodes), name, [_value_info(n, t) for n, t in inputs],
        [_value_info(n, _elem_only(t)) for n, t in outputs], initializer=list(initializers))
    model = onnx.ModelProto()
    model.ir_version = base.ir_version
    model.opset_import.extend(base.opset_import)
    model.functions.extend(base.functions)
    model.graph.CopyFrom(graph)
    return model


class Piece:
    """Nodes that run as one ONNX Runtime session.

    ``run(inputs, names)`` takes the values of ``input_names`` in order and
    returns those of ``names`` (a subset of ``output_names``). The session
    is made at load time when the type of every input is known, else on the
    first call of each combination of input types (and again for a call
    whose types differ from those the model declares).
    """

    def __init__(self, number, label, base, nodes, input_names, input_types, output_names,
                 output_types, initializers, make_session):
        self.number = number
        self.label = label
        self.input_names = tuple(input_names)
        self.output_names = tuple(output_names)
        self._base = base
        self._nodes = list(nodes)
        self._input_types = list(input_types)
        self._output_types = list(output_types)
        self._initializers = list(initializers)
        self._make_session = make_session
        self._sessions = {}  # input dtypes -> the ONNX Runtime session's run
        self._lock = threading.Lock()
        self._dtypes = None
        self._run = None
        if all(_known(t) for t in self._input_types):
            self._dtypes = tuple(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type))
                                 if t.WhichOneof("value") == "tensor_type" else None for t in self._input_types)
            self._run = self._session(self._input_types, self._dtypes)

    def model(self, input_types=None):
        """The piece as an ONNX model (inputs typed as declared, or as given)."""
        types = self._input_types if input_types is None else input_types
        return build_model(self._base, self._nodes, list(zip(self.input_names, types)),
                           list(zip(self.output_names, self._output_types)), self._initializers,
                           f"normops_piece_{self.number}")

    def _session(self, input_types, key):
        with self._lock:
            run = self._sessions.get(key)
            if run is None:
                try:
                    session = self._make_session(self.model(input_types).SerializeToString())
                except Exception as exc:  # noqa: BLE001 - onnxruntime's own exception classes
                    raise load_error(exc) from None
                inner = getattr(session, "_sess", None)  # the binding's run, without the wrapper's checks
                run = inner.run if inner is not None else (lambda names, feeds, _o, s=session: s.run(names, feeds))
                self._sessions[key] = run
            return run

    def run(self, inputs, names):
        run = self._run
        declared = self._dtypes
        if declared is None or any(a.dtype != d for a, d in zip(inputs, declared) if d is not None):
            key = tuple(a.dtype for a in inputs)
            run = self._session([tensor_type(a.dtype) for a in inputs], key)
        try:
            return run(names, dict(zip(self.input_names, inputs)), None)
        except Exception as exc:  # noqa: BLE001 - onnxruntime's own exception classes
            raise run_error(exc) from None


def _known(type_proto):
    if type_proto is None:
        return False
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return type_proto.tensor_type.elem_type != TensorProto.UNDEFINED
    return kind is not None


class NodeFallback:
    """One normops node run alone on ONNX Runtime, for a call whose input
    types normops does not serve: ``run(inputs, error)`` returns the node's
    outputs by position (None for an empty name), or raises ``error`` (the
    normops refusal) when ONNX Runtime cannot run the node either."""

    def __init__(self, base, node, make_session):
        self._base = base
        self._node = node
        self._make_session = make_session
        self._sessions = {}
        self._lock = threading.Lock()

    def run(self, inputs, error):
        node = self._node
        fed = [(name, x) for name, x in zip(node.input, inputs) if name and x is not None]
        key = tuple(x.dtype for _, x in fed)
        with self._lock:
            session = self._sessions.get(key, False)
            if session is False:
                model = build_model(self._base, [node], [(n, tensor_type(x.dtype)) for n, x in fed],
                                    [(n, None) for n in node.output if n], [], "normops_fallback")
                try:
                    session = self._make_session(model.SerializeToString())
                except Exception:  # noqa: BLE001 - ONNX Runtime does not run it either
                    session = None
                self._sessions[key] = session
        if session is None:
            raise error
        names = [n for n in node.output if n]
        try:
            produced = dict(zip(names, session.run(names, dict(fed))))
        except Exception as exc:  # noqa: BLE001
            raise run_error(exc) from None
        return [produced.get(n) if n else None for n in node.output]


def make_session_factory(ort, options, providers=("CPUExecutionProvider",)):
    def make(model_bytes):
        return ort.InferenceSession(model_bytes, options, providers=list(providers))
    return make
