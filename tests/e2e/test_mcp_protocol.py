"""MCP protocol surface of `lsm serve`, over stdio and Streamable HTTP (official Python SDK).

- tools/list: exactly gui_list, gui_state, gui_action, each with an input and an output schema
  and annotations (gui_list / gui_state read-only, gui_action not);
- the `machine` argument: "local" is this machine, anything else is MACHINE_UNKNOWN;
- HTTP: a foreign Host or Origin header is refused with 403 (DNS-rebinding protection), loopback
  names are accepted;
- after every error case the server still answers.
These tests do not depend on the GUI backend: where a GUI call is made, either outcome (success or
a GUI error) is accepted, but its shape is checked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from lsm_fixtures import *  # noqa: E402,F401,F403
from lsm_mcp import RawHttp  # noqa: E402

from mcp import types  # noqa: E402

TOOLS = {"gui_list", "gui_state", "gui_action"}
ACTION_FIELDS = {"type", "element_id", "x", "y", "to_x", "to_y", "text", "keys", "seconds",
                 "delta_x", "delta_y", "value", "button"}
ACTION_TYPES = {"click", "double_click", "right_click", "move", "scroll", "drag", "type", "key",
                "set_value", "focus", "wait"}
ERROR_CODES = {"GUI_UNAVAILABLE", "MACHINE_UNKNOWN", "MACHINE_OFFLINE", "WINDOW_NOT_FOUND",
               "STATE_NOT_FOUND", "STATE_EXPIRED", "STATE_CONSUMED", "WINDOW_MISMATCH",
               "WINDOW_CHANGED", "WINDOW_MINIMIZED", "WINDOW_BLOCKED", "OUT_OF_BOUNDS", "ELEMENT_NOT_FOUND",
               "ELEMENT_STALE", "ELEMENT_DISABLED",
               "INVALID_ARGUMENT", "UNSUPPORTED_ACTION", "LIMIT_EXCEEDED", "PERMISSION_DENIED",
               "TIMEOUT", "BACKEND_ERROR"}


def _props(schema: dict) -> dict:
    assert schema.get("type") == "object", schema
    return schema.get("properties") or {}


def _resolve(schema: dict, node: dict) -> dict:
    """Follow one local $ref (#/$defs/X or #/definitions/X)."""
    ref = node.get("$ref")
    if not ref:
        return node
    assert ref.startswith("#/"), ref
    cur = schema
    for part in ref[2:].split("/"):
        cur = cur[part]
    return cur


def _action_item_fields(schema: dict) -> set[str]:
    """Every property name an action item of gui_action's `actions` may carry."""
    actions = _props(schema)["actions"]
    items = _resolve(schema, actions.get("items") or {})
    names: set[str] = set(_props(items)) if items.get("type") == "object" else set()
    for key in ("oneOf", "anyOf"):
        for alt in items.get(key, []):
            alt = _resolve(schema, alt)
            names |= set((alt.get("properties") or {}))
    return names


def _assert_error_shape(result: types.CallToolResult) -> str:
    code = err_code(result)
    assert code in ERROR_CODES, code
    msg = result.structured_content["error"].get("message")
    assert isinstance(msg, str) and msg.strip(), result.structured_content
    return code


def _still_up(s) -> None:
    names = {t.name for t in s.list_tools()}
    assert names == TOOLS, names
    r = s.call("gui_list", {})
    if r.is_error:
        _assert_error_shape(r)
    else:
        s.ok(r)


# ------------------------------------------------------------------ initialize / tools/list
def test_initialize(lsm):
    init = lsm.init_result
    assert init is not None
    assert init.server_info.name == "lsm"
    assert init.capabilities.tools is not None, "server must advertise the tools capability"
    assert init.protocol_version, init


def test_tools_list_exactly_three_with_schemas_and_annotations(lsm):
    tools = {t.name: t for t in lsm.list_tools()}
    assert set(tools) == TOOLS, f"tools/list returned {sorted(tools)}"
    for name, t in tools.items():
        assert t.description and t.description.strip(), f"{name} has no description"
        assert isinstance(t.input_schema, dict) and t.input_schema.get("type") == "object", name
        assert isinstance(t.output_schema, dict) and t.output_schema.get("type") == "object", \
            f"{name} has no object outputSchema: {t.output_schema!r}"
        assert "machine" in _props(t.input_schema), f"{name} lacks the optional `machine` argument"
        assert "machine" not in (t.input_schema.get("required") or []), name
        assert t.annotations is not None, f"{name} has no annotations"
    assert tools["gui_list"].annotations.read_only_hint is True
    assert tools["gui_state"].annotations.read_only_hint is True
    assert tools["gui_action"].annotations.read_only_hint is not True, \
        "gui_action changes the desktop: it must not be marked read-only"


def test_input_schemas_use_the_spec_field_names(lsm):
    tools = {t.name: t for t in lsm.list_tools()}
    st = tools["gui_state"].input_schema
    assert {"window_id", "screenshot", "include_elements", "max_elements", "max_depth"} <= set(_props(st))
    assert set(st.get("required") or []) == {"window_id"}
    act = tools["gui_action"].input_schema
    assert {"window_id", "state_id", "actions"} <= set(_props(act))
    assert set(act.get("required") or []) == {"window_id", "state_id", "actions"}
    assert _props(act)["actions"].get("type") == "array"
    fields = _action_item_fields(act)
    assert ACTION_FIELDS <= fields, f"action item lacks {sorted(ACTION_FIELDS - fields)}"
    # the action types are listed somewhere in the schema (enum / const / description)
    text = json.dumps(act)
    missing = [t for t in ACTION_TYPES if f'"{t}"' not in text and t not in text]
    assert not missing, f"action types not mentioned in gui_action's schema: {missing}"


def test_output_schemas_describe_the_results(lsm):
    tools = {t.name: t for t in lsm.list_tools()}
    lst = tools["gui_list"].output_schema
    assert {"machine", "backend", "windows", "truncated"} <= set(_props(lst))
    st = tools["gui_state"].output_schema
    assert {"state_id", "expires_in_ms", "machine", "window", "coordinate_space", "elements",
            "truncated"} <= set(_props(st))
    act = tools["gui_action"].output_schema
    assert {"machine", "window_id", "ok", "results"} <= set(_props(act))


# ------------------------------------------------------------------ machine argument
def test_unknown_machine(lsm):
    r = lsm.call("gui_list", {"machine": "no-such-machine"})
    assert _assert_error_shape(r) == "MACHINE_UNKNOWN"
    assert "no-such-machine" in err_message(r)
    r = lsm.call("gui_state", {"machine": "no-such-machine", "window_id": "0x1"})
    assert _assert_error_shape(r) == "MACHINE_UNKNOWN"
    r = lsm.call("gui_action", {"machine": "no-such-machine", "window_id": "0x1",
                                "state_id": "st_" + "0" * 32, "actions": [{"type": "wait", "seconds": 0}]})
    assert _assert_error_shape(r) == "MACHINE_UNKNOWN"
    _still_up(lsm)


def test_machine_local_is_this_machine(lsm):
    a = lsm.call("gui_list", {})
    b = lsm.call("gui_list", {"machine": "local"})
    assert a.is_error == b.is_error, (text_of(a), text_of(b))
    if a.is_error:
        assert err_code(a) == err_code(b)
    else:
        assert lsm.ok(a)["machine"] == lsm.ok(b)["machine"] == "local"


def test_gui_list_result_shape(lsm):
    """Whatever the desktop, gui_list answers fast with a well-formed result or error."""
    r = lsm.call("gui_list", {})
    if r.is_error:
        assert _assert_error_shape(r) in {"GUI_UNAVAILABLE", "PERMISSION_DENIED", "BACKEND_ERROR"}
        return
    d = lsm.ok(r)  # the SDK already validated it against the outputSchema
    assert d["machine"] == "local"
    assert d["backend"]["platform"] == "linux"
    assert isinstance(d["backend"]["capabilities"], list)
    for w in d["windows"]:
        assert isinstance(w["window_id"], str) and w["window_id"]
        assert set(w["bounds"]) >= {"x", "y", "width", "height"}
    assert text_of(r).strip(), "a success result carries a text block too"


def test_error_cases_leave_the_server_up(lsm):
    cases = [
        ("gui_state", {}),
        ("gui_state", {"window_id": "0x1", "bogus": 1}),
        ("gui_action", {"window_id": "0x1"}),
        ("gui_action", {"window_id": "0x1", "state_id": "st_" + "f" * 32, "actions": []}),
        ("gui_list", {"machine": 7}),
        ("gui_list", {"unknown_argument": True}),
    ]
    for name, args in cases:
        r = lsm.call(name, args)
        _assert_error_shape(r)
    # an unknown tool is a protocol-level error (JSON-RPC) or an error result; never a crash
    try:
        r = lsm.call("gui_teleport", {})
        assert r.is_error, f"unknown tool answered success: {text_of(r)}"
    except Exception as e:  # noqa: BLE001 - the SDK raises MCPError for JSON-RPC errors
        assert "TimeoutError" not in type(e).__name__, e
    lsm.ping()
    _still_up(lsm)


# ------------------------------------------------------------------ HTTP: Host / Origin checks
def _init_body() -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "host-check", "version": "0"}}})


