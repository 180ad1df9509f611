"""Freed large outputs kept for the next ones (placed_alloc.h, the
configuration's ``output_cache_bytes``): reused, bounded, switchable, and
never a change in what a call returns."""
import sys

import numpy as np
import pytest

import normops
from normops import InvalidInputError
from normops import _isa as isa

from numpy._core.multiarray import get_handler_name

from bits import assert_same_bits

MIB = 1 << 20


@pytest.fixture(autouse=True)
def _restore_config():
    saved = normops.get_config()
    normops.set_config(output_cache_bytes=64 * MIB)
    probe = normops.ops.sigmoid(np.zeros(1 << 20, np.float32))
    del probe
    if isa.routes.output_cache_held() == 0:
        normops.set_config(**saved)
        pytest.skip("this build keeps no blocks (an AddressSanitizer build)")
    yield
    normops.set_config(**saved)


def rows(rng, n, cols=1024):
    return rng.standard_normal((n, cols)).astype(np.float32)


def test_a_freed_output_is_reused_by_the_next_call():
    x = rows(np.random.default_rng(0), 1024)  # 4 MiB outputs
    routes = isa.routes
    normops.set_config(output_cache_bytes=0)
    assert routes.output_cache_held() == 0
    normops.set_config(output_cache_bytes=64 * MIB)
    y = normops.softmax(x, axis=-1)
    address = y.ctypes.data
    del y
    held = routes.output_cache_held()
    assert 4 * MIB < held < 5 * MIB
    y = normops.ops.softmax(x, mode="fast")
    assert y.ctypes.data == address  # the same block, placed the same way
    assert routes.output_cache_held() == 0  # taken out
    del y
    # a much smaller output does not take a large block
    small = normops.ops.softmax(rows(np.random.default_rng(1), 256), n_threads=1)
    assert routes.output_cache_held() == held
    del small


def test_the_limit_bounds_what_is_kept_and_zero_keeps_nothing():
    routes = isa.routes
    normops.set_config(output_cache_bytes=10 * MIB)
    rng = np.random.default_rng(2)
    outputs = [normops.sigmoid(rows(rng, 1024)) for _ in range(5)]
    assert all(get_handler_name(y) == "normops_placed" for y in outputs)
    del outputs
    held = routes.output_cache_held()
    assert 8 * MIB < held <= 10 * MIB  # two 4 MiB blocks; the oldest freed
    normops.set_config(output_cache_bytes=5 * MIB)
    assert 4 * MIB < routes.output_cache_held() <= 5 * MIB
    normops.set_config(output_cache_bytes=0)
    assert routes.output_cache_held() == 0
    y = normops.sigmoid(rows(rng, 1024))
    del y
    assert routes.output_cache_held() == 0
    # a block larger than the limit is freed, not kept
    normops.set_config(output_cache_bytes=2 * MIB)
    y = normops.sigmoid(rows(rng, 1024))
    del y
    assert routes.output_cache_held() == 0
    assert normops.get_config()["output_cache_bytes"] == 2 * MIB


@pytest.mark.parametrize("bad", [-1, 1.5, "64", True, None, 1 << 63])
def test_bad_limits_are_refused_and_change_nothing(bad):
    before = normops.get_config()
    with pytest.raises(InvalidInputError, match="set_config: argument 'output_cache_bytes'"):
        normops.set_config(mode="fast", output_cache_bytes=bad)
    assert normops.get_config() == before


def test_the_limit_is_not_a_per_thread_setting():
    with pytest.raises(TypeError):
        with normops.config(output_cache_bytes=0):
            pass


def test_a_reused_block_never_shows_through():
    # a kept block still holds the last output's values: every kernel that
    # writes into one must write every element (NaN rows first, then
    # ordinary ones; each must equal the result with nothing kept)
    rng = np.random.default_rng(3)
    x = rows(rng, 1024, 1031)
    poison = np.full_like(x, np.nan)
    calls = [
        lambda a, **k: normops.ops.softmax(a, **k),
        lambda a, **k: normops.ops.log_softmax(a, **k),
        lambda a, **k: normops.ops.hardmax(a, **k),
        lambda a, **k: normops.ops.sigmoid(a, **k),
        lambda a, **k: normops.ops.cum_sum(a, np.int64(1), **k),
        lambda a, **k: normops.run("Softmax", [a], {"axis": 0}, **k)[0],
        # the row and channel normalisations' Y (float32 statistics stay NumPy's)
        lambda a, **k: normops.ops.layer_normalization(a, np.full(a.shape[-1], 0.75, a.dtype), **k),
        lambda a, **k: normops.ops.rms_normalization(a, np.full(a.shape[-1], 0.75, a.dtype), **k),
        lambda a, **k: normops.ops.instance_normalization(a.reshape(8, 128, -1), np.ones(128, a.dtype),
                                                          np.zeros(128, a.dtype), **k),
    ]
    for level in isa.available_levels():
        with isa.use(level):
            for call in calls:
                for mode in ("exact", "fast"):
                    normops.set_config(output_cache_bytes=0)
                    want = call(x, mode=mode, n_threads=1)
                    normops.set_config(output_cache_bytes=64 * MIB)
                    for threads in (1, 2, 3):
                        dirty = call(poison, mode=mode, n_threads=threads)
                        address = dirty.ctypes.data
                        del dirty
                        got = call(x, mode=mode, n_threads=threads)
                        assert abs(got.ctypes.data - address) < 4096  # the block reused, placed for x
                        assert_same_bits(got, want)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="page-fault counts from getrusage")
def test_a_kept_block_is_not_faulted_in_again():
    # the point of keeping: after NumPy's own large temporaries come and
    # go, the next 16 MiB output needs no fresh pages (it needed about
    # 1000 faults, doubling exact Softmax on 1024x4096)
    import resource

    x = rows(np.random.default_rng(4), 1024, 4096)
    normops.set_config(output_cache_bytes=64 * MIB)
    counts = []
    for _ in range(3):
        y = normops.ops.log_softmax(x, n_threads=1)
        del y
        np.exp(x - x.max(axis=-1, keepdims=True)).sum()  # NumPy's temporaries, freed
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        y = normops.ops.log_softmax(x, n_threads=1)
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        del y
    assert min(counts) < 50, counts  # a fresh 16 MiB block: about 1000 (huge pages) to 4096


def test_threads_taking_and_freeing_blocks_at_once():
    # calls from several Python threads make and free large outputs at the
    # same time (the kernels run without the GIL); every result keeps its
    # own bits and the kept bytes stay within the limit
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(6)
    inputs = [rows(rng, 512, 1024 + 64 * i) for i in range(4)]  # 2-3 MiB outputs
    normops.set_config(output_cache_bytes=0)
    want = [normops.ops.softmax(x, n_threads=1) for x in inputs]
    normops.set_config(output_cache_bytes=8 * MIB)

    def work(i):
        for _ in range(25):
            y = normops.ops.softmax(inputs[i], n_threads=1)
            assert_same_bits(y, want[i])
            assert isa.routes.output_cache_held() <= 8 * MIB
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))
    assert isa.routes.output_cache_held() <= 8 * MIB
