"""`[tool.cutile-transpile]` in the nearest pyproject.toml above a source: loaded and validated once per file.

```toml
[tool.cutile-transpile]
dtypes = ["f16", "f32"]              # element types E is verified and exported for (non-empty, known names)

[tool.cutile-transpile.specializations]
matmul = [{BM = 64, BN = 128}, {BM = 128, BN = 128}]   # a list of tables of int/bool constant values
```

The nearest pyproject.toml is the first one found walking up from the source's directory, whether it has a
`[tool.cutile-transpile]` section or not (the cache keys on the same file). Every problem is a `Diagnostic`
with the pyproject's path, the line of the offending key (column of the key where it can be found) and a code
CT010..CT017 (README, "Diagnostic codes"). Errors fail closed: the kernels under an invalid config are not
translated (`kernel_diagnostics` gives each one a CT017 error), never translated with silent defaults.
Warnings (unknown keys, unknown constants, kernel names that match no kernel) do not stop anything.

API for the pipeline:
- `config_for(source) -> (section, diagnostics)`: the validated section (only well-formed parts, normalized:
  `dtypes` a list of known names, `specializations` `{kernel: [{NAME: int}]}`) and the pyproject's diagnostics.
  Memoized per pyproject file (path and content); the same list object is returned for every source under it.
- `kernel_diagnostics(kernel, source)`: per kernel: CT017 (error) when the config has errors, CT015 (warning)
  for names in its rows that are not constants of the kernel, CT013 (error) for a bool constant given a value
  other than true/false/0/1. Cacheable with the kernel's result (the cache key hashes the pyproject).
- `run_diagnostics(sources, kernel_names)`: each distinct pyproject's diagnostics once for a whole run, plus
  CT016 (warning) for a kernel name in `specializations` that matches no kernel of the run (skipped when
  `kernel_names` is None, e.g. under `--kernel`).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .diagnostics import Diagnostic
from .model.ir import Pos

SECTION = ("tool", "cutile-transpile")
KEYS = ("dtypes", "specializations", "llm", "cases")  # llm: read by transpiler/fallback/settings.py; cases: record/declared.py
I32 = (-(2 ** 31), 2 ** 31 - 1)

CT_UNREADABLE = "CT010"    # cannot be read, not UTF-8, not valid TOML
CT_UNKNOWN_KEY = "CT011"   # unknown key in [tool.cutile-transpile] (warning)
CT_TYPE = "CT012"          # a value of the wrong type
CT_DTYPE = "CT013"         # unknown dtype, empty dtypes
CT_VALUE = "CT014"         # a constant value out of range (i32), a bool constant not 0/1, an empty kernel list
CT_UNKNOWN_CONST = "CT015"  # a name in a specialization row that is not a constant of the kernel (warning)
CT_UNKNOWN_KERNEL = "CT016"  # a kernel name in specializations that matches no kernel of the run (warning)
CT_FAIL_CLOSED = "CT017"   # a kernel not translated because its config has errors


# The one table of the dtypes: the config's `dtypes` check, and the ABI (abi.rs and the Python wrapper are both
# rendered from it: emit/ffi.py).
# dtype name -> (ABI code, Rust host type, bytes); the Rust enum variant is the upper-case name
DTYPES = {
    "f32": (0, "f32", 4),
    "f16": (1, "cutile::half::f16", 2),
    "bf16": (2, "cutile::half::bf16", 2),
    "i32": (3, "i32", 4),
    "i64": (4, "i64", 8),
    "f8e5m2": (5, "cutile::cuda_core::f8e5m2", 1),
    "f8e4m3fn": (6, "cutile::cuda_core::f8e4m3fn", 1),
    # Triton's int8 `tl.dot` operands (a pointer a port takes as int8 only: passes/ops/linalg.py)
    "i8": (7, "i8", 1),
    # narrow integers and bools (torch.bool: one byte, 0 or 1): Triton's integer pointers (passes/domains.py) and
    # cuTile Python arrays of ct.uint8 / ct.int16 / ct.bool_
    "u8": (8, "u8", 1),
    "i16": (9, "i16", 2),
    "bool": (10, "bool", 1),
}


def known_dtypes() -> tuple[str, ...]:
    # i8, u8, i16 and bool are carried for some arrays only (Triton's int8 `tl.dot` operands and integer pointers,
    # cuTile Python arrays of those dtypes), not element types to export
    return tuple(d for d in DTYPES if d not in ("i8", "u8", "i16", "bool"))


def pyproject_for(source: Path) -> Path | None:
    """The nearest pyproject.toml above `source` (a file or directory that is not a regular file is skipped)."""
    try:
        start = source.resolve()
    except (OSError, RuntimeError):
        start = source.absolute()
    for parent in start.parents:
        pp = parent / "pyproject.toml"
        try:
            if pp.is_file():
                return pp
        except OSError:
            continue
    return None


# ------------------------------------------------------------------ positions in the raw text
_HEADER = re.compile(r"^\s*\[\[?\s*(.+?)\s*\]\]?\s*(#.*)?$")
_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _split_key(text: str) -> list[str] | None:
    """A TOML dotted key (`a."b.c".d`) into its parts; None if `text` does not start with a key."""
    parts, i, n = [], 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in "\"'":
            q = text[i]
            j = text.find(q, i + 1)
            if j < 0:
                return None
            parts.append(text[i + 1:j])
            i = j + 1
        else:
            m = _BARE.match(text, i)
            if not m:
                return None
            parts.append(m.group())
            i = m.end()
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == ".":
            i += 1
            continue
        return parts


class _Locator:
    """Finds the line (and column) of a key path in the raw TOML text: table headers and `key =` lines are
    tracked; keys inside inline tables/arrays are searched for after the line of their deepest found parent."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.keys: list[tuple[tuple[str, ...], int, int]] = []  # (full key path, line, col)
        table: tuple[str, ...] = ()
        for no, line in enumerate(self.lines, 1):
            m = _HEADER.match(line)
            if m:
                parts = _split_key(m.group(1))
                if parts is not None:
                    table = tuple(parts)
                    self.keys.append((table, no, line.index("[") + 1))
                    continue
            stripped = line.lstrip()
            if not stripped or stripped.startswith("#"):
                continue
            eq = line.find("=")
            if eq > 0:
                parts = _split_key(line[:eq])
                if parts is not None and line[:eq].strip():
                    self.keys.append((table + tuple(parts), no, len(line) - len(stripped) + 1))

    def find(self, path: tuple[str, ...], nth: int = 0, value: str | None = None) -> tuple[int, int]:
        """(line, col) of the key `path`; `nth`: skip that many earlier occurrences of an inline key (rows of
        an array of tables); `value`: the column of that quoted string on the key's line(s) instead."""
        best, best_len = (1, 1), -1
        for key, line, col in self.keys:
            k = len(key)
            if key == path[:k] and k > best_len:
                best, best_len = (line, col), k
            elif key[:len(path)] == path and len(path) > best_len:
                best, best_len = (line, col), len(path)  # a sub-table or dotted key that defines `path`
        if 0 <= best_len < len(path):
            line, col0 = best[0], 0
            rest = path[best_len:]
            for i, name in enumerate(rest):
                skip = nth if i == len(rest) - 1 else 0
                pat = re.compile(r"(?<![\w-])(?:" + re.escape(name) + r"|\"" + re.escape(name) + r"\")\s*=")
                found = False
                for no in range(line, len(self.lines) + 1):
                    for m in pat.finditer(self.lines[no - 1], col0 if no == line else 0):
                        if skip:
                            skip -= 1
                            continue
                        line, col0, best, found = no, m.end(), (no, m.start() + 1), True
                        break
                    if found:
                        break
                if not found:
                    break
        if value is not None:
            for no in range(best[0], min(best[0] + 50, len(self.lines)) + 1):
                for q in ('"', "'"):
                    c = self.lines[no - 1].find(q + value + q, best[1] - 1 if no == best[0] else 0)
                    if c >= 0:
                        return no, c + 1
        return best


