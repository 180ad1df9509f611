# Row normalisation: LayerNormalization, RMSNormalization and
# SimplifiedLayerNormalization (docs/specification.md §6.3, steps 1-4),
# and through a RowParams layout InstanceNormalization, GroupNormalization
# and BatchNormalization (docs/specification.md §7).

from libc.string cimport memcpy, memset
from libc.math cimport sqrt, sqrtf, NAN, INFINITY
from libc.float cimport FLT_MAX, DBL_MAX

cdef extern from "normalization_apply.h" nogil:
    void normops_normalize_apply_float(const float* x, float* y, const float* scale, const float* bias,
                                     float mean, float inv, Py_ssize_t n, int check_nan)
    void normops_normalize_apply_double(const double* x, double* y, const double* scale, const double* bias,
                                      double mean, double inv, Py_ssize_t n, int check_nan)


# RowParams (how Scale/B map onto the rows) and param_count: kernel_table.pxd,
# which the routes share.


cdef inline floating ieee_sqrt(floating v) noexcept nogil:
    # Built with -fno-math-errno: this is the sqrtss/sqrtsd instruction.
    if floating is float:
        return sqrtf(v)
    else:
        return sqrt(v)


cdef inline float stat_to_float32(floating v) noexcept nogil:
    """Statistics outputs are float32: round once, canonical NaN."""
    cdef float r = <float>v
    return r if r == r else <float>NAN


cdef inline bint is_finite(double v) noexcept nogil:
    return v - v == 0  # false for inf and NaN


cdef inline double magnitude_sum(const floating* p, Py_ssize_t n) noexcept nogil:
    """Sum of |p[j]| (0 for NULL): a bound on every |p[j]| that is
    infinite or NaN when some p[j] is not finite."""
    cdef floating total = 0
    if p != NULL:
        sum16_side_by_side(p, 0, 1, n, NULL, NORMOPS_TERM_ABSOLUTE, &total, NULL)
    return total


cdef inline bint nan_free_params(const floating* scale, const floating* bias,
                                 Py_ssize_t nparams, floating epsilon, Py_ssize_t cols) noexcept nogil:
    """True when step 4 cannot produce a NaN in a row whose statistics are
    finite, so the row may skip the per-element NaN check.

    In such a row (variance finite, inv finite, epsilon >= 0) every
    d = x - mean is finite and |d * inv| <= 2 sqrt(cols) + 1: d * d <= the
    variance sum, and subnormal rounding loses at most a factor 2. With
    finite Scale and B and this margin, y stays finite: no inf * 0, no
    inf - inf, no overflow. Rows that fail the test take the checked path,
    which gives the same bits whenever no NaN occurs. The sums of |Scale|
    and |B| over their nparams values bound every one of them.
    """
    cdef double bound
    if not epsilon >= 0:
        return False
    bound = (4.0 * sqrt(<double>cols) + 4.0) * magnitude_sum(scale, nparams) * 2.0 \
        + magnitude_sum(bias, nparams) * 2.0
    if floating is float:
        return bound < FLT_MAX
    else:
        return bound < DBL_MAX  # an overflowed (inf) or NaN bound fails too


cdef void inverse_std(const floating* var, floating* inv, Py_ssize_t n, floating epsilon) noexcept nogil:
    """Step 3 on supplied variances: inv[k] = 1 / sqrt(var[k] + epsilon)."""
    cdef floating one = 1
    cdef Py_ssize_t k
    for k in range(n):
        inv[k] = one / ieee_sqrt(var[k] + epsilon)


cdef inline floating canonical(floating v, bint check_nan) noexcept nogil:
    if check_nan:
        return v if v == v else <floating>NAN
    return v


