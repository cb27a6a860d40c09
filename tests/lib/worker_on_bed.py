"""A controller without a desktop of its own and one worker on the current test desktop, the
set-up the e2e tests of a worker's policy (test_policy.py) and its person in charge
(test_person.py) share:

    with worker_on_bed(lsm_bin, tmp_path, controller_args=[...], worker_args=[...]) as controller:
        win = wait_for(lambda: remote_window(controller, "w1", "lsm test app"), ...)

The worker is enrolled on the controller's state directory (tmp_path/controller), connects over
wss:// on loopback with the pin `lsm enrol` printed, and keeps its own state directory
(tmp_path/worker unless given); its log goes to the run's log directory.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

from lsm_mcp import LsmSession, free_port, headless_env
from run_logs import log_path, record_secret


def enrol(lsm_bin: Path, name: str, state_dir: Path, token_file: Path) -> str:
    """`lsm enrol NAME` on a controller's state directory: the token goes to `token_file`
    (mode 0600); answers the pin of the controller's certificate."""
    r = subprocess.run([str(lsm_bin), "enrol", name, "--state-dir", str(state_dir)],
                       capture_output=True, text=True, timeout=30, env=headless_env())
    token = re.search(r"lsmw_[0-9a-f]{64}", r.stdout)
    pin = re.search(r"--pin ([0-9a-f]{64})", r.stdout)
    assert r.returncode == 0 and token and pin, r.stdout + r.stderr
    record_secret("worker_token", token.group(0))
    token_file.write_text(token.group(0))
    token_file.chmod(0o600)
    return pin.group(1)


@contextlib.contextmanager
def worker_on_bed(lsm_bin: Path, tmp_path: Path, *, name: str = "w1", controller_env: dict | None = None,
                  controller_args: Sequence[str] = (), worker_args: Sequence[str] = (),
                  worker_state: Path | None = None, log_name: str = "lsm-worker") -> Iterator[LsmSession]:
    """The controller's MCP session (over HTTP), with the worker `name` started beside it."""
    state = tmp_path / "controller"
    token_file = tmp_path / f"{name}.token"
    pin = enrol(lsm_bin, name, state, token_file)
    port = free_port()
    controller = LsmSession("http", controller_env or headless_env(),
                            args=["--worker-listen", f"127.0.0.1:{port}", "--state-dir", str(state),
                                  *controller_args]).open()
    worker = None
    wlog = open(log_path(log_name), "wb")
    try:
        worker = subprocess.Popen(
            [str(lsm_bin), "worker", "--controller", f"wss://127.0.0.1:{port}", "--name", name,
             "--token-file", str(token_file), "--pin", pin, *worker_args],
            env={**os.environ, "LSM_STATE_DIR": str(worker_state or tmp_path / "worker"), "LSM_AUDIT_LOG": "off"},
            stdin=subprocess.DEVNULL, stdout=wlog, stderr=wlog)
        yield controller
    finally:
        if worker:
            worker.terminate()
            worker.wait(10)
        wlog.close()
        controller.close()


def remote_window(controller: LsmSession, machine: str, title: str) -> dict | None:
    """The worker's window with this title as the controller lists it (None while it is not
    connected or the window is not there yet)."""
    out = controller.call("gui_list", {"machine": machine})
    if out.is_error:
        return None
    found = [w for w in controller.ok(out)["windows"] if w["title"] == title]
    return found[0] if found else None
