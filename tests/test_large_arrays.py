"""Arrays of more than 2^31 elements, one test per operator family.

Every index and size in the kernels is 64-bit (docs/specification.md §15.2); these
tests put the values that decide the result beyond element 2^31, where a
32-bit index would wrap, and check what can be known without a second
8 GiB computation: rows against the same rows computed alone (the
per-row order makes them equal bit for bit), sums and extremes of sparse
data whose exact result is known, and symmetric data whose normalised
values must be opposite.

Each needs up to 17 GiB of memory; they are skipped where less is free.
"""
import numpy as np
import pytest

import normops

from bits import bits

BIG = 2**31
GiB = 2**30

pytestmark = pytest.mark.slow


def _available_bytes():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _need(gib):
    if _available_bytes() < gib * GiB:
        pytest.skip(f"needs {gib} GiB of free memory")


def _rows_case(cols=1024):
    """float32 (rows, cols) with rows * cols > 2^31: one repeated row, and
    distinct first, middle and last rows."""
    rows = BIG // cols + 3
    rng = np.random.default_rng(7)
    x = np.empty((rows, cols), dtype=np.float32)
    x[:] = rng.standard_normal(cols, dtype=np.float32)
    picked = [0, rows // 2, rows - 2, rows - 1]
    for r in picked:
        x[r] = rng.standard_normal(cols, dtype=np.float32) * (1 + r % 5)
    return x, picked


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_row_normalizations_past_2_31(mode):
    _need(17)
    x, picked = _rows_case()
    cols = x.shape[1]
    w = np.linspace(0.5, 1.5, cols, dtype=np.float32)
    b = np.linspace(-1, 1, cols, dtype=np.float32)
    y = normops.layer_normalization(x, w, b, mode=mode, n_threads=2)
    for r in picked:
        alone = normops.layer_normalization(x[r:r + 1], w, b, mode=mode, n_threads=1)
        assert (bits(y[r:r + 1]) == bits(alone)).all(), r
    del y
    y = normops.rms_normalization(x, w, mode=mode, n_threads=2)
    for r in picked:
        alone = normops.rms_normalization(x[r:r + 1], w, mode=mode, n_threads=1)
        assert (bits(y[r:r + 1]) == bits(alone)).all(), r


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_softmax_family_past_2_31(op, mode):
    _need(17)
    x, picked = _rows_case()
    fn = getattr(normops.ops, op)
    y = fn(x, axis=-1, mode=mode, n_threads=2)
    for r in picked:
        alone = fn(x[r:r + 1], axis=-1, mode=mode, n_threads=1)
        assert (bits(y[r:r + 1]) == bits(alone)).all(), r


@pytest.mark.parametrize("mode", ["exact", "fast"])
def test_elementwise_past_2_31(mode):
    _need(17)
    n = BIG + 4099
    x = np.empty(n, dtype=np.float32)
    x[:] = 0.25
    tail = np.linspace(-30, 30, 4099 + 64, dtype=np.float32)
    x[-tail.size:] = tail
    y = normops.sigmoid(x, mode=mode, n_threads=2)
    assert (bits(y[-tail.size:]) == bits(normops.sigmoid(tail, mode=mode, n_threads=1))).all()
    assert (bits(y[:5]) == bits(normops.sigmoid(x[:5], mode=mode))).all()


def test_instance_normalization_channel_past_2_31():
    _need(17)
    n = BIG + 777
    x = np.zeros((1, 1, n), dtype=np.float32)
    low, high = 12345, BIG + 500  # +a before the 2^31 boundary, -a after it
    x[0, 0, low], x[0, 0, high] = 3.0, -3.0
    y = normops.instance_normalization(x, np.ones(1, np.float32), np.zeros(1, np.float32),
                                       n_threads=2)
    # mean exactly 0, variance 18 / n: the two values normalise to +-3/sqrt(18/n)
    assert y[0, 0, low] == -y[0, 0, high] and y[0, 0, low] > 0
    assert abs(float(y[0, 0, low]) - 3 / np.sqrt(18 / n + 1e-5)) < 1e-4 * float(y[0, 0, low])
    for i in (0, low + 1, BIG - 1, BIG, high - 1, n - 1):
        assert y[0, 0, i] == 0, i


def test_reductions_past_2_31():
    _need(10)
    n = BIG + 12345
    x = np.zeros(n, dtype=np.float32)
    where = [3, BIG - 1, BIG, BIG + 1, n - 1]
    x[where] = [1, 2, 4, 8, 16]
    assert normops.reduce_sum(x, keepdims=0, n_threads=2) == 31  # small integers: exact
    assert normops.sum(x) == 31
    assert normops.reduce_max(x, keepdims=0) == 16
    assert normops.argmax(x) == n - 1
    x[BIG + 1] = 16  # ties: the earliest index wins, the last with select_last_index
    assert normops.argmax(x) == BIG + 1
    assert normops.ops.arg_max(x, axis=0, keepdims=0, select_last_index=1) == n - 1
    x[n - 1] = -5
    assert normops.argmin(x) == n - 1
    assert normops.reduce_min(x, keepdims=0) == -5


def test_small_dtype_reductions_past_2_31():
    _need(4)
    n = BIG + 99
    x = np.zeros(n, dtype=np.int8)
    x[BIG + 7] = 100
    x[BIG + 50] = -100
    assert normops.argmax(x) == BIG + 7
    assert normops.argmin(x) == BIG + 50
    assert normops.reduce_max(x, keepdims=0) == 100
    assert normops.reduce_min(x, keepdims=0) == -100


def test_cumulative_past_2_31():
    _need(17)
    n = BIG + 300
    x = np.zeros(n, dtype=np.float32)
    x[BIG + 10] = 1.0
    x[BIG + 20] = 2.0
    y = normops.cumsum(x)
    assert y.shape == (n,)
    assert y[BIG + 9] == 0 and y[BIG + 10] == 1 and y[BIG + 19] == 1 and y[BIG + 20] == 3
    assert y[-1] == 3 and y[0] == 0
