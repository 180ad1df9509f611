"""Randomized differential comparison of normops with ONNX Runtime.

``python -m normops compare-ort`` generates, for every served operator and
every version the registry serves, randomized one-node cases (ranks 1-5,
odd widths, axis subsets and negative axes, keepdims, attribute variations
valid at that opset, special values, every candidate dtype), runs each case
in ONNX Runtime (CPU execution provider, one thread) and in normops in both
flavours, and compares the outputs.

The error measure (one number per output, the worst output counts)::

    scaled error = max|a - b| / max(1, max|b|)

over the elements where both results are finite, ``a`` normops and ``b``
ONNX Runtime, both widened to float64. Non-finite elements must agree
exactly (NaN where ORT has NaN, the same infinity; +0 equals -0). The bound is ``1e-4``
for float32/float64 outputs and ``4 * eps`` of the output type for the
narrow floats (float16: 2^-8 = 3.9e-3, bfloat16: 2^-5 = 3.1e-2: one
rounding to the narrow type on each side, plus ORT's own narrow
arithmetic). Integer and boolean outputs must be equal. Shapes and dtypes
must be equal.

A disagreement is a failure unless its cause is established: the NaN rules
the spec documents (NAN_DIFFERENCES) and the table DOCUMENTED_DIFFERENCES,
whose every rule states the condition, the reason and the spec text behind
normops's side, and checks its evidence on the case itself.

Adding an operator is one generator function registered with
:func:`generator`; the registry (``normops._registry``) decides whether it
runs: a generator whose operator is not served waits, and a served operator
without a generator is reported as such.

``onnx`` and ``onnxruntime`` are optional: imported when a case runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

__all__ = [
    "Generator",
    "GENERATORS",
    "NAN_DIFFERENCES",
    "DOCUMENTED_DIFFERENCES",
    "Documented",
    "documented_difference",
    "Case",
    "Result",
    "compare_outputs",
    "generator",
    "make_cases",
    "run",
    "run_case",
    "main",
]

MODES = ("exact", "fast")
BOUND = 1e-4
BEGIN = "<!-- compare-ort:begin -->"
END = "<!-- compare-ort:end -->"
_COMMAND = "python -m normops compare-ort"
_REPO_ROOT = Path(__file__).resolve().parent.parent

# Statuses of a case (the worst of its flavours counts).
PASS = "pass"
DOCUMENTED = "documented difference"
ORT_FAILS = "ORT does not run"
NOT_SERVED = "normops does not serve"
FAIL = "failure"
_ORDER = (PASS, NOT_SERVED, ORT_FAILS, DOCUMENTED, FAIL)

#: Documented NaN differences: category -> (operators, reason from the spec).
NAN_DIFFERENCES = {
    "ReduceMax/ReduceMin on NaN": (
        ("ReduceMax", "ReduceMin"),
        "normops returns the result of a sequential scan (NaN is ignored unless it is "
        "the first element). ONNX Runtime's result for NaN inputs depends on its "
        "internal code path (probed: it matched for non-innermost reduced axes, and "
        "from 0 to 150 of 150 trials for an innermost one, depending on the extent), "
        "so the spec documents NaN here instead of matching it.",
    ),
    "ArgMax/ArgMin on NaN": (
        ("ArgMax", "ArgMin"),
        "normops scans the axis from index 0 and NaN never wins unless it is first. "
        "ONNX Runtime's behaviour depends on its code path (a 1-D input made a NaN "
        "win in the probe, a 3x3 input did not), so the spec documents NaN instead "
        "of matching it; ties and ordinary values match.",
    ),
}
_NAN_CATEGORY = {op: name for name, (ops, _) in NAN_DIFFERENCES.items() for op in ops}


def _nonfinite_input(result) -> bool:
    a = result.case.inputs[0]
    return a.dtype.kind not in "iub" and not np.isfinite(a.astype(np.float64)).all()


#: Disagreements compare-ort found that the spec does not document (yet).
#: They stay failures; this only names them in the report:
#: name -> (operator, predicate on a failed Result, what differs).
#: (Empty now: every kind found so far is established, see DOCUMENTED_DIFFERENCES.)
OPEN_DISAGREEMENTS = {}


@dataclasses.dataclass(frozen=True)
class Documented:
    """A disagreement whose cause is established (see DOCUMENTED_DIFFERENCES)."""

    operators: tuple
    condition: str  # when it applies, in words (the docs table)
    reason: str
    spec: str  # where the normops specification fixes normops's side
    applies: Callable  # (failed Result, context) -> evidence text, or None


def _control_passes(result, ctx, replace):
    """The same case with the triggering values of its first input replaced
    agrees with ONNX Runtime: the disagreement is caused by them alone."""
    case = result.case
    again = run_case(dataclasses.replace(case, inputs=[replace(case.inputs[0]), *case.inputs[1:]]),
                     ctx["modes"], classify=False)
    if again.status != PASS:
        return None
    return "control: the same case with those values replaced agrees"


def _nonfinite_rule(predicate, replace=None, message="NaN/inf"):
    def applies(result, ctx):
        if not (_nonfinite_input(result) and message in result.message and predicate(result)):
            return None
        return _control_passes(result, ctx, replace or _without_nonfinite)

    return applies


def _only_numeric_failures(result):
    return all(": scaled error " in line or line.startswith("scaled error from")
               for line in result.message.splitlines())


def _ort_inaccurate(result, ctx):
    oracle = ctx.get("oracle")
    if oracle is None or not _only_numeric_failures(result):
        return None
    confirmed, normops_within, ort_beyond = oracle
    return "" if confirmed and normops_within and ort_beyond else None


def _stash_type_double(result, ctx):
    """float64 with stash_type=1: ORT agrees once its stash type is double."""
    case = result.case
    if case.dtype != "float64" or not _only_numeric_failures(result) or not _has_stash_type(case):
        return None
    if int(case.attributes.get("stash_type", 1)) != 1:
        return None
    try:
        ort64 = run_ort(_stash_double(case), len(ctx["want"]))
    except Exception:  # noqa: BLE001 - no evidence then
        return None
    errs = []
    for got in ctx["gots"].values():
        for k, w in enumerate(ort64):
            ok, err, _ = compare_outputs(got[k], w)
            if not ok or err > FLOAT64_AGREEMENT:
                return None
            errs.append(err)
    return (f"ONNX Runtime with stash_type=11 (double) agrees with normops to {max(errs):.2g}")


def _prod_order(result, ctx):
    """Huge and tiny factors: the same case without them agrees, and normops
    equals the executable specification (the sequential product) bit for
    bit; the evidence names the exact product's class where the sides differ."""
    import normops.reference

    case = result.case
    if "NaN/inf" not in result.message or not _overflow_and_underflow(case.inputs[0]):
        return None
    if _control_passes(result, ctx, lambda x: _without_extremes(x, 1)) is None:
        return None
    spec = normops.reference.run(case.op_type, case.inputs, case.attributes, opset=case.opset)[0]
    for got in ctx["gots"].values():
        if got[0].tobytes() != spec.tobytes():
            return None
    exact = _exact_product_class(case)
    a = spec.astype(np.float64)
    b = ctx["want"][0].astype(np.float64)
    differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
    kinds = {float(v) for v in exact[differ]} if exact is not None else set()
    described = ", ".join(sorted("NaN" if np.isnan(v) else ("finite" if abs(v) == 1 else repr(v))
                                 for v in kinds)) or "unknown"
    return ("normops equals the executable spec (sequential product) bit for bit; the same case "
            f"without the huge and tiny factors agrees. Exact product where they differ: {described} "
            f"(normops {'matches' if _same_class(a[differ], exact[differ]).all() else 'does not match'}, "
            f"ORT {'matches' if _same_class(b[differ], exact[differ]).all() else 'does not match'})")


def _same_class(v, exact):
    """Element-wise: v is NaN, the same infinity, or zero exactly where exact is."""
    return np.where(np.isnan(exact), np.isnan(v),
                    np.where(np.isinf(exact), v == exact,
                             np.where(exact == 0, v == 0, np.isfinite(v) & (v != 0))))


def _reduced_axes(case):
    """The axes argument of a Reduce* case as numpy takes it (None: all, (): none)."""
    x = case.inputs[0]
    if len(case.inputs) > 1 and case.inputs[1] is not None:
        axes = [int(a) for a in case.inputs[1]]
    else:
        axes = case.attributes.get("axes")
    if not axes:
        return () if case.attributes.get("noop_with_empty_axes", 0) else None
    return tuple(sorted({a % x.ndim for a in axes}))


def _exact_product_class(case):
    """Per output: +-inf where the exact product overflows the type, +-0 where
    it underflows, NaN for inf * 0 or NaN, 1.0 (sign kept) where it is finite."""
    x = case.inputs[0]
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        return None
    info = _finfo(x.dtype)
    a = x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log2(np.abs(a))  # exact enough: the sum decides the exponent only
        axes = _reduced_axes(case)
        keep = bool(case.attributes.get("keepdims", 1))
        total = logs if axes == () else np.sum(logs, axis=axes, keepdims=keep)
        sign = np.sign(a) if axes == () else np.prod(np.where(np.signbit(a), -1.0, 1.0), axis=axes, keepdims=keep)
    total = np.asarray(total, np.float64)
    sign = np.asarray(sign, np.float64)
    out = np.where(total >= info.maxexp, np.inf,
                   np.where(total < info.minexp - info.nmant - 1, 0.0, 1.0)) * sign
    return np.where(np.isnan(total), np.nan, out)


