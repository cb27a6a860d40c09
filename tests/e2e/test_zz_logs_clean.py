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


def scan(base: Path, logs: list[Path], secrets: list[dict]) -> tuple[list[str], int, int]:
    """(lines holding a secret, start-up login URLs seen, characters read) in `logs`."""
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
    return report, announced, size


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

    report, announced, size = scan(base, logs, secrets)
    print(f"{len(logs)} logs ({size / 1e3:.0f} kB) of {base.name} at LSM_LOG=trace; "
          f"{len(secrets)} secrets ({dict(sorted(kinds.items()))}); "
          f"{announced} start-up login URLs with a generated web secret; {len(report)} lines with a secret")
    assert not report, "secrets in the logs:\n" + "\n".join(report[:50])
    # The grep sees what it looks for: the generated secrets lsm announced at start are found.
    if kinds["web_secret"] and any(item.path.name == "test_security.py" for item in request.session.items):
        assert announced > 0, "no start-up login URL was found: the logs are not where the grep looks"


def test_the_scan_finds_what_it_looks_for(tmp_path):
    """The grep itself: each kind of secret planted in a log, as lsm could print it, is found;
    the start-up login URL of a generated secret is the one line let through."""
    cookie, bearer, web = "c0ffee" * 10 + "abcd", "beef" * 16, "0123456789abcdef" * 2
    secrets = [{"kind": "session_cookie", "value": cookie}, {"kind": "bearer", "value": bearer},
               {"kind": "worker_token", "value": "lsmw_" + "7" * 64}, {"kind": "web_secret", "value": web},
               {"kind": "password_text", "value": "pässwörd \"x\""},
               {"kind": "mcp_session", "value": "a115ee91-3eec-4088-89ee-8efc4b97b208"}]
    log = tmp_path / "logs" / "lsm-x.log"
    log.parent.mkdir()
    log.write_text("\n".join([
        f"lsm: web UI http://127.0.0.1:7710/#secret={web}",  # allowed
        "DEBUG fine line, window 0x1a00007, pin " + "9" * 64,  # no secret
        f"DEBUG cookie={cookie}",
        f"TRACE header authorization: Bearer {bearer[:20]}…",  # a piece of it
        "WARN worker refused: token lsmw_" + "7" * 64,
        'DEBUG args {"text": "p\\u00e4ssw\\u00f6rd \\"x\\""}',  # JSON-escaped
        "INFO create new session session_id=a115ee91-3eec-4088-89ee-8efc4b97b208",
        f"DEBUG login url #secret={web}",  # the generated secret anywhere else
    ]) + "\n")
    report, announced, _ = scan(tmp_path, [log], secrets)
    assert announced == 1, report
    found = {int(r.split(":")[1]): r for r in report}
    assert sorted(found) == [3, 4, 5, 6, 7, 8], report
    for n, kind in [(3, "session_cookie"), (4, "bearer"), (5, "worker_token"), (6, "password_text"),
                    (7, "mcp_session"), (8, "web_secret")]:
        assert kind in found[n], (n, found[n])
