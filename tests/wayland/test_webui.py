"""The web UI's Desktop page drives a native Wayland window (Chromium via playwright-core,
tests/webui/wayland.mjs): a click and CJK text, each checked through AT-SPI."""

import json
import os
import subprocess

import pytest
from conftest import LSM_BIN, REPO, TESTAPP_NAME, ensure_app, lsm_env
from lsm_web import WebServer
from wl_shell import buffer_offset

NODE = REPO / "tests" / "conformance" / "node_modules" / ".bin" / "node"
WEBUI = REPO / "tests" / "webui"


@pytest.fixture(scope="module")
def scenarios():
    if not NODE.exists() or not (WEBUI / "node_modules" / "playwright-core").exists():
        pytest.fail("tests/webui/node_modules or Node 22 is missing: run tests/setup.sh")
    w = ensure_app("testapp", TESTAPP_NAME)
    env = lsm_env()
    env.pop("LSM_WEB", None)
    srv = WebServer(LSM_BIN, env=env, whole_env=True)
    try:
        dx, dy = buffer_offset(w)
        r = subprocess.run([str(NODE), str(WEBUI / "wayland.mjs")], capture_output=True, text=True, timeout=300,
                           cwd=WEBUI, env={**os.environ, "LSM_WEB_URL": srv.url, "LSM_WEB_SECRET": srv.secret,
                                           "LSM_WL_OFFSET": f"{dx},{dy}"})
    finally:
        srv.log.seek(0)
        server_log = srv.log.read()[-4000:]
        srv.stop()
    out = {"server_log": server_log}
    for line in r.stdout.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        out[rec["scenario"]] = rec
    if "setup" in out or len(out) == 1:
        pytest.fail(f"wayland.mjs did not run (exit {r.returncode}):\n{r.stdout}\n{r.stderr[-3000:]}")
    return out


@pytest.mark.parametrize("name", ["login", "pick_window", "click_button", "cjk_text"])
def test_desktop_page_on_wayland(scenarios, name):
    rec = scenarios.get(name)
    assert rec, f"scenario {name} did not run"
    assert rec["ok"], f"{rec['detail']}\nserver log (tail):\n{scenarios['server_log']}"
