"""Observation that is fast, lean on tokens and honest about pixels, against the GTK3 test app
through the official MCP client:

- every image format (png, jpeg, webp) arrives as MCP image content of the right mime type and
  of the coordinate space's size; bad format arguments are refused with INVALID_ARGUMENT;
- `query` returns the matching elements with their ancestors, under the ids of the full
  observation, and an id from a query result works in gui_action (effect checked on AT-SPI);
- a long-edge cap (`--max-image-edge 400`) puts the whole observation in one scaled space:
  image size, element bounds (checked against AT-SPI extents), a coordinate click that lands on
  the logical pixel it names (the app reports it), out-of-bounds judged in the scaled space;
- a password field's pixels are one flat colour in the screenshot and its value is absent.
"""

import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import pytest  # noqa: E402
from gui_flow import act, act_raw, box, center, element, find_window, observe, rect, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403
from outside_changes import observation_sees_changes_made_outside_lsm  # noqa: E402
from png_rgba import decode as decode_png  # noqa: E402

TITLE = "lsm test app"
SECRET = "s3cret-pw"


# ------------------------------------------------------------------ image headers
def image_block(result) -> tuple[str, bytes]:
    """(mime type, bytes) of the one image content block."""
    import base64

    blocks = [c for c in result.content or [] if getattr(c, "type", None) == "image"]
    assert len(blocks) == 1, f"expected one image block, got {len(blocks)}"
    return blocks[0].mime_type, base64.b64decode(blocks[0].data)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    return struct.unpack(">II", data[16:24])


def jpeg_size(data: bytes) -> tuple[int, int]:
    assert data[:3] == b"\xff\xd8\xff", "not a JPEG"
    pos = 2
    while pos + 9 < len(data):
        assert data[pos] == 0xFF, f"bad JPEG marker at {pos}"
        kind = data[pos + 1]
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        if kind in (0xC0, 0xC1, 0xC2):  # start of frame: precision, height, width
            h, w = struct.unpack(">HH", data[pos + 5:pos + 9])
            return w, h
        pos += 2 + length
    raise AssertionError("JPEG without a start-of-frame marker")


def webp_size(data: bytes) -> tuple[int, int]:
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP", "not a WebP"
    kind = data[12:16]
    if kind == b"VP8L":
        assert data[20] == 0x2F, "bad VP8L signature"
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if kind == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if kind == b"VP8 ":
        assert data[23:26] == b"\x9d\x01\x2a", "bad VP8 start code"
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    raise AssertionError(f"unknown WebP chunk {kind!r}")


SIZE_OF = {"png": png_size, "jpeg": jpeg_size, "webp": webp_size}


# ------------------------------------------------------------------ helpers
def label(probe, prefix: str) -> str:
    node = probe(find=prefix, match="prefix")
    assert node, f"status label {prefix!r} not found through AT-SPI"
    return node["name"]


def window_relative(extents: dict, win: dict) -> tuple[int, int, int, int]:
    b = win["bounds"]
    return extents["x"] - b["x"], extents["y"] - b["y"], extents["width"], extents["height"]


def ids_with_ancestors(st: dict) -> None:
    """Every returned element's parent is returned too (the outline shows where it is)."""
    ids = {e["id"] for e in st["elements"]}
    for e in st["elements"]:
        assert e.get("parent") is None or e["parent"] in ids, f"{e['id']} lacks its parent {e['parent']}"


@pytest.fixture
def app(lsm_stdio):
    return lsm_stdio, find_window(lsm_stdio, title=TITLE)


# ------------------------------------------------------------------ (a) formats
@pytest.mark.parametrize("fmt", ["png", "jpeg", "webp"])
def test_each_image_format_is_a_valid_image_of_the_space(app, fmt):
    s, win = app
    res = s.call("gui_state", {"window_id": win["window_id"], "image_format": fmt, "include_elements": False})
    st = s.ok(res)
    mime, data = image_block(res)
    assert mime == f"image/{fmt}"
    space = st["coordinate_space"]
    assert SIZE_OF[fmt](data) == (space["width"], space["height"]) == (win["bounds"]["width"], win["bounds"]["height"])
    shot = st["screenshot"]
    assert (shot["format"], shot["width"], shot["height"], shot["bytes"]) == (fmt, space["width"], space["height"], len(data))
    assert st["elements"] == [] and st["element_count"] == 0


