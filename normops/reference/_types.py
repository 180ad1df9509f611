"""The type rule the families share (docs/specification.md §4): float16 and
bfloat16 are computed in float32 (widened exactly), every other dtype in
itself."""
import numpy as np

_FLOAT32 = np.dtype(np.float32)


def widened(x):
    """float16 / bfloat16 widened exactly to float32; other dtypes as they are."""
    if x.dtype.itemsize == 2 and (x.dtype.kind == "f" or x.dtype.name == "bfloat16"):
        return x.astype(_FLOAT32)
    return x
