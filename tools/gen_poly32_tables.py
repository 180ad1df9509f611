#!/usr/bin/env python
"""Write the float32 tables of normops' exact erf32 and tanh32
(normops/_kernels/erf32_tables.h, tanh32_tables.h; docs/transcendentals.md,
"erf32" and "tanh32").

Both functions have one shape. For 0 <= a <= CLAMP the kernel takes
k = min(a, KMAX) rounded to a multiple of the interval width w (interval
i = k / w, 0..31), t = a - k (exact) and returns

    y = B + a * P_i(t),   P_i(t) = p0 + t (p1 + t (... + t pDEG)),

with B = a on the intervals below ZONE (P_i then fits (f(a) - a) / a, an
even, pole-free function) and B = H_i = RN32(f(k)) from ZONE on (P_i fits
(f(a) - H_i) / a). The correction a * P_i is at most about an eighth of y,
so its few roundings cost a fraction of an ulp and the final addition
dominates: faithful (proven over every input by `python -m normops
verify-transcendentals --function erf|tanh`). The last interval reaches
from its lower edge to CLAMP (KMAX stops k there), f(CLAMP) rounds to 1.

erf: w = 1/8, degree 5, ZONE 7, CLAMP 3.93 (erf rounds to 1 from 3.919).
tanh: w = 1/4, degree 6, ZONE 3, CLAMP 9.125 (tanh rounds to 1 from 9.01);
its last interval is [7.625, 9.125].

Fit: weighted least squares (weight a / f(a), so the error is relative
to y) on 400 Chebyshev nodes of each interval, in mpmath at 160 bits; the
coefficients are rounded to float32 one at a time from p0 up, the others
refitted after each rounding. Deterministic: --check compares with the
committed files byte for byte.

Also writes the same numbers into normops/reference/_erf32_table.py and
_tanh32_table.py for the executable specification.

    python tools/gen_poly32_tables.py            # rewrite all
    python tools/gen_poly32_tables.py --check    # exit 1 if any differs
"""
import argparse
import sys
from pathlib import Path

import mpmath
import numpy as np

mpmath.mp.prec = 160

ROOT = Path(__file__).resolve().parents[1]
INTERVALS = 32          # two AVX-512 registers per coefficient
NODES = 400


class Spec:
    def __init__(self, name, func, width, deg, zone, clamp, shift, saturation):
        self.name, self.func, self.deg, self.zone = name, func, deg, zone
        self.width = mpmath.mpf(width)
        self.clamp = np.float32(clamp)   # >= the float32 saturation; f32(CLAMP) must be 1
        self.kmax = np.float32(float(self.width) * (INTERVALS - 1))
        self.shift, self.saturation = shift, saturation
        self.header = ROOT / "normops" / "_kernels" / f"{name}32_tables.h"
        # the same numbers for the executable specification (normops/reference/_poly32.py)
        self.module = ROOT / "normops" / "reference" / f"_{name}32_table.py"


SPECS = [
    Spec("erf", mpmath.erf, mpmath.mpf(1) / 8, 5, 7, 3.93, "0x1.8p+20", "0x1.f5a88ap+1 = 3.919206"),
    Spec("tanh", mpmath.tanh, mpmath.mpf(1) / 4, 7, 3, 9.125, "0x1.8p+21", "0x1.205966p+3 = 9.010913"),
]


def f32(v):
    return np.float32(float(v))


def fit(spec, i):
    """(H_i, [p0..pDEG]) for interval i of spec, each a float32."""
    w = spec.width
    c = i * w
    lo = max(mpmath.mpf(0), c - w / 2)
    # the last interval runs on to the clamp (k stops at KMAX)
    hi = mpmath.mpf(float(spec.clamp)) if i == INTERVALS - 1 else min(c + w / 2, mpmath.mpf(float(spec.clamp)))
    H = mpmath.mpf(0) if i < spec.zone else mpmath.mpf(float(f32(spec.func(c))))
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    rows = []
    for n in range(NODES):
        a = mid + half * mpmath.cos(mpmath.pi * (n + mpmath.mpf(1) / 2) / NODES)
        e = spec.func(a)
        g = (e - (a if i < spec.zone else H)) / a
        rows.append((a - c, g, a / e))
    coefs = []
    for k in range(spec.deg + 1):
        m = spec.deg + 1 - k
        # normal equations of the weighted fit of the free coefficients k..DEG
        N = mpmath.matrix(m, m)
        r = mpmath.matrix(m, 1)
        for t, g, wt in rows:
            fixed = sum(coefs[j] * t ** j for j in range(k))
            pw = [t ** (k + j) * wt for j in range(m)]
            target = (g - fixed) * wt
            for p in range(m):
                r[p] += pw[p] * target
                for q in range(m):
                    N[p, q] += pw[p] * pw[q]
        sol = mpmath.lu_solve(N, r)
        coefs.append(mpmath.mpf(float(f32(sol[0]))))
    return f32(H), [f32(v) for v in coefs]


