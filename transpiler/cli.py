"""Command line: `cutile-transpile SRC... -o OUT [--verify]` and `cutile-transpile verify OUT`."""

from __future__ import annotations

import json
import sys
import traceback
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from . import __version__
from .diagnostics import Diagnostic
from .pipeline import RunResult, UsageError, run, write_outputs


class Format(str, Enum):
    text = "text"
    json = "json"
    github = "github"


def _err(msg: str) -> None:
    typer.echo(msg, err=True)


def _print_diag(d: Diagnostic, fmt: Format) -> None:
    if fmt == Format.github:
        _err(f"::{d.severity} file={d.pos.path},line={d.pos.line},col={d.pos.col},title={d.code}::{d.message}")
    else:
        _err(d.text())
        try:
            line = Path(d.pos.path).read_text().splitlines()[d.pos.line - 1]
            _err(f"    {line}\n    {' ' * (d.pos.col - 1)}^")
        except (OSError, IndexError):
            pass


def _apply_verdicts(result: RunResult, verdicts) -> None:
    by = {(v.source, v.kernel): v for v in verdicts}
    for k in result.kernels:
        if k.status != "translated":
            k.verify = "not_verified"  # asked for, but there is nothing to verify
            continue
        for (src, name), v in by.items():
            if name == k.name and Path(k.source).resolve() == (result.out / src).resolve():
                k.verify = v.verdict
                if v.verdict != "equivalent":
                    detail = v.reason or next((c.detail for c in v.checks if c.verdict != "equivalent"), "")
                    k.diagnostics.append(Diagnostic("error", "CT200" if v.verdict == "different" else "CT201",
                                                    f"Tile IR {v.verdict.replace('_', ' ')}: {detail[:4000]}",
                                                    _kernel_pos(k)))


def _kernel_pos(k):
    from .model.ir import Pos
    return Pos(k.source, k.line, 1)


