//! The Desktop page's person in charge (docs/web-ui.md): the activity feed pushed as
//! server-sent events (`GET api/events`), and take-over and approval commands to any machine
//! (`GET`/`POST api/person`), which the machine's own service carries out (a worker's over
//! the worker link).

use super::errors::{error, gui_error};
use super::request::{bad_body, machine_param, parse_body, within, Web};
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lsm_core::person::{FeedEvent, PersonCommand};
use serde_json::Value;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// A comment line this often keeps proxies from closing a quiet feed (a few bytes).
const KEEP_ALIVE: Duration = Duration::from_secs(25);

fn to_event(e: &FeedEvent) -> Event {
    let name = match e {
        FeedEvent::Call(_) => "call",
        FeedEvent::Person(_) => "person",
    };
    Event::default()
        .event(name)
        .json_data(e)
        .unwrap_or_else(|_| Event::default().comment("an event could not be encoded"))
}

/// The feed: every machine's state and the recent calls first, then each event as it happens.
pub(super) async fn events(State(web): State<Arc<Web>>) -> Response {
    let (first, rx) = web.machines.feed().subscribe();
    let first = first.into_iter();
    let stream = futures_util::stream::unfold((first, rx), |(mut first, mut rx)| async move {
        if let Some(e) = first.next() {
            return Some((Ok::<_, Infallible>(to_event(&e)), (first, rx)));
        }
        match rx.recv().await {
            Ok(e) => Some((Ok(to_event(&e)), (first, rx))),
            // The page fell behind: it is told, and goes on with what comes next.
            Err(RecvError::Lagged(n)) => {
                let note = Event::default().event("lagged").data(n.to_string());
                Some((Ok(note), (first, rx)))
            }
            Err(RecvError::Closed) => None,
        }
    });
    let mut res = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    res
}

/// A machine's take-over holds, approval settings and pending approvals.
pub(super) async fn status(
    State(web): State<Arc<Web>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    run(&web, machine_param(&q).map(str::to_string), PersonCommand::Status).await
}

/// A take-over or approval command: `{"machine", "op", ...}` (see `PersonCommand`).
pub(super) async fn command(State(web): State<Arc<Web>>, body: Bytes) -> Response {
    let Some(mut body) = parse_body(&body) else {
        return bad_body();
    };
    let machine = body
        .as_object_mut()
        .and_then(|o| o.remove("machine"))
        .and_then(|m| m.as_str().map(str::to_string))
        .filter(|m| !m.is_empty());
    let command: PersonCommand = match serde_json::from_value(body) {
        Ok(c) => c,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "INVALID_ARGUMENT",
                format!("not a take-over or approval command: {e}"),
            )
        }
    };
    run(&web, machine, command).await
}

async fn run(web: &Web, machine: Option<String>, command: PersonCommand) -> Response {
    let service = match web.machines.get(machine.as_deref()) {
        Ok(s) => s,
        Err(e) => return gui_error(e),
    };
    match within("the command", service.person_command(command)).await {
        Ok(state) => (
            [(header::CACHE_CONTROL, "no-store")],
            Json(serde_json::to_value(state).unwrap_or(Value::Null)),
        )
            .into_response(),
        Err(e) => gui_error(e),
    }
}
