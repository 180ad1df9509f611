"""Example models that mix normops' operators with operators it does not
serve, built with ``onnx.helper`` from a seed (no download): the models of
docs/onnx.md, of tests/test_onnx_models.py and of the benchmark's model
cases.

- ``transformer_block``: a pre-norm transformer encoder block (MatMul, Add,
  Reshape, Transpose, Mul, Softmax, LayerNormalization, Gelu), opset 20.
- ``conv_block``: a residual convolutional block (Conv, GroupNormalization,
  Sigmoid, Mul, Add), opset 21, where ONNX Runtime runs GroupNormalization
  as its expanded function body.

Both take dynamic leading dimensions ("batch", "seq"; "batch", "height",
"width") and keep their weights as initializers.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

__all__ = ["transformer_block", "conv_block", "transformer_input", "conv_input"]


def _weights(rng, shape, fan_in):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def transformer_block(d_model=64, heads=4, ffn=256, *, seed=0, opset=20):
    """A pre-norm transformer encoder block on x of shape (batch, seq,
    d_model): x + attention(LN(x)), then + FFN(LN(.)) with Gelu."""
    if d_model % heads:
        raise ValueError(f"transformer_block: d_model={d_model} is not a multiple of heads={heads}")
    rng = np.random.default_rng(seed)
    dh = d_model // heads
    init = {}

    def param(name, array):
        init[name] = numpy_helper.from_array(array, name)
        return name

    for k in ("ln1", "ln2"):
        param(f"{k}_scale", (1 + 0.1 * rng.standard_normal(d_model)).astype(np.float32))
        param(f"{k}_bias", (0.1 * rng.standard_normal(d_model)).astype(np.float32))
    for k in ("q", "k", "v", "o"):
        param(f"w{k}", _weights(rng, (d_model, d_model), d_model))
        param(f"b{k}", (0.02 * rng.standard_normal(d_model)).astype(np.float32))
    param("w1", _weights(rng, (d_model, ffn), d_model))
    param("b1", (0.02 * rng.standard_normal(ffn)).astype(np.float32))
    param("w2", _weights(rng, (ffn, d_model), ffn))
    param("b2", (0.02 * rng.standard_normal(d_model)).astype(np.float32))
    param("heads_shape", np.array([0, 0, heads, dh], np.int64))
    param("model_shape", np.array([0, 0, d_model], np.int64))
    param("scale", np.array(1 / np.sqrt(dh), np.float32))

    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln1_scale", "ln1_bias"], ["ln1"], axis=-1, epsilon=1e-5, name="ln1"),
    ]
    for k in ("q", "k", "v"):
        nodes += [
            n("MatMul", ["ln1", f"w{k}"], [f"{k}_mm"], name=f"{k}_proj"),
            n("Add", [f"{k}_mm", f"b{k}"], [f"{k}_b"], name=f"{k}_bias"),
            n("Reshape", [f"{k}_b", "heads_shape"], [f"{k}_h"], name=f"{k}_split_heads"),
        ]
    nodes += [
        n("Transpose", ["q_h"], ["q_t"], perm=[0, 2, 1, 3], name="q_transpose"),
        n("Transpose", ["k_h"], ["k_t"], perm=[0, 2, 3, 1], name="k_transpose"),
        n("Transpose", ["v_h"], ["v_t"], perm=[0, 2, 1, 3], name="v_transpose"),
        n("MatMul", ["q_t", "k_t"], ["scores"], name="scores"),
        n("Mul", ["scores", "scale"], ["scaled"], name="scale_scores"),
        n("Softmax", ["scaled"], ["attention"], axis=-1, name="softmax"),
        n("MatMul", ["attention", "v_t"], ["context"], name="context"),
        n("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3], name="merge_transpose"),
        n("Reshape", ["context_t", "model_shape"], ["context_m"], name="merge_heads"),
        n("MatMul", ["context_m", "wo"], ["o_mm"], name="o_proj"),
        n("Add", ["o_mm", "bo"], ["o_b"], name="o_bias"),
        n("Add", ["x", "o_b"], ["residual1"], name="residual1"),
        n("LayerNormalization", ["residual1", "ln2_scale", "ln2_bias"], ["ln2"], axis=-1, epsilon=1e-5,
          name="ln2"),
        n("MatMul", ["ln2", "w1"], ["f1_mm"], name="ffn1"),
        n("Add", ["f1_mm", "b1"], ["f1"], name="ffn1_bias"),
        n("Gelu", ["f1"], ["gelu"], name="gelu"),
        n("MatMul", ["gelu", "w2"], ["f2_mm"], name="ffn2"),
        n("Add", ["f2_mm", "b2"], ["f2"], name="ffn2_bias"),
        n("Add", ["residual1", "f2"], ["y"], name="residual2"),
    ]
    graph = helper.make_graph(
        nodes, "transformer_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d_model])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", d_model])],
        initializer=list(init.values()))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10,
                             producer_name="normops.onnx.examples")


def transformer_input(batch=1, seq=32, d_model=64, *, seed=1):
    return np.random.default_rng(seed).standard_normal((batch, seq, d_model)).astype(np.float32)


def conv_block(channels=32, groups=8, *, seed=0, opset=21):
    """A residual block on x of shape (batch, channels, height, width):
    x + SiLU(GN(Conv(SiLU(GN(Conv(x)))))), SiLU(t) = t * Sigmoid(t), 3x3
    convolutions with padding 1."""
    if channels % groups:
        raise ValueError(f"conv_block: channels={channels} is not a multiple of groups={groups}")
    rng = np.random.default_rng(seed)
    init = []
    n = helper.make_node
    nodes = []
    prev = "x"
    for k in (1, 2):
        init += [
            numpy_helper.from_array(_weights(rng, (channels, channels, 3, 3), 9 * channels), f"conv{k}_w"),
            numpy_helper.from_array((0.02 * rng.standard_normal(channels)).astype(np.float32), f"conv{k}_b"),
            numpy_helper.from_array((1 + 0.1 * rng.standard_normal(channels)).astype(np.float32), f"gn{k}_scale"),
            numpy_helper.from_array((0.1 * rng.standard_normal(channels)).astype(np.float32), f"gn{k}_bias"),
        ]
        nodes += [
            n("Conv", [prev, f"conv{k}_w", f"conv{k}_b"], [f"conv{k}"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
              name=f"conv{k}"),
            n("GroupNormalization", [f"conv{k}", f"gn{k}_scale", f"gn{k}_bias"], [f"gn{k}"], num_groups=groups,
              epsilon=1e-5, name=f"gn{k}"),
            n("Sigmoid", [f"gn{k}"], [f"sig{k}"], name=f"sigmoid{k}"),
            n("Mul", [f"gn{k}", f"sig{k}"], [f"silu{k}"], name=f"silu{k}"),
        ]
        prev = f"silu{k}"
    nodes.append(n("Add", ["x", prev], ["y"], name="residual"))
    shape = ["batch", channels, "height", "width"]
    graph = helper.make_graph(
        nodes, "conv_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], initializer=init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10,
                             producer_name="normops.onnx.examples")


def conv_input(batch=1, channels=32, size=16, *, seed=1):
    return np.random.default_rng(seed).standard_normal((batch, channels, size, size)).astype(np.float32)

