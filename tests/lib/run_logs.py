"""Where the lsm processes of a test run log, and which secrets the run used (issue 13: no secret
or token in any log line at any level; tests/e2e/test_zz_logs_clean.py greps them at the end).

    from run_logs import log_path, log_dir, record_secret

    path = log_path("lsm-http")            # a new, empty file for a process's stderr
    record_secret("bearer", token)         # a credential the run used

With $LSM_TEST_RUN_DIR set (tests/e2e/conftest.py sets one per pytest run, under
target/test-logs/, and LSM_LOG=trace), logs go to $LSM_TEST_RUN_DIR/logs/ and secrets are
appended to $LSM_TEST_RUN_DIR/secrets.jsonl (mode 0600; never grepped itself). Without it (the
benchmarks, a tool run by hand), logs are temporary files as before and nothing is recorded.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

SECRETS = "secrets.jsonl"
# The kinds of secrets a run records; the final test reports each.
KINDS = ("web_secret", "session_cookie", "csrf_token", "bearer", "worker_token", "password_text", "mcp_session")


def run_dir() -> Path | None:
    d = os.environ.get("LSM_TEST_RUN_DIR")
    return Path(d) if d else None


def log_dir(prefix: str = "lsm") -> str:
    """A new directory for a group of logs (a remote rig's controller and workers)."""
    base = run_dir()
    if base is None:
        return tempfile.mkdtemp(prefix=f"{prefix}-")
    (base / "logs").mkdir(parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"{prefix}-", dir=base / "logs")


def log_path(prefix: str = "lsm") -> str:
    """A new, empty file for one process's stderr."""
    base = run_dir()
    if base is not None:
        (base / "logs").mkdir(parents=True, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix=f"{prefix}-", suffix=".log",
                                dir=None if base is None else base / "logs")
    os.close(fd)
    return path


def record_secret(kind: str, value: str | None) -> None:
    """Notes a secret the run used, for the final grep of the logs (nothing without a run)."""
    base = run_dir()
    if base is None or not value:
        return
    assert kind in KINDS, kind
    base.mkdir(parents=True, exist_ok=True)
    path = base / SECRETS
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(json.dumps({"kind": kind, "value": value}, ensure_ascii=False) + "\n")


def recorded_secrets(base: Path | None = None) -> list[dict]:
    base = base or run_dir()
    path = None if base is None else base / SECRETS
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def log_files(base: Path | None = None) -> list[Path]:
    base = base or run_dir()
    if base is None or not (base / "logs").exists():
        return []
    return sorted(p for p in (base / "logs").rglob("*") if p.is_file() and p.suffix == ".log")
