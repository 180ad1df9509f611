#!/usr/bin/env python
"""Measure normops' own erf and tanh (docs/transcendentals.md, "erf and tanh").

For every float32 input from +0 up to where the function rounds to 1 (both
functions are odd and the kernels work on |x|, so the negative inputs give
the same magnitudes), in chunks of consecutive patterns:

- the error in float32 ulps of erf32/tanh32 (exact) and of the fast
  flavour's erf/tanh at this machine's ISA level, against the float64
  reference (scipy.special.erf, numpy.tanh: about 1 double ulp, i.e.
  2^-28 float32 ulp), the ulp being that of the float32 binade of the
  reference;
- how many exact results differ from the reference rounded to float32
  (for tanh32, correctly rounded except within about 2^-26 ulp of a
  midpoint: none; erf32 is faithful, so some do);
- with --levels, that every listed ISA build gives the same exact bits.

    python tools/measure_erf_tanh_errors.py                 # every input (about a minute per function)
    python tools/measure_erf_tanh_errors.py --stride 997    # a sample
    python tools/measure_erf_tanh_errors.py --levels baseline,avx2,avx512
"""
import argparse
import time

import numpy as np

from normops import _isa

CHUNK = 1 << 22


def reference(name, x):
    if name == "erf":
        import scipy.special
        return scipy.special.erf(x.astype(np.float64))
    return np.tanh(x.astype(np.float64))


def ulp32(ref):
    """The float32 ulp of the binade of |ref| (subnormal spacing below 2^-126)."""
    return np.ldexp(1.0, np.maximum(np.frexp(np.abs(ref))[1] - 24, -149))


def measure(name, stride, levels):
    kernels = {level: _isa.load(level) for level in levels}
    here = _isa.kernels
    sat = np.float32(3.93 if name == "erf" else 9.02)
    end = int(sat.view(np.uint32)) + 1
    worst = {"exact": (0.0, 0.0), "fast": (0.0, 0.0)}
    not_rn, count = 0, 0
    t0 = time.time()
    for start in range(0, end, CHUNK * stride):
        patterns = np.arange(start, min(start + CHUNK * stride, end), stride, dtype=np.uint64).astype(np.uint32)
        x = patterns.view(np.float32)
        ref = reference(name, x)
        ulp = ulp32(ref)
        ulp[ref == 0] = 2.0 ** -149
        for flavour, fn in (("exact", f"{name}32_into"), ("fast", f"{name}32_fast_into")):
            y = np.empty_like(x)
            getattr(here, fn)(x, y, 1)
            err = np.abs(y.astype(np.float64) - ref) / ulp
            i = int(np.argmax(err))
            if err[i] > worst[flavour][0]:
                worst[flavour] = (float(err[i]), float(x[i]))
            if flavour == "exact":
                not_rn += int(np.count_nonzero(y != ref.astype(np.float32)))
                for level, k in kernels.items():
                    z = np.empty_like(x)
                    getattr(k, fn)(x, z, 1)
                    if not np.array_equal(z.view(np.uint32), y.view(np.uint32)):
                        raise SystemExit(f"{name}32: level {level} differs from {_isa.current_level()}")
        count += x.size
    print(f"{name}32: {count} inputs (+0 to {sat}, stride {stride}) in {time.time() - t0:.0f} s; "
          f"exact max {worst['exact'][0]:.6f} ulp at x={worst['exact'][1]!r}, {not_rn} differ from RN32(float64 ref); "
          f"fast ({_isa.current_level()}) max {worst['fast'][0]:.4f} ulp at x={worst['fast'][1]!r}"
          + (f"; levels {','.join(levels)} identical" if levels else ""), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--levels", default="")
    parser.add_argument("--function", choices=("erf", "tanh", "both"), default="both")
    args = parser.parse_args()
    levels = [s for s in args.levels.split(",") if s]
    for name in ("erf", "tanh") if args.function == "both" else (args.function,):
        measure(name, args.stride, levels)


if __name__ == "__main__":
    main()
