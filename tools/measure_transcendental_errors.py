#!/usr/bin/env python
"""Measure the errors quoted in docs/transcendentals.md.

- exp32 / log32 before their final rounding: the relative error of the
  unevaluated pair hi + lo against expl / logl (x86 long double, error
  about 2^-63) on a random sample of float32 inputs.
- exp64 / log64 against mpmath (128 bits) on a random sample: uniform over
  the finite domain, log-uniform magnitudes, around 1 and 0, subnormals.
- the fast exp32 against e^x on every float32 input whose result is not
  saturated (x in [-104, 89]); e^x in float64 (its error, 2^-29 float32
  ulp, does not show at the printed precision), and the distance in
  float32 steps from the correctly rounded exp32.

    python tools/measure_transcendental_errors.py [--samples N] [--skip-fast]
"""
import argparse
import math
import time

import mpmath
import numpy as np

import normops._isa as isa


def ulp64(value):
    """Spacing of float64 at an mpf value (subnormals: 2^-1074)."""
    if value == 0:
        return mpmath.mpf(2) ** -1074
    _, e = mpmath.frexp(abs(value))
    return mpmath.mpf(2) ** max(e - 53, -1074)


def errors64(fn, mpfn, x):
    """Max error (ulps) and where, for normal and for subnormal results, and
    the mean error."""
    y = np.empty_like(x)
    fn(x, y)
    worst = {"normal": (0.0, None), "subnormal": (0.0, None)}
    total = 0.0
    tiny = mpmath.mpf(2) ** -1022
    with mpmath.workprec(128):
        for xi, yi in zip(x.tolist(), y.tolist()):
            exact = mpfn(mpmath.mpf(xi))
            if math.isinf(yi):
                # overflow: fine when the exact value rounds above DBL_MAX
                assert exact > mpmath.mpf(np.finfo(np.float64).max), xi
                continue
            err = float(abs(mpmath.mpf(yi) - exact) / ulp64(exact))
            total += err
            kind = "subnormal" if abs(exact) < tiny else "normal"
            if err > worst[kind][0]:
                worst[kind] = (err, xi)
    return worst, total / len(x)