def test_jpeg_quality_and_bad_image_arguments(app):
    s, win = app
    sizes = {}
    for q in (20, 95):
        res = s.call("gui_state", {"window_id": win["window_id"], "image_format": "jpeg", "image_quality": q,
                                   "include_elements": False})
        st = s.ok(res)
        assert st["screenshot"]["quality"] == q
        sizes[q] = len(image_block(res)[1])
    assert sizes[20] < sizes[95], sizes
    for args in ({"image_format": "gif"}, {"image_format": 3}, {"image_quality": 80},
                 {"image_format": "webp", "image_quality": 50}, {"image_format": "jpeg", "image_quality": 0}):
        r = s.call("gui_state", {"window_id": win["window_id"], **args})
        assert err_code(r) == "INVALID_ARGUMENT", (args, text_of(r))  # noqa: F405
    r = s.call("gui_state", {"window_id": win["window_id"], "image_format": "jpeg", "image_quality": 101})
    assert err_code(r) == "LIMIT_EXCEEDED", text_of(r)  # noqa: F405


# ------------------------------------------------------------------ (b) query
def test_query_returns_matches_with_ancestors_and_their_ids_act(app, probe):
    s, win = app
    full = observe(s, win)
    press_id = element(full, "Press me", "push_button")["id"]
    st = observe(s, win, query="PRESS me")
    assert st["matched"] >= 1 and st["query"] == "PRESS me"
    assert st["element_count"] == len(st["elements"]) < full["element_count"]
    ids_with_ancestors(st)
    press = element(st, "Press me", "push_button")
    assert press["id"] == press_id, "ids are those of the full observation"
    # Whatever is not a match is an ancestor of one.
    words = ("press", "me")
    matches = [e for e in st["elements"]
               if all(any(w in (e.get(f) or "").lower() for f in ("name", "role", "value", "description"))
                      for w in words)]
    assert len(matches) == st["matched"]
    parents = {e["id"]: e.get("parent") for e in st["elements"]}
    needed = set()
    for m in matches:
        p = m.get("parent")
        while p:
            needed.add(p)
            p = parents[p]
    assert {e["id"] for e in st["elements"]} == {m["id"] for m in matches} | needed
    # The outline shows the match too.
    assert f'{press_id} push_button "Press me"' in text_of(s.call("gui_state", {  # noqa: F405
        "window_id": win["window_id"], "query": "press me", "screenshot": False}))
    # An element left out by the query is not actionable with its state...
    entry_id = element(full, "Name entry")["id"]
    r = act_raw(s, st, [{"type": "focus", "element_id": entry_id}])
    assert err_code(r) == "ELEMENT_NOT_FOUND", text_of(r)  # noqa: F405
    # ...and a returned one is.
    n = int(label(probe, "Pressed:").split(":")[1])
    st = observe(s, win, query="press me")
    act(s, st, [{"type": "click", "element_id": element(st, "Press me", "push_button")["id"]}])
    wait_for(lambda: label(probe, "Pressed:") == f"Pressed: {n + 1}", what="Pressed +1 via a query's id")


def test_query_by_role_word_and_no_match(app):
    s, win = app
    st = observe(s, win, query="slider volume")
    assert st["matched"] == 1 and element(st, "Volume")["role"] == "slider"
    none = observe(s, win, query="no-such-element-anywhere")
    assert none["matched"] == 0 and none["elements"] == [] and none["element_count"] == 0
    for q in ("", "   "):
        r = s.call("gui_state", {"window_id": win["window_id"], "query": q})
        assert err_code(r) == "INVALID_ARGUMENT", text_of(r)  # noqa: F405


