"""normops: exact, deterministic and fast ONNX normalisation, softmax and
reduction operators.

>>> import numpy as np, normops
>>> x = np.random.default_rng(0).standard_normal((4, 8), dtype=np.float32)
>>> y = normops.layer_normalization(x, np.ones(8, np.float32), np.zeros(8, np.float32))
"""
from ._config import config, get_config, get_num_threads, set_config, set_num_threads
from ._errors import InvalidInputError, UnsupportedError
from ._info import show_config
from ._registry import MAX_OPSET, run
from .batch import imap_batch, map_batch
from ._version import __version__
from .normalization import layer_normalization, rms_normalization, simplified_layer_normalization
from .activation import sigmoid
from .gelu import bias_gelu, gelu
from .softmax import hardmax
from .softmax import scipy_log_softmax as log_softmax
from .softmax import scipy_softmax as softmax
from .transcendental import exp32, log32
from . import ops, reference  # noqa: E402  (needs the operators registered above)

__all__ = [
    "__version__", "MAX_OPSET",
    "InvalidInputError", "UnsupportedError",
    "config", "get_config", "set_config", "get_num_threads", "set_num_threads", "show_config",
    "run", "reference",
    "map_batch", "imap_batch",
    "layer_normalization", "rms_normalization", "simplified_layer_normalization",
    "hardmax", "sigmoid", "softmax", "log_softmax", "ops",
    "exp32", "log32",
    "gelu", "bias_gelu",
]
