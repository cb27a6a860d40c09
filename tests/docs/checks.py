"""How each documented snippet is checked. One `FileRun` walks the code blocks of one Markdown
file in order in one sandbox (a block may use what an earlier one made: a token file, a running
server, an enrolment) and collects every failure with the block it came from."""

from __future__ import annotations

import json
import plistlib
import re
import shlex
import time
import tomllib
import urllib.request
from pathlib import Path

import jsonschema

from md_blocks import REPO, Block
from sandbox import Sandbox

TOOLS = ["gui_list", "gui_state", "gui_action"]
# Shell commands that only prepare files in the sandbox: run as written.
SHELL_UTILITIES = {"(umask", "mkdir", "chmod", "openssl"}
VERSION_LINE = re.compile(r"^lsm \d+\.\d+\.\d+(-[\w.]+)? \([0-9a-f]{7,40}(-dirty)?\)$")


def workspace_rust_version() -> tuple[int, ...]:
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text())
    return tuple(int(x) for x in cargo["workspace"]["package"]["rust-version"].split("."))


def shell_commands(text: str) -> list[str]:
    """The commands of a sh block: continuation lines joined, comments dropped, except a
    comment `# or: COMMAND`, which documents an alternative and is checked too."""
    out, pending = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if pending:
            line = pending + " " + line.lstrip()
            pending = ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        stripped = line.strip()
        if stripped.startswith("# or: "):
            out.append(stripped[len("# or: "):])
        elif stripped and not stripped.startswith("#"):
            out.append(stripped)
    return out


def program_of(line: str) -> str:
    """The first word that is not a VAR=value assignment."""
    for word in shlex.split(line, comments=True):
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            return word
    return ""


def option(argv: list[str], name: str) -> str | None:
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


# ------------------------------------------------------------------ output schemas
def resolve(schema: dict, root: dict) -> dict:
    while "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        node = root
        for part in ref[2:].split("/"):
            node = node[part]
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def alternatives(schema: dict, root: dict) -> list[dict]:
    schema = resolve(schema, root)
    out = [schema]
    for key in ("anyOf", "oneOf", "allOf"):
        for alt in schema.get(key, []):
            out.extend(alternatives(alt, root))
    return out


def unknown_keys(value, schema: dict, root: dict, path: str = "") -> list[str]:
    """Keys of an example that its schema does not name (schemars allows extra keys, so a
    validator alone would not catch a renamed field)."""
    alts = alternatives(schema, root)
    if isinstance(value, dict):
        props: dict = {}
        for a in alts:
            props.update(a.get("properties", {}))
        if not props:
            return []
        bad = []
        for k, v in value.items():
            if k not in props:
                bad.append(f"{path}/{k}")
            else:
                bad.extend(unknown_keys(v, props[k], root, f"{path}/{k}"))
        return bad
    if isinstance(value, list):
        items = [a["items"] for a in alts if isinstance(a.get("items"), dict)]
        return [b for i, v in enumerate(value) for it in items[:1] for b in unknown_keys(v, it, root, f"{path}/{i}")]
    return []


def schema_at(output_schema: dict, where: str) -> dict:
    """`elements[]` -> the item schema of the `elements` property; "" -> the whole."""
    node = output_schema
    for part in filter(None, where.split(".")):
        many = part.endswith("[]")
        node = resolve(node, output_schema)["properties"][part.removesuffix("[]")]
        if many:
            node = [a["items"] for a in alternatives(node, output_schema) if "items" in a][0]
    return node


