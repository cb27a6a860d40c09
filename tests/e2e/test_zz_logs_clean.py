"""Nothing secret in the logs of a whole e2e run (issue 13, must show 5). Runs last (its name).

Every lsm the run started logged at LSM_LOG=trace into this run's directory
(target/test-logs/e2e-run-*/logs, tests/lib/run_logs.py), and the tests recorded the secrets they
used: web UI secrets, session cookies, CSRF tokens, MCP bearer tokens, MCP session ids, worker
tokens and the text typed into password fields. None of them may appear in any log line, whole, JSON-escaped,
percent-encoded or as a 16-character piece of a token. The one deliberate exception: a web UI
secret lsm generated itself is printed once at start, in the login URL
(`lsm: web UI http://...#secret=...`), for the person who started it; that line is checked to be
there (which also shows the grep finds what it looks for) and nowhere else.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.parse
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from run_logs import KINDS, log_files, recorded_secrets, run_dir  # noqa: E402

ANNOUNCED = re.compile(r"^lsm: web UI http://\S+/#secret=(\S+)$", re.M)
HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}")
PIECE = 16


def forms(value: str) -> set[str]:
    """How a secret could appear in a log line."""
    out = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1],
           urllib.parse.quote(value, safe=""), repr(value)[1:-1]}
    return {f for f in out if f}


def hex_core(value: str) -> str | None:
    """The random hex part of a token (cookies, CSRF tokens, bearer tokens, lsmw_ worker tokens)."""
    m = re.fullmatch(r"(?:lsmw_)?([0-9a-f]{32,})", value)
    return m.group(1) if m else None


def test_no_secret_in_any_log_of_the_run(request):
    base = run_dir()
    assert base is not None, "LSM_TEST_RUN_DIR is not set (tests/e2e/conftest.py sets it)"
    secrets = recorded_secrets()
    logs = log_files()
    if not secrets:
        pytest.skip("no test of this run used a secret: run this with the e2e suite (or test_security.py)")
    assert os.environ.get("LSM_LOG") == "trace", \
        f"the run's lsm processes logged at LSM_LOG={os.environ.get('LSM_LOG')!r}, not the most verbose level"
    assert logs, f"secrets were recorded but no log is in {base / 'logs'}"

    kinds = Counter(s["kind"] for s in secrets)
    if any(item.path.name == "test_security.py" for item in request.session.items):
        missing = [k for k in KINDS if not kinds[k]]
        assert not missing, f"test_security.py ran but recorded no {missing}"

    # Tokens: every 16-character piece of their random part; other secrets: their whole forms.
    pieces: dict[str, str] = {}
    whole: dict[str, str] = {}
    for s in secrets:
        core = hex_core(s["value"])
        if core:
            for i in range(len(core) - PIECE + 1):
                pieces[core[i:i + PIECE].lower()] = s["kind"]
        else:
            for f in forms(s["value"]):
                whole[f] = s["kind"]
    generated = {s["value"] for s in secrets if s["kind"] == "web_secret"}

    leaks: dict[tuple[str, int], set[str]] = {}
    lines_of: dict[tuple[str, int], str] = {}
    announced = 0
    size = 0
    for path in logs:
        text = path.read_text(encoding="utf-8", errors="replace")
        size += len(text)
        name = str(path.relative_to(base))

        def hit(at: int, kind: str) -> None:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            line = text[start:None if end < 0 else end]
            m = ANNOUNCED.match(line.strip())
            if m and m.group(1) in generated:
                return  # the deliberate start-up line, counted below
            key = (name, text.count("\n", 0, start) + 1)
            leaks.setdefault(key, set()).add(kind)
            lines_of[key] = line[:300]

        for m in HEX_RUN.finditer(text):
            run = m.group(0).lower()
            for i in range(len(run) - PIECE + 1):
                kind = pieces.get(run[i:i + PIECE])
                if kind:
                    hit(m.start() + i, kind)
                    break
        for f, kind in whole.items():
            at = text.find(f)
            while at >= 0:
                hit(at, kind)
                at = text.find(f, at + 1)
        announced += sum(1 for m in ANNOUNCED.finditer(text) if m.group(1) in generated)
    report = [f"{n}:{line}: {sorted(k)}: {lines_of[(n, line)]}" for (n, line), k in sorted(leaks.items())]
    print(f"{len(logs)} logs ({size / 1e3:.0f} kB) of {base.name} at LSM_LOG=trace; "
          f"{len(secrets)} secrets ({dict(sorted(kinds.items()))}); "
          f"{announced} start-up login URLs with a generated web secret; {len(report)} lines with a secret")
    assert not report, "secrets in the logs:\n" + "\n".join(report[:50])
    # The grep sees what it looks for: the generated secrets lsm announced at start are found.
    if kinds["web_secret"] and any(item.path.name == "test_security.py" for item in request.session.items):
        assert announced > 0, "no start-up login URL was found: the logs are not where the grep looks"
