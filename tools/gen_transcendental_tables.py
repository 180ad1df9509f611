#!/usr/bin/env python
"""Write normops/_kernels/transcendental_tables.h: the tables and constants
of the library's own exp and log (docs/transcendentals.md).

Every value is computed with mpmath at 256 bits and rounded once, to nearest
(ties to even), to the format or the quantum its use needs. The script also
checks the properties the kernels rely on (products and sums that must be
exact, reduced-argument ranges). Its output is deterministic: running it
again reproduces the committed header byte for byte.

    python tools/gen_transcendental_tables.py            # rewrite the header
    python tools/gen_transcendental_tables.py --check    # exit 1 if it differs
"""
import argparse
import struct
import sys
from fractions import Fraction
from pathlib import Path

import mpmath

mpmath.mp.prec = 256

HEADER = Path(__file__).resolve().parents[1] / "normops" / "_kernels" / "transcendental_tables.h"

EXP_TABLE_BITS = 6   # 2^(j/64), j < 64
LOG_TABLE_BITS = 7   # indexed by the top 7 fraction bits of the mantissa
LOG_INVC_QUANTUM = mpmath.mpf(2) ** -12   # 1/c to 12 bits: m * invc is exact for m of <= 41 bits
LN2_QUANTUM = mpmath.mpf(2) ** -42        # e * LN2_HI and e * LN2_HI + logc_hi exact for |e| < 2^11
EXP_L1_QUANTUM = mpmath.mpf(2) ** -42     # k * L1 exact for |k| < 2^17 (36 significant bits)
FAST_LN2_QUANTUM = mpmath.mpf(2) ** -16   # float32: n * LN2_HI_F exact for |n| < 2^8
QUICK_EXP_TABLE_BITS = 8  # exp32's quick path without FMA (baseline): 2^(j/256), j < 256
FLOAT_EXP_TABLE = 32      # exp32's float32 quick path: 2^(j/32) = hi + lo (AVX2: every other entry)
FLOAT_EXP_POINT_BITS = 42            # AVX-512: float32 points within 2^-42 of 2^(j/32) e^delta, relative
FLOAT_EXP_DELTA_QUANTUM = mpmath.mpf(2) ** -34   # the deltas, multiples of it
FLOAT_EXP_DELTA_STEPS = 1 << 19                  # searched up to this many quanta: |delta| < 2^-15
FLOAT_EXP_BIAS = mpmath.mpf(2) ** -35            # AVX-512 rounding test: its half-width, folded in
FMA_LOG_TABLE = 16        # log32's quick path (AVX-512): c = n/16 nearly, two registers
FMA_LOG_DEGREE = 7        # its polynomial for log1p(r)
FAST_SIXTEENTHS = 16      # the AVX-512 fast exp: 2^(j/16) in one 16-lane register


def round_to_quantum(v, quantum):
    """v rounded to a multiple of quantum (nearest, ties to even)."""
    return mpmath.nint(v / quantum) * quantum


def round_significant(v, bits):
    """v rounded to `bits` significant bits (nearest, ties to even)."""
    if v == 0:
        return mpmath.mpf(0)
    _, exponent = mpmath.frexp(v)  # v = f * 2^exponent, 1/2 <= |f| < 1
    return round_to_quantum(v, mpmath.mpf(2) ** (exponent - bits))


def as_double(v):
    """An mpf that must already be a binary64 value, as a Python float."""
    d = float(v)
    assert mpmath.mpf(d) == v, v
    return d


def double(v):
    return as_double(round_significant(v, 53))


def single(v):
    d = as_double(round_significant(v, 24))
    assert Fraction(d).denominator & (Fraction(d).denominator - 1) == 0
    return d


def significant_bits(d):
    """Number of significant bits of a finite double (0 for zero)."""
    if d == 0:
        return 0
    f = Fraction(abs(d))
    num, den = f.numerator, f.denominator
    while num % 2 == 0:
        num //= 2
    return num.bit_length()


def is_multiple(d, quantum):
    return (Fraction(d) / Fraction(float(quantum))).denominator == 1


# ------------------------------------------------------------------ values

LN2 = mpmath.log(2)


