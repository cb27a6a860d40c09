"""The parts of a Markdown file the docs test checks: fenced code blocks, relative links and
the anchors GitHub gives headings. Only the subset of CommonMark these docs use (``` fences,
[text](target) links, # headings)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# A fence may be indented (a block inside a list item); its body loses that indentation.
FENCE = re.compile(r"^( *)(`{3,})(.*)$")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def doc_files() -> list[Path]:
    """README.md, CONTRIBUTING.md and docs/*.md: the files whose snippets must run."""
    return [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str  # first word of the info string ("" when none)
    tags: dict[str, str] = field(default_factory=dict)  # the rest: key=value or bare words
    text: str = ""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"

    @property
    def no_run(self) -> str | None:
        return self.tags.get("no-run")


def parse_info(info: str) -> tuple[str, dict[str, str]]:
    words = info.split()
    if not words:
        return "", {}
    tags: dict[str, str] = {}
    for w in words[1:]:
        key, _, value = w.partition("=")
        tags[key] = value
    return words[0], tags


def blocks(path: Path) -> list[Block]:
    out: list[Block] = []
    current: Block | None = None
    fence, indent = "", ""
    body: list[str] = []
    for no, line in enumerate(path.read_text().splitlines(), 1):
        m = FENCE.match(line)
        if current is None:
            if m:
                lang, tags = parse_info(m.group(3))
                current, indent, fence, body = Block(path, no, lang, tags), m.group(1), m.group(2), []
        elif m and m.group(2).startswith(fence) and not m.group(3).strip():
            current.text = "\n".join(body) + "\n"
            out.append(current)
            current = None
        else:
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip(" "))
    assert current is None, f"{path}:{current.line}: code block never closed"
    return out


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line outside code blocks."""
    out, inside, fence = [], False, ""
    for no, line in enumerate(path.read_text().splitlines(), 1):
        m = FENCE.match(line)
        if not inside and m:
            inside, fence = True, m.group(2)
        elif inside and m and m.group(2).startswith(fence) and not m.group(3).strip():
            inside = False
        elif not inside:
            out.append((no, line))
    return out


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose_lines(path):
        m = HEADING.match(line)
        if not m:
            continue
        base = github_anchor(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(path: Path) -> list[tuple[int, str]]:
    """(line, target) of every link that is not an absolute URL."""
    out = []
    for no, line in prose_lines(path):
        for m in LINK.finditer(line):
            target = m.group(1)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):
                out.append((no, target))
    return out
