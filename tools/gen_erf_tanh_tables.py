#!/usr/bin/env python
"""Write normops/_kernels/erf_tanh_tables.h: the piecewise polynomials of
normops' own erf and tanh (docs/transcendentals.md, "erf and tanh").

|x| is cut into intervals of width 1/4. On interval i >= 1 the function is a
polynomial in t = |x| - c_i, c_i = i/4 + 1/8 (|t| <= 1/8); on interval 0
(c_0 = 0) it is an odd polynomial in x (even coefficients exactly 0), so
that the result keeps its relative accuracy down to the smallest
subnormals. Coefficients: Chebyshev interpolation with mpmath at 200 bits
(in u = x^2 for f(x)/x on interval 0), converted to the monomial basis and
rounded once to nearest, to double (erf64, tanh64: degree 15; erf32 and
tanh32 have their own float32 pieces, tools/gen_poly32_tables.py) or to float
(fast flavour, degree 7, 32 intervals of width 1/8 for erf, 5/16 for tanh;
and the AVX2 fast erf's 8 intervals of width 1/2, below). Deterministic:
--check compares with the committed header byte for byte.

    python tools/gen_erf_tanh_tables.py            # rewrite the header
    python tools/gen_erf_tanh_tables.py --check    # exit 1 if it differs
"""
import argparse
import sys
from pathlib import Path

import mpmath
import numpy as np

mpmath.mp.prec = 200

HEADER = Path(__file__).resolve().parents[1] / "normops" / "_kernels" / "erf_tanh_tables.h"
WIDTH = mpmath.mpf(1) / 4
# (name, function, intervals of the float64 table, interval width of the
# float32 fast table). erf(x) rounds to 1 in float64 above 5.93 and in
# float32 above 3.92; tanh(x) above 19.06 and 9.01. The fast tables have 32
# intervals (two AVX-512 registers per coefficient), stored coefficient by
# coefficient: entry k * 32 + i.
FUNCTIONS = (("erf", mpmath.erf, 24, mpmath.mpf(1) / 8), ("tanh", mpmath.tanh, 78, mpmath.mpf(5) / 16))
FAST_INTERVALS = 32
DEG_EXACT = 15
DEG_FAST = 7
# The fast erf at AVX2 (erf_tanh.h, normops_erf32_fast8): 8 intervals, so
# that each coefficient's entries fill one register (one vpermps, no
# gathers). Interval i >= 1 is [i/2 - 1/4, i/2 + 1/4] around c_i = i/2, the
# last one stretched to 4 (past the float32 saturation, 3.92): degree 6 in
# t = |x| - c_i, erf = c0 + t q(t). Interval 0 is [0, 1/4] with c_0 = 0:
# erf(t) = t + t q(t), q = erf(t)/t - 1 of degree 5 in t (no constant term,
# so the relative accuracy holds down to the subnormals, and q's leading
# coefficient is 2/sqrt(pi) - 1, whose rounding weighs 8 times less than
# that of 2/sqrt(pi)); the kernel adds the t itself.
FAST8_INTERVALS = 8
DEG_FAST8 = 6


def solve(nodes, values, powers):
    A = mpmath.matrix([[v ** p for p in powers] for v in nodes])
    return list(mpmath.lu_solve(A, mpmath.matrix(values)))


def chebyshev_nodes(lo, hi, m):
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    return [(lo + hi) / 2 + (hi - lo) / 2 * mpmath.cos(mpmath.pi * (k + mpmath.mpf(1) / 2) / m) for k in range(m)]


def interval_coefficients(f, i, deg, width=WIDTH):
    """Monomial coefficients (degree 0..deg) of f(c_i + t) on interval i."""
    n = deg + 1
    if i == 0:
        # f(x)/x as a polynomial in u = x^2 on [0, WIDTH^2]; odd in x
        nu = deg // 2 + 1
        us = chebyshev_nodes(0, width * width, nu)
        b = solve(us, [f(mpmath.sqrt(u)) / mpmath.sqrt(u) for u in us], range(nu))
        coef = [mpmath.mpf(0)] * n
        for j, v in enumerate(b):
            coef[2 * j + 1] = v
        return coef
    c = i * width + width / 2
    ts = chebyshev_nodes(-width / 2, width / 2, n)
    return solve(ts, [f(c + t) for t in ts], range(n))