# ------------------------------------------------------------------ loading and validation
class Config:
    def __init__(self, path: Path, display: str):
        self.path, self.display = path, display
        self.section: dict = {}
        self.diagnostics: list[Diagnostic] = []
        self.locator: _Locator | None = None

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)

    def diag(self, severity: str, code: str, message: str, key: tuple = (), line: int | None = None,
             col: int = 1, nth: int = 0, value: str | None = None) -> None:
        if line is None:
            line, col = self.locator.find(SECTION + tuple(key), nth, value) if self.locator else (1, 1)
        self.diagnostics.append(Diagnostic(severity, code, message, Pos(self.display, line, col)))


def _typename(v) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
            dict: "a table"}.get(type(v), type(v).__name__)


def _dotted(key: tuple) -> str:
    return ".".join(SECTION + tuple(str(k) for k in key))


def _load(path: Path, display: str) -> Config:
    cfg = Config(path, display)
    try:
        raw = path.read_bytes()
    except OSError as e:
        cfg.diag("error", CT_UNREADABLE, f"cannot read {path.name}: {e.strerror or e}", line=1)
        return cfg
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        col = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        cfg.diag("error", CT_UNREADABLE, f"{path.name} is not valid UTF-8 (byte 0x{raw[e.start]:02x}); TOML files "
                 "must be UTF-8", line=line, col=col)
        return cfg
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
        if not m and "end of document" in msg:
            line = max(1, len(text.splitlines()))
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        cfg.diag("error", CT_UNREADABLE, f"{path.name} is not valid TOML: {msg}", line=line, col=col)
        return cfg
    cfg.locator = _Locator(text)
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        line, col = cfg.locator.find(("tool",))
        cfg.diag("error", CT_TYPE, f"`tool` must be a table, not {_typename(tool)}", line=line, col=col)
        return cfg
    section = tool.get("cutile-transpile", {})
    if not isinstance(section, dict):
        cfg.diag("error", CT_TYPE, f"`tool.cutile-transpile` must be a table, not {_typename(section)}")
        return cfg
    _validate(cfg, section)
    cfg.diagnostics.sort(key=lambda d: (d.pos.line, d.pos.col))
    return cfg