# ------------------------------------------------------------------ (c) the long-edge cap
def test_cap_scales_the_whole_observation(lsm_factory, probe):
    s = lsm_factory("stdio", args=["--max-image-edge", "400"])
    win = find_window(s, title=TITLE)
    lw, lh = win["bounds"]["width"], win["bounds"]["height"]
    assert max(lw, lh) > 400, "the test app must be larger than the cap"
    res = s.call("gui_state", {"window_id": win["window_id"]})
    st = s.ok(res)
    space = st["coordinate_space"]
    sc = 400 / max(lw, lh)
    assert space["units"] == "scaled_px" and abs(space["scale"] - sc) < 1e-9, space
    assert max(space["width"], space["height"]) == 400
    assert (space["width"], space["height"]) == (round(lw * sc), round(lh * sc)), space
    assert "scaled" in space["note"] and "as they are" in space["note"]
    mime, data = image_block(res)
    assert mime == "image/png" and png_size(data) == (space["width"], space["height"])
    assert st["window"]["bounds"] == win["bounds"], "the window itself is reported in logical px"
    assert "scaled x0.6667" in text_of(res)  # noqa: F405
    # Element bounds are the AT-SPI extents scaled (rounded outward: at most a unit of slack).
    sx, sy = space["width"] / lw, space["height"] / lh
    for name in ("Double-click here", "Press me", "Volume"):
        b = rect(element(st, name))
        x, y, w, h = window_relative(probe(find=name)["extents"], win)
        want = (x * sx, y * sy, (x + w) * sx, (y + h) * sy)
        got = (b["x"], b["y"], b["x"] + b["width"], b["y"] + b["height"])
        assert all(abs(g - v) <= 1.5 for g, v in zip(got, want)), (name, got, want)
    # A coordinate click at the scaled centre lands on the logical pixel it stands for.
    cx, cy = center(element(st, "Double-click here"))
    cx, cy = cx - 5, cy + 2  # not the element's centre, to prove the mapping
    time.sleep(0.7)  # keep clear of other tests' clicks (GTK multi-click time)
    st = observe(s, win)
    res = act(s, st, [{"type": "click", "x": cx, "y": cy}])
    assert res["results"][0]["method"] == "xtest"

    def landed():
        got = label(probe, "Clicked at").removeprefix("Clicked at ")
        if "," not in got:
            return None
        gx, gy = (int(v) for v in got.split(","))
        return (gx, gy) if abs(gx - cx / sx) <= 2 and abs(gy - cy / sy) <= 2 else None

    wait_for(landed, what=f"click at scaled {cx},{cy} = logical {cx / sx:.1f},{cy / sy:.1f}")
    # Out of bounds is judged in the scaled space: x=400 is inside the 600 px window, but not
    # inside this observation's 400 units.
    st = observe(s, win)
    r = act_raw(s, st, [{"type": "move", "x": space["width"], "y": 10}])
    assert err_code(r) == "OUT_OF_BOUNDS", text_of(r)  # noqa: F405
    assert "scaled" in err_message(r)  # noqa: F405
    st = observe(s, win)
    r = act_raw(s, st, [{"type": "drag", "x": 10, "y": 10, "to_x": 10, "to_y": space["height"]}])
    assert err_code(r) == "OUT_OF_BOUNDS", text_of(r)  # noqa: F405
    st = observe(s, win)
    act(s, st, [{"type": "move", "x": space["width"] - 1, "y": space["height"] - 1}])


# ------------------------------------------------------------------ (d) secrets in pixels
def type_password(s, win, probe):
    st = observe(s, win)
    field = element(st, "Password")
    act(s, st, [{"type": "click", "element_id": field["id"]}, {"type": "key", "keys": "ctrl+a"},
                {"type": "type", "text": SECRET}])
    # AT-SPI shows the field's text as bullets, one per character typed.
    wait_for(lambda: len((probe(find="Password") or {}).get("text") or "") == len(SECRET), what="password typed")


def assert_flat(png: bytes, bounds: dict) -> tuple[int, int, int, int]:
    width, height, rows = decode_png(png)
    x0, y0 = max(0, bounds["x"]), max(0, bounds["y"])
    x1, y1 = min(width, bounds["x"] + bounds["width"]), min(height, bounds["y"] + bounds["height"])
    assert x1 > x0 and y1 > y0, f"field {bounds} outside the {width}x{height} image"
    colours = {rows[y][x * 4:x * 4 + 4] for y in range(y0, y1) for x in range(x0, x1)}
    assert len(colours) == 1, f"{len(colours)} colours inside the password field {bounds}"
    # The field is not the only thing painted: just outside it the window shows through.
    return tuple(next(iter(colours)))


def test_password_field_is_one_colour_and_its_value_absent(app, probe):
    s, win = app
    type_password(s, win, probe)
    res = s.call("gui_state", {"window_id": win["window_id"]})
    st = s.ok(res)
    field = element(st, "Password")
    assert "value" not in field or not field["value"]
    assert SECRET not in text_of(res) and SECRET not in str(st)  # noqa: F405
    assert st["screenshot"]["redacted"] >= 1
    mime, png = image_block(res)
    assert mime == "image/png"
    flat = assert_flat(png, rect(field))
    # Other controls keep their pixels (the name entry is not painted with the same colour).
    width, height, rows = decode_png(png)
    entry = rect(element(st, "Name entry"))
    colours = {rows[y][x * 4:x * 4 + 4] for y in range(entry["y"], entry["y"] + entry["height"])
               for x in range(entry["x"], entry["x"] + entry["width"])}
    assert len(colours) > 1 or tuple(next(iter(colours))) != flat
    # Without elements, the screenshot is still painted over.
    res = s.call("gui_state", {"window_id": win["window_id"], "include_elements": False})
    st2 = s.ok(res)
    assert st2["elements"] == [] and st2["screenshot"]["redacted"] >= 1
    assert_flat(image_block(res)[1], rect(field))
    # Leave the field empty for other tests.
    st = observe(s, win)
    act(s, st, [{"type": "click", "element_id": element(st, "Password")["id"]}, {"type": "key", "keys": "ctrl+a"},
                {"type": "key", "keys": "BackSpace"}])


