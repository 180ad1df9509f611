"""The front layer's one "move axes" copy.

Where an operator works along axes that are not last, the front layer
copies its input with those axes moved last (and its result back). NumPy's
transposing copy reads one element per cache line and, when a row is a
power of two bytes long, every line of a column falls into the same cache
set: a (1024, 1024) float32 transpose takes several times longer than a
(1000, 1000) one. ``moved_axes`` gives the same array through the
cache-blocked kernel (``_kernels/transpose.h``) whenever the permutation is
a swap of two neighbouring blocks of axes, which covers every "move these
axes last / back" of the operators; anything else goes to NumPy. A copy
changes no bit either way.
"""
import numpy as np

from . import _isa
from ._validate import contiguous

# Below this many elements NumPy's copy is as fast: the data sits in cache
# and the analysis below costs more than it saves (128 x 128 float32: NumPy
# 11 us, this route 14 us; 256 x 256: 79 against 33 us).
KERNEL_MIN_ELEMENTS = 32768

_WORDS = (1, 2, 4, 8)


def block_swap(shape, perm):
    """``(outer, a, b, inner)`` when ``np.transpose(x, perm)`` of a
    C-contiguous x of ``shape`` is the (outer, a, b, inner) ->
    (outer, b, a, inner) swap of x reshaped so; None for any other
    permutation (including the identity). Extent-1 axes are ignored and
    neighbouring axes that stay neighbours are merged."""
    kept = [p for p in perm if shape[p] != 1]
    # runs of axes that move together: [first axis, last axis] in x's order
    runs = []
    for p in kept:
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    order = sorted(range(len(runs)), key=lambda r: runs[r][0])  # runs in x's order
    rank = [0] * len(runs)
    for position, r in enumerate(order):
        rank[r] = position
    q = [rank[r] for r in range(len(runs))]  # the permutation of the runs
    n = len(q)
    lead = 1 if n and q[0] == 0 else 0
    tail = 1 if n - lead > 2 and q[-1] == n - 1 else 0
    if n - lead - tail != 2 or q[lead] != lead + 1:
        return None

    def extent(r):
        first, last = runs[order[r]]
        size = 1
        for axis in range(first, last + 1):
            size *= shape[axis]
        return size

    outer = extent(0) if lead else 1
    inner = extent(n - 1) if tail else 1
    return outer, extent(lead), extent(lead + 1), inner


def moved_axes(a, perm, dtype=None, n_threads=0):
    """``np.array(np.transpose(a, perm), dtype=dtype, order="C")``: a
    C-contiguous, aligned array (``dtype`` None keeps a's); for the identity
    permutation a itself when it already is one (no copy, as ``contiguous``).
    ``n_threads`` is the kernels' count (0: OpenMP's)."""
    dtype = a.dtype if dtype is None else np.dtype(dtype)
    if all(p == axis for axis, p in enumerate(perm)):
        return contiguous(a, dtype)
    if a.size >= KERNEL_MIN_ELEMENTS and not dtype.hasobject:
        swap = block_swap(a.shape, perm)
        if swap is not None:
            outer, rows, cols, inner = swap
            word = dtype.itemsize * inner
            if word in _WORDS:
                x = a
                if not (x.dtype == dtype and x.flags.c_contiguous and x.flags.aligned):
                    x = np.array(x, dtype=dtype, order="C")  # a fresh, aligned array
                if word <= dtype.alignment or x.ctypes.data % word == 0:
                    y = np.empty([a.shape[p] for p in perm], dtype)
                    _isa.kernels.swap_blocks(_words(x, word), _words(y, word), outer, rows, cols, n_threads)
                    return y
    return np.array(np.transpose(a, perm), dtype=dtype, order="C")


def inverse(perm):
    """The permutation that moves ``np.transpose(x, perm)`` back to x."""
    return np.argsort(perm).tolist()


def _words(x, word):
    """x's bytes as a flat array of unsigned ``word``-byte integers (the
    kernel needs only the element size)."""
    return x.reshape(-1).view(np.dtype(f"u{word}"))
