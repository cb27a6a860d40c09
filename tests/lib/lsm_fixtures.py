"""pytest fixtures for MCP sessions to `lsm`. In a test module:

    import sys, pathlib
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "lib"))
    from lsm_fixtures import *  # noqa: F401,F403

Fixtures (function scope, one fresh server each; env = os.environ, which tests/e2e/conftest.py
fills with the test desktop's variables):
    lsm_stdio   LsmSession over stdio
    lsm_http    LsmSession over Streamable HTTP (127.0.0.1, free port)
    lsm         parametrised over both transports (test ids [stdio] / [http])
    lsm_factory open(transport, env=None, **kw) -> LsmSession, all closed at teardown

At teardown the server's stderr tail is printed: pytest shows it under "Captured stdout teardown"
for a failing test only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lsm_mcp import (  # noqa: E402,F401
    CALL_TIMEOUT, LsmSession, RawHttp, RawStdio, bed_env, err_code, err_message, headless_env,
    image_bytes, lsm_bin, mcp_http, mcp_stdio, ok, text_of,
)

__all__ = [
    "lsm_stdio", "lsm_http", "lsm", "lsm_factory",
    "LsmSession", "RawHttp", "RawStdio", "err_code", "err_message", "headless_env",
    "image_bytes", "mcp_http", "mcp_stdio", "ok", "text_of", "CALL_TIMEOUT",
]


def _require_binary() -> None:
    b = lsm_bin()
    if not (os.path.isfile(b) and os.access(b, os.X_OK)):
        pytest.fail(f"{b} is missing: run `cargo build --release -p lsm` or set LSM_BIN")


def _teardown(sessions: list[LsmSession]) -> None:
    for s in sessions:
        s.close()
        tail = s.stderr_tail(30)
        if tail:
            print(f"--- lsm ({s.transport}) stderr tail, {s.stderr_path} ---\n{tail}")


@pytest.fixture
def lsm_factory():
    """open(transport="stdio"|"http", env=None, **LsmSession kwargs) -> an open LsmSession."""
    _require_binary()
    sessions: list[LsmSession] = []

    def open_(transport: str = "stdio", env: dict[str, str] | None = None, **kw) -> LsmSession:
        s = LsmSession(transport, env, **kw)
        sessions.append(s)
        return s.open()

    yield open_
    _teardown(sessions)


@pytest.fixture
def lsm_stdio(lsm_factory) -> LsmSession:
    return lsm_factory("stdio")


@pytest.fixture
def lsm_http(lsm_factory) -> LsmSession:
    return lsm_factory("http")


@pytest.fixture(params=["stdio", "http"])
def lsm(request, lsm_factory) -> LsmSession:
    return lsm_factory(request.param)