def _failed_outputs(result):
    """Indices of the outputs whose comparison failed (from the message)."""
    return {int(m.group(1)) for m in re.finditer(r": output (\d+) \(", result.message)}


def _scaled_error(a, ref):
    """max|a - ref| / max(1, max|ref|) over the elements where both are finite."""
    a, ref = np.asarray(a, np.float64), np.asarray(ref, np.float64)
    both = np.isfinite(a) & np.isfinite(ref)
    if not both.any():
        return 0.0
    return float(np.abs(a - ref)[both].max() / max(1.0, float(np.abs(ref[both]).max())))


def _compute_type(dtype_name):
    """The type normops (decisions.md §4) and ONNX Runtime compute in."""
    return np.float64 if dtype_name == "float64" else np.float32


def _channel_affine(case, ct):
    """For InstanceNormalization and BatchNormalization: x, the statistics and
    the per-channel scale and B in type ``ct``, broadcast against x, and
    epsilon. Statistics are two-pass (population variance): per (sample,
    channel) for InstanceNormalization, per channel over the batch for
    BatchNormalization in training mode, the given inputs otherwise."""
    x = case.inputs[0].astype(ct)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    scale, bias = (case.inputs[k].astype(ct).reshape(shape) for k in (1, 2))
    eps = ct(np.float32(case.attributes.get("epsilon", 1e-5)))
    if case.op_type == "InstanceNormalization":
        axes = tuple(range(2, x.ndim))
    elif n_outputs_of(case, 5) > 1:  # training: the batch statistics
        axes = (0, *range(2, x.ndim))
    else:
        return x, case.inputs[3].astype(ct).reshape(shape), case.inputs[4].astype(ct).reshape(shape), scale, bias, eps
    with np.errstate(all="ignore"):
        mean = x.mean(axis=axes, keepdims=True, dtype=ct)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True, dtype=ct)
    return x, mean, var, scale, bias, eps


def _fused_affine(result, ctx):
    """InstanceNormalization / BatchNormalization Y where ONNX Runtime's
    fused form x * c + (B - mean * c), c = scale / sqrt(var + epsilon),
    cancels: normops is within the bound of the spec's formula in float64,
    ONNX Runtime is not, and a NumPy model of the fused form in ORT's
    compute type reproduces ORT's Y within the bound."""
    case = result.case
    if not _only_numeric_failures(result) or _failed_outputs(result) != {0}:
        return None
    want = ctx["want"][0]
    bound = bound_for(want.dtype)
    ct = _compute_type(case.dtype)
    with np.errstate(all="ignore"):
        x, mean, var, scale, bias, eps = _channel_affine(case, np.float64)
        spec = ((x - mean) / np.sqrt(var + eps)) * scale + bias  # the spec's order, in float64
        fx, fmean, fvar, fscale, fbias, feps = _channel_affine(case, ct)
        c = (ct(1) / np.sqrt(fvar + feps)) * fscale
        shift = fbias - fmean * c
        fused = (fx * c + shift).astype(want.dtype)
        # the fused form's rounding floor: half an ulp of each of its two large terms
        floor = np.finfo(ct).eps / 2 * (np.abs(fx * c) + np.abs(fmean * c))
    normops_err = max(_scaled_error(got[0], spec) for got in ctx["gots"].values())
    ort_err, model_err = _scaled_error(want, spec), _scaled_error(want, fused)
    if not (normops_err <= bound < ort_err and model_err <= bound):
        return None
    w, s = want.astype(np.float64), np.broadcast_to(spec, want.shape)
    finite = np.isfinite(w) & np.isfinite(s)
    scale_ref = max(1.0, float(np.abs(s[finite]).max()))
    beyond = finite & (np.abs(w - s) > bound * scale_ref)
    cancel = float(np.broadcast_to(floor, want.shape)[beyond].min()) / scale_ref
    if cancel < bound / 8:  # the fused form's own rounding must account for the gap
        return None
    return (f"spec formula in float64: normops {normops_err:.3g}, ORT {ort_err:.3g}; "
            f"the fused form in {np.dtype(ct).name} reproduces ORT to {model_err:.3g}; "
            f"its rounding floor where ORT is beyond the bound: at least {cancel:.3g} (scaled)")


def _rows_last(a, axes):
    """``a`` as (groups, n): the kept axes first, the reduced ones last."""
    kept = [k for k in range(a.ndim) if k not in axes]
    moved = np.transpose(a, kept + sorted(axes))
    return moved.reshape(int(np.prod(moved.shape[:len(kept)], dtype=np.int64)), -1)


def _mvn_exact(row):
    """(x - mean) / std of one group with 50 significant digits (mpmath)."""
    import mpmath

    with mpmath.workdps(50):
        xs = [mpmath.mpf(float(v)) for v in row]
        mean = mpmath.fsum(xs) / len(xs)
        std = mpmath.sqrt(mpmath.fsum((v - mean) ** 2 for v in xs) / len(xs))
        return np.array([float((v - mean) / std) for v in xs])


def _mvn_ill_conditioned(result, ctx):
    """MeanVarianceNormalization on groups whose spread is tiny against their
    magnitude: where normops and ORT disagree, both are within the float32
    forward-error allowance of the exact result and u * kappa >= bound / 8;
    normops is at least as close to the exact result as ORT."""
    case = result.case
    if case.dtype == "float64" or not _only_numeric_failures(result) or _failed_outputs(result) != {0}:
        return None
    x = case.inputs[0]
    axes = sorted({int(a) % x.ndim for a in case.attributes.get("axes", (0, 2, 3))})
    x2 = _rows_last(x.astype(np.float64), axes)
    n = x2.shape[1]
    want = ctx["want"][0]
    w = _rows_last(want.astype(np.float64), axes)
    with np.errstate(all="ignore"):
        mean = x2.mean(axis=1, keepdims=True)
        std = np.sqrt(((x2 - mean) ** 2).mean(axis=1, keepdims=True))
        exact = (x2 - mean) / std
        kappa = np.broadcast_to(np.abs(x2).max(axis=1, keepdims=True) / std, x2.shape)
    u = 2.0**-24
    # forward error of a float32 two-pass evaluation, relative to the spread:
    # the sum (at most n/16 + 4 roundings deep), the mean, x - mean, the
    # variance and the division; plus the rounding to the output type
    allowance = (n / 16 + 5) * u * (kappa + 1) + _finfo(want.dtype).eps / 2 * np.abs(exact)
    bound = bound_for(want.dtype)
    finite = np.isfinite(exact) & np.isfinite(w)
    if not finite.any():
        return None
    scale_ref = max(1.0, float(np.abs(w[finite]).max()))
    errs, ill, worst = [], [], None
    for got in ctx["gots"].values():
        a = _rows_last(got[0].astype(np.float64), axes)
        beyond = finite & np.isfinite(a) & (np.abs(a - w) > bound * scale_ref)
        if not beyond.any():
            continue
        if ((np.abs(a - exact) > allowance) | (np.abs(w - exact) > allowance))[beyond].any():
            return None
        if (u * kappa[beyond]).min() < bound / 8:
            return None
        # float64 is exact enough for the exact result (1000 times below the bound)
        if float(((n + 5) * 2.0**-53 * (kappa[beyond] + 1)).max()) > bound / 1000:
            return None
        errs.append(_scaled_error(a, exact))
        ill.append(float(kappa[beyond].min()))
        gap = np.where(beyond, np.abs(a - w), -1.0)
        worst = int(np.unravel_index(int(np.argmax(gap)), gap.shape)[0])
    ort_err = _scaled_error(w, exact)
    if not errs or max(errs) > ort_err:
        return None
    # the float64 value checked against 50 digits on the worst group
    check = float(np.abs(_mvn_exact(x2[worst]) - exact[worst]).max())
    if not check <= bound / 1000:
        return None
    return (f"exact result (float64, two-pass; mpmath on the worst group agrees to {check:.2g}): "
            f"normops {max(errs):.3g}, ORT {ort_err:.3g}; where they disagree, kappa = max|x| / std "
            f"of the group is at least {min(ill):.3g} (u * kappa = {u * min(ill):.2g}) and both sides "
            "are within the float32 forward-error allowance")


_FLOAT32_ROUNDING = ("the input is widened to float32, the float32 algorithm runs, and the result "
                     "is rounded once (decisions.md §4)")

