"""The disagreements with ONNX Runtime whose cause is established: the NaN
rules the spec documents (NAN_DIFFERENCES) and DOCUMENTED_DIFFERENCES, whose
every rule states the condition, the reason and the spec text behind
normops's side, and checks its evidence on the case itself (some by running
the case again: those import the runner when they run, since the runner
classifies its results with these rules)."""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

import numpy as np

from normops_tools.cases.randomized import n_outputs_of
from .comparison import FLOAT64_AGREEMENT, PASS, bound_for, compare_outputs, _onnx


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
    from .runner import run_case  # (the runner classifies its results with these rules)

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
    from .runner import run_ort

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
    """The type normops (docs/specification.md §4.1) and ONNX Runtime compute in."""
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
                     "is rounded once (docs/specification.md §4.2)")

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
        "docs/specification.md §9.4: a row holding a NaN is all zeros",
        _nonfinite_rule(lambda r: r.case.has_nan, message="")),
    "LogSoftmax float64 on a row with NaN or +inf": Documented(
        ("LogSoftmax",), "float64, a row holding NaN or +inf",
        "normops makes the whole row NaN, as for float32 and Softmax; ONNX Runtime's float64 "
        "kernel gives the other elements -inf or finite (even positive) values: [1, inf, 2] "
        "gives [-inf, NaN, -inf].",
        "docs/specification.md §9.3: LogSoftmax has Softmax's NaN rows (§9.2 step 1)",
        _nonfinite_rule(lambda r: r.case.dtype == "float64")),
    "LayerNormalization Mean of a row with ±inf": Documented(
        ("LayerNormalization",), "output Mean, a row holding ±inf of one sign (no NaN)",
        "normops's Mean is Sum16(x) / n, which is that infinity; ONNX Runtime's is NaN "
        "([1, inf, 2]: inf and NaN). Y and InvStdDev are NaN on both sides.",
        "docs/specification.md §6.3 step 1: mean = Sum16(x) / n",
        _nonfinite_rule(lambda r: all("output 1 (Mean)" in line for line in r.message.splitlines()))),
    "ReduceLogSumExp with NaN and an infinite maximum": Documented(
        ("ReduceLogSumExp",), "NaN among the elements and ±inf as the largest of the others",
        "normops returns NaN; ONNX Runtime returns the infinity ([1, NaN, inf] gives NaN and "
        "inf). With a finite maximum both give NaN.",
        "docs/specification.md §11.5: m is the maximum, NaN if any element is NaN",
        _nonfinite_rule(lambda r: r.case.has_nan)),
    "ReduceLogSumExp in float16/bfloat16 on values near the type's range": Documented(
        ("ReduceLogSumExp",), "float16/bfloat16, elements of magnitude 1e4 and more",
        "ONNX Runtime evaluates in the narrow type, where the exponentials or their sum leave "
        "its range, and returns ±inf; normops returns the finite result: " + _FLOAT32_ROUNDING
        + ". noop_with_empty_axes on [-30000] (float16): normops -30000, ORT -inf.",
        "docs/specification.md §4.2 (float16, bfloat16)",
        lambda r, ctx: (_control_passes(r, ctx, lambda x: _without_extremes(x, 0))
                        if r.case.dtype in ("float16", "bfloat16") and "NaN/inf" in r.message
                        and _largest_finite(r.case.inputs[0]) >= 1e4 else None)),
    "ReduceProd where overflow meets underflow": Documented(
        ("ReduceProd",), "huge (or infinite) and tiny factors in one product",
        "the product overflows in one order and underflows in another. normops multiplies in "
        "sequence order; ONNX Runtime in another order, so one side meets inf * 0 = NaN where "
        "the other does not. Neither order gives the true product in general; each case "
        "states the exact product's class (from the sum of log2|x|) and which side has it.",
        "docs/specification.md §11.2: products multiply sequentially from 1, in sequence order "
        "(row layout; column layout: sequential in row-major order)",
        _prod_order),
    "GroupNormalization float64: stash_type ignored": Documented(
        ("GroupNormalization",), "float64 input, stash_type=1 (the default)",
        "ONNX Runtime has no GroupNormalization kernel and runs the ONNX function body, "
        "which casts X to the stash type (float32) for the statistics, as the ONNX text "
        "says; normops computes float64 inputs in float64. Checked on each case: ORT with "
        "stash_type=11 (double) agrees with normops.",
        "docs/specification.md §4.4: stash_type is read, validated and ignored; float64 inputs "
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
        "docs/specification.md §7.1 and §7.3 (y = (((x - mean) * inv) * scale) + B, nothing "
        "folded), for InstanceNormalization and BatchNormalization",
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
        "docs/specification.md §8.1 (LayerNormalization's steps 1-2, then y = d / s with no "
        "epsilon, as ONNX Runtime's CPU kernel)",
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
        "docs/specification.md §7.2 with §6.3 steps 1-2 (two-pass variance), for "
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
