"""Batch invariance: a row's result does not depend on the other rows of the
call. Row i of op(X) has the bits of op(X[i:i+1]) for every row-wise
operator, in both flavours and at every thread count, whatever the batch
size and wherever the row sits (docs/exactness.md, "Batch invariance").

Random batch sizes 1..300 and row lengths from 1 (rows grouped side by
side, the fast Softmax's groups of short rows) to a few thousand (rows
split between threads); the single rows are computed once per case and
every batched call is compared with them, row by row, as integer bits."""

import numpy as np
import pytest

import normops
import normops._isa

from bits import bits

MODES = ("exact", "fast")
THREADS = (1, 2, 3)
COLS = (1, 2, 3, 5, 8, 13, 16, 17, 31, 64, 100, 257, 1000, 2049)

# (name, op_type, attributes, opset, extra inputs made from the row length)
ROW_WISE = [
    ("layernorm", "LayerNormalization", {"axis": -1}, 17, ("scale", "bias")),
    ("layernorm-nobias", "LayerNormalization", {"axis": -1}, 17, ("scale",)),
    ("rmsnorm", "RMSNormalization", {"axis": -1}, 23, ("scale",)),
    ("simplified", "SimplifiedLayerNormalization", {"axis": -1}, None, ("scale",)),
    ("softmax", "Softmax", {"axis": -1}, 13, ()),
    ("logsoftmax", "LogSoftmax", {"axis": -1}, 13, ()),
    ("hardmax", "Hardmax", {"axis": -1}, 13, ()),
    ("mvn", "MeanVarianceNormalization", {"axes": [1]}, 13, ()),
    ("lpnorm1", "LpNormalization", {"axis": -1, "p": 1}, 22, ()),
    ("lpnorm2", "LpNormalization", {"axis": -1, "p": 2}, 22, ()),
    ("sigmoid", "Sigmoid", {}, 13, ()),
    ("gelu", "Gelu", {}, 20, ()),
    ("gelu-tanh", "Gelu", {"approximate": "tanh"}, 20, ()),
    ("reducesum", "ReduceSum", {"keepdims": 1}, 13, ("axes",)),
    ("reducemean", "ReduceMean", {"keepdims": 1}, 18, ("axes",)),
    ("reducemax", "ReduceMax", {"keepdims": 1}, 18, ("axes",)),
    ("reducel2", "ReduceL2", {"keepdims": 1}, 18, ("axes",)),
    ("reducelogsumexp", "ReduceLogSumExp", {"keepdims": 1}, 18, ("axes",)),
    ("reduceprod", "ReduceProd", {"keepdims": 1}, 18, ("axes",)),
]


def rows_of(rng, n, cols, dtype):
    """n rows of mixed magnitudes, some special values, one row of each
    kind of special when there is room."""
    x = (rng.random((n, cols)) * 2 - 1) * np.ldexp(1.0, rng.integers(-4, 4, size=(n, cols)))
    picks = rng.random((n, cols)) < 0.02
    x[picks] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3e38], size=int(picks.sum()))
    if n >= 4:
        x[rng.integers(0, n)] = -np.inf
        x[rng.integers(0, n)] = np.nan
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def inputs_for(extra, x, rng):
    cols = x.shape[-1]
    made = [x]
    for kind in extra:
        if kind == "axes":
            made.append(np.array([-1], np.int64))
        else:
            made.append((rng.random(cols) + 0.5).astype(x.dtype))
    return made


def check_rows(name, op, attributes, opset, extra, dtype, seed):
    rng = np.random.default_rng(seed)
    for cols in COLS:
        n = int(rng.integers(1, 301))
        if cols >= 1000:
            n = int(rng.integers(1, 41))  # some still above the serial threshold
        x = rows_of(rng, n, cols, dtype)
        inputs = inputs_for(extra, x, rng)
        for mode in MODES:
            single = [normops.run(op, [x[i:i + 1]] + inputs[1:], attributes, opset=opset, mode=mode,
                                  n_threads=1) for i in range(n)]
            for t in THREADS:
                batched = normops.run(op, inputs, attributes, opset=opset, mode=mode, n_threads=t)
                assert len(batched) == len(single[0])
                for k, out in enumerate(batched):
                    want = np.concatenate([s[k] for s in single], axis=0)
                    got = bits(out)
                    bad = np.nonzero((got != bits(want)).reshape(n, -1).any(axis=1))[0]
                    assert bad.size == 0, (f"{name} {dtype} mode={mode} threads={t} batch={n} cols={cols}: "
                                           f"output {k} of rows {bad[:8].tolist()} differs from the row alone")