def c_float(v):
    return float(v).hex() + "f"


def _constants(spec):
    """(name, value, comment) of the scalar constants"""
    inv = int(1 / spec.width)
    return [
        ("ZONE", float(np.float32((spec.zone - 0.5) * float(spec.width))),
         f"k below this is an interval where B = a (i < {spec.zone})"),
        ("KMAX", float(spec.kmax), "k stops here: the last interval runs on to CLAMP"),
        ("CLAMP", float(spec.clamp), f"|x| is clamped to this ({spec.name} rounds to 1 in float32 from "
                                     f"{spec.saturation} on)"),
        ("SHIFT", float.fromhex(spec.shift), f"a + SHIFT rounds a to a multiple of 1/{inv}; its low bits are {inv}k"),
    ]


def render(spec, pieces):
    N = spec.name.upper()
    rows = [[h for h, _ in pieces]] + [[p[k] for _, p in pieces] for k in range(spec.deg + 1)]
    names = ["H"] + [f"p{k}" for k in range(spec.deg + 1)]
    out = [
        "/* Generated by tools/gen_poly32_tables.py: do not edit. */",
        f"#ifndef NORMOPS_{N}32_TABLES_H",
        f"#define NORMOPS_{N}32_TABLES_H",
        "",
        f"#define NORMOPS_{N}32_DEG {spec.deg}",
        f"/* the interval width is 2^-WBITS */",
        f"#define NORMOPS_{N}32_WBITS {int(1 / spec.width).bit_length() - 1}",
    ]
    for name, value, comment in _constants(spec):
        out += [f"/* {comment} */", f"#define NORMOPS_{N}32_{name} {c_float(value)}"]
    out += [
        f"/* row r, interval i at r * {INTERVALS} + i: H, then p0..p{spec.deg} */",
        f"static const float normops_{spec.name}32_tab[{spec.deg + 2} * {INTERVALS}] = {{",
    ]
    for name, row in zip(names, rows):
        for half in range(0, INTERVALS, 8):
            out.append("    " + ", ".join(c_float(v) for v in row[half:half + 8]) + ","
                       + (f"  /* {name} */" if half == 0 else ""))
    out += ["};", "", "#endif"]
    return "\n".join(out) + "\n"


def render_module(spec, pieces):
    rows = [[h for h, _ in pieces]] + [[p[k] for _, p in pieces] for k in range(spec.deg + 1)]
    out = [
        '"""Generated by tools/gen_poly32_tables.py: do not edit. The constants and',
        f'table of {spec.name}32 (normops/_kernels/{spec.name}32_tables.h), as float.fromhex strings."""',
        "",
        f"DEG = {spec.deg}",
    ]
    out += [f"{name} = {value.hex()!r}" for name, value, _ in _constants(spec)]
    out += ["#: rows H, p0 .. pDEG; 32 intervals each", "TABLE = ["]
    for row in rows:
        out.append("    [" + ", ".join(repr(float(v).hex()) for v in row) + "],")
    out.append("]")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--only", choices=[s.name for s in SPECS], help="just this function")
    args = parser.parse_args()
    outputs = {}
    for spec in SPECS:
        if args.only and spec.name != args.only:
            continue
        pieces = [fit(spec, i) for i in range(INTERVALS)]
        outputs[spec.header] = render(spec, pieces)
        outputs[spec.module] = render_module(spec, pieces)
    if args.check:
        differ = [path for path, text in outputs.items() if not path.exists() or path.read_text() != text]
        for path in differ:
            print(f"{path} differs")
        if not differ:
            print("up to date")
        return 1 if differ else 0
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
