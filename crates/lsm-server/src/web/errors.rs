//! What every answer of the web UI carries: errors as `{"error": {"code", "message"}}` with a
//! stable code (also the framework's own: unknown route, wrong method, oversized or unreadable
//! body, bad query), and the security headers.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lsm_core::{ErrorCode, GuiError};
use serde_json::json;

/// No inline script or style, nothing from elsewhere, no framing (click-jacking), no forms
/// posted anywhere.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; \
                       connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub fn error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let body = json!({"error": {"code": code, "message": message.into()}});
    (status, [(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

pub fn gui_error(e: GuiError) -> Response {
    let status = match e.code {
        ErrorCode::InvalidArgument | ErrorCode::UnsupportedAction => StatusCode::BAD_REQUEST,
        ErrorCode::MachineUnknown | ErrorCode::WindowNotFound => StatusCode::NOT_FOUND,
        ErrorCode::WindowChanged | ErrorCode::WindowMismatch => StatusCode::CONFLICT,
        ErrorCode::OutOfBounds => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::LimitExceeded => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::PermissionDenied => StatusCode::FORBIDDEN,
        ErrorCode::MachineOffline | ErrorCode::GuiUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::BackendError => StatusCode::BAD_GATEWAY,
        _ => StatusCode::CONFLICT,
    };
    error(status, e.code.as_str(), e.message)
}

/// The code and message for an error the framework answered on its own (in plain text).
fn framework_error(status: StatusCode) -> (&'static str, &'static str) {
    match status {
        StatusCode::NOT_FOUND => ("NOT_FOUND", "no such page"),
        StatusCode::METHOD_NOT_ALLOWED => ("METHOD_NOT_ALLOWED", "this method is not allowed here"),
        StatusCode::PAYLOAD_TOO_LARGE => ("LIMIT_EXCEEDED", "the request body is larger than 256 KiB"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE | StatusCode::UNPROCESSABLE_ENTITY => {
            ("INVALID_ARGUMENT", "the request body could not be read")
        }
        StatusCode::REQUEST_TIMEOUT => ("TIMEOUT", "the request took too long"),
        s if s.is_server_error() => ("BACKEND_ERROR", "the server could not answer"),
        _ => ("INVALID_ARGUMENT", "the request could not be read"),
    }
}

/// Makes `res` an answer of the web UI: a plain-text error becomes a JSON one (same status, its
/// `Allow` kept), and the security headers are set.
pub fn finish(res: Response) -> Response {
    let status = res.status();
    let json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    let mut res = if (status.is_client_error() || status.is_server_error()) && !json {
        let allow = res.headers().get(header::ALLOW).cloned();
        let (code, message) = framework_error(status);
        let mut r = error(status, code, message);
        if let Some(a) = allow {
            r.headers_mut().insert(header::ALLOW, a);
        }
        r
    } else {
        res
    };
    let h = res.headers_mut();
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert("content-security-policy", HeaderValue::from_static(CSP));
    res
}

/// A plain-text answer, as the framework's own errors are.
#[cfg(test)]
fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut r = Response::new(axum::body::Body::from(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_json(r: Response) -> serde_json::Value {
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20)
            .await
            .unwrap_or_default();
        serde_json::from_slice(&bytes).unwrap_or_default()
    }

    #[tokio::test]
    async fn framework_errors_become_json_with_headers() {
        for (status, code) in [
            (StatusCode::NOT_FOUND, "NOT_FOUND"),
            (StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED"),
            (StatusCode::PAYLOAD_TOO_LARGE, "LIMIT_EXCEEDED"),
            (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
            (StatusCode::INTERNAL_SERVER_ERROR, "BACKEND_ERROR"),
        ] {
            let mut r = plain(status, "Failed to buffer the request body");
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
            let r = finish(r);
            assert_eq!(r.status(), status);
            assert_eq!(r.headers()["x-frame-options"], "DENY");
            assert_eq!(r.headers()[header::ALLOW], "GET,HEAD");
            let v = body_json(r).await;
            assert_eq!(v["error"]["code"], code, "{v}");
            assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
        }
        // Our own JSON errors and successes pass as they are.
        let v = body_json(finish(error(StatusCode::FORBIDDEN, "CSRF_REFUSED", "x"))).await;
        assert_eq!(v["error"]["code"], "CSRF_REFUSED");
        let ok = finish(plain(StatusCode::OK, "fine"));
        assert_eq!(ok.headers()["content-security-policy"], CSP);
        let bytes = axum::body::to_bytes(ok.into_body(), 100)
            .await
            .unwrap_or_default();
        assert_eq!(&bytes[..], b"fine");
    }
}
