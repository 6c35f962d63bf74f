"""Triton training and serving kernels: each module holds `@triton.jit` kernels and the host functions that
allocate outputs and launch them. Shared device helpers live in `utils`."""
