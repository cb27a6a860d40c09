"""A monitor at scale 2 (a second headless shell, 2560x1600 physical): bounds and screenshot in
logical pixels, and a point read off the screenshot, clicked, lands there."""

import os
import subprocess

import pytest
from conftest import BED, TESTAPP_NAME, app_events, parse_env, poll, run_probe
from gui_flow import act, element, find_window, observe, wait_for
from lsm_mcp import image_bytes, mcp_stdio, rect
from png_rgba import decode, pixel
from wl_shell import buffer_offset, shell_window

DIR = "/tmp/lsm-wlbed-hidpi"


@pytest.fixture(scope="module")
def hidpi():
    env = dict(os.environ, LSM_WLBED_DIR=DIR, LSM_WLBED_SIZE="2560x1600", LSM_WLBED_SCALE="2")
    subprocess.run(["bash", str(BED), "down"], capture_output=True, text=True, timeout=120, env=env)
    r = subprocess.run(["bash", str(BED), "up"], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    sets, _ = parse_env(r.stdout)
    saved = {k: os.environ.get(k) for k in sets}
    os.environ.update(sets)  # the ground-truth helpers talk to this session meanwhile
    try:
        r = subprocess.run(["bash", str(BED), "ensure-app", "testapp"], capture_output=True, text=True,
                           timeout=60, env=env)
        assert r.returncode == 0, r.stderr
        pid = int(r.stdout.split()[-1])
        assert poll(lambda: shell_window(pid=pid), timeout=30), "no test app window"
        assert poll(lambda: run_probe(TESTAPP_NAME, depth=0, extents=False), timeout=30)
        lsm_env = dict(os.environ)
        lsm_env.pop("DISPLAY", None)
        lsm_env["LSM_WEB"] = "off"
        with mcp_stdio(env=lsm_env) as s:
            yield s, pid
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        subprocess.run(["bash", str(BED), "down"], capture_output=True, text=True, timeout=120, env=env)


def test_scale_2_bounds_screenshot_and_a_click_off_it(hidpi):
    s, pid = hidpi
    win = find_window(s, title="lsm test app")
    truth = shell_window(pid=pid)
    assert truth["scale"] == 2
    f = truth["frame"]  # stage px: physical at scale 2
    half = lambda v: int(v / 2 + 0.5)  # noqa: E731  (lsm rounds half away from zero)
    assert win["bounds"] == {k: half(f[k]) for k in ("x", "y", "width", "height")}
    res = s.call("gui_state", {"window_id": win["window_id"], "screenshot": True})
    st = s.ok(res)
    width, height, rows = decode(image_bytes(res))
    assert (width, height) == (win["bounds"]["width"], win["bounds"]["height"])
    b = rect(element(st, "Double-click here"))
    # The control's light blue is drawn where lsm says it is.
    r, g, bl = pixel(rows, b["x"] + 5, b["y"] + 5)[:3]
    assert bl > r + 10 and bl > 200, (r, g, bl)
    x, y = b["x"] + b["width"] // 2, b["y"] + b["height"] // 2
    n = len(app_events_at(DIR))
    act(s, observe(s, win), [{"type": "click", "x": x, "y": y}])
    ev = wait_for(lambda: app_events_at(DIR)[n:], what="the app saw the click")[0]
    dx, dy = buffer_offset(truth)  # physical; the app counts logical px from its surface
    assert (ev["x"] - dx // 2, ev["y"] - dy // 2) == (x, y)


def app_events_at(bed_dir: str) -> list[dict]:
    import json
    from pathlib import Path

    out = []
    for line in (Path(bed_dir) / "logs" / "app-testapp.log").read_text(errors="replace").splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("event") == "click":
                out.append(rec)
    return out
