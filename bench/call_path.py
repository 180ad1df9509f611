"""Per-call cost of normops' entry points, interleaved in one process at one
thread (medians of per-call times, in microseconds):

* ``normops.run`` against the named function (``normops.ops``) of the same
  call, per operator and size, both flavours;
* an ``InferenceSession`` of a 10-node model against the same ten named
  calls in a row and against ONNX Runtime (one thread);
* ``normops.softmax``/``log_softmax`` against ``scipy.special``'s.

    python bench/call_path.py                  # every group
    python bench/call_path.py --only session --rounds 400

Each round times a batch of calls of every variant of a case back to back,
in an order that rotates from round to round; the figure is the median over
rounds of the batch time divided by the batch length. Wall-clock on a shared
machine: compare the columns of one run, and give the load (printed).
"""
import argparse
import os
import time

import numpy as np

import normops


CLOCK = time.perf_counter_ns


def interleaved(variants, rounds, target_s=2e-4, warmup=20):
    """Median per-call microseconds of each callable, interleaved: calls in
    batches of about target_s, the order rotating every round."""
    names = list(variants)
    calls = [variants[n] for n in names]
    for f in calls:  # warm-up, and a batch length of ~target_s per variant
        for _ in range(warmup):
            f()
    batch = []
    for f in calls:
        t = time.perf_counter()
        f()
        batch.append(max(1, min(200, int(target_s / max(time.perf_counter() - t, 1e-7)))))
    samples = [[] for _ in calls]
    for r in range(rounds):
        for k in range(len(calls)):
            i = (k + r) % len(calls)
            f, n = calls[i], batch[i]
            t = CLOCK()
            for _ in range(n):
                f()
            samples[i].append((CLOCK() - t) / n / 1e3)
    return {name: float(np.median(s)) for name, s in zip(names, samples)}