def _validate(cfg: Config, section: dict) -> None:
    for key in section:
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, n=1, cutoff=0.6)
            hint = f"; did you mean `{close[0]}`?" if close else f" (known keys: {', '.join(KEYS)})"
            cfg.diag("warning", CT_UNKNOWN_KEY, f"unknown key `{_dotted((key,))}` is ignored{hint}", (key,))
    if "dtypes" in section:
        dtypes = section["dtypes"]
        known = known_dtypes()
        if not isinstance(dtypes, list) or not all(isinstance(d, str) for d in dtypes):
            what = _typename(dtypes) if not isinstance(dtypes, list) else "an array with non-string items"
            ex = f' (write `dtypes = ["{dtypes}"]`)' if isinstance(dtypes, str) else ""
            cfg.diag("error", CT_TYPE, f"`{_dotted(('dtypes',))}` must be an array of dtype names, not {what}{ex}",
                     ("dtypes",))
        elif not dtypes:
            cfg.diag("error", CT_DTYPE, f"`{_dotted(('dtypes',))}` is empty: list at least one of "
                     f"{', '.join(known)}", ("dtypes",))
        else:
            bad = [d for d in dtypes if d not in known]
            for d in bad:
                close = difflib.get_close_matches(d, known, n=1, cutoff=0.5)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                cfg.diag("error", CT_DTYPE, f"unknown dtype `{d}` in `{_dotted(('dtypes',))}` (known: "
                         f"{', '.join(known)}){hint}", ("dtypes",), value=d)
            if not bad:
                cfg.section["dtypes"] = list(dict.fromkeys(dtypes))
    if "specializations" in section:
        specs = section["specializations"]
        if not isinstance(specs, dict):
            cfg.diag("error", CT_TYPE, f"`{_dotted(('specializations',))}` must be a table of kernel names, not "
                     f"{_typename(specs)} (write `[tool.cutile-transpile.specializations]` and "
                     "`kernel = [{BM = 64}]` under it)", ("specializations",))
            return
        out = {}
        for kname, rows in specs.items():
            key = ("specializations", kname)
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                what = _typename(rows) if not isinstance(rows, list) else "an array with items that are not tables"
                cfg.diag("error", CT_TYPE, f"`{_dotted(key)}` must be an array of tables like "
                         f"`[{{BM = 64}}]`, not {what}", key)
                continue
            if not rows:
                cfg.diag("error", CT_VALUE, f"`{_dotted(key)}` is empty: list at least one specialization "
                         "(`[{}]` takes the defaults)", key)
                continue
            ok_rows = []
            counts: dict[str, int] = {}
            for row in rows:
                good = {}
                for cname, v in row.items():
                    nth = counts.get(cname, 0)
                    counts[cname] = nth + 1
                    if isinstance(v, bool):
                        good[cname] = v
                    elif isinstance(v, int):
                        if not I32[0] <= v <= I32[1]:
                            cfg.diag("error", CT_VALUE, f"`{cname} = {v}` in `{_dotted(key)}` is outside the i32 "
                                     "range of const generics", key + (cname,), nth=nth)
                        else:
                            good[cname] = v
                    else:
                        cfg.diag("error", CT_TYPE, f"`{cname}` in `{_dotted(key)}` must be an integer or a boolean, "
                                 f"not {_typename(v)} ({v!r})", key + (cname,), nth=nth)
                ok_rows.append(good)
            out[kname] = ok_rows
        cfg.section["specializations"] = out


_MEMO: dict[tuple[str, str], Config] = {}
_EMPTY = Config(Path("pyproject.toml"), "pyproject.toml")


def _display(pp: Path) -> str:
    try:
        return pp.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return pp.as_posix()