def exp_values():
    n = 1 << EXP_TABLE_BITS
    hi, lo = [], []
    for j in range(n):
        v = mpmath.power(2, mpmath.mpf(j) / n)
        h = double(v)
        hi.append(h)
        lo.append(double(v - h))
    ln2_n = LN2 / n
    l1 = round_to_quantum(ln2_n, EXP_L1_QUANTUM)
    consts = {
        "NORMOPS_EXP_INVL": double(n / LN2),
        "NORMOPS_EXP_L1": as_double(l1),
        "NORMOPS_EXP_L2": double(ln2_n - l1),
    }
    assert significant_bits(consts["NORMOPS_EXP_L1"]) <= 36  # k*L1 exact for |k| < 2^17
    # expm1(r) = r + r^2 (C2 + r C3 + ... ): Taylor coefficients, degree 6
    for k in range(2, 7):
        consts[f"NORMOPS_EXP_C{k}"] = double(1 / mpmath.factorial(k))
    return hi, lo, consts


def quick_exp_values():
    n = 1 << QUICK_EXP_TABLE_BITS
    table = [double(mpmath.power(2, mpmath.mpf(j) / n)) for j in range(n)]
    consts = {
        "NORMOPS_EXPQ_INVL": double(n / LN2),
        "NORMOPS_EXPQ_L": double(LN2 / n),
    }
    return table, consts


def log_values():
    n = 1 << LOG_TABLE_BITS
    invc, logc_hi, logc_lo = [], [], []
    for i in range(n):
        if i == 0:
            inv, logc = mpmath.mpf(1), mpmath.mpf(0)            # [1, 1+2^-7): z = m - 1, exact
        elif i == n - 1:
            inv, logc = mpmath.mpf(1) / 2, mpmath.mpf(0)        # exponent bumped: z = m/2 - 1
        else:
            c = 1 + (mpmath.mpf(i) + mpmath.mpf(1) / 2) / n    # centre of the interval
            inv = round_to_quantum(1 / c, LOG_INVC_QUANTUM)
            logc = -mpmath.log(inv)
        h = round_to_quantum(logc, LN2_QUANTUM)
        invc.append(as_double(inv))
        logc_hi.append(as_double(h))
        logc_lo.append(double(logc - h))
        assert significant_bits(invc[-1]) <= 12
        # the reduced argument z = m * invc - 1 over the interval of i
        lo_m = 1 + mpmath.mpf(i) / n
        hi_m = 1 + mpmath.mpf(i + 1) / n
        for m in (lo_m, hi_m):
            assert abs(m * inv - 1) <= mpmath.mpf(2) ** -7, (i, m)
    ln2_hi = round_to_quantum(LN2, LN2_QUANTUM)
    consts = {
        "NORMOPS_LN2_HI": as_double(ln2_hi),
        "NORMOPS_LN2_LO": double(LN2 - ln2_hi),
    }
    # |e| < 2^11 (float64 subnormals reach e = -1074): e * LN2_HI exact
    assert significant_bits(consts["NORMOPS_LN2_HI"]) + 11 <= 53
    # e * LN2_HI + logc_hi: multiples of 2^-42 below 2^10 in magnitude, exact
    assert all(is_multiple(h, LN2_QUANTUM) for h in logc_hi)
    # log1p(z) = z + z^2 (Q2 + z Q3 + ... + z^7 Q9): Taylor coefficients, degree 9
    for k in range(2, 10):
        consts[f"NORMOPS_LOG_Q{k}"] = double(mpmath.mpf((-1) ** (k + 1)) / k)
    return invc, logc_hi, logc_lo, consts