cdef inline void normalize_apply(
    const floating* xr, floating* yr, const floating* scale, const floating* bias,
    floating mean, floating inv, Py_ssize_t cols, bint check_nan, bint in_cache,
) noexcept nogil:
    """Step 4 over one row: four separately rounded operations (three
    without B), NaN canonicalised unless the row is known NaN-free
    (check_nan is a constant at each call site). Rows normalised in groups
    (short rows) or from a range that stays in the cache (in_cache) take
    normalization_apply.h's loop, which gcc compiles without the spills it makes
    in this large inlined one (LayerNormalization 64x1024 0.84x of the time,
    4096x1024 0.91x, float64 64x1024 0.88x); long rows taken one at a time
    from memory keep this loop, which ran 4-10% faster there (1024x4096,
    256x4096, 512x8192; Zen 2, interleaved)."""
    cdef Py_ssize_t j
    if in_cache:
        if floating is float:
            normops_normalize_apply_float(xr, yr, scale, bias, mean, inv, cols, check_nan)
        else:
            normops_normalize_apply_double(xr, yr, scale, bias, mean, inv, cols, check_nan)
    elif bias != NULL:
        for j in range(cols):
            yr[j] = canonical((((xr[j] - mean) * inv) * scale[j]) + bias[j], check_nan)
    else:
        for j in range(cols):
            yr[j] = canonical(((xr[j] - mean) * inv) * scale[j], check_nan)


cdef inline void normalize_apply_scalar(
    const floating* xr, floating* yr, floating s, floating b, bint has_bias,
    floating mean, floating inv, Py_ssize_t n, bint check_nan,
) noexcept nogil:
    """Step 4 over n elements sharing one scale s and bias b (the same
    four rounded operations as normalize_apply)."""
    cdef Py_ssize_t j
    if has_bias:
        for j in range(n):
            yr[j] = canonical((((xr[j] - mean) * inv) * s) + b, check_nan)
    else:
        for j in range(n):
            yr[j] = canonical(((xr[j] - mean) * inv) * s, check_nan)


cdef inline void normalize_apply_given(
    const floating* xr, floating* yr, const floating* scale, const floating* bias,
    const floating* mean, const floating* inv, Py_ssize_t cols, bint check_nan,
) noexcept nogil:
    """Step 4 with every operand a vector along the row (supplied
    statistics, one element per channel): the same four rounded operations."""
    cdef Py_ssize_t j
    if bias != NULL:
        for j in range(cols):
            yr[j] = canonical((((xr[j] - mean[j]) * inv[j]) * scale[j]) + bias[j], check_nan)
    else:
        for j in range(cols):
            yr[j] = canonical(((xr[j] - mean[j]) * inv[j]) * scale[j], check_nan)


cdef inline void normalize_apply_row(
    const floating* xr, floating* yr, const floating* scale, const floating* bias,
    floating mean, floating inv, Py_ssize_t cols, const RowParams* p, Py_ssize_t row,
    bint check_nan, bint in_cache,
) noexcept nogil:
    """Step 4 over row number ``row`` with the parameters p assigns it
    (given statistics, when p has them, replace mean and inv per segment);
    in_cache as normalize_apply takes it."""
    cdef Py_ssize_t i, k, segs, first
    cdef const floating* bias_row
    if p.period == 0:
        normalize_apply(xr, yr, scale, bias, mean, inv, cols, check_nan, in_cache)
        return
    segs = cols // p.seg_len
    first = (row % p.period) * segs
    if p.seg_len == 1:
        # one element per segment (no spatial dimensions): the parameters
        # are vectors along the row, one loop without per-segment set-up
        bias_row = bias
        if bias_row != NULL:
            bias_row = bias_row + first
        if p.given_mean == NULL:
            normalize_apply(xr, yr, scale + first, bias_row, mean, inv, cols, check_nan, in_cache)
        else:
            normalize_apply_given(xr, yr, scale + first, bias_row, <const floating*>p.given_mean + first,
                                  <const floating*>p.given_inv + first, cols, check_nan)
        return
    for i in range(segs):
        k = first + i
        if p.given_mean != NULL:
            mean = (<const floating*>p.given_mean)[k]
            inv = (<const floating*>p.given_inv)[k]
        normalize_apply_scalar(xr + i * p.seg_len, yr + i * p.seg_len, scale[k],
                               bias[k] if bias != NULL else 0, bias != NULL,
                               mean, inv, p.seg_len, check_nan)


