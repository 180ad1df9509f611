"""Deprecated name of :mod:`normops.numpy_style` (the NumPy- and SciPy-style
functions), kept so that old imports work; it warns once when imported."""
import warnings

from . import numpy_style as _numpy_style

warnings.warn("normops.numpy_reductions is deprecated: import normops.numpy_style",
              DeprecationWarning, stacklevel=2)


def __getattr__(name):
    return getattr(_numpy_style, name)


def __dir__():
    return dir(_numpy_style)
