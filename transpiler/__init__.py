"""cutile-transpile: deterministic, rule-based port of cuTile Python kernels to cuTile Rust."""

__version__ = "0.1.0"
