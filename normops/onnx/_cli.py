"""``python -m normops run-model MODEL [--input NAME=FILE.npy ...]``.

Without inputs it loads the model and describes it (or lists what normops
does not serve); with inputs it runs it and prints or saves the outputs.
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
    return parser


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
        session = InferenceSession(args.model, mode=args.mode, n_threads=args.threads)
    except (InvalidInputError, UnsupportedError) as exc:
        print(f"run-model: {exc}", file=sys.stderr)
        return 1
    if not feeds:
        print(f"{args.model}: normops serves every node")
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
