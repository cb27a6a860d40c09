//! The controller-worker wire protocol. JSON text frames carry the handshake, requests and
//! replies; images travel beside a reply as one binary frame: a header (magic, request id,
//! SHA-256 of the payload) and the encoded image, checked on receipt.

use lsm_core::person::{FeedEvent, PersonCommand};
use lsm_core::{
    ActionRequest, EncodedImage, FrameRequest, GuiError, GuiResult, HumanActionRequest, ImageFormat,
    StateRequest,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Bumped when a message changes incompatibly; the controller refuses other versions.
/// 2: the worker's activity feed (`ToController::Event`) and the Desktop page's take-over and
/// approval commands (`Call::Person`).
pub const PROTOCOL: u32 = 2;

/// The worker's name in the WebSocket upgrade request; its token goes in `Authorization:
/// Bearer`. The controller checks both before the upgrade, so nobody unauthenticated ever gets
/// a WebSocket (nor sends it a message).
pub const WORKER_HEADER: &str = "x-lsm-worker";

/// First frame from the worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    pub name: String,
    pub token: String,
    /// `linux`, `windows`, `macos`.
    pub platform: String,
    /// The graphical session the worker runs in (e.g. `x11 :0`), or `none`.
    pub session: String,
    pub version: String,
}

/// Controller -> worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToWorker {
    Welcome,
    /// Deliberately generic: the reason is in the controller's log, not told to the peer.
    Refused {
        message: String,
    },
    Request {
        id: u64,
        call: Call,
    },
}

/// Worker -> controller (after `Hello`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToController {
    Reply {
        id: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        err: Option<GuiError>,
        /// Set when a binary image frame for this id follows.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image: Option<ImageMeta>,
    },
    /// The worker's activity: a call on its desktop, or its take-over and approval state
    /// (docs/web-ui.md), for the controller's Desktop page.
    Event { event: Box<FeedEvent> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageMeta {
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
    pub bytes: usize,
}

/// One `GuiService` call: the service's own request types, as they are.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Call {
    List,
    State(StateRequest),
    Action(ActionRequest),
    Frame(FrameRequest),
    HumanAction(HumanActionRequest),
    /// A take-over or approval command from the Desktop page (a field of its own: the command
    /// carries an `op` too).
    Person {
        command: PersonCommand,
    },
}

impl Call {
    pub fn name(&self) -> &'static str {
        match self {
            Call::List => "gui_list",
            Call::State(_) => "gui_state",
            Call::Action(_) => "gui_action",
            Call::Frame(_) => "gui_frame",
            Call::HumanAction(_) => "gui_human_action",
            Call::Person { .. } => "gui_person",
        }
    }
}

const MAGIC: &[u8; 4] = b"LSMI";
const HEADER: usize = 4 + 8 + 32;

/// A binary image frame: `LSMI`, request id (u64 BE), SHA-256 of the payload, payload.
pub fn encode_image(id: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

/// The request id of a binary frame, and its payload once the checksum matched.
pub fn decode_image(frame: &[u8]) -> Result<(u64, GuiResult<&[u8]>), String> {
    if frame.len() < HEADER || &frame[..4] != MAGIC {
        return Err(format!("malformed binary frame of {} bytes", frame.len()));
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&frame[4..12]);
    let id = u64::from_be_bytes(id);
    let payload = &frame[HEADER..];
    if Sha256::digest(payload).as_slice() != &frame[12..HEADER] {
        return Ok((
            id,
            Err(GuiError::backend(
                "the screenshot from the worker failed its checksum; try again",
            )),
        ));
    }
    Ok((id, Ok(payload)))
}

/// Puts the bytes back together with their metadata, checking the announced size.
pub fn image_from(meta: &ImageMeta, bytes: &[u8]) -> GuiResult<EncodedImage> {
    if bytes.len() != meta.bytes {
        return Err(GuiError::backend(format!(
            "the screenshot from the worker has {} bytes, {} were announced",
            bytes.len(),
            meta.bytes
        )));
    }
    Ok(EncodedImage {
        format: meta.format,
        width: meta.width,
        height: meta.height,
        bytes: bytes.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_frames_round_trip_and_detect_corruption() {
        let f = encode_image(42, b"hello png");
        let (id, payload) = decode_image(&f).unwrap();
        assert_eq!(id, 42);
        assert_eq!(payload.unwrap(), b"hello png");
        let mut bad = f.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let (id, payload) = decode_image(&bad).unwrap();
        assert_eq!(id, 42);
        assert_eq!(payload.unwrap_err().code, lsm_core::ErrorCode::BackendError);
        assert!(decode_image(b"short").is_err());
    }

    #[test]
    fn a_person_command_crosses_the_link() {
        let call = ToWorker::Request {
            id: 3,
            call: Call::Person {
                command: PersonCommand::TakeOver {
                    window_id: None,
                    idle_release_s: Some(9),
                },
            },
        };
        let text = serde_json::to_string(&call).expect("serialises");
        let back: ToWorker = serde_json::from_str(&text).expect(&text);
        assert!(matches!(
            back,
            ToWorker::Request {
                call: Call::Person {
                    command: PersonCommand::TakeOver { .. }
                },
                ..
            }
        ));
    }

    #[test]
    fn calls_serialise_with_their_op() {
        let v = serde_json::to_value(ToWorker::Request {
            id: 7,
            call: Call::List,
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "request", "id": 7, "call": {"op": "list"}})
        );
    }
}
