# One kernel build (ISA level) as the rest of normops calls it:
# ``normops._isa.kernels`` (the chosen build) and ``normops._isa.load(level)``.
# The build's own module (isa_<level>.pyx) holds only the nogil loops and
# their table (kernel_table.pxd). Its entry points are written here, in the
# routes module, compiled once (the <family>_entry.pxi files): they check
# the arrays, place the outputs and call the loops through the table. Each
# is a module function taking the build first, listed below so that it is
# a method of the build.


cdef class KernelBuild:
    """The kernel build of one ISA level: its entry points as methods
    (``build.exp32_into(x, out)``), ``ISA_LEVEL`` and ``KERNEL_TABLE``."""
    cdef KernelTable* table
    cdef readonly object KERNEL_TABLE
    cdef readonly str ISA_LEVEL
    cdef dict __dict__  # a test may stand a spy in for an entry point

    # transcendental_entry.pxi
    exp32_into = exp32_into
    log32_into = log32_into
    exp32_fast_into = exp32_fast_into
    log1p32_into = log1p32_into
    log1p64_into = log1p64_into
    exp64_into = exp64_into
    log64_into = log64_into
    exp32_pair_into = exp32_pair_into
    log32_pair_into = log32_pair_into
    exp32_range = exp32_range
    log32_range = log32_range
    log1p32_range = log1p32_range
    exp32_fast_range = exp32_fast_range
    has_long_double_reference = has_long_double_reference
    exp32_reference_range = exp32_reference_range
    log32_reference_range = log32_reference_range
    log1p32_reference_range = log1p32_reference_range
    exp32_reference_into = exp32_reference_into
    log32_reference_into = log32_reference_into
    log1p32_reference_into = log1p32_reference_into
    # gelu_entry.pxi
    erf32_into = erf32_into
    tanh32_into = tanh32_into
    erf64_into = erf64_into
    tanh64_into = tanh64_into
    erf32_fast_into = erf32_fast_into
    tanh32_fast_into = tanh32_fast_into
    gelu_flat = gelu_flat
    # activation_entry.pxi
    sigmoid_flat = sigmoid_flat
    sigmoid_direct = sigmoid_direct
    # row_divide_entry.pxi
    row_divide = row_divide
    lp_columns = lp_columns
    row_sums16 = row_sums16
    # sum16_entry.pxi
    sum16_rows = sum16_rows
    # transpose_entry.pxi
    swap_blocks = swap_blocks
    # tuning_entry.pxi
    set_stream_threshold = set_stream_threshold
    set_softmax_short_rows = set_softmax_short_rows
    set_softmax_divide_in_pass = set_softmax_divide_in_pass
    set_softmax_group_elements = set_softmax_group_elements
    set_apply_in_cache_bytes = set_apply_in_cache_bytes
    set_side_by_side_bytes = set_side_by_side_bytes
    set_transpose_tile = set_transpose_tile
    # reduction_entry.pxi
    reduce_accumulate = reduce_accumulate
    reduce_finish = reduce_finish
    reduce_direct = reduce_direct
    # numpy_style_entry.pxi
    reduce_where_direct = reduce_where_direct
    variance_direct = variance_direct
    # arg_reduce_entry.pxi
    arg_reduce = arg_reduce
    arg_direct = arg_direct
    # cumulative_entry.pxi
    cumulate = cumulate
    cum_direct = cum_direct
    # softmax_entry.pxi
    softmax_rows = softmax_rows
    softmax_last_axis = softmax_last_axis
    softmax_columns = softmax_columns
    divide_float_into = divide_float_into
    softmax_direct = softmax_direct
    # normalization_entry.pxi
    row_normalize = row_normalize
    row_normalize_nd = row_normalize_nd
    channel_normalize_nd = channel_normalize_nd
    batch_normalization_training = batch_normalization_training

    def __init__(self, module):
        """The build of an imported isa_<level> module."""
        self.KERNEL_TABLE = module.KERNEL_TABLE
        self.table = table_of(module)
        self.ISA_LEVEL = module.ISA_LEVEL
        # the build counts its threads in the process's one budget and keeps
        # its figures in the one state (before any of its loops runs)
        self.table.use_team_state(normops_budget_state())

    def __repr__(self):
        return f"<normops kernel build {self.ISA_LEVEL!r}>"
