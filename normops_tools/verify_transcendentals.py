"""The proof that exp32, log32 and log1p32 are correctly rounded for all
2^32 inputs.

``python -m normops verify-transcendentals [--function exp|log|log1p|erf|tanh|both|all]
[--levels baseline,avx2,avx512] [--quick]``

(``both`` is exp and log, ``all``, the default, adds log1p, erf and tanh;
the check of the faithful erf32 and tanh32 is described at
``check_faithful``.)

For every float32 input, in chunks of consecutive bit patterns:

1. every ISA build this machine runs computes the function; the builds
   must agree bit for bit;
2. the result must equal ``(float) expl(x)`` / ``(float) logl(x)`` /
   ``(float) log1pl(x)`` computed with x86 long double (64-bit
   significand, error about 2^-40 float32 ulp);
3. where that reference lies within 2^-36 ulp of a float32 midpoint (too
   close to trust it), the input is recomputed with mpmath at 160 and 256
   bits and the result must equal mpmath's correctly rounded value.

It prints the SHA-256 of all 2^32 outputs (little-endian uint32 patterns,
canonical NaN, inputs in pattern order) and compares it with the recorded
one. Since a correctly rounded result is unique, every correct
implementation gives the same digest on every platform; a build without
the x86 long-double reference (other CPUs) checks the levels and the digest
only.

``--quick`` checks a stride sample (every 4099th pattern) in a second; its
digest, of the sample only, is recorded too.
"""
import argparse
import hashlib
import sys
import time

import numpy as np

from normops import _config, _isa

ALL_PATTERNS = 1 << 32
FUNCTIONS = ("exp", "log")
#: the correctly rounded functions (``both`` is FUNCTIONS)
CORRECTLY_ROUNDED = FUNCTIONS + ("log1p",)
ERF_CHUNK = 1 << 22
QUICK_STRIDE = 4099

#: SHA-256 of the correctly rounded results (docs/transcendentals.md), by
#: stride: all 2^32 inputs (1) and the --quick sample.
GOLDEN_DIGESTS = {
    1: {"exp": "3454f5cced57c37cac2f523ef8964563430f8e0c85837626724955094b614dce",
        "log": "982250baecdb23cc9115a63b45f4411e049fa408f560511661dc27788911396d",
        "erf": "7af8cd2a09552ee5ce186e38377332c5244cb7eaa93caa02ff3c37e90d0b839c",
        "tanh": "b3a2bebc29584e6d0ddf882234f49ab959204f089880cc721c0ed53946a6a6ac",
        "log1p": "518e602cbcc47e4091c8ed0862365ab6d9a984ed03ebe339f7569eca756057db"},
    QUICK_STRIDE: {"exp": "8092cc4a8e0e78319d2c647bb4fbc6070ab988d6a1daddeaafd72523668225d0",
                   "log": "97defe6ca2cbff78a070919e56e30a6afb70ae899104c70c26bc8bdd39cfbf6f",
                   "erf": "7b7979e248943fe1f0fc66fc47b3f05ceb2eadef7d7cd6462e357bda3fdfa567",
                   "tanh": "37ae0e12afdd88473971a149bdef3772d110568152e7497060e1a166b568eeb6",
                   "log1p": "7de9ec1ab4841bb6be7e05bd7cfd6e9a9dcf759e2c196a2e610039e346c948a3"},
}


# --------------------------------------------------------------- mpmath

def _mpmath():
    import mpmath
    return mpmath


def _round_float32(value, mpmath):
    """The float32 nearest to a finite, non-zero mpf (ties to even), as a
    uint32 pattern; magnitudes from 2^128 on give inf."""
    negative = value < 0
    magnitude = -value if negative else value
    _, exponent = mpmath.frexp(magnitude)          # magnitude in [2^(e-1), 2^e)
    quantum = max(exponent - 24, -149)             # float32 spacing there (subnormals: 2^-149)
    units = int(mpmath.nint(mpmath.ldexp(magnitude, -quantum)))
    result = np.float32(units * 2.0 ** quantum) if units * 2.0 ** quantum < 2.0 ** 128 else np.float32(np.inf)
    bits = int(result.view(np.uint32))
    return bits | 0x80000000 if negative else bits