#: Disagreements with an established cause. Cases in them count as
#: documented, not failed; each rule also checks its evidence on the case
#: (a control run without the triggering values, the exact product, ORT at
#: double precision, the float64 oracle, a model of ORT's fused form, or the
#: exact result with the measured conditioning).
DOCUMENTED_DIFFERENCES = {
    "Hardmax on a row with NaN": Documented(
        ("Hardmax",), "a row holding NaN",
        "normops gives a row holding NaN all zeros; ONNX Runtime puts the 1 on a maximum "
        "that skips NaN ([1, NaN, 2] gives [0, 0, 0] and [0, 0, 1]), depending on its code "
        "path (a row starting with NaN is all zeros there too).",
        "seed spec, Hardmax: 'a row containing NaN is all zeros'",
        _nonfinite_rule(lambda r: r.case.has_nan, message="")),
    "LogSoftmax float64 on a row with NaN or +inf": Documented(
        ("LogSoftmax",), "float64, a row holding NaN or +inf",
        "normops makes the whole row NaN, as for float32 and Softmax; ONNX Runtime's float64 "
        "kernel gives the other elements -inf or finite (even positive) values: [1, inf, 2] "
        "gives [-inf, NaN, -inf].",
        "seed spec, LogSoftmax: 'the same NaN rows as Softmax'; decisions.md §3 rule 1",
        _nonfinite_rule(lambda r: r.case.dtype == "float64")),
    "LayerNormalization Mean of a row with ±inf": Documented(
        ("LayerNormalization",), "output Mean, a row holding ±inf of one sign (no NaN)",
        "normops's Mean is Sum16(x) / n, which is that infinity; ONNX Runtime's is NaN "
        "([1, inf, 2]: inf and NaN). Y and InvStdDev are NaN on both sides.",
        "seed spec, LayerNormalization step 1: mean = Sum16(x) / n",
        _nonfinite_rule(lambda r: all("output 1 (Mean)" in line for line in r.message.splitlines()))),
    "ReduceLogSumExp with NaN and an infinite maximum": Documented(
        ("ReduceLogSumExp",), "NaN among the elements and ±inf as the largest of the others",
        "normops returns NaN; ONNX Runtime returns the infinity ([1, NaN, inf] gives NaN and "
        "inf). With a finite maximum both give NaN.",
        "seed spec, Reductions: 'm = the maximum (NaN if any element is NaN)'",
        _nonfinite_rule(lambda r: r.case.has_nan)),
    "ReduceLogSumExp in float16/bfloat16 on values near the type's range": Documented(
        ("ReduceLogSumExp",), "float16/bfloat16, elements of magnitude 1e4 and more",
        "ONNX Runtime evaluates in the narrow type, where the exponentials or their sum leave "
        "its range, and returns ±inf; normops returns the finite result: " + _FLOAT32_ROUNDING
        + ". noop_with_empty_axes on [-30000] (float16): normops -30000, ORT -inf.",
        "decisions.md §4 (float16, bfloat16)",
        lambda r, ctx: (_control_passes(r, ctx, lambda x: _without_extremes(x, 0))
                        if r.case.dtype in ("float16", "bfloat16") and "NaN/inf" in r.message
                        and _largest_finite(r.case.inputs[0]) >= 1e4 else None)),
    "ReduceProd where overflow meets underflow": Documented(
        ("ReduceProd",), "huge (or infinite) and tiny factors in one product",
        "the product overflows in one order and underflows in another. normops multiplies in "
        "sequence order; ONNX Runtime in another order, so one side meets inf * 0 = NaN where "
        "the other does not. Neither order gives the true product in general; each case "
        "states the exact product's class (from the sum of log2|x|) and which side has it.",
        "seed spec, Reductions: 'Products multiply sequentially from 1' (row layout; column "
        "layout: sequential in row-major order)",
        _prod_order),
    "GroupNormalization float64: stash_type ignored": Documented(
        ("GroupNormalization",), "float64 input, stash_type=1 (the default)",
        "ONNX Runtime has no GroupNormalization kernel and runs the ONNX function body, "
        "which casts X to the stash type (float32) for the statistics, as the ONNX text "
        "says; normops computes float64 inputs in float64. Checked on each case: ORT with "
        "stash_type=11 (double) agrees with normops.",
        "decisions.md §4: stash_type is read, validated and ignored; float64 inputs "
        "accumulate in float64",
        _stash_type_double),
    "InstanceNormalization/BatchNormalization: ORT's fused affine form cancels": Documented(
        ("InstanceNormalization", "BatchNormalization"),
        "output Y, channels whose |mean| * scale / sqrt(var + epsilon) is large against Y "
        "(constant or one-element planes, huge values)",
        "ONNX Runtime folds the normalisation into y = x * c + (B - mean * c) with "
        "c = scale / sqrt(var + epsilon); when x * c and mean * c are large, the rounding of "
        "the two terms swallows B and the difference x - mean (a constant -30000 plane "
        "gives 0 instead of B). Checked on each case: normops is within the bound of the "
        "spec's formula evaluated in float64, ORT is not, a NumPy model of the fused form in "
        "ORT's compute type (float32; float16 widened to it) reproduces ORT's Y, and the "
        "fused form's rounding floor there is measured.",
        "seed spec, LayerNormalization step 4 (y = (((x - mean) * inv) * scale) + B), used by "
        "InstanceNormalization; decisions.md §5, BatchNormalization",
        _fused_affine),
    "MeanVarianceNormalization on ill-conditioned groups": Documented(
        ("MeanVarianceNormalization",),
        "float32/float16 groups whose standard deviation is tiny against their magnitude "
        "(kappa = max|x| / std with u * kappa >= bound / 8, u = 2^-24)",
        "the operator has no epsilon, so y = (x - mean) / std multiplies the float32 rounding "
        "of the mean by kappa: two correct float32 evaluations can differ by more than the "
        "bound (seed 1: groups of three values -5 +- 0.001, kappa ~ 800 to 4500; normops and "
        "ORT are both 4.9e-4 from the exact result). Checked on each case against the exact "
        "result (float64 two-pass, reliable while (n + 5) * 2^-53 * kappa <= bound / 1000, and "
        "rechecked with mpmath at 50 digits on the worst group): where the sides disagree, "
        "both are within the forward-error allowance (n/16 + 5) * u * (kappa + 1) of a float32 "
        "two-pass evaluation, and normops is at least as close to the exact result as ORT.",
        "docs/exactness.md, MeanVarianceNormalization (the seed spec's LayerNormalization "
        "steps 1-2, then y = d / s with no epsilon, as ONNX Runtime's CPU kernel)",
        _mvn_ill_conditioned),
    "ORT inaccurate (float64 oracle)": Documented(
        ("*",), "a numeric disagreement on finite inputs",
        "normops is within the bound of the float64 result and ONNX Runtime is not (both "
        "errors are given). The float64 result is normops exact on the inputs widened to "
        "float64, confirmed by ONNX Runtime on the same float64 inputs (stash_type=11 where "
        "the operator has one) to 1e-9, or, for float16/bfloat16 where ORT has no float64 "
        "kernel, by ORT in float32 to 1e-5. Seen in GroupNormalization, whose ONNX function "
        "body (what ORT runs) takes the variance as mean(x^2) - mean(x)^2 in float32: "
        "groups with |mean| much larger than their standard deviation lose most digits.",
        "seed spec, LayerNormalization steps 1-2 (two-pass variance), used by "
        "GroupNormalization",
        _ort_inaccurate),
}


def _without_nonfinite(x):
    return np.where(np.isfinite(x.astype(np.float64)), x, np.zeros((), x.dtype)).astype(x.dtype)


def _without_extremes(x, value):
    a = np.abs(x.astype(np.float64))
    bad = ~np.isfinite(a) | (a >= 1e4) | ((a < 1e-30) & (a > 0))
    return np.where(bad, np.asarray(value, x.dtype), x).astype(x.dtype)


_STASH_DOUBLE = 11


def _has_stash_type(case):
    if case.domain not in ("", "ai.onnx"):
        return False
    onnx, _ = _onnx()
    try:
        return "stash_type" in onnx.defs.get_schema(case.op_type, case.version, "").attributes
    except onnx.defs.SchemaError:
        return False


def _stash_double(case):
    return dataclasses.replace(case, attributes={**case.attributes, "stash_type": _STASH_DOUBLE})


def documented_difference(result, ctx):
    """``(name, evidence)`` of the documented difference a failed ``result``
    falls in, or None."""
    for name, doc in DOCUMENTED_DIFFERENCES.items():
        if "*" in doc.operators or result.case.op_type in doc.operators:
            evidence = doc.applies(result, ctx)
            if evidence is not None:
                return name, evidence
    return None


def _largest_finite(x) -> float:
    a = np.abs(x.astype(np.float64))
    a = a[np.isfinite(a)]
    return float(a.max()) if a.size else 0.0


def _overflow_and_underflow(x) -> bool:
    """The big factors alone overflow the type (or are infinite) and the small
    ones alone underflow it."""
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        return False
    info = _finfo(x.dtype)
    a = np.abs(x.astype(np.float64))
    logs = np.log2(a[np.isfinite(a) & (a > 0)])
    overflow = np.isinf(a).any() or logs[logs > 0].sum() >= info.maxexp
    return bool(overflow and logs[logs < 0].sum() < info.minexp - info.nmant)


def _finfo(dtype):
    if dtype.name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


def open_disagreement(result) -> str | None:
    """The name of the open disagreement a failed ``result`` belongs to, or None."""
    for name, (op_type, rule, _) in OPEN_DISAGREEMENTS.items():
        if result.case.op_type == op_type and rule(result):
            return name
    return None

FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int32", "int64")


def _onnx():
    try:
        import onnx
        import onnx.defs
        import onnx.helper
        import onnx.shape_inference
        import onnxruntime
    except ImportError as exc:
        raise ImportError(
            "compare-ort needs the optional 'onnx' (1.22.0) and 'onnxruntime' (1.31.1) "
            "packages: pip install 'normops[test]'"
        ) from exc
    return onnx, onnxruntime


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def bound_for(dtype: np.dtype) -> float:
    """The largest scaled error accepted for an output of ``dtype``."""
    if dtype.name == "float16":
        return 4 * 2.0**-10
    if dtype.name == "bfloat16":
        return 4 * 2.0**-7
    return BOUND


