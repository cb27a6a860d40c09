//! The XDG desktop portal's RemoteDesktop interface (`org.freedesktop.portal.RemoteDesktop`):
//! keyboard and pointer input for a desktop whose compositor has no API of its own for it (KDE
//! Plasma), or whose own API lsm cannot reach (GNOME without mutter's remote-desktop API). The
//! protocol (handle tokens, Request objects and their `Response`, sessions) is the `ashpd`
//! crate's, on lsm's own session-bus connection; here every call is bounded ([`within`]) and its
//! failure said in lsm's words ([`portal_error`]).
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
use ashpd::desktop::remote_desktop::{
    Axis, DeviceType, KeyState, NotifyKeyboardKeysymOptions, NotifyPointerAxisDiscreteOptions,
    NotifyPointerButtonOptions, NotifyPointerMotionAbsoluteOptions, NotifyPointerMotionOptions,
    RemoteDesktop, SelectDevicesOptions, StartOptions,
};
use ashpd::desktop::screencast::{OpenPipeWireRemoteOptions, Screencast, SelectSourcesOptions, SourceType};
use ashpd::desktop::{CreateSessionOptions, PersistMode, ResponseError, Session};
use async_trait::async_trait;
use lsm_core::{GuiError, GuiResult};
use std::sync::Mutex;
use std::time::Duration;

/// Bound on a call into the portal, and on a request's answer when no dialog is expected.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// The first RemoteDesktop version with restore tokens.
const RESTORE_TOKEN_VERSION: u32 = 2;
/// Where the RemoteDesktop grant's restore token is kept, in lsm's state directory.
const TOKEN_FILE: &str = "portal-remote-desktop.token";
/// How far the pointer is pushed to reach the layout's top-left corner.
const CORNER_PUSH: f64 = -100_000.0;

/// How often the pointer's position is read again while a push has not arrived.
const CORNER_READS: u32 = 40;

/// Whether a pointer position is where a push into the top-left corner leaves it.
fn near_corner((x, y): (f64, f64)) -> bool {
    (-2.0..=2.0).contains(&x) && (-2.0..=2.0).contains(&y)
}

/// What a failed portal call means to the caller: a declined or failed request is
/// `GUI_UNAVAILABLE` with why; anything else the portal or the bus said is a backend error.
pub fn portal_error(method: &str, e: ashpd::Error) -> GuiError {
    match e {
        ashpd::Error::Response(ResponseError::Cancelled) => GuiError::unavailable(format!(
            "the desktop portal's {method} was cancelled (the user declined the remote-control request)"
        )),
        ashpd::Error::Response(ResponseError::Other) => {
            GuiError::unavailable(format!("the desktop portal's {method} failed"))
        }
        ashpd::Error::PortalNotFound(iface) => {
            GuiError::unavailable(format!("the desktop portal has no {iface} (needed for {method})"))
        }
        e => GuiError::unavailable(format!("the desktop portal's {method} failed: {e}")),
    }
}

