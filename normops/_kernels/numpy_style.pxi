# The NumPy-style functions' own arithmetic (docs/specification.md §16.2):
# sum, prod, max, min and mean with where= and initial=, and var / std,
# over an O x R x C float32/float64 array (and a C-contiguous bool mask of
# its shape). Their per-call routes, which find that layout or return None
# for normops/numpy_style.py to compute the call (the same bits: the same
# identities in place of the left-out elements, the same sums):
# numpy_style_entry.pxi.

from libc.stdint cimport int64_t


cdef inline real op_identity(int op, real like) noexcept nogil:
    if op == NORMOPS_R_PROD:
        return 1
    if op == NORMOPS_R_MAX_NAN:
        return -normops_u2f(0x7F800000u) if real is float else -normops_u2d(0x7FF0000000000000u)
    if op == NORMOPS_R_MIN_NAN:
        return normops_u2f(0x7F800000u) if real is float else normops_u2d(0x7FF0000000000000u)
    return 0


cdef void masked_fill(const real* x, const unsigned char* w, real* y, Py_ssize_t n, real other) noexcept nogil:
    """y[i] = x[i] where w[i], else ``other``."""
    cdef Py_ssize_t i
    for i in range(n):
        y[i] = x[i] if w[i] else other


cdef void mask_counts(const unsigned char* w, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int64_t* count) noexcept nogil:
    """count[o * C + c] = the number of w[o, r, c] set."""
    cdef Py_ssize_t o, r, c
    cdef int64_t k
    for o in range(O):
        if C == 1:  # a running count in a register, not in memory
            k = 0
            for r in range(R):
                k += w[o * R + r]
            count[o] = k
            continue
        for c in range(C):
            count[o * C + c] = 0
        for r in range(R):
            for c in range(C):
                count[o * C + c] += w[(o * R + r) * C + c]


cdef int where_run(const real* x, const unsigned char* w, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, int op,
                   int n_threads, bint has_initial, double initial, bint mean, real* out) except -1 nogil:
    """The reduction ``op`` of x (left-out elements: the identity), then
    the mean's division by the selected count, or initial's step."""
    cdef Py_ssize_t n = O * R * C, nout = O * C, i
    cdef real* buf = NULL
    cdef int64_t* count = NULL
    cdef real init, v
    cdef bint larger = op == NORMOPS_R_MAX_NAN
    try:
        if w != NULL:
            buf = <real*>malloc(max(n, 1) * sizeof(real))
            if buf == NULL:
                with gil:
                    raise MemoryError()
            masked_fill(x, w, buf, n, op_identity(op, <real>0))
        reduce_finished(x if buf == NULL else buf, O, R, C, op, FINISH_NONE, out, n_threads)
        if mean:
            count = <int64_t*>malloc(max(nout, 1) * sizeof(int64_t))
            if count == NULL:
                with gil:
                    raise MemoryError()
            if w != NULL:
                mask_counts(w, O, R, C, count)
            else:
                for i in range(nout):
                    count[i] = R
            for i in range(nout):
                out[i] = out[i] / <real>count[i]
        if has_initial:
            init = <real>initial
            for i in range(nout):
                v = out[i]
                if op == NORMOPS_R_SUM:
                    out[i] = init + v
                elif op == NORMOPS_R_PROD:
                    out[i] = init * v
                elif (v > init if larger else v < init) or (v != v and init == init):
                    out[i] = v
                else:
                    out[i] = init
        for i in range(nout):
            if out[i] != out[i]:
                out[i] = quiet_nan(out[i])
    finally:
        free(buf)
        free(count)
    return 0


cdef int where_dispatch(bint is_float32, const void* px, const unsigned char* pw, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C,
                        int op, int n_threads, bint has_initial, double initial, bint mean,
                        void* po) except -1 nogil:
    if is_float32:
        return where_run[float](<const float*>px, pw, O, R, C, op, n_threads, has_initial, initial, mean,
                                <float*>po)
    return where_run[double](<const double*>px, pw, O, R, C, op, n_threads, has_initial, initial, mean,
                             <double*>po)


# ------------------------------------------------------------- var, std

cdef void col_span_sums(const floating* x, Py_ssize_t R, Py_ssize_t C, Py_ssize_t w, const floating* center,
                        floating* out, floating* partials) noexcept nogil:
    """out[j] = Sum16 over r of x[r * C + j] (or of the separately rounded
    (x - center[j])^2), j < w: sixteen partials per column (term r to
    partial r % 16, in increasing r), folded as Sum16 folds them."""
    cdef Py_ssize_t i, j
    cdef floating* q
    cdef const floating* row
    cdef floating d
    for j in range(16 * w):
        partials[j] = 0
    for i in range(R):
        q = partials + (i & 15) * w
        row = x + i * C
        if center == NULL:
            for j in range(w):
                q[j] = q[j] + row[j]
        else:
            for j in range(w):
                d = row[j] - center[j]
                q[j] = q[j] + d * d
    for i in range(8):
        for j in range(w):
            partials[i * w + j] = partials[i * w + j] + partials[(i + 8) * w + j]
    for i in range(4):
        for j in range(w):
            partials[i * w + j] = partials[i * w + j] + partials[(i + 4) * w + j]
    for i in range(2):
        for j in range(w):
            partials[i * w + j] = partials[i * w + j] + partials[(i + 2) * w + j]
    for j in range(w):
        out[j] = partials[j] + partials[w + j]


