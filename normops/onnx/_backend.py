"""``onnx.backend.base.Backend`` over ``InferenceSession``, so that onnx's own
``onnx.backend.test.BackendTest`` runner can run models through normops."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.backend.base
import onnx.defs
import onnx.helper
from onnx.backend.base import BackendRep as _BaseRep
from onnx.backend.base import Device, DeviceType, namedtupledict

from .._errors import InvalidInputError, UnsupportedError
from .._registry import MAX_OPSET
from ._session import InferenceSession

# Keyword arguments onnx's BackendTest passes to prepare() (per-case
# tolerances); they concern the comparison, not the backend.
_RUNNER_KWARGS = ("rtol", "atol")


class BackendRep(_BaseRep):
    """A prepared model; ``run(inputs)`` takes a list (in the order of
    ``session.get_inputs()``), a dict name -> array, or one array."""

    def __init__(self, session):
        self.session = session

    def run(self, inputs, **kwargs):
        if kwargs:
            raise InvalidInputError(f"BackendRep.run: unknown keyword argument {sorted(kwargs)[0]!r}")
        names = [a.name for a in self.session.get_inputs()]
        if isinstance(inputs, dict):
            feeds = inputs
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            inputs = list(inputs)
            if len(inputs) != len(names):
                raise InvalidInputError(
                    f"BackendRep.run: got {len(inputs)} inputs, the model takes {len(names)} ({', '.join(names)})")
            feeds = dict(zip(names, inputs))
        outputs = self.session.run(None, feeds)
        return namedtupledict("Outputs", [a.name for a in self.session.get_outputs()])(*outputs)


class Backend(onnx.backend.base.Backend):
    """normops as an ONNX backend (CPU only). ``prepare(model, mode=...,
    n_threads=..., use_onnxruntime=...)``; ``mode`` defaults to the class's
    ``mode`` (None: ``normops.config``). ``FastBackend`` is the same with
    mode "fast".

    A backend tests normops' operators (onnx's backend test runner), so by
    default it refuses what normops does not serve instead of handing it to
    ONNX Runtime: ``use_onnxruntime=True`` (or the class attribute) lets
    the session run such nodes on ONNX Runtime.
    """

    mode = None
    use_onnxruntime = False

    @classmethod
    def supports_device(cls, device):
        try:
            return Device(device).type == DeviceType.CPU
        except (AttributeError, ValueError):
            return False

    @classmethod
    def _session(cls, model, device, kwargs):
        if not cls.supports_device(device):
            raise UnsupportedError(f"{cls.__name__}: device {device!r} is not served (only 'CPU')")
        mode = kwargs.pop("mode", cls.mode)
        n_threads = kwargs.pop("n_threads", None)
        use_onnxruntime = kwargs.pop("use_onnxruntime", cls.use_onnxruntime)
        for name in _RUNNER_KWARGS:
            kwargs.pop(name, None)
        if kwargs:
            raise InvalidInputError(f"{cls.__name__}: unknown keyword argument {sorted(kwargs)[0]!r}")
        return InferenceSession(model, mode=mode, n_threads=n_threads, use_onnxruntime=use_onnxruntime)

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        return BackendRep(cls._session(model, device, kwargs))

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        """Run one node: a one-node model is built around it (inputs typed
        from the arrays, the default-domain opset from ``opset_version`` or
        the newest normops knows)."""
        opset = kwargs.pop("opset_version", None)
        inputs = [None if x is None else np.asarray(x) for x in inputs]
        if len(inputs) > len(node.input):
            raise InvalidInputError(f"run_node: {len(inputs)} inputs for a node with {len(node.input)}")
        graph_inputs, feeds = [], {}
        for name, x in zip(node.input, inputs):
            if name and x is not None:
                elem = onnx.helper.np_dtype_to_tensor_dtype(x.dtype)
                graph_inputs.append(onnx.helper.make_tensor_value_info(name, elem, x.shape))
                feeds[name] = x
        first = next((x for x in inputs if x is not None), None)
        graph_outputs = []
        for k, name in enumerate(n for n in node.output if n):
            if outputs_info is not None and k < len(outputs_info):
                dtype, shape = outputs_info[k]
                elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
            else:  # not checked by the session; the first input's type is a guess
                elem = onnx.helper.np_dtype_to_tensor_dtype(first.dtype) if first is not None else onnx.TensorProto.FLOAT
                shape = None
            value = onnx.helper.make_tensor_value_info(name, elem, shape)
            value.type.tensor_type.shape.SetInParent()  # onnx.checker wants the field
            graph_outputs.append(value)
        domain = node.domain if node.domain not in ("", "ai.onnx") else ""
        default = opset if opset is not None else min(MAX_OPSET, onnx.defs.onnx_opset_version())
        opsets = [onnx.helper.make_opsetid("", default)]
        if domain:
            opsets.append(onnx.helper.make_opsetid(domain, 1))
        graph = onnx.helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        model = onnx.helper.make_model(graph, opset_imports=opsets)
        return cls.prepare(model, device, **kwargs).run(feeds)


class FastBackend(Backend):
    """``Backend`` in the fast flavour."""

    mode = "fast"


class ExactBackend(Backend):
    """``Backend`` in the exact flavour whatever ``normops.config`` says."""

    mode = "exact"
