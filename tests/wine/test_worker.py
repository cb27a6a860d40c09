"""A Windows worker: lsm.exe worker under Wine connects over wss:// to a Linux controller
(tests/lib/lsm_remote.RemoteRig, with no Linux workers), and the same coordinate click reaches
the Win32 test app through `machine`, read from the app's own log."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "lib"))

from conftest import TITLE  # noqa: E402
from lsm_remote import RemoteRig, Worker  # noqa: E402


def windows_path(p: str) -> str:
    return "Z:" + p.replace("/", "\\")


def test_a_windows_worker_over_wss(wine_env, app):
    rig = RemoteRig(workers=("win",), use_netns=False)
    worker = None
    try:
        rig.enrol("win")
        rig.start_controller()
        worker = Worker("win", rig.url_for("win"), windows_path(rig.tokens["win"]), rig.pin, wine_env,
                        ["wine"], rig.dir, binary=str(Path(wine_env["LSM_WIN_BIN"]) / "lsm.exe"))
        rig.workers["win"] = worker
        worker.start()
        rig.wait_connected("win", timeout=60)
        s = rig.session
        listed = s.call_ok("gui_list", {"machine": "win"})
        assert listed["backend"]["name"] == "windows-win32", listed["backend"]
        win = next(w for w in listed["windows"] if w["title"] == TITLE)
        st = s.call_ok("gui_state", {"machine": "win", "window_id": win["window_id"], "screenshot": False})
        x, y, w, h = app.button
        mark = app.mark()
        out = s.call_ok("gui_action", {"machine": "win", "window_id": win["window_id"], "state_id": st["state_id"],
                                       "actions": [{"type": "click", "x": x + w // 2, "y": y + h // 2}]})
        assert out["machine"] == "win" and out["results"][0]["method"] == "sendinput", out
        app.wait(lambda line: line == "pressed 1", "the press through the worker", after=mark)
    finally:
        if worker is not None:
            worker.kill()
        if rig.session is not None:
            rig.session.close()
