"""Executable specification of erf32 (docs/transcendentals.md, "erf32"):
the kernel's float32 operations, one NumPy operation each, in its order.

For a = min(|x|, CLAMP) (a NaN becomes CLAMP and is restored at the end):
s = a + SHIFT, k = s - SHIFT (a rounded to a multiple of 1/8), t = a - k
(exact), i = the low 5 bits of s's pattern (8k); P = Horner's rule over
rows p5 .. p0 of interval i, each step `p * t` then `+ c`, both rounded;
B = a where k < ZONE, else row H; y = B + a * P; the sign of x is copied
onto y; NaN gives the canonical NaN. The table is generated with the
header by tools/gen_erf32_tables.py.
"""
import numpy as np

from . import _erf32_table as _t

_F = np.float32
DEG = _t.DEG
ZONE = _F(float.fromhex(_t.ZONE))
CLAMP = _F(float.fromhex(_t.CLAMP))
SHIFT = _F(float.fromhex(_t.SHIFT))
TABLE = np.array([[float.fromhex(v) for v in row] for row in _t.TABLE], np.float32)
assert TABLE.shape == (DEG + 2, 32) and np.all(TABLE.astype(np.float64) == [[float.fromhex(v) for v in row]
                                                                            for row in _t.TABLE])


def erf32(x):
    """normops' erf32 of a float32 array (any shape), bit for bit."""
    x = np.asarray(x, np.float32)
    shape = x.shape
    ux = np.ascontiguousarray(x).reshape(-1).view(np.uint32)
    ax = ux & np.uint32(0x7FFFFFFF)
    with np.errstate(all="ignore"):  # subnormal products round as IEEE says
        a = ax.view(np.float32)
        a = np.where(a < CLAMP, a, CLAMP)
        s = a + SHIFT
        k = s - SHIFT
        t = a - k
        i = (s.view(np.uint32) & np.uint32(31)).astype(np.intp)
        p = TABLE[DEG + 1][i]
        for r in range(DEG, 0, -1):
            p = p * t + TABLE[r][i]
        b = np.where(k < ZONE, a, TABLE[0][i])
        y = (b + a * p).view(np.uint32) | (ux & np.uint32(0x80000000))
    y = np.where(ax > np.uint32(0x7F800000), np.uint32(0x7FC00000), y)
    return y.astype(np.uint32).view(np.float32).reshape(shape)