def load_config(source: Path) -> Config:
    """The validated config of the nearest pyproject.toml above `source` (memoized per file path and content)."""
    pp = pyproject_for(source)
    if pp is None:
        return _EMPTY
    try:
        digest = hashlib.sha256(pp.read_bytes()).hexdigest()
    except OSError as e:
        digest = f"unreadable:{e.errno}"
    display = _display(pp)
    key = (str(pp), digest, display)
    cfg = _MEMO.get(key)
    if cfg is None:
        try:
            cfg = _load(pp, display)
        except RecursionError:  # absurdly nested inline tables
            cfg = Config(pp, display)
            cfg.diag("error", CT_UNREADABLE, f"{pp.name} is nested too deeply to be read", line=1)
        _MEMO[key] = cfg
    return cfg


def config_for(source: Path) -> tuple[dict, list[Diagnostic]]:
    cfg = load_config(source)
    return cfg.section, cfg.diagnostics


def has_errors(source: Path) -> bool:
    return load_config(source).has_errors


def kernel_diagnostics(kernel, source: Path) -> list[Diagnostic]:
    """Diagnostics of the config as it applies to one kernel (see the module doc)."""
    cfg = load_config(source)
    if cfg.has_errors:
        errors = [d for d in cfg.diagnostics if d.severity == "error"]
        more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
        return [Diagnostic("error", CT_FAIL_CLOSED, f"`{kernel.name}` not translated: its configuration has errors "
                           f"({errors[0].pos}: {errors[0].code}{more}); nothing falls back to defaults",
                           kernel.pos)]
    rows = cfg.section.get("specializations", {}).get(kernel.name)
    if rows is None:
        return []
    consts = {p.name: p for p in kernel.params if p.kind == "const"}
    out = []
    key = ("specializations", kernel.name)
    seen = set()
    counts: dict[str, int] = {}
    for row in rows:
        for cname, v in row.items():
            nth = counts.get(cname, 0)
            counts[cname] = nth + 1
            p = consts.get(cname)
            if p is None:
                if cname in seen:
                    continue
                seen.add(cname)
                close = difflib.get_close_matches(cname, list(consts), n=1, cutoff=0.6)
                hint = (f"; did you mean `{close[0]}`?" if close else
                        f" (its constants: {', '.join(consts) or 'none'})")
                line, col = cfg.locator.find(SECTION + key + (cname,))
                out.append(Diagnostic("warning", CT_UNKNOWN_CONST, f"`{cname}` in `{_dotted(key)}` is not a "
                                      f"ct.Constant parameter of `{kernel.name}` and is ignored{hint}",
                                      Pos(cfg.display, line, col)))
            elif p.const_type == "bool" and v not in (0, 1):
                line, col = cfg.locator.find(SECTION + key + (cname,), nth)
                out.append(Diagnostic("error", CT_VALUE, f"`{cname} = {v}` in `{_dotted(key)}`: `{cname}` is a "
                                      "ct.Constant[bool]; give true/false (or 0/1)", Pos(cfg.display, line, col)))
    return out


def run_diagnostics(sources: Iterable[Path], kernel_names: Iterable[str] | None, paths=None) -> list[Diagnostic]:
    """Each distinct pyproject's diagnostics once (in the order the sources first reach it), plus CT016 for
    table kernel names that match no kernel of the run (not checked when `kernel_names` is None). `paths`:
    the run's `cache.RealPaths` (sources in one real folder share their config, looked up once)."""
    names = None if kernel_names is None else set(kernel_names)
    out: list[Diagnostic] = []
    seen: set[int] = set()
    by_folder: dict[str, Config] = {}
    for src in sources:
        folder = os.path.dirname(paths.real(src)) if paths is not None else None
        cfg = by_folder.get(folder) if folder else None
        if cfg is None:
            cfg = load_config(Path(src))
            if folder:
                by_folder[folder] = cfg
        if cfg is _EMPTY or id(cfg) in seen:
            continue
        seen.add(id(cfg))
        out.extend(cfg.diagnostics)
        if names is not None:
            for kname in cfg.section.get("specializations", {}):
                if kname not in names:
                    close = difflib.get_close_matches(kname, sorted(names), n=1, cutoff=0.6)
                    hint = f"; did you mean `{close[0]}`?" if close else ""
                    line, col = cfg.locator.find(SECTION + ("specializations", kname))
                    out.append(Diagnostic("warning", CT_UNKNOWN_KERNEL, f"`{_dotted(('specializations', kname))}` "
                                          f"matches no kernel in this run and is ignored{hint}",
                                          Pos(cfg.display, line, col)))
    return out