# --------------------------------------------------------------------------
# Generators


@dataclasses.dataclass(frozen=True)
class Generator:
    """How to make random cases of one operator.

    ``make(g, version, dtype)`` returns ``(inputs, attributes)``: inputs in
    ONNX order (None for an absent optional input), attributes valid at
    ``version``. ``dtypes(version)`` lists the candidate dtypes (each is
    tried; what ORT or normops does not take is recorded, not failed).
    ``versions`` are the ONNX since_versions, used only while the operator
    is not served (then the registry's versions are used).
    """

    op_type: str
    make: Callable
    dtypes: Callable[[int], tuple]
    versions: tuple
    domain: str = ""
    model_opset: Callable[[int], int] = staticmethod(lambda v: v)


GENERATORS: dict[tuple[str, str], Generator] = {}


def generator(op_type, *, versions, dtypes=FLOATS, domain="", model_opset=None):
    """Decorator registering ``make(g, version, dtype)`` for ``op_type``.

    ``dtypes`` is a tuple of names or a function of the version.
    """

    def register(make):
        key = (domain, op_type)
        if key in GENERATORS:
            raise RuntimeError(f"compare-ort generator for {op_type} registered twice")
        dt = dtypes if callable(dtypes) else (lambda v, _d=tuple(dtypes): _d)
        GENERATORS[key] = Generator(op_type, make, dt, tuple(versions), domain,
                                    model_opset or (lambda v: v))
        return make

    return register


class Gen:
    """A seeded random source with the shapes and values the generators share."""

    WIDTHS = (1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 63)

    def __init__(self, rng: np.random.Generator, specials: bool):
        self.rng = rng
        self.specials = specials  # this case injects special values

    def coin(self, p=0.5) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def shape(self, rank=None, min_rank=1, max_rank=5, max_size=6000):
        if rank is None:
            rank = int(self.rng.integers(min_rank, max_rank + 1))
        dims = [self.choice(self.WIDTHS) for _ in range(rank)]
        if self.coin(0.15) and rank:
            dims[int(self.rng.integers(rank))] = self.choice((129, 257, 1031))
        while int(np.prod(dims)) > max_size:
            i = int(np.argmax(dims))
            dims[i] = max(1, dims[i] // 2 | 1)
        return tuple(dims)

    def axis(self, rank, negative=True):
        return int(self.rng.integers(-rank if negative else 0, rank))

    def axes(self, rank, negative=True):
        """A random non-empty subset of the axes, in random order and sign."""
        k = int(self.rng.integers(1, rank + 1))
        axes = [int(a) for a in self.rng.permutation(rank)[:k]]
        if negative:
            axes = [a - rank if self.coin() else a for a in axes]
        return axes

    def values(self, shape, dtype, *, low=None, high=None, positive=False, specials=True):
        """Random values of ``dtype``; special values when the case asks for them."""
        dtype = np.dtype(dtype)
        rng = self.rng
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            lo = max(info.min, -40 if low is None else low)
            hi = min(info.max, 40 if high is None else high)
            if positive:
                lo = max(lo, 1)
            return rng.integers(lo, hi + 1, size=shape).astype(dtype)
        scale = self.choice((1.0, 1.0, 3.0, 0.01, 100.0))
        if low is not None:
            x = rng.uniform(low, high, size=shape)
        else:
            x = rng.standard_normal(shape) * scale + self.choice((0.0, 0.0, 1.0, -5.0))
        if positive:
            x = np.abs(x) + 1e-3
        x = x.astype(np.float32 if dtype.itemsize < 4 else dtype)
        if specials and self.specials and x.size:
            x = self._inject(x, dtype, positive)
        return x.astype(dtype)

    def _inject(self, x, dtype, positive):
        narrow = dtype.name == "float16"
        kinds = ["nan", "inf", "-inf", "-0", "subnormal", "large"]
        if positive:
            kinds = ["nan", "inf", "subnormal", "large", "-0"]
        chosen = [k for k in kinds if self.coin(0.35)] or [self.choice(kinds)]
        flat = x.reshape(-1).copy()
        finfo = np.finfo(np.float16 if narrow else (np.float64 if dtype == np.float64 else np.float32))
        for kind in chosen:
            n = max(1, int(flat.size * self.choice((0.01, 0.05, 0.2))))
            where = self.rng.integers(flat.size, size=n)
            value = {
                "nan": np.nan, "inf": np.inf, "-inf": -np.inf, "-0": -0.0,
                "subnormal": float(finfo.smallest_subnormal) * 3,
                "large": 3e4 if narrow else 1e15,
            }[kind]
            if kind == "large" and not positive and self.coin():
                value = -value
            flat[where] = value
        return flat.reshape(x.shape)


def _parameter(g, shape, dtype, *, around=1.0):
    """Scale/bias parameters: finite, no special values."""
    return g.values(shape, dtype, low=around - 1.5, high=around + 1.5, specials=False)


def _epsilon(g, attrs):
    if g.coin(0.6):
        attrs["epsilon"] = g.choice((1e-5, 1e-3, 0.1, 1e-6))


# Normalisations ------------------------------------------------------------


@generator("LayerNormalization", versions=(17,))
def _layer_normalization(g, version, dtype):
    shape = g.shape()
    axis = g.axis(len(shape))
    attrs = {} if g.coin(0.2) and axis == -1 else {"axis": axis}
    _epsilon(g, attrs)
    suffix = shape[axis:]
    x = g.values(shape, dtype)
    inputs = [x, _parameter(g, suffix, dtype)]
    if g.coin():
        inputs.append(_parameter(g, suffix, dtype, around=0.0))
    return inputs, attrs


@generator("RMSNormalization", versions=(23,))
def _rms_normalization(g, version, dtype):
    shape = g.shape()
    axis = g.axis(len(shape))
    attrs = {"axis": axis}
    _epsilon(g, attrs)
    return [g.values(shape, dtype), _parameter(g, shape[axis:], dtype)], attrs


# ONNX Runtime registers it in the default domain since 1; a model stamped
# below opset 7 only runs through ORT's legacy support, so the model is 17.
@generator("SimplifiedLayerNormalization", versions=(1,), model_opset=lambda v: max(v, 17))
def _simplified_layer_normalization(g, version, dtype):
    shape = g.shape()
    axis = g.axis(len(shape))
    attrs = {"axis": axis}
    _epsilon(g, attrs)
    # Y has the scale's dtype (type V): a float32 scale with a narrow X too.
    scale_dtype = np.float32 if dtype.itemsize == 2 and g.coin(0.3) else dtype
    return [g.values(shape, dtype), _parameter(g, shape[axis:], scale_dtype)], attrs


def _instance_like(g, dtype, min_rank=3):
    shape = g.shape(min_rank=min_rank, max_rank=5)
    return shape, g.values(shape, dtype)


@generator("InstanceNormalization", versions=(1, 6, 22))
def _instance_normalization(g, version, dtype):
    shape, x = _instance_like(g, dtype)
    c = shape[1]
    attrs = {}
    _epsilon(g, attrs)
    return [x, _parameter(g, (c,), dtype), _parameter(g, (c,), dtype, around=0.0)], attrs


@generator("GroupNormalization", versions=(18, 21))
def _group_normalization(g, version, dtype):
    groups = g.choice((1, 2, 3, 4))
    shape = list(g.shape(min_rank=3, max_rank=5, max_size=3000))
    shape[1] = groups * g.choice((1, 2, 3, 5))
    x = g.values(tuple(shape), dtype)
    n = groups if version < 21 else shape[1]
    attrs = {"num_groups": groups}
    _epsilon(g, attrs)
    return [x, _parameter(g, (n,), dtype), _parameter(g, (n,), dtype, around=0.0)], attrs


@generator("BatchNormalization", versions=(1, 6, 7, 9, 14, 15))
def _batch_normalization(g, version, dtype):
    shape = g.shape(min_rank=2 if version >= 9 else 3, max_rank=5)
    c = shape[1]
    attrs = {}
    _epsilon(g, attrs)
    if version < 7:
        attrs["is_test"] = 1
    if version == 1:
        attrs["consumed_inputs"] = [0, 0, 0, 1, 1]  # required at 1: mean and var updated in place
    params = [_parameter(g, (c,), dtype), _parameter(g, (c,), dtype, around=0.0),
              _parameter(g, (c,), dtype, around=0.0),
              g.values((c,), dtype, low=0.1, high=3.0, specials=False)]
    if g.coin(0.3):
        # training: training_mode=1 from 14; before, the legacy form (is_test=0
        # at 1 and 6; at 7 and 9 the node declares all five outputs, which
        # normops.run spells training_mode=1)
        if version < 7:
            attrs["is_test"] = 0
        else:
            attrs["training_mode"] = 1
        attrs["momentum"] = g.choice((0.9, 0.5))
    return [g.values(shape, dtype), *params], attrs


@generator("MeanVarianceNormalization", versions=(9, 13))
def _mean_variance_normalization(g, version, dtype):
    # axes within the rank (normops refuses out-of-range axes, ORT drops
    # them), default (0, 2, 3) only at rank 4 and above
    shape = g.shape(min_rank=1, max_rank=5)
    attrs = {}
    if len(shape) < 4 or g.coin(0.6):
        attrs["axes"] = sorted(set(g.axes(len(shape), negative=False))) or [0]
    return [g.values(shape, dtype)], attrs


@generator("LpNormalization", versions=(1, 22))
def _lp_normalization(g, version, dtype):
    shape = g.shape()
    attrs = {"axis": g.axis(len(shape)), "p": g.choice((1, 2))}
    return [g.values(shape, dtype)], attrs


# Softmax family and activations ---------------------------------------------


def _softmax_like(g, version, dtype):
    shape = g.shape()
    rank = len(shape)
    attrs = {}
    # Before 13 the default axis is 1, out of range for a rank-1 input.
    if g.coin(0.8) or (version < 13 and rank == 1):
        attrs["axis"] = g.axis(rank, negative=version >= 11)
    return [g.values(shape, dtype)], attrs


for _op in ("Softmax", "LogSoftmax", "Hardmax"):
    generator(_op, versions=(1, 11, 13))(_softmax_like)


@generator("Sigmoid", versions=(1, 6, 13))
def _sigmoid(g, version, dtype):
    return [g.values(g.shape(), dtype)], {}


@generator("Gelu", versions=(20,))
def _gelu(g, version, dtype):
    attrs = {"approximate": g.choice(("none", "tanh"))} if g.coin(0.7) else {}
    return [g.values(g.shape(), dtype)], attrs


@generator("BiasGelu", versions=(1,), domain="com.microsoft")
def _bias_gelu(g, version, dtype):
    shape = g.shape(min_rank=1)
    return [g.values(shape, dtype), _parameter(g, shape[-1:], dtype, around=0.0)], {}


# Reductions -------------------------------------------------------------------

_REDUCE_VERSIONS = {
    "ReduceSum": (1, 11, 13),
    "ReduceMax": (1, 11, 12, 13, 18, 20),
    "ReduceMin": (1, 11, 12, 13, 18, 20),
}
_REDUCE_OPS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
               "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")