def correctly_rounded(function, x):
    """The correctly rounded float32 result of exp, log or log1p at the
    float32 ``x``, from mpmath (float32 pattern as an int). Specials follow
    docs/specification.md §5.1."""
    mpmath = _mpmath()
    x = np.float32(x)
    if np.isnan(x):
        return 0x7FC00000
    if function == "log1p":
        if x < -1:
            return 0x7FC00000
        if x == -1:
            return 0xFF800000
        if np.isinf(x):
            return 0x7F800000
        if x == 0:
            return int(x.view(np.uint32))
    elif function == "exp":
        if np.isinf(x):
            return 0x7F800000 if x > 0 else 0
        if x == 0:
            return 0x3F800000
    else:
        if x < 0:
            return 0x7FC00000
        if x == 0:
            return 0xFF800000
        if np.isinf(x):
            return 0x7F800000
        if x == 1:
            return 0
    fn = {"exp": mpmath.exp, "log": mpmath.log, "log1p": mpmath.log1p}[function]
    results = set()
    for bits in (160, 256):  # two precisions must agree: no input is that close to a midpoint
        with mpmath.workprec(bits):
            results.add(_round_float32(fn(mpmath.mpf(float(x))), mpmath))
    if len(results) != 1:
        raise ArithmeticError(f"mpmath cannot decide the rounding of {function}({float(x).hex()})")
    return results.pop()


def midpoint_distance(function, x):
    """How far exp(x), log(x) or log1p(x) lies from the nearest float32
    midpoint, in float32 ulps there (mpmath at 256 bits; x finite, in the
    domain)."""
    mpmath = _mpmath()
    with mpmath.workprec(256):
        fn = {"exp": mpmath.exp, "log": mpmath.log, "log1p": mpmath.log1p}[function]
        value = abs(fn(mpmath.mpf(float(np.float32(x)))))
        _, exponent = mpmath.frexp(value)
        units = mpmath.ldexp(value, -max(exponent - 24, -149))
        return float(abs(units - mpmath.floor(units) - mpmath.mpf(1) / 2))


# ----------------------------------------------------------------- check

class Outcome:
    def __init__(self, function):
        self.function = function
        self.checked = 0
        self.flagged = 0
        self.level_mismatches = []      # (level, input pattern, its bits, first level's bits), the first ones
        self.n_level_mismatches = 0
        self.wrong = []                 # (input pattern, kernel bits, correct bits), the first ones
        self.n_wrong = 0                # wrong, or differing from the reference beyond the recheck budget
        self.reference_errors = 0       # long-double reference off, mpmath agrees with the kernel
        self.closest = (1.0, 0)         # (distance in ulps per the reference, input pattern)
        self.reference_used = True      # compared with the long-double reference
        self.rechecks_left = 0          # mpmath budget for disagreements with the reference
        self.flagged_inputs = []        # the first flagged input patterns
        self.digest = None
        self.seconds = 0.0

    @property
    def ok(self):
        return self.n_level_mismatches == 0 and self.n_wrong == 0


def hex32(pattern):
    """The float32 of a pattern in C99 hex notation (shortest digits)."""
    text = float(np.uint32(pattern).view(np.float32)).hex()
    if "p" in text and "." in text:
        mantissa, exponent = text.split("p")
        mantissa = mantissa.rstrip("0").rstrip(".")
        text = f"{mantissa}p{exponent}"
    return text


def _little_endian(a):
    return a if a.dtype.byteorder in ("<", "=") and sys.byteorder == "little" else a.astype("<u4")


def _check_against_reference(function, reference, outcome, got, start, count, stride, n_threads, near_bits,
                             ref, near, max_listed):
    """Compare one chunk with the long-double reference; mpmath decides the
    flagged inputs and, while outcome.rechecks_left lasts, any disagreement."""
    r, nr = ref[:count], near[:count]
    flagged, distance, pattern = getattr(reference, f"{function}32_reference_range")(
        start, count, r, nr, stride, n_threads, near_bits)
    outcome.flagged += flagged
    if distance < outcome.closest[0]:
        outcome.closest = (distance, pattern)
    # inputs to decide with mpmath: flagged ones, and any disagreement
    for i in np.nonzero((got != r) | (nr != 0))[0]:
        pattern = start + int(i) * stride
        if nr[i] and len(outcome.flagged_inputs) < 10:
            outcome.flagged_inputs.append(pattern)
        if not nr[i]:
            if outcome.rechecks_left <= 0:
                outcome.n_wrong += 1
                continue
            outcome.rechecks_left -= 1
        correct = correctly_rounded(function, np.uint32(pattern).view(np.float32))
        if int(got[i]) != correct:
            outcome.n_wrong += 1
            if len(outcome.wrong) < max_listed:
                outcome.wrong.append((pattern, int(got[i]), correct))
        elif int(r[i]) != correct:
            outcome.reference_errors += 1


