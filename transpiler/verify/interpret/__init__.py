"""A Tile IR interpreter on the CPU (numpy): a Triton port's entry, compiled by cuTile Rust, run on a recorded
case's inputs and compared with the outputs Triton's interpreter wrote. Modules: `values` (types, memory,
views), `syntax` (reading an op's text, the op registry), `ops_arith`, `ops_shape`, `ops_memory` (the ops by
family), `machine` (control flow, the grid), `cases` (a case's launch and comparison), `driver` (verify's hook).
"""
