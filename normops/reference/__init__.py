"""The executable specification: a slow, readable pure-NumPy model of the
exact flavour.

``normops.reference.run(...)`` takes the arguments of ``normops.run``, goes
through the same validation, and computes every output with the model
instead of the kernels. The tests compare the two bit for bit.
"""
from ._normalization import layer_normalization, rms_normalization, simplified_layer_normalization
from ._sum16 import canonical_nan, sum16
from ._channel_normalization import batch_normalization, group_normalization, instance_normalization
from ._row_divide import lp_normalization, mean_variance_normalization

__all__ = ["run", "sum16", "canonical_nan", "layer_normalization", "rms_normalization",
           "simplified_layer_normalization",
           "mean_variance_normalization", "lp_normalization",
           "instance_normalization", "group_normalization", "batch_normalization"]

from ._arg_reduce import arg_reduce  # noqa: E402  (ArgMax, ArgMin)
from ._cumulative import cum_prod, cum_sum  # noqa: E402  (CumSum, CumProd)

__all__ += ["arg_reduce", "cum_sum", "cum_prod"]


def run(op_type, inputs, attributes=None, *, opset=None, domain="", mode=None, n_threads=None):
    """Like ``normops.run``, through the executable specification.

    Only the exact flavour is modelled (``mode`` None or "exact");
    ``n_threads`` is accepted for symmetry and has no effect.
    """
    from .._registry import lookup

    return lookup(op_type, domain).run_reference(inputs, attributes, opset, mode, n_threads)
