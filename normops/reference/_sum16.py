"""The canonical sum and the canonical NaN, written for clarity, not speed.

Everything here follows docs/specification.md, §3 (the canonical sum) and
§4.5 (canonical NaN).  The kernels must reproduce these results
bit for bit; this module is what the tests compare them against.

Arithmetic stays in the dtype of the data: NumPy's elementwise ``+`` on
float32 arrays is one correctly rounded float32 addition per element, which
is exactly the operation the kernels perform.  No Python float or float64
scalar is ever mixed into float32 data, so nothing is promoted.
"""

import numpy as np

__all__ = ["N_PARTIALS", "sum16", "canonical_nan", "CANONICAL_NAN_BITS"]

#: Number of independent partial sums of the canonical sum.
N_PARTIALS = 16

#: Bit pattern of the canonical quiet NaN, per dtype name (docs/specification.md §4.5).
CANONICAL_NAN_BITS = {
    "float16": (np.uint16, 0x7E00),
    "bfloat16": (np.uint16, 0x7FC0),
    "float32": (np.uint32, 0x7FC00000),
    "float64": (np.uint64, 0x7FF8000000000000),
}


def sum16(terms):
    """Canonical Sum16 of ``terms`` along its last axis.

    ``terms`` is a float32 or float64 array of shape ``(..., n)``; the result
    has shape ``(...)`` and the same dtype.  Every step below is one rounded
    operation in that dtype.

    1. Sixteen partial sums start at +0 (docs/specification.md §3).
       Starting from +0 matters: a row made only of -0 sums to +0.
    2. Term ``j`` is added to partial ``j % 16``, in increasing ``j``.  We
       walk the row in blocks of 16 columns; inside one block every column
       goes to a different partial, so adding the block to the partials
       elementwise performs those additions in the required order.  A short
       last block only touches the first partials.
    3. The partials are folded pairwise at distance 8, 4, 2, then 1:
       ``a[t] = P[t] + P[t+8]``, ``b[t] = a[t] + a[t+4]``,
       ``c[t] = b[t] + b[t+2]``, result ``c[0] + c[1]``.
    """
    terms = np.asarray(terms)
    if terms.dtype not in (np.float32, np.float64):
        raise TypeError(f"sum16 works on float32 or float64, not {terms.dtype}")
    if terms.ndim == 0:
        raise ValueError("sum16 needs at least one axis to sum over")
    n = terms.shape[-1]
    lead = terms.shape[:-1]

    with np.errstate(all="ignore"):  # inf and NaN are results, not errors
        return _sum16(terms, n, lead)


def _sum16(terms, n, lead):
    # Step 1: partials at +0.
    partials = np.zeros(lead + (N_PARTIALS,), dtype=terms.dtype)

    # Step 2: term j into partial j % 16, increasing j.
    for start in range(0, n, N_PARTIALS):
        block = terms[..., start:start + N_PARTIALS]
        width = block.shape[-1]
        partials[..., :width] += block

    # Step 3: the fixed folding tree.
    a = partials[..., 0:8] + partials[..., 8:16]
    b = a[..., 0:4] + a[..., 4:8]
    c = b[..., 0:2] + b[..., 2:4]
    return c[..., 0] + c[..., 1]


def _nan_bits(dtype):
    dtype = np.dtype(dtype)
    try:
        return CANONICAL_NAN_BITS[dtype.name]
    except KeyError:
        raise TypeError(f"no canonical NaN defined for dtype {dtype}") from None


def canonical_nan(a):
    """Return a copy of ``a`` with every NaN set to the canonical quiet NaN.

    docs/specification.md §4.5: whatever payload or sign a NaN picked up along the way,
    the published result is the one quiet NaN pattern of its type (float32
    0x7FC00000, float64 0x7FF8000000000000, float16 0x7E00, bfloat16 0x7FC0).
    The pattern is written through an integer view so that no floating-point
    operation can change it again.
    """
    a = np.array(a, copy=True)
    utype, bits = _nan_bits(a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    # ``!=`` on itself finds NaN for every float dtype, bfloat16 included.
    with np.errstate(invalid="ignore"):
        mask = a != a
    if mask.any():
        a.view(utype)[mask] = utype(bits)
    return a
