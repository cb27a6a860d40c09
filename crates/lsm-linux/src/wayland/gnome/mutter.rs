//! Input and pixels on GNOME through mutter's own D-Bus API: a `org.gnome.Mutter.RemoteDesktop`
//! session with a linked `org.gnome.Mutter.ScreenCast` session that records one window
//! (`RecordWindow`). Neither needs a dialog; the session lives as long as our D-Bus connection.
//! One session per observed window: its stream takes pointer coordinates relative to that
//! window's buffer (so a point in the window needs no screen arithmetic), and its PipeWire node
//! carries that window's pixels, correct while the window is covered.
//!
//! Traps measured on mutter 43.8: the first keysym of a session is dropped (we send Shift
//! first), and a press and release sent back to back can be missed by GTK 4 (we pause
//! `INPUT_GAP` between motion, press and release).

use crate::wayland::dbus::{call, CALL_TIMEOUT};
use crate::wayland::input::RemoteInput;
use async_trait::async_trait;
use lsm_core::{GuiError, GuiResult};
use std::collections::HashMap;
use std::time::Duration;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

pub const RD_NAME: &str = "org.gnome.Mutter.RemoteDesktop";
const RD_PATH: &str = "/org/gnome/Mutter/RemoteDesktop";
const RD_SESSION: &str = "org.gnome.Mutter.RemoteDesktop.Session";
const SC_NAME: &str = "org.gnome.Mutter.ScreenCast";
const SC_PATH: &str = "/org/gnome/Mutter/ScreenCast";
const SC_SESSION: &str = "org.gnome.Mutter.ScreenCast.Session";
const SC_STREAM: &str = "org.gnome.Mutter.ScreenCast.Stream";

/// How long a new stream may take to appear on PipeWire.
const STREAM_WAIT: Duration = Duration::from_secs(3);

/// `XK_Shift_L`: sent once at the start of a session, whose first keysym mutter drops.
pub const PRIMING_KEYSYM: u32 = 0xffe1;

fn err(what: &str, e: impl std::fmt::Display) -> GuiError {
    GuiError::backend(format!("mutter {what}: {e}"))
}

/// A remote-desktop session recording one window.
pub struct WindowSession {
    conn: zbus::Connection,
    rd: OwnedObjectPath,
    stream: OwnedObjectPath,
    /// The stream's PipeWire node.
    pub node: u32,
}

impl WindowSession {
    /// Creates and starts a session for mutter window `window_id`.
    pub async fn start(conn: &zbus::Connection, window_id: u64) -> GuiResult<Self> {
        let rd: OwnedObjectPath = call(conn, RD_NAME, RD_PATH, RD_NAME, "CreateSession", &()).await?;
        let session_id: OwnedValue = call(
            conn,
            RD_NAME,
            rd.as_str(),
            "org.freedesktop.DBus.Properties",
            "Get",
            &(RD_SESSION, "SessionId"),
        )
        .await?;
        let session_id: String = session_id
            .try_into()
            .map_err(|e| err("SessionId is not a string", e))?;
        let mut props: HashMap<&str, Value> = HashMap::new();
        props.insert("remote-desktop-session-id", Value::from(session_id));
        let sc: OwnedObjectPath = call(conn, SC_NAME, SC_PATH, SC_NAME, "CreateSession", &(props,)).await?;
        let mut rec: HashMap<&str, Value> = HashMap::new();
        rec.insert("window-id", Value::U64(window_id));
        // Hidden cursor: screenshots show the window, not where our pointer happens to be.
        rec.insert("cursor-mode", Value::U32(0));
        let stream: OwnedObjectPath =
            call(conn, SC_NAME, sc.as_str(), SC_SESSION, "RecordWindow", &(rec,)).await?;
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface(SC_STREAM)
            .and_then(|b| b.member("PipeWireStreamAdded"))
            .and_then(|b| b.path(stream.as_str()))
            .map_err(|e| err("match rule", e))?
            .build();
        let mut added = tokio::time::timeout(
            CALL_TIMEOUT,
            zbus::MessageStream::for_match_rule(rule, conn, Some(4)),
        )
        .await
        .map_err(|_| GuiError::timeout("subscribing to PipeWireStreamAdded"))?
        .map_err(|e| err("subscribe", e))?;
        let () = call(conn, RD_NAME, rd.as_str(), RD_SESSION, "Start", &()).await?;
        let node = tokio::time::timeout(STREAM_WAIT, async {
            use futures_util::StreamExt;
            while let Some(msg) = added.next().await {
                if let Ok(node) = msg.and_then(|m| m.body().deserialize::<u32>()) {
                    return Some(node);
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .ok_or_else(|| GuiError::timeout("mutter's window stream to appear on PipeWire"))?;
        let s = Self {
            conn: conn.clone(),
            rd,
            stream,
            node,
        };
        // Mutter drops the first keysym of a session.
        s.keysym(PRIMING_KEYSYM, true).await?;
        s.keysym(PRIMING_KEYSYM, false).await?;
        Ok(s)
    }

    async fn rd_call<B>(&self, method: &str, body: &B) -> GuiResult<()>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        call::<B, ()>(&self.conn, RD_NAME, self.rd.as_str(), RD_SESSION, method, body).await
    }

    /// Ends the session (also ended when our connection closes).
    pub async fn stop(&self) {
        let _ = self.rd_call("Stop", &()).await;
    }
}

#[async_trait]
impl RemoteInput for WindowSession {
    /// Moves the pointer to (x, y) in the window's buffer (logical px).
    async fn motion(&self, x: f64, y: f64) -> GuiResult<()> {
        self.rd_call("NotifyPointerMotionAbsolute", &(self.stream.as_str(), x, y))
            .await
    }

    async fn button(&self, code: i32, pressed: bool) -> GuiResult<()> {
        self.rd_call("NotifyPointerButton", &(code, pressed)).await
    }

    async fn axis_discrete(&self, axis: u32, steps: i32) -> GuiResult<()> {
        self.rd_call("NotifyPointerAxisDiscrete", &(axis, steps)).await
    }

    async fn keysym(&self, keysym: u32, pressed: bool) -> GuiResult<()> {
        self.rd_call("NotifyKeyboardKeysym", &(keysym, pressed)).await
    }
}
