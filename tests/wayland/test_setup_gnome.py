"""`lsm setup gnome` writes the extension in the format the user's GNOME Shell loads, and both
formats parse as JavaScript (node --check): the legacy one (43-44) runs in the GNOME bed, the
ESM one (45+) cannot run here and is at least syntax-checked."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import LSM_BIN, REPO

NODE = REPO / "tests" / "conformance" / "node_modules" / ".bin" / "node"


def setup(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    # gsettings in memory: the bed's own settings stay as they are.
    env = dict(os.environ, GSETTINGS_BACKEND="memory")
    return subprocess.run([str(LSM_BIN), "setup", "gnome", "--extensions-dir", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=30, env=env)


def node() -> str:
    if NODE.exists():
        return str(NODE)
    found = shutil.which("node")
    if not found:
        pytest.fail("node is needed to syntax-check the extension (tests/setup.sh installs it)")
    return found


@pytest.mark.parametrize("version,esm", [(43, False), (44, False), (45, True), (47, True), (52, True)])
def test_each_shell_gets_its_format_and_it_parses(tmp_path, version, esm):
    r = setup(tmp_path, "--shell-version", str(version))
    assert r.returncode == 0, r.stderr
    assert "log out" in r.stdout
    ext = tmp_path / "lsm-windows@lsm"
    meta = json.loads((ext / "metadata.json").read_text())
    assert meta["uuid"] == "lsm-windows@lsm" and str(version) in meta["shell-version"]
    js = (ext / "extension.js").read_text()
    assert ("export default class" in js) == esm and ("imports.gi" in js) == (not esm)
    if esm:
        # node reads .js as a script; the ESM copy is checked as a module.
        checked = tmp_path / "extension.mjs"
        checked.write_text(js)
    else:
        checked = ext / "extension.js"
    c = subprocess.run([node(), "--check", str(checked)], capture_output=True, text=True, timeout=30)
    assert c.returncode == 0, c.stderr


def test_too_old_a_shell_is_refused_and_remove_cleans_up(tmp_path):
    r = setup(tmp_path, "--shell-version", "42")
    assert r.returncode != 0 and "43 or later" in r.stderr
    assert setup(tmp_path, "--shell-version", "45").returncode == 0
    r = setup(tmp_path, "--remove")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "lsm-windows@lsm").exists()
