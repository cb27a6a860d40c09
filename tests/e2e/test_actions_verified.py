"""Issue 9, items 2-4: actions that overtake each other, unverified success, and a success reported
as a failure, against the real applications (Firefox ESR, LibreOffice Writer with the gtk3 VCL
plugin, a PyQt5 tree). Each effect is checked outside lsm: the X window title, the saved file, the
application's AT-SPI tree read by pyatspi, the Qt app's own event log."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from conftest import app_pid, ensure_app, restart_app, run_probe, stop_app  # noqa: E402
from gui_flow import act, find_window, observe, wait_for, windows  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

REPO = Path(__file__).resolve().parents[2]
FORM = f"file://{REPO}/tests/apps/web/form.html"


def x_title(window_id: str) -> str:
    """The X window's title, read with xdotool (outside lsm)."""
    r = subprocess.run(["xdotool", "getwindowname", window_id], capture_output=True, timeout=10)
    return r.stdout.decode("utf-8", "replace").rstrip("\n")


def observe_until(lsm, win, pred, what, timeout=20.0, **kw):
    """Observe until pred(state) is truthy (Firefox shows its page content on a later call)."""
    deadline = time.monotonic() + timeout
    while True:
        st = observe(lsm, win, **kw)
        found = pred(st)
        if found:
            return st, found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; elements: "
                                 f"{[(e['role'], e.get('name', '')) for e in st['elements']][:80]}")
        time.sleep(0.3)


def by_name(st, name, roles):
    found = [e for e in st["elements"] if e.get("name", "") == name and e["role"] in roles]
    return found[0] if found else None


# ----------------------------------------------------------------------------- Firefox
@pytest.fixture(scope="module")
def firefox():
    ensure_app("firefox", FORM)
    return True


def form_window(lsm):
    return find_window(lsm, app="Navigator", timeout=60)


def test_firefox_form_typed_and_submitted_in_one_call_20_times(lsm_stdio, firefox):
    lsm = lsm_stdio
    win = form_window(lsm)
    done = []
    for i in range(1, 21):
        name = f"Grace Hopper Grüße 日本語 {i}"
        st, (entry, send) = observe_until(
            lsm, win,
            lambda s: (lambda a, b: (a, b) if a and b else None)(
                by_name(s, "Name", ("entry", "text")), by_name(s, "Send order", ("push_button", "button"))),
            "the form's Name entry and Send order button")
        res = act(lsm, st, [
            {"type": "click", "element_id": entry["id"]},
            {"type": "key", "keys": "ctrl+a"},
            {"type": "type", "text": name},
            {"type": "click", "element_id": send["id"]},
        ])
        typed = res["results"][2]
        assert typed["verified"], res
        assert name in typed["evidence"], res
        # The page titles itself "Sent N: <name> <email>" (N counts the page's orders).
        try:
            wait_for(lambda: f": {name} <" in x_title(win["window_id"]), timeout=5,
                     what=f"order {i} in the window title")
        except AssertionError:
            pass
        done.append((name, x_title(win["window_id"])))
    complete = [t for n, t in done if re.match(rf"Sent \d+: {re.escape(n)} <", t)]
    print(f"firefox form: {len(complete)}/20 complete")
    assert len(complete) == 20, done


def firefox_entry_text(name):
    nodes = run_probe("Firefox", find=name, role="entry", all=True, extents=False)
    return [n.get("text") for n in nodes or []]


def test_firefox_set_value_is_read_back(lsm_stdio, firefox):
    lsm = lsm_stdio
    win = form_window(lsm)
    value = "ada@example.org"
    st, entry = observe_until(lsm, win, lambda s: by_name(s, "Email", ("entry", "text")), "the Email entry",
                              )
    res = act(lsm, st, [{"type": "set_value", "element_id": entry["id"], "value": value}])
    r = res["results"][0]
    assert r["ok"] and r["verified"], res
    assert value in r["evidence"], res
    # Outside lsm: pyatspi reads the same field, and the page receives it on submit.
    wait_for(lambda: value in firefox_entry_text("Email"), timeout=5, what="the Email text through pyatspi")
    st, send = observe_until(lsm, win, lambda s: by_name(s, "Send order", ("push_button", "button")),
                             "Send order")
    act(lsm, st, [{"type": "click", "element_id": send["id"]}])
    wait_for(lambda: x_title(win["window_id"]).endswith(f"<{value}> — Mozilla Firefox"), timeout=5,
             what="the submitted email in the title")


# ----------------------------------------------------------------------------- Qt tree
@pytest.fixture(scope="module")
def qttree():
    # A fresh instance: no dialog left open, nothing selected.
    if app_pid("qttree") is not None:
        return restart_app("qttree")
    return ensure_app("qttree")


QT_LOG = Path(os.environ.get("LSM_BED_DIR", "/tmp/lsm-bed")) / "log" / "qttree-events.jsonl"


def qt_events(since: float):
    if not QT_LOG.exists():
        return []
    out = []
    for line in QT_LOG.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("t", 0) >= since:
            out.append(rec)
    return out