def sample_exp64(rng, n):
    parts = [
        rng.uniform(-745.1, 709.7, n),
        np.sign(rng.uniform(-1, 1, n)) * 2.0 ** rng.uniform(-60, 9.45, n),
        rng.uniform(-745.13, -708.4, n // 4),        # subnormal results
    ]
    return np.concatenate(parts)


def sample_log64(rng, n):
    bits = rng.integers(1, 0x7FF0000000000000, n, dtype=np.uint64)   # every positive finite pattern
    parts = [
        bits.view(np.float64),
        1.0 + rng.uniform(-2.0 ** -7, 2.0 ** -7, n),                    # around 1
        1.0 + np.sign(rng.uniform(-1, 1, n)) * 2.0 ** rng.uniform(-52, -7, n),
        rng.integers(1, 1 << 52, n // 4, dtype=np.uint64).view(np.float64),  # subnormals
    ]
    return np.concatenate(parts)


def pair_errors(module, n, rng):
    """Max relative error (log2) of the exp32 / log32 pairs on n random inputs."""
    results = {}
    for name in ("exp", "log"):
        if name == "exp":
            x = np.concatenate([rng.uniform(-104, 89, n), np.sign(rng.uniform(-1, 1, n)) * 2.0 ** rng.uniform(-40, 6.4, n)])
        else:
            bits = rng.integers(1, 0x7F800000, 2 * n, dtype=np.uint64).astype(np.uint32)
            x = np.concatenate([bits.view(np.float32), 1 + rng.uniform(-2.0 ** -6, 2.0 ** -6, n)])
        x = x.astype(np.float32)
        x = x[(x != 1)] if name == "log" else x
        hi, lo = np.empty(x.size), np.empty(x.size)
        getattr(module, f"{name}32_pair_into")(x, hi, lo)
        wide = x.astype(np.longdouble)
        exact = np.exp(wide) if name == "exp" else np.log(wide)
        rel = np.abs((hi.astype(np.longdouble) + lo.astype(np.longdouble) - exact) / exact)
        i = int(np.argmax(rel))
        results[name] = (float(np.log2(rel[i])), float(x[i]))
    return results


def fast_exp_errors(module, chunk=1 << 24):
    """Max error of the fast exp in ulps of e^x, and max distance in steps
    from exp32, over x in [-104, 89] (both signs' patterns)."""
    worst_ulp, worst_ulp_x, worst_steps = 0.0, None, 0
    ranges = [(0x00000000, 0x42B20001), (0x80000000, 0xC2D00001)]   # [+0, 89], [-0, -104]
    for lo, hi in ranges:
        for start in range(lo, hi, chunk):
            count = min(chunk, hi - start)
            fast = np.empty(count, np.uint32)
            exact = np.empty(count, np.uint32)
            module.exp32_fast_range(start, count, fast, 1, 2)
            module.exp32_range(start, count, exact, 1, 2)
            steps = np.abs(fast.astype(np.int64) - exact.astype(np.int64))
            worst_steps = max(worst_steps, int(steps.max()))
            x = np.arange(start, start + count, dtype=np.uint64).astype(np.uint32).view(np.float32)
            true = np.exp(x.astype(np.float64))
            # float32 ulp at the true value: 2^(floor(log2 v) - 23), at least 2^-149
            _, e = np.frexp(true)
            ulp = np.ldexp(1.0, np.maximum(e.astype(np.int64) - 24, -149))
            got = fast.view(np.float32).astype(np.float64)
            finite = np.isfinite(got) & (true < 2.0 ** 128 * (1 - 2.0 ** -25))
            err = np.where(finite, np.abs(got - true) / ulp, 0.0)
            i = int(np.argmax(err))
            if err[i] > worst_ulp:
                worst_ulp, worst_ulp_x = float(err[i]), float(x[i])
            # overflow must happen exactly when e^x rounds above FLT_MAX
            inf = ~np.isfinite(got)
            overflow = true >= float(np.finfo(np.float32).max) + 2.0 ** 103
            assert np.array_equal(inf, overflow) or np.all(np.abs(x[inf != overflow] - 88.72284) < 1e-5)
    return worst_ulp, worst_ulp_x, worst_steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--skip-fast", action="store_true")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(20240611)
    k = isa.kernels
    print(f"ISA level {isa.current_level()}")
    assert np.finfo(np.longdouble).nmant >= 63, "needs x86 long double"
    for name, (log2_err, x) in pair_errors(k, 1 << 22, rng).items():
        print(f"{name}32 pair before rounding: max relative error 2^{log2_err:.2f} at x = {np.float32(x)!r}")
    for name, fn, mpfn, sampler in (("exp64", k.exp64_into, mpmath.exp, sample_exp64),
                                    ("log64", k.log64_into, mpmath.log, sample_log64)):
        x = sampler(rng, args.samples)
        t = time.perf_counter()
        worst, mean = errors64(fn, mpfn, x)
        text = ", ".join(f"{kind} results max {err:.4f} ulp at x = {float(wx).hex()}"
                         for kind, (err, wx) in worst.items() if wx is not None)
        print(f"{name}: {x.size} inputs: {text}; mean {mean:.4f} ulp ({time.perf_counter() - t:.0f} s)")
    if not args.skip_fast:
        t = time.perf_counter()
        worst_ulp, worst_x, worst_steps = fast_exp_errors(k)
        print(f"exp32_fast: every x in [-104, 89]: max error {worst_ulp:.4f} ulp at x = {worst_x!r} "
              f"({float(np.float32(worst_x)).hex()}), at most {worst_steps} float32 steps from exp32 "
              f"({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
