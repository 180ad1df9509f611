"""Compiled kernels: one extension module per ISA level (see normops._isa)."""