cdef int sums_of(const floating* x, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C, const floating* center,
                 floating* out, int n_threads) except -1 nogil:
    """out[o * C + c] = Sum16 over r of x[o, r, c] (or of its squared
    deviation from center[o * C + c]): rows in chunks of rows (C = 1), or
    spans of neighbouring columns; a sequence is never split."""
    cdef long long* claimed = normops_claim_slot()  # where the team notes its wake-up
    cdef Py_ssize_t span = LP_SPAN_BYTES // sizeof(floating), per_row, units, u, o, c0
    cdef Py_ssize_t per_chunk, chunks, g
    cdef int threads
    cdef floating* partials
    cdef const floating* cc
    if C == 1:
        per_chunk = max(1, ROW_CHUNK_ELEMENTS // R)
        chunks = (O + per_chunk - 1) // per_chunk
        threads = row_chunk_threads(n_threads, O, R)
        if threads <= 1:
            serial_begin()
            row_sums_range(x, 0, O, R, center, out)
            serial_end()
            return 0
        threads = team_take(threads, n_threads)
        for g in prange(chunks, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            row_sums_range(x, g * per_chunk, min((g + 1) * per_chunk, O), R, center, out)
        team_release(threads)
        return 0
    per_row = (C + span - 1) // span
    units = O * per_row
    threads = min(row_chunk_threads(n_threads, O * C, R), <int>min(units, 1 << 20))
    partials = <floating*>malloc(max(threads, 1) * 16 * span * sizeof(floating))
    if partials == NULL:
        with gil:
            raise MemoryError()
    if threads <= 1:
        serial_begin()
        for u in range(units):
            o = u // per_row
            c0 = (u % per_row) * span
            cc = NULL
            if center != NULL:
                cc = center + o * C + c0
            col_span_sums(x + o * R * C + c0, R, C, min(span, C - c0), cc, out + o * C + c0, partials)
        serial_end()
    else:
        threads = team_take(threads, n_threads)
        for u in prange(units, schedule="dynamic", num_threads=threads):
            normops_team_claims(claimed)
            o = u // per_row
            c0 = (u % per_row) * span
            cc = NULL
            if center != NULL:
                cc = center + o * C + c0
            col_span_sums(x + o * R * C + c0, R, C, min(span, C - c0), cc, out + o * C + c0,
                          partials + omp_get_thread_num() * 16 * span)
        team_release(threads)
    free(partials)
    return 0


cdef int variance_run(const floating* x, const unsigned char* w, Py_ssize_t O, Py_ssize_t R, Py_ssize_t C,
                      double ddof, bint root, int n_threads, floating* out) except -1 nogil:
    """docs/specification.md §16.2, var and std: per output, mean =
    Sum16(x) / RN_T(count), then Sum16((x - mean)^2) / RN_T(max(count -
    ddof, 0)) (the difference in float64), sqrt for std; an element that
    ``w`` leaves out is +0 in the first sum and the mean itself in the
    second (so its deviation is +0; where the mean is not finite the
    result is NaN either way)."""
    cdef Py_ssize_t n = O * R * C, nout = O * C, i, o, r, c, k
    cdef floating* buf = NULL
    cdef floating* m = <floating*>malloc(max(nout, 1) * sizeof(floating))
    cdef int64_t* count = <int64_t*>malloc(max(nout, 1) * sizeof(int64_t))
    cdef double divisor
    try:
        if m == NULL or count == NULL:
            with gil:
                raise MemoryError()
        if w != NULL:
            buf = <floating*>malloc(n * sizeof(floating))
            if buf == NULL:
                with gil:
                    raise MemoryError()
            masked_fill(x, w, buf, n, <floating>0)
            mask_counts(w, O, R, C, count)
        else:
            for i in range(nout):
                count[i] = R
        sums_of(x if buf == NULL else buf, O, R, C, <const floating*>NULL, m, n_threads)
        for i in range(nout):
            m[i] = m[i] / <floating>count[i]
        if w != NULL:  # a select, not a branch (the mask is often random): loops gcc vectorises
            for o in range(O):
                if C == 1:
                    masked_fill(buf + o * R, w + o * R, buf + o * R, R, m[o])
                    continue
                for r in range(R):
                    for c in range(C):
                        k = (o * R + r) * C + c
                        buf[k] = buf[k] if w[k] else m[o * C + c]
        sums_of(x if buf == NULL else buf, O, R, C, m, out, n_threads)
        for i in range(nout):
            divisor = <double>count[i] - ddof
            if not divisor > 0:
                divisor = 0
            out[i] = out[i] / <floating>divisor
            if root:
                out[i] = ieee_sqrt(out[i])
            if out[i] != out[i]:
                out[i] = <floating>NAN
    finally:
        free(buf)
        free(m)
        free(count)
    return 0


cdef int variance_dispatch(bint is_float32, const void* px, const unsigned char* pw, Py_ssize_t O, Py_ssize_t R,
                           Py_ssize_t C, double ddof, bint root, int n_threads, void* po) except -1 nogil:
    if is_float32:
        return variance_run[float](<const float*>px, pw, O, R, C, ddof, root, n_threads, <float*>po)
    return variance_run[double](<const double*>px, pw, O, R, C, ddof, root, n_threads, <double*>po)
