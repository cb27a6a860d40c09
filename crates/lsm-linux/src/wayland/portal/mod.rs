//! The XDG desktop portal's RemoteDesktop interface (`org.freedesktop.portal.RemoteDesktop`):
//! keyboard and pointer input for a desktop whose compositor has no API of its own for it (KDE
//! Plasma), or whose own API lsm cannot reach (GNOME without mutter's remote-desktop API). A
//! portal call answers with a Request object whose `Response` signal carries the result; we
//! subscribe to that object before calling, so the answer cannot be missed.
//!
//! With a monitor stream in the session (`SelectSources`, GNOME), pointer motion is absolute on
//! that stream and the stream carries the screen's pixels. The user's grant is remembered where
//! the portal allows it: RemoteDesktop version 2 (xdg-desktop-portal 1.17) returns a restore
//! token that lsm keeps in its state directory and hands back next time, so the dialog is shown
//! once; version 1 has none, so lsm keeps one session for its whole run (one dialog per start).
//!
//! Without a screen-cast stream in the session, the portal moves the pointer only relatively;
//! `motion` therefore first pushes the pointer into the top-left corner of the layout (where
//! the compositor clamps it) and then moves it by the point's distance from that corner. The
//! corner is where the compositor says the pointer went (kwin 5.27 clamps it to (1, 1), not
//! (0, 0)); fake-input motion is not accelerated, so the pointer lands on the exact pixel
//! (KWin moves it by whole pixels: callers aim at integer points).
//!
//! `screenshot.rs`: the Screenshot portal, GNOME's last way to pixels.

pub mod screenshot;

use super::input::RemoteInput;
use async_trait::async_trait;
use lsm_core::{GuiError, GuiResult};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};

const PORTAL: &str = "org.freedesktop.portal.Desktop";
const PORTAL_PATH: &str = "/org/freedesktop/portal/desktop";
const REMOTE_DESKTOP: &str = "org.freedesktop.portal.RemoteDesktop";
const SCREEN_CAST: &str = "org.freedesktop.portal.ScreenCast";
const REQUEST: &str = "org.freedesktop.portal.Request";
const SESSION: &str = "org.freedesktop.portal.Session";
/// Bound on a call into the portal, and on a request's answer when no dialog is expected.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Device types: keyboard | pointer.
const DEVICES_KEYBOARD_POINTER: u32 = 1 | 2;
/// ScreenCast source type: a monitor.
const SOURCE_MONITOR: u32 = 1;
/// `persist_mode` 2: the grant lasts until the user revokes it.
const PERSIST_UNTIL_REVOKED: u32 = 2;
/// The first RemoteDesktop version with restore tokens.
const RESTORE_TOKEN_VERSION: u32 = 2;
/// Where the RemoteDesktop grant's restore token is kept, in lsm's state directory.
const TOKEN_FILE: &str = "portal-remote-desktop.token";
/// How far the pointer is pushed to reach the layout's top-left corner.
const CORNER_PUSH: f64 = -100_000.0;

/// How often the pointer's position is read again while a push has not arrived.
const CORNER_READS: u32 = 40;

static TOKENS: AtomicU32 = AtomicU32::new(0);

/// Whether a pointer position is where a push into the top-left corner leaves it.
fn near_corner((x, y): (f64, f64)) -> bool {
    (-2.0..=2.0).contains(&x) && (-2.0..=2.0).contains(&y)
}

fn token() -> String {
    format!(
        "lsm{}_{}",
        std::process::id(),
        TOKENS.fetch_add(1, Ordering::Relaxed)
    )
}

/// The Request object path the portal will use for `token` (from the spec: the sender's unique
/// name without the leading ':' and with '.' as '_').
pub fn request_path(unique_name: &str, token: &str) -> String {
    let sender = unique_name.trim_start_matches(':').replace('.', "_");
    format!("{PORTAL_PATH}/request/{sender}/{token}")
}

/// What a Request's `Response` code means.
pub fn response_error(method: &str, code: u32) -> Option<GuiError> {
    match code {
        0 => None,
        1 => Some(GuiError::unavailable(format!(
            "the desktop portal's {method} was cancelled (the user declined the remote-control request)"
        ))),
        _ => Some(GuiError::unavailable(format!(
            "the desktop portal's {method} failed (response {code})"
        ))),
    }
}

