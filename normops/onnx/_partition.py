"""Which nodes of a model run on ONNX Runtime, and in how many pieces.

Pure graph logic, no onnx or onnxruntime: the session gives each node (in
topological order) a kind and its predecessors, and gets back, for each
node, the side it runs on and its place in the run.

A node is one of three kinds:

- ``"normops"``: a normops operator; it runs on normops.
- ``"plumbing"``: a NumPy plumbing operator (Reshape, Transpose, Add...);
  either side can run it.
- ``"ort"``: everything else; it runs on ONNX Runtime.

The nodes that run on ONNX Runtime are grouped into *pieces*, each one
ONNX Runtime session over a subgraph, run with one call. A piece must be
*convex*: no path may leave it through a node on normops' side and come
back, or its inputs would not be ready when it starts.

Every node gets a time: piece k runs at time k, and a node on normops'
side at time b - 1/2 when it runs after piece b - 1 and before piece b.
Along an edge the time may not decrease, and it must grow when the edge
changes sides. Each node takes the earliest time its predecessors allow
(as soon as possible): an ONNX Runtime node the smallest integer not below
any predecessor's time, a normops node the smallest half-integer above
them, and a plumbing node whichever of the two is earlier, that is the ONNX
Runtime side exactly when its latest predecessor is an ONNX Runtime node
(an Add after a MatMul joins the MatMul's piece; a Mul of two normops
results stays in NumPy, unless only ONNX Runtime nodes read it: then it
moves into their earliest piece, which changes no piece). Since what a
node's successors may do depends only
on its time, the earliest times are the best for every node at once, so
the number of pieces (the largest time plus one) is the fewest any
placement of the plumbing allows. The ONNX Runtime nodes of one time form
one piece, and it is convex: every node on a path between two of them has
the same time, so it is on ONNX Runtime too.
"""

from __future__ import annotations

__all__ = ["partition"]


def partition(kinds, preds):
    """Place the nodes: ``kinds[i]`` is "normops", "plumbing" or "ort" for
    node i (nodes in topological order), ``preds[i]`` the indices of the
    nodes whose outputs it reads.

    Returns ``(on_ort, piece, before)``: ``on_ort[i]`` whether node i runs
    on ONNX Runtime, ``piece[i]`` its piece (0, 1, ... in run order) or
    None, ``before[i]`` for a node on normops' side the number of pieces
    that run before it (it runs after piece ``before[i] - 1`` and before
    piece ``before[i]``), else None.
    """
    for kind in kinds:
        if kind not in ("normops", "plumbing", "ort"):
            raise ValueError(f"unknown node kind {kind!r}")
    n = len(kinds)
    # times doubled: piece k at 2k, "before piece b" at 2b - 1
    time = [0] * n
    on_ort = [False] * n
    for i in range(n):
        latest = -1  # before any piece
        for p in preds[i]:
            if time[p] > latest:
                latest = time[p]
        kind = kinds[i]
        if kind == "plumbing":
            kind = "ort" if latest >= 0 and latest % 2 == 0 else "normops"
        if kind == "ort":
            on_ort[i] = True
            time[i] = latest + 1 if latest % 2 else latest  # the next even time
        else:
            time[i] = latest if latest % 2 else latest + 1  # the next odd time
    # A plumbing node left in NumPy whose readers all run on ONNX Runtime
    # moves into the earliest of their pieces: it changes no piece (its
    # inputs come earlier, its readers are no earlier), and the value
    # crosses once instead of through a NumPy step. Readers first, so a
    # chain of plumbing before a piece moves whole.
    readers = [[] for _ in range(n)]
    for i in range(n):
        for p in preds[i]:
            readers[p].append(i)
    for i in range(n - 1, -1, -1):
        if kinds[i] == "plumbing" and not on_ort[i] and readers[i] and all(on_ort[r] for r in readers[i]):
            on_ort[i] = True
            time[i] = min(time[r] for r in readers[i])
    piece = [time[i] // 2 if on_ort[i] else None for i in range(n)]
    before = [None if on_ort[i] else (time[i] + 1) // 2 for i in range(n)]
    # every piece number below the highest is used: a node at time 2k + 2
    # or later has a path from a node at 2k (induction on the times)
    return on_ort, piece, before
