"""Diagnostics: every user-facing problem has a code, a position and a message."""

from __future__ import annotations

from dataclasses import dataclass

from .model.ir import Pos


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # error | warning | note
    code: str
    message: str
    pos: Pos

    def text(self) -> str:
        return f"{self.pos.path}:{self.pos.line}:{self.pos.col}: {self.severity}: {self.message} [{self.code}]"

    def as_json(self) -> dict:
        return {"severity": self.severity, "code": self.code, "message": self.message,
                "path": self.pos.path, "line": self.pos.line, "col": self.pos.col}


class TranspileError(Exception):
    """Raised inside a kernel's translation; the kernel is reported and skipped."""

    def __init__(self, code: str, message: str, pos: Pos):
        super().__init__(message)
        self.diagnostic = Diagnostic("error", code, message, pos)


def fail(code: str, message: str, pos: Pos) -> "TranspileError":
    return TranspileError(code, message, pos)


# Codes not tied to a single rule (rule ids double as codes for unsupported uses of a rule).
CODES = {
    "CT001": "syntax error in a source file",
    "CT002": "source file cannot be read",
    "CT003": "a file in OUT without the @generated header would be overwritten",
    "CT100": "unsupported Python construct in a kernel",
    "CT101": "call to a function that is neither a cuTile API with a rule nor a helper in scope",
    "CT102": "unsupported argument or keyword of a cuTile call",
    "CT103": "name used before assignment or not defined",
    "CT104": "type or shape error (operands cannot be combined)",
    "CT105": "value whose shape is not a compile-time expression the Rust type system accepts",
    "CT106": "unsupported parameter annotation",
    "CT107": "construct with no cuTile Rust 0.5 equivalent that keeps the same Tile IR",
    "CT108": "constant condition that cannot be decided or split into variants",
    "CT900": "internal error (a bug in cutile-transpile)",
}