fn backend(what: &str, e: impl std::fmt::Display) -> GuiError {
    GuiError::backend(format!("portal {what}: {e}"))
}

/// Calls a portal method that answers through a Request and waits (bounded) for its results.
async fn request<B>(
    conn: &zbus::Connection,
    iface: &str,
    method: &str,
    token: &str,
    body: &B,
    wait: Duration,
) -> GuiResult<HashMap<String, OwnedValue>>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    let unique = conn
        .unique_name()
        .ok_or_else(|| GuiError::backend("no unique name on the session bus"))?
        .to_string();
    let path = request_path(&unique, token);
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .interface(REQUEST)
        .and_then(|b| b.member("Response"))
        .and_then(|b| b.path(path.as_str()))
        .map_err(|e| backend("match rule", e))?
        .build();
    let mut answers = tokio::time::timeout(
        CALL_TIMEOUT,
        zbus::MessageStream::for_match_rule(rule, conn, Some(4)),
    )
    .await
    .map_err(|_| GuiError::timeout("subscribing to the portal's Response"))?
    .map_err(|e| backend("subscribe", e))?;
    let fut = conn.call_method(Some(PORTAL), PORTAL_PATH, Some(iface), method, body);
    tokio::time::timeout(CALL_TIMEOUT, fut)
        .await
        .map_err(|_| GuiError::timeout(format!("{iface}.{method}")))?
        .map_err(|e| GuiError::unavailable(format!("the desktop portal's {method} failed: {e}")))?;
    let answer = tokio::time::timeout(wait, async {
        use futures_util::StreamExt;
        while let Some(msg) = answers.next().await {
            if let Ok(r) = msg.and_then(|m| m.body().deserialize::<(u32, HashMap<String, OwnedValue>)>()) {
                return Some(r);
            }
        }
        None
    })
    .await
    .map_err(|_| {
        GuiError::timeout(format!(
            "the desktop portal's {method} did not answer within {} s (a dialog may be waiting for the user)",
            wait.as_secs()
        ))
    })?
    .ok_or_else(|| GuiError::backend(format!("the portal's answer to {method} was lost")))?;
    match response_error(method, answer.0) {
        Some(e) => Err(e),
        None => Ok(answer.1),
    }
}

fn options(token: &str) -> HashMap<&'static str, Value<'static>> {
    let mut o = HashMap::new();
    o.insert("handle_token", Value::from(token.to_string()));
    o
}

/// An interface's `version` property (1 when it cannot be read: the oldest behaviour).
async fn portal_version(conn: &zbus::Connection, iface: &str) -> u32 {
    let body = (iface, "version");
    let fut = conn.call_method(
        Some(PORTAL),
        PORTAL_PATH,
        Some("org.freedesktop.DBus.Properties"),
        "Get",
        &body,
    );
    match tokio::time::timeout(CALL_TIMEOUT, fut).await {
        Ok(Ok(reply)) => reply
            .body()
            .deserialize::<OwnedValue>()
            .ok()
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(1),
        _ => 1,
    }
}

/// A monitor stream of the session: its PipeWire node and where the monitor lies in the
/// layout (logical px).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Screen {
    pub node: u32,
    pub position: (i32, i32),
    pub size: (i32, i32),
}

/// The streams a `Start` answered with (`a(ua{sv})`): the first one that says where it is.
pub fn first_screen(started: &HashMap<String, OwnedValue>) -> Option<Screen> {
    type Streams = Vec<(u32, HashMap<String, OwnedValue>)>;
    let streams: Streams = started
        .get("streams")
        .and_then(|v| Streams::try_from(v.clone()).ok())?;
    streams.into_iter().find_map(|(node, props)| {
        let pair = |k: &str| props.get(k).and_then(|v| <(i32, i32)>::try_from(v.clone()).ok());
        Some(Screen {
            node,
            position: pair("position").unwrap_or((0, 0)),
            size: pair("size")?,
        })
    })
}

/// The restore-token file (None: no state directory).
fn token_path() -> Option<std::path::PathBuf> {
    lsm_core::state_dir::state_dir().ok().map(|d| d.join(TOKEN_FILE))
}

