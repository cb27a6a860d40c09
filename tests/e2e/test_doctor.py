"""`lsm doctor`, `lsm web-url` and `lsm --version` of an lsm installed the way the README says
(`cargo install --locked --path crates/lsm --root DIR`), against the test desktop (issue 24, must
show 1).

- Installed once per module into a temporary root, reusing the release build of the target
  directory (CARGO_TARGET_DIR, else <repo>/target): its cost and how many crates it compiled are
  printed, and it must not rebuild the dependencies.
- doctor on the test desktop: every item ready, exit 0, the session found as inherited, the test
  application among the accessible ones (AT-SPI ground truth), one real capture.
- doctor without accessibility (the bus addresses point nowhere) and without a display (DISPLAY
  names a display nobody serves): the failing item named with what to do, exit 1; --json parses.
- web-url: two `lsm serve` at once (the second finds the web UI port taken and takes another,
  saying so on stderr and in its URL file), each URL printed, each one opens the page and its
  secret logs in; the files go when the servers stop.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from conftest import REPO, TESTAPP_NAME, run_probe  # noqa: E402
from run_logs import log_path, record_secret  # noqa: E402

# The install waits for the target dir's lock when another cargo runs (a developer's machine);
# in CI it reuses the release build and takes seconds.
pytestmark = pytest.mark.timeout(900)

READY_ITEMS = ["session", "desktop", "accessibility", "windows", "capture", "input"]
STATUSES = {"ok", "warn", "fail", "info"}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """`cargo install --locked --path crates/lsm --root <tmp>`: the binary it installs."""
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not on PATH")
    root = tmp_path_factory.mktemp("lsm-install")
    target = os.environ.get("CARGO_TARGET_DIR") or str(REPO / "target")
    env = {**os.environ, "CARGO_TARGET_DIR": target, "CARGO_TERM_PROGRESS_WHEN": "never"}
    t0 = time.monotonic()
    r = subprocess.run([cargo, "install", "--locked", "--path", "crates/lsm", "--root", str(root)],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    took = time.monotonic() - t0
    first_error = r.stderr.find("error")
    assert r.returncode == 0, f"cargo install failed:\n{r.stderr[max(first_error, 0):][:4000]}"
    compiled = re.findall(r"^\s*Compiling (\S+)", r.stderr, re.M)
    print(f"\ncargo install --locked --path crates/lsm: {took:.1f} s, {len(compiled)} crate(s) compiled "
          f"{compiled} (target dir {target})")
    # The release build is reused: at most lsm's own crates are compiled again.
    foreign = [c for c in compiled if c != "lsm" and not c.startswith("lsm-")]
    assert not foreign, f"cargo install rebuilt dependencies {foreign}: the target dir's release build was not reused"
    binary = root / "bin" / "lsm"
    assert binary.is_file() and os.access(binary, os.X_OK), f"no {binary} after cargo install"
    return binary


def doctor(binary: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    t0 = time.monotonic()
    r = subprocess.run([str(binary), "doctor", *args], env={**os.environ, **(env or {})},
                       capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    shown = re.sub(r"#secret=[0-9a-f]+", "#secret=(hidden)", r.stdout)  # CI output is kept
    print(f"lsm doctor {' '.join(args)}: exit {r.returncode} in {took:.2f} s\n{shown}")
    assert took < 15, f"lsm doctor took {took:.1f} s"
    return r


def items_of(report: dict) -> dict[str, dict]:
    return {i["id"]: i for i in report["items"]}


def test_version_names_the_commit(installed):
    out = subprocess.run([str(installed), "--version"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    m = re.fullmatch(r"lsm (\d+\.\d+\.\d+\S*) \((\S+)\)\s*", out.stdout)
    assert m, f"unexpected --version: {out.stdout!r}"
    cargo_version = re.search(r'^version = "([^"]+)"', (REPO / "Cargo.toml").read_text(), re.M)
    assert cargo_version and m.group(1) == cargo_version.group(1)
    expected = os.environ.get("LSM_GIT_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    if not expected:
        pytest.skip(f"not a git checkout and no LSM_GIT_COMMIT: the version says {m.group(2)!r}")
    assert m.group(2) == expected, f"--version names {m.group(2)}, HEAD is {expected}"


def test_ready_on_the_test_desktop(installed, bed_env):
    r = doctor(installed)
    assert r.returncode == 0, f"doctor says not ready on the test desktop:\n{r.stdout}\n{r.stderr[-2000:]}"
    assert "READY: a model can see and act" in r.stdout
    report = json.loads(doctor(installed, "--json").stdout)
    assert report["ready"] is True
    items = items_of(report)
    for item in READY_ITEMS:
        assert items[item]["status"] == "ok", items.get(item)
    display = bed_env["DISPLAY"]
    assert f"DISPLAY={display} (inherited from the environment)" in items["session"]["detail"]
    # The applications AT-SPI itself lists (ground truth outside lsm) are named as accessible.
    apps = run_probe(None, list_apps=True)
    names = {a["name"] for a in apps if a.get("name")}
    assert TESTAPP_NAME in names, names
    for name in names:
        assert name in items["accessibility"]["detail"], (name, items["accessibility"])
    m = re.search(r"(\d+)x(\d+) px", items["capture"]["detail"])
    assert m and int(m.group(1)) > 50 and int(m.group(2)) > 50, items["capture"]
    assert "XTest" in items["input"]["detail"]
    assert items["web_ui"]["status"] == "info"


def test_without_accessibility_says_what_to_do(installed, bed_env, tmp_path):
    nowhere = f"unix:path={tmp_path}/no-bus"
    r = doctor(installed, env={"AT_SPI_BUS_ADDRESS": nowhere, "DBUS_SESSION_BUS_ADDRESS": nowhere})
    assert r.returncode == 1, r.stdout
    assert re.search(r"^\s*FAIL\s+accessibility\s", r.stdout, re.M), r.stdout
    assert "at-spi-bus-launcher" in r.stdout and "NOT READY: 1 failed (accessibility)" in r.stdout
    report = json.loads(doctor(installed, "--json",
                               env={"AT_SPI_BUS_ADDRESS": nowhere, "DBUS_SESSION_BUS_ADDRESS": nowhere}).stdout)
    items = items_of(report)
    assert report["ready"] is False
    assert items["accessibility"]["status"] == "fail" and items["accessibility"]["hint"]
    assert "no-bus" in items["accessibility"]["detail"]
    # The rest still works: pixels and input by coordinates.
    assert items["capture"]["status"] == "ok" and items["input"]["status"] == "ok"


def dead_display() -> str:
    for n in range(170, 200):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return f":{n}"
    pytest.skip("no unused display number in :170-:199")


def test_without_a_display_says_what_to_do(installed, bed_env):
    display = dead_display()
    r = doctor(installed, env={"DISPLAY": display})
    assert r.returncode == 1, r.stdout
    assert re.search(r"^\s*FAIL\s+desktop\s", r.stdout, re.M), r.stdout
    assert display in r.stdout and "XAUTHORITY" in r.stdout
    report = json.loads(doctor(installed, "--json", env={"DISPLAY": display}).stdout)
    assert report["ready"] is False
    assert set(report) == {"version", "platform", "ready", "items"}
    for item in report["items"]:
        assert item["status"] in STATUSES and item["id"] and item["title"] and item["detail"], item
        if item["status"] in ("fail", "warn"):
            assert item.get("hint"), item
    items = items_of(report)
    assert f"DISPLAY={display}" in items["session"]["detail"]
    assert items["desktop"]["status"] == "fail"
    version = subprocess.run([str(installed), "--version"], capture_output=True, text=True).stdout
    assert version.strip() == f"lsm {report['version']}"


def test_a_display_found_without_DISPLAY_is_said_to_be_recovered(installed, bed_env):
    ours = sorted(int(p.name[1:]) for p in Path("/tmp/.X11-unix").glob("X*")
                  if p.name[1:].isdigit() and p.stat().st_uid == os.getuid())
    if not ours or f":{ours[0]}" != bed_env["DISPLAY"]:
        pytest.skip(f"the first X socket of this user (:{ours[0] if ours else '-'}) is not the test desktop's")
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    r = subprocess.run([str(installed), "doctor", "--json"], env=env, capture_output=True, text=True, timeout=60)
    session = items_of(json.loads(r.stdout))["session"]
    assert session["status"] == "ok"
    assert f"DISPLAY={bed_env['DISPLAY']} (recovered from" in session["detail"], session


class Serve:
    """`lsm serve` over stdio (stdin kept open) with the default web UI address."""

    def __init__(self, binary: Path, state_dir: Path):
        self.log = log_path("doctor-serve")
        env = {**os.environ, "LSM_STATE_DIR": str(state_dir)}
        env.pop("LSM_WEB", None)
        self.proc = subprocess.Popen([str(binary), "serve", "--audit-log", "off"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=open(self.log, "w"))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            text = Path(self.log).read_text()
            m = re.search(r"^lsm: web UI (http://\S+)$", text, re.M)
            if m and "written to" in text:
                self.url = m.group(1)
                self.stderr = text
                record_secret("web_secret", urllib.parse.urlsplit(self.url).fragment.removeprefix("secret="))
                return
            assert self.proc.poll() is None, f"lsm serve exited:\n{text}"
            time.sleep(0.05)
        raise AssertionError(f"lsm serve did not announce its web UI:\n{Path(self.log).read_text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def logs_in(login_url: str) -> None:
    """GET of the login URL is the page; its secret (the fragment) logs in."""
    parts = urllib.parse.urlsplit(login_url)
    with urllib.request.urlopen(login_url, timeout=10) as page:
        assert page.status == 200 and "text/html" in page.headers["content-type"]
        assert "<html" in page.read().decode().lower()
    secret = urllib.parse.parse_qs(parts.fragment)["secret"][0]
    origin = f"{parts.scheme}://{parts.netloc}"
    req = urllib.request.Request(origin + "/api/login", data=json.dumps({"secret": secret}).encode(),
                                 headers={"Content-Type": "application/json", "Origin": origin}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200, resp.read()
        assert "set-cookie" in {k.lower() for k in resp.headers}


def test_web_url_of_two_servers(installed, bed_env, tmp_path):
    state = tmp_path / "state"
    first = Serve(installed, state)
    second = None
    try:
        second = Serve(installed, state)
        port = urllib.parse.urlsplit(second.url).port
        # The second server found the default port taken and says which one it took instead.
        assert re.search(rf"127\.0\.0\.1:7710 is taken .*using port {port} instead", second.stderr), second.stderr
        file = state / f"web-ui-{port}.url"
        assert file.read_text().splitlines()[0] == second.url
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        r = subprocess.run([str(installed), "web-url"], env={**os.environ, "LSM_STATE_DIR": str(state)},
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 0, r.stderr
        urls = r.stdout.split()
        assert sorted(urls) == sorted([first.url, second.url]), (urls, first.url, second.url)
        for url in urls:
            logs_in(url)
        web_ui = items_of(json.loads(doctor(installed, "--json", env={"LSM_STATE_DIR": str(state)}).stdout))["web_ui"]
        assert first.url in web_ui["detail"] and second.url in web_ui["detail"], web_ui
    finally:
        first.stop()
        if second:
            second.stop()
    assert not list(state.glob("web-ui-*.url")), "a stopped server left its URL file"
    r = subprocess.run([str(installed), "web-url"], env={**os.environ, "LSM_STATE_DIR": str(state)},
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "no running `lsm serve`" in r.stderr, (r.stdout, r.stderr)