def saturation(f, bits):
    """The smallest value of the format (bits of precision) from which f
    rounds to 1: f(x) >= 1 - 2^-(bits+1), a tie rounding to the even 1."""
    target = 1 - mpmath.mpf(2) ** -(bits + 1)
    lo, hi = mpmath.mpf(0), mpmath.mpf(32)
    for _ in range(150):  # bisection: f increases
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    root = hi
    _, e = mpmath.frexp(root)
    quantum = mpmath.mpf(2) ** (e - bits)
    sat = mpmath.ceil(root / quantum) * quantum
    assert f(sat) >= target > f(sat - quantum)
    return sat


def c_double(v):
    return float(v).hex()


def c_float(v):
    return float(np.float32(float(v))).hex() + "f"


def table(name, ctype, fmt, f, intervals, deg):
    lines = [f"static const {ctype} {name}[{intervals} * {deg + 1}] = {{"]
    for i in range(intervals):
        coefs = interval_coefficients(f, i, deg)
        lines.append("    " + ", ".join(fmt(v) for v in coefs) + f",  /* {i} */")
    lines.append("};")
    return "\n".join(lines)


def coefficient_major_table(name, coefs):
    """A float table stored coefficient by coefficient, entry k * n + i,
    from the n intervals' coefficient lists coefs[i] (degree 0..deg): one
    vector register (or two) per coefficient in the kernels."""
    n, deg = len(coefs), len(coefs[0]) - 1
    lines = [f"static const float {name}[{deg + 1} * {n}] = {{"]
    for k in range(deg + 1):
        lines.append("    " + ", ".join(c_float(coefs[i][k]) for i in range(n)) + f",  /* t^{k} */")
    lines.append("};")
    return "\n".join(lines)


def fast8_coefficients(i, deg):
    """Monomial coefficients (degree 0..deg) of erf(c_i + t) on the AVX2
    fast erf's interval i (FAST8_INTERVALS above)."""
    if i == 0:
        ts = chebyshev_nodes(0, mpmath.mpf(1) / 4, deg)
        q = solve(ts, [mpmath.erf(t) / t for t in ts], range(deg))
        return [mpmath.mpf(0), q[0] - 1] + q[1:]
    c = mpmath.mpf(i) / 2
    hi = c + mpmath.mpf(1) / 4 if i < FAST8_INTERVALS - 1 else mpmath.mpf(4)
    xs = chebyshev_nodes(c - mpmath.mpf(1) / 4, hi, deg + 1)
    return solve([x - c for x in xs], [mpmath.erf(x) for x in xs], range(deg + 1))


def render():
    out = [
        "/* Generated by tools/gen_erf_tanh_tables.py: do not edit. */",
        "#ifndef NORMOPS_ERF_TANH_TABLES_H",
        "#define NORMOPS_ERF_TANH_TABLES_H",
        "",
        f"#define NORMOPS_ET_DEG {DEG_EXACT}",
        f"#define NORMOPS_ET_FAST_DEG {DEG_FAST}",
    ]
    out.append(f"#define NORMOPS_ET_FAST_INTERVALS {FAST_INTERVALS}")
    for fname, f, n64, w32 in FUNCTIONS:
        up = fname.upper()
        out += [
            f"#define NORMOPS_{up}_INTERVALS {n64}",
            f"#define NORMOPS_{up}_FAST_WIDTH {c_float(w32)}",
            f"#define NORMOPS_{up}_FAST_INVWIDTH {c_float(1 / w32)}",
            f"/* from here on {fname} rounds to 1: in double, in float */",
            f"#define NORMOPS_{up}_SAT64 {c_double(saturation(f, 53))}",
            f"#define NORMOPS_{up}_SAT32 {c_float(saturation(f, 24))}",
            table(f"normops_{fname}_coef", "double", c_double, f, n64, DEG_EXACT),
            coefficient_major_table(f"normops_{fname}_fast_coef",
                                    [interval_coefficients(f, i, DEG_FAST, w32) for i in range(FAST_INTERVALS)]),
            "",
        ]
    out += [f"#define NORMOPS_ERF_FAST8_INTERVALS {FAST8_INTERVALS}",
            f"#define NORMOPS_ERF_FAST8_DEG {DEG_FAST8}",
            coefficient_major_table("normops_erf_fast8_coef",
                                    [fast8_coefficients(i, DEG_FAST8) for i in range(FAST8_INTERVALS)]), ""]
    out.append("#endif")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        same = HEADER.exists() and HEADER.read_text() == text
        print("up to date" if same else f"{HEADER} differs")
        return 0 if same else 1
    HEADER.write_text(text)
    print(f"wrote {HEADER}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
