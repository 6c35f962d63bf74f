"""Measure a published kernel library: download it from PyPI, port it, verify it, write results/coverage_<lib>.md.

  python3 tools/measure_library.py NAME VERSION [SUBPATH ...] [--no-verify] [--results FILE] [--keep DIR]

Downloads `NAME==VERSION` with `pip download --no-deps` into a temporary folder, unpacks the wheel (or sdist),
runs `cutile-transpile <unpacked>/<SUBPATH> -o OUT --format json --verify` (SUBPATH defaults to the package's
import name; several may be given, e.g. `liger_kernel/ops`) and writes a Markdown file with the date, the
tool's git commit, the command, a summary (translated and compiling, equivalent, counts per diagnostic code)
and one row per kernel (file, kernel, status, verdict, code, message). Works for cuTile Python and Triton
libraries alike: the tool picks the frontend per file. Nothing of the library is kept in the repository.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import shlex
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def download(name: str, version: str, dest: Path) -> Path:
    """The unpacked distribution's root folder (site-packages layout for a wheel, the sdist's top folder)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", f"{name}=={version}", "-d",
                    str(dest / "dist")], check=True)
    (archive,) = sorted((dest / "dist").iterdir())
    root = dest / "src"
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            z.extractall(root)
    else:
        with tarfile.open(archive) as t:
            t.extractall(root, filter="data")
        (top,) = [p for p in root.iterdir() if p.is_dir()]
        root = next((d for d in (top / "src", top) if d.is_dir()), top)
    return root


_MODE_FLAGS = {"verify": "", "compile": " --compile-only", "translate": " --no-verify"}


def git_commit() -> str:
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "transpiler", "rules",
                            "templates"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    return rev.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def run_tool(srcs: list[Path], out: Path, mode: str) -> tuple[dict, float, list[str]]:
    """mode: verify (compile and check Tile IR), compile (the crate's compile check only: a library of hundreds of
    Triton kernels, where Tile IR compilation of every entry takes hours on 2 cores), translate (neither)."""
    cmd = [sys.executable, "-m", "transpiler.cli", *map(str, srcs), "-o", str(out), "--format", "json", "-q"]
    cmd += {"verify": ["--verify"], "compile": [], "translate": ["--no-compile-check"]}[mode]
    t0 = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    seconds = time.monotonic() - t0
    try:
        doc = json.loads(res.stdout)
    except json.JSONDecodeError:
        doc = {"error": (res.stderr or res.stdout)[-2000:] or f"exit {res.returncode}", "kernels": []}
    return doc, seconds, cmd


def _first_error(k: dict) -> dict | None:
    errs = [d for d in k["diagnostics"] if d["severity"] == "error"]
    return errs[0] if errs else None


def _cell(text: str) -> str:
    return text.split("\n")[0].replace("|", "\\|")[:160]


def _compiles(k: dict) -> bool:
    return k["status"] == "translated" and not any(d["code"] == "CT007" for d in k["diagnostics"])