def _x(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def run_cases(sizes):
    """(label, variants) of normops.run against the named function."""
    for rows, cols in sizes:
        x, w, b = _x((rows, cols)), _x(cols, seed=1), _x(cols, seed=2)
        axes = np.array([1], np.int64)
        for mode in ("exact", "fast"):
            calls = [
                ("Softmax", [x], {}, lambda: normops.ops.softmax(x, mode=mode)),
                ("LogSoftmax", [x], {}, lambda: normops.ops.log_softmax(x, mode=mode)),
                ("Sigmoid", [x], {}, lambda: normops.ops.sigmoid(x, mode=mode)),
                ("LayerNormalization", [x, w, b], {}, lambda: normops.ops.layer_normalization(x, w, b, mode=mode)),
                ("RMSNormalization", [x, w], {}, lambda: normops.ops.rms_normalization(x, w, mode=mode)),
                ("LpNormalization", [x], {}, lambda: normops.ops.lp_normalization(x, mode=mode)),
                ("ReduceSum", [x, axes], {"keepdims": 0},
                 lambda: normops.ops.reduce_sum(x, axes, keepdims=0, mode=mode)),
            ]
            for op_type, inputs, attributes, named in calls:
                def through_run(op_type=op_type, inputs=inputs, attributes=attributes):
                    return normops.run(op_type, inputs, attributes, mode=mode)
                yield f"{op_type} {rows}x{cols} {mode}", {"named": named, "run": through_run}


def ten_node_model(cols):
    """LayerNorm, Softmax, Sigmoid, RMSNorm, LogSoftmax, twice (opset 23)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    init = [numpy_helper.from_array(_x(cols, seed=s), n) for s, n in ((1, "s1"), (2, "b1"), (3, "s2"), (4, "b2"))]
    nodes, prev = [], "x"
    for k, (op, extra) in enumerate([("LayerNormalization", ["s1", "b1"]), ("Softmax", []), ("Sigmoid", []),
                                     ("RMSNormalization", ["s2"]), ("LogSoftmax", []),
                                     ("LayerNormalization", ["s2", "b2"]), ("Softmax", []), ("Sigmoid", []),
                                     ("RMSNormalization", ["s1"]), ("LogSoftmax", [])]):
        out = "y" if k == 9 else f"t{k}"
        nodes.append(helper.make_node(op, [prev] + extra, [out], axis=-1) if op != "Sigmoid"
                     else helper.make_node(op, [prev], [out]))
        prev = out
    graph = helper.make_graph(nodes, "ten", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", cols])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", cols])], initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model, {t.name: numpy_helper.to_array(t) for t in init}


def session_cases(shapes):
    import onnxruntime as ort
    from normops.onnx import InferenceSession
    for rows, cols in shapes:
        model, p = ten_node_model(cols)
        x = _x((rows, cols))
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        ort_session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        for mode in ("exact", "fast"):
            session = InferenceSession(model, mode=mode, n_threads=1)
            ops = normops.ops

            def named(mode=mode):
                t = ops.layer_normalization(x, p["s1"], p["b1"], mode=mode, n_threads=1)
                t = ops.softmax(t, mode=mode, n_threads=1)
                t = ops.sigmoid(t, mode=mode, n_threads=1)
                t = ops.rms_normalization(t, p["s2"], mode=mode, n_threads=1)
                t = ops.log_softmax(t, mode=mode, n_threads=1)
                t = ops.layer_normalization(t, p["s2"], p["b2"], mode=mode, n_threads=1)
                t = ops.softmax(t, mode=mode, n_threads=1)
                t = ops.sigmoid(t, mode=mode, n_threads=1)
                t = ops.rms_normalization(t, p["s1"], mode=mode, n_threads=1)
                return ops.log_softmax(t, mode=mode, n_threads=1)

            (got,) = session.run(None, {"x": x})
            assert got.tobytes() == named().tobytes()
            yield (f"10-node model {rows}x{cols} {mode}",
                   {"10 named calls": named, "session": lambda s=session: s.run(None, {"x": x}),
                    "onnxruntime": lambda: ort_session.run(None, {"x": x})})


def scipy_cases(shapes):
    import scipy.special as special
    for shape in shapes:
        x = _x(shape)
        for name in ("softmax", "log_softmax"):
            ours, theirs = getattr(normops, name), getattr(special, name)
            yield f"{name} {'x'.join(map(str, shape))} axis=-1", {
                "scipy.special": lambda: theirs(x, axis=-1), "normops": lambda: ours(x, axis=-1)}
            if len(shape) == 2 and shape[0] * shape[1] <= 65536:
                yield f"{name} {'x'.join(map(str, shape))} axis=None", {
                    "scipy.special": lambda: theirs(x), "normops": lambda: ours(x)}
                yield f"{name} {'x'.join(map(str, shape))} axis=0", {
                    "scipy.special": lambda: theirs(x, axis=0), "normops": lambda: ours(x, axis=0)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("run", "session", "scipy"), action="append")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: perf_counter; cpu: the thread's CPU time (thread_time), which leaves out "
                             "the time other processes take on a loaded machine")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.perf_counter_ns if args.clock == "wall" else time.thread_time_ns
    groups = args.only or ["run", "session", "scipy"]
    normops.set_config(n_threads=1)
    print(f"normops {normops.__version__}, ISA {normops._isa.current_level()}, one thread, {args.clock} clock; "
          f"load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    sources = {"run": lambda: run_cases([(4, 8), (1, 1024), (64, 1024), (32, 4096)]),
               "session": lambda: session_cases([(4, 64), (64, 1024)]),
               "scipy": lambda: scipy_cases([(4, 8), (64, 64), (1, 1024), (64, 1024), (32, 4096)])}
    for group in groups:
        print(f"\n## {group}")
        for label, variants in sources[group]():
            medians = interleaved(variants, args.rounds)
            names = list(medians)
            base = medians[names[0]]
            cells = [f"{n} {medians[n]:8.2f}" for n in names]
            diffs = [f"{n} - {names[0]}: {medians[n] - base:+.2f}" for n in names[1:]]
            ratios = [f"{names[0]}/{n} {base / medians[n]:.2f}x" for n in names[1:]]
            print(f"{label:36s} " + " | ".join(cells) + " µs; " + "; ".join(diffs + ratios))
    print(f"\nload at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