def fast_exp_values():
    ln2_hi = round_to_quantum(LN2, FAST_LN2_QUANTUM)
    consts = {
        "NORMOPS_EXPF_LOG2E": single(1 / LN2),
        "NORMOPS_EXPF_LN2_HI": as_double(ln2_hi),
        "NORMOPS_EXPF_LN2_LO": single(LN2 - ln2_hi),
    }
    assert significant_bits(consts["NORMOPS_EXPF_LN2_HI"]) + 8 <= 24
    # exp(r) = 1 + r (1 + r (P2 + r (P3 + ... + r P7))): Taylor, degree 7
    for k in range(2, 8):
        consts[f"NORMOPS_EXPF_P{k}"] = single(1 / mpmath.factorial(k))
    # the AVX-512 build: x = (n/16) ln2 + r, |r| <= ln2/32 (the shift
    # below rounds x log2 e to sixteenths), 2^(j/16) from a 16-entry table
    # held in one register, and e^r - 1 = r (1 + r (T2 + r T3)) fitted to
    # e^r by least squares on Chebyshev nodes of [-ln2/32, ln2/32], relative
    # error weighted, in mpmath (deterministic)
    # 1.5 * 2^23 / 16: sums with it are multiples of 1/16, and the low four
    # bits of the sum's pattern are j (n mod 16), the table's index
    assert FAST_SIXTEENTHS & (FAST_SIXTEENTHS - 1) == 0
    consts["NORMOPS_EXPF_SHIFT16"] = single(mpmath.mpf(3) * 2 ** 22 / FAST_SIXTEENTHS)
    for k, c in enumerate(fitted_exp_tail(degree=3, half=LN2 / (2 * FAST_SIXTEENTHS)), start=2):
        consts[f"NORMOPS_EXPF_T{k}"] = single(c)
    # the AVX2 build: no table (on Zen 2 its two vpermps and the blend
    # cost more than a longer polynomial in Estrin's form), x = n ln2 + r,
    # |r| <= ln2/2 (about), e^r = 1 + r + r^2 (F2 + r F3 + ... + r^4 F6),
    # F2..F6 fitted as above on [-ln2/2, ln2/2]
    for k, c in enumerate(fitted_exp_tail(degree=6, half=LN2 / 2), start=2):
        consts[f"NORMOPS_EXPF_F{k}"] = single(c)
    return consts


def fast_exp_sixteenths():
    """2^(j/16), j < 16, rounded once to float32 (the AVX-512 fast exp)."""
    return [single(mpmath.power(2, mpmath.mpf(j) / FAST_SIXTEENTHS)) for j in range(FAST_SIXTEENTHS)]


def fitted_exp_tail(degree, half, nodes=200):
    """c[0..degree-2] with e^r ~ 1 + r + r^2 sum c[i] r^i on |r| <= half."""
    rows, rhs = [], []
    for i in range(nodes):
        r = half * mpmath.cos(mpmath.pi * (i + mpmath.mpf(1) / 2) / nodes)
        e = mpmath.exp(r)
        weight = r * r / e  # error in q times r^2, relative to e^r
        rows.append([weight * r ** k for k in range(degree - 1)])
        rhs.append(weight * (e - 1 - r) / (r * r))
    a = mpmath.matrix(rows)
    b = mpmath.matrix(rhs)
    return list(mpmath.lu_solve(a.T * a, a.T * b))


def fitted(target, powers, lo, hi, nodes=301):
    """Least-squares fit on Chebyshev nodes of [lo, hi], relative error
    weighted: coefficients a[k] with target(r) ~ sum a[k] r^powers[k];
    target returns (function value, part to fit)."""
    rows, rhs = [], []
    for i in range(nodes):
        r = (lo + hi) / 2 + (hi - lo) / 2 * mpmath.cos(mpmath.pi * (i + mpmath.mpf(1) / 2) / nodes)
        value, part = target(r)
        weight = 1 / abs(value)
        rows.append([weight * r ** k for k in powers])
        rhs.append(weight * part)
    a = mpmath.matrix(rows)
    b = mpmath.matrix(rhs)
    return list(mpmath.lu_solve(a.T * a, a.T * b))


