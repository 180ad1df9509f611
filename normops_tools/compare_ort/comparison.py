"""How normops's outputs are compared with ONNX Runtime's: the statuses of
a case, the error bound per dtype, and the comparison of two outputs (the
measure is described in the package's docstring)."""

from __future__ import annotations

import numpy as np


MODES = ("exact", "fast")
BOUND = 1e-4

# Statuses of a case (the worst of its flavours counts).
PASS = "pass"
DOCUMENTED = "documented difference"
ORT_FAILS = "ORT does not run"
NOT_SERVED = "normops does not serve"
FAIL = "failure"
_ORDER = (PASS, NOT_SERVED, ORT_FAILS, DOCUMENTED, FAIL)


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


def bound_for(dtype: np.dtype) -> float:
    """The largest scaled error accepted for an output of ``dtype``."""
    if dtype.name == "float16":
        return 4 * 2.0**-10
    if dtype.name == "bfloat16":
        return 4 * 2.0**-7
    return BOUND


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


#: Outputs of normops and ORT evaluated in float64 must agree this closely
#: for normops's float64 result to stand in for the true one.
FLOAT64_AGREEMENT = 1e-9
NEAR_FLOAT64 = "normops within the bound of the float64 result"


#: For a float16/bfloat16 case where ORT has no float64 kernel, ORT in
#: float32 may confirm the float64 result instead, this closely (far below
#: the narrow types' bounds, 3.9e-3 and 3.1e-2).
FLOAT32_AGREEMENT = 1e-5
