//! The MCP face: translates tool calls into `GuiService` calls and results into MCP content.

use crate::args;
use crate::machines::{no_desktop, Machines, LOCAL};
use crate::tools::{self, ActionArgs, ListArgs, StateArgs, GUI_ACTION, GUI_LIST, GUI_STATE};
use base64::Engine;
use lsm_core::outline;
use lsm_core::{ActionRequest, EncodedImage, ErrorCode, GuiError, GuiResult, StateRequest};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::sync::Arc;

/// One MCP session's handler. Cheap to clone: all state lives in `Machines`.
#[derive(Clone)]
pub struct LsmMcp {
    machines: Arc<Machines>,
}

const INSTRUCTIONS: &str = "Operate desktop applications: gui_list -> gui_state(window_id) -> \
gui_action(window_id, state_id, actions) -> gui_action with the state_id it returned -> ... (each \
gui_action answers what changed and a new state_id; call gui_state again to re-sync). Prefer element_id \
over x/y. A state_id is single-use and expires after 30 s; element bounds, screenshot pixels and gui_action x/y share one \
window-relative space (logical pixels, or a scaled space for very large windows: see coordinate_space), so \
read points off the screenshot and send them back as they are. gui_state(query=\"words\") returns only the \
matching elements and their ancestors. On an error, follow its message (usually: call gui_state again).";

impl LsmMcp {
    pub fn new(machines: Arc<Machines>) -> Self {
        Self { machines }
    }

    async fn dispatch(&self, name: &str, args: &JsonObject, caller: &str) -> GuiResult<CallToolResult> {
        match name {
            GUI_LIST => {
                let ListArgs { machine } = args::parse(args)?;
                let name = machine.as_deref().filter(|m| !m.is_empty()).unwrap_or(LOCAL);
                let result = self.machines.get(machine.as_deref())?.list().await;
                // A failed listing of another machine is answered at once, before the others
                // are asked about their desktops.
                if let Err(e) = &result {
                    if !(name == LOCAL && e.code == ErrorCode::GuiUnavailable) {
                        return Err(e.clone());
                    }
                }
                let machines = self.machines.list_checked((name, &result)).await;
                let out = match result {
                    Ok(out) => out,
                    // A controller without a desktop of its own still lists its machines: the
                    // model finds its workers here.
                    Err(e) => no_desktop(LOCAL, &e),
                };
                let mut text = outline::list_text(&out);
                text.push_str("machines:\n");
                for m in &machines {
                    let link = if m.name == LOCAL {
                        "this machine"
                    } else {
                        "connected"
                    };
                    let state = match (m.connected, m.available) {
                        (_, true) => format!("{link}, GUI available"),
                        (true, false) => format!(
                            "{link}, GUI unavailable: {}",
                            m.unavailable_reason.as_deref().unwrap_or("unknown")
                        ),
                        (false, _) => format!("offline: {}", m.detail.as_deref().unwrap_or("not connected")),
                    };
                    text.push_str(&format!(" {}: {state}\n", m.name));
                }
                let structured = to_value(&tools::ListResult { list: out, machines })?;
                Ok(success(text, structured, None))
            }
            GUI_STATE => {
                let a: StateArgs = args::parse(args)?;
                let request = StateRequest {
                    window_id: a.window_id,
                    screenshot: a.screenshot.unwrap_or(true),
                    include_elements: a.include_elements.unwrap_or(true),
                    max_elements: a.max_elements,
                    max_depth: a.max_depth,
                    query: a.query,
                    include_hidden: a.include_hidden.unwrap_or(false),
                    image_format: a.image_format.unwrap_or_default(),
                    image_quality: a.image_quality,
                };
                let mut out = self.machines.get(a.machine.as_deref())?.state(request).await?;
                let image = out.image.take();
                Ok(success(outline::state_text(&out), to_value(&out)?, image))
            }
            GUI_ACTION => {
                let a: ActionArgs = args::parse(args)?;
                let request = ActionRequest {
                    window_id: a.window_id,
                    state_id: a.state_id,
                    actions: a.actions,
                    observe: a.observe.unwrap_or_default(),
                    settle_ms: a.settle_ms,
                    screenshot: a.screenshot.unwrap_or(false),
                    caller: Some(caller.to_string()),
                };
                let mut out = self.machines.get(a.machine.as_deref())?.action(request).await?;
                let image = out.image.take();
                Ok(success(outline::action_text(&out), to_value(&out)?, image))
            }
            // Unknown tools are answered as a protocol error in `call_tool`.
            other => Err(GuiError::invalid(format!("unknown tool {other:?}"))),
        }
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> GuiResult<Value> {
    serde_json::to_value(v).map_err(|e| GuiError::backend(format!("serialising the result: {e}")))
}

fn success(text: String, structured: Value, image: Option<EncodedImage>) -> CallToolResult {
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text)];
    if let Some(image) = image {
        result.content.push(ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(&image.bytes),
            image.mime_type(),
        ));
    }
    result
}

/// Who is calling, for the audit log: the Streamable HTTP session (its id hashed: the id lets
/// its holder use the session), or stdio.
fn caller_of(context: &RequestContext<RoleServer>) -> String {
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => match parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            Some(id) => lsm_core::audit::session_label("mcp-http", id),
            None => "mcp:http".into(),
        },
        None => "mcp:stdio".into(),
    }
}

/// Every failure is a tool result with `isError`, a stable code and what to do next.
pub fn error_result(e: &GuiError) -> CallToolResult {
    let mut body = json!({"code": e.code, "message": e.message});
    if let Some(d) = &e.details {
        body["details"] = d.clone();
    }
    let mut result = CallToolResult::structured_error(json!({ "error": body }));
    result.content = vec![ContentBlock::text(format!("{}: {}", e.code, e.message))];
    result
}

impl ServerHandler for LsmMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("lsm", env!("CARGO_PKG_VERSION")).with_title("local-shell-mcp"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if ![GUI_LIST, GUI_STATE, GUI_ACTION].contains(&request.name.as_ref()) {
            // MCP: an unknown tool is a JSON-RPC invalid-params error, not a tool result.
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool {:?}; tools are gui_list, gui_state, gui_action",
                    request.name
                ),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let started = std::time::Instant::now();
        let result = match self.dispatch(&request.name, &args, &caller_of(&context)).await {
            Ok(r) => r,
            Err(e) => {
                tracing::info!(tool = %request.name, code = %e.code, "tool error: {}", e.message);
                error_result(&e)
            }
        };
        tracing::debug!(tool = %request.name, ms = started.elapsed().as_millis() as u64, "tool call");
        Ok(CallToolResponse::Complete(result))
    }
}
