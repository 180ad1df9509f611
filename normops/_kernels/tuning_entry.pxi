# A build's tuning knobs (kernel_table.pxd, Knob), set from Python by
# benchmarks and tests: sizes and switches that change speed, never bits.
# Methods of the build (kernel_build.pxi); each returns the old setting.


def set_stream_threshold(KernelBuild build, Py_ssize_t nbytes):
    """Change the output size from which Softmax, LogSoftmax and Sigmoid
    stream their float32 results (benchmarks and tests; the bits do not
    depend on it); returns the old one."""
    return build.table.tune(KNOB_STREAM_FROM_BYTES, max(0, nbytes))


def set_softmax_short_rows(KernelBuild build, bint on):
    """Switch the sixteen-row code of short rows on or off (tests compare
    the two); returns the previous setting."""
    return build.table.tune(KNOB_SOFTMAX_SHORT_ROWS, on) != 0


def set_softmax_divide_in_pass(KernelBuild build, bint on):
    """Switch Softmax's and LogSoftmax's last pass inside the next row's
    pass (the division, the product by the reciprocal, or the difference)
    on or off (tests compare the two); returns the previous setting."""
    return build.table.tune(KNOB_SOFTMAX_DIVIDE_IN_PASS, on) != 0


def set_softmax_group_elements(KernelBuild build, Py_ssize_t elements, bint log_softmax=False):
    """Change the element budget of a group of Softmax (or LogSoftmax) rows
    (benchmarks tune it; the bits do not depend on it); returns the old one."""
    return build.table.tune(KNOB_LOG_SOFTMAX_GROUP_ELEMENTS if log_softmax else KNOB_SOFTMAX_GROUP_ELEMENTS,
                            max(0, elements))


def set_apply_in_cache_bytes(KernelBuild build, Py_ssize_t nbytes):
    """Change the size of a row range from which the row normalisations'
    last step keeps its inlined loop (APPLY_IN_CACHE_BYTES; results do not
    depend on it); returns the old one."""
    return build.table.tune(KNOB_APPLY_IN_CACHE_BYTES, max(0, nbytes))


def set_side_by_side_bytes(KernelBuild build, Py_ssize_t nbytes):
    """Change the byte budget of a group of rows summed side by side
    (benchmarks tune it; results do not depend on it); returns the old one."""
    return build.table.tune(KNOB_SIDE_BY_SIDE_BYTES, max(0, nbytes))


def set_transpose_tile(KernelBuild build, Py_ssize_t elements):
    """Change the tile edge of swap_blocks (tests and benchmarks; the
    copy does not depend on it); returns the old one."""
    return build.table.tune(KNOB_TRANSPOSE_TILE, max(1, elements))