def render(name: str, version: str, subpaths: list[str], doc: dict, seconds: float, command: str,
           mode: str, root: Path, commit: str | None = None) -> str:
    verify = mode == "verify"
    commit = commit or git_commit()
    kernels = sorted(doc.get("kernels", []), key=lambda k: (k["source"], k["line"], k["name"]))
    n = len(kernels) or 1
    pct = lambda x: f"{x} of {len(kernels)} ({100 * x / n:.1f}%)"  # noqa: E731
    compiling = sum(1 for k in kernels if _compiles(k))
    verdicts = collections.Counter(k.get("verify") for k in kernels if k["status"] == "translated")
    codes: collections.Counter = collections.Counter()
    for k in kernels:
        for c in sorted({d["code"] for d in k["diagnostics"] if d["severity"] == "error"}):
            codes[c] += 1
    lines = [f"# Coverage of {name} {version}", "",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- tool commit: {commit}",
             f"- command: `python3 tools/measure_library.py {name} {version} {' '.join(subpaths)}"
             f"{_MODE_FLAGS[mode]}`",
             f"- which ran: `{command}`",
             f"- time of the run: {seconds:.0f} s", ""]
    if doc.get("error"):
        lines += ["The run ended early:", "", "```", str(doc["error"])[-2000:], "```", ""]
    lines += ["## Summary", "", f"- kernels found: {len(kernels)}",
              f"- translated: {pct(sum(1 for k in kernels if k['status'] == 'translated'))}",
              f"- translated and compiling: {pct(compiling)}"
              + (" (compilation not checked: run without --no-verify)" if mode == "translate" else "")]
    if mode == "compile":
        lines += ["- Tile IR: not checked (`--compile-only`: the crate's compile check, no verification)"]
    if verify:
        lines += [f"- Tile IR equivalent (cuTile Python kernels) or compiled to Tile IR (Triton kernels): "
                  f"{pct(verdicts['equivalent'] + verdicts['compiled'])}",
                  f"  - equivalent: {verdicts['equivalent']}, compiled: {verdicts['compiled']}, "
                  f"different: {verdicts['different']}, not verified: {verdicts['not_verified']}"]
    lines += ["", "| kernels | diagnostic code (errors; a kernel counts once per code) |", "|---|---|"]
    lines += [f"| {c} | {code} |" for code, c in codes.most_common()] or ["| 0 | - |"]
    lines += ["", "## Kernels", "", "| file | kernel | status | verdict | code | message |", "|---|---|---|---|---|---|"]
    for k in kernels:
        d = _first_error(k)
        src = k["source"]
        try:
            src = Path(src).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
        # the error's own position when it is in the kernel's file (a helper in another module: the kernel's)
        where = f"{src}:{d['line']}:{d['col']}" if d and d.get("line") and Path(d.get("path") or "").name == \
            Path(src).name else f"{src}:{k['line']}"
        lines.append(f"| {where} | {k['name']} | {k['status']} | {k.get('verify') or '-'} | "
                     f"{d['code'] if d else '-'} | {_cell(d['message']) if d else ''} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name")
    ap.add_argument("version")
    ap.add_argument("subpaths", nargs="*", help="folders or files under the unpacked root (default: the import name)")
    ap.add_argument("--no-verify", action="store_true", help="translate only (no crate build, no Tile IR check)")
    ap.add_argument("--compile-only", action="store_true", help="translate and compile the crate (no Tile IR check)")
    ap.add_argument("--results", type=Path, help="the Markdown file (default: results/coverage_<name>.md)")
    ap.add_argument("--keep", type=Path, help="unpack and write the crate here instead of a temporary folder")
    a = ap.parse_args(argv)
    subpaths = a.subpaths or [a.name.replace("-", "_")]
    with tempfile.TemporaryDirectory(prefix="cutile-measure-") as tmp:
        work = a.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        root = download(a.name, a.version, work)
        commit = git_commit()  # the code the run imports: read before it starts
        mode = "translate" if a.no_verify else "compile" if a.compile_only else "verify"
        doc, seconds, cmd = run_tool([root / s for s in subpaths], work / "out", mode)
        if git_commit() != commit:  # a commit during the run: the figures are of the code at its start
            commit += f" (HEAD moved to {git_commit()} during the run: files the tool read after its start may be newer)"
        shown = " ".join(shlex.quote(c) for c in ["cutile-transpile", *cmd[3:]])
        text = render(a.name, a.version, subpaths, doc, seconds, shown.replace(str(work), "$TMP"),
                      mode, root, commit)
    dest = a.results or REPO / "results" / f"coverage_{a.name.replace('-', '_')}.md"
    dest.write_text(text)
    print(text.split("## Kernels")[0])
    print(f"written: {dest}")
    return 0 if not doc.get("error") else 1


if __name__ == "__main__":
    sys.exit(main())