def _axes_are_input(op_type, version):
    return version >= (13 if op_type == "ReduceSum" else 18)


def _reduce_dtypes(op_type):
    def dtypes(version):
        if op_type in ("ReduceLogSum", "ReduceLogSumExp", "ReduceL2"):
            return FLOATS + INTS if op_type == "ReduceL2" else FLOATS
        extra = ("int8", "uint8") if op_type in ("ReduceMax", "ReduceMin") and version >= 12 else ()
        return FLOATS + INTS + extra

    return dtypes


def _make_reduce(op_type):
    def make(g, version, dtype):
        shape = g.shape(max_size=4000)
        rank = len(shape)
        kw = {}
        if op_type == "ReduceProd":
            kw = {"low": -2, "high": 2} if dtype.kind in "iu" else {"low": 0.6, "high": 1.4}
        elif op_type == "ReduceLogSum":
            kw = {"positive": True}
        elif op_type in ("ReduceSumSquare", "ReduceL2") and dtype.kind in "iu":
            kw = {"low": -10, "high": 10}
        x = g.values(shape, dtype, **kw)
        attrs = {}
        if g.coin(0.6):
            attrs["keepdims"] = int(g.coin())
        axes = None if g.coin(0.2) else g.axes(rank, negative=version >= 11)
        inputs = [x]
        if _axes_are_input(op_type, version):
            if axes is not None:
                inputs.append(np.array(axes, dtype=np.int64))
            elif g.coin():
                inputs.append(np.zeros(0, dtype=np.int64))
            if g.coin(0.3):
                attrs["noop_with_empty_axes"] = int(g.coin())
        elif axes is not None:
            attrs["axes"] = axes
        return inputs, attrs

    return make


for _op in _REDUCE_OPS:
    generator(_op, versions=_REDUCE_VERSIONS.get(_op, (1, 11, 13, 18)),
              dtypes=_reduce_dtypes(_op))(_make_reduce(_op))


def _make_arg(g, version, dtype):
    shape = g.shape(max_size=4000)
    rank = len(shape)
    # A narrow value range makes ties, which select_last_index decides.
    x = g.values(shape, dtype, low=-4, high=4) if dtype.kind in "iu" or g.coin() else g.values(shape, dtype)
    if dtype.kind == "f" and not g.specials and g.coin():
        x = np.round(x).astype(dtype)  # ties in floats too
    attrs = {}
    if g.coin(0.8):
        attrs["axis"] = g.axis(rank, negative=version >= 11)
    if g.coin(0.6):
        attrs["keepdims"] = int(g.coin())
    if version >= 12 and g.coin(0.5):
        attrs["select_last_index"] = int(g.coin())
    return [x], attrs


for _op in ("ArgMax", "ArgMin"):
    generator(_op, versions=(1, 11, 12, 13), dtypes=FLOATS + INTS + ("int8", "uint8"))(_make_arg)


def _cumulative(g, make_values):
    """Shape, attributes and axis input of a CumSum / CumProd case; the
    values come last (the random stream of CumSum's cases stays as it was)."""
    shape = g.shape(max_size=4000)
    attrs = {}
    if g.coin(0.4):
        attrs["exclusive"] = int(g.coin())
    if g.coin(0.4):
        attrs["reverse"] = int(g.coin())
    axis = np.array(g.axis(len(shape)), dtype=g.choice((np.int32, np.int64)))
    return [make_values(shape), axis], attrs


@generator("CumSum", versions=(11, 14),
           dtypes=lambda v: ("float32", "float64") + INTS + (("float16", "bfloat16") if v >= 14 else ()))
def _cumsum(g, version, dtype):
    return _cumulative(g, lambda shape: g.values(shape, dtype))


@generator("CumProd", versions=(26,), dtypes=("float32", "float64") + INTS + ("float16", "bfloat16"))
def _cumprod(g, version, dtype):
    # factors near 1 keep long products finite for a while; integers small
    # enough to wrap only in the longer lines
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return _cumulative(g, lambda shape: g.values(shape, dtype, low=-1.6, high=1.6))
    return _cumulative(g, lambda shape: g.values(shape, dtype, low=-3, high=3))


# --------------------------------------------------------------------------
# Cases


@dataclasses.dataclass
class Case:
    """One randomized one-node case."""

    op_type: str
    domain: str
    version: int  # the operator's since_version
    opset: int  # the model's opset for the domain
    dtype: str
    index: int
    inputs: list
    attributes: dict

    @property
    def label(self) -> str:
        shapes = ", ".join("-" if a is None else ("x".join(map(str, a.shape)) or "scalar")
                           + ("" if a.dtype.name == self.dtype else f":{a.dtype.name}")
                           + (f"={a.tolist()}" if a.dtype.kind == "i" and a.size <= 5 and a.ndim <= 1
                              and self.op_type.startswith(("Reduce", "CumSum", "CumProd")) and a is not self.inputs[0]
                              else "")
                           for a in self.inputs)
        attrs = ", ".join(f"{k}={v}" for k, v in sorted(self.attributes.items()))
        return f"{self.op_type}-{self.version} {self.dtype} #{self.index} [{shapes}] {{{attrs}}}"

    @property
    def types(self) -> str:
        """The dtype, with the other floating input dtypes when they differ."""
        others = sorted({a.dtype.name for a in self.inputs[1:] if a is not None
                         and (a.dtype.kind == "f" or a.dtype.name == "bfloat16")} - {self.dtype})
        return self.dtype + "".join(f" (+{d})" for d in others)

    @property
    def has_nan(self) -> bool:
        a = self.inputs[0]
        return a.dtype.kind not in "iub" and bool(np.isnan(a.astype(np.float64)).any())


def _case_rng(seed, op_type, version, dtype, index):
    key = zlib.crc32(f"{op_type}/{version}/{dtype}/{index}".encode())
    return np.random.default_rng([seed, key])


def _versions(gen: Generator):
    """The served versions of an operator (None when it is not served)."""
    from normops import _registry
    from normops._errors import UnsupportedError

    try:
        return _registry.lookup(gen.op_type, gen.domain).versions
    except UnsupportedError:
        return None


_ONNX_TYPE = {"float32": "float", "float64": "double"}


def schema_dtypes(gen: Generator, version: int) -> tuple:
    """The candidate dtypes of ``gen`` that ONNX's schema at ``version`` allows
    for the first input (all candidates for a domain onnx does not know)."""
    candidates = tuple(gen.dtypes(version))
    if gen.domain not in ("", "ai.onnx"):
        return candidates
    onnx, _ = _onnx()
    try:
        schema = onnx.defs.get_schema(gen.op_type, version, gen.domain)
    except onnx.defs.SchemaError:
        return candidates
    type_str = schema.inputs[0].type_str
    allowed = next((set(c.allowed_type_strs) for c in schema.type_constraints
                    if c.type_param_str == type_str), {type_str})
    return tuple(d for d in candidates if f"tensor({_ONNX_TYPE.get(d, d)})" in allowed)


def make_cases(gen: Generator, seed: int, per_op: int) -> list[Case]:
    """``per_op`` cases for every served version of ``gen`` and every candidate
    dtype the ONNX schema of that version allows."""
    cases = []
    for version in _versions(gen) or ():
        for dtype_name in schema_dtypes(gen, version):
            try:
                dtype = _dtype(dtype_name)
            except ImportError:
                continue
            for i in range(per_op):
                rng = _case_rng(seed, gen.op_type, version, dtype_name, i)
                g = Gen(rng, specials=(i % 3 == 2))
                inputs, attrs = gen.make(g, version, dtype)
                cases.append(Case(gen.op_type, gen.domain, version, gen.model_opset(version),
                                  dtype_name, i, list(inputs), attrs))
    return cases


