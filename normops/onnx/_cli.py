"""``python -m normops run-model MODEL [--input NAME=FILE.npy ...]``.

Without inputs it loads the model and describes it: where its nodes run
(normops, NumPy plumbing, ONNX Runtime), or why it cannot be loaded; with
inputs it runs it and prints or saves the outputs.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .._errors import InvalidInputError, UnsupportedError
from ._session import InferenceSession


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m normops run-model",
        description="Load an ONNX model with normops.onnx.InferenceSession; describe it, or run it on "
                    "inputs read from .npy files.")
    parser.add_argument("model", help="path of the .onnx file")
    parser.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input, read with numpy.load (repeat for each input)")
    parser.add_argument("--output", "-o", metavar="FILE.npz", help="save the outputs with numpy.savez")
    parser.add_argument("--mode", choices=("exact", "fast"), default=None, help="flavour (default: exact)")
    parser.add_argument("--threads", type=int, default=None, help="thread count (default: OpenMP's)")
    parser.add_argument("--placement", action="store_true",
                        help="list every node with where it runs (default: a summary)")
    parser.add_argument("--normops-only", action="store_true",
                        help="refuse the model when a node needs ONNX Runtime")
    return parser


def _summary(session):
    """Lines saying where the nodes run, operator by operator."""
    rows = session.placement()
    lines = []
    for runs_on, title in (("normops", "normops"), ("numpy", "numpy (plumbing)"),
                           ("onnxruntime", "onnxruntime")):
        counts = {}
        for row in rows:
            if row.runs_on == runs_on:
                counts[row.op_type] = counts.get(row.op_type, 0) + 1
        if not counts:
            continue
        pieces = {row.piece for row in rows if row.runs_on == runs_on and row.piece is not None}
        if runs_on == "onnxruntime":
            title += f" in {len(pieces)} piece{'s' if len(pieces) != 1 else ''}"
        ops = ", ".join(f"{op} x{n}" if n > 1 else op for op, n in sorted(counts.items()))
        n = sum(counts.values())
        lines.append(f"  {title}: {n} node{'s' if n != 1 else ''} ({ops})")
    return lines


def _table(session):
    lines = ["  node  runs on      piece  operator (name): reason"]
    for row in session.placement():
        piece = "" if row.piece is None else str(row.piece)
        name = f" ({row.name!r})" if row.name else ""
        domain = "" if row.domain == "ai.onnx" else f"{row.domain}::"
        reason = f": {row.reason}" if row.reason else ""
        lines.append(f"  {row.node:4d}  {row.runs_on:<11s}  {piece:>5s}  {domain}{row.op_type}{name}{reason}")
    return lines


def main(argv=None):
    args = _parser().parse_args(argv)
    feeds = {}
    for item in args.input:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            print(f"run-model: --input wants NAME=FILE.npy, not {item!r}", file=sys.stderr)
            return 2
        try:
            feeds[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as exc:
            print(f"run-model: cannot read {file!r}: {exc}", file=sys.stderr)
            return 2
    try:
        session = InferenceSession(args.model, mode=args.mode, n_threads=args.threads,
                                   use_onnxruntime=not args.normops_only)
    except (InvalidInputError, UnsupportedError) as exc:
        print(f"run-model: {exc}", file=sys.stderr)
        return 1
    if not feeds:
        on_ort = sum(row.runs_on == "onnxruntime" for row in session.placement())
        if not on_ort:
            print(f"{args.model}: normops serves every node")
        elif on_ort == len(session.placement()):
            print(f"{args.model}: ONNX Runtime runs every node")
        else:
            print(f"{args.model}: normops runs some nodes, ONNX Runtime runs the others")
        print("placement:")
        for line in _table(session) if args.placement else _summary(session):
            print(line)
        for title, values in (("inputs", session.get_inputs()), ("outputs", session.get_outputs())):
            print(f"{title}:")
            for arg in values:
                print(f"  {arg.name}: {arg.type} {arg.shape}")
        return 0
    try:
        outputs = session.run(None, feeds)
    except (InvalidInputError, UnsupportedError) as exc:
        print(f"run-model: {exc}", file=sys.stderr)
        return 1
    names = [a.name for a in session.get_outputs()]
    for name, value in zip(names, outputs):
        print(f"{name}: {value.dtype} {list(value.shape)}")
    if args.output:
        np.savez(args.output, **dict(zip(names, outputs)))
        print(f"wrote {args.output}")
    return 0
