"""Running a case in ONNX Runtime and in normops (both flavours) and
classifying the result."""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from normops_tools.cases.randomized import Case, dtype_named, n_outputs_of
from .comparison import (DOCUMENTED, FAIL, FLOAT32_AGREEMENT, FLOAT64_AGREEMENT, MODES, NEAR_FLOAT64, NOT_SERVED,
                         ORT_FAILS, PASS, _onnx, bound_for, compare_outputs)
from .differences import _NAN_CATEGORY, _has_stash_type, _stash_double, documented_difference, open_disagreement


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
    return [o.astype(dtype_named("bfloat16")) if k in bf16_outputs else o for k, o in enumerate(outputs)]


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
