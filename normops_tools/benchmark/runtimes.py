"""The runtimes the benchmark compares.

A runtime turns a `Case` and its inputs into a zero-argument callable that
computes the node once. Runtimes are only set up inside a worker process
(`normops_tools.benchmark.worker`), one runtime and one thread count per process,
so that importing one (ONNX Runtime's spinning thread pool, torch's OpenMP
pool) cannot slow down another.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, Callable

import numpy as np

from normops_tools.cases.measured import Case, call_as_written

__all__ = [
    "RUNTIMES",
    "DEFAULT_RUNTIMES",
    "RuntimeUnavailable",
    "CaseUnsupported",
    "get_runtime",
    "missing_modules",
    "prepare",
    "output_array",
]


class RuntimeUnavailable(Exception):
    """The runtime cannot run in this environment (a module is missing)."""


class CaseUnsupported(Exception):
    """The runtime has no equivalent of this case."""


class Runtime:
    name = ""
    modules: tuple[str, ...] = ()
    #: whether the thread count changes anything
    threaded = True

    def setup(self, threads: int) -> None:
        """Import and configure; raise RuntimeUnavailable if impossible."""

    def versions(self) -> dict[str, str]:
        return {}

    def prepare(self, case: Case, inputs: list[np.ndarray], threads: int) -> Callable[[], Any]:
        raise NotImplementedError

    def to_numpy(self, result: Any) -> np.ndarray:
        return np.asarray(result)


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception as exc:  # ImportError, or a broken install
        raise RuntimeUnavailable(f"cannot import {name}: {exc}") from None


def missing_modules(runtime: str) -> list[str]:
    """Modules the runtime needs that are not installed (no import done)."""
    return [m for m in RUNTIMES[runtime].modules if importlib.util.find_spec(m) is None]


class NormopsRuntime(Runtime):
    modules = ("normops",)

    def __init__(self, mode: str):
        self.mode = mode
        self.name = f"normops-{mode}"

    def setup(self, threads):
        self.normops = _import("normops")

    def versions(self):
        out = {"normops": str(getattr(self.normops, "__version__", "?"))}
        try:
            out["normops_isa"] = str(self.normops.show_config(print_out=False)["isa"])
        except Exception:  # an older or partial build: the version is enough
            pass
        return out

    def prepare(self, case, inputs, threads):
        fn = self.normops
        for part in case.normops_fn.split("."):  # e.g. "ops.softmax"
            fn = getattr(fn, part, None)
        if fn is None:
            raise RuntimeUnavailable(f"normops has no function {case.normops_fn}()")
        return call_as_written(fn, inputs, dict(case.attributes, mode=self.mode, n_threads=threads))


class NumpyRuntime(Runtime):
    name = "numpy"
    modules = ("numpy",)
    threaded = False

    def versions(self):
        return {"numpy": np.__version__}

    def prepare(self, case, inputs, threads):
        fn, attrs = case.numpy_fn, case.attributes
        if fn is None:
            raise CaseUnsupported(f"no NumPy expression for {case.name}")
        return lambda: fn(inputs, attrs)


class CaseOnlyRuntime(Runtime):
    """A runtime with no default call: only cases that bring a builder for
    it (`Case.builders`) run in it."""

    threaded = True

    def __init__(self, name: str, modules: tuple[str, ...], what: str):
        self.name, self.modules, self.what = name, modules, what

    def setup(self, threads):
        for m in self.modules:
            _import(m)

    def versions(self):
        out = {}
        for m in self.modules:
            mod = importlib.import_module(m)
            out[m] = str(getattr(mod, "__version__", "?"))
        return out

    def prepare(self, case, inputs, threads):
        raise CaseUnsupported(f"{case.name} has no {self.what} call")


class TorchRuntime(Runtime):
    name = "torch"
    modules = ("torch",)

    def setup(self, threads):
        self.torch = _import("torch")
        self.torch.set_num_threads(threads)

    def versions(self):
        return {"torch": self.torch.__version__}

    def prepare(self, case, inputs, threads):
        if case.torch_fn is None:
            raise CaseUnsupported(f"torch has no equivalent of {case.op_type}")
        torch, fn, attrs = self.torch, case.torch_fn, case.attributes
        tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs]

        def call():
            with torch.inference_mode():
                return fn(torch, tensors, attrs)

        return call

    def to_numpy(self, result):
        return result.numpy()


def build_onnx_model(case: Case, inputs: list[np.ndarray]):
    """A one-node ONNX model of `case`: X is the graph input, the other
    inputs are initializers (the weights of a real model)."""
    from onnx import helper, numpy_helper

    x = inputs[0]
    names = list(case.input_names[: len(inputs)])
    inits = [numpy_helper.from_array(a, n) for a, n in zip(inputs[1:], names[1:])]
    extra = list(getattr(case, "extra_outputs", ()))
    node = helper.make_node(case.op_type, names, ["Y"] + extra, domain=case.domain, **case.attributes)
    y = case.numpy_fn(inputs, case.attributes)
    graph = helper.make_graph(
        [node],
        case.name,
        [helper.make_tensor_value_info(names[0], helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
        [helper.make_tensor_value_info("Y", helper.np_dtype_to_tensor_dtype(y.dtype), y.shape)]
        + [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(y.dtype), None) for n in extra],
        initializer=inits,
    )
    opsets = [helper.make_opsetid(case.domain, case.opset_import or case.opset)]
    if case.domain not in ("", "ai.onnx"):
        opsets.append(helper.make_opsetid("", 17))
    # IR version 10 is read by every ONNX Runtime this benchmark supports.
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


class OnnxRuntime(Runtime):
    """`InferenceSession.run(None, feeds)` with numpy feeds: the path a user
    of ONNX Runtime's Python API takes."""

    name = "onnxruntime"
    modules = ("onnxruntime", "onnx")
    #: False: worker threads sleep between calls instead of spinning
    #: (``session.intra_op.allow_spinning`` = "0"), as normops' OpenMP
    #: threads do under ``OMP_WAIT_POLICY=PASSIVE``; the interleaved
    #: benchmark turns it off so neither runtime steals the other's cores.
    spinning = True

    def setup(self, threads):
        self.ort = _import("onnxruntime")
        _import("onnx")
        self.ort.set_default_logger_severity(3)

    def versions(self):
        import onnx

        return {"onnxruntime": self.ort.__version__, "onnx": onnx.__version__}

    def session(self, case, inputs, threads):
        ort = self.ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if not self.spinning:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            so.add_session_config_entry("session.inter_op.allow_spinning", "0")
        model = case.onnx_model(inputs) if case.onnx_model is not None else build_onnx_model(case, inputs)
        try:
            return ort.InferenceSession(
                model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise CaseUnsupported(f"onnxruntime rejects the model: {exc}") from None

    def prepare(self, case, inputs, threads):
        sess = self.session(case, inputs, threads)
        feeds = {case.input_names[0]: inputs[0]}
        return lambda: sess.run(None, feeds)

    def to_numpy(self, result):
        return np.asarray(result[0])


class OnnxRuntimeIOBinding(OnnxRuntime):
    """`run_with_iobinding` with the input bound once as an `OrtValue` and
    the output bound to the CPU device (ONNX Runtime allocates it per run,
    as normops does): ONNX Runtime's lowest per-call overhead through Python.

    (`run_with_ort_values` is not used: in onnxruntime 1.31.1 its Python
    wrapper validates the OrtValues on every call, tens of µs.)"""

    name = "onnxruntime-iobinding"

    def prepare(self, case, inputs, threads):
        sess = self.session(case, inputs, threads)
        binding = sess.io_binding()
        binding.bind_ortvalue_input(
            case.input_names[0], self.ort.OrtValue.ortvalue_from_numpy(inputs[0]))
        binding.bind_output("Y", "cpu")
        run = sess.run_with_iobinding

        def call():
            run(binding)
            return binding

        return call

    def to_numpy(self, result):
        return result.copy_outputs_to_cpu()[0]


RUNTIMES: dict[str, Runtime] = {
    rt.name: rt
    for rt in (
        NormopsRuntime("exact"),
        NormopsRuntime("fast"),
        OnnxRuntime(),
        NumpyRuntime(),
        TorchRuntime(),
        OnnxRuntimeIOBinding(),
        CaseOnlyRuntime("normops-run", ("normops",), "normops.run"),
        CaseOnlyRuntime("normops-named", ("normops",), "named-function"),
        CaseOnlyRuntime("scipy", ("scipy",), "SciPy"),
    )
}

#: Compared by default; `onnxruntime-iobinding` only on request.
DEFAULT_RUNTIMES = ("normops-exact", "normops-fast", "onnxruntime", "numpy", "torch")

#: Compared by default with ``--interleave``: also the routes of the
#: "route" cases and SciPy for the SciPy-style functions.
INTERLEAVE_RUNTIMES = DEFAULT_RUNTIMES + ("scipy", "normops-run", "normops-named")


def prepare(runtime: Runtime, case: Case, inputs: list[np.ndarray], threads: int) -> Callable[[], Any]:
    """The zero-argument call of `case` in `runtime`: the case's own builder
    for that runtime when it has one, else the runtime's default call.
    Raises CaseUnsupported when the case does not run in `runtime`."""
    if case.contenders is not None and runtime.name not in case.contenders:
        raise CaseUnsupported(f"{case.name} is not measured in {runtime.name}")
    build = case.builders.get(runtime.name)
    if build is not None:
        return build(inputs, threads)
    return runtime.prepare(case, inputs, threads)


def output_array(runtime: Runtime, case: Case, result: Any) -> np.ndarray:
    """The first output of a call made by `prepare`, as an array."""
    if runtime.name in case.builders:
        if isinstance(result, (list, tuple)):
            result = result[0]
        return np.asarray(result)
    return runtime.to_numpy(result)


def get_runtime(name: str) -> Runtime:
    try:
        return RUNTIMES[name]
    except KeyError:
        raise ValueError(
            f"unknown runtime {name!r}; known: {', '.join(RUNTIMES)}") from None