/// Runs one portal call or request within `wait`: every call into the portal is bounded.
async fn within<T>(
    method: &str,
    wait: Duration,
    call: impl std::future::Future<Output = Result<T, ashpd::Error>>,
) -> GuiResult<T> {
    match tokio::time::timeout(wait, call).await {
        Ok(r) => r.map_err(|e| portal_error(method, e)),
        Err(_) => Err(GuiError::timeout(format!(
            "the desktop portal's {method} did not answer within {} s (a dialog may be waiting for the user)",
            wait.as_secs()
        ))),
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

/// A stream as `Start` answers it: its PipeWire node, and where and how large it is when said.
pub type StreamPlace = (u32, Option<(i32, i32)>, Option<(i32, i32)>);

/// The first stream a `Start` answered with that says how large it is (a stream without a
/// position is at the layout's origin).
pub fn first_screen(streams: &[StreamPlace]) -> Option<Screen> {
    streams.iter().find_map(|&(node, position, size)| {
        Some(Screen {
            node,
            position: position.unwrap_or((0, 0)),
            size: size?,
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

/// SelectDevices' options: keyboard and pointer, and where the portal remembers grants
/// (`version` >= 2), persistence with the saved token if any.
pub fn device_options(version: u32, saved: Option<&str>) -> SelectDevicesOptions {
    let o = SelectDevicesOptions::default().set_devices(DeviceType::Keyboard | DeviceType::Pointer);
    if version >= RESTORE_TOKEN_VERSION {
        o.set_persist_mode(PersistMode::ExplicitlyRevoked)
            .set_restore_token(saved)
    } else {
        o
    }
}

/// A started RemoteDesktop session with keyboard and pointer.
pub struct PortalSession {
    desktop: RemoteDesktop,
    session: Session<RemoteDesktop>,
    /// The ScreenCast half, when the session was started with a monitor stream.
    cast: Option<Screencast>,
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
        // On a task of its own: the portal client asserts what the portal answers (a session
        // handle other than the one asked for), and such a failure is an error, never a crash.
        let conn = conn.clone();
        tokio::spawn(async move { Self::start_on(&conn, start_wait, screen).await })
            .await
            .map_err(|e| GuiError::backend(format!("the desktop portal's session could not start: {e}")))?
    }

    async fn start_on(conn: &zbus::Connection, start_wait: Duration, screen: bool) -> GuiResult<Self> {
        let desktop = within(
            "RemoteDesktop",
            CALL_TIMEOUT,
            RemoteDesktop::with_connection(conn.clone()),
        )
        .await?;
        let session = within(
            "CreateSession",
            CALL_TIMEOUT,
            desktop.create_session(CreateSessionOptions::default()),
        )
        .await?;
        let saved = saved_token();
        let selected = within(
            "SelectDevices",
            CALL_TIMEOUT,
            desktop.select_devices(&session, device_options(desktop.version(), saved.as_deref())),
        )
        .await?;
        selected
            .response()
            .map_err(|e| portal_error("SelectDevices", e))?;
        let cast = if screen {
            let cast = within(
                "ScreenCast",
                CALL_TIMEOUT,
                Screencast::with_connection(conn.clone()),
            )
            .await?;
            let options = SelectSourcesOptions::default()
                .set_sources(ashpd::enumflags2::BitFlags::from(SourceType::Monitor))
                .set_multiple(false);
            let selected = within(
                "SelectSources",
                CALL_TIMEOUT,
                cast.select_sources(&session, options),
            )
            .await?;
            selected
                .response()
                .map_err(|e| portal_error("SelectSources", e))?;
            Some(cast)
        } else {
            None
        };
        let started = within(
            "Start",
            start_wait,
            desktop.start(&session, None, StartOptions::default()),
        )
        .await?;
        let started = started.response().map_err(|e| portal_error("Start", e))?;
        let devices = started.devices();
        if !devices.contains(DeviceType::Keyboard | DeviceType::Pointer) {
            return Err(GuiError::unavailable(format!(
                "the desktop portal granted devices {devices:?} (keyboard and pointer are needed)"
            )));
        }
        if let Some(t) = started.restore_token() {
            save_token(t);
        }
        let screen = if screen {
            let streams: Vec<StreamPlace> = started
                .streams()
                .iter()
                .map(|s| (s.pipe_wire_node_id(), s.position(), s.size()))
                .collect();
            Some(first_screen(&streams).ok_or_else(|| {
                GuiError::unavailable(
                    "the desktop portal shared no screen (a monitor is needed for pixels and pointing)",
                )
            })?)
        } else {
            None
        };
        Ok(Self {
            desktop,
            session,
            cast,
            screen,
            pointer: Mutex::new(None),
            corner: Mutex::new((0.0, 0.0)),
        })
    }

    /// A PipeWire connection that can read this session's streams (and only those).
    pub async fn open_pipewire_remote(&self) -> GuiResult<std::os::fd::OwnedFd> {
        let cast = self
            .cast
            .as_ref()
            .ok_or_else(|| GuiError::backend("the portal session shares no screen"))?;
        within(
            "OpenPipeWireRemote",
            CALL_TIMEOUT,
            cast.open_pipe_wire_remote(&self.session, OpenPipeWireRemoteOptions::default()),
        )
        .await
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
        self.relative(CORNER_PUSH, CORNER_PUSH).await?;
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

    async fn relative(&self, dx: f64, dy: f64) -> GuiResult<()> {
        let motion =
            self.desktop
                .notify_pointer_motion(&self.session, dx, dy, NotifyPointerMotionOptions::default());
        within("NotifyPointerMotion", CALL_TIMEOUT, motion).await
    }

    /// The next motion starts from the corner again (the user's own mouse may have moved).
    pub fn forget_pointer(&self) {
        *self.pointer.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Ends the session.
    pub async fn close(&self) {
        let _ = within("Close", CALL_TIMEOUT, self.session.close()).await;
    }
}

fn key_state(pressed: bool) -> KeyState {
    if pressed {
        KeyState::Pressed
    } else {
        KeyState::Released
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
            let motion = self.desktop.notify_pointer_motion_absolute(
                &self.session,
                screen.node,
                sx,
                sy,
                NotifyPointerMotionAbsoluteOptions::default(),
            );
            return within("NotifyPointerMotionAbsolute", CALL_TIMEOUT, motion).await;
        }
        let from = *self.pointer.lock().unwrap_or_else(|p| p.into_inner());
        let corner = *self.corner.lock().unwrap_or_else(|p| p.into_inner());
        for (dx, dy) in moves(from, (x, y), corner) {
            if let Err(e) = self.relative(dx, dy).await {
                self.forget_pointer();
                return Err(e);
            }
        }
        *self.pointer.lock().unwrap_or_else(|p| p.into_inner()) = Some((x, y));
        Ok(())
    }

    async fn button(&self, code: i32, pressed: bool) -> GuiResult<()> {
        let button = self.desktop.notify_pointer_button(
            &self.session,
            code,
            key_state(pressed),
            NotifyPointerButtonOptions::default(),
        );
        within("NotifyPointerButton", CALL_TIMEOUT, button).await
    }

    async fn axis_discrete(&self, axis: u32, steps: i32) -> GuiResult<()> {
        let axis = if axis == 1 {
            Axis::Horizontal
        } else {
            Axis::Vertical
        };
        let turn = self.desktop.notify_pointer_axis_discrete(
            &self.session,
            axis,
            steps,
            NotifyPointerAxisDiscreteOptions::default(),
        );
        within("NotifyPointerAxisDiscrete", CALL_TIMEOUT, turn).await
    }

    /// Relative motion: every sequence starts from the corner, so the pointer is never already
    /// there. Absolute motion: as mutter's, it may be.
    fn moves_away_first(&self) -> bool {
        self.screen.is_some()
    }

    async fn keysym(&self, keysym: u32, pressed: bool) -> GuiResult<()> {
        let key = self.desktop.notify_keyboard_keysym(
            &self.session,
            keysym as i32,
            key_state(pressed),
            NotifyKeyboardKeysymOptions::default(),
        );
        within("NotifyKeyboardKeysym", CALL_TIMEOUT, key).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let keys = |o: SelectDevicesOptions| {
            let v = zbus::zvariant::to_bytes(
                zbus::zvariant::serialized::Context::new_dbus(zbus::zvariant::LE, 0),
                &o,
            )
            .expect("options serialize");
            let (map, _): (std::collections::HashMap<String, zbus::zvariant::OwnedValue>, _) =
                v.deserialize().expect("options read back");
            let mut k: Vec<String> = map.into_keys().filter(|k| k != "handle_token").collect();
            k.sort();
            k
        };
        assert_eq!(keys(device_options(1, Some("t"))), vec!["types"]);
        assert_eq!(keys(device_options(2, None)), vec!["persist_mode", "types"]);
        assert_eq!(
            keys(device_options(2, Some("t"))),
            vec!["persist_mode", "restore_token", "types"]
        );
    }

    #[test]
    fn the_shared_monitor_is_the_first_stream_with_a_size() {
        assert_eq!(
            first_screen(&[(40, None, None), (41, Some((0, 0)), Some((1280, 800)))]),
            Some(Screen {
                node: 41,
                position: (0, 0),
                size: (1280, 800)
            })
        );
        assert_eq!(
            first_screen(&[(7, None, Some((640, 480)))]).map(|s| s.position),
            Some((0, 0))
        );
        assert_eq!(first_screen(&[]), None);
    }

    #[test]
    fn a_declined_request_is_unavailable_with_why() {
        let e = portal_error("Start", ashpd::Error::Response(ResponseError::Cancelled));
        assert_eq!(e.code, lsm_core::ErrorCode::GuiUnavailable);
        assert!(e.message.contains("declined"), "{}", e.message);
        let e = portal_error("Start", ashpd::Error::Response(ResponseError::Other));
        assert_eq!(e.code, lsm_core::ErrorCode::GuiUnavailable);
        assert!(e.message.contains("Start failed"), "{}", e.message);
    }
}
