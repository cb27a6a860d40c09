//! What every web UI handler shares: the server's state ([`Web`]), the request deadline and the
//! request-body and query helpers. Its own file so the page's handler files (`person`) and the
//! router (`mod.rs`) both use it without using each other.

use super::auth::{Allowed, Auth};
use super::errors::error;
use crate::Machines;
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::Response;
use lsm_core::GuiResult;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// Slack over the service's own timeouts before a web request gives up.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// The web UI's state, shared by every handler.
pub(crate) struct Web {
    pub(super) machines: Arc<Machines>,
    pub(super) auth: Auth,
    pub(super) allowed: Allowed,
    /// Behind a reverse proxy: login throttling tells clients apart by their forwarded address.
    pub(super) behind_proxy: bool,
    /// Where the secret is, said after a wrong one.
    pub(super) secret_hint: String,
}

/// A machine call that gives up after the request deadline.
pub(crate) async fn within<T>(
    what: &str,
    fut: impl std::future::Future<Output = GuiResult<T>>,
) -> GuiResult<T> {
    lsm_core::error::within(CALL_TIMEOUT, what, fut).await
}

/// A request body that is a JSON object.
pub(crate) fn parse_body(body: &Bytes) -> Option<Value> {
    serde_json::from_slice::<Value>(body)
        .ok()
        .filter(Value::is_object)
}

pub(crate) fn bad_body() -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "INVALID_ARGUMENT",
        "the body must be a JSON object",
    )
}

/// The `machine` query parameter, when given and not empty.
pub(crate) fn machine_param(q: &HashMap<String, String>) -> Option<&str> {
    q.get("machine").map(String::as_str).filter(|m| !m.is_empty())
}