cdef inline void normalize_row_group(
    const floating* x, floating* y,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    int nrows, Py_ssize_t cols, floating epsilon, bint center,
    bint params_nan_free, const floating* prefetch, const RowParams* p, Py_ssize_t row, bint in_cache,
) noexcept nogil:
    """Normalise nrows (a constant 1, 2 or 4) consecutive rows x -> y, the
    first being row number ``row``, their statistics to mean_out[0..nrows)
    and inv_out[0..nrows) (each may be NULL). The rows' sums run side by
    side, each in its own canonical order. ``prefetch`` (or NULL) is the
    next group's first row; in_cache: the caller's rows stay in the cache
    (normalize_apply), as a group's always do."""
    cdef floating n = <floating>cols
    cdef bint apply_in_cache = in_cache or nrows > 1  # constants: folded in each copy
    cdef floating one = 1
    cdef floating mean[MAX_ROWS_SIDE_BY_SIDE]
    cdef floating var[MAX_ROWS_SIDE_BY_SIDE]
    cdef floating inv
    cdef int r
    if p.given_mean != NULL:
        # supplied statistics: anything may be NaN, so every element is checked
        for r in range(nrows):
            normalize_apply_row(x + r * cols, y + r * cols, scale, bias, 0, 0, cols, p, row + r, True,
                                apply_in_cache)
        return
    # step 1 (RMS: the mean is 0 and not computed)
    if center:
        sum16_side_by_side(x, cols, nrows, cols, NULL, NORMOPS_TERM_VALUE, mean, NULL)
        for r in range(nrows):
            mean[r] = mean[r] / n
    else:
        for r in range(nrows):
            mean[r] = 0
    # step 2: separately rounded difference and square (the rows are in
    # cache by now: the next group is prefetched meanwhile)
    sum16_side_by_side(x, cols, nrows, cols, mean, NORMOPS_TERM_SQUARED_DEVIATION, var, prefetch)
    for r in range(nrows):
        var[r] = var[r] / n
        # step 3
        inv = one / ieee_sqrt(var[r] + epsilon)
        # step 4
        if params_nan_free and is_finite(var[r]) and is_finite(inv):
            normalize_apply_row(x + r * cols, y + r * cols, scale, bias, mean[r], inv, cols, p, row + r, False,
                                apply_in_cache)
        else:
            normalize_apply_row(x + r * cols, y + r * cols, scale, bias, mean[r], inv, cols, p, row + r, True,
                                apply_in_cache)
        if p.mean_native != NULL:
            (<floating*>p.mean_native)[row + r] = canonical(mean[r], True)
        if p.var_native != NULL:
            (<floating*>p.var_native)[row + r] = canonical(var[r], True)
        if p.inv_native != NULL:
            (<floating*>p.inv_native)[row + r] = canonical(inv, True)
        if mean_out != NULL:
            mean_out[r] = stat_to_float32(mean[r])
        if inv_out != NULL:
            inv_out[r] = stat_to_float32(inv)


cdef inline float* offset_or_null(float* p, Py_ssize_t i) noexcept nogil:
    return NULL if p == NULL else p + i


cdef inline int rows_side_by_side(Py_ssize_t row_bytes) noexcept nogil:
    """4 rows per group when they stay in L1 between passes, else 1. Never
    2: groups of two rows ran about 50% slower per element than single rows
    (RMS and LayerNormalization, float32, AVX-512: 1536 and 2048 columns
    with the 16 KiB budget, 3584 with a 32 KiB one), while
    single rows match groups of four from 256 columns on (groups of four
    pay off on short rows). Pairs still finish a group of four at the end
    of a row range."""
    if 4 * row_bytes <= SIDE_BY_SIDE_BYTES:
        return 4
    return 1


