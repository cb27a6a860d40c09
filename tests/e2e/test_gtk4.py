"""GTK4's coordinate rule (extents relative to the toplevel surface, shadow margin included),
proved by pointer clicks at the points lsm computes: GTK 4.8 check boxes have no AT-SPI action,
so an element click on one is a pointer click at its computed centre."""

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from conftest import parse_env  # noqa: E402
from gui_flow import act, center, find_window, observe, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

APP = "gtk4-widget-factory"
REPO = Path(__file__).resolve().parents[2]
BED = REPO / "tests" / "bed" / "desktop.sh"


@pytest.fixture(scope="module")
def composited_bed():
    """A second desktop whose window manager composites: GTK4 then draws a client-side shadow
    and sets _GTK_FRAME_EXTENTS, which its AT-SPI extents include."""
    env = dict(os.environ, LSM_BED_DISPLAY=":98", LSM_BED_DIR="/tmp/lsm-bed-composited",
               LSM_BED_COMPOSITOR="1", LSM_BED_APPS=APP)
    up = subprocess.run(["bash", str(BED), "up"], env=env, capture_output=True, text=True, timeout=180)
    assert up.returncode == 0, up.stderr[-3000:]
    sets, unsets = parse_env(up.stdout)
    try:
        yield sets, unsets
    finally:
        subprocess.run(["bash", str(BED), "down"], env=env, capture_output=True, timeout=60)


@pytest.fixture(params=["plain", "composited"])
def desktop(request, monkeypatch):
    """Which desktop the test runs on; the composited one is applied to os.environ."""
    if request.param == "composited":
        sets, unsets = request.getfixturevalue("composited_bed")
        for k in unsets:
            monkeypatch.delenv(k, raising=False)
        for k, v in sets.items():
            monkeypatch.setenv(k, v)
    return request.param


def frame_extents(window_id: str) -> list[int]:
    out = subprocess.run(["xprop", "-id", window_id, "_GTK_FRAME_EXTENTS"], capture_output=True, text=True,
                         timeout=10).stdout
    return [int(v) for v in out.split("=")[1].split(",")] if "=" in out else [0, 0, 0, 0]


def checks(probe) -> list[bool]:
    """Checked state of the factory's "checkbutton" check boxes, in tree order (AT-SPI)."""
    nodes = probe(APP, find="checkbutton", role="check box", all=True, timeout=60)
    return ["checked" in n["states"] for n in nodes]


def test_gtk4_clicks_land_on_the_computed_point(desktop, lsm_factory, probe):
    s = lsm_factory("stdio")
    win = find_window(s, app=APP)
    margin = frame_extents(win["window_id"])
    # The composited case is the one with a shadow margin to subtract.
    assert (max(margin) > 0) == (desktop == "composited"), margin
    st = observe(s, win, max_depth=20, max_elements=1000)
    boxes = [e for e in st["elements"] if e["role"] == "check_box" and e.get("name", "") == "checkbutton"]
    assert len(boxes) >= 2, boxes
    i = next(i for i, e in enumerate(boxes) if not {"disabled", "checked"} & set(e.get("states", [])))
    before = checks(probe)
    assert len(before) == len(boxes) and before[i] is False
    res = act(s, st, [{"type": "click", "element_id": boxes[i]["id"]}])
    assert res["results"][0]["method"] == "xtest", "GTK 4.8 check boxes have no action: a pointer click"
    wait_for(lambda: checks(probe)[i] is True, timeout=10,
             what=f"GTK4 check box checked by element click (lsm answered {res['results'][0]})")
    # And back by explicit window-relative coordinates.
    st = observe(s, win, max_depth=20, max_elements=1000)
    box = [e for e in st["elements"] if e["role"] == "check_box" and e.get("name", "") == "checkbutton"][i]
    assert "checked" in box.get("states", [])
    x, y = center(box)
    res = act(s, st, [{"type": "click", "x": x, "y": y}])
    wait_for(lambda: checks(probe)[i] is False, timeout=10,
             what=f"GTK4 check box unchecked by x/y click (lsm answered {res['results'][0]})")


def test_an_element_that_moves_by_itself_is_no_evidence(lsm_factory):
    """GTK 4's widget factory has an element that moves every frame with no event (an animated
    filler). A click that does nothing must not be answered `confirmed` because that element was
    somewhere else after it: issue 22's "evidence of the moment, not of the effect" (seen as
    "confirmed, 1 elements moved or resized" for a check box click GTK 4 had lost)."""
    s = lsm_factory("stdio")
    win = find_window(s, app=APP)
    st = observe(s, win, max_depth=20, max_elements=1000)
    movers = [e for e in st["elements"] if e["role"] == "filler" and e.get("bounds")]
    assert movers, "the factory's animated filler is not in the observation"
    # A plain label: a click on it changes nothing in the application.
    label = next(e for e in st["elements"] if e["role"] == "label" and e.get("name") and e.get("bounds")
                 and "disabled" not in e.get("states", []))
    for _ in range(3):
        x, y = center(label)
        out = act(s, st, [{"type": "click", "x": x, "y": y}])
        r = out["results"][0]
        assert r["effect"] != "confirmed", r
        assert "moved" not in (r.get("evidence") or ""), r
        st = observe(s, win, max_depth=20, max_elements=1000)
        label = next(e for e in st["elements"] if e["id"] == label["id"])