# --------------------------------------------------------------------------
# Comparison


def _as_float64(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64)


def compare_outputs(got: np.ndarray, want: np.ndarray) -> tuple[bool, float, str]:
    """``(ok, scaled error, message)`` for normops output ``got`` against ORT's ``want``.

    See the module docstring for the measure. ``message`` is empty when ok.
    """
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        return False, np.inf, f"shape {got.shape}, ORT {want.shape}"
    if got.dtype != want.dtype:
        return False, np.inf, f"dtype {got.dtype}, ORT {want.dtype}"
    if got.size == 0:
        return True, 0.0, ""
    is_float = want.dtype.kind == "f" or want.dtype.name == "bfloat16"
    if not is_float:
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        if bad.size:
            i = int(bad[0])
            at = tuple(int(k) for k in np.unravel_index(i, want.shape))
            return False, np.inf, (f"{bad.size} of {want.size} elements differ (exact); first at {at}: "
                                   f"normops {got.reshape(-1)[i]}, ORT {want.reshape(-1)[i]}")
        return True, 0.0, ""
    a, b = _as_float64(got), _as_float64(want)
    fa, fb = np.isfinite(a), np.isfinite(b)
    both = fa & fb
    nonfinite_bad = ~both & ~((a == b) | (np.isnan(a) & np.isnan(b)))
    if nonfinite_bad.any():
        i = int(np.flatnonzero(nonfinite_bad.reshape(-1))[0])
        at = tuple(int(k) for k in np.unravel_index(i, want.shape))
        n = int(nonfinite_bad.sum())
        return False, np.inf, (f"{n} of {want.size} elements differ in NaN/inf; first at {at}: "
                               f"normops {float(a.reshape(-1)[i])!r}, ORT {float(b.reshape(-1)[i])!r}")
    if not both.any():
        return True, 0.0, ""
    diff = np.abs(a[both] - b[both])
    err = float(diff.max() / max(1.0, float(np.abs(b[both]).max())))
    bound = bound_for(want.dtype)
    if err > bound:
        i = int(np.argmax(diff))
        flat = np.flatnonzero(both.reshape(-1))[i]
        at = tuple(int(k) for k in np.unravel_index(flat, want.shape))
        return False, err, (f"scaled error {err:.3g} > {bound:.3g}; worst at {at}: "
                            f"normops {float(a.reshape(-1)[flat])!r}, ORT {float(b.reshape(-1)[flat])!r}")
    return True, err, ""


# --------------------------------------------------------------------------
# Running


@dataclasses.dataclass
class Result:
    case: Case
    status: str
    error: float = 0.0  # worst scaled error over the compared outputs and flavours
    message: str = ""
    category: str = ""  # documented-difference category, or ORT's error type


def _model(case: Case, n_outputs: int):
    onnx, _ = _onnx()
    helper = onnx.helper
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(case.inputs)]
    while names and names[-1] == "":
        names.pop()
    outputs = [f"out{k}" for k in range(n_outputs)]
    attributes = dict(case.attributes)
    if case.op_type == "BatchNormalization" and 7 <= case.version < 14:
        # normops's training_mode there is the node declaring its five outputs
        attributes.pop("training_mode", None)
    node = helper.make_node(case.op_type, names, outputs, domain=case.domain, **attributes)
    graph_inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
        for n, a in zip(names, case.inputs) if n
    ]
    graph = helper.make_graph([node], "compare_ort", graph_inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outputs])
    opsets = [helper.make_opsetid(case.domain, case.opset)]
    if case.domain not in ("", "ai.onnx"):
        opsets.append(helper.make_opsetid("", 17))
    return helper.make_model(graph, opset_imports=opsets, ir_version=10), names


def run_ort(case: Case, n_outputs: int):
    """ORT's outputs, or raise whatever ORT raises."""
    _, ort = _onnx()
    ort.set_default_logger_severity(4)  # refusals are recorded; keep stderr quiet
    model, names = _model(case, n_outputs)
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    model, bf16_outputs = _bfloat16_through_float32(model)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feeds = {n: (a.astype(np.float32) if a.dtype.name == "bfloat16" else a)
             for n, a in zip(names, case.inputs) if n}
    outputs = sess.run(None, feeds)
    return [o.astype(_dtype("bfloat16")) if k in bf16_outputs else o for k, o in enumerate(outputs)]


def _bfloat16_through_float32(model):
    """onnxruntime's Python API takes and returns no bfloat16 arrays: bfloat16
    graph inputs become float32 ones followed by a Cast, bfloat16 outputs are
    Cast to float32 (both exact). Returns the model and the indices of the
    outputs to convert back."""
    onnx, _ = _onnx()
    bf16 = onnx.TensorProto.BFLOAT16
    graph = model.graph
    if not any(v.type.tensor_type.elem_type == bf16 for v in graph.input):
        return model, set()
    node = graph.node[0]
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.output}
    except Exception:  # noqa: BLE001 - unknown schema: outputs follow the first input
        types = {}
    casts_in = []
    for value in graph.input:
        if value.type.tensor_type.elem_type == bf16:
            value.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
            inner = value.name + "_bf16"
            casts_in.append(onnx.helper.make_node("Cast", [value.name], [inner], to=bf16))
            node.input[:] = [inner if i == value.name else i for i in node.input]
    casts_out, converted = [], set()
    for k, name in enumerate(list(node.output)):
        elem = types.get(name) or (bf16 if k == 0 else onnx.TensorProto.FLOAT)
        if elem == bf16:
            node.output[k] = name + "_bf16"
            casts_out.append(onnx.helper.make_node("Cast", [node.output[k]], [name], to=onnx.TensorProto.FLOAT))
            converted.add(k)
    nodes = [*casts_in, onnx.helper.NodeProto(), *casts_out]
    nodes[len(casts_in)].CopyFrom(node)
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(o.domain in ("", "ai.onnx") for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("", 17))
    return model, converted


def _ort_error_type(exc: BaseException) -> str:
    m = re.search(r"\[ONNXRuntimeError\] : \d+ : (\w+)", str(exc))
    return m.group(1) if m else type(exc).__name__


def _first_line(exc: BaseException, limit=160) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: Outputs of normops and ORT evaluated in float64 must agree this closely
#: for normops's float64 result to stand in for the true one.
FLOAT64_AGREEMENT = 1e-9
NEAR_FLOAT64 = "normops within the bound of the float64 result"


#: For a float16/bfloat16 case where ORT has no float64 kernel, ORT in
#: float32 may confirm the float64 result instead, this closely (far below
#: the narrow types' bounds, 3.9e-3 and 3.1e-2).
FLOAT32_AGREEMENT = 1e-5


def _widened(case: Case, dtype="float64") -> Case:
    wide = [None if a is None else (a.astype(dtype) if a.dtype.kind == "f" or a.dtype.name == "bfloat16"
                                    else a) for a in case.inputs]
    return dataclasses.replace(case, dtype=dtype, inputs=wide)


def _agrees(truth, outputs, tolerance):
    return all(compare_outputs(truth[k].astype(o.dtype), o)[0]
               and compare_outputs(truth[k].astype(np.float64), o.astype(np.float64))[1] <= tolerance
               for k, o in enumerate(outputs))


def _float64_diagnosis(case: Case, gots: dict, want: list, failed: set, names):
    """Both sides' scaled error from the float64 result, for a numeric failure.

    The float64 result is normops's exact flavour on the inputs widened to
    float64, checked against ONNX Runtime on the same float64 inputs (within
    FLOAT64_AGREEMENT; with stash_type=11, double, where the operator has a
    stash type, since ORT's default float32 stash would round the statistics
    to float32). Returns the text and the oracle ``(confirmed, normops within,
    ORT beyond)``: whether ORT confirmed the float64 result, whether every
    failing output of every flavour of normops is within its bound of it, and
    whether ONNX Runtime's is beyond the bound on some failing output.
    """
    import normops

    wide = _widened(case)
    try:
        truth = normops.run(case.op_type, wide.inputs, case.attributes, opset=case.opset,
                            domain=case.domain, mode="exact")
    except Exception as exc:  # noqa: BLE001 - a diagnosis only
        return f"float64 check not possible: {type(exc).__name__}: {_first_line(exc)}", (False, False, False)
    stash = _has_stash_type(case)
    try:
        try:
            ort64 = run_ort(_stash_double(wide) if stash else wide, len(want))
        except Exception:  # noqa: BLE001 - ORT without a double stash type (LayerNormalization)
            if not stash:
                raise
            stash = False
            ort64 = run_ort(wide, len(want))
        agree = _agrees(truth, ort64[:len(want)], FLOAT64_AGREEMENT)
        check = ("ORT agrees in float64" if agree else "ORT disagrees in float64, so it is no reference")
        if stash:
            check += " with stash_type=11"
        confirmed = agree
    except Exception as exc:  # noqa: BLE001 - ORT may have no float64 kernel
        # normops' float64 result stands alone then: its rounding error is
        # about 1e-16, far below the bounds, and the tests hold it to the
        # executable specification
        agree, check = True, f"ORT does not run in float64 ({_ort_error_type(exc)}): unconfirmed"
        confirmed = False
        if case.dtype in ("float16", "bfloat16"):  # ORT in float32 may confirm it
            try:
                ort32 = run_ort(_widened(case, "float32"), len(want))
            except Exception:  # noqa: BLE001
                pass
            else:
                confirmed = agree = _agrees(truth, ort32[:len(want)], FLOAT32_AGREEMENT)
                check = (f"ORT has no float64 kernel ({_ort_error_type(exc)}); ORT in float32 "
                         + ("agrees to 1e-5" if agree else "disagrees, so it is no reference"))
    parts, within, beyond = [], agree, False
    for k, w in enumerate(want):
        t = truth[k].astype(np.float64)
        sides = [*(g[k].astype(np.float64) for g in gots.values()), w.astype(np.float64)]
        both = np.isfinite(t)
        for side in sides:
            both &= np.isfinite(side)
        if not both.any():
            continue
        scale = max(1.0, float(np.abs(t[both]).max()))
        errs = [float(np.abs(side - t)[both].max()) / scale for side in sides]
        if k in failed:
            within = within and max(errs[:-1]) <= bound_for(w.dtype)
            beyond = beyond or errs[-1] > bound_for(w.dtype)
        parts.append(f"{names[k]}: normops {max(errs[:-1]):.3g}, ORT {errs[-1]:.3g}")
    text = (f"scaled error from the float64 result (normops exact on widened inputs; {check}): "
            + "; ".join(parts))
    return text, (confirmed, within, beyond)