cdef inline int next_group(Py_ssize_t r, Py_ssize_t row_end, int group) noexcept nogil:
    """Rows in the group starting at row r: the group size, fewer at the end."""
    if group >= 4 and r + 4 <= row_end:
        return 4
    if group >= 2 and r + 2 <= row_end:
        return 2
    return 1


cdef inline void normalize_group(
    int nrows, const floating* x, floating* y,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out, Py_ssize_t cols, floating epsilon, bint center,
    bint params_nan_free, const floating* prefetch, const RowParams* p, Py_ssize_t row, bint in_cache,
) noexcept nogil:
    """normalize_row_group with nrows turned into a constant (1, 2 or 4)."""
    if nrows == 4:
        normalize_row_group(x, y, scale, bias, mean_out, inv_out, 4, cols, epsilon, center,
                            params_nan_free, prefetch, p, row, in_cache)
    elif nrows == 2:
        normalize_row_group(x, y, scale, bias, mean_out, inv_out, 2, cols, epsilon, center,
                            params_nan_free, prefetch, p, row, in_cache)
    else:
        normalize_row_group(x, y, scale, bias, mean_out, inv_out, 1, cols, epsilon, center,
                            params_nan_free, prefetch, p, row, in_cache)


cdef inline void normalize_rows_of(
    const floating* x, floating* y,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t row_begin, Py_ssize_t row_end, Py_ssize_t cols,
    floating epsilon, bint center, bint params_nan_free, const RowParams* p, bint in_cache,
) noexcept nogil:
    """Normalise rows [row_begin, row_end) of the rows x cols matrix x
    (bias, mean_out and inv_out may be NULL), in groups of rows summed
    side by side; the next group is prefetched meanwhile. in_cache (a
    constant in each caller below): normalize_apply."""
    cdef Py_ssize_t r = row_begin
    cdef int group = rows_side_by_side(cols * sizeof(floating)), nrows
    while r < row_end:
        nrows = next_group(r, row_end, group)
        normalize_group(nrows, x + r * cols, y + r * cols, scale, bias,
                        offset_or_null(mean_out, r), offset_or_null(inv_out, r),
                        cols, epsilon, center, params_nan_free,
                        x + (r + nrows) * cols if r + 2 * nrows <= row_end else NULL, p, r, in_cache)
        r += nrows


cdef void normalize_rows(
    const floating* x, floating* y,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t row_begin, Py_ssize_t row_end, Py_ssize_t cols,
    floating epsilon, bint center, bint params_nan_free, const RowParams* p,
) noexcept nogil:
    """normalize_rows_of a range of rows from memory"""
    normalize_rows_of(x, y, scale, bias, mean_out, inv_out, row_begin, row_end, cols, epsilon, center,
                      params_nan_free, p, False)


cdef void normalize_rows_in_cache(
    const floating* x, floating* y,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t row_begin, Py_ssize_t row_end, Py_ssize_t cols,
    floating epsilon, bint center, bint params_nan_free, const RowParams* p,
) noexcept nogil:
    """normalize_rows_of a range of rows that stays in the cache"""
    normalize_rows_of(x, y, scale, bias, mean_out, inv_out, row_begin, row_end, cols, epsilon, center,
                      params_nan_free, p, True)