transpile_app = typer.Typer(add_completion=False, context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cutile-transpile {__version__}")
        raise typer.Exit()


@transpile_app.command()
def transpile(
    src: List[Path] = typer.Argument(..., help="cuTile Python files or directories (searched recursively for *.py)."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Output crate directory."),
    verify: bool = typer.Option(False, "--verify", help="Build the crate and compare each entry's Tile IR with cuTile Python's."),
    fmt: Format = typer.Option(Format.text, "--format", help="Output format for results and diagnostics."),
    kernel: Optional[List[str]] = typer.Option(None, "--kernel", help="Only these kernels (repeatable)."),
    fail_on_error: bool = typer.Option(False, "--fail-on-error", help="Stop at the first kernel that fails."),
    force: bool = typer.Option(False, "--force", help="Overwrite files in OUT that lack the @generated header."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write a Markdown report to this path."),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 with a diff if OUT is out of date."),
    fail_on_change: bool = typer.Option(False, "--fail-on-change",
                                        help="Exit 1 when files were (re)written (for pre-commit hooks)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only errors."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show internal tracebacks."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """Port cuTile Python kernels to a cuTile Rust crate (cutile 0.5.0)."""
    if out is None:
        _err("error: missing option -o/--out OUT")
        raise typer.Exit(2)
    progress = None
    if sys.stderr.isatty() and not quiet and fmt == Format.text:
        def progress(i: int, n: int, path: Path) -> None:
            sys.stderr.write(f"\r\033[K[{i + 1}/{n}] {path.as_posix()[-60:]}")
            if i + 1 == n:
                sys.stderr.write("\r\033[K")
            sys.stderr.flush()
    try:
        result, outputs = run(src, out, kernel_filter=kernel or None, fail_fast=fail_on_error, progress=progress)
    except UsageError as e:
        _err(f"error: {e}")
        raise typer.Exit(2)
    if check:
        _check(result, outputs, out, fmt, quiet)
    written, refused = write_outputs(outputs, force=force)
    if refused:
        for p in refused:
            _err(f"{p}: error: refusing to overwrite a file without the @generated header (use --force) [CT003]")
        raise typer.Exit(1)
    if verify and not outputs:
        _apply_verdicts(result, [])
    if verify and outputs:
        from .verify.run import verify_output
        log = None if (quiet or fmt != Format.text) else (lambda m: _err(f"verify: {m}"))
        _apply_verdicts(result, verify_output(out, kernel or None, log=log))
    if report is not None:
        from .report import markdown_report
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(markdown_report(result, verify))
    if verbose:
        for k in result.kernels:
            if k.status == "error" and k.manifest and "traceback" in k.manifest:
                _err(k.manifest["traceback"])
    if fail_on_change and written:
        _err(f"cutile-transpile: regenerated {len(written)} files in {out}")
        _finish(result, fmt, quiet, verify, written, force_fail=True)
    _finish(result, fmt, quiet, verify, written)


def _check(result: RunResult, outputs: dict, out: Path, fmt: Format, quiet: bool) -> None:
    """--check: compare what would be written with OUT; print a unified diff; write nothing."""
    import difflib
    from .pipeline import stale_outputs
    stale = []
    for path in stale_outputs(outputs):
        stale.append(path)
        if fmt == Format.text and not quiet:
            old = path.read_text(errors="replace")
            typer.echo("".join(difflib.unified_diff(old.splitlines(True), [], f"a/{path.as_posix()}", "/dev/null")),
                       nl=False)
    for path, content in sorted(outputs.items()):
        old = path.read_text(errors="replace") if path.exists() else ""
        if old != content:
            stale.append(path)
            if fmt == Format.text and not quiet:
                typer.echo("".join(difflib.unified_diff(old.splitlines(True), content.splitlines(True),
                                                        f"a/{path.as_posix()}", f"b/{path.as_posix()}")), nl=False)
    for d in result.file_diagnostics:
        _print_diag(d, fmt)
    failed = any(k.status != "translated" for k in result.kernels)
    for k in result.kernels:
        for d in k.diagnostics:
            _print_diag(d, fmt)
    if fmt == Format.json:
        typer.echo(json.dumps({**result.as_json(), "out_of_date": [p.as_posix() for p in stale]}, indent=2,
                              sort_keys=True))
    elif not quiet:
        _err(f"{out}: {'out of date (' + str(len(stale)) + ' files)' if stale else 'up to date'}")
    raise typer.Exit(1 if stale or failed else 0)


def _finish(result: RunResult, fmt: Format, quiet: bool, verify: bool, written: list[str],
            force_fail: bool = False) -> None:
    for d in result.file_diagnostics:
        _print_diag(d, fmt)
    for k in result.kernels:
        for d in k.diagnostics:
            _print_diag(d, Format.text if fmt == Format.json else fmt)
    s = result.summary()
    if fmt == Format.json:
        typer.echo(json.dumps(result.as_json(), indent=2, sort_keys=True))
    elif not quiet:
        for k in result.kernels:
            extra = f", {k.verify}" if k.verify else ""
            _err(f"{k.source}:{k.line}: {k.name}: {k.status}{extra} ({', '.join(k.entries) or 'no entries'})")
        line = (f"{s['kernels']} kernels: {s['translated']} translated, {s['unsupported']} unsupported, "
                f"{s['error']} errors")
        if verify:
            line += f"; {s['equivalent']} equivalent, {s['different']} different, {s['not_verified']} not verified"
        _err(line + f"; {len(written)} files written")
    failed = s["unsupported"] or s["error"] or any(d.severity == "error" for d in result.file_diagnostics)
    if verify and (s["different"] or s["not_verified"]):
        failed = True
    failed = failed or force_fail
    raise typer.Exit(1 if failed else 0)


verify_app = typer.Typer(add_completion=False, context_settings={"help_option_names": ["-h", "--help"]})


@verify_app.command()
def verify_cmd(
    out: Path = typer.Argument(..., help="An output directory made by cutile-transpile (with manifest.json)."),
    fmt: Format = typer.Option(Format.text, "--format"),
    kernel: Optional[List[str]] = typer.Option(None, "--kernel"),
    quiet: bool = typer.Option(False, "-q", "--quiet"),
) -> None:
    """Re-verify an existing output directory from its manifest, without regenerating it."""
    from .verify.run import verify_output
    if not (out / "manifest.json").is_file():
        _err(f"error: {out}: no manifest.json (not a cutile-transpile output directory)")
        raise typer.Exit(2)
    log = None if (quiet or fmt != Format.text) else (lambda m: _err(f"verify: {m}"))
    verdicts = verify_output(out, kernel or None, log=log)
    if fmt == Format.json:
        typer.echo(json.dumps({"version": 1, "kernels": [
            {"name": v.kernel, "source": v.source, "verify": v.verdict, "reason": v.reason,
             "checks": [c.__dict__ for c in v.checks]} for v in verdicts]}, indent=2, sort_keys=True))
    else:
        for v in verdicts:
            _err(v.summary_line())
            for c in v.checks:
                if c.verdict != "equivalent":
                    _err(f"  {c.entry} {c.spec} {c.dtype}: {c.verdict}\n{c.detail}")
    raise typer.Exit(0 if verdicts and all(v.verdict == "equivalent" for v in verdicts) else 1)


build_app = typer.Typer(add_completion=False, context_settings={"help_option_names": ["-h", "--help"]})


@build_app.command()
def build_cmd(
    out: Path = typer.Argument(..., help="An output directory made by cutile-transpile (with manifest.json)."),
) -> None:
    """Build the crate's shared library (`cargo build --release`, device code optimized) where its Python
    package looks for it: OUT/target/release (or $CARGO_TARGET_DIR/release)."""
    import os
    from .verify.toolchain import ToolchainError, cargo_build, cargo_env
    if not (out / "manifest.json").is_file():
        _err(f"error: {out}: no manifest.json (not a cutile-transpile output directory)")
        raise typer.Exit(2)
    try:
        env = cargo_env()
    except ToolchainError as e:
        _err(f"error: {e}")
        raise typer.Exit(2)
    if "CARGO_TARGET_DIR" not in os.environ:
        env.pop("CARGO_TARGET_DIR", None)  # next to the crate, where cutile_ports finds the library
    res = cargo_build(out / "Cargo.toml", env, show=True)
    if res.returncode != 0:
        raise typer.Exit(1)
    crate = json.loads((out / "manifest.json").read_text())["crate"]
    target = Path(env.get("CARGO_TARGET_DIR") or out / "target")
    _err(f"built {target / 'release' / f'lib{crate}.so'}")


def main() -> None:
    argv = sys.argv[1:]
    try:
        if argv and argv[0] == "verify":
            verify_app(argv[1:], prog_name="cutile-transpile verify", standalone_mode=True)
        elif argv and argv[0] == "build":
            build_app(argv[1:], prog_name="cutile-transpile build", standalone_mode=True)
        else:
            transpile_app(argv, prog_name="cutile-transpile", standalone_mode=True)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        _err(f"internal error (a bug in cutile-transpile, please report it): {type(e).__name__}: {e}")
        if "--verbose" in argv or "-v" in argv:
            traceback.print_exc()
        raise SystemExit(1)


if __name__ == "__main__":
    main()