def float_exp_values():
    """exp32's float32 quick path (AVX-512; AVX2 with sixteenths, every
    other table entry and the C5 term): x = (k/32) ln2 + r, e^x =
    2^floor(k/32) (hi[j] + lo[j]) e^r, j = k mod 32, hi[j] + lo[j] = 2^(j/32)
    to about 48 bits; r = rh + (k/32) MLN2_LO with rh = x - (k/32) LN2_HI
    exact; e^r = 1 + r + r^2 (1/2 + r C3 + r^2 C4), Taylor."""
    n = FLOAT_EXP_TABLE
    hi, lo = [], []
    for j in range(n):
        v = mpmath.power(2, mpmath.mpf(j) / n)
        h = single(v)
        hi.append(h)
        lo.append(single(v - h))
    ln2_hi = single(LN2)
    consts = {
        # 1.5 * 2^23 / 32: sums with it are multiples of 1/32, and the low five
        # bits of the sum's pattern are j, the tables' index
        "NORMOPS_EXPF32_SHIFT": single(mpmath.mpf(3) * 2 ** 22 / n),
        # AVX2: sixteenths (its table is every other entry)
        "NORMOPS_EXPF32_SHIFT16": single(mpmath.mpf(3) * 2 ** 22 / (n // 2)),
        "NORMOPS_EXPF32_INVLN2": single(1 / LN2),
        "NORMOPS_EXPF32_LN2_HI": ln2_hi,
        "NORMOPS_EXPF32_MLN2_LO": single(ln2_hi - LN2),
        "NORMOPS_EXPF32_C3": single(mpmath.mpf(1) / 6),
        "NORMOPS_EXPF32_C4": single(mpmath.mpf(1) / 24),
        "NORMOPS_EXPF32_C5": single(mpmath.mpf(1) / 120),  # AVX2: |r| <= ln2/32 needs one more term
    }
    # rh = x - (k/32) LN2_HI is exact (one FMA): k/32 is a multiple of 2^-5
    # and LN2_HI of 2^-24, so the product is a multiple of 2^-29; where k is
    # not 0, |x| > ln2/64 > 2^-7 is a multiple of 2^-30; and |rh| <= ln2/64
    # (widened for the rounding of k) < 2^-6.4 is then fewer than 2^24 units
    # of 2^-30.
    assert is_multiple(ln2_hi, mpmath.mpf(2) ** -24)
    assert LN2 / 64 * (1 + mpmath.mpf(2) ** -10) < mpmath.mpf(2) ** -6.4
    assert mpmath.mpf(2) ** -6.4 / mpmath.mpf(2) ** -30 < 2 ** 24
    # AVX2's sixteenths: the product a multiple of 2^-28, x of 2^-29 where k
    # is not 0 (|x| > ln2/32 > 2^-6), |rh| <= ln2/32 (widened) < 2^-5.4
    assert LN2 / 32 * (1 + mpmath.mpf(2) ** -10) < mpmath.mpf(2) ** -5.4
    assert mpmath.mpf(2) ** -5.4 / mpmath.mpf(2) ** -29 < 2 ** 24
    return hi, lo, consts


def float_exp_point_values():
    """exp32's AVX-512 quick path: accurate-table points (Gal's method). For
    each j a small delta (a multiple of 2^-34, the smallest found) such that
    2^(j/32) e^delta is within 2^-42 (relative) of a float32, point[j]; then
    e^x = 2^floor(k/32) point[j] e^(r - delta) to that accuracy, and no low
    part is needed. offset[j] = -delta - BIAS / point[j], rounded to float32
    (within 2^-38): the reduced argument's correction, with the rounding
    test's lower edge folded in (the kernel adds it into rl, and hi * rl
    carries -BIAS into tt). The search screens with float64 (the fraction
    of point * 2^23 as a cubic in the step: e^delta's quartic term is below
    2^-64) and every chosen point is checked with mpmath."""
    import numpy as np
    n = FLOAT_EXP_TABLE
    steps = np.arange(-FLOAT_EXP_DELTA_STEPS, FLOAT_EXP_DELTA_STEPS + 1, dtype=np.float64)
    order = np.argsort(np.abs(steps), kind="stable")  # smallest |delta| first, -i before +i
    points, offsets = [], []
    for j in range(n):
        p0 = mpmath.power(2, mpmath.mpf(j) / n) * 2 ** 23  # in [2^23, 2^24): float32 units
        whole = mpmath.floor(p0)
        c = [float(p0 - whole)] + [float(p0 * FLOAT_EXP_DELTA_QUANTUM ** m / mpmath.factorial(m)) for m in (1, 2, 3)]
        frac = c[0] + steps * (c[1] + steps * (c[2] + steps * c[3]))
        near = np.abs(frac - np.rint(frac)) < 0.9 * 2.0 ** (23 - FLOAT_EXP_POINT_BITS)
        for i in steps[order][near[order]]:
            delta = int(i) * FLOAT_EXP_DELTA_QUANTUM
            v = mpmath.power(2, mpmath.mpf(j) / n) * mpmath.exp(delta)
            point = single(v)
            if abs(point - v) < v * mpmath.mpf(2) ** -FLOAT_EXP_POINT_BITS and 1 <= point < 2:
                break
        else:
            raise AssertionError(f"no point for j = {j}")
        offset = single(-delta - FLOAT_EXP_BIAS / point)
        assert abs(offset - (-delta - FLOAT_EXP_BIAS / point)) < mpmath.mpf(2) ** -38
        points.append(point)
        offsets.append(offset)
    return points, offsets


def fma_log_values():
    """log32's quick path: x = 2^E m, m in [0.75, 1.5) (vgetmantpd), and
    n = round(16 m) in 12..24 picks entry n mod 16: c = 1/invc near m (1 for
    n = 16, so that log x near 1 is the polynomial alone), logc = -log(invc)
    to double; r = m invc - 1 and log1p(r) ~ r + r^2 (B2 + r (B3 + ... B7))."""
    invc = [0.0] * FMA_LOG_TABLE
    logc = [0.0] * FMA_LOG_TABLE
    reach = mpmath.mpf(0)
    for n in range(12, 25):
        lo = max(mpmath.mpf(n) / 16 - mpmath.mpf(1) / 32, mpmath.mpf(3) / 4)
        hi = min(mpmath.mpf(n) / 16 + mpmath.mpf(1) / 32, mpmath.mpf(3) / 2)
        inv = mpmath.mpf(1) if n == 16 else mpmath.mpf(double(2 / (lo + hi)))
        invc[n % 16] = as_double(inv)
        logc[n % 16] = double(-mpmath.log(inv))
        reach = max(reach, abs(lo * inv - 1), abs(hi * inv - 1))
    reach = reach * (1 + mpmath.mpf(2) ** -10)
    coeffs = fitted(lambda r: (mpmath.log1p(r), mpmath.log1p(r) - r), range(2, FMA_LOG_DEGREE + 1), -reach, reach)
    consts = {
        # m rounded to sixteenths by the sum: its pattern ends in round(16 m)
        "NORMOPS_LOGF64_SHIFT": double(mpmath.mpf(3) * 2 ** 51 / 16),
        # E = the exponent of x * (4/3 + 2^-40): x's own, plus 1 when m < 1
        "NORMOPS_LOGF64_FOUR_THIRDS": double(mpmath.mpf(4) / 3 + mpmath.mpf(2) ** -40),
        "NORMOPS_LOGF64_LN2": double(LN2),
    }
    for k, c in enumerate(coeffs, start=2):
        consts[f"NORMOPS_LOGF64_B{k}"] = double(c)
    return invc, logc, consts


# ------------------------------------------------------------------ output

def c_double(d):
    return float.hex(d)


def c_float(d):
    return float.hex(d) + "f"


def c_u64(u):
    return f"0x{u:016X}ull"


def biased_patterns(table):
    """Entry j of a 2^(j/256) table as its binary64 pattern minus j << 44
    (mod 2^64): adding k << 44, k = 256 m + j, then gives the pattern of
    2^(j/256) 2^m in one integer addition (the kernels take k << 44 straight
    from the shifted sum whose low bits are k)."""
    return [(struct.unpack("<Q", struct.pack("<d", v))[0] - (j << 44)) % (1 << 64)
            for j, v in enumerate(table)]


def table(ctype, name, values, fmt, per_line, attributes=""):
    lines = [f"static const {ctype} {name}[{len(values)}]{attributes} = {{"]
    for start in range(0, len(values), per_line):
        chunk = values[start:start + per_line]
        lines.append("    " + ", ".join(fmt(v) for v in chunk) + ",")
    lines.append("};")
    return "\n".join(lines)


def render():
    exp_hi, exp_lo, exp_consts = exp_values()
    invc, logc_hi, logc_lo, log_consts = log_values()
    fast_consts = fast_exp_values()
    quick_table, quick_consts = quick_exp_values()
    float_exp_hi, float_exp_lo, float_exp_consts = float_exp_values()
    float_exp_points, float_exp_offsets = float_exp_point_values()
    fma_log_invc, fma_log_logc, fma_log_consts = fma_log_values()
    out = [
        "/* Generated by tools/gen_transcendental_tables.py: do not edit.",
        " *",
        " * Tables and constants of normops' own exp and log (transcendental.h,",
        " * docs/transcendentals.md), each computed with mpmath at 256 bits and",
        " * rounded once to nearest. */",
        "#ifndef NORMOPS_TRANSCENDENTAL_TABLES_H",
        "#define NORMOPS_TRANSCENDENTAL_TABLES_H",
        "",
        f"#define NORMOPS_EXP_TABLE_BITS {EXP_TABLE_BITS}",
        f"#define NORMOPS_LOG_TABLE_BITS {LOG_TABLE_BITS}",
        "",
        "/* exp: 2^(j/64) = hi[j] + lo[j], |lo[j]| <= ulp(hi[j]) / 2 */",
        table("double", "normops_exp_hi", exp_hi, c_double, 2),
        table("double", "normops_exp_lo", exp_lo, c_double, 2),
        "",
        "/* exp32's quick path: 2^(j/256) rounded once to double, as its pattern",
        " * minus j << 44 (transcendental.h: normops_exp32_quick) */",
        table("uint64_t", "normops_expq_biased", biased_patterns(quick_table), c_u64, 2),
        "",
        "/* log32's FMA quick path: 1/c and -log(1/c) for n = round(16 m) in",
        " * 12..24 at entry n mod 16 (entries 9..11 unused) */",
        table("double", "normops_logf64_invc", fma_log_invc, c_double, 2, " __attribute__((aligned(64)))"),
        table("double", "normops_logf64_logc", fma_log_logc, c_double, 2, " __attribute__((aligned(64)))"),
        "",
        "/* log, entry i for mantissas in [1 + i/128, 1 + (i+1)/128): invc has 12",
        " * significant bits (m * invc exact); -log(invc) = logc_hi + logc_lo with",
        " * logc_hi a multiple of 2^-42. Entry 127 is used with the exponent plus one",
        " * (invc = 1/2, log 0); entry 0 is 1 with log 0. */",
        table("double", "normops_log_invc", invc, c_double, 4),
        table("double", "normops_log_logc_hi", logc_hi, c_double, 2),
        table("double", "normops_log_logc_lo", logc_lo, c_double, 2),
        "",
    ]
    for name, value in {**exp_consts, **quick_consts, **log_consts, **fma_log_consts}.items():
        out.append(f"#define {name} ({c_double(value)})")
    out.append("")
    out.append("/* fast exp (float32 arithmetic) */")
    for name, value in fast_consts.items():
        out.append(f"#define {name} ({c_float(value)})")
    out.append("/* exp32's float32 quick paths: 2^(j/32) = hi[j] + lo[j] (AVX2, every other entry) */")
    for name, value in float_exp_consts.items():
        out.append(f"#define {name} ({c_float(value)})")
    out.append(table("float", "normops_expf32_hi", float_exp_hi, c_float, 4, " __attribute__((aligned(64)))"))
    out.append(table("float", "normops_expf32_lo", float_exp_lo, c_float, 4, " __attribute__((aligned(64)))"))
    out.append("/* AVX-512: point[j] = 2^(j/32) e^delta[j] within 2^-42, a float32;")
    out.append(" * offset[j] = -delta[j] - NORMOPS_EXPF32_BIAS / point[j] */")
    out.append(f"#define NORMOPS_EXPF32_BIAS ({c_float(single(FLOAT_EXP_BIAS))})")
    out.append(table("float", "normops_expf32_point", float_exp_points, c_float, 4, " __attribute__((aligned(64)))"))
    out.append(table("float", "normops_expf32_offset", float_exp_offsets, c_float, 4, " __attribute__((aligned(64)))"))
    out.append("/* the AVX-512 fast exp: 2^(j/16), one register (64-byte aligned) */")
    out.append(table("float", "normops_expf_sixteenths", fast_exp_sixteenths(), c_float, 4,
                     " __attribute__((aligned(64)))"))
    out += ["", "#endif", ""]
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed header, write nothing")
    parser.add_argument("--output", type=Path, default=HEADER)
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = args.output.exists() and args.output.read_text() == text
        print(f"{args.output}: {'up to date' if same else 'DIFFERS'}")
        return 0 if same else 1
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
