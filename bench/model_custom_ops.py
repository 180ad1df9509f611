"""The other way to mix normops with ONNX Runtime, measured: one ONNX Runtime
session over the whole model whose normops nodes are ONNX Runtime custom
operators calling normops from Python (onnxruntime-extensions' Python
operators), against the partitioned session (``normops.onnx``) and ONNX
Runtime alone, interleaved in one process (medians of per-call times).

    pip install onnxruntime-extensions     # only for this script
    python bench/model_custom_ops.py [--only transformer] [--threads 1,2] [--rounds 30]

Compiled custom operators (C++ against ONNX Runtime's custom-op API) would
avoid the Python callback, but need a compiled library per platform; the
Python ones show what the callback and its copies cost.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import onnx
from onnx import AttributeProto

from model_handover import example_models, interleaved

_ATTR_TYPES = {}
#: the thread count the custom operators pass to normops (set per measurement)
THREADS = [1]


def _custom_model(model, session):
    """``model`` with each node the session runs on normops replaced by a
    Python custom operator (domain ai.onnx.contrib) that calls normops.run
    on the node's inputs with its attributes."""
    from onnxruntime_extensions import PyCustomOpDef, onnx_op

    import normops

    kinds = {AttributeProto.INT: PyCustomOpDef.dt_int64, AttributeProto.FLOAT: PyCustomOpDef.dt_float,
             AttributeProto.STRING: PyCustomOpDef.dt_string}
    opsets = {e.domain or "": e.version for e in model.opset_import}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    served = {p.node for p in session.placement() if p.runs_on == "normops"}
    for i in served:
        node = out.graph.node[i]
        op_type = node.op_type
        name = f"Normops{op_type}{len(node.input)}"
        if name not in _ATTR_TYPES:
            attrs = {a.name: kinds[a.type] for a in node.attribute}
            _ATTR_TYPES[name] = attrs
            opset = opsets[node.domain or ""]

            def make(op_type=op_type, opset=opset, attrs=tuple(attrs)):
                def call(*inputs, **kwargs):
                    given = {k: v for k, v in kwargs.items() if k in attrs}
                    return normops.run(op_type, list(inputs), given, opset=opset, mode="exact",
                                       n_threads=THREADS[0])[0]
                return call

            onnx_op(op_type=name, inputs=[PyCustomOpDef.dt_float] * len(node.input),
                    outputs=[PyCustomOpDef.dt_float], attrs=attrs or None)(make())
        node.op_type, node.domain = name, "ai.onnx.contrib"
    out.opset_import.add(domain="ai.onnx.contrib", version=1)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)

    import onnxruntime as ort
    from onnxruntime_extensions import get_library_path

    from normops.onnx import InferenceSession

    print(f"{os.cpu_count()} logical CPUs; load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("microseconds (medians, interleaved); ratios: ONNX Runtime alone / variant")
    print(f"{'model':<28s} th  {'ort':>9s} {'session':>9s} {'custom':>9s}  {'ort/sess':>8s} {'ort/cust':>8s}")
    # Every custom operator is registered before the first session takes
    # the library: onnxruntime-extensions crashes on one registered later.
    models = []
    for label, model, x in example_models(args.only):
        models.append((label, model, _custom_model(model, InferenceSession(model)), {"x": x}))
    for label, model, custom_model, feeds in models:
        for threads in (int(t) for t in args.threads.split(",")):
            THREADS[0] = threads

            def options(custom=False):
                so = ort.SessionOptions()
                so.intra_op_num_threads = threads
                so.inter_op_num_threads = 1
                so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
                so.add_session_config_entry("session.intra_op.allow_spinning", "0")
                if custom:
                    so.register_custom_ops_library(get_library_path())
                return so

            session = InferenceSession(model, mode="exact", n_threads=threads)
            alone = ort.InferenceSession(model.SerializeToString(), options(), providers=["CPUExecutionProvider"])
            custom = ort.InferenceSession(custom_model.SerializeToString(), options(True),
                                          providers=["CPUExecutionProvider"])
            y_custom = custom.run(None, feeds)[0]
            y_session = session.run(None, feeds)[0]
            assert y_custom.shape == y_session.shape
            t = interleaved({"ort": lambda: alone.run(None, feeds), "session": lambda: session.run(None, feeds),
                             "custom": lambda: custom.run(None, feeds)}, args.rounds)
            print(f"{label:<28s} {threads}   {t['ort']:9.0f} {t['session']:9.0f} {t['custom']:9.0f}"
                  f"  {t['ort'] / t['session']:8.2f} {t['ort'] / t['custom']:8.2f}  "
                  f"max |custom - session| {float(np.abs(y_custom - y_session).max()):.2g}")
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
