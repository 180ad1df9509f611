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
*convex*: no path may leave it through a normops node and come back, or
its inputs would not be ready when it starts. Levels give the fewest
pieces: an ONNX Runtime node's level is the highest level of its ONNX
Runtime predecessors and of the ``before`` count of its normops
predecessors; a normops node's ``before`` count is one more than the level
of its ONNX Runtime predecessors (it needs their piece to have run) and at
least its normops predecessors' count. Then

- the ONNX Runtime nodes of one level form one piece, and it is convex: a
  path from one node of level k to another passes only nodes whose level
  or count lies between, and a normops node on it would lift the end to
  k + 1;
- their number is the longest alternation, along any path, of ONNX Runtime
  runs separated by normops nodes, which every partition needs at least.

Plumbing starts on the ONNX Runtime side (a Reshape or an Add between two
MatMuls then costs no extra call) and moves back to NumPy wherever it forms
a connected group without any ONNX Runtime operator: such a group would be
a call of its own. Moving it never raises a level (its ONNX Runtime
predecessors are on lower levels, or they would be connected to it), so the
count of pieces never grows; the levels are computed again until no such
group is left.
"""

from __future__ import annotations

__all__ = ["partition", "levels"]


def levels(on_ort, preds):
    """``(level, before)`` for an assignment: ``level[i]`` for nodes on ONNX
    Runtime, ``before[i]`` (how many pieces run before it) for the others;
    None where it does not apply."""
    n = len(on_ort)
    level = [None] * n
    before = [None] * n
    for i in range(n):
        if on_ort[i]:
            lv = 0
            for p in preds[i]:
                v = level[p] if on_ort[p] else before[p]
                if v > lv:
                    lv = v
            level[i] = lv
        else:
            b = 0
            for p in preds[i]:
                v = level[p] + 1 if on_ort[p] else before[p]
                if v > b:
                    b = v
            before[i] = b
    return level, before


def _groups(on_ort, level, preds):
    """Connected groups of ONNX Runtime nodes of one level (edges between
    two such nodes of the same level), as lists of indices."""
    parent = list(range(len(on_ort)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(on_ort)):
        if not on_ort[i]:
            continue
        for p in preds[i]:
            if on_ort[p] and level[p] == level[i]:
                a, b = find(i), find(p)
                if a != b:
                    parent[a] = b
    groups = {}
    for i in range(len(on_ort)):
        if on_ort[i]:
            groups.setdefault(find(i), []).append(i)
    return list(groups.values())


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
    on_ort = [k != "normops" for k in kinds]
    if "ort" not in kinds:
        on_ort = [False] * len(kinds)
    while True:
        level, before = levels(on_ort, preds)
        lonely = [g for g in _groups(on_ort, level, preds) if all(kinds[i] == "plumbing" for i in g)]
        if not lonely:
            break
        for group in lonely:
            for i in group:
                on_ort[i] = False
    # number the pieces 0, 1, ... (every level up to the highest is used,
    # but compacting costs nothing and keeps the invariant obvious)
    used = sorted({lv for lv, o in zip(level, on_ort) if o})
    rank = {lv: k for k, lv in enumerate(used)}
    piece = [rank[lv] if o else None for lv, o in zip(level, on_ort)]
    before = [None if o else sum(1 for u in used if u < b) for b, o in zip(before, on_ort)]
    return on_ort, piece, before