def check_function(function, levels, *, stride=1, chunk=1 << 24, n_threads=None, near_bits=36, report=print,
                   max_listed=20, max_rechecks=10_000):
    """Check one function over the patterns 0, stride, 2*stride, ... below
    2^32; returns an Outcome. At most ``max_rechecks`` disagreements with
    the reference are decided by mpmath; any beyond count as wrong (a
    broken kernel should fail in minutes, not take days)."""
    modules = [(level, _isa.load(level)) for level in levels]
    reference = modules[0][1]
    outcome = Outcome(function)
    # without x86 long double only the levels and the digest are checked
    outcome.reference_used = bool(reference.has_long_double_reference())
    outcome.rechecks_left = max_rechecks
    n_threads = _config.resolve_threads(n_threads, "verify-transcendentals")
    kernel_name = f"{function}32_range"
    chunk = _clamped_chunk(chunk, stride)
    ref = np.empty(chunk, np.uint32)
    near = np.empty(chunk, np.uint8)

    def compute(module, start, count, out):
        getattr(module, kernel_name)(start, count, out, stride, n_threads)

    def status():
        return f"flagged {outcome.flagged}, wrong {outcome.n_wrong}"

    for start, count, got in _sweep(f"{function}32", modules, outcome, stride, chunk, np.uint32, compute,
                                    status, report, max_listed):
        if outcome.reference_used:
            _check_against_reference(function, reference, outcome, got, start, count, stride, n_threads,
                                     near_bits, ref, near, max_listed)
    return outcome