def test_qt_tree_cell_click_selects_it(lsm_stdio, qttree):
    lsm = lsm_stdio
    win = find_window(lsm, title="lsm qt tree")
    st = observe(lsm, win)
    cell = by_name(st, "Banana", ("table_cell", "cell", "tree_item"))
    assert cell, st["elements"]
    since = time.time()
    res = act(lsm, st, [{"type": "click", "element_id": cell["id"]}])
    r = res["results"][0]
    assert r["verified"] and "selected" in r["evidence"], res
    assert "toggle" not in r["method"] and "expand" not in r["method"], res
    node = run_probe("lsm_qttree", find="Banana", extents=False)
    assert node and "selected" in node["states"], node
    # The application's own current item follows the click (a pointer click, as a person's).
    events = qt_events(since)
    assert any(e["event"] == "current" and e.get("item") == "Banana" for e in events), events
    events = [e for e in events if e["event"] != "current"]
    # Selected, and nothing else happened to it (no check, no collapse).
    assert events and all(e["event"] == "selected" for e in events), events
    assert events[-1]["items"] == ["Banana"], events


def test_qt_menu_item_that_opens_a_modal_dialog_is_done_not_timeout(lsm_stdio, qttree):
    lsm = lsm_stdio
    win = find_window(lsm, title="lsm qt tree")
    st = observe(lsm, win)
    act(lsm, st, [{"type": "click", "element_id": by_name(st, "File", ("menu_item", "menuitem"))["id"]}])
    st, item = observe_until(lsm, win, lambda s: by_name(s, "Open dialog...", ("menu_item", "menuitem")),
                             "the Open dialog... menu item")
    since = time.time()
    started = time.monotonic()
    res = act(lsm, st, [
        {"type": "click", "element_id": item["id"]},
        {"type": "key", "keys": "Escape"},
    ])
    took = time.monotonic() - started
    r = res["results"][0]
    print(f"qt modal: click answered in {took:.2f} s: {r}")
    assert r["ok"] and r["verified"], res
    assert 'opened dialog "lsm modal dialog"' in r["evidence"], res
    assert re.search(r"window 0x[0-9a-f]+", r["evidence"]), res
    # The rest of the call did not run against a window the dialog now blocks.
    assert res["not_run"] == [1] and "modal dialog" in res["stopped"], res
    # The server still answers, and the dialog is shown exactly once.
    t0 = time.monotonic()
    dialogs = [w for w in windows(lsm) if w["title"] == "lsm modal dialog"]
    assert time.monotonic() - t0 < 3
    assert len(dialogs) == 1, windows(lsm)
    time.sleep(1.0)
    opened = [e for e in qt_events(since) if e["event"] == "dialog_opened"]
    assert len(opened) == 1, qt_events(since)
    # Close it through lsm: the dialog is a window of its own.
    dst, cancel = observe_until(lsm, dialogs[0], lambda s: by_name(s, "Cancel", ("push_button", "button")),
                                "the dialog's Cancel button")
    act(lsm, dst, [{"type": "click", "element_id": cancel["id"]}])
    wait_for(lambda: any(e["event"] == "dialog_rejected" for e in qt_events(since)), timeout=5,
             what="the dialog closed")
    assert len([e for e in qt_events(since) if e["event"] == "dialog_opened"]) == 1


# ----------------------------------------------------------------------------- Writer
FODT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
 <office:body><office:text><text:p/></office:text></office:body>
</office:document>
"""


def bold_styles(xml: str) -> set[str]:
    """Names of the styles in a flat ODF document that make text bold."""
    names = set()
    for m in re.finditer(r"<style:style\b([^>]*)>(.*?)</style:style>", xml, re.S):
        head, body = m.group(1), m.group(2)
        name = re.search(r'style:name="([^"]+)"', head)
        if name and re.search(r'fo:font-weight="bold"', body):
            names.add(name.group(1))
    return names


def text_is_bold(xml: str, text: str) -> bool:
    bold = bold_styles(xml)
    for m in re.finditer(r'<text:(span|p)\b[^>]*text:style-name="([^"]+)"[^>]*>(.*?)</text:\1>', xml, re.S):
        if m.group(2) in bold and text in re.sub(r"<[^>]+>", "", m.group(3)):
            return True
    return False


@pytest.fixture(scope="module")
def writer_doc(tmp_path_factory):
    if app_pid("writer") is not None:
        stop_app("writer")
    doc = tmp_path_factory.mktemp("writer") / "bold.fodt"
    doc.write_text(FODT, encoding="utf-8")
    ensure_app("writer", str(doc))
    return doc


def test_writer_bold_right_after_typing_is_saved_bold(lsm_stdio, writer_doc):
    lsm = lsm_stdio
    win = find_window(lsm, title="bold.fodt - LibreOffice Writer", timeout=60)
    text = "Bold paragraph by lsm"
    st, (para, bold) = observe_until(
        lsm, win,
        lambda s: (lambda p, b: (p, b) if p and b else None)(
            next((e for e in s["elements"] if e["role"] == "paragraph"), None),
            by_name(s, "Bold", ("toggle_button", "toggle", "push_button", "button"))),
        "the document paragraph and the Bold button", max_elements=1000)
    res = act(lsm, st, [
        {"type": "focus", "element_id": para["id"]},
        {"type": "type", "text": text},
        {"type": "key", "keys": "shift+Home"},
        {"type": "click", "element_id": bold["id"]},
        {"type": "key", "keys": "ctrl+s"},
    ])
    print("writer:", [(r["type"], r["method"], r.get("evidence") or r.get("unverified")) for r in res["results"]])
    assert res["results"][1]["verified"], res
    # ctrl+s on a flat ODF file saves in place (no format question).
    wait_for(lambda: text in writer_doc.read_text(encoding="utf-8"), timeout=15, what="the saved text")
    xml = writer_doc.read_text(encoding="utf-8")
    assert text_is_bold(xml, text), xml[-3000:]
