"""The documentation cannot drift from the binary: every fenced code block of README.md,
CONTRIBUTING.md and docs/*.md is run or checked against the built lsm (LSM_BIN, default
target/release/lsm), or names in its info string (`sh no-run=<id>`) an entry of ALLOWED below
that says why it cannot run here. See docs/testing.md "Docs".

Run: .venv/bin/python -m pytest tests/docs (no desktop needed; run-all's `docs` step)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import md_blocks
from checks import TOOLS, FileRun, workspace_rust_version
from md_blocks import REPO, blocks, doc_files
from sandbox import Sandbox

# Blocks that are not run, by the id in their info string, and why.
ALLOWED = {
    "rustup": "downloads and runs the rustup installer from the network; CI has its toolchain "
              "(the `rustc --version` block beside it is run and compared with rust-version)",
    "cargo-install": "rebuilds lsm into ~/.cargo/bin (about 4 minutes here); the install test of "
                     "issue 24 runs this line with --root <tmp>",
    "cargo-test": "the whole unit suite: run-all's unit step runs it (cargo test --workspace --profile ci-test)",
    "e2e-one-file": "needs a test desktop: run-all's e2e step runs tests/e2e",
    "docs-test": "this test itself",
    "serve-stdio": "waits for an MCP client on stdin: the JSON client configurations, which start "
                   "`lsm serve` and talk to it through the official SDK, run the same command",
    "ci": "the whole CI run (about 45 minutes, installs packages system-wide)",
    "bed-up": "starts a test desktop: run-all's bed step does the same with its own display",
    "systemd-user": "needs a user systemd manager in a graphical session (CI runs as root without "
                    "one); the unit's ExecStart arguments are checked from its ini block",
    "windows-task": "PowerShell's ScheduledTasks module exists only on Windows; the lsm arguments "
                    "in -Argument are checked",
    "macos-launchagent": "launchctl exists only on macOS; the plist's ProgramArguments are checked",
    "release-build": "builds and packs the release (about a minute with --no-build): run-all's "
                     "release step runs `release/build.sh --no-build` and tests/release checks every "
                     "artifact",
    "release-publish": "a real release from a tagged commit with the maintainer's URL and name "
                       "(placeholders here); tests/release runs release/build.sh with test values "
                       "and checks that --check-tag refuses an untagged tree",
    "audit-record": "an audit record is written only for input sent to a desktop; "
                    "tests/e2e/test_audit.py reads the real file",
}
LANGS = {"sh", "bash", "json", "jsonc", "ini", "xml", "powershell", "text", "toml"}
TAGS = {"no-run", "output", "abridged"}
README_LIMIT = 12_288
INSTALL_WITHIN = 60

ALL_BLOCKS = [b for f in doc_files() for b in blocks(f)]


@pytest.fixture(scope="module")
def published_tools():
    """tools/list of the built binary, through the official SDK."""
    sb = Sandbox()
    try:
        return sb.mcp_stdio("lsm", ["serve"])
    finally:
        sb.close()


def test_every_block_follows_the_convention():
    bad = []
    used = set()
    for b in ALL_BLOCKS:
        if b.lang not in LANGS:
            bad.append(f"{b.where}: language {b.lang!r} (one of {sorted(LANGS)})")
        for t in set(b.tags) - TAGS:
            bad.append(f"{b.where}: unknown tag {t!r}")
        if b.no_run is not None:
            used.add(b.no_run)
            if b.no_run not in ALLOWED:
                bad.append(f"{b.where}: no-run={b.no_run!r} is not in the allow-list with a reason")
    bad += [f"allow-list entry {k!r} is used by no block" for k in sorted(set(ALLOWED) - used)]
    assert not bad, "\n".join(bad)


def test_readme_is_short_and_installs_first():
    readme = REPO / "README.md"
    size = len(readme.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; at most {README_LIMIT}"
    lines = readme.read_text().splitlines()
    heading = next(i for i, l in enumerate(lines, 1) if re.match(r"^#+ Install", l))
    install = next(i for i, l in enumerate(lines, 1) if l.startswith("cargo install --locked --path crates/lsm"))
    assert heading <= INSTALL_WITHIN and install <= INSTALL_WITHIN, (heading, install)
    m = re.search(r"needs Rust (\d+\.\d+) or newer", readme.read_text())
    assert m and tuple(map(int, m[1].split("."))) == workspace_rust_version()[:2], (
        "README's Rust version is not the workspace's rust-version")


def test_relative_links_resolve():
    bad = []
    for f in doc_files():
        for line, target in md_blocks.relative_links(f):
            path, _, anchor = target.partition("#")
            dest = (f.parent / path).resolve() if path else f
            if path == "docs/release.md" or dest == REPO / "docs" / "release.md":
                if not dest.exists():  # written by the release work of issue 24
                    continue
            if not dest.exists():
                bad.append(f"{f.name}:{line}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in md_blocks.anchors(dest):
                bad.append(f"{f.name}:{line}: {target}: no heading with that anchor")
    assert not bad, "\n".join(bad)


def action_rules_from_source() -> dict[str, set[str]]:
    """The fields each action type takes, from `f.only(&[...])` in parse_one."""
    src = (REPO / "crates/lsm-core/src/action.rs").read_text()
    rules = {}
    for kinds, fields in re.findall(r'((?:"\w+"\s*\|?\s*)+)=>\s*\{\s*f\.only\(&\[([^\]]*)\]\)', src):
        for k in re.findall(r'"(\w+)"', kinds):
            rules[k] = set(re.findall(r'"(\w+)"', fields))
    return rules


def table_rows(path: Path, heading: str) -> list[list[str]]:
    text = path.read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [l for l in section.splitlines() if l.startswith("| ") and not l.startswith("|---")]
    return [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows[1:]]


def test_action_table_matches_the_source_and_the_schema(published_tools):
    source = action_rules_from_source()
    documented = {}
    for row in table_rows(REPO / "docs/tools.md", "Actions and their fields"):
        kind = row[0].strip("`")
        documented[kind] = set(re.findall(r"`(\w+)`", row[1] + " " + row[2]))
    assert documented == source, f"docs/tools.md: {documented}\naction.rs: {source}"
    schema = next(t for t in published_tools if t.name == "gui_action").input_schema
    item = schema["properties"]["actions"]["items"]
    if "$ref" in item:
        item = schema["$defs"][item["$ref"].rsplit("/", 1)[1]]
    assert set(item["properties"]) == set().union(*source.values()) | {"type"}


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_argument_tables_match_the_schema(published_tools, tool):
    text = (REPO / "docs/tools.md").read_text().split("\n## Tool arguments\n", 1)[1].split("\n## ", 1)[0]
    section = text.split(f"`{tool}`:\n", 1)[1].split("\n\n`", 1)[0]
    documented = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    schema = next(t for t in published_tools if t.name == tool).input_schema
    assert documented == set(schema["properties"]), (documented, set(schema["properties"]))


@pytest.mark.parametrize("doc", doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_snippets_run(doc, published_tools):
    sb = Sandbox()
    run = FileRun(sb, published_tools)
    try:
        run.run(blocks(doc))
    finally:
        sb.close()
    assert not run.errors, "\n\n".join(run.errors)


def test_every_error_code_is_documented():
    """Each code ErrorCode::as_str can answer is listed under docs/tools.md's "Error codes"
    (a model, and whoever writes its prompt, reads the list there), and the list names no code
    the server cannot send."""
    src = (REPO / "crates/lsm-core/src/error.rs").read_text()
    codes = set(re.findall(r'Self::\w+ => "([A-Z_]+)"', src))
    assert len(codes) > 10, "ErrorCode::as_str not found in error.rs"
    section = (REPO / "docs/tools.md").read_text().split("\n## Error codes\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"`([A-Z][A-Z_]+[A-Z])`", section))
    assert not codes - listed, f"codes missing from docs/tools.md: {sorted(codes - listed)}"
    assert not listed - codes, f"docs/tools.md lists codes lsm never sends: {sorted(listed - codes)}"