def _clamped_chunk(chunk, stride):
    return max(1, min(chunk, (ALL_PATTERNS + stride - 1) // stride))


def _sweep(name, modules, outcome, stride, chunk, out_dtype, compute, status, report, max_listed):
    """The exhaustive walk shared by the checks: for each chunk of the
    patterns 0, stride, 2*stride, ... below 2^32, ``compute(module, start,
    count, out)`` at every level; the levels must agree bit for bit (listed
    in ``outcome``), the first level's bits go into the SHA-256 digest, and
    (start, count, first level's output) is yielded for the caller's own
    checks. Progress is reported 16 times; digest and seconds are set on
    ``outcome`` at the end."""
    levels = [level for level, _ in modules]
    total = (ALL_PATTERNS + stride - 1) // stride
    chunk = _clamped_chunk(chunk, stride)
    digest = hashlib.sha256()
    outs = {level: np.empty(chunk, out_dtype) for level in levels}
    started = time.perf_counter()
    n_chunks = (total + chunk - 1) // chunk
    report_every = max(1, n_chunks // 16)
    for c in range(n_chunks):
        count = min(chunk, total - c * chunk)
        start = c * chunk * stride
        views = {level: out[:count] for level, out in outs.items()}
        for level, module in modules:
            compute(module, start, count, views[level])
        got = views[levels[0]]
        gbits = got.view(np.uint32)
        for level in levels[1:]:
            other = views[level].view(np.uint32)
            if not np.array_equal(gbits, other):
                differ = np.nonzero(gbits != other)[0]
                outcome.n_level_mismatches += differ.size
                for i in differ[:max(0, max_listed - len(outcome.level_mismatches))]:
                    outcome.level_mismatches.append((level, start + int(i) * stride, int(other[i]), int(gbits[i])))
        digest.update(_little_endian(gbits).tobytes())
        outcome.checked += count
        yield start, count, got
        if (c + 1) % report_every == 0 or c + 1 == n_chunks:
            elapsed = time.perf_counter() - started
            eta = elapsed / (c + 1) * (n_chunks - c - 1)
            report(f"  {name}: {outcome.checked:>10d} / {total} inputs ({100.0 * (c + 1) / n_chunks:5.1f}%), "
                   f"{elapsed:6.1f} s, about {eta:5.0f} s left; {status()}, "
                   f"level mismatches {outcome.n_level_mismatches}")
    outcome.digest = digest.hexdigest()
    outcome.seconds = time.perf_counter() - started


# ---------------------------------------------------------- erf32, tanh32

#: erf32 and tanh32 promise to be faithful: every result within this many ulps
ERF_BOUND = 1.0
#: errors measured against erf64 / tanh64 (about 1.4 double ulps, 2^-28
#: float32 ulps) above this are decided by mpmath
ERF_SUSPECT = 1.0 - 2.0 ** -20
#: the faithful float32 functions checked by check_faithful
FAITHFUL = ("erf", "tanh")


def faithful_ulp_error(function, x, y):
    """|y - f(x)| in float32 ulps of f(x)'s binade, f = mpmath's erf or
    tanh at 128 bits (x, y float32 scalars, x finite)."""
    mpmath = _mpmath()
    with mpmath.workprec(128):
        value = getattr(mpmath, function)(mpmath.mpf(float(x)))
        if value == 0:
            return 0.0 if float(y) == 0 else float("inf")
        _, exponent = mpmath.frexp(abs(value))
        quantum = mpmath.ldexp(1, max(exponent - 24, -149))
        return float(abs(mpmath.mpf(float(y)) - value) / quantum)


def erf_ulp_error(x, y):
    """faithful_ulp_error for erf"""
    return faithful_ulp_error("erf", x, y)


class ErfOutcome(Outcome):
    def __init__(self, function="erf"):
        super().__init__(function)
        self.max_error = (0.0, 0)      # (ulps per the float64 function, input pattern)
        self.suspects = 0              # rechecked with mpmath
        self.special_wrong = 0         # NaN, +-inf not as documented

    @property
    def ok(self):
        return super().ok and self.special_wrong == 0


def _faithful_errors(function, reference, xf, yf, ref, n_threads, outcome, max_listed):
    """The errors of erf32 / tanh32 at the finite inputs xf (results yf)
    against erf64 / tanh64; mpmath decides those above ERF_SUSPECT."""
    r = ref[:xf.size]
    getattr(reference, f"{function}64_into")(xf.astype(np.float64), r, n_threads)
    with np.errstate(divide="ignore"):
        _, exponent = np.frexp(r)
    quantum = np.ldexp(1.0, np.maximum(exponent - 24, -149))
    err = np.abs(yf.astype(np.float64) - r) / quantum
    i = int(np.argmax(err))
    if err[i] > outcome.max_error[0]:
        outcome.max_error = (float(err[i]), int(xf[i:i + 1].view(np.uint32)[0]))
    for j in np.nonzero(err > ERF_SUSPECT)[0]:
        outcome.suspects += 1
        pattern = int(xf[j:j + 1].view(np.uint32)[0])
        if faithful_ulp_error(function, xf[j], yf[j]) >= ERF_BOUND:
            outcome.n_wrong += 1
            if len(outcome.wrong) < max_listed:
                outcome.wrong.append((pattern, int(yf[j:j + 1].view(np.uint32)[0]), None))


def check_faithful(function, levels, *, stride=1, chunk=ERF_CHUNK, n_threads=None, report=print,
                   max_listed=20):
    """erf32 or tanh32 (``function`` "erf" / "tanh") over the patterns 0,
    stride, 2*stride, ... below 2^32: every ISA build bit-identical; every
    finite input within ERF_BOUND ulp of the function, measured against
    normops' erf64 / tanh64 of the widened input (error about 2^-28 float32
    ulp) and decided with mpmath above ERF_SUSPECT; NaN -> canonical NaN,
    +-inf -> +-1. Faithful, not correctly rounded, so the digest identifies
    this implementation (its bits are the same on every platform all the
    same: float32 + - * only)."""
    modules = [(level, _isa.load(level)) for level in levels]
    reference = modules[0][1]
    outcome = ErfOutcome(function)
    n_threads = _config.resolve_threads(n_threads, "verify-transcendentals")
    chunk = _clamped_chunk(chunk, stride)
    ref = np.empty(chunk, np.float64)

    current = {}

    def inputs(start, count):  # the chunk's inputs, made once for all levels
        if current.get("start") != start:
            current.update(start=start, x=_patterns(start, count, stride))
        return current["x"]

    def compute(module, start, count, out):
        getattr(module, f"{function}32_into")(inputs(start, count), out, n_threads)

    def status():
        return f"max error {outcome.max_error[0]:.4f} ulp, wrong {outcome.n_wrong}"

    for start, count, got in _sweep(f"{function}32", modules, outcome, stride, chunk, np.float32, compute,
                                    status, report, max_listed):
        x = inputs(start, count)
        gbits = got.view(np.uint32)
        # special inputs: exact results
        nan = np.isnan(x)
        inf = np.isinf(x)
        outcome.special_wrong += int(np.count_nonzero(gbits[nan] != 0x7FC00000))
        outcome.special_wrong += int(np.count_nonzero(got[inf] != np.sign(x[inf])))
        # finite inputs: the error against the float64 function
        finite = ~(nan | inf)
        xf, yf = x[finite], got[finite]
        if xf.size:  # (some chunks hold NaN patterns only)
            _faithful_errors(function, reference, xf, yf, ref, n_threads, outcome, max_listed)
    return outcome


def check_erf(levels, **kwargs):
    """check_faithful for erf32"""
    return check_faithful("erf", levels, **kwargs)


def _patterns(start, count, stride):
    """The float32 inputs start, start + stride, ... (bit patterns)."""
    return (np.arange(count, dtype=np.uint64) * stride + start).astype(np.uint32).view(np.float32)


def _report_faithful(function, outcome, levels, stride):
    """Print erf32's or tanh32's outcome; True when it failed."""
    name = f"{function}32"
    status = "OK" if outcome.ok else (f"FAILED ({outcome.n_wrong} beyond {ERF_BOUND} ulp, "
                                      f"{outcome.special_wrong} special values wrong, "
                                      f"{outcome.n_level_mismatches} level mismatches)")
    print(f"{name}: {status}: {outcome.checked} inputs in {outcome.seconds:.1f} s; "
          f"{outcome.suspects} above {ERF_SUSPECT:.7f} ulp per {function}64 rechecked with mpmath")
    error, pattern = outcome.max_error
    x = np.uint32(pattern).view(np.float32)
    y = np.empty(1, np.float32)
    getattr(_isa.load(levels[0]), f"{name}_into")(np.array([x]), y, 1)
    print(f"  largest error: {name}({hex32(pattern)}) [0x{pattern:08x}] = {float(y[0]).hex()}, "
          f"{faithful_ulp_error(function, x, y[0]):.6f} ulp (mpmath; {function}64 said {error:.6f})")
    for p, bits, _ in outcome.wrong[:20]:
        print(f"  WRONG {name}({hex32(p)}) [0x{p:08x}] = 0x{bits:08x}: {ERF_BOUND} ulp or more from {function}")
    same = _report_levels_and_digest(function, outcome, levels, stride)
    return not outcome.ok or same is False


def _report_levels_and_digest(function, outcome, levels, stride):
    """Print the level mismatches and the digest, compared with the recorded
    one; returns True/False (equal or not) or None when none is recorded."""
    for level, pattern, bits, first in outcome.level_mismatches[:20]:
        print(f"  level {level} differs from {levels[0]} at input 0x{pattern:08x}: 0x{bits:08x} != 0x{first:08x}")
    label = "SHA-256 of all outputs" if stride == 1 else "SHA-256 of the sample's outputs"
    print(f"{function}32: {label}: {outcome.digest}", flush=True)
    golden = GOLDEN_DIGESTS.get(stride, {}).get(function)
    if golden is None:
        return None
    same = golden == outcome.digest
    print(f"{function}32: {'equals' if same else 'DIFFERS from'} the recorded digest {golden}")
    return same


def _levels(text):
    available = _isa.available_levels()
    if text is None:
        return available
    levels = [t.strip() for t in text.split(",") if t.strip()]
    for level in levels:
        if level not in available:
            raise SystemExit(f"verify-transcendentals: level {level!r} is not available here "
                             f"(available: {', '.join(available)})")
    return levels


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m normops verify-transcendentals",
        description="Check exp32, log32, log1p32 (correctly rounded) and erf32, tanh32 (faithful) on all 2^32 "
                    "float32 inputs: every ISA build bit-identical, exp/log/log1p equal to the long-double "
                    "reference with mpmath near midpoints, erf and tanh within 1 ulp; print the SHA-256 of the "
                    "outputs.")
    parser.add_argument("--function", choices=("exp", "log", "log1p", "erf", "tanh", "both", "all"),
                        default="all", help="both: exp and log; all (default): exp, log, log1p, erf and tanh")
    parser.add_argument("--levels", help="comma-separated ISA levels (default: every level this CPU runs)")
    parser.add_argument("--quick", action="store_true", help=f"every {QUICK_STRIDE}th pattern only (seconds)")
    parser.add_argument("--stride", type=int, help="check every STRIDE-th pattern (overrides --quick)")
    parser.add_argument("--chunk-bits", type=int, default=24, help="log2 of the inputs per chunk (default 24)")
    parser.add_argument("--threads", type=int, default=None, help="threads (default: as normops)")
    parser.add_argument("--near-bits", type=int, default=36,
                        help="recheck with mpmath every input whose reference lies within 2^-N ulp of a "
                             "midpoint (default 36)")
    args = parser.parse_args(argv)
    levels = _levels(args.levels)
    stride = args.stride if args.stride else (QUICK_STRIDE if args.quick else 1)
    if stride < 1:
        parser.error("--stride must be >= 1")
    functions = {"both": FUNCTIONS, "all": CORRECTLY_ROUNDED + FAITHFUL}.get(args.function, (args.function,))
    try:
        _mpmath()
    except ImportError:
        print("verify-transcendentals needs mpmath (pip install mpmath)", file=sys.stderr)
        return 2
    sample = "all 2^32 inputs" if stride == 1 else f"every {stride}th input pattern"
    print(f"verify-transcendentals: {sample}, ISA levels {', '.join(levels)}", flush=True)
    failed = False
    for function in functions:
        if function in FAITHFUL:
            outcome = check_faithful(function, levels, stride=stride, n_threads=args.threads,
                                     report=lambda s: print(s, flush=True))
            failed = _report_faithful(function, outcome, levels, stride) or failed
            continue
        outcome = check_function(function, levels, stride=stride, chunk=1 << args.chunk_bits,
                                 n_threads=args.threads, near_bits=args.near_bits,
                                 report=lambda s: print(s, flush=True))
        status = "OK" if outcome.ok else (f"FAILED ({outcome.n_wrong} wrong, "
                                          f"{outcome.n_level_mismatches} level mismatches)")
        if not outcome.reference_used:
            print(f"{function}32: no x86 long-double reference in this build: only the ISA levels "
                  f"and the digest are checked")
        else:
            print(f"{function}32: {status}: {outcome.checked} inputs in {outcome.seconds:.1f} s; "
                  f"{outcome.flagged} near a midpoint rechecked with mpmath; "
                  f"{outcome.reference_errors} long-double reference errors overruled by mpmath")
            distance, pattern = outcome.closest
            exact = midpoint_distance(function, np.uint32(pattern).view(np.float32))
            print(f"  closest to a midpoint: {function}32({hex32(pattern)}) [0x{pattern:08x}], "
                  f"2^{np.log2(exact):.1f} ulp (mpmath; reference said 2^{np.log2(max(distance, 1e-300)):.1f})")
        for pattern in outcome.flagged_inputs:
            x = np.uint32(pattern).view(np.float32)
            print(f"  flagged {function}32({hex32(pattern)}) [0x{pattern:08x}]: "
                  f"2^{np.log2(midpoint_distance(function, x)):.1f} ulp from a midpoint")
        for pattern, bits, correct in outcome.wrong[:20]:
            print(f"  WRONG {function}32({hex32(pattern)}) [0x{pattern:08x}] = 0x{bits:08x}, correctly rounded 0x{correct:08x}")
        same = _report_levels_and_digest(function, outcome, levels, stride)
        if same is False:
            failed = True
        elif same is None and not outcome.reference_used:
            print(f"{function}32: UNVERIFIED: no reference and no recorded digest for stride {stride}")
            failed = True
        failed = failed or not outcome.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
