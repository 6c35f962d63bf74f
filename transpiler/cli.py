"""Command line: `cutile-transpile SRC... -o OUT [--verify]` and `cutile-transpile verify OUT`."""

from __future__ import annotations

import json
import os
import sys
import traceback
from contextlib import contextmanager
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


def _status_line(quiet: bool, fmt: "Format"):
    """A one-line status a long step keeps rewriting, on a terminal only (None elsewhere: logs stay clean)."""
    if quiet or fmt != Format.text or not sys.stderr.isatty():
        return None

    def show(text: str) -> None:
        sys.stderr.write(f"\r\033[K{text[:shutil_width() - 1]}")
        sys.stderr.flush()
    return show


def shutil_width() -> int:
    import shutil
    return shutil.get_terminal_size((80, 24)).columns


def _over(log, status):
    """`log`, clearing the status line first (a log line then stands alone)."""
    if log is None or status is None:
        return log
    return lambda m: (_clear_status(status), log(m))


def _clear_status(status) -> None:
    if status is not None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _count(n: int, noun: str) -> str:
    """`1 file`, `2 files`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _err(msg: str) -> None:
    typer.echo(msg, err=True)


def _print_diag(d: Diagnostic, fmt: Format) -> None:
    hint = d.help
    if fmt == Format.github:
        more = f" (help: {hint})" if hint else ""
        _err(f"::{d.severity} file={d.pos.path},line={d.pos.line},col={d.pos.col},title={d.code}::{d.message}{more}")
    else:
        _err(d.text())
        line = _source_line(d.pos.path, d.pos.line)
        if line is not None:
            _err(f"    {line}\n    {' ' * (d.pos.col - 1)}^")
        if hint:
            _err(f"    help: {hint}")


def _source_line(path: str, lineno: int) -> str | None:
    """The line a diagnostic points at, decoded as Python decodes the file (never raises)."""
    from .frontend.common import read_source
    try:
        try:
            text = read_source(path)
        except ValueError:  # not decodable: the diagnostic says why; show the line with replacements
            text = Path(path).read_bytes().decode("utf-8", errors="replace")
        lines = text.splitlines()
        return lines[lineno - 1][:300] if 0 < lineno <= len(lines) else None
    except Exception:  # noqa: BLE001 - a caret is a nicety; the diagnostic itself is already printed
        return None


# verdicts that pass: Tile IR equivalent to cuTile Python's, or (Triton sources, which have no Tile IR to
# compare with) compiled to Tile IR by cuTile Rust, and where reference cases exist, their numbers interpreted
# from that Tile IR equal to Triton's (verify/interpret)
PASSING = ("equivalent", "compiled", "numbers_match")


def _numbers(s: dict) -> str:
    """The summary's part for Triton ports checked by their numbers (verify/interpret), where there are any."""
    return "".join(f"{s[k]} {k.replace('_', ' ')}, " for k in ("numbers_match", "numbers_differ") if s[k])


def _apply_verdicts(result: RunResult, verdicts) -> None:
    by = {(v.source, v.kernel): v for v in verdicts}
    for k in result.kernels:
        if k.status not in ("translated", "fallback"):
            k.verify = "not_verified"  # asked for, but there is nothing to verify
            continue
        for (src, name), v in by.items():
            if name == k.name and Path(k.source).resolve() == (result.out / src).resolve():
                k.verify = v.verdict
                k.verified_at = v.coverage()
                k.checks = [dict(c.__dict__) for c in v.checks]
                if v.verdict not in PASSING:
                    detail = v.reason or next((c.detail for c in v.checks if c.verdict != "equivalent"), "")
                    code = {"different": "CT200", "numbers_differ": "CT202"}.get(v.verdict, "CT201")
                    k.diagnostics.append(Diagnostic("error", code,
                                                    f"Tile IR {v.verdict.replace('_', ' ')}: {detail[:4000]}",
                                                    _kernel_pos(k)))


