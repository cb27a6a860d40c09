//! Fuzz targets (property tests) for the tools' arguments: the schema-driven parser
//! (`args::parse`) on each tool's argument struct, and the whole MCP entry point (JSON-RPC
//! lines into a real `LsmMcp` session over an in-memory stdio pair, on a machine without a
//! desktop), with generated arguments and raw lines. Longer run:
//! `LSM_FUZZ_SECS=600 cargo test --release -p lsm-server --test prop_args -- --nocapture`.

#[path = "../../lsm-core/tests/fuzz/mod.rs"]
mod fuzz;

use lsm_core::{ErrorCode, GuiError, Limits, LocalGui, NoGui};
use lsm_server::args;
use lsm_server::tools::{ActionArgs, ListArgs, StateArgs};
use lsm_server::{LsmMcp, Machines};
use proptest::prelude::*;
use rmcp::ServiceExt;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

const KEYS: &[&str] = &[
    "machine",
    "window_id",
    "screenshot",
    "image_format",
    "image_quality",
    "query",
    "include_elements",
    "include_hidden",
    "max_elements",
    "max_depth",
    "state_id",
    "actions",
    "observe",
    "settle_ms",
    "type",
    "element_id",
    "x",
    "y",
    "text",
    "keys",
];

/// Values a tool argument may be sent: the expected type, its near misses, or anything.
fn arg_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => fuzz::nasty_string().prop_map(Value::from),
        2 => fuzz::nasty_number(),
        1 => any::<bool>().prop_map(Value::from),
        1 => Just(Value::Null),
        1 => prop::sample::select(vec!["png", "jpeg", "jpg", "webp", "PNG", "gif", "changes", "full", "none",
            "local", "w1", "0x1", ""]).prop_map(Value::from),
        1 => fuzz::json(KEYS),
    ]
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    let key = prop_oneof![
        8 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_string),
        1 => fuzz::nasty_string(),
    ];
    prop::collection::vec((key, arg_value()), 0..8).prop_map(|kv| kv.into_iter().collect())
}

fn clear(e: &GuiError, args: &Map<String, Value>) -> Result<(), String> {
    if ![ErrorCode::InvalidArgument, ErrorCode::LimitExceeded].contains(&e.code) {
        return Err(format!("unexpected code {}: {}", e.code, e.message));
    }
    // Every count of these tools is a u64: only a number beyond it is over the limit here.
    let beyond_u64 = |v: &Value| v.as_f64().is_some_and(|f| f >= 18446744073709551615.0);
    if e.code == ErrorCode::LimitExceeded && !args.values().any(beyond_u64) {
        return Err(format!("LIMIT_EXCEEDED for no number beyond u64: {}", e.message));
    }
    // serde's own wording ("invalid type: ...") means a check the schema should have made.
    if e.message.starts_with("arguments:") {
        return Err(format!("serde's error reached the caller: {}", e.message));
    }
    Ok(())
}

#[test]
fn tool_args_direct() {
    fuzz::run("tool_args_direct", (0u8..3, arguments()), 1000, |(tool, a)| {
        let r = match tool {
            0 => args::parse::<ListArgs>(a).map(drop),
            1 => args::parse::<StateArgs>(a).map(drop),
            _ => args::parse::<ActionArgs>(a).map(drop),
        };
        match r {
            Ok(()) => Ok(()),
            Err(e) => clear(&e, a),
        }
    });
}