# ------------------------------------------------------------------ one file
class FileRun:
    def __init__(self, sandbox: Sandbox, tools: list) -> None:
        self.sb = sandbox
        self.tools = {t.name: t for t in tools}
        self.errors: list[str] = []
        self.checked: list[str] = []

    def run(self, blocks: list[Block]) -> None:
        for b in blocks:
            try:
                self.block(b)
            except AssertionError as e:
                self.errors.append(f"{b.where} ({b.lang}): {e}")
            except Exception as e:  # noqa: BLE001 - report every block, not the first failure
                self.errors.append(f"{b.where} ({b.lang}): {type(e).__name__}: {e}")

    def block(self, b: Block) -> None:
        if b.lang in ("sh", "bash"):
            if b.no_run is None:
                for line in shell_commands(b.text):
                    self.command(line)
        elif b.lang in ("json", "jsonc"):
            if b.no_run is None:
                self.json_block(b)
        elif b.lang == "ini":
            self.systemd_unit(b.text)
        elif b.lang == "xml":
            self.launch_agent(b.text)
        elif b.lang == "powershell":
            self.scheduled_task(b.text)
        elif b.lang == "toml":
            self.policy_file(b.text)
        elif b.lang == "text":
            for line in b.text.splitlines():
                assert not re.match(r"^\s*(\$ |lsm |claude )", line), (
                    f"a command in a text block (put it in a sh block so it is run): {line!r}")
            return
        else:
            raise AssertionError(f"no check for blocks of language {b.lang!r}")
        self.checked.append(b.where)

    # ---- shell
    def command(self, line: str) -> None:
        prog = program_of(line)
        if prog == "lsm":
            rec = self.sb.recorded(line)
            self.lsm(rec["argv"], rec["env"], line)
        elif prog == "claude":
            self.claude(self.sb.recorded(line)["argv"], line)
        elif prog == "rustc":
            r = self.sb.bash(line)
            assert r.returncode == 0, f"{line}: {r.stderr}"
            m = re.search(r"rustc (\d+)\.(\d+)", r.stdout)
            assert m and (int(m[1]), int(m[2])) >= workspace_rust_version()[:2], (
                f"{r.stdout.strip()} is older than the workspace's rust-version")
        elif prog in SHELL_UTILITIES:
            r = self.sb.bash(line)
            assert r.returncode == 0, f"{line}: exit {r.returncode}: {r.stderr}"
        else:
            raise AssertionError(f"no rule to check {line!r}: add one to tests/docs/checks.py "
                                 "or mark the block no-run=<id> with a reason in the allow-list")

    def lsm(self, argv: list[str], env: dict, line: str) -> None:
        sb = self.sb
        if not argv:
            raise AssertionError(f"{line}: no arguments")
        if argv == ["--version"]:
            r = sb.lsm(argv)
            assert r.returncode == 0 and VERSION_LINE.match(r.stdout.strip()), f"{line}: {r.stdout!r} {r.stderr!r}"
            return
        if "--help" in argv or "-h" in argv:
            r = sb.lsm(argv, env)
            assert r.returncode == 0, f"{line}: exit {r.returncode}: {r.stderr}"
            return
        sub = argv[0]
        if sub == "doctor":
            self.doctor(argv, line)
        elif sub == "web-url":
            self.web_url(argv, line)
        elif sub == "serve":
            self.serve([sb.localize(a) for a in argv], env, line)
        elif sub == "enrol":
            r = sb.lsm(argv, env)
            assert r.returncode == 0, f"{line}: exit {r.returncode}: {r.stderr}"
            token = re.search(r"^\s*(lsmw_\w+)\s*$", r.stdout, re.M)
            pin = re.search(r"--pin (\w+)", r.stdout)
            assert token and pin and "lsm worker" in r.stdout, f"{line}: no token, pin or worker command in\n{r.stdout}"
            sb.enrolled[argv[1]] = {"token": token[1], "pin": pin[1]}
        elif sub == "worker":
            self.worker(argv, env, line)
        elif sub == "policy":
            r = sb.lsm(argv, env)
            assert r.returncode == 0, f"{line}: exit {r.returncode}: {r.stderr.strip()}"
        elif sub in ("setup", "revoke"):
            # They change the desktop or the state: their arguments are what is checked here.
            self.arguments_parse(argv, line)
        else:
            raise AssertionError(f"no rule to check `lsm {sub}` ({line})")

    def arguments_parse(self, argv: list[str], what: str) -> None:
        """lsm parses the flags and values before it prints help: a wrong flag or value fails."""
        r = self.sb.lsm([*argv, "--help"])
        assert r.returncode == 0, f"{what}: lsm does not accept {argv}: {r.stderr.strip()}"

    def doctor(self, argv: list[str], line: str) -> None:
        r = self.sb.lsm(argv, timeout=60)
        # Any exit code: 0 only when a model can see and act, which a CI machine without a
        # desktop is not. What must not happen is a command line lsm does not accept.
        assert not re.search(r"^error: (unrecognized subcommand|unexpected argument|invalid value)", r.stderr, re.M), (
            f"{line}: exit {r.returncode}: {r.stderr.strip()[:500]} (lsm doctor comes with the doctor branch)")
        if "--json" in argv:
            try:
                json.loads(r.stdout)
            except ValueError as e:
                raise AssertionError(f"{line}: stdout is not JSON ({e}): {r.stdout[:300]!r}") from e
        else:
            assert r.stdout.strip(), f"{line}: printed nothing"

    def web_url(self, argv: list[str], line: str) -> None:
        if not self.sb.http_servers:
            self.serve(["serve", "--http", "127.0.0.1:0"], {}, "(a server for lsm web-url)")
        r = self.sb.lsm(argv)
        assert r.returncode == 0, f"{line}: exit {r.returncode}: {r.stderr.strip()}"
        m = re.search(r"https?://\S+", r.stdout)
        assert m, f"{line}: no URL in {r.stdout!r}"
        logs = "".join(p.read_text(errors="replace") for p in self.sb.root.glob("proc-*.log"))
        assert m[0] in logs, f"{line}: {m[0]} is not the URL the running server printed"
        with urllib.request.urlopen(m[0].split("#")[0], timeout=10) as page:
            assert page.status == 200, f"{line}: {m[0]} answered {page.status}"

    def serve(self, argv: list[str], env: dict, line: str) -> None:
        sb = self.sb
        addr = option(argv, "--http")
        if addr is None:
            names = [t.name for t in sb.mcp_stdio("lsm", argv, env)]
            assert names == TOOLS, f"{line}: tools {names}"
            return
        port = int(addr.rsplit(":", 1)[1])
        old = sb.http_servers.pop(port, None)  # an alternative start of the same server
        if old:
            old["proc"].terminate()
            old["proc"].wait(5)
        proc, text = sb.start(argv, env, ready=r"lsm: MCP endpoint http://\S+:(\d+)/mcp")
        port = int(re.search(r"lsm: MCP endpoint http://\S+:(\d+)/mcp", text)[1])
        token_file = option(argv, "--http-token-file")
        token = Path(token_file).read_text().strip() if token_file else env.get("LSM_HTTP_TOKEN")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        tools, _ = sb.mcp_http(f"http://127.0.0.1:{port}/mcp", headers)
        assert [t.name for t in tools] == TOOLS, f"{line}: tools {[t.name for t in tools]}"
        sb.http_servers[port] = {"proc": proc, "token": token}
        listen = option(argv, "--worker-listen")
        if listen:
            sb.worker_listen = int(listen.rsplit(":", 1)[1])

    def worker(self, argv: list[str], env: dict, line: str) -> None:
        sb = self.sb
        name = option(argv, "--name")
        assert name in sb.enrolled, f"{line}: {name!r} was not enrolled earlier on this page"
        token_file = Path(option(argv, "--token-file") or "")
        if not token_file.exists():  # the page tells the reader to save the token there
            token_file.parent.mkdir(parents=True, exist_ok=True)
            token_file.write_text(sb.enrolled[name]["token"] + "\n")
            token_file.chmod(0o600)
        pin = option(argv, "--pin")
        real = [sb.localize(a).replace(pin, sb.enrolled[name]["pin"]) if pin else sb.localize(a) for a in argv]
        assert sb.worker_listen is not None, f"{line}: no controller with --worker-listen started on this page"
        proc, _ = sb.start(real, env)
        port, server = next(iter(sb.http_servers.items()))
        headers = {"Authorization": f"Bearer {server['token']}"} if server["token"] else {}
        deadline = time.monotonic() + 15
        machines = []
        while time.monotonic() < deadline:
            assert proc.poll() is None, f"{line}: the worker exited ({proc.returncode})"
            _, listed = sb.mcp_http(f"http://127.0.0.1:{port}/mcp", headers, ("gui_list", {}))
            machines = (listed or {}).get("machines", [])
            if any(m.get("name") == name and m.get("connected") for m in machines):
                return
            time.sleep(0.5)
        raise AssertionError(f"{line}: the worker did not connect to the controller: {machines}")

    def claude(self, argv: list[str], line: str) -> None:
        """`claude mcp add [--transport T] [--header H]... NAME (URL | -- COMMAND ARGS...)`."""
        assert argv[:2] == ["mcp", "add"], f"{line}: not `claude mcp add`"
        rest, transport, headers, positional = argv[2:], "stdio", {}, []
        while rest:
            a = rest.pop(0)
            if a == "--":
                positional.extend(rest)
                break
            if a in ("--transport", "-t"):
                transport = rest.pop(0)
            elif a in ("--header", "-H"):
                k, _, v = rest.pop(0).partition(":")
                headers[k.strip()] = v.strip()
            elif a.startswith("-"):
                raise AssertionError(f"{line}: option {a} is not checked here")
            else:
                positional.append(a)
        assert positional and positional[0] == "lsm", f"{line}: the server is not named lsm"
        if transport == "stdio":
            names = [t.name for t in self.sb.mcp_stdio(positional[1], positional[2:])]
        else:
            assert transport == "http" and len(positional) == 2, f"{line}: transport {transport} {positional}"
            names = [t.name for t in self.sb.mcp_http(positional[1], headers)[0]]
        assert names == TOOLS, f"{line}: tools {names}"

    # ---- JSON
    def json_block(self, b: Block) -> None:
        text = b.text
        if b.lang == "jsonc":
            text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
        value = json.loads(text)
        if "output" in b.tags:
            self.output_example(value, b.tags["output"], abridged="abridged" in b.tags)
        elif isinstance(value, dict) and ("mcpServers" in value or "servers" in value):
            self.client_config(value)
        else:
            raise AssertionError("a JSON block that is neither a client configuration nor tagged "
                                 "output=<tool>[.<field>[]]: nothing would check it")

    def output_example(self, value, where: str, abridged: bool) -> None:
        tool, _, path = where.partition(".")
        root = self.tools[tool].output_schema
        schema = schema_at(root, path)
        bad = unknown_keys(value, schema, root)
        assert not bad, f"fields the {tool} output schema does not have: {bad}"
        if not abridged:
            jsonschema.validate(value, {**resolve(schema, root), "$defs": root.get("$defs", {})})

    def client_config(self, config: dict) -> None:
        servers = config.get("mcpServers") or config.get("servers")
        inputs = {i["id"] for i in config.get("inputs", [])}
        assert servers, "no servers"
        for name, entry in servers.items():
            if "command" in entry:
                assert entry.get("type", "stdio") == "stdio", f"{name}: type {entry.get('type')}"
                names = [t.name for t in self.sb.mcp_stdio(entry["command"], entry.get("args", []), entry.get("env"))]
            else:
                assert "url" in entry and entry.get("type", "http") == "http", f"{name}: {entry}"
                headers = {k: self.fill_token(v, entry["url"], inputs) for k, v in entry.get("headers", {}).items()}
                names = [t.name for t in self.sb.mcp_http(entry["url"], headers)[0]]
            assert names == TOOLS, f"{name}: tools {names}"

    def fill_token(self, value: str, url: str, inputs: set[str]) -> str:
        """`<token>` and a VS Code `${input:ID}` stand for the token of the server at `url`."""
        for ref in re.findall(r"\$\{input:([^}]+)\}", value):
            assert ref in inputs, f"${{input:{ref}}} is not declared in inputs"
        port = int(re.search(r":(\d+)/", self.sb.localize(url))[1])
        server = self.sb.http_servers.get(port)
        assert server, f"no server was started on this page for {url}"
        return re.sub(r"<token>|\$\{input:[^}]+\}", server["token"] or "", value)

    # ---- policy files (docs/policy.md)
    def policy_file(self, text: str) -> None:
        """A policy example is saved where lsm looks for it (the state directory's policy.toml)
        and must pass `lsm policy check`; a later `lsm policy check` line reads the same file."""
        path = self.sb.home / ".config" / "lsm" / "policy.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        r = self.sb.lsm(["policy", "check", str(path)])
        assert r.returncode == 0, f"lsm policy check refuses the example: {r.stderr.strip()}"
        rules = len(re.findall(r"^\s*\[\[rule\]\]", text, re.M))
        assert f"; {rules} rules," in r.stdout, f"lsm read other rules than the example's {rules}: {r.stdout}"

    # ---- service definitions whose lsm arguments are checked
    def systemd_unit(self, text: str) -> None:
        line = re.search(r"^ExecStart=(.*)$", text, re.M)
        assert line, "no ExecStart"
        words = shlex.split(line[1].replace("%h", str(self.sb.home)))
        assert words[0].endswith("/lsm"), f"ExecStart runs {words[0]}"
        self.arguments_parse(words[1:], "ExecStart")

    def launch_agent(self, text: str) -> None:
        args = plistlib.loads(text.encode())["ProgramArguments"]
        assert args[0].endswith("/lsm"), f"ProgramArguments runs {args[0]}"
        self.arguments_parse(args[1:], "ProgramArguments")

    def scheduled_task(self, text: str) -> None:
        exe = re.search(r'-Execute "([^"]+)"', text)
        args = re.search(r'-Argument "([^"]+)"', text)
        assert exe and exe[1].endswith("lsm.exe") and args, "no -Execute lsm.exe / -Argument"
        self.arguments_parse(args[1].split(), "-Argument")
