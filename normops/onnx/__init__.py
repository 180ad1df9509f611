"""ONNX models through normops (needs the optional ``onnx`` package).

>>> from normops.onnx import InferenceSession
>>> session = InferenceSession("model.onnx", mode="exact")
>>> (y,) = session.run(None, {"x": x})

``InferenceSession`` follows ONNX Runtime's interface; ``Backend`` (and
``ExactBackend``, ``FastBackend``) implement ``onnx.backend.base.Backend``.
normops runs its own operators (``normops.run``) and the plumbing listed in
``PLUMBING_OPERATORS``; every other node runs on ONNX Runtime (the optional
``ort`` extra), and ``InferenceSession.placement()`` says where each node
runs. ``normops.onnx.examples`` builds example models. See docs/onnx.md.
"""

from __future__ import annotations

try:
    import onnx as _onnx  # noqa: F401 - the real onnx package, not this module
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "normops.onnx needs the optional 'onnx' package (onnx==1.22.0): pip install 'normops[onnx]'"
    ) from exc

from ._backend import Backend, BackendRep, ExactBackend, FastBackend
from ._plumbing import PLUMBING
from ._session import InferenceSession, NodeArg, Placement

#: The non-normops operators a model may use (default domain), sorted.
PLUMBING_OPERATORS = tuple(sorted(PLUMBING))

__all__ = ["InferenceSession", "NodeArg", "Placement", "Backend", "BackendRep", "ExactBackend", "FastBackend",
           "PLUMBING_OPERATORS"]
