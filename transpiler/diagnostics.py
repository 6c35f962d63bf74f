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

    @property
    def help(self) -> str | None:
        """A rewrite to suggest (rules/rewrites.toml), derived from the code and message."""
        from .rewrites import suggestion
        return suggestion(self.code, self.message)

    def text(self) -> str:
        return f"{self.pos.path}:{self.pos.line}:{self.pos.col}: {self.severity}: {self.message} [{self.code}]"

    def as_json(self) -> dict:
        out = {"severity": self.severity, "code": self.code, "message": self.message,
               "path": self.pos.path, "line": self.pos.line, "col": self.pos.col}
        if (h := self.help) is not None:
            out["help"] = h
        return out


class TranspileError(Exception):
    """Raised inside a kernel's translation; the kernel is reported and skipped."""

    def __init__(self, code: str, message: str, pos: Pos):
        super().__init__(message)
        self.diagnostic = Diagnostic("error", code, message, pos)


def fail(code: str, message: str, pos: Pos) -> "TranspileError":
    return TranspileError(code, message, pos)



# Codes are documented, with an example and a fix each, in README.md ("Diagnostic codes"); a rule's id is
# the code for an unsupported use of that rule.
