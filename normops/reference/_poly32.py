"""Executable specification of erf32 and tanh32 (docs/transcendentals.md,
"erf32" and "tanh32"): the kernel's float32 operations, one NumPy operation
each, in its order. Both share one shape and differ only in their table
(tools/gen_poly32_tables.py writes it with the C header).

For a = min(|x|, CLAMP) (a NaN becomes CLAMP and is restored at the end):
s = min(a, KMAX) + SHIFT, k = s - SHIFT (a rounded to a multiple of the
interval width, at most KMAX), t = a - k (exact), i = the low 5 bits of
s's pattern; P = Horner's rule over rows pDEG .. p0 of interval i, each
step `p * t` then `+ c`, both rounded; B = a where k < ZONE, else row H;
y = B + a * P; the sign of x is copied onto y; NaN gives the canonical NaN.
"""
import numpy as np

from . import _erf32_table, _tanh32_table

_F = np.float32


class Poly32:
    """One function's constants and table, and the function itself."""

    def __init__(self, t):
        self.DEG = t.DEG
        self.ZONE, self.KMAX, self.CLAMP, self.SHIFT = (_F(float.fromhex(v)) for v in (t.ZONE, t.KMAX, t.CLAMP,
                                                                                        t.SHIFT))
        self.TABLE = np.array([[float.fromhex(v) for v in row] for row in t.TABLE], np.float32)
        assert self.TABLE.shape == (self.DEG + 2, 32) and np.all(
            self.TABLE.astype(np.float64) == [[float.fromhex(v) for v in row] for row in t.TABLE])

    def __call__(self, x):
        """the function of a float32 array (any shape), bit for bit."""
        x = np.asarray(x, np.float32)
        shape = x.shape
        ux = np.ascontiguousarray(x).reshape(-1).view(np.uint32)
        ax = ux & np.uint32(0x7FFFFFFF)
        tab = self.TABLE
        with np.errstate(all="ignore"):  # subnormal products round as IEEE says
            a = ax.view(np.float32)
            a = np.where(a < self.CLAMP, a, self.CLAMP)
            s = np.where(a < self.KMAX, a, self.KMAX) + self.SHIFT
            k = s - self.SHIFT
            t = a - k
            i = (s.view(np.uint32) & np.uint32(31)).astype(np.intp)
            p = tab[self.DEG + 1][i]
            for r in range(self.DEG, 0, -1):
                p = p * t + tab[r][i]
            b = np.where(k < self.ZONE, a, tab[0][i])
            y = (b + a * p).view(np.uint32) | (ux & np.uint32(0x80000000))
        y = np.where(ax > np.uint32(0x7F800000), np.uint32(0x7FC00000), y)
        return y.astype(np.uint32).view(np.float32).reshape(shape)


erf32 = Poly32(_erf32_table)
tanh32 = Poly32(_tanh32_table)
