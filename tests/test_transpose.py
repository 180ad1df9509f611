"""The front layer's "move axes" copy (normops/_transpose.py and the
swap_blocks kernel): the same array as NumPy's transposing copy, bit for bit,
for every dtype, shape, layout, permutation, tile size, thread count and ISA
build; and the operators that use it still match the specification."""
import itertools

import numpy as np
import pytest

import normops
import normops._isa as isa
import normops.reference
from normops import _transpose
from normops._transpose import block_swap, inverse, moved_axes

from bits import bits

DTYPES = [np.dtype(t) for t in (
    np.float16, np.float32, np.float64, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
    np.int64, np.uint64, np.bool_, np.complex64, np.complex128, ">f4", ">i8")]


@pytest.fixture
def always_kernel(monkeypatch):
    """Every eligible copy goes through the kernel, however small."""
    monkeypatch.setattr(_transpose, "KERNEL_MIN_ELEMENTS", 0)


@pytest.fixture(params=[32, 5, 1], ids=lambda t: f"tile{t}")
def tile(request):
    """The kernel's tile edge: the default and two that make every shape
    below cross many tile edges."""
    old = isa.kernels.set_transpose_tile(request.param)
    yield request.param
    isa.kernels.set_transpose_tile(old)


def values(rng, shape, dtype):
    """Random bits of ``dtype`` (NaN payloads, -0, subnormals included)."""
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


def same(got, a, perm, dtype=None):
    want = np.array(np.transpose(a, perm), dtype=dtype, order="C")
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.flags.c_contiguous and got.flags.aligned and got.flags.writeable
    assert np.array_equal(bits(np.ascontiguousarray(got)), bits(want)), (a.shape, a.dtype, perm)


def test_block_swap_recognises_swaps_of_neighbouring_blocks():
    assert block_swap((3, 4), (1, 0)) == (1, 3, 4, 1)
    assert block_swap((2, 3, 4), (0, 2, 1)) == (2, 3, 4, 1)
    assert block_swap((2, 3, 4), (1, 0, 2)) == (1, 2, 3, 4)
    assert block_swap((2, 3, 4, 5), (0, 2, 3, 1)) == (2, 3, 20, 1)  # NCHW -> NHWC
    assert block_swap((2, 3, 4, 5), (0, 3, 1, 2)) == (2, 12, 5, 1)  # NHWC -> NCHW
    assert block_swap((2, 3, 4, 5), (2, 3, 0, 1)) == (1, 6, 20, 1)
    assert block_swap((2, 1, 3, 4), (0, 3, 1, 2)) == (2, 3, 4, 1)   # extent 1 ignored
    assert block_swap((2, 3, 4, 5), (0, 2, 1, 3)) == (2, 3, 4, 5)
    assert block_swap((2, 3, 4), (0, 1, 2)) is None                 # identity
    assert block_swap((2, 3, 1), (0, 2, 1)) is None                 # moves only an extent 1
    assert block_swap((2, 3, 4), (2, 1, 0)) is None                 # a reversal: 3 blocks
    assert block_swap((2, 3, 4, 5), (1, 0, 3, 2)) is None           # two swaps
    assert block_swap((), ()) is None


def test_inverse_moves_back():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4, 5))
    for perm in itertools.permutations(range(4)):
        assert np.array_equal(np.transpose(np.transpose(x, perm), inverse(perm)), x)
        assert inverse(perm) == np.argsort(perm).tolist()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_every_dtype(dtype, always_kernel, tile):
    rng = np.random.default_rng(dtype.itemsize)
    for shape in [(37, 70), (64, 64), (3, 33, 31), (2, 5, 1, 7, 3)]:
        a = values(rng, shape, dtype)
        for perm in itertools.permutations(range(len(shape))):
            same(moved_axes(a, perm), a, perm)


@pytest.mark.parametrize("n", [1, 2, 3, 31, 32, 33, 63, 64, 65, 100])
@pytest.mark.parametrize("m", [1, 2, 17, 32, 33, 97])
def test_shapes_around_the_tile(n, m, always_kernel):
    rng = np.random.default_rng([n, m])
    for dtype in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.uint8), np.dtype(np.float16)):
        a = values(rng, (n, m), dtype)
        same(moved_axes(a, (1, 0)), a, (1, 0))
        b = values(rng, (3, n, m), dtype)
        same(moved_axes(b, (0, 2, 1)), b, (0, 2, 1))


def test_empty_and_extent_one_axes(always_kernel, tile):
    rng = np.random.default_rng(0)
    for shape in [(0, 5), (5, 0), (0, 0), (3, 0, 4), (1, 7), (7, 1), (1, 1), (1, 40, 1, 33), (5,), ()]:
        a = values(rng, shape, np.dtype(np.float32))
        for perm in itertools.permutations(range(len(shape))):
            same(moved_axes(a, perm), a, perm)


def test_layouts_and_conversions(always_kernel, tile):
    rng = np.random.default_rng(1)
    base = values(rng, (40, 70, 3), np.dtype(np.float32))
    views = [
        base[:, :, 0],                 # strided
        base[::-1, ::2, 1],            # negative and step strides
        np.asfortranarray(base[:, :, 2]),
        base.transpose(1, 0, 2),       # a transposed view
        np.frombuffer(  # unaligned
            b"\0" + base.tobytes(), np.float32, count=base.size, offset=1).reshape(base.shape),
    ]
    assert not views[-1].flags.aligned
    for a in views:
        before = a.copy()
        for perm in itertools.permutations(range(a.ndim)):
            same(moved_axes(a, perm), a, perm)
            with np.errstate(invalid="ignore"):  # signalling NaNs among the random bits
                same(moved_axes(a, perm, np.float64), a, perm, np.float64)
        assert np.array_equal(bits(np.ascontiguousarray(a)), bits(before))  # input untouched


