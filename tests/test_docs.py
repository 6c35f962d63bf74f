"""README.md and docs/ stay true to the code: every diagnostic code the tool can give is documented, every
relative link (and its #anchor) resolves, and the README stays short enough to read (at most 15 KB)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README_LIMIT = 15_000  # bytes: what a user reads on day one; the reference lives in docs/

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"\bCT\d{3}\b")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`|\*|_{2,}", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(md: Path) -> set[str]:
    found: dict[str, int] = {}
    out = set()
    in_code = False
    for line in md.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m and not in_code:
            s = slug(m.group(1))
            n = found.get(s, 0)
            found[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def broken_links(md: Path) -> list[str]:
    """The relative links of `md` whose file or #anchor does not exist (web links are not followed)."""
    bad = []
    text = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.S)  # code holds no links
    text = re.sub(r"`[^`\n]*`", "", text)  # `kernel[grid](...)` is code, not a link
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (md.parent / path).resolve() if path else md
        if not dest.exists():
            bad.append(f"{md.name}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{md.name}: {target} (no such heading)")
    return bad


def documented_pages() -> list[Path]:
    return [REPO / "README.md", REPO / "DESIGN.md", *sorted((REPO / "docs").glob("*.md"))]


def test_readme_is_short():
    size = len((REPO / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; move reference material to docs/"


def test_every_link_resolves():
    bad = [b for md in documented_pages() if md.exists() for b in broken_links(md)]
    assert not bad, "\n".join(bad)


def test_every_diagnostic_code_is_documented():
    used = {c for p in (REPO / "transpiler").rglob("*.py") for c in CODE.findall(p.read_text(encoding="utf-8"))}
    assert len(used) > 30  # the scan found the codes (a moved package would make this test vacuous)
    documented = set(CODE.findall((REPO / "docs" / "diagnostics.md").read_text(encoding="utf-8")))
    assert not used - documented, f"codes missing from docs/diagnostics.md: {sorted(used - documented)}"


def test_the_link_check_can_fail(tmp_path):
    (tmp_path / "other.md").write_text("# Reading the output\n\n## Exit codes\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#exit-codes) [web](https://example.com) ![img](x.png)\n"
                    "[gone](missing.md) [no heading](other.md#exit-code) [self](#nowhere)\n"
                    "```\n[in code](nowhere.md)\n```\n`k[grid](...)`\n")
    assert broken_links(page) == ["page.md: missing.md (no such file)", "page.md: other.md#exit-code (no such heading)",
                                  "page.md: #nowhere (no such heading)"]
    assert slug("The C ABI: `cutile_*` symbols") == "the-c-abi-cutile_-symbols"