def _merge_modes(messages):
    """'exact: m' and 'fast: m' become 'exact, fast: m' (order kept)."""
    merged = {}
    for line in messages:
        mode, _, text = line.partition(": ")
        merged.setdefault(text, []).append(mode)
    return [f"{', '.join(modes)}: {text}" for text, modes in merged.items()]


def n_outputs_of(case: Case, n_defined: int) -> int:
    """How many outputs the node of ``case`` requests (ORT computes the optional ones too)."""
    # BatchNormalization's optional outputs exist in training mode only: 3
    # from opset 14, 5 before (with saved_mean and saved_var; at opsets 1 and
    # 6 is_test=0 is training).
    if case.op_type == "BatchNormalization":
        if case.version < 7:
            return 1 if case.attributes.get("is_test", 0) else 5
        return (3 if case.version >= 14 else 5) if case.attributes.get("training_mode") else 1
    return n_defined


def run_case(case: Case, modes=MODES, classify=True) -> Result:
    """Run ``case`` in ORT and in normops (each of ``modes``) and compare.

    A disagreement is checked against the documented differences unless
    ``classify`` is false (the control runs of those checks).
    """
    import normops
    from normops import _registry

    op = _registry.lookup(case.op_type, case.domain)
    n_outputs = n_outputs_of(case, len(op.outputs))
    try:
        want = run_ort(case, n_outputs)
    except Exception as exc:  # noqa: BLE001 - any ORT refusal is recorded, not failed
        return Result(case, ORT_FAILS, message=_first_line(exc), category=_ort_error_type(exc))

    worst, messages, gots, numeric = 0.0, [], {}, set()
    category = _NAN_CATEGORY.get(case.op_type) if case.has_nan else None
    for mode in modes:
        snapshot = [None if a is None else a.copy() for a in case.inputs]
        try:
            got = normops.run(case.op_type, case.inputs, case.attributes, opset=case.opset,
                              domain=case.domain, mode=mode)
        except normops.UnsupportedError as exc:
            return Result(case, NOT_SERVED, message=_first_line(exc))
        except Exception as exc:  # noqa: BLE001 - any other error is a failure
            messages.append(f"{mode}: {type(exc).__name__}: {_first_line(exc)}")
            worst = np.inf
            continue
        for k, (a, b) in enumerate(zip(snapshot, case.inputs)):
            if a is not None and a.tobytes() != np.asarray(b).tobytes():
                messages.append(f"{mode}: input {k} was modified")
        for k, w in enumerate(want):
            if k >= len(got):
                messages.append(f"{mode}: output {k} missing")
                worst = np.inf
                continue
            ok, err, msg = compare_outputs(got[k], w)
            worst = max(worst, err)
            if not ok:
                messages.append(f"{mode}: output {k} ({op.outputs[k]}): {msg}")
                if msg.startswith("scaled error"):
                    numeric.add(k)
        gots[mode] = got
    messages = _merge_modes(messages)
    if messages:
        if category is not None:
            return Result(case, DOCUMENTED, worst, "\n".join(messages), category)
        near, oracle = False, None
        # Only numeric disagreements (non-finite elements all agree) get the
        # float64 diagnosis; NaN and inf in the input are fine then.
        if numeric and gots and case.dtype != "float64" and not any("NaN/inf" in m for m in messages):
            text, oracle = _float64_diagnosis(case, gots, want, numeric, op.outputs)
            near = oracle[1]
            messages.append(text)
        result = Result(case, FAIL, worst, "\n".join(messages))
        found = None
        if classify and gots and not any("Error: " in m or "was modified" in m or "missing" in m
                                         for m in messages):
            found = documented_difference(result, {"modes": modes, "gots": gots, "want": want,
                                                   "oracle": oracle})
        if found is not None:
            name, evidence = found
            result.status, result.category = DOCUMENTED, name
            if evidence:
                result.message += "\n" + evidence
            return result
        result.category = open_disagreement(result) or (NEAR_FLOAT64 if near else "")
        return result
    return Result(case, PASS, worst)


@dataclasses.dataclass
class Report:
    seed: int
    per_op: int
    results: list
    without_generator: list  # served (domain, op_type) with no generator
    waiting: list  # generators whose operator is not served

    @property
    def n_failed(self) -> int:
        return sum(r.status == FAIL for r in self.results)


def run(seed=0, per_op=10, pattern=None, modes=MODES, progress=None) -> Report:
    """Generate and run the cases of every served operator matching ``pattern``."""
    from normops import _registry

    regex = re.compile(pattern) if pattern is not None else None
    served = [(d, op) for d, op in _registry.served_operators()]
    selected = [k for k in served if regex is None or regex.search(k[1])]
    without = [k for k in selected if k not in GENERATORS]
    waiting = sorted(k for k, gen in GENERATORS.items()
                     if _versions(gen) is None and (regex is None or regex.search(k[1])))
    results = []
    for key in selected:
        gen = GENERATORS.get(key)
        if gen is None:
            continue
        for case in make_cases(gen, seed, per_op):
            results.append(run_case(case, modes))
            if progress is not None:
                progress(results[-1])
    return Report(seed, per_op, results, without, waiting)


# --------------------------------------------------------------------------
# Reports

_HEADERS = ("operator", "opset", "dtype", "cases", "pass", "documented", "ORT does not run",
            "not served", "failures", "worst scaled error of passes")


def _groups(report: Report):
    groups = {}
    for r in report.results:
        c = r.case
        groups.setdefault((c.domain, c.op_type, c.version, c.types), []).append(r)
    return groups


def _fmt_err(results) -> str:
    compared = [r.error for r in results if r.status == PASS]
    if not compared:
        return "-"
    worst = max(compared)
    return "inf" if worst == np.inf else ("0" if worst == 0 else f"{worst:.2g}")


def _rows(report: Report):
    rows = []
    for (domain, op_type, version, dtype), results in _groups(report).items():
        counts = [sum(r.status == s for r in results) for s in (PASS, DOCUMENTED, ORT_FAILS, NOT_SERVED, FAIL)]
        name = op_type if domain in ("", "ai.onnx") else f"{domain}::{op_type}"
        opset = str(version) if results[0].case.opset == version else f"{version} (model {results[0].case.opset})"
        rows.append((name, opset, dtype, str(len(results)), *map(str, counts), _fmt_err(results)))
    return rows


def _ort_reasons(report: Report):
    """(op, opset, dtype) -> (error type, first message) for ORT refusals."""
    found = {}
    for r in report.results:
        if r.status == ORT_FAILS:
            c = r.case
            found.setdefault((c.op_type, c.version, c.types), (r.category, r.message))
    return found


def _summary(report: Report) -> str:
    counts = {s: sum(r.status == s for r in report.results) for s in _ORDER}
    return (f"{len(report.results)} cases (seed {report.seed}, {report.per_op} per operator, opset and dtype; "
            f"flavours exact and fast): {counts[PASS]} pass, {counts[DOCUMENTED]} documented differences, "
            f"{counts[ORT_FAILS]} ORT does not run, {counts[NOT_SERVED]} not served by normops, "
            f"{counts[FAIL]} failures")


def to_text(report: Report) -> str:
    rows = [_HEADERS, *_rows(report)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADERS))]
    lines = []
    for j, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i < 3 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", _summary(report)]
    for d, op in report.without_generator:
        lines.append(f"NO GENERATOR: {op} ({d or 'ai.onnx'}) is served but compare-ort has no generator for it")
    if report.waiting:
        lines.append("Generators waiting for their operator to be served: "
                     + ", ".join(op for _, op in report.waiting))
    documented = {}
    for r in report.results:
        if r.status == DOCUMENTED:
            documented[r.category] = documented.get(r.category, 0) + 1
    if documented:
        lines += ["", "Documented differences (reasons: docs/conformance.md):"]
        lines += [f"  {name}: {n}" for name, n in documented.items()]
    failures = [r for r in report.results if r.status == FAIL]
    if failures:
        lines += ["", "Failures:"]
        for r in failures:
            lines.append(f"  {r.case.label}" + (f"  [open: {r.category}]" if r.category else ""))
            lines += [f"      {m}" for m in r.message.splitlines()]
    return "\n".join(lines) + "\n"


