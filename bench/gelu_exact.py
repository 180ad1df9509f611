#!/usr/bin/env python
"""Gelu (approximate="none" and "tanh") on 1048576 float32 and com.microsoft BiasGelu
on 1024 x 1024 (+ 1024): normops exact / fast or ONNX Runtime, one runtime
per process (run it twice and compare).

At 1 thread the time is the calling thread's CPU time
(time.thread_time_ns: robust to other work on a shared machine); at more
threads it is wall-clock time (noisy under load). Medians of interleaved
calls, in ns per element.

    python bench/gelu_exact.py normops --threads 1,2
    python bench/gelu_exact.py onnxruntime --threads 1,2
"""
import argparse
import time

import numpy as np

N = 1 << 20


def normops_cases(threads):
    import normops
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal(1024).astype(np.float32)
    return {
        "Gelu exact": lambda: normops.gelu(x, mode="exact", n_threads=threads),
        "Gelu fast": lambda: normops.gelu(x, mode="fast", n_threads=threads),
        "Gelu tanh exact": lambda: normops.gelu(x, approximate="tanh", mode="exact", n_threads=threads),
        "Gelu tanh fast": lambda: normops.gelu(x, approximate="tanh", mode="fast", n_threads=threads),
        "BiasGelu exact": lambda: normops.bias_gelu(a, b, mode="exact", n_threads=threads),
        "BiasGelu fast": lambda: normops.bias_gelu(a, b, mode="fast", n_threads=threads),
    }


def ort_cases(threads):
    import onnxruntime as ort
    from onnx import TensorProto, helper

    def session(op, inputs, domain="", **attributes):
        node = helper.make_node(op, [name for name, _ in inputs], ["Y"], domain=domain, **attributes)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                                for n, s in inputs],
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
        opsets = [helper.make_opsetid("", 20)] + ([helper.make_opsetid(domain, 1)] if domain else [])
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        return ort.InferenceSession(helper.make_model(graph, opset_imports=opsets).SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])

    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    b = rng.standard_normal(1024).astype(np.float32)
    gelu = session("Gelu", [("X", [N])])
    gelu_tanh = session("Gelu", [("X", [N])], approximate="tanh")
    bias = session("BiasGelu", [("A", [1024, 1024]), ("B", [1024])], "com.microsoft")
    return {"Gelu": lambda: gelu.run(None, {"X": x}), "Gelu tanh": lambda: gelu_tanh.run(None, {"X": x}),
            "BiasGelu": lambda: bias.run(None, {"A": a, "B": b})}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runtime", choices=("normops", "onnxruntime"))
    parser.add_argument("--threads", default="1")
    parser.add_argument("--repeat", type=int, default=60)
    args = parser.parse_args()
    for threads in [int(t) for t in args.threads.split(",")]:
        cases = (normops_cases if args.runtime == "normops" else ort_cases)(threads)
        clock = time.thread_time_ns if threads == 1 else time.perf_counter_ns
        samples = {name: [] for name in cases}
        for f in cases.values():  # warm up
            f()
        for _ in range(args.repeat):
            for name, f in cases.items():
                t = clock()
                f()
                samples[name].append(clock() - t)
        for name, s in samples.items():
            print(f"{args.runtime} {name}, {threads} thread(s), {'CPU' if threads == 1 else 'wall'}: "
                  f"{np.median(s) / N:.3f} ns/element ({np.median(s) / 1e3:.0f} us)")


if __name__ == "__main__":
    main()
