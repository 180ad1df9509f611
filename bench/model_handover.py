"""Whole models in normops' session against ONNX Runtime alone, and where the
time of a mixed run goes.

For each example model (normops.onnx.examples, the sizes of the
benchmark's ``model_*`` cases) and thread count, in one process, calls
alternated A, B, A, B... (the median of each variant's per-call times):

* ``ort``: ONNX Runtime alone on the whole model (worker threads sleeping
  between calls, as in the interleaved benchmark);
* ``session``: ``normops.onnx.InferenceSession`` (normops' nodes on normops,
  exact, the others in ONNX Runtime pieces);
* ``steps``: the same run's steps called one by one on their recorded
  inputs, without the session around them: each normops node through its
  operator, each NumPy plumbing node, each ONNX Runtime piece through its
  session. ``session - steps`` is what the session adds (the feeds' check,
  the compiled plan, the outputs' ownership check); the pieces' part of
  ``steps`` includes the hand-over at each boundary (building the feed
  dict, ONNX Runtime's per-call set-up, wrapping its outputs as arrays);
* ``tiny piece``: one ONNX Runtime piece of one Neg on a 1x1 input called
  the session's way: the fixed cost of one boundary round trip.

    python bench/model_handover.py                       # every model, 1 and 2 threads
    python bench/model_handover.py --only transformer --threads 1 --rounds 40

Wall-clock on a shared machine: compare the columns of one run, and give
the CPU and the load (printed).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from call_path import interleaved as _interleaved  # noqa: E402

def interleaved(variants, rounds):
    """call_path's interleaving with batches of about 20 ms (whole models)."""
    return _interleaved(variants, rounds, target_s=0.02, warmup=3)


def example_models(only=""):
    """(label, model, input) of the benchmark's model cases whose label
    contains ``only``: the example models at the page's sizes, seed 0."""
    from normops_tools.cases.measured import MODEL_CASES
    from normops.onnx import examples

    for kind, kwargs, shape in MODEL_CASES:
        label = f"{kind} {'x'.join(map(str, shape))}"
        if only in label:
            model = examples.transformer_block(**kwargs) if kind == "transformer" else examples.conv_block(**kwargs)
            yield label, model, np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def _steps_of(session, feeds, mode):
    """The session's steps as zero-argument calls on the inputs one run
    gives them: (kind, label, call)."""
    values = dict(session._constants)
    values.update(feeds)
    calls = []
    for step in session._steps:
        args = tuple(values[n] if n else None for n in step.arguments)
        if step.kind == "piece":
            names = list(step.outputs)
            call = (lambda run=step.piece.run, a=args, n=names: run(a, n))
            produced = dict(zip(names, call()))
        elif step.kind == "served":
            call = (lambda s=step, a=args: s.impl.run(a, s.attributes, s.version, mode, session._n_threads))
            produced = {n: v for n, v in zip(step.outputs, call()) if n}
        else:
            call = (lambda s=step, a=args: s.impl.run(s.version, a, s.attributes))
            produced = {n: v for n, v in zip(step.outputs, call()) if n}
        values.update(produced)
        calls.append((step.kind, step.label, call))
    return calls


def _tiny_piece(threads):
    from onnx import TensorProto, helper

    from normops.onnx import InferenceSession

    model = helper.make_model(helper.make_graph(
        [helper.make_node("Neg", ["x"], ["y"])], "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])]), opset_imports=[helper.make_opsetid("", 17)])
    session = InferenceSession(model, n_threads=threads)
    (step,) = session._steps
    x = np.ones((1, 1), np.float32)
    run = step.piece.run
    return lambda: run((x,), ["y"])


def measure(name, model, x, threads, rounds):
    import onnxruntime as ort

    from normops.onnx import InferenceSession

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "0")
    alone = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    session = InferenceSession(model, mode="exact", n_threads=threads)
    feeds = {"x": x}
    steps = _steps_of(session, feeds, "exact")
    pieces = [c for k, _, c in steps if k == "piece"]
    others = [c for k, _, c in steps if k != "piece"]

    def run_steps():
        for _, _, c in steps:
            c()

    def run_pieces():
        for c in pieces:
            c()

    def run_others():
        for c in others:
            c()

    variants = {"ort": lambda: alone.run(None, feeds), "session": lambda: session.run(None, feeds),
                "steps": run_steps, "pieces": run_pieces, "normops+numpy": run_others,
                "tiny piece": _tiny_piece(threads)}
    t = interleaved(variants, rounds)
    n_pieces = len(pieces)
    n_normops = sum(1 for k, _, _ in steps if k == "served")
    print(f"{name:<34s} {threads}  {t['ort']:9.0f} {t['session']:9.0f}  {t['ort'] / t['session']:5.2f}x"
          f"  {t['pieces']:9.0f} {t['normops+numpy']:9.0f} {t['session'] - t['steps']:7.0f}"
          f"  {n_pieces:2d} {n_normops:2d}  {t['tiny piece']:6.1f}")
    return t


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="models whose name contains this")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)

    print(f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print("times in microseconds (medians, interleaved); ratio = ort / session (above 1: the session is faster)")
    print(f"{'model':<34s} th  {'ort':>9s} {'session':>9s}  ratio  {'pieces':>9s} {'normops':>9s} {'session':>7s}"
          f"  {'#p':>2s} {'#n':>2s}  {'tiny':>6s}")
    print(f"{'':<34s}     {'':>9s} {'':>9s}         {'(ORT)':>9s} {'+numpy':>9s} {'-steps':>7s}"
          f"  {'':>2s} {'':>2s}  {'piece':>6s}")
    for name, model, x in example_models(args.only):
        for threads in (int(t) for t in args.threads.split(",")):
            measure(name, model, x, threads, args.rounds)
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
