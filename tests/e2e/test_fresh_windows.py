"""First observations of fresh windows of real applications (issue 9, item 8).

- Firefox builds its page's accessibility tree only when a client first asks: the first
  gui_state of a fresh Firefox window must already have the web page's content.
- LibreOffice Writer reports its elements at a stale place (the title bar's height too high) for
  a moment after its window is mapped and placed: a pointer click at the centre of the first
  paragraph, as the first observation gives it, must land in that paragraph (checked by the text
  typed there, read back through AT-SPI).
"""

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gui_flow import act, find_window, rect, wait_for  # noqa: E402
from lsm_fixtures import *  # noqa: E402,F401,F403

REPO = Path(__file__).resolve().parents[2]
FORM = f"file://{REPO}/tests/apps/web/form.html"


def first_state(s, win) -> tuple[dict, float]:
    t0 = time.monotonic()
    st = s.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})
    return st, (time.monotonic() - t0) * 1000


def test_firefox_first_observation_has_the_page(lsm_stdio, ensure_app, stop_app):
    s = lsm_stdio
    stop_app("firefox")  # a window nobody has asked for its accessibility tree yet
    ensure_app("firefox", FORM)
    win = find_window(s, title="lsm form — Mozilla Firefox", timeout=30)
    st, ms = first_state(s, win)
    names = [(e["role"], e.get("name", "")) for e in st["elements"]]
    print(f"first gui_state of a fresh Firefox window: {len(names)} element(s) in {ms:.0f} ms; notes {st['notes']}")
    assert any(n == "Send order" for _, n in names), names[:60]
    assert any(r.startswith("document") for r, _ in names), names[:60]
    # The next observation (no wait now) has the same page.
    t0 = time.monotonic()
    again = s.call_ok("gui_state", {"window_id": win["window_id"], "screenshot": False})
    print(f"second gui_state: {len(again['elements'])} element(s) in {(time.monotonic() - t0) * 1000:.0f} ms")
    assert any(e.get("name", "") == "Send order" for e in again["elements"])


def paragraph_text(probe, pid: int) -> str:
    node = probe(pid=pid, find="", match="prefix", role="paragraph", wait=5)
    return (node or {}).get("text") or (node or {}).get("name") or ""


def test_writer_first_observation_bounds_are_where_the_paragraph_is(lsm_stdio, ensure_app, stop_app, probe):
    s = lsm_stdio
    stop_app("writer")
    pid = ensure_app("writer")
    win = find_window(s, app="libreoffice", timeout=60)
    # A full first line, typed outside lsm before lsm ever looked at the window.
    # Capitalised as Writer's autocorrect would make it.
    words = " ".join(["W01"] + [f"w{i:02d}" for i in range(2, 31)])
    # Real (XTest) keys to the focused window: LibreOffice ignores the synthetic events that
    # `xdotool type --window` sends.
    # Writer takes the keys only once its document has the focus, which under load comes seconds
    # after the window shows: keys sent before are lost.
    subprocess.run(["xdotool", "windowactivate", "--sync", str(int(win["window_id"], 16))], check=True, timeout=60)
    wait_for(lambda: "focused" in ((probe(pid=pid, find="", match="prefix", role="paragraph", wait=5) or {})
                                   .get("states") or []), timeout=30, what="Writer's paragraph focused")
    subprocess.run(["xdotool", "type", "--delay", "12", words], check=True, timeout=60)
    wait_for(lambda: words in paragraph_text(probe, pid), timeout=20, what=f"the typed paragraph {words!r}")
    st, ms = first_state(s, win)
    para = next(e for e in st["elements"] if e["role"] == "paragraph" and e.get("bounds"))
    b = rect(para)
    x, y = b["x"] + b["width"] // 4, b["y"] + b["height"] // 2
    print(f"first observation in {ms:.0f} ms: paragraph at {b}; clicking ({x},{y}); notes {st['notes']}")
    act(s, st, [{"type": "click", "x": x, "y": y}, {"type": "type", "text": "ZZ"}])
    text = wait_for(lambda: (lambda t: t if "ZZ" in t else None)(paragraph_text(probe, pid)), timeout=10,
                    what="ZZ in the paragraph")
    print(f"paragraph after the click and typing: {text!r}")
    # In the body, at the clicked place: inside the line, not at its end (where the caret was).
    assert not text.endswith("ZZ") and text.index("ZZ") > 0, text
