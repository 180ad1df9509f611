"""Export the small PyTorch model of tests/data/torch_small_convnet.onnx.

    python tools/export_torch_model.py [OUT_DIR]      # default: tests/data

A model made by a real exporter, for tests/test_onnx_models.py: two
convolutions, each followed by GroupNorm and SiLU, a global average pool,
LayerNorm, a linear layer with GELU, a second linear layer and a softmax.
It writes ``torch_small_convnet.onnx`` (weights inside, 36 KB) and
``torch_small_convnet_io.npz`` (an input ``x`` and torch's output ``y``),
so the tests need no torch. It needs torch (the CPU build is enough) and
onnx; the weights come from ``torch.manual_seed(0)``.

The exporter is torch.onnx's TorchScript-based one (``dynamo=False``;
torch 2.13 deprecates it but keeps it), which needs nothing beyond torch
(the newer exporter needs onnxscript), at opset 18: LayerNorm becomes
LayerNormalization and GroupNorm the InstanceNormalization it is built
from, both served by normops; Conv, Gemm, Erf and the rest run on ONNX
Runtime.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

NAME = "torch_small_convnet"
OPSET = 18


def build():
    import torch
    from torch import nn

    class SmallConvNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
            self.gn1 = nn.GroupNorm(4, 16)
            self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.gn2 = nn.GroupNorm(8, 32)
            self.ln = nn.LayerNorm(32)
            self.fc1 = nn.Linear(32, 64)
            self.fc2 = nn.Linear(64, 10)

        def forward(self, x):
            x = nn.functional.silu(self.gn1(self.conv1(x)))
            x = nn.functional.silu(self.gn2(self.conv2(x)))
            x = x.mean(dim=(2, 3))
            x = nn.functional.gelu(self.fc1(self.ln(x)))
            return torch.softmax(self.fc2(x), dim=-1)

    torch.manual_seed(0)
    return SmallConvNet().eval()


def export(out_dir):
    """Write the model and its input/output; returns their paths."""
    import torch

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = build()
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32))
    with torch.inference_mode():
        y = model(x)
    path = out_dir / f"{NAME}.onnx"
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated, not gone: chosen on purpose
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)  # group_norm's size check, traced as constant
        torch.onnx.export(model, (x,), str(path), input_names=["x"], output_names=["probs"], opset_version=OPSET,
                          dynamic_axes={"x": {0: "batch", 2: "height", 3: "width"}, "probs": {0: "batch"}},
                          dynamo=False)
    io_path = out_dir / f"{NAME}_io.npz"
    np.savez(io_path, x=x.numpy(), y=y.numpy())
    return path, io_path


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests" / "data"
    for written in export(target):
        print(f"wrote {written} ({written.stat().st_size} bytes)")