def to_markdown(report: Report, command: str = _COMMAND) -> str:
    """The generated section of docs/conformance.md, markers included."""
    onnx, ort = _onnx()
    out = [
        BEGIN,
        "## Differential comparison with ONNX Runtime",
        "",
        f"Produced by `{command}`; do not edit by hand (`python -m normops conformance` "
        "keeps this section as it is).",
        "",
        f"Randomized one-node cases for every operator normops serves, at every served version "
        f"(the model stamped with that opset), run in ONNX Runtime {ort.__version__} "
        f"(CPU execution provider, one thread; models built with onnx {onnx.__version__}) and "
        "in normops in the `exact` and `fast` flavours. Cases have rank 1 to 5, odd widths, "
        "random axes and axis subsets (negative ones where the opset allows them), keepdims "
        "and other attribute variations valid at the opset, and every third case injects "
        "special values (NaN, ±inf, -0, subnormals, large values) into the first input. "
        "Every candidate dtype the ONNX schema of that version allows is tried (a dtype "
        "in parentheses is another input's, e.g. a float32 scale); what ONNX Runtime or "
        "normops does not take is counted, not failed. ONNX Runtime's Python API takes no "
        "bfloat16 arrays, so its bfloat16 inputs and outputs pass through exact Casts "
        "from and to float32 in the model.",
        "",
        "Error measure: per output, `max|a - b| / max(1, max|b|)` over the elements where both "
        "are finite (`a` normops, `b` ONNX Runtime, in float64); non-finite elements must be "
        "identical (NaN at the same positions, the same infinities; +0 equals -0). Bound: `1e-4` for "
        "float32 and float64, `4 * eps` of the type for float16 (3.9e-3) and bfloat16 "
        "(3.1e-2); integer outputs exactly. Shapes and dtypes must be equal. A case counts "
        "as its worst flavour. *documented* counts cases whose disagreement falls in a "
        "documented difference (below, each with its reason); they are not failures. A numeric failure on "
        "finite inputs also gives both sides' scaled error from the float64 result "
        "(normops exact on the inputs widened to float64).",
        "",
        "| " + " | ".join(_HEADERS) + " |",
        "| " + " | ".join("---" if i < 3 else "---:" for i in range(len(_HEADERS))) + " |",
    ]
    out += ["| " + " | ".join(row) + " |" for row in _rows(report)]
    out += ["", _summary(report) + ".", ""]
    if report.without_generator:
        out += ["Served operators without a generator (not compared): "
                + ", ".join(f"{op} ({d or 'ai.onnx'})" for d, op in report.without_generator) + ".", ""]
    if report.waiting:
        out += ["Generators ready for operators not served yet: "
                + ", ".join(op for _, op in report.waiting) + ".", ""]
    out += ["### Documented differences", "",
            "Disagreements whose cause is established; they are not failures. The NaN rules "
            "of ReduceMax/ReduceMin and ArgMax/ArgMin apply to any case with NaN in its input; "
            "every other rule checks its evidence on each case (a control run with the "
            "triggering values replaced, the exact product, ONNX Runtime at double precision, "
            "the float64 result, a NumPy model of ONNX Runtime's fused form, or the exact "
            "result with the conditioning measured), and a case whose evidence does not hold "
            "stays a failure.",
            ""]
    for name, (ops, reason) in NAN_DIFFERENCES.items():
        seen = sum(r.status == DOCUMENTED and r.category == name for r in report.results)
        out.append(f"- **{name}** ({seen} cases in this run): {reason}")
    for name, doc in DOCUMENTED_DIFFERENCES.items():
        seen = sum(r.status == DOCUMENTED and r.category == name for r in report.results)
        out.append(f"- **{name}** ({seen} cases in this run; when: {doc.condition}): {doc.reason} "
                   f"Spec: {doc.spec}.")
    shown = [r for r in report.results if r.status == DOCUMENTED and r.category in DOCUMENTED_DIFFERENCES]
    if shown:
        out += ["", "The cases of this run under the rules checked case by case:", ""]
    for r in shown:
        out += [f"- `{r.case.label}` ({r.category}):", "", "  ```text"]
        out += [f"  {m}" for m in r.message.splitlines()]
        out += ["  ```", ""]
    out += ["", "### Failures", ""]
    failures = [r for r in report.results if r.status == FAIL]
    if not failures:
        out += ["None.", ""]
    else:
        out += ["Disagreements with ONNX Runtime the spec does not document. Those of a known "
                "kind are grouped under it (they are still failures until the spec decides).", ""]
    groups = {}
    for r in failures:
        groups.setdefault(r.category, []).append(r)
    descriptions = {name: text for name, (_, _, text) in OPEN_DISAGREEMENTS.items()}
    descriptions[NEAR_FLOAT64] = (
        "For every output that disagrees numerically, each flavour of normops is within the "
        "bound of the float64 result (normops exact on the inputs widened to float64, itself "
        "checked against ONNX Runtime in float64 to 1e-9): the disagreement is ONNX Runtime's "
        "error or the conditioning of the data, not normops's.")
    for name in [*(n for n in descriptions if n in groups), *([""] if "" in groups else [])]:
        found = groups[name]
        if name:
            out += [f"#### {name} ({len(found)} cases)", "", descriptions[name], ""]
        else:
            out += [f"#### Other ({len(found)} cases)", ""]
        for r in found:
            out += [f"- `{r.case.label}`:", "", "  ```text"]
            out += [f"  {m}" for m in r.message.splitlines()]
            out += ["  ```", ""]
    out += ["### Where ONNX Runtime does not run", ""]
    reasons = _ort_reasons(report)
    if not reasons:
        out += ["None.", ""]
    for (op, version, dtype), (kind, msg) in sorted(reasons.items()):
        out.append(f"- {op}-{version} {dtype}: {kind}: {msg.replace('|', '/')}")
    out += ["", END]
    return "\n".join(out) + "\n"


def replace_section(page: str, section: str) -> str:
    """``page`` with its compare-ort section replaced by ``section`` (appended if absent)."""
    start, stop = page.find(BEGIN), page.find(END)
    if start >= 0 and stop > start:
        return page[:start] + section.rstrip("\n") + page[stop + len(END):]
    # The layout python -m normops conformance keeps: the page, a blank line, the section.
    return page + ("\n" if page else "") + section


def extract_section(page: str) -> str | None:
    """The compare-ort section of ``page``, markers included, or None."""
    start, stop = page.find(BEGIN), page.find(END)
    if start >= 0 and stop > start:
        return page[start:stop + len(END)] + "\n"
    return None


def _default_page() -> Path | None:
    from normops import conformance

    return conformance._default_output()


# --------------------------------------------------------------------------
# Command line


def _integer(minimum: int, what: str):
    """An argparse type: an int not below ``minimum``."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}")
        return value

    return parse


def _regex(text):
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"invalid regular expression: {exc}") from None
    return text


def _parser():
    p = argparse.ArgumentParser(
        prog=_COMMAND,
        description="Compare every served operator with ONNX Runtime on randomized one-node cases.")
    p.add_argument("--seed", type=_integer(0, "non-negative"), default=0, help="random seed (default 0)")
    p.add_argument("--cases-per-op", type=_integer(1, "positive"), default=None, metavar="K",
                   help="cases per operator, opset and dtype (default 10; 3 with --quick)")
    p.add_argument("--op", metavar="REGEX", type=_regex, default=None, help="only operators whose name matches REGEX")
    p.add_argument("--quick", action="store_true", help="3 cases per operator, opset and dtype")
    p.add_argument("--write-docs", action="store_true",
                   help="write the results into docs/conformance.md (its compare-ort section)")
    p.add_argument("--output", metavar="PATH", default=None,
                   help="page to write with --write-docs (default: docs/conformance.md)")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    return p


def main(argv=None) -> int:
    """0: no failure; 1: a failure; 2: bad usage or onnx/onnxruntime missing."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.output is not None and not args.write_docs:
        parser.error("--output needs --write-docs")
    if args.quick and args.cases_per_op is not None:
        parser.error("--quick and --cases-per-op are exclusive")
    per_op = args.cases_per_op or (3 if args.quick else 10)
    try:
        _onnx()
    except ImportError as exc:
        print(f"normops compare-ort: {exc}", file=sys.stderr)
        return 2
    report = run(args.seed, per_op, args.op)
    if not report.results and not report.without_generator:
        waiting = ", ".join(op for _, op in report.waiting)
        hint = f" (generators waiting for these to be served: {waiting})" if waiting else ""
        print(f"normops compare-ort: no served operator matches --op {args.op!r}{hint}", file=sys.stderr)
        return 2
    print(_summary(report) if args.quiet else to_text(report), end="\n" if args.quiet else "")
    if args.write_docs:
        page = Path(args.output) if args.output else _default_page()
        if page is None:
            print("normops compare-ort: no docs/ directory here; pass --output PATH", file=sys.stderr)
            return 2
        parts = [_COMMAND, f"--seed {args.seed}", f"--cases-per-op {per_op}"]
        if args.op:
            parts.append(f"--op '{args.op}'")
        parts.append("--write-docs")
        text = page.read_text(encoding="utf-8") if page.is_file() else ""
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(replace_section(text, to_markdown(report, " ".join(parts))), encoding="utf-8")
        if not args.quiet:
            print(f"wrote {page}")
    return 1 if report.n_failed else 0


if __name__ == "__main__":
    sys.exit(main())
