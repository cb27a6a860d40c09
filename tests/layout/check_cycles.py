#!/usr/bin/env python3
"""Checks a Rust crate's source files for import cycles, and lsm-linux's AT-SPI folder for
window-system imports. Plain Python, no dependencies; about a tenth of a second per crate.

    python3 tests/layout/check_cycles.py crates/lsm-linux [crates/lsm-core ...]
    python3 tests/layout/check_cycles.py --workspace      # every member of the workspace

What counts as "file A uses file B": a `use` or an inline path (`crate::x::y`, `super::y`,
`self::y`, `child::y`) in A that names an item or module defined in B. A path through a
module that only re-exports (`pub use child::Item`) is followed to the file that defines the
item, so a folder's `mod.rs` that re-exports its children is a facade, not a participant; but
its `pub use` lines are edges from it to those children. A parent declaring `mod child;` is
not a use. Uses of a file by itself (its inline `mod tests { use super::*; }`) are ignored.

Fails (exit 1) on any cycle between files (A uses B and B uses A, or longer), and when a file
under a crate's isolated folder (RULES below) mentions a forbidden name or uses a file of a
forbidden folder.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# crate folder name -> (folder under src that must not know the window systems, forbidden
# words in its files, src folders it must not use)
RULES = {
    "lsm-linux": ("atspi", ("x11rb", "crate::x11", "crate::wayland", "super::x11", "super::wayland"), ("x11", "wayland")),
}

# Cycles that were there before this check and are left to their crate's own change: a cycle
# among files that are all in one of these sets is reported as known, not failed. A new file
# joining one, or any other cycle, fails.
KNOWN_CYCLES = {
    "lsm-core": [
        {"model.rs", "policy/rules.rs"},
        {"action.rs", "backend.rs", "output.rs", "state.rs"},
        {"service.rs", "settle.rs", "step.rs"},
    ],
}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_code(text: str) -> str:
    """The source with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.match(r'b?r(#*)"', text[i:i + 260]) if c in "rb" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if m:
            end = text.find('"' + m.group(1), i + m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:end]))
            i = end
            continue
        if c == '"' and re.search(r"#\[path\s*=\s*$", text[max(0, i - 20):i]):
            j = text.find('"', i + 1)
            out.append(text[i:j + 1])
            i = j + 1
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j + 1]))
            i = j + 1
            continue
        if c == "'":
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append("' '")
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def split_top(s: str) -> list[str]:
    """Splits a use-tree list at its top-level commas."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def expand_use(tree: str, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str | None]]:
    """`a::{b, c::{self, D as E}, *}` -> [(path segments, alias or None)]."""
    tree = re.sub(r"\s+as\s+", "@", tree.strip())
    tree = re.sub(r"\s+", "", tree)
    if tree.startswith("::"):
        tree = tree[2:]
    brace = tree.find("{")
    if brace >= 0 and tree.endswith("}"):
        head = tree[:brace].rstrip(":")
        base = prefix + tuple(x for x in head.split("::") if x)
        out = []
        for part in split_top(tree[brace + 1:-1]):
            out += expand_use(part, base)
        return out
    alias = None
    if "@" in tree:
        tree, alias = tree.split("@", 1)
    segs = tuple(x for x in tree.split("::") if x)
    return [(prefix + segs, alias)]


class Module:
    def __init__(self, path: tuple[str, ...], file: Path, inline: bool = False):
        self.path = path
        self.file = file
        self.inline = inline
        self.children: dict[str, Module] = {}
        # pub re-exports: visible name -> (source path as written, module it was written in)
        self.reexports: dict[str, tuple[tuple[str, ...], Module]] = {}
        self.globs: list[tuple[tuple[str, ...], Module]] = []
        self.uses: list[tuple[tuple[str, ...], Module]] = []  # every path the module's code names
        self.text = ""  # its own code (inline child modules cut out)

    def defines(self, name: str) -> bool:
        return bool(
            re.search(rf"\b(?:struct|enum|union|trait|type|fn|const|static|macro_rules!)\s+{re.escape(name)}\b", self.text)
        ) or name in self.children or name in self.reexports


USE_RE = re.compile(r"\b(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]+);")
MOD_RE = re.compile(rf"((?:#\[[^\]]*\]\s*)*)(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+({IDENT})\s*([;{{])")
PATH_RE = re.compile(rf"(?<![A-Za-z0-9_:])((?:{IDENT}::)+{IDENT}|(?:{IDENT}::)+\*)")


class Crate:
    def __init__(self, src: Path):
        self.src = src
        self.modules: list[Module] = []
        self.errors: list[str] = []
        self.roots = []
        for entry in ("lib.rs", "main.rs"):
            if (src / entry).exists():
                root = Module((), src / entry)
                self.roots.append(root)
                self.load(root, src)

    def load(self, module: Module, child_dir: Path) -> None:
        text = strip_code(module.file.read_text(encoding="utf-8"))
        self.modules.append(module)
        self.parse(module, text, child_dir)

    def parse(self, module: Module, text: str, child_dir: Path) -> None:
        """Reads `mod` declarations (inline ones recursively), uses and inline paths."""
        pos = 0
        body_parts = []
        while True:
            m = MOD_RE.search(text, pos)
            if not m:
                body_parts.append(text[pos:])
                break
            attrs, name, kind = m.group(1), m.group(2), m.group(3)
            body_parts.append(text[pos:m.start()])
            if kind == ";":
                pm = re.search(r'#\[path\s*=\s*"([^"]*)"\]', attrs)
                if pm:
                    file = module.file.parent / pm.group(1)
                    sub_dir = file.parent / file.stem
                elif (child_dir / f"{name}.rs").exists():
                    file, sub_dir = child_dir / f"{name}.rs", child_dir / name
                elif (child_dir / name / "mod.rs").exists():
                    file, sub_dir = child_dir / name / "mod.rs", child_dir / name
                else:
                    self.errors.append(f"{module.file}: mod {name}: no file found")
                    pos = m.end()
                    continue
                child = Module(module.path + (name,), file)
                module.children[name] = child
                self.load(child, sub_dir)
                pos = m.end()
            else:
                end = matching_brace(text, m.end() - 1)
                child = Module(module.path + (name,), module.file, inline=True)
                module.children[name] = child
                self.modules.append(child)
                self.parse(child, text[m.end():end], child_dir / name)
                pos = end + 1
        body = "".join(body_parts)
        module.text = body
        for um in USE_RE.finditer(body):
            is_pub = bool(um.group(1))
            for segs, alias in expand_use(um.group(2)):
                if not segs:
                    continue
                module.uses.append((segs, module))
                if is_pub:
                    if segs[-1] == "*":
                        module.globs.append((segs[:-1], module))
                    else:
                        name = alias or (segs[-2] if segs[-1] == "self" and len(segs) > 1 else segs[-1])
                        module.reexports[name] = (segs, module)
        rest = USE_RE.sub(" ", body)
        for pm in PATH_RE.finditer(rest):
            module.uses.append((tuple(pm.group(1).split("::")), module))

    # ---- resolution -----------------------------------------------------------------------
    def find(self, root: Module, path: tuple[str, ...]) -> Module | None:
        m = root
        for seg in path:
            m = m.children.get(seg)
            if m is None:
                return None
        return m

    def start(self, segs: tuple[str, ...], at: Module, root: Module):
        """The module a path starts from and the remaining segments; None: not this crate."""
        first = segs[0]
        if first == "crate":
            return root, segs[1:]
        if first in ("self", "super"):
            cur = list(at.path)
            i = 0
            while i < len(segs) and segs[i] in ("self", "super"):
                if segs[i] == "super":
                    if not cur:
                        return None
                    cur.pop()
                i += 1
            m = self.find(root, tuple(cur))
            return (m, segs[i:]) if m else None
        # a child module of the module (or of an enclosing inline module) the path is written in
        scope = at
        while True:
            if first in scope.children:
                return scope, segs
            if not scope.inline:
                return None
            scope = self.find(root, scope.path[:-1])

    def resolve(self, segs: tuple[str, ...], at: Module, root: Module, depth: int = 0) -> set[Path]:
        """The files a path's item is defined in."""
        s = self.start(segs, at, root)
        if s is None or depth > 8:
            return set()
        m, rest = s
        while rest and rest[0] in m.children:
            m, rest = m.children[rest[0]], rest[1:]
        if not rest or rest[0] in ("self", "*"):
            return {m.file}
        name = rest[0]
        if name not in m.reexports and not m.defines(name):
            # `pub use child::*`: the item is in whichever glob source defines it
            for src, written_in in m.globs:
                s = self.start(src, written_in, root)
                if s is None:
                    continue
                g, grest = s
                while grest and grest[0] in g.children:
                    g, grest = g.children[grest[0]], grest[1:]
                if not grest and g.defines(name):
                    return self.resolve(src + (name,), written_in, root, depth + 1)
        if name in m.reexports:
            src, written_in = m.reexports[name]
            got = self.resolve(src, written_in, root, depth + 1)
            # A parent re-exporting its own children is a facade: follow it. A module that
            # re-exports another's items is itself used by whoever names them through it.
            inside = m.file.parent if m.file.name in ("lib.rs", "main.rs", "mod.rs") else m.file.with_suffix("")
            if got and all(inside in g.parents for g in got):
                return got
            return got | {m.file}
        return {m.file}

    def edges(self) -> dict[Path, dict[Path, set[str]]]:
        out: dict[Path, dict[Path, set[str]]] = {}
        for root in self.roots:
            for mod in self.modules_of(root):
                for segs, at in mod.uses:
                    for target in self.resolve(segs, at, root):
                        if target != mod.file:
                            out.setdefault(mod.file, {}).setdefault(target, set()).add("::".join(segs))
        return out

    def modules_of(self, root: Module):
        stack = [root]
        while stack:
            m = stack.pop()
            yield m
            stack.extend(m.children.values())


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


