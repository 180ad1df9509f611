"""Every ONNX operator normops serves, as one function each, named after
the operator in snake_case (ONNX inputs positional, attributes keyword-only,
plus ``opset=``, ``mode=``, ``n_threads=``, ``full_output=``).

Most are also at the top level (``normops.layer_normalization``...). Softmax
and LogSoftmax are here only: at the top level ``normops.softmax`` and
``normops.log_softmax`` follow SciPy's ``scipy.special`` signatures.
"""
from .activation import sigmoid
from .gelu import bias_gelu, gelu
from .normalization import layer_normalization, rms_normalization, simplified_layer_normalization
from .softmax import hardmax, log_softmax, softmax

__all__ = [
    "layer_normalization", "rms_normalization", "simplified_layer_normalization",
    "softmax", "log_softmax", "hardmax", "sigmoid",
    "gelu", "bias_gelu",
]