def _post_init(url: str, headers: dict[str, str]) -> tuple[int, bytes]:
    raw = RawHttp(url, initialize=False, timeout=10)
    status, _h, body = raw.post(_init_body(), headers)
    return status, body


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:{port}", "192.168.1.10:{port}",
                                  "localhost.evil.example.com:{port}", "127.0.0.1.nip.io:{port}"])
def test_http_foreign_host_is_forbidden(lsm_http, host):
    status, body = _post_init(lsm_http.url, {"Host": host.format(port=lsm_http.port)})
    assert status == 403, f"Host: {host} -> HTTP {status} {body[:300]!r}"
    _still_up(lsm_http)


@pytest.mark.parametrize("origin", ["http://evil.example.com", "https://evil.example.com:{port}",
                                    "http://localhost.evil.example.com:{port}", "null"])
def test_http_foreign_origin_is_forbidden(lsm_http, origin):
    status, body = _post_init(lsm_http.url, {"Origin": origin.format(port=lsm_http.port)})
    assert status == 403, f"Origin: {origin} -> HTTP {status} {body[:300]!r}"
    _still_up(lsm_http)


@pytest.mark.parametrize("host,origin", [
    ("127.0.0.1:{port}", None),
    ("localhost:{port}", None),
    ("127.0.0.1:{port}", "http://127.0.0.1:{port}"),
    ("localhost:{port}", "http://localhost:{port}"),
])
def test_http_loopback_host_and_origin_are_accepted(lsm_http, host, origin):
    headers = {"Host": host.format(port=lsm_http.port)}
    if origin:
        headers["Origin"] = origin.format(port=lsm_http.port)
    status, body = _post_init(lsm_http.url, headers)
    assert status == 200, f"{headers} -> HTTP {status} {body[:300]!r}"


def test_http_raw_session_and_forbidden_tool_call(lsm_http):
    """A full raw session works; a tools/call carrying a foreign Origin is refused."""
    with RawHttp(lsm_http.url, timeout=10) as raw:
        assert raw.session_id, "Streamable HTTP server must issue an Mcp-Session-Id"
        msg = raw.rpc_raw(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}), 5)
        assert {t["name"] for t in msg["result"]["tools"]} == TOOLS
        body = json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                           "params": {"name": "gui_list", "arguments": {}}})
        status, _h, data = raw.post(body, {"Origin": "http://evil.example.com"})
        assert status == 403, f"HTTP {status} {data[:300]!r}"
    _still_up(lsm_http)