cdef void normalize_rows_converting(
    const void* x, Storage x_storage, void* y, Storage y_storage,
    const float* scale, const float* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t row_begin, Py_ssize_t row_end, Py_ssize_t cols,
    float epsilon, bint center, bint params_nan_free, float* scratch, const RowParams* p,
) noexcept nogil:
    """normalize_rows for float32 arithmetic on float16 / bfloat16 storage
    (docs/specification.md §4.2): each group of rows is widened exactly into a float32
    scratch of group_scratch_size(cols) floats, normalised there unchanged
    (in place: step 4 reads each element before writing it), and each
    result rounded once into y."""
    cdef Py_ssize_t r = row_begin
    cdef int group = rows_side_by_side(cols * sizeof(float)), nrows
    while r < row_end:
        nrows = next_group(r, row_end, group)
        if x_storage == STORE_FLOAT32:
            memcpy(scratch, <const float*>x + r * cols, nrows * cols * sizeof(float))
        else:
            widen_rows(x, x_storage, r * cols, scratch, nrows * cols)
        normalize_group(nrows, scratch, scratch, scale, bias,
                        offset_or_null(mean_out, r), offset_or_null(inv_out, r),
                        cols, epsilon, center, params_nan_free, NULL, p, r, True)
        if y_storage == STORE_FLOAT32:
            memcpy(<float*>y + r * cols, scratch, nrows * cols * sizeof(float))
        else:
            narrow_rows(scratch, y, y_storage, r * cols, nrows * cols)
        r += nrows


cdef inline Py_ssize_t group_scratch_size(Py_ssize_t cols) noexcept nogil:
    """Floats of scratch one thread needs for narrow storage."""
    return rows_side_by_side(cols * sizeof(float)) * cols


cdef inline void normalize_range(
    const void* x, Storage x_storage, void* y, Storage y_storage,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t begin, Py_ssize_t end, Py_ssize_t cols,
    floating epsilon, bint center, bint params_nan_free, float* scratch, const RowParams* p,
) noexcept nogil:
    if floating is float:
        if x_storage != STORE_FLOAT32 or y_storage != STORE_FLOAT32:
            normalize_rows_converting(x, x_storage, y, y_storage, scale, bias, mean_out, inv_out,
                                      begin, end, cols, epsilon, center, params_nan_free, scratch, p)
            return
    if (end - begin) * cols * <Py_ssize_t>sizeof(floating) <= APPLY_IN_CACHE_BYTES:
        normalize_rows_in_cache(<const floating*>x, <floating*>y, scale, bias, mean_out, inv_out,
                                begin, end, cols, epsilon, center, params_nan_free, p)
    else:
        normalize_rows(<const floating*>x, <floating*>y, scale, bias, mean_out, inv_out,
                       begin, end, cols, epsilon, center, params_nan_free, p)


