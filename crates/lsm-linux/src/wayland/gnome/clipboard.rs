//! Typing what the keymap cannot: on GNOME mutter drops keysyms that are not in the active
//! layout (é, €, CJK, emoji), so such text goes through the clipboard and Ctrl+V. Mutter's
//! remote-desktop session has its own clipboard API (`EnableClipboard`, `SetSelection`,
//! `SelectionTransfer` → `SelectionWrite`, `SelectionRead`). The user's clipboard is read
//! first and put back after the paste: lsm then owns the selection with the user's content
//! and serves it for as long as lsm runs (Wayland has no way to hand ownership back).

use crate::wayland::dbus::{self, CALL_TIMEOUT};
use futures_util::StreamExt;
use lsm_core::{GuiError, GuiResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use zbus::zvariant::{OwnedFd, OwnedObjectPath, OwnedValue, Value};

const RD_NAME: &str = "org.gnome.Mutter.RemoteDesktop";
const RD_PATH: &str = "/org/gnome/Mutter/RemoteDesktop";
const RD_SESSION: &str = "org.gnome.Mutter.RemoteDesktop.Session";
/// The text types we offer: UTF-8 ones only (X11's `STRING` and `TEXT` are Latin-1).
pub const TEXT_MIMES: &[&str] = &["text/plain;charset=utf-8", "text/plain", "UTF8_STRING"];
/// Bound on what we save of the user's clipboard (all its types together).
const MAX_SAVED: usize = 32 << 20;
/// How long the first owner report may take after our clipboard was enabled.
const FIRST_OWNER_WAIT: Duration = Duration::from_millis(250);
/// Bound on reading one type of the user's clipboard.
const READ_WAIT: Duration = Duration::from_millis(1500);

/// What we serve when an application pastes.
#[derive(Debug, Clone, Default)]
pub struct Content {
    /// Mime type -> bytes.
    pub by_mime: Vec<(String, Vec<u8>)>,
}

impl Content {
    pub fn text(text: &str) -> Self {
        Self {
            by_mime: TEXT_MIMES
                .iter()
                .map(|m| (m.to_string(), text.as_bytes().to_vec()))
                .collect(),
        }
    }

    fn mimes(&self) -> Vec<String> {
        self.by_mime.iter().map(|(m, _)| m.clone()).collect()
    }

    fn get(&self, mime: &str) -> Option<&[u8]> {
        self.by_mime
            .iter()
            .find(|(m, _)| m == mime)
            .map(|(_, b)| b.as_slice())
    }
}

#[derive(Debug, Default)]
struct State {
    /// What we serve (when we own the selection).
    serving: Option<Content>,
    /// Transfers served so far (a paste happened).
    served: u64,
    /// The selection's types as of the last owner change, and whether we own it.
    offered: Vec<String>,
    ours: bool,
    /// An owner change was seen (mutter reports the current owner right after
    /// `EnableClipboard`, and nothing when the clipboard is empty).
    known: bool,
}

pub struct Clipboard {
    conn: zbus::Connection,
    rd: OwnedObjectPath,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

fn signal_rule(path: &str, member: &'static str) -> GuiResult<zbus::MatchRule<'static>> {
    Ok(zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface(RD_SESSION)
        .and_then(|b| b.member(member))
        .and_then(|b| b.path(path.to_string()))
        .map_err(|e| GuiError::backend(format!("match rule: {e}")))?
        .build())
}

async fn subscribe(
    conn: &zbus::Connection,
    path: &str,
    member: &'static str,
) -> GuiResult<zbus::MessageStream> {
    tokio::time::timeout(
        CALL_TIMEOUT,
        zbus::MessageStream::for_match_rule(signal_rule(path, member)?, conn, Some(16)),
    )
    .await
    .map_err(|_| GuiError::timeout(format!("subscribing to {member}")))?
    .map_err(|e| GuiError::backend(format!("subscribing to {member}: {e}")))
}

/// The `mime-types` of a `SelectionOwnerChanged`: mutter wraps the list in a one-field tuple
/// (`(as)`); a bare `as` is taken as well.
fn mime_list(options: &HashMap<String, OwnedValue>) -> Vec<String> {
    let Some(v) = options.get("mime-types") else {
        return Vec::new();
    };
    let inner: &Value = match &**v {
        Value::Structure(s) => match s.fields() {
            [only] => only,
            _ => return Vec::new(),
        },
        other => other,
    };
    match inner {
        Value::Array(a) => a
            .iter()
            .filter_map(|m| match m {
                Value::Str(s) => Some(s.to_string()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Clipboard {
    pub async fn start(conn: &zbus::Connection) -> GuiResult<Self> {
        let rd: OwnedObjectPath = dbus::call(conn, RD_NAME, RD_PATH, RD_NAME, "CreateSession", &()).await?;
        let mut transfers = subscribe(conn, rd.as_str(), "SelectionTransfer").await?;
        let mut owners = subscribe(conn, rd.as_str(), "SelectionOwnerChanged").await?;
        let () = dbus::call(conn, RD_NAME, rd.as_str(), RD_SESSION, "Start", &()).await?;
        let opts: HashMap<&str, Value> = HashMap::new();
        let () = dbus::call(
            conn,
            RD_NAME,
            rd.as_str(),
            RD_SESSION,
            "EnableClipboard",
            &(opts,),
        )
        .await?;
        let state: Arc<Mutex<State>> = Arc::default();
        let (st, c, path) = (state.clone(), conn.clone(), rd.clone());
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(Ok(msg)) = transfers.next() => {
                        let Ok((mime, serial)) = msg.body().deserialize::<(String, u32)>() else { continue };
                        let bytes = st.lock().unwrap_or_else(|p| p.into_inner())
                            .serving.as_ref().and_then(|s| s.get(&mime).map(<[u8]>::to_vec));
                        tracing::debug!("clipboard transfer {serial} of {mime}: {} bytes", bytes.as_ref().map_or(0, Vec::len));
                        let ok = match bytes {
                            Some(b) => write_transfer(&c, &path, serial, b).await.is_ok(),
                            None => false,
                        };
                        let _: GuiResult<()> = dbus::call(&c, RD_NAME, path.as_str(), RD_SESSION,
                            "SelectionWriteDone", &(serial, ok)).await;
                        if ok {
                            st.lock().unwrap_or_else(|p| p.into_inner()).served += 1;
                        }
                    }
                    Some(Ok(msg)) = owners.next() => {
                        let Ok(opts) = msg.body().deserialize::<HashMap<String, OwnedValue>>() else { continue };
                        let ours = opts.get("session-is-owner").and_then(|v| bool::try_from(v).ok()).unwrap_or(false);
                        let mut s = st.lock().unwrap_or_else(|p| p.into_inner());
                        tracing::debug!("clipboard owner changed: ours {ours}, types {:?}", mime_list(&opts));
                        s.offered = mime_list(&opts);
                        s.ours = ours;
                        s.known = true;
                    }
                    else => break,
                }
            }
        });
        Ok(Self {
            conn: conn.clone(),
            rd,
            state,
            task,
        })
    }

    /// The user's clipboard now, every type of it (bounded); None when it is empty or ours.
    pub async fn save(&self) -> Option<Content> {
        let deadline = Instant::now() + FIRST_OWNER_WAIT;
        while !self.state.lock().unwrap_or_else(|p| p.into_inner()).known && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (offered, ours, serving) = {
            let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            (s.offered.clone(), s.ours, s.serving.clone())
        };
        if ours {
            return serving;
        }
        let mut saved = Content::default();
        let mut total = 0;
        for mime in offered {
            let fd = match dbus::call::<_, OwnedFd>(
                &self.conn,
                RD_NAME,
                self.rd.as_str(),
                RD_SESSION,
                "SelectionRead",
                &(mime.as_str(),),
            )
            .await
            {
                Ok(fd) => fd,
                Err(e) => {
                    tracing::debug!("reading the clipboard as {mime}: {}", e.message);
                    continue;
                }
            };
            let room = MAX_SAVED.saturating_sub(total);
            let Some(bytes) = read_all(fd, room).await else {
                continue;
            };
            total += bytes.len();
            saved.by_mime.push((mime, bytes));
        }
        tracing::debug!(
            "saved the user's clipboard: {:?}",
            saved
                .by_mime
                .iter()
                .map(|(m, b)| (m.as_str(), b.len()))
                .collect::<Vec<_>>()
        );
        (!saved.by_mime.is_empty()).then_some(saved)
    }

    /// Makes `content` the selection and waits, bounded, until mutter says we own it. `None`
    /// empties the clipboard (what it was before, when the user had nothing on it).
    pub async fn set(&self, content: Option<Content>) -> GuiResult<()> {
        let Some(content) = content else {
            // No `mime-types`: mutter unsets our selection, leaving the clipboard empty.
            let was_ours = {
                let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
                s.serving = None;
                s.ours
            };
            if was_ours {
                let opts: HashMap<&str, Value> = HashMap::new();
                self.rd_call("SetSelection", &(opts,)).await?;
            }
            return Ok(());
        };
        let mimes = content.mimes();
        self.state.lock().unwrap_or_else(|p| p.into_inner()).serving = Some(content);
        let mut opts: HashMap<&str, Value> = HashMap::new();
        opts.insert("mime-types", Value::from(mimes));
        self.rd_call("SetSelection", &(opts,)).await?;
        let deadline = Instant::now() + Duration::from_millis(500);
        while !self.state.lock().unwrap_or_else(|p| p.into_inner()).ours && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(())
    }

    async fn rd_call<B>(&self, method: &str, body: &B) -> GuiResult<()>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        dbus::call::<B, ()>(&self.conn, RD_NAME, self.rd.as_str(), RD_SESSION, method, body).await
    }

    /// Transfers served so far.
    pub fn served(&self) -> u64 {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).served
    }
}

impl Drop for Clipboard {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn write_transfer(
    conn: &zbus::Connection,
    rd: &OwnedObjectPath,
    serial: u32,
    bytes: Vec<u8>,
) -> GuiResult<()> {
    let fd: OwnedFd = dbus::call(
        conn,
        RD_NAME,
        rd.as_str(),
        RD_SESSION,
        "SelectionWrite",
        &(serial,),
    )
    .await?;
    let work = async move {
        let mut pipe = tokio::net::unix::pipe::Sender::from_owned_fd(std::os::fd::OwnedFd::from(fd))?;
        pipe.write_all(&bytes).await
    };
    match tokio::time::timeout(READ_WAIT, work).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(GuiError::backend("writing the clipboard transfer failed")),
    }
}

/// Everything the owner writes into `fd`, bounded in size and time (an application that never
/// writes costs one timeout).
async fn read_all(fd: OwnedFd, limit: usize) -> Option<Vec<u8>> {
    let work = async move {
        let pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(std::os::fd::OwnedFd::from(fd))?;
        let mut out = Vec::new();
        pipe.take(limit as u64 + 1).read_to_end(&mut out).await?;
        std::io::Result::Ok(out)
    };
    let out = tokio::time::timeout(READ_WAIT, work).await.ok()?.ok()?;
    (out.len() <= limit).then_some(out)
}
