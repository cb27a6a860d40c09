"""The release script (release/build.sh, docs/release.md), run once on the binaries CI already
built (the Linux one by the build step, lsm.exe by the wine step: nothing is compiled here), and
its artifacts checked as a user or a registry would check them:

- every file is there and `sha256sum -c SHA256SUMS` verifies; the Linux binary needs libc only;
  lsm.exe is an x86-64 Windows executable;
- the .deb installs with `dpkg -i` (and leaves with `dpkg -r`): /usr/bin/lsm runs, the licences and
  docs are in /usr/share/doc/lsm, the worker's user unit passes `systemd-analyze --user verify`,
  and the unit's command line with the packaged example settings filled in connects a worker to
  a real controller;
- server.json validates against the MCP registry's published schema (2025-12-11, as carried by
  the `skillsaw` package on PyPI, checked byte for byte against the published file's SHA-256) and
  passes skillsaw's registry rules; it points at the bundle by URL and SHA-256;
- the bundle's manifest passes `mcpb validate` (@anthropic-ai/mcpb) and that package's JSON
  Schema; the .mcpb unpacks with `mcpb unpack` to both binaries, and the command its manifest
  names serves the tools it lists to the official MCP client.

Needs root (dpkg), tests/release/node_modules (tests/release/setup.sh npm) and Node 22 from
tests/conformance. Settings: LSM_BIN (the Linux binary), LSM_RELEASE_WINDOWS_EXE (default: the
wine step's cargo output), LSM_NODE22 (default: tests/conformance's node).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))

from lsm_mcp import LsmSession, headless_env, lsm_bin  # noqa: E402

HERE = Path(__file__).resolve().parent
NODE = Path(os.environ.get("LSM_NODE22") or REPO / "tests" / "conformance" / "node_modules" / ".bin" / "node")
MCPB = HERE / "node_modules" / "@anthropic-ai" / "mcpb"
VERSION = tomllib.loads((REPO / "Cargo.toml").read_text())["workspace"]["package"]["version"]
# Reserved for examples (RFC 2606): a maintainer's real values look like these.
BASE_URL = f"https://downloads.example.org/lsm/v{VERSION}"
SERVER_NAME = "org.example/lsm"
MAINTAINER = "lsm release test <release-test@example.org>"
# The MCP registry's server.json schema the script writes, and the SHA-256 of the file published
# at its $id (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json).
REGISTRY_SCHEMA_ID = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
REGISTRY_SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
UNIT = Path("/usr/lib/systemd/user/lsm-worker.service")
# What a libc-only binary may need (no GUI toolkit: X11, GTK, Qt are reached over sockets).
LIBC_ONLY = {"libc.so.6", "libm.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "libpthread.so.0",
             "libdl.so.2", "librt.so.1"}


def sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def windows_exe() -> Path:
    if os.environ.get("LSM_RELEASE_WINDOWS_EXE"):
        return Path(os.environ["LSM_RELEASE_WINDOWS_EXE"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "x86_64-pc-windows-gnu" / "release" / "lsm.exe"


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(cmd, **kw)


def mcpb(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    if not NODE.exists() or not (MCPB / "package.json").exists():
        pytest.fail("the mcpb tool is missing: run tests/setup.sh (tests/release/setup.sh npm)")
    return run([str(NODE), str(MCPB / "dist" / "cli" / "cli.js"), *args], cwd=cwd)


# ------------------------------------------------------------------ the script, run once
@pytest.fixture(scope="module")
def out(request: pytest.FixtureRequest) -> Path:
    linux, exe = Path(lsm_bin()), windows_exe()
    if not linux.exists():
        pytest.fail(f"no Linux binary at {linux}: cargo build --release (or LSM_BIN)")
    if not exe.exists():
        pytest.fail(f"no lsm.exe at {exe}: the wine step builds it (tests/bed/wine.sh build), "
                    "or set LSM_RELEASE_WINDOWS_EXE")
    directory = Path(tempfile.mkdtemp(prefix="lsm-release-"))
    env = dict(os.environ, LSM_RELEASE_BASE_URL=BASE_URL, LSM_RELEASE_SERVER_NAME=SERVER_NAME,
               LSM_RELEASE_MAINTAINER=MAINTAINER, LSM_RELEASE_LINUX_BIN=str(linux),
               LSM_RELEASE_WINDOWS_EXE=str(exe))
    t0 = time.monotonic()
    r = run(["bash", str(REPO / "release" / "build.sh"), "--no-build", "--out", str(directory)], env=env,
            timeout=300)
    # Shown in CI's log even when every test passes: the script's cost and what it made.
    with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
        print(f"\nrelease/build.sh --no-build: {time.monotonic() - t0:.1f} s\n{r.stderr}")
    assert r.returncode == 0, f"release/build.sh failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def names() -> dict[str, str]:
    return {
        "linux": f"lsm-{VERSION}-x86_64-linux",
        "windows": f"lsm-{VERSION}-x86_64-windows.exe",
        "deb": f"lsm_{VERSION}_amd64.deb",
        "mcpb": f"lsm-{VERSION}.mcpb",
    }


def test_artifacts_and_their_checksums(out: Path) -> None:
    files = sorted(p.name for p in out.iterdir())
    expected = sorted([*names().values(), "manifest.json", "server.json", "SHA256SUMS"])
    assert files == expected
    r = run(["sha256sum", "-c", "SHA256SUMS"], cwd=out)
    assert r.returncode == 0, r.stdout + r.stderr
    checked = sorted(line.rsplit(": ", 1)[0] for line in r.stdout.splitlines() if line.endswith(": OK"))
    assert checked == sorted(set(expected) - {"SHA256SUMS"}), r.stdout
    # The shipped binaries are the ones CI built and tested, byte for byte.
    assert sha256(out / names()["linux"]) == sha256(Path(lsm_bin()))
    assert sha256(out / names()["windows"]) == sha256(windows_exe())


def test_linux_binary_needs_libc_only(out: Path) -> None:
    binary = out / names()["linux"]
    dynamic = run(["readelf", "-d", str(binary)]).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    assert needed and needed <= LIBC_ONLY, f"needs {sorted(needed - LIBC_ONLY)}"
    # ldd: each resolves on this machine (a fresh Debian 12), and nothing else is pulled in.
    ldd = run(["ldd", str(binary)]).stdout
    assert "not found" not in ldd, ldd
    loaded = {line.split()[0].rsplit("/", 1)[-1] for line in ldd.splitlines() if line.strip()}
    assert loaded - {"linux-vdso.so.1"} <= LIBC_ONLY, ldd
    version = run([str(binary), "--version"]).stdout.strip()
    assert re.fullmatch(rf"lsm {re.escape(VERSION)} \([0-9a-f]{{7,40}}\)", version), version


def test_windows_exe_is_a_x86_64_windows_program(out: Path) -> None:
    data = (out / names()["windows"]).read_bytes()
    assert data[:2] == b"MZ"
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    assert data[pe:pe + 4] == b"PE\0\0"
    machine = struct.unpack_from("<H", data, pe + 4)[0]
    optional_magic = struct.unpack_from("<H", data, pe + 24)[0]
    assert (machine, optional_magic) == (0x8664, 0x20B), "not PE32+ for x86-64"


# ------------------------------------------------------------------ the .deb on this machine
@pytest.fixture(scope="module")
def installed(out: Path):
    if os.geteuid() != 0:
        pytest.fail("dpkg -i needs root (CI runs as root)")
    present = run(["dpkg-query", "-W", "-f=${Status}", "lsm"])
    if present.returncode == 0 and "installed" in present.stdout:
        pytest.fail("a package named lsm is already installed here: remove it first (dpkg -r lsm)")
    if Path("/usr/bin/lsm").exists():
        pytest.fail("/usr/bin/lsm exists and belongs to no package: the test will not overwrite it")
    r = run(["dpkg", "-i", str(out / names()["deb"])])
    assert r.returncode == 0, r.stdout + r.stderr
    try:
        yield
    finally:
        r = run(["dpkg", "--purge", "lsm"])
        assert r.returncode == 0, r.stdout + r.stderr
        assert not Path("/usr/bin/lsm").exists() and not UNIT.exists(), "dpkg --purge left files"


def test_deb_installs_lsm_docs_and_the_worker_unit(out: Path, installed: None) -> None:
    status = run(["dpkg-query", "-W", "-f=${Status} ${Version} ${Depends}", "lsm"]).stdout
    assert status.startswith(f"install ok installed {VERSION} "), status
    assert "libc6" in status, status
    listed = set(run(["dpkg", "-L", "lsm"]).stdout.split())
    for path in ("/usr/bin/lsm", str(UNIT), "/usr/share/doc/lsm/copyright", "/usr/share/doc/lsm/LICENSE-MIT",
                 "/usr/share/doc/lsm/LICENSE-APACHE", "/usr/share/doc/lsm/README.md",
                 "/usr/share/doc/lsm/changelog.gz", "/usr/share/doc/lsm/examples/worker.env"):
        assert path in listed, f"{path} not in the package: {sorted(listed)}"
    assert Path("/usr/share/doc/lsm/LICENSE-MIT").read_bytes() == (REPO / "LICENSE-MIT").read_bytes()
    assert Path("/usr/share/doc/lsm/LICENSE-APACHE").read_bytes() == (REPO / "LICENSE-APACHE").read_bytes()
    copyright_text = Path("/usr/share/doc/lsm/copyright").read_text()
    assert "License: MIT or Apache-2.0" in copyright_text and "Permission is hereby granted" in copyright_text
    on_path = run(["/usr/bin/lsm", "--version"]).stdout.strip()
    assert on_path == run([lsm_bin(), "--version"]).stdout.strip() and on_path.startswith(f"lsm {VERSION} (")


def unit_sections() -> dict[str, dict[str, list[str]]]:
    sections: dict[str, dict[str, list[str]]] = {}
    current = ""
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = line.strip("[]")
            sections[current] = {}
            continue
        key, _, value = line.partition("=")
        sections[current].setdefault(key.strip(), []).append(value.strip())
    return sections


def test_worker_unit_passes_systemd_analyze_verify(installed: None) -> None:
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze is missing (Debian package systemd: tests/release/setup.sh apt)")
    with tempfile.TemporaryDirectory() as runtime:
        os.chmod(runtime, 0o700)
        # A user manager's view of the unit, without a running systemd (CI has none).
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
        r = run(["systemd-analyze", "--user", "verify", str(UNIT)], env=env)
    complaints = [line for line in (r.stdout + r.stderr).splitlines() if "lsm-worker" in line]
    assert r.returncode == 0 and not complaints, r.stdout + r.stderr
    unit = unit_sections()
    # Started in, and stopped with, the graphical session.
    assert "graphical-session.target" in " ".join(unit["Unit"]["After"])
    assert "graphical-session.target" in " ".join(unit["Unit"]["PartOf"])
    assert unit["Install"]["WantedBy"] == ["graphical-session.target"]
    assert unit["Service"]["ExecStart"][0].startswith("/usr/bin/lsm worker ")


def expand(value: str, config_home: str) -> str:
    """The specifiers the unit uses, as a user manager expands them (%E: $XDG_CONFIG_HOME)."""
    assert not re.search(r"%[^E%]", value), f"a specifier this test does not expand: {value}"
    return value.replace("%E", config_home).replace("%%", "%")


def test_worker_unit_command_connects_to_a_controller(installed: None, tmp_path: Path) -> None:
    """What the unit runs, with the packaged example settings filled in as `lsm enrol` says,
    connects a worker to a real controller (systemd itself is not running on CI: its
    EnvironmentFile and ExecStart are applied here the way a user manager applies them)."""
    controller_state = tmp_path / "controller"
    config_home = tmp_path / "config"
    (config_home / "lsm").mkdir(parents=True)
    port = free_tcp_port()
    env = headless_env()
    enrol = run([lsm_bin(), "enrol", "office-pc", "--controller-url", f"wss://127.0.0.1:{port}",
                 "--state-dir", str(controller_state)], env=env)
    assert enrol.returncode == 0, enrol.stderr
    token = re.search(r"^\s+(lsmw_[0-9a-f]{64})\s*$", enrol.stdout, re.M)
    pin = re.search(r"--pin ([0-9a-f]{64})", enrol.stdout)
    assert token and pin, enrol.stdout

    # The user's set-up, as the unit's comments and docs/release.md describe it.
    example = Path("/usr/share/doc/lsm/examples/worker.env").read_text()
    filled = {"LSM_CONTROLLER": f"wss://127.0.0.1:{port}", "LSM_WORKER_NAME": "office-pc",
              "LSM_WORKER_PIN": pin.group(1)}
    for key, value in filled.items():
        example, count = re.subn(rf"^{key}=.*$", f"{key}={value}", example, flags=re.M)
        assert count == 1, f"the example worker.env has no {key}= line"
    (config_home / "lsm" / "worker.env").write_text(example)
    token_file = config_home / "lsm" / "worker-token"
    token_file.write_text(token.group(1) + "\n")
    token_file.chmod(0o600)

    unit = unit_sections()["Service"]
    settings = {}
    for line in Path(expand(unit["EnvironmentFile"][0], str(config_home))).read_text().splitlines():
        line = line.strip()
        if line and line[0] not in "#;":
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip().strip('"')
    command = expand(unit["ExecStart"][0], str(config_home)).split()
    worker_env = dict(env, XDG_CONFIG_HOME=str(config_home), HOME=str(tmp_path), **settings)

    controller_env = dict(env, LSM_WEB="off", XDG_CONFIG_HOME=str(tmp_path / "controller-config"))
    with LsmSession("http", controller_env, args=["--worker-listen", f"127.0.0.1:{port}",
                                                  "--state-dir", str(controller_state)]) as session:
        log = (tmp_path / "worker.log").open("wb")
        worker = subprocess.Popen(command, env=worker_env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + 20
            machines: dict = {}
            while time.monotonic() < deadline:
                machines = {m["name"]: m for m in session.call_ok("gui_list", {})["machines"]}
                if machines.get("office-pc", {}).get("connected"):
                    break
                assert worker.poll() is None, (tmp_path / "worker.log").read_text(errors="replace")
                time.sleep(0.2)
            assert machines.get("office-pc", {}).get("connected"), (
                f"{machines}\n--- worker\n{(tmp_path / 'worker.log').read_text(errors='replace')[-2000:]}")
        finally:
            worker.terminate()
            worker.wait(10)
            log.close()


def free_tcp_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------ server.json
def published_registry_schema() -> dict:
    try:
        schemas = importlib.resources.files("skillsaw.schemas.mcp_registry")
    except ModuleNotFoundError:
        pytest.fail("skillsaw (which carries the MCP registry's published schemas) is missing: "
                    "tests/requirements.txt")
    raw = (schemas / "v2025_12_11" / "server.schema.json").read_bytes()
    # The very file published at the schema's URL, not a copy someone edited.
    assert hashlib.sha256(raw).hexdigest() == REGISTRY_SCHEMA_SHA256
    schema = json.loads(raw)
    assert schema["$id"] == REGISTRY_SCHEMA_ID
    return schema


def test_server_json_validates_against_the_registry_schema(out: Path) -> None:
    server = json.loads((out / "server.json").read_text())
    assert server["$schema"] == REGISTRY_SCHEMA_ID
    validator = jsonschema.Draft7Validator(published_registry_schema(),
                                           format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(server)]
    assert not errors, errors
    print(f"server.json: valid against {REGISTRY_SCHEMA_ID} (sha256 {REGISTRY_SCHEMA_SHA256[:12]}..., "
          "as carried by the skillsaw package)")

    # It points at this release's bundle, by URL and SHA-256, and names the other files likewise.
    assert server["name"] == SERVER_NAME and server["version"] == VERSION
    [package] = server["packages"]
    bundle = out / names()["mcpb"]
    assert package["registryType"] == "mcpb"
    assert package["identifier"] == f"{BASE_URL}/{bundle.name}"
    assert package["fileSha256"] == sha256(bundle)
    assert package["transport"] == {"type": "stdio"}
    meta = server["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]
    sums = dict(reversed(line.split("  ", 1)) for line in (out / "SHA256SUMS").read_text().splitlines())
    assert {a["file"] for a in meta["artifacts"]} == {names()["linux"], names()["windows"], names()["deb"]}
    for artifact in meta["artifacts"]:
        assert artifact["sha256"] == sums[artifact["file"]]
        assert artifact["url"] == f"{BASE_URL}/{artifact['file']}"


def test_server_json_passes_the_registry_publishing_rules(out: Path, tmp_path: Path) -> None:
    """skillsaw's MCP-registry rules: the schema plus what the registry checks on publishing
    (a reverse-DNS name, exact versions, an .mcpb URL that names "mcp", ...)."""
    shutil.copy(out / "server.json", tmp_path / "server.json")
    skillsaw = Path(sys.executable).with_name("skillsaw")
    r = run([str(skillsaw), "lint", "--strict", "--format", "json", "--no-progress", "--type", "mcp-registry",
             str(tmp_path)])
    report = json.loads(r.stdout)
    assert report["stats"]["rules_run"] > 0
    assert r.returncode == 0 and not report["violations"], report["violations"]


def test_placeholders_are_marked_when_nothing_is_filled_in(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LSM_RELEASE_")}
    r = run(["bash", str(REPO / "release" / "build.sh"), "--print-config"], env=env)
    assert r.returncode == 0, r.stderr
    config = dict(line.split("=", 1) for line in r.stdout.splitlines())
    assert config["version"] == VERSION
    # An address that can never resolve (RFC 2606), saying which variable to set.
    assert config["base_url"].startswith("https://releases.invalid/")
    assert "LSM_RELEASE_BASE_URL" in config["base_url"]
    assert config["placeholders"].split() == ["LSM_RELEASE_BASE_URL", "LSM_RELEASE_SERVER_NAME",
                                              "LSM_RELEASE_MAINTAINER"]
    filled = run(["bash", str(REPO / "release" / "build.sh"), "--print-config"],
                 env=dict(env, LSM_RELEASE_BASE_URL=BASE_URL + "/", LSM_RELEASE_SERVER_NAME=SERVER_NAME,
                          LSM_RELEASE_MAINTAINER=MAINTAINER)).stdout
    config = dict(line.split("=", 1) for line in filled.splitlines())
    assert config["base_url"] == BASE_URL and config["placeholders"] == ""
    # A release build refuses placeholders (and an untagged or changed tree).
    refused = run(["bash", str(REPO / "release" / "build.sh"), "--check-tag", "--no-build", "--out",
                   str(tmp_path / "refused")], env=env)
    assert refused.returncode != 0 and "ERROR" in refused.stderr, refused.stderr


# ------------------------------------------------------------------ the MCP bundle
def test_bundle_manifest_passes_mcpb_validate(out: Path) -> None:
    r = mcpb("validate", str(out / "manifest.json"))
    assert r.returncode == 0 and "passes" in r.stdout, r.stdout + r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    # The same check through the JSON Schema the mcpb package publishes for that manifest version.
    schema = json.loads((MCPB / "schemas" / f"mcpb-manifest-v{manifest['manifest_version']}.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(manifest)]
    assert not errors, errors
    assert manifest["version"] == VERSION
    assert set(manifest["compatibility"]["platforms"]) == {"linux", "win32"}


def test_bundle_unpacks_and_its_command_serves_the_listed_tools(out: Path, tmp_path: Path) -> None:
    bundle = out / names()["mcpb"]
    info = mcpb("info", str(bundle))
    assert info.returncode == 0, info.stdout + info.stderr
    unpacked = tmp_path / "unpacked"
    r = mcpb("unpack", str(bundle), str(unpacked))
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest == json.loads((out / "manifest.json").read_text())
    config = manifest["server"]["mcp_config"]
    linux = Path(config["command"].replace("${__dirname}", str(unpacked)))
    windows = Path(config["platform_overrides"]["win32"]["command"].replace("${__dirname}", str(unpacked)))
    assert sha256(linux) == sha256(out / names()["linux"]) and os.access(linux, os.X_OK)
    assert sha256(windows) == sha256(out / names()["windows"])
    assert (unpacked / manifest["server"]["entry_point"]) == linux
    assert config["args"] == ["serve"]
    # As a client would start it (without a display; listing tools needs none).
    env = dict(headless_env(), LSM_WEB="off", LSM_AUDIT_LOG="off", LSM_STATE_DIR=str(tmp_path / "state"))
    with LsmSession("stdio", env, binary=str(linux)) as session:
        served = sorted(tool.name for tool in session.list_tools())
    assert served == sorted(tool["name"] for tool in manifest["tools"])