/// Found by `tool_args_direct`: a whole count written as a float (`30.0`) was refused with
/// LIMIT_EXCEEDED "image_quality is 3e1; far above what is allowed"; it is that count.
#[test]
fn regression_whole_float_count_is_that_count() {
    let object = |v: Value| v.as_object().cloned().unwrap_or_default();
    let a: StateArgs = args::parse(&object(
        json!({"window_id": "0x1", "image_quality": 30.0, "max_depth": 0.0}),
    ))
    .expect("30.0 is 30");
    assert_eq!((a.image_quality, a.max_depth), (Some(30), Some(0)));
    let e = args::parse::<StateArgs>(&object(json!({"window_id": "0x1", "max_elements": 1e30})))
        .err()
        .expect("1e30 is over");
    assert_eq!(e.code, ErrorCode::LimitExceeded);
    let e = args::parse::<StateArgs>(&object(json!({"window_id": "0x1", "max_elements": 2.5})))
        .err()
        .expect("a fraction is no count");
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

// ---------------------------------------------------------------- the MCP entry point

struct Session {
    rt: tokio::runtime::Runtime,
    out: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
}

const ANSWER_LIMIT: Duration = Duration::from_secs(5);

impl Session {
    fn start() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let (client, server) = tokio::io::duplex(1 << 20);
        let local = Arc::new(LocalGui::new(
            "local",
            Limits::default(),
            Arc::new(NoGui {
                reason: "fuzzing without a desktop".into(),
            }),
        ));
        let machines = Arc::new(Machines::new(local));
        rt.spawn(async move {
            let (r, w) = tokio::io::split(server);
            if let Ok(s) = LsmMcp::new(machines).serve((r, w)).await {
                let _ = s.waiting().await;
            }
        });
        let (r, w) = tokio::io::split(client);
        let mut s = Session {
            rt,
            out: w,
            lines: BufReader::new(r).lines(),
            next_id: 1,
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "fuzz", "version": "0"}}),
        );
        assert!(init.as_ref().is_ok_and(|v| v.get("result").is_some()), "{init:?}");
        s.send_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .expect("initialized");
        s
    }

    fn send_line(&mut self, line: &[u8]) -> Result<(), String> {
        let out = &mut self.out;
        self.rt
            .block_on(async {
                out.write_all(line).await?;
                out.write_all(b"\n").await?;
                out.flush().await
            })
            .map_err(|e| format!("the server stopped reading: {e}"))
    }

    /// Sends a request and waits for the answer with its id.
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(msg.to_string().as_bytes())?;
        self.answer(id)
    }

    fn answer(&mut self, id: u64) -> Result<Value, String> {
        let lines = &mut self.lines;
        self.rt.block_on(async {
            let deadline = tokio::time::Instant::now() + ANSWER_LIMIT;
            loop {
                let line = tokio::time::timeout_at(deadline, lines.next_line())
                    .await
                    .map_err(|_| format!("no answer to request {id} within {ANSWER_LIMIT:?}"))?
                    .map_err(|e| format!("reading: {e}"))?
                    .ok_or_else(|| format!("the server closed the session before answering {id}"))?;
                let v: Value = serde_json::from_str(&line)
                    .map_err(|e| format!("the server wrote a non-JSON line {line:?}: {e}"))?;
                if v.get("id") == Some(&json!(id)) {
                    return Ok(v);
                }
            }
        })
    }

    /// The session still answers.
    fn alive(&mut self) -> Result<(), String> {
        let v = self.request("ping", json!({}))?;
        v.get("result")
            .map(drop)
            .ok_or_else(|| format!("ping answered {v}"))
    }
}

/// A tools/call answer: a result (a tool error has `isError`, a stable code and a message), or a
/// JSON-RPC error for what is not a call of a known tool.
fn check_call_answer(tool: &str, args: &Value, v: &Value) -> Result<(), String> {
    if let Some(err) = v.get("error") {
        // rmcp answers arguments that are not an object itself (-32601 "tools/call"), and lsm an
        // unknown tool with -32602; a call of a known tool with an object is always a result.
        let known = ["gui_list", "gui_state", "gui_action"].contains(&tool) && args.is_object();
        return match err.get("code").and_then(Value::as_i64) {
            Some(c) if !known && c < 0 && err.get("message").is_some() => Ok(()),
            _ => Err(format!("JSON-RPC error {err}")),
        };
    }
    let result = v
        .get("result")
        .ok_or_else(|| format!("neither result nor error: {v}"))?;
    if result.get("isError") == Some(&json!(true)) {
        let e = result
            .pointer("/structuredContent/error")
            .ok_or_else(|| format!("a tool error without structuredContent.error: {result}"))?;
        let code = e.get("code").cloned().unwrap_or(Value::Null);
        serde_json::from_value::<ErrorCode>(code.clone())
            .map_err(|_| format!("not a stable code: {code}"))?;
        if e.get("message")
            .and_then(Value::as_str)
            .is_none_or(|m| m.trim().is_empty())
        {
            return Err(format!("a tool error without a message: {e}"));
        }
        if e.get("code") == Some(&json!("INVALID_ARGUMENT"))
            && e.get("message")
                .and_then(Value::as_str)
                .is_some_and(|m| m.starts_with("arguments:"))
        {
            return Err(format!("serde's error reached the caller: {e}"));
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Input {
    /// tools/call with this name and these arguments (any JSON, not only objects).
    Call(String, Value),
    /// A raw line on stdin.
    Line(Vec<u8>),
}

fn input() -> impl Strategy<Value = Input> {
    let tool = prop_oneof![
        8 => prop::sample::select(vec!["gui_list", "gui_state", "gui_action"]).prop_map(str::to_string),
        1 => fuzz::nasty_string(),
    ];
    let args = prop_oneof![
        8 => arguments().prop_map(Value::Object),
        1 => fuzz::json(KEYS),
    ];
    prop_oneof![
        6 => (tool, args).prop_map(|(t, a)| Input::Call(t, a)),
        1 => fuzz::raw_bytes(KEYS).prop_map(|mut b| {
            b.retain(|c| *c != b'\n');
            Input::Line(b)
        }),
    ]
}

#[test]
fn tool_calls_over_mcp() {
    let mut s = Session::start();
    fuzz::run("tool_calls_over_mcp", input(), 200, |i| {
        match i {
            Input::Call(tool, args) => {
                let v = s.request("tools/call", json!({"name": tool, "arguments": args}))?;
                check_call_answer(tool, args, &v)?;
            }
            Input::Line(line) => s.send_line(line)?,
        }
        s.alive()
    });
}