def _kernel_pos(k):
    from .model.ir import Pos
    return Pos(k.source, k.line, 1)


transpile_app = typer.Typer(add_completion=False, rich_markup_mode=None,
                          context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cutile-transpile {__version__}")
        raise typer.Exit()


def _compile_mode(flag: Optional[bool]) -> str:
    if flag is not None:
        return "on" if flag else "off"
    env = os.environ.get("CUTILE_TRANSPILE_COMPILE_CHECK", "auto").lower()
    return {"0": "off", "off": "off", "false": "off", "1": "on", "on": "on", "true": "on"}.get(env, "auto")


def _fatal(msg: str, code: int, fmt: Format) -> None:
    """An error that ends the run: on stderr, and (with --format json) still one JSON document on stdout."""
    _err(f"error: {msg}")
    if fmt == Format.json:
        typer.echo(json.dumps({"version": 1, "error": msg, "kernels": [], "summary": {}, "diagnostics": []}, indent=2,
                              sort_keys=True))
    raise typer.Exit(code)


def _check_report_path(report: Path) -> None:
    if report.is_dir():
        raise UsageError(f"--report {report}: is a directory")
    parent = report.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"--report {report}: cannot be written (no writable directory {report.parent})")


COMMANDS = """\b
Other commands (each with -h):
  cutile-transpile verify OUT  compare OUT's Tile IR with cuTile Python's
  cutile-transpile build OUT   build OUT's library for its Python package
  cutile-transpile record -o OUT -- CMD  record cases for Triton ports
  cutile-transpile env         print the exports a Rust build of OUT needs"""


