"""The statements of a LibCST block, whichever way it is written."""

from __future__ import annotations

import libcst as cst


def block_statements(block: cst.BaseSuite) -> tuple:
    """An indented block's statements; a one-line suite (`if X: a = 1`, `def f(x): return x`) is one line."""
    if isinstance(block, cst.SimpleStatementSuite):
        return (cst.SimpleStatementLine(body=block.body),)
    return tuple(block.body)