fn saved_token() -> Option<String> {
    let t = std::fs::read_to_string(token_path()?).ok()?;
    let t = t.trim();
    (!t.is_empty() && t.len() < 256).then(|| t.to_string())
}

/// Keeps the portal's new restore token (single use: each Start answers with the next one).
fn save_token(token: &str) {
    let Some(path) = token_path() else { return };
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, token)?;
        std::fs::rename(&tmp, &path)
    };
    if let Err(e) = write() {
        tracing::warn!(
            "could not keep the portal's restore token in {}: {e}",
            path.display()
        );
    }
}

/// SelectDevices' options besides the handle token: keyboard and pointer, and where the
/// portal remembers grants (`version` >= 2), persistence with the saved token if any.
pub fn device_options(version: u32, saved: Option<&str>) -> Vec<(&'static str, Value<'static>)> {
    let mut o = vec![("types", Value::U32(DEVICES_KEYBOARD_POINTER))];
    if version >= RESTORE_TOKEN_VERSION {
        o.push(("persist_mode", Value::U32(PERSIST_UNTIL_REVOKED)));
        if let Some(t) = saved {
            o.push(("restore_token", Value::from(t.to_string())));
        }
    }
    o
}

/// A started RemoteDesktop session with keyboard and pointer.
pub struct PortalSession {
    conn: zbus::Connection,
    session: OwnedObjectPath,
    /// The monitor stream, when the session was started with one (absolute pointer motion).
    pub screen: Option<Screen>,
    /// Where our last motion put the pointer (layout logical px), while a sequence runs.
    pointer: Mutex<Option<(f64, f64)>>,
    /// Where a push into the top-left corner leaves the pointer.
    corner: Mutex<(f64, f64)>,
}

impl PortalSession {
    /// CreateSession, SelectDevices (keyboard and pointer), with `screen` SelectSources (one
    /// monitor), Start. `start_wait` bounds Start, which shows a dialog on desktops that ask
    /// the user.
    pub async fn start(conn: &zbus::Connection, start_wait: Duration, screen: bool) -> GuiResult<Self> {
        let version = portal_version(conn, REMOTE_DESKTOP).await;
        let t = token();
        let mut o = options(&t);
        o.insert("session_handle_token", Value::from(token()));
        let created = request(conn, REMOTE_DESKTOP, "CreateSession", &t, &(o,), CALL_TIMEOUT).await?;
        let handle: String = created
            .get("session_handle")
            .and_then(|v| String::try_from(v.clone()).ok())
            .ok_or_else(|| GuiError::backend("the portal's CreateSession gave no session_handle"))?;
        let session = OwnedObjectPath::try_from(handle).map_err(|e| backend("session handle", e))?;
        let t = token();
        let mut o = options(&t);
        let saved = saved_token();
        o.extend(device_options(version, saved.as_deref()));
        request(
            conn,
            REMOTE_DESKTOP,
            "SelectDevices",
            &t,
            &(&session, o),
            CALL_TIMEOUT,
        )
        .await?;
        if screen {
            let t = token();
            let mut o = options(&t);
            o.insert("types", Value::U32(SOURCE_MONITOR));
            o.insert("multiple", Value::Bool(false));
            request(
                conn,
                SCREEN_CAST,
                "SelectSources",
                &t,
                &(&session, o),
                CALL_TIMEOUT,
            )
            .await?;
        }
        let t = token();
        let started = request(
            conn,
            REMOTE_DESKTOP,
            "Start",
            &t,
            &(&session, "", options(&t)),
            start_wait,
        )
        .await?;
        let devices = started
            .get("devices")
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(0);
        if devices & DEVICES_KEYBOARD_POINTER != DEVICES_KEYBOARD_POINTER {
            return Err(GuiError::unavailable(format!(
                "the desktop portal granted devices {devices} (keyboard and pointer are needed)"
            )));
        }
        if let Some(t) = started
            .get("restore_token")
            .and_then(|v| String::try_from(v.clone()).ok())
        {
            save_token(&t);
        }
        let screen = if screen {
            Some(first_screen(&started).ok_or_else(|| {
                GuiError::unavailable(
                    "the desktop portal shared no screen (a monitor is needed for pixels and pointing)",
                )
            })?)
        } else {
            None
        };
        Ok(Self {
            conn: conn.clone(),
            session,
            screen,
            pointer: Mutex::new(None),
            corner: Mutex::new((0.0, 0.0)),
        })
    }

