"""Every ONNX operator normops serves, as one function each, named after
the operator in snake_case (ONNX inputs positional, attributes keyword-only,
plus ``opset=``, ``mode=``, ``n_threads=``, ``full_output=``).

Most are also at the top level (``normops.layer_normalization``...). Softmax
and LogSoftmax are here only: at the top level ``normops.softmax`` and
``normops.log_softmax`` follow SciPy's ``scipy.special`` signatures.
"""
from .activation import sigmoid
from .channel_normalization import batch_normalization, group_normalization, instance_normalization
from .arg_reduce import arg_max, arg_min
from .cumulative import cum_sum
from .cumulative import cum_prod
from .gelu import bias_gelu, gelu
from .normalization import layer_normalization, rms_normalization, simplified_layer_normalization
from .row_divide import lp_normalization, mean_variance_normalization
from .reduction import (
    reduce_l1, reduce_l2, reduce_log_sum, reduce_log_sum_exp, reduce_max, reduce_mean, reduce_min,
    reduce_prod, reduce_sum, reduce_sum_square,
)
from .softmax import hardmax, log_softmax, softmax

__all__ = [
    "layer_normalization", "rms_normalization", "simplified_layer_normalization",
    "softmax", "log_softmax", "hardmax", "sigmoid",
    "instance_normalization", "group_normalization", "batch_normalization",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1", "reduce_l2",
    "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp",
    "mean_variance_normalization", "lp_normalization",
    "arg_max", "arg_min", "cum_sum",
    "gelu", "bias_gelu",
    "cum_prod",
]