@transpile_app.command(epilog=COMMANDS)
def transpile(
    src: List[Path] = typer.Argument(..., help="cuTile Python or Triton files or directories (searched recursively for *.py)."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Output crate directory."),
    verify: bool = typer.Option(False, "--verify", help="Build the crate and compare each entry's Tile IR with cuTile Python's (Triton kernels: each entry compiles to Tile IR)."),
    fmt: Format = typer.Option(Format.text, "--format", help="Output format for results and diagnostics."),
    kernel: Optional[List[str]] = typer.Option(None, "--kernel", help="Only these kernels (repeatable); every other port stays as it is."),
    fail_on_error: bool = typer.Option(False, "--fail-on-error", help="Stop at the first kernel that fails; ports not reached stay as they are."),
    force: bool = typer.Option(False, "--force", help="Overwrite files in OUT that are not generated files of this crate, or were edited by hand."),
    compile_check: Optional[bool] = typer.Option(None, "--compile-check/--no-compile-check",
                                                 help="cargo check the crate and leave out kernels whose Rust does not compile "
                                                      "(default: when cargo and the CUDA headers are there)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write a Markdown report to this path."),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 with a diff if OUT is out of date."),
    fail_on_change: bool = typer.Option(False, "--fail-on-change",
                                        help="Exit 1 when files were (re)written (for pre-commit hooks)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Only errors."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Show internal tracebacks."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
    crate_name: Optional[str] = typer.Option(None, "--crate-name", help="The generated crate's name (default: "
                                             "the one OUT has, else the source package's name)."),
    llm_fallback: bool = typer.Option(False, "--llm-fallback", help="Ask an LLM for the statements the rules reject "
                                      "(cuTile Python kernels); an answer is kept only if the kernel is then proved "
                                      "equivalent. Off by default; answers are cached in OUT/llm-cache."),
    llm_base_url: Optional[str] = typer.Option(None, "--llm-base-url", help="OpenAI-compatible endpoint (overrides "
                                               "[tool.cutile-transpile.llm] base_url), e.g. http://127.0.0.1:8000/v1."),
    llm_model: Optional[str] = typer.Option(None, "--llm-model", help="Model name (overrides llm.model)."),
    llm_api_key_env: Optional[str] = typer.Option(None, "--llm-api-key-env", help="NAME of the environment variable "
                                                  "that holds the API key (the key itself is never written)."),
    llm_budget: Optional[int] = typer.Option(None, "--llm-budget", help="At most this many HTTP requests this run."),
    llm_timeout: Optional[float] = typer.Option(None, "--llm-timeout", help="Seconds per request, in all (not per read)."),
    no_llm_cache: bool = typer.Option(False, "--no-llm-cache", help="Ask again instead of replaying OUT/llm-cache."),
    llm_purge_rejected: bool = typer.Option(False, "--llm-purge-rejected",
                                            help="Remove rejected answers from OUT/llm-cache (asked again with "
                                                 "--llm-fallback)."),
) -> None:
    """Port cuTile Python and Triton kernels to a cuTile Rust crate (cutile 0.5.0)."""
    from .output.state import ManifestError
    from .output.transaction import (OutputError, ensure_dir, is_non_directory, locked, pending, recover,
                                     remove_if_empty)
    from .emit.render import RustfmtMissing
    from .pipeline import CompileFailure
    if out is None:
        _err("error: missing option -o/--out OUT")
        raise typer.Exit(2)
    if kernel is not None and any(not k.strip() for k in kernel):
        _fatal("--kernel needs a kernel name", 2, fmt)
    if crate_name is not None:
        from .pipeline import crate_ident
        if crate_ident(crate_name) != crate_name:
            _fatal(f"--crate-name {crate_name!r} is not a usable crate name (lower case letters, digits and `_`, "
                   f"not starting with a digit, not a reserved name): try {crate_ident(crate_name)!r}", 2, fmt)
    progress = None
    if sys.stderr.isatty() and not quiet and fmt == Format.text:
        def progress(i: int, n: int, path: Path) -> None:
            sys.stderr.write(f"\r\033[K[{i + 1}/{n}] {path.as_posix()[-60:]}")
            if i + 1 == n:
                sys.stderr.write("\r\033[K")
            sys.stderr.flush()
    mode = _compile_mode(compile_check)
    log = None if (quiet or fmt != Format.text) else (lambda m: _err(f"verify: {m}"))
    settings = _llm_settings(fmt, llm_base_url=llm_base_url, llm_model=llm_model, llm_api_key_env=llm_api_key_env,
                             llm_budget=llm_budget, llm_timeout=llm_timeout) if llm_fallback else None
    sessions = []

    def translate():
        from .fallback.session import Session
        if not sessions:  # made under the lock, once: a second translation replays this run's answers
            sessions.append(Session(out if out.is_dir() else None, settings, use_cache=not no_llm_cache,
                                    purge_rejected=llm_purge_rejected, offline=check))
        status = _status_line(quiet, fmt)
        try:
            return run(src, out, kernel_filter=kernel or None, fail_fast=fail_on_error, progress=progress,
                       compile_check=mode, ignore_manifest=force, fallback=sessions[0], status=status,
                       crate_name=crate_name)
        finally:
            _clear_status(status)

    def translate_proved():
        result, outputs = translate()
        # new answers, and cached ones this machine has not proved (OUT's cache can be forged): proved in a
        # staging crate before anything is written or checked (a proof calls no model)
        if sessions[0].unproved:
            from .fallback.prove import prove
            prove(sessions[0], result, log)
            result, outputs = translate()
        return result, outputs

    created = False
    try:
        if report is not None:
            _check_report_path(report)
        if is_non_directory(out):
            raise OutputError(f"{out}: exists and is not a directory")
        if check:
            if out.is_dir() and pending(out):
                _fatal(f"{out}: an interrupted run left an unfinished update; run cutile-transpile again to finish "
                       "it", 1, fmt)
            result, outputs = translate_proved()
            _check(result, outputs, out, fmt, quiet, force)
        created = ensure_dir(out)
        with locked(out, on_wait=None if quiet else _err):
            try:
                done = recover(out)
                if done and not quiet:
                    _err(done)
                result, outputs = translate_proved()
                written, refused = write_outputs(outputs, force=force)
                if refused:
                    for p, code, why in refused:
                        _err(f"{p}: error: {why} (use --force) [{code}]")
                    _fatal(f"{out}: nothing was written", 1, fmt)
                if verify and not outputs:
                    _apply_verdicts(result, [])
                if verify and outputs:
                    from .verify.run import verify_output
                    status = _status_line(quiet, fmt)
                    try:
                        _apply_verdicts(result, verify_output(out, kernel or None, log=_over(log, status),
                                                              progress=status))
                    finally:
                        _clear_status(status)
            finally:
                if sessions:
                    sessions[0].close()
                if created:  # under the lock: a waiting run then sees its lock file gone and makes OUT again
                    remove_if_empty(out)
    except (UsageError, RustfmtMissing) as e:
        _fatal(str(e), 2, fmt)
    except ManifestError as e:
        _fatal(f"{e}; fix or delete it, or pass --force to regenerate OUT (files not listed in a manifest are never "
               "overwritten without --force)", 2, fmt)
    except OutputError as e:
        _fatal(str(e), 2, fmt)
    except CompileFailure as e:
        _fatal(f"{e}\nnothing was written", 1, fmt)
    if report is not None:
        from .report import markdown_report
        try:
            report.parent.mkdir(parents=True, exist_ok=True)
            tmp = report.with_name(f".{report.name}.tmp{os.getpid()}")
            tmp.write_text(markdown_report(result, verify))
            os.replace(tmp, report)
        except OSError as e:
            _fatal(f"--report {report}: cannot be written: {e.strerror or e}", 2, fmt)
    if verbose:
        for k in result.kernels:
            if k.status == "error" and k.manifest and "traceback" in k.manifest:
                _err(k.manifest["traceback"])
    if fail_on_change and written:
        _err(f"cutile-transpile: regenerated {_count(len(written), 'file')} in {out}")
        _finish(result, fmt, quiet, verify, written, force_fail=True)
    _finish(result, fmt, quiet, verify, written)


def _llm_settings(fmt: Format, **flags):
    """The LLM fallback's settings from ./pyproject.toml and the flags (exit 2 when they are not usable)."""
    from .fallback import settings as llm
    try:
        import httpx  # noqa: F401 - the optional extra
    except ImportError:
        _fatal("--llm-fallback needs the `llm` extra: pip install 'cutile-transpile[llm]'", 2, fmt)
    overrides = {"base_url": flags["llm_base_url"], "model": flags["llm_model"],
                 "api_key_env": flags["llm_api_key_env"], "budget": flags["llm_budget"],
                 "timeout_s": flags["llm_timeout"]}
    try:
        return llm.llm_settings(llm.load(Path("pyproject.toml"), overrides))
    except llm.SettingsError as e:
        _fatal(str(e), 2, fmt)


def _check(result: RunResult, outputs: dict, out: Path, fmt: Format, quiet: bool, force: bool) -> None:
    """--check: compare what would be written with OUT; print a unified diff; write nothing."""
    import difflib
    from .pipeline import plan_changes
    changes, refused = plan_changes(out, outputs, force=force) if out.is_dir() else (outputs, [])
    stale = []
    for path, content in sorted(changes.items(), key=lambda pc: pc[0].as_posix()):
        stale.append(path)
        if fmt == Format.text and not quiet:
            old = path.read_text(errors="replace") if path.is_file() else ""
            new = content.splitlines(True) if content is not None else []
            typer.echo("".join(difflib.unified_diff(old.splitlines(True), new, f"a/{path.as_posix()}",
                                                    f"b/{path.as_posix()}" if content is not None else "/dev/null")),
                       nl=False)
    for p, code, why in refused:
        _err(f"{p}: note: a real run would refuse this file: {why} (use --force) [{code}]")
    for d in result.file_diagnostics:
        _print_diag(d, fmt)
    failed = any(k.status not in ("translated", "fallback") for k in result.kernels) or result.summary()["file_errors"]
    for k in result.kernels:
        for d in k.diagnostics:
            _print_diag(d, fmt)
    if fmt == Format.json:
        typer.echo(json.dumps({**result.as_json(), "out_of_date": [p.as_posix() for p in stale]}, indent=2,
                              sort_keys=True))
    elif not quiet:
        _err(f"{out}: {'out of date (' + _count(len(stale), 'file') + ')' if stale else 'up to date'}")
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
            if k.verify == "equivalent" and k.verified_at:
                from .verify.specs import coverage_text
                extra += f" at {coverage_text(k.verified_at)}"
            _err(f"{k.source}:{k.line}: {k.name}: {k.status}{extra} ({', '.join(k.entries) or 'no entries'})")
        line = (f"{_count(s['kernels'], 'kernel')}: {s['translated']} translated, "
                + (f"{s['fallback']} completed by the LLM fallback, " if s["fallback"] else "")
                + f"{s['unsupported']} unsupported, {s['error']} errors")
        if verify:
            line += f"; {s['equivalent']} equivalent, " + (f"{s['compiled']} compiled, " if s["compiled"] else "") + \
                _numbers(s) + f"{s['different']} different, {s['not_verified']} not verified"
        _err(line + f"; {_count(len(written), 'file')} written")
    failed = s["unsupported"] or s["error"] or s["file_errors"]
    if verify and (s["different"] or s["not_verified"] or s["numbers_differ"]):
        failed = True
    failed = failed or force_fail
    raise typer.Exit(1 if failed else 0)


def _existing_output(out: Path, fmt: Format) -> dict:
    """The validated manifest of an existing OUT (exit 2 when there is none or it is not valid)."""
    from .output.state import ManifestError, load_manifest
    if not (out / "manifest.json").is_file():
        _fatal(f"{out}: no manifest.json (not a cutile-transpile output directory)", 2, fmt)
    try:
        return load_manifest(out)
    except ManifestError as e:
        _fatal(f"{e}; regenerate OUT with cutile-transpile", 2, fmt)


@contextmanager
def _locked_output(out: Path, fmt: Format):
    """verify and build read OUT under the run lock, after finishing an interrupted update."""
    from .output.transaction import OutputError, locked, recover
    try:
        with locked(out, on_wait=_err):
            recover(out)
            yield
    except OutputError as e:
        _fatal(str(e), 2, fmt)


verify_app = typer.Typer(add_completion=False, rich_markup_mode=None,
                          context_settings={"help_option_names": ["-h", "--help"]})


@verify_app.command()
def verify_cmd(
    out: Path = typer.Argument(..., help="An output directory made by cutile-transpile (with manifest.json)."),
    fmt: Format = typer.Option(Format.text, "--format"),
    kernel: Optional[List[str]] = typer.Option(None, "--kernel"),
    quiet: bool = typer.Option(False, "-q", "--quiet"),
) -> None:
    """Re-verify an existing output directory from its manifest, without regenerating it."""
    from .verify.run import verify_output
    _existing_output(out, fmt)
    log = None if (quiet or fmt != Format.text) else (lambda m: _err(f"verify: {m}"))
    import time
    t0 = time.monotonic()
    status = _status_line(quiet, fmt)
    with _locked_output(out, fmt):
        try:
            verdicts = verify_output(out, kernel or None, log=_over(log, status), progress=status)
        finally:
            _clear_status(status)
    result = _verify_result(out, verdicts)
    summary = result.summary()
    if fmt == Format.json:
        typer.echo(json.dumps(result.as_json(), indent=2, sort_keys=True))
    else:
        for v in verdicts:
            _err(v.summary_line())
            for c in v.checks:
                if c.verdict not in PASSING:
                    _err(f"  {c.entry} {c.spec} {c.dtype}: {c.verdict}\n{c.detail}")
        if not quiet:  # the main command's summary line, for the same verdicts
            _err(f"{_count(summary['kernels'], 'kernel')}: "
                 f"{summary['equivalent']} equivalent, "
                 + (f"{summary['compiled']} compiled, " if summary["compiled"] else "") + _numbers(summary)
                 + f"{summary['different']} different, {summary['not_verified']} not verified "
                 f"({time.monotonic() - t0:.1f} s)")
    raise typer.Exit(0 if verdicts and all(v.verdict in PASSING for v in verdicts) else 1)


def _verify_result(out: Path, verdicts) -> "RunResult":
    """`verify`'s verdicts as the main command's result (one JSON schema for both): each kernel's manifest
    record gives its line, frontend, status and entries; a failed verdict is a CT200/CT201 diagnostic."""
    import os
    from .output.state import load_manifest
    from .pipeline import KernelResult, RunResult
    records = {(m["source"], k["name"]): k for m in load_manifest(out)["modules"] for k in m["kernels"]}
    kernels = []
    for v in verdicts:
        k = records.get((v.source, v.kernel), {})
        src = os.path.relpath(os.path.normpath(out / v.source)).replace(os.sep, "/")
        kr = KernelResult(v.kernel, src, k.get("line", 1), "fallback" if k.get("llm_fallback") else "translated",
                          entries=[e["name"] for e in k.get("entries", [])], frontend=k.get("frontend", "cutile-python"))
        kernels.append(kr)
    result = RunResult(kernels, [], [], out)
    _apply_verdicts(result, verdicts)
    return result


build_app = typer.Typer(add_completion=False, rich_markup_mode=None,
                          context_settings={"help_option_names": ["-h", "--help"]})


@build_app.command()
def build_cmd(
    out: Path = typer.Argument(..., help="An output directory made by cutile-transpile (with manifest.json)."),
) -> None:
    """Build the crate's shared library (`cargo build --release`, device code optimized) where its Python
    package looks for it: OUT/target/release (or $CARGO_TARGET_DIR/release). The build is verify's (same
    target directory, profile and settings), so after `--verify` it takes seconds."""
    import os
    import shutil
    from .output.guard import OutputError, inside
    from .verify.toolchain import ToolchainError, build_fastlaunch, cargo_build, cargo_env, crate_build_lock
    crate = _existing_output(out, Format.text)["crate"]
    try:
        env = cargo_env()
    except ToolchainError as e:
        _err(f"error: {e}")
        raise typer.Exit(2)
    lib = Path(env["CARGO_TARGET_DIR"]) / "release" / f"lib{crate}.so"
    try:  # the build lock is held from cargo to the copy of the library into OUT
        with _locked_output(out, Format.text), crate_build_lock(env, crate, out, _err):
            try:  # what is written in OUT: no link inside OUT followed on the way
                fast_c = inside(out, "python/cutile_ports/_fastlaunch.c")
                dst = inside(out, f"target/release/{lib.name}")
                inside(out, "target/release/_fastlaunch.abi3.so")
            except OutputError as e:
                _fatal(str(e), 2, Format.text)
            res = cargo_build(out / "Cargo.toml", env, show=True)
            if res.returncode != 0:
                raise typer.Exit(1)
            if "CARGO_TARGET_DIR" not in os.environ:
                # verify's target directory is shared by every crate it builds: the library is copied next to the
                # crate, where cutile_ports finds it (OUT/.gitignore keeps target/ out of version control)
                dst.parent.mkdir(parents=True, exist_ok=True)
                tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
                shutil.copy2(lib, tmp)
                os.replace(tmp, dst)
                lib = dst
            fast = lib.with_name("_fastlaunch.abi3.so")
            why = build_fastlaunch(fast_c, fast)
    except ToolchainError as e:
        _err(f"error: {e}")
        raise typer.Exit(2)
    _err(f"built {lib}")
    _err(f"built {fast}" if why is None else f"note: the compiled fast path was not built ({why}); the Python "
                                               "package runs the same steps in Python")


record_app = typer.Typer(add_completion=False, rich_markup_mode=None,
                          context_settings={"help_option_names": ["-h", "--help"]})


@record_app.command()
def record_cmd(
    command: List[str] = typer.Argument(None, help="The command to run, after `--` (your tests or a script). "
                                                   "Without one: the cases declared in pyproject.toml."),
    out: Path = typer.Option(..., "-o", "--out", help="The output directory whose Triton ports get the cases."),
    max_per_kernel: int = typer.Option(4, "--max-per-kernel", help="Launches recorded per kernel and process."),
    max_bytes: int = typer.Option(64 << 20, "--max-bytes", help="Largest launch recorded (bytes of its tensors)."),
    project: Optional[Path] = typer.Option(None, "--project", help="pyproject.toml with the declared cases "
                                                                   "(default: ./pyproject.toml)."),
) -> None:
    """Record numeric cases for OUT's Triton ports: run COMMAND under Triton's interpreter (TRITON_INTERPRET=1,
    on the CPU) and store each launch of a ported kernel (its inputs, scalars, constants, grid, and the outputs
    Triton wrote) in OUT/cases/; `cutile-transpile verify OUT` then replays them through each port's Tile IR.
    Needs triton (and whatever COMMAND needs) in the Python COMMAND runs."""
    from .record import RecordError, record
    from .record.declared import DeclaredError, declared_command
    _existing_output(out, Format.text)
    try:
        if not command:
            command = declared_command(out, project)
        rc = record(out, list(command), max_per_kernel, max_bytes, log=_err)
    except (RecordError, DeclaredError) as e:
        _err(f"error: {e}")
        raise typer.Exit(2)
    raise typer.Exit(rc)


env_app = typer.Typer(add_completion=False, rich_markup_mode=None,
                      context_settings={"help_option_names": ["-h", "--help"]})


@env_app.command()
def env_cmd() -> None:
    """Print the environment a Rust build of a generated crate needs (`eval "$(cutile-transpile env)"`):
    CUDA_TOOLKIT_PATH, the CUDA headers of the `verify` extra that cuTile Rust builds against."""
    import shlex
    from .verify.toolchain import ToolchainError, cuda_toolkit
    try:
        path = cuda_toolkit()
    except ToolchainError as e:
        _err(f"error: {e}")
        raise typer.Exit(2)
    typer.echo(f"export CUDA_TOOLKIT_PATH={shlex.quote(str(path))}")


def main() -> None:
    argv = sys.argv[1:]
    try:
        if argv and argv[0] == "env":
            env_app(argv[1:], prog_name="cutile-transpile env", standalone_mode=True)
        elif argv and argv[0] == "verify":
            verify_app(argv[1:], prog_name="cutile-transpile verify", standalone_mode=True)
        elif argv and argv[0] == "build":
            build_app(argv[1:], prog_name="cutile-transpile build", standalone_mode=True)
        elif argv and argv[0] == "record":
            record_app(argv[1:], prog_name="cutile-transpile record", standalone_mode=True)
        else:
            transpile_app(argv, prog_name="cutile-transpile", standalone_mode=True)
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        try:
            text = str(e)[:2000]
        except Exception:  # noqa: BLE001 - str() of some exceptions fails or recurses
            text = "(message unavailable)"
        _err(f"internal error (a bug in cutile-transpile, please report it): {type(e).__name__}: {text}")
        if "json" in argv:
            print(json.dumps({"version": 1, "error": f"internal error: {type(e).__name__}", "kernels": [],
                              "summary": {}}))
        if "--verbose" in argv or "-v" in argv:
            traceback.print_exc()
        raise SystemExit(1)


if __name__ == "__main__":
    main()
