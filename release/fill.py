#!/usr/bin/env python3
"""Fills release/build.sh's templates (Python standard library only).

  fill.py copyright copyright.in LICENSE-MIT       -> the Debian copyright file on stdout
  fill.py control deb-control.in                   -> DEBIAN/control on stdout (LSM_* variables)
  fill.py bundle --out DIR ...                     -> DIR/manifest.json, DIR/lsm-VERSION.mcpb,
                                                      DIR/server.json

The bundle's manifest lists the tools by name; the names are checked against what the packaged
Linux binary answers to `tools/list`, so the manifest cannot name a tool lsm does not have.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def substitute(text: str, values: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise SystemExit(f"fill.py: no value for @{key}@")
        return values[key]

    return re.sub(r"@([A-Z0-9_]+)@", one, text)


def copyright_file(template: Path, mit: Path) -> str:
    lines = mit.read_text().splitlines()
    holder = next((line for line in lines if line.startswith("Copyright")), "")
    holder = re.sub(r"^Copyright\s*(\(c\))?\s*", "", holder, flags=re.I) or "the lsm authors"
    # A paragraph of a Debian control-style file: each line indented, empty lines as " .".
    text = "\n".join(" " + line if line.strip() else " ." for line in lines).rstrip()
    return substitute(template.read_text(), {"COPYRIGHT": holder, "MIT_TEXT": text})


def control_file(template: Path) -> str:
    env = os.environ
    values = {
        "VERSION": env["LSM_VERSION"],
        "DEPENDS": env["LSM_DEPENDS"],
        "MAINTAINER": env["LSM_MAINTAINER"],
        "INSTALLED_SIZE": env["LSM_INSTALLED_SIZE"],
    }
    return substitute(template.read_text(), values)


def sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def served_tool_names(binary: Path) -> list[str]:
    """The tool names the binary lists over stdio (no display needed for tools/list)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "lsm-release", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with tempfile.TemporaryDirectory() as state:
        proc = subprocess.Popen(
            [str(binary), "serve", "--web", "off", "--audit-log", "off", "--state-dir", state],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdin and proc.stdout
        # A server that never answers is killed: readline then sees the end of its output.
        watchdog = threading.Timer(20, proc.kill)
        watchdog.start()
        try:
            for message in messages:
                proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                answer = json.loads(line)
                if answer.get("id") == 2:
                    return [tool["name"] for tool in answer["result"]["tools"]]
        finally:
            watchdog.cancel()
            proc.kill()
            proc.wait()
    raise SystemExit(f"fill.py: {binary} serve answered no tools/list")


def fill_json(node: object, values: dict[str, object]) -> object:
    """Replaces "@KEY@" strings (whole value: any JSON value; inside a string: text)."""
    if isinstance(node, dict):
        return {key: fill_json(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [fill_json(value, values) for value in node]
    if isinstance(node, str):
        whole = re.fullmatch(r"@([A-Z0-9_]+)@", node)
        if whole:
            if whole.group(1) not in values:
                raise SystemExit(f"fill.py: no value for {node}")
            return values[whole.group(1)]
        return substitute(node, {k: str(v) for k, v in values.items()})
    return node


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def bundle(args: argparse.Namespace) -> None:
    out = Path(args.out)
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]
    templates = Path(args.templates)
    values: dict[str, object] = {
        "VERSION": args.version,
        "AUTHOR": args.author,
        "KEYWORDS": list(cargo.get("keywords", [])),
        "LICENSE": cargo["license"],
    }
    manifest = fill_json(json.loads((templates / "manifest.json.in").read_text()), values)
    assert isinstance(manifest, dict)
    listed = sorted(tool["name"] for tool in manifest["tools"])
    served = sorted(served_tool_names(Path(args.linux)))
    if listed != served:
        raise SystemExit(f"fill.py: manifest.json.in lists tools {listed}, the binary serves {served}")
    write_json(out / "manifest.json", manifest)

    # The bundle: a zip with manifest.json at its root and the files its entry points name.
    mcpb_name = f"lsm-{args.version}.mcpb"
    stamp = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))[:6]
    members = [
        ("manifest.json", out / "manifest.json", 0o644),
        ("server/lsm", Path(args.linux), 0o755),
        ("server/lsm.exe", Path(args.windows), 0o755),
    ] + [(Path(p).name, Path(p), 0o644) for p in args.licences]
    with zipfile.ZipFile(out / mcpb_name, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name, source, mode in members:
            info = zipfile.ZipInfo(name, date_time=max(stamp, (1980, 1, 1, 0, 0, 0)))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with source.open("rb") as src, zf.open(info, "w") as dst:
                while block := src.read(1 << 20):
                    dst.write(block)

    artifacts = []
    for path, platform in ((Path(args.linux), "linux-x86_64"), (Path(args.windows), "windows-x86_64"),
                           (Path(args.deb), "debian-amd64")):
        artifacts.append({"file": path.name, "platform": platform,
                          "url": f"{args.base_url}/{path.name}", "sha256": sha256(path)})
    values.update({
        "SERVER_NAME": args.server_name,
        "BASE_URL": args.base_url,
        "MCPB_FILE": mcpb_name,
        "MCPB_SHA256": sha256(out / mcpb_name),
        "COMMIT": args.commit,
        "ARTIFACTS": artifacts,
    })
    server = fill_json(json.loads((templates / "server.json.in").read_text()), values)
    write_json(out / "server.json", server)


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] == "copyright":
        sys.stdout.write(copyright_file(Path(sys.argv[2]), Path(sys.argv[3])) + "\n")
    elif len(sys.argv) >= 2 and sys.argv[1] == "control":
        sys.stdout.write(control_file(Path(sys.argv[2])))
    elif len(sys.argv) >= 2 and sys.argv[1] == "bundle":
        parser = argparse.ArgumentParser(prog="fill.py bundle")
        for name in ("out", "version", "commit", "author", "server-name", "base-url", "linux",
                     "windows", "deb", "templates"):
            parser.add_argument("--" + name, required=True)
        parser.add_argument("--licences", nargs="+", required=True)
        bundle(parser.parse_args(sys.argv[2:]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