@pytest.mark.parametrize("name, op, attributes, opset, extra", ROW_WISE, ids=[c[0] for c in ROW_WISE])
def test_row_alone_equals_row_in_batch(name, op, attributes, opset, extra):
    check_rows(name, op, attributes, opset, extra, np.float32, [7, len(name)])


@pytest.mark.parametrize("dtype", [np.float64, np.float16], ids=["float64", "float16"])
@pytest.mark.parametrize("name, op, attributes, opset, extra",
                         [pytest.param(*c, id=c[0]) for c in ROW_WISE
                          if c[0] in ("layernorm", "rmsnorm", "softmax", "logsoftmax", "gelu", "reducesum", "lpnorm2")])
def test_other_dtypes(name, op, attributes, opset, extra, dtype):
    check_rows(name, op, attributes, opset, extra, dtype, [11, len(name), np.dtype(dtype).itemsize])


def test_reduction_over_last_two_axes():
    """Each output of a reduction over the last axes of a 3-D array: output
    (i, 0, 0) equals the reduction of X[i:i+1] alone."""
    rng = np.random.default_rng(5)
    for op in ("ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceLogSumExp", "ReduceMin", "ReduceL1"):
        for inner in ((3, 5), (16, 17), (40, 100)):
            n = int(rng.integers(1, 120))
            x = rows_of(rng, n, inner[0] * inner[1], np.float32).reshape((n,) + inner)
            axes = np.array([1, 2], np.int64)
            opset = 13 if op == "ReduceSum" else 18
            for t in THREADS:
                batched = normops.run(op, [x, axes], {"keepdims": 0}, opset=opset, n_threads=t)[0]
                for i in range(n):
                    alone = normops.run(op, [x[i:i + 1], axes], {"keepdims": 0}, opset=opset, n_threads=1)[0]
                    assert bits(batched[i:i + 1]).tolist() == bits(alone).tolist(), (op, inner, n, i, t)


def test_row_position_and_neighbours():
    """The same row at every position of batches with different
    neighbours: always the same bits (the groups of 1, 2 or 4 rows summed
    side by side, and the fast Softmax's groups of short rows, start at
    different offsets)."""
    rng = np.random.default_rng(9)
    for cols in (3, 16, 100):
        row = rows_of(rng, 1, cols, np.float32)
        scale = (rng.random(cols) + 0.5).astype(np.float32)
        for op, inputs_tail, attributes, opset in (
                ("LayerNormalization", [scale], {"axis": -1}, 17),
                ("Softmax", [], {"axis": -1}, 13),
                ("LogSoftmax", [], {"axis": -1}, 13)):
            for mode in MODES:
                alone = normops.run(op, [row] + inputs_tail, attributes, opset=opset, mode=mode)[0]
                n = 37
                others = rows_of(rng, n, cols, np.float32)
                for i in range(n):
                    x = others.copy()
                    x[i] = row[0]
                    for t in (1, 3):
                        got = normops.run(op, [x] + inputs_tail, attributes, opset=opset, mode=mode,
                                          n_threads=t)[0]
                        assert bits(got[i]).tolist() == bits(alone[0]).tolist(), (op, mode, cols, i, t)


@pytest.mark.skipif(len(normops._isa.available_levels()) < 2, reason="one ISA level here")
def test_every_isa_level_exact():
    """The exact flavour's batch invariance at every ISA level this CPU runs
    (the fast flavour may differ between levels, never within one)."""
    for level in normops._isa.available_levels():
        with normops._isa.use(level):
            check_rows("softmax", "Softmax", {"axis": -1}, 13, (), np.float32, [3, level.__len__()])
            check_rows("layernorm", "LayerNormalization", {"axis": -1}, 17, ("scale", "bias"), np.float32, [4])


def test_bias_gelu_rows():
    """com.microsoft BiasGelu: the bias is added to every row, so row i of
    a batch equals the row alone with the same bias."""
    rng = np.random.default_rng(13)
    for cols in (7, 16, 300):
        n = int(rng.integers(1, 301))
        a, b = rows_of(rng, n, cols, np.float32), rows_of(rng, 1, cols, np.float32)[0]
        for mode in MODES:
            alone = np.concatenate([normops.run("BiasGelu", [a[i:i + 1], b], domain="com.microsoft", mode=mode,
                                                n_threads=1)[0] for i in range(n)])
            for t in THREADS:
                got = normops.run("BiasGelu", [a, b], domain="com.microsoft", mode=mode, n_threads=t)[0]
                assert bits(got).tolist() == bits(alone).tolist(), (mode, cols, n, t)