def cycles(graph: dict[Path, dict[Path, set[str]]]) -> list[list[Path]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    on, stack, out = set(), [], []
    counter = [0]

    def visit(v: Path) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(graph, comp: list[Path]) -> list[Path]:
    """One shortest cycle through the component's first file, for the message."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, {})):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def check_crate(crate_dir: Path, known: list[str] | None = None) -> list[str]:
    src = crate_dir / "src"
    crate = Crate(src)
    problems = list(crate.errors)
    graph = crate.edges()
    rel = lambda p: str(p.relative_to(src))  # noqa: E731
    for comp in cycles(graph):
        files = {rel(p) for p in comp}
        if known is not None and any(files <= k for k in KNOWN_CYCLES.get(crate_dir.name, [])):
            known.append(f"{crate_dir.name}: known cycle among {', '.join(sorted(files))}")
            continue
        cyc = shortest_cycle(graph, comp)
        steps = []
        for a, b in zip(cyc, cyc[1:]):
            steps.append(f"{rel(a)} -> {rel(b)} ({', '.join(sorted(graph[a][b])[:2])})")
        problems.append(
            f"{crate_dir.name}: cycle among {len(comp)} files [{', '.join(rel(p) for p in comp)}]: " + "; ".join(steps)
        )
    rule = RULES.get(crate_dir.name)
    if rule:
        folder, words, banned = rule
        iso = src / folder
        if not iso.is_dir():
            problems.append(f"{crate_dir.name}: no src/{folder}/ folder (the part that must not know {', '.join(banned)})")
        else:
            for f in sorted(iso.rglob("*.rs")):
                text = f.read_text(encoding="utf-8")
                for w in words:
                    if w in text:
                        problems.append(f"{crate_dir.name}: {rel(f)} mentions {w}")
                for target, via in graph.get(f, {}).items():
                    top = target.relative_to(src).parts[0]
                    if top.removesuffix(".rs") in banned:
                        problems.append(f"{crate_dir.name}: {rel(f)} uses {rel(target)} ({', '.join(sorted(via))})")
    return problems


def workspace_members(root: Path) -> list[Path]:
    text = (root / "Cargo.toml").read_text(encoding="utf-8")
    m = re.search(r"members\s*=\s*\[([^\]]*)\]", text)
    return [root / x for x in re.findall(r'"([^"]+)"', m.group(1))] if m else []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("crates", nargs="*", type=Path, help="crate folders (with src/)")
    ap.add_argument("--workspace", action="store_true", help="check every workspace member")
    ap.add_argument("--edges", action="store_true", help="print the file graph too")
    ap.add_argument("--strict", action="store_true", help="fail on the known cycles too")
    args = ap.parse_args()
    crates = list(args.crates)
    if args.workspace or not crates:
        crates += workspace_members(Path(__file__).resolve().parents[2])
    problems, known = [], None if args.strict else []
    for c in crates:
        if args.edges:
            cr = Crate(c / "src")
            for a, bs in sorted(cr.edges().items()):
                for b in sorted(bs):
                    print(f"{a.relative_to(c / 'src')} -> {b.relative_to(c / 'src')}")
        problems += check_crate(c, known)
    for p in known or []:
        print(p)
    for p in problems:
        print(p)
    print(f"{len(crates)} crate(s) checked: " + (f"{len(problems)} problem(s)" if problems else "no cycles"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