def test_inner_blocks_copied_as_wider_words(always_kernel, tile):
    # (outer, a, b, inner) swaps whose inner block is 2, 4 or 8 bytes, also
    # from a start that is not aligned to the wider word
    rng = np.random.default_rng(2)
    a = values(rng, (9, 35, 2), np.dtype(np.float32))
    same(moved_axes(a, (1, 0, 2)), a, (1, 0, 2))
    b = values(rng, (9, 35, 4), np.dtype(np.int16))
    same(moved_axes(b, (1, 0, 2)), b, (1, 0, 2))
    big = values(rng, (1 + 9 * 35 * 2,), np.dtype(np.float32))
    c = big[1:].reshape(9, 35, 2)
    assert c.flags.c_contiguous and c.ctypes.data % 8
    same(moved_axes(c, (1, 0, 2)), c, (1, 0, 2))


def test_threads_and_isa_levels_do_not_change_the_copy():
    rng = np.random.default_rng(3)
    a = values(rng, (3, 300, 257), np.dtype(np.float32))
    want = np.ascontiguousarray(np.transpose(a, (0, 2, 1)))
    for level in isa.available_levels():
        with isa.use(level):
            for n in range(1, 9):
                got = moved_axes(a, (0, 2, 1), n_threads=n)
                assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (level, n)


def test_large_copies_take_the_kernel(monkeypatch):
    calls = []
    kernel = isa.kernels.swap_blocks
    monkeypatch.setattr(isa.kernels, "swap_blocks", lambda *args: calls.append(args[2:5]) or kernel(*args))
    rng = np.random.default_rng(4)
    a = values(rng, (256, 128), np.dtype(np.float32))
    same(moved_axes(a, (1, 0)), a, (1, 0))
    assert calls == [(1, 256, 128)]
    small = a[:8]
    same(moved_axes(small, (1, 0)), small, (1, 0))  # below the threshold: NumPy
    assert len(calls) == 1


def test_objects_are_never_moved_as_raw_words(always_kernel):
    a = np.array([[object(), "x", 3], [None, 1.5, ()]], dtype=object)
    got = moved_axes(a, (1, 0))
    assert all(got[j, i] is a[i, j] for i in range(2) for j in range(3))


def test_kernel_rejects_misuse():
    k = isa.kernels
    x = np.zeros((4, 6), np.float32)
    with pytest.raises(TypeError):
        k.swap_blocks(x, np.zeros((6, 4), np.float64), 1, 4, 6, 1)
    with pytest.raises(TypeError):
        k.swap_blocks(np.zeros((4, 6), np.complex128), np.zeros((6, 4), np.complex128), 1, 4, 6, 1)
    with pytest.raises(ValueError):
        k.swap_blocks(x, np.zeros((6, 5), np.float32), 1, 4, 6, 1)
    with pytest.raises(ValueError):
        k.swap_blocks(x.T, np.zeros((4, 6), np.float32), 1, 6, 4, 1)
    ro = np.zeros((6, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        k.swap_blocks(x, ro, 1, 4, 6, 1)


# ------------------------------------------------ the operators that use it

@pytest.mark.parametrize("small_too", [False, True])
def test_operators_moving_axes_match_the_specification(small_too, monkeypatch):
    if small_too:
        monkeypatch.setattr(_transpose, "KERNEL_MIN_ELEMENTS", 0)
    rng = np.random.default_rng(5)
    cases = [((64, 300), 0), ((3, 70, 129), 1), ((2, 33, 5, 40), 1), ((130, 140), 0)]
    for shape, axis in cases:
        for dtype in (np.float32, np.float64, np.float16):
            x = rng.standard_normal(shape).astype(dtype)
            for op, attrs in [("LpNormalization", {"axis": axis, "p": 1}),
                              ("LpNormalization", {"axis": axis, "p": 2}),
                              ("MeanVarianceNormalization", {"axes": [axis]}),
                              ("MeanVarianceNormalization", {"axes": [0, 2] if len(shape) > 2 else [0]}),
                              ("Softmax", {"axis": axis}), ("LogSoftmax", {"axis": axis}),
                              ("Hardmax", {"axis": axis})]:
                for n in (1, 2, 3):
                    got = normops.run(op, [x], attrs, n_threads=n)[0]
                    want = normops.reference.run(op, [x], attrs)[0]
                    assert got.dtype == want.dtype and got.shape == want.shape
                    assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")), \
                        (op, attrs, shape, dtype, n)


def test_scipy_style_softmax_over_leading_axes_matches_the_operator():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((200, 3, 90)).astype(np.float32)
    got = normops.softmax(x, axis=0)
    moved = np.ascontiguousarray(np.moveaxis(x, 0, -1))
    want = np.moveaxis(normops.reference.run("Softmax", [moved], {"axis": -1})[0], -1, 0)
    assert np.array_equal(got.view(np.uint32), np.ascontiguousarray(want).view(np.uint32))


def test_scipy_style_softmax_keeps_a_0d_input_0d():
    # SciPy's shape; NumPy's ascontiguousarray, used before, made it (1,)
    import scipy.special
    for fn, ref in [(normops.softmax, scipy.special.softmax), (normops.log_softmax, scipy.special.log_softmax)]:
        got = fn(np.float32(2.0))
        assert got.shape == np.shape(ref(np.float32(2.0))) == ()
        assert got.dtype == np.float32 and got == ref(np.float32(2.0))
