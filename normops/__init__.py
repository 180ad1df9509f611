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
from .channel_normalization import batch_normalization, group_normalization, instance_normalization
from .row_divide import lp_normalization, mean_variance_normalization
from .gelu import bias_gelu, gelu
from .softmax import hardmax
from .softmax import scipy_log_softmax as log_softmax
from .softmax import scipy_softmax as softmax
from .transcendental import exp32, log1p32, log32
from .reduction import (
    reduce_l1, reduce_l2, reduce_log_sum, reduce_log_sum_exp, reduce_max, reduce_mean, reduce_min,
    reduce_prod, reduce_sum, reduce_sum_square,
)
from .numpy_style import amax, amin, logsumexp, max, mean, min, prod, std, sum, var  # noqa: A004
from .arg_reduce import argmax, argmin
from .cumulative import cumsum
from .cumulative import cumprod
from . import ops, reference  # noqa: E402  (needs the operators registered above)
from . import _threads

_threads.read_core_cache()  # where a loop's data leave one core's cache
_threads.pin_from_environment()  # NORMOPS_THREAD_COSTS

__all__ = [
    "__version__", "MAX_OPSET",
    "InvalidInputError", "UnsupportedError",
    "config", "get_config", "set_config", "get_num_threads", "set_num_threads", "show_config",
    "run", "reference",
    "map_batch", "imap_batch",
    "layer_normalization", "rms_normalization", "simplified_layer_normalization",
    "hardmax", "sigmoid", "softmax", "log_softmax", "ops",
    "instance_normalization", "group_normalization", "batch_normalization",
    "exp32", "log32", "log1p32",
    "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1", "reduce_l2",
    "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp",
    # normops.sum, normops.max and normops.min are public too, but left out of
    # __all__ on purpose: `from normops import *` must not shadow the builtins.
    "mean", "amax", "amin", "prod", "logsumexp", "var", "std",
    "mean_variance_normalization", "lp_normalization",
    "argmax", "argmin", "cumsum",
    "gelu", "bias_gelu",
    "cumprod",
]