def test_password_field_is_painted_in_a_capped_observation(lsm_factory, probe):
    s = lsm_factory("stdio", args=["--max-image-edge", "400"])
    win = find_window(s, title=TITLE)
    type_password(s, win, probe)
    res = s.call("gui_state", {"window_id": win["window_id"]})
    st = s.ok(res)
    assert st["coordinate_space"]["width"] == 400
    assert_flat(image_block(res)[1], rect(element(st, "Password")))
    st = observe(s, win)
    act(s, st, [{"type": "click", "element_id": element(st, "Password")["id"]}, {"type": "key", "keys": "ctrl+a"},
                {"type": "key", "keys": "BackSpace"}])


# ------------------------------------------------------------------ hidden subtrees
def test_hidden_subtrees_are_counted_and_walked_only_when_asked(lsm):
    """gtk4-widget-factory keeps two of its three pages hidden: by default they are skipped and
    the notes say how many subtrees were; with include_hidden they are walked, and what they add
    is exactly what was not on screen."""
    win = find_window(lsm, app="gtk4-widget-factory")
    args = {"max_elements": 1000, "max_depth": 20}
    shown = observe(lsm, win, **args)
    notes = " ".join(shown.get("notes", []))
    # GTK 4 keeps hidden stack pages unmapped: counted as hidden or as not laid out (no area).
    assert "not walked, on purpose" in notes and ("hidden" in notes or "no area" in notes), shown.get("notes")
    everything = observe(lsm, win, include_hidden=True, **args)
    assert everything["element_count"] > shown["element_count"] + 20, (
        everything["element_count"], shown["element_count"])
    assert not any("not walked, on purpose" in n for n in everything.get("notes", [])), everything["notes"]

    w, h = win["bounds"]["width"], win["bounds"]["height"]

    def on_screen(e):
        if not e.get("bounds") or "hidden" in e.get("states", []):
            return False
        x, y, bw, bh = box(e)
        return x < w and y < h and x + bw > 0 and y + bh > 0

    key = lambda e: (e["role"], e.get("name", ""))  # noqa: E731
    seen = {key(e) for e in shown["elements"]}
    extra = [e for e in everything["elements"] if key(e) not in seen]
    assert extra, "include_hidden added nothing new"
    # Most of what only the full walk found is not on screen (hidden pages: not visible, or no area).
    hidden = [e for e in extra if not on_screen(e)]
    assert len(hidden) >= len(extra) // 2, [(e["role"], e.get("name", ""), e.get("bounds"), e.get("states"))
                                             for e in extra[:20]]
    # The argument is a boolean.
    bad = lsm.call("gui_state", {"window_id": win["window_id"], "include_hidden": "yes"})
    assert bad.is_error


# ------------------------------------------------------------------ changes made outside lsm
def test_an_observation_sees_what_changed_outside_lsm_since_the_last(app, restart_app):
    """What another client changes between two observations (here through AT-SPI, outside lsm)
    is in the second one: a check box's state, labels' names, a control gone. Read back through
    AT-SPI first."""
    try:
        observation_sees_changes_made_outside_lsm(*app)
    finally:
        restart_app("testapp")


def test_a_gtk4_observation_sees_a_state_changed_outside_lsm(lsm_stdio, probe):
    """The same for GTK 4: a check box clicked with xdotool (GTK 4.8 gives check boxes no
    accessible action) between two observations."""
    factory = "gtk4-widget-factory"
    win = find_window(lsm_stdio, app=factory)

    def first_box(st):
        return [e for e in st["elements"] if e["role"] == "check_box" and e.get("name") == "checkbutton"][0]

    def truth():
        return "checked" in probe(factory, find="checkbutton", role="check box", timeout=60).get("states", [])

    def click(box):
        x, y = center(box)
        wid = str(int(win["window_id"], 16))
        xdo = lambda *args: subprocess.run(["xdotool", *args], check=True, timeout=20)  # noqa: E731
        xdo("windowactivate", "--sync", wid)
        xdo("mousemove", "--sync", str(win["bounds"]["x"] + x), str(win["bounds"]["y"] + y))
        # Held as a hand holds it: GTK 4 drops a click pressed and released at once while busy.
        xdo("mousedown", "1")
        time.sleep(0.06)
        xdo("mouseup", "1")

    observe(lsm_stdio, win, max_elements=1000)
    box = first_box(observe(lsm_stdio, win, max_elements=1000))
    was = "checked" in box.get("states", [])
    assert truth() == was
    click(box)
    try:
        wait_for(lambda: truth() != was, timeout=30, what="the check box toggled (AT-SPI)")
        st = observe(lsm_stdio, win, max_elements=1000)
        assert ("checked" in first_box(st).get("states", [])) != was, first_box(st)
    finally:
        if truth() != was:
            time.sleep(0.5)  # past the double-click time
            click(box)
