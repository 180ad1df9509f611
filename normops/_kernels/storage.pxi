# Storage types narrower than the arithmetic: float16 and bfloat16 are
# widened exactly to float32 and results rounded once back (docs/specification.md §4.2).
# The conversions themselves are in platform_shim.h (F16C where available);
# the Storage names are in kernel_table.pxd, which the routes module shares.

cdef inline void widen_rows(const void* src, Storage kind, Py_ssize_t offset,
                            float* dst, Py_ssize_t n) noexcept nogil:
    """dst[0..n) = src[offset..offset + n) as float32 (exact)."""
    if kind == STORE_FLOAT16:
        normops_widen_float16(<const unsigned short*>src + offset, dst, n)
    else:
        normops_widen_bfloat16(<const unsigned short*>src + offset, dst, n)


cdef inline void narrow_rows(const float* src, void* dst, Storage kind, Py_ssize_t offset,
                             Py_ssize_t n) noexcept nogil:
    """dst[offset..offset + n) = src[0..n) rounded once (to nearest even)."""
    if kind == STORE_FLOAT16:
        normops_narrow_float16(src, <unsigned short*>dst + offset, n)
    else:
        normops_narrow_bfloat16(src, <unsigned short*>dst + offset, n)