    /// A PipeWire connection that can read this session's streams (and only those).
    pub async fn open_pipewire_remote(&self) -> GuiResult<std::os::fd::OwnedFd> {
        let body = (&self.session, Self::no_options());
        let fut = self.conn.call_method(
            Some(PORTAL),
            PORTAL_PATH,
            Some(SCREEN_CAST),
            "OpenPipeWireRemote",
            &body,
        );
        let reply = tokio::time::timeout(CALL_TIMEOUT, fut)
            .await
            .map_err(|_| GuiError::timeout(format!("{SCREEN_CAST}.OpenPipeWireRemote")))?
            .map_err(|e| GuiError::backend(format!("{SCREEN_CAST}.OpenPipeWireRemote: {e}")))?;
        let fd: zbus::zvariant::OwnedFd = reply
            .body()
            .deserialize()
            .map_err(|e| backend("OpenPipeWireRemote answer", e))?;
        Ok(fd.into())
    }

    async fn notify<B>(&self, method: &str, body: &B) -> GuiResult<()>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        let fut = self
            .conn
            .call_method(Some(PORTAL), PORTAL_PATH, Some(REMOTE_DESKTOP), method, body);
        tokio::time::timeout(CALL_TIMEOUT, fut)
            .await
            .map_err(|_| GuiError::timeout(format!("{REMOTE_DESKTOP}.{method}")))?
            .map_err(|e| GuiError::backend(format!("{REMOTE_DESKTOP}.{method}: {e}")))?;
        Ok(())
    }

    fn no_options() -> HashMap<&'static str, Value<'static>> {
        HashMap::new()
    }

    /// Pushes the pointer into the top-left corner; `read` then says where it is, which is
    /// remembered as the corner and as where the pointer is. Where a push ends is not always
    /// the same (kwin 5.27: (1, 1), but (0, 0) right after a click), so each input sequence
    /// measures it again.
    pub async fn calibrate<F, Fut>(&self, read: F) -> GuiResult<(f64, f64)>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = GuiResult<(f64, f64)>>,
    {
        self.forget_pointer();
        self.notify(
            "NotifyPointerMotion",
            &(&self.session, Self::no_options(), CORNER_PUSH, CORNER_PUSH),
        )
        .await?;
        // The push reaches the compositor after the portal's answer: read until it has.
        let mut corner = read().await?;
        let mut tries = 0;
        while !near_corner(corner) {
            tries += 1;
            if tries > CORNER_READS {
                return Err(GuiError::backend(format!(
                    "the pointer did not reach the screen's corner (it is at {corner:?})"
                )));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            corner = read().await?;
        }
        *self.corner.lock().unwrap_or_else(|p| p.into_inner()) = corner;
        *self.pointer.lock().unwrap_or_else(|p| p.into_inner()) = Some(corner);
        Ok(corner)
    }

    /// The next motion starts from the corner again (the user's own mouse may have moved).
    pub fn forget_pointer(&self) {
        *self.pointer.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Ends the session.
    pub async fn close(&self) {
        let fut = self
            .conn
            .call_method(Some(PORTAL), self.session.as_str(), Some(SESSION), "Close", &());
        let _ = tokio::time::timeout(CALL_TIMEOUT, fut).await;
    }
}

/// The relative moves that take the pointer from `from` (None: unknown, so through the
/// corner, which a push leaves at `corner`) to `to`.
pub fn moves(from: Option<(f64, f64)>, to: (f64, f64), corner: (f64, f64)) -> Vec<(f64, f64)> {
    match from {
        Some((x, y)) => vec![(to.0 - x, to.1 - y)],
        None => vec![(CORNER_PUSH, CORNER_PUSH), (to.0 - corner.0, to.1 - corner.1)],
    }
}

#[async_trait]
impl RemoteInput for PortalSession {
    /// Moves the pointer to (x, y) in the layout (logical px from its top-left corner).
    async fn motion(&self, x: f64, y: f64) -> GuiResult<()> {
        if let Some(screen) = self.screen {
            let (sx, sy) = (x - screen.position.0 as f64, y - screen.position.1 as f64);
            return self
                .notify(
                    "NotifyPointerMotionAbsolute",
                    &(&self.session, Self::no_options(), screen.node, sx, sy),
                )
                .await;
        }
        let from = *self.pointer.lock().unwrap_or_else(|p| p.into_inner());
        let corner = *self.corner.lock().unwrap_or_else(|p| p.into_inner());
        for (dx, dy) in moves(from, (x, y), corner) {
            if let Err(e) = self
                .notify(
                    "NotifyPointerMotion",
                    &(&self.session, Self::no_options(), dx, dy),
                )
                .await
            {
                self.forget_pointer();
                return Err(e);
            }
        }
        *self.pointer.lock().unwrap_or_else(|p| p.into_inner()) = Some((x, y));
        Ok(())
    }

    async fn button(&self, code: i32, pressed: bool) -> GuiResult<()> {
        self.notify(
            "NotifyPointerButton",
            &(&self.session, Self::no_options(), code, u32::from(pressed)),
        )
        .await
    }

    async fn axis_discrete(&self, axis: u32, steps: i32) -> GuiResult<()> {
        self.notify(
            "NotifyPointerAxisDiscrete",
            &(&self.session, Self::no_options(), axis, steps),
        )
        .await
    }

    /// Relative motion: every sequence starts from the corner, so the pointer is never already
    /// there. Absolute motion: as mutter's, it may be.
    fn moves_away_first(&self) -> bool {
        self.screen.is_some()
    }

    async fn keysym(&self, keysym: u32, pressed: bool) -> GuiResult<()> {
        self.notify(
            "NotifyKeyboardKeysym",
            &(
                &self.session,
                Self::no_options(),
                keysym as i32,
                u32::from(pressed),
            ),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_paths_follow_the_spec() {
        assert_eq!(
            request_path(":1.42", "lsm7_0"),
            "/org/freedesktop/portal/desktop/request/1_42/lsm7_0"
        );
    }

    #[test]
    fn a_first_motion_goes_through_the_corner_then_moves_are_relative() {
        assert_eq!(
            moves(None, (10.0, 20.0), (1.0, 1.0)),
            vec![(CORNER_PUSH, CORNER_PUSH), (9.0, 19.0)]
        );
        assert_eq!(
            moves(Some((10.0, 20.0)), (15.0, 5.0), (1.0, 1.0)),
            vec![(5.0, -15.0)]
        );
    }

    #[test]
    fn grants_are_remembered_only_where_the_portal_can() {
        let keys = |o: Vec<(&'static str, Value<'static>)>| o.into_iter().map(|(k, _)| k).collect::<Vec<_>>();
        assert_eq!(keys(device_options(1, Some("t"))), vec!["types"]);
        assert_eq!(keys(device_options(2, None)), vec!["types", "persist_mode"]);
        assert_eq!(
            keys(device_options(2, Some("t"))),
            vec!["types", "persist_mode", "restore_token"]
        );
    }

    #[test]
    fn the_shared_monitor_is_read_from_starts_answer() {
        let mut props: HashMap<String, OwnedValue> = HashMap::new();
        props.insert(
            "position".into(),
            OwnedValue::try_from(Value::from((0i32, 0i32))).unwrap(),
        );
        props.insert(
            "size".into(),
            OwnedValue::try_from(Value::from((1280i32, 800i32))).unwrap(),
        );
        let streams = vec![(41u32, props)];
        let mut started: HashMap<String, OwnedValue> = HashMap::new();
        started.insert(
            "streams".into(),
            OwnedValue::try_from(Value::from(streams)).unwrap(),
        );
        assert_eq!(
            first_screen(&started),
            Some(Screen {
                node: 41,
                position: (0, 0),
                size: (1280, 800)
            })
        );
        assert_eq!(first_screen(&HashMap::new()), None);
    }

    #[test]
    fn a_declined_request_is_unavailable_with_why() {
        assert!(response_error("Start", 0).is_none());
        let e = response_error("Start", 1).unwrap();
        assert_eq!(e.code, lsm_core::ErrorCode::GuiUnavailable);
        assert!(e.message.contains("declined"));
    }
}