cdef void normalize_chunks(
    const void* x, Storage x_storage, void* y, Storage y_storage,
    const floating* scale, const floating* bias,
    float* mean_out, float* inv_out,
    Py_ssize_t rows, Py_ssize_t cols,
    floating epsilon, bint center, int threads, int requested, float* scratch, const RowParams* p,
) noexcept nogil:
    """Split the rows into chunks of max(1, 16384 // cols) rows, one chunk per
    task, on ``threads`` threads (from row_chunk_threads). Rows are
    independent, so the bits never depend on the threads. Storage other
    than float32/float64 needs float32 arithmetic and a scratch of
    threads * group_scratch_size(cols) floats."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    cdef Py_ssize_t chunks = (rows + per_chunk - 1) // per_chunk
    cdef Py_ssize_t c, slot = group_scratch_size(cols)
    cdef bint params_nan_free = nan_free_params(scale, bias, param_count(p, cols), epsilon, cols)
    # a team of one (also the budget's share while other calls run) takes
    # the rows as one range: chunks would cut the row-to-row pipeline
    cdef int taken = team_take(threads, requested) if threads > 1 else 0
    if taken <= 1:
        serial_begin()
        normalize_range(x, x_storage, y, y_storage, scale, bias, mean_out, inv_out,
                        0, rows, cols, epsilon, center, params_nan_free, scratch, p)
        serial_end()
    else:
        for c in prange(chunks, schedule="dynamic", num_threads=taken):
            normops_team_claims(claimed)
            normalize_range(x, x_storage, y, y_storage, scale, bias, mean_out, inv_out,
                            c * per_chunk, min((c + 1) * per_chunk, rows), cols, epsilon, center,
                            params_nan_free,
                            NULL if scratch == NULL else scratch + omp_get_thread_num() * slot, p)
    if taken:
        team_release(taken)


cdef inline int row_chunk_threads(int n_threads, Py_ssize_t rows, Py_ssize_t cols,
                                  int family=NORMOPS_COST_ROWS) noexcept nogil:
    """The threads a loop over row chunks (normalize_chunks, the row
    divides) will use."""
    cdef Py_ssize_t per_chunk = max(1, ROW_CHUNK_ELEMENTS // cols)
    return threads_for(n_threads, (rows + per_chunk - 1) // per_chunk, rows * cols, family)


# ------------------------------------------------ the loops the table offers
# Their entry points, which check the arrays and place the outputs:
# normalization_entry.pxi (the routes module).

cdef int normalize_stored_rows(
    const void* px, Storage xs, void* py, Storage ys, const void* ps, Storage ss, const void* pb, int bs,
    float* mean_out, float* inv_out, Py_ssize_t rows, Py_ssize_t cols,
    double epsilon, bint center, int n_threads, const RowParams* p,
) noexcept nogil:
    """The rows with the parameter layout p (x, y, scale and bias storable:
    float64 throughout, or float32 arithmetic); -1 when out of memory.
    Float32 arithmetic widens narrower Scale/B once into float32 scratch."""
    cdef float* wide_scale = NULL
    cdef float* wide_bias = NULL
    cdef float* scratch = NULL
    cdef int threads = row_chunk_threads(n_threads, rows, cols, NORMOPS_COST_ROWS if center else NORMOPS_COST_ROWS_RMS)
    cdef Py_ssize_t nparams = param_count(p, cols)
    if xs == STORE_FLOAT64:
        normalize_chunks[double](px, xs, py, ys, <const double*>ps, <const double*>pb,
                                 mean_out, inv_out, rows, cols, epsilon, center, threads, n_threads, NULL, p)
        return 0
    if xs != STORE_FLOAT32 or ys != STORE_FLOAT32:
        scratch = <float*>malloc(max(threads, 1) * group_scratch_size(cols) * sizeof(float))
        if scratch == NULL:
            return -1
    if ss != STORE_FLOAT32:
        wide_scale = <float*>malloc(nparams * sizeof(float))
        if wide_scale == NULL:
            free(scratch)
            return -1
        widen_rows(ps, ss, 0, wide_scale, nparams)
        ps = wide_scale
    if pb != NULL and bs != STORE_FLOAT32:
        wide_bias = <float*>malloc(nparams * sizeof(float))
        if wide_bias == NULL:
            free(scratch)
            free(wide_scale)
            return -1
        widen_rows(pb, <Storage>bs, 0, wide_bias, nparams)
        pb = wide_bias
    normalize_chunks[float](px, xs, py, ys, <const float*>ps, <const float*>pb,
                            mean_out, inv_out, rows, cols, <float>epsilon, center, threads, n_threads,
                            scratch, p)
    free(wide_scale)
    free(wide_bias)
    free(scratch)
    return 0


cdef int row_normalize_loop(
    const void* px, Storage xs, void* py, Storage ys, const void* ps, Storage ss, const void* pb, int bs,
    float* mean_out, float* inv_out, Py_ssize_t rows, Py_ssize_t cols,
    double epsilon, bint center, int n_threads, RowParams* p, const void* given_var,
) noexcept nogil:
    """normalize_stored_rows after step 3 on the supplied variances (if any):
    p.given_inv then points at a scratch of their inverses."""
    cdef Py_ssize_t nparams = param_count(p, cols)
    cdef void* inv = NULL
    cdef int done
    if given_var != NULL:
        inv = malloc(max(nparams, 1) * (sizeof(double) if xs == STORE_FLOAT64 else sizeof(float)))
        if inv == NULL:
            return -1
        if xs == STORE_FLOAT64:
            inverse_std[double](<const double*>given_var, <double*>inv, nparams, epsilon)
        else:
            inverse_std[float](<const float*>given_var, <float*>inv, nparams, <float>epsilon)
        p.given_inv = inv
    done = normalize_stored_rows(px, xs, py, ys, ps, ss, pb, bs, mean_out, inv_out, rows, cols, epsilon, center,
                          n_threads, p)
    free(inv)
    return done


cdef int batch_training_loop(
    const void* x, Storage xs, void* y, Storage ys, const void* scale, Storage ss, const void* bias, int bs,
    const void* given_mean, const void* given_var, void* running_mean, void* running_var,
    Py_ssize_t N, Py_ssize_t C, Py_ssize_t S, double epsilon, double momentum, int n_threads,
    void* saved_mean, void* saved_inv, void* gathered,
) noexcept nogil:
    """BatchNormalization in training mode (docs/specification.md §7.3): channel c's
    elements in row-major order (n, then spatial) are gathered into row c
    of an arithmetic-type scratch, normalised there in place with their
    batch statistics and scattered back; then the running statistics
    (given * momentum) + (current * (1 - momentum)), each operation rounded,
    into running_mean/running_var (arithmetic type, C values each).
    saved_mean/saved_inv (or NULL) receive the batch mean and the
    inv = 1 / sqrt(var + epsilon) that normalised Y (legacy opsets'
    saved_mean and saved_var). gathered: C x N * S values of the arithmetic
    type. -1 when out of memory."""
    cdef bint wide = xs == STORE_FLOAT64
    cdef Storage arith = STORE_FLOAT64 if wide else STORE_FLOAT32
    cdef Py_ssize_t cols = N * S, n, c, k
    cdef size_t item = sizeof(double) if wide else sizeof(float)
    cdef char* pr = <char*>gathered
    cdef const char* px = <const char*>x
    cdef char* py = <char*>y
    cdef void* mean = malloc(3 * max(C, 1) * item)  # mean, var, inv per channel
    cdef RowParams p
    cdef double m, rest
    cdef float mf, restf
    cdef int done
    if mean == NULL:
        return -1
    for c in range(C):
        for n in range(N):
            if xs == arith:
                memcpy(pr + (c * cols + n * S) * item, px + ((n * C + c) * S) * item, S * item)
            else:
                widen_rows(px, xs, (n * C + c) * S, <float*>pr + c * cols + n * S, S)
    memset(&p, 0, sizeof(RowParams))
    p.period = C
    p.seg_len = cols
    p.mean_native = mean
    p.var_native = <char*>mean + C * item
    p.inv_native = <char*>mean + 2 * C * item
    done = normalize_stored_rows(pr, arith, pr, arith, scale, ss, bias, bs, NULL, NULL, C, cols, epsilon, True,
                          n_threads, &p)
    if done == 0:
        for c in range(C):
            for n in range(N):
                if ys == arith:
                    memcpy(py + ((n * C + c) * S) * item, pr + (c * cols + n * S) * item, S * item)
                else:
                    narrow_rows(<float*>pr + c * cols + n * S, py, ys, (n * C + c) * S, S)
        if wide:
            m = momentum
            rest = 1.0 - m
            for k in range(C):
                (<double*>running_mean)[k] = canonical(((<const double*>given_mean)[k] * m)
                                                       + ((<double*>mean)[k] * rest), True)
                (<double*>running_var)[k] = canonical(((<const double*>given_var)[k] * m)
                                                      + ((<double*>mean)[C + k] * rest), True)
        else:
            mf = <float>momentum
            restf = <float>1.0 - mf
            for k in range(C):
                (<float*>running_mean)[k] = canonical(((<const float*>given_mean)[k] * mf)
                                                      + ((<float*>mean)[k] * restf), True)
                (<float*>running_var)[k] = canonical(((<const float*>given_var)[k] * mf)
                                                     + ((<float*>mean)[C + k] * restf), True)
        if saved_mean != NULL:
            memcpy(saved_mean, mean, C * item)
        if saved_inv != NULL:
            memcpy(saved_inv, <char*>mean + 2 * C * item, C * item)
    free(mean)
    return done
