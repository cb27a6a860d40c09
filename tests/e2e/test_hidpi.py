"""A scale-2 application: window bounds, element bounds and the screenshot all in logical
pixels, proved by clicking at a position read off the screenshot."""

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from conftest import parse_env  # noqa: E402
from gui_flow import act, element, find_window, observe, rect, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403
from png_rgba import decode, pixel  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BED = REPO / "tests" / "bed" / "desktop.sh"
TITLE = "lsm test app"
AREA = (0xDD, 0xE7, 0xF3)  # the test app's click areas (CSS .lsm-area)


@pytest.fixture(scope="module")
def hidpi_env():
    """A second desktop at 2560x1600 with Xft.dpi 192, running the test app at GDK_SCALE=2."""
    bed = dict(os.environ, LSM_BED_DISPLAY=":88", LSM_BED_DIR="/tmp/lsm-bed-hidpi",
               LSM_BED_SCREEN="2560x1600x24", LSM_BED_APPS="xterm")
    up = subprocess.run(["bash", str(BED), "up"], env=bed, capture_output=True, text=True, timeout=180)
    assert up.returncode == 0, up.stderr[-3000:]
    sets, unsets = parse_env(up.stdout)
    env = {k: v for k, v in os.environ.items() if k not in unsets}
    env.update(sets)
    subprocess.run(["xprop", "-root", "-f", "RESOURCE_MANAGER", "8s", "-set", "RESOURCE_MANAGER",
                    "Xft.dpi:\t192\n"], env=env, check=True, timeout=10)
    app = subprocess.Popen(["/usr/bin/python3", str(REPO / "tests" / "apps" / "lsm_testapp.py")],
                           env=dict(env, GDK_SCALE="2"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield env, sets, unsets
    finally:
        app.terminate()
        try:
            app.wait(timeout=10)
        except subprocess.TimeoutExpired:
            app.kill()
        subprocess.run(["bash", str(BED), "down"], env=bed, capture_output=True, timeout=60)


@pytest.fixture
def hidpi(hidpi_env, monkeypatch, probe):
    env, sets, unsets = hidpi_env
    for k in unsets:
        monkeypatch.delenv(k, raising=False)
    for k, v in sets.items():
        monkeypatch.setenv(k, v)
    assert probe(find="Press me", wait=30), "the scale-2 test app did not register on AT-SPI"
    return env


def test_scale_2_observation_is_in_logical_pixels(hidpi, lsm_factory, probe):
    s = lsm_factory("stdio", env=hidpi)
    win = find_window(s, title=TITLE, timeout=30)
    xid = int(win["window_id"], 16)
    geometry = subprocess.run(["xwininfo", "-id", str(xid)], capture_output=True, text=True, timeout=10,
                              env=hidpi).stdout
    physical_width = int(next(line.split(":")[1] for line in geometry.splitlines() if "Width:" in line))
    assert physical_width >= 1180, f"the app is not at scale 2: {physical_width} px wide"
    res = s.call("gui_state", {"window_id": win["window_id"]})
    st = s.ok(res)
    space = st["coordinate_space"]
    assert abs(space["width"] * 2 - physical_width) <= 1, (space, physical_width)
    assert st["window"]["bounds"]["width"] == space["width"]
    width, height, rows = decode(image_bytes(res))  # noqa: F405
    assert (width, height) == (space["width"], space["height"]), "one image pixel per logical pixel"
    # The element bounds agree with the image: "Press me" lies inside the window, logically.
    press = rect(element(st, "Press me"))
    assert press["x"] + press["width"] <= space["width"] and press["y"] + press["height"] <= space["height"]
    # Read the top click area ("Double-click here") off the screenshot and click inside it.
    area = [(x, y) for y in range(height) for x in range(width)
            if all(abs(a - b) <= 3 for a, b in zip(pixel(rows, x, y)[:3], AREA))]
    assert area, "no click area found in the screenshot"
    top = min(y for _, y in area)
    row = [x for x, y in area if y == top + 12]
    x, y = (min(row) + max(row)) // 2 + 5, top + 12
    time.sleep(0.7)  # keep clear of other tests' clicks (GTK multi-click time)
    act(s, observe(s, win), [{"type": "click", "x": x, "y": y}])
    # GTK truncates a scaled window's logical origin, so at scale 2 the app's own arithmetic
    # may differ from the point by one logical pixel (half of it is one physical pixel).

    def landed():
        got = probe(find="Clicked at", match="prefix")["name"].removeprefix("Clicked at ")
        if "," not in got:
            return None
        gx, gy = (int(v) for v in got.split(","))
        return abs(gx - x) <= 1 and abs(gy - y) <= 1

    wait_for(landed, what=f"click at {x},{y} read off the screenshot "
                          f"(element bounds {element(st, 'Double-click here').get('bounds')})")
