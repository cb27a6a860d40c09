//! A window's own pixels on KDE Plasma through KWin's `org.kde.KWin.ScreenShot2` interface:
//! `CaptureWindow(uuid, options, pipe)` renders the window by itself (covered and off-screen
//! parts included) and writes the raw image into a pipe lsm hands over.
//!
//! KWin answers only processes it authorised: the executable (`/proc/<pid>/exe`) must be the
//! `Exec` of an installed `.desktop` file with `X-KDE-DBUS-Restricted-Interfaces=
//! org.kde.KWin.ScreenShot2` (found through KDE's application database, KSycoca). Whether lsm
//! is authorised is asked once at connect with a window id that names no window: KWin checks
//! the caller before it looks the window up, so the error says which.

use crate::wayland::dbus;
use lsm_core::{ErrorCode, GuiError, GuiResult, RgbaImage};
use std::collections::HashMap;
use std::io::Read;
use std::os::fd::AsFd;
use std::time::Duration;
use zbus::zvariant::{Fd, OwnedValue, Value};

const KWIN: &str = "org.kde.KWin";
const PATH: &str = "/org/kde/KWin/ScreenShot2";
const IFACE: &str = "org.kde.KWin.ScreenShot2";
/// The error KWin sends a caller it has not authorised.
const NOT_AUTHORIZED: &str = "org.kde.KWin.ScreenShot2.Error.NoAuthorized";
/// A window id that names no window, for the authorisation probe.
const NO_WINDOW: &str = "{00000000-0000-0000-0000-000000000000}";
/// Bound on reading the image KWin writes after its reply.
const READ_WAIT: Duration = Duration::from_secs(5);
/// Bound on an image's size (a 16k x 16k window), against a reply that makes no sense.
const MAX_BYTES: usize = 16384 * 16384 * 4;

/// How to authorise lsm, for the refusal message: the exact desktop entry for this binary.
pub fn grant_hint() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "/path/to/lsm".into());
    format!(
        "KWin lets a program capture windows when a .desktop file names it: write \
         ~/.local/share/applications/dev.lsm.lsm.desktop with the lines [Desktop Entry], Type=Application, \
         Name=lsm, NoDisplay=true, Exec={exe}, X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2, run \
         kbuildsycoca5 (Plasma 5) or kbuildsycoca6 (Plasma 6), then restart lsm"
    )
}

/// None when KWin will capture windows for lsm; else why not, with what to do.
pub async fn refusal(conn: &zbus::Connection) -> Option<String> {
    match capture(conn, NO_WINDOW).await {
        Ok(_) => None,
        Err(e) if e.message.contains(NOT_AUTHORIZED) || e.message.contains("NoAuthorized") => Some(format!(
            "KWin's ScreenShot2 interface refuses lsm (this binary is not authorised). {}",
            grant_hint()
        )),
        // Authorised: KWin looked the window up and found none.
        Err(e) if e.message.contains("InvalidWindow") || e.message.contains("Invalid") => None,
        Err(e) => Some(format!(
            "KWin's ScreenShot2 interface did not answer as expected: {}",
            e.message
        )),
    }
}

/// The window's pixels (its frame, server-side decorations included, as lsm's window bounds
/// are), in logical px.
pub async fn capture(conn: &zbus::Connection, uuid: &str) -> GuiResult<RgbaImage> {
    let (reader, writer) = std::io::pipe().map_err(|e| GuiError::backend(format!("pipe: {e}")))?;
    let mut options: HashMap<&str, Value> = HashMap::new();
    options.insert("include-decoration", Value::from(true));
    options.insert("include-cursor", Value::from(false));
    options.insert("native-resolution", Value::from(false));
    let reply: GuiResult<HashMap<String, OwnedValue>> = dbus::call(
        conn,
        KWIN,
        PATH,
        IFACE,
        "CaptureWindow",
        &(uuid, options, Fd::from(writer.as_fd())),
    )
    .await;
    // KWin holds its own copy: ours must go for the read to end when KWin closes its copy.
    drop(writer);
    let reply = reply?;
    let num = |k: &str| -> GuiResult<u32> {
        reply
            .get(k)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| GuiError::backend(format!("KWin's screenshot reply has no {k}: {reply:?}")))
    };
    let (width, height, stride, format) = (num("width")?, num("height")?, num("stride")?, num("format")?);
    let expected = stride as usize * height as usize;
    if expected > MAX_BYTES || (stride as usize) < width as usize * 4 {
        return Err(GuiError::backend(format!(
            "KWin's screenshot is {width}x{height} with stride {stride}: not a 32-bit image"
        )));
    }
    let read = tokio::task::spawn_blocking(move || {
        let mut data = Vec::with_capacity(expected);
        reader.take(expected as u64).read_to_end(&mut data).map(|_| data)
    });
    let data = tokio::time::timeout(READ_WAIT, read)
        .await
        .map_err(|_| GuiError::timeout("reading KWin's screenshot"))?
        .map_err(|e| GuiError::backend(format!("reading KWin's screenshot: {e}")))?
        .map_err(|e| GuiError::backend(format!("reading KWin's screenshot: {e}")))?;
    if data.len() < expected {
        return Err(GuiError::backend(format!(
            "KWin's screenshot ended after {} of {expected} bytes",
            data.len()
        )));
    }
    let rgba = to_rgba(&data, width, height, stride, format)?;
    RgbaImage::new(width, height, rgba)
}

/// Rows of a QImage (`format` is `QImage::Format`) as packed RGBA.
fn to_rgba(data: &[u8], width: u32, height: u32, stride: u32, format: u32) -> GuiResult<Vec<u8>> {
    // 4: RGB32, 5: ARGB32, 6: ARGB32_Premultiplied (0xAARRGGBB words: B, G, R, A in memory);
    // 16: RGBX8888, 17: RGBA8888, 18: RGBA8888_Premultiplied (R, G, B, A in memory).
    let (bgr, opaque, premultiplied) = match format {
        4 => (true, true, false),
        5 => (true, false, false),
        6 => (true, false, true),
        16 => (false, true, false),
        17 => (false, false, false),
        18 => (false, false, true),
        other => {
            return Err(GuiError::new(
                ErrorCode::BackendError,
                format!("KWin's screenshot has QImage format {other}, which lsm does not read"),
            ))
        }
    };
    let (w, h, stride) = (width as usize, height as usize, stride as usize);
    let mut out = Vec::with_capacity(w * h * 4);
    for row in data.chunks(stride).take(h) {
        for px in row[..w * 4].chunks_exact(4) {
            let (r, g, b) = if bgr {
                (px[2], px[1], px[0])
            } else {
                (px[0], px[1], px[2])
            };
            let a = if opaque { 255 } else { px[3] };
            let un = |c: u8| -> u8 {
                if premultiplied && a != 0 && a != 255 {
                    ((c as u32 * 255 + a as u32 / 2) / a as u32).min(255) as u8
                } else {
                    c
                }
            };
            out.extend_from_slice(&[un(r), un(g), un(b), a]);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argb32_words_become_rgba_and_row_padding_is_dropped() {
        // 2x2, stride 12 (4 bytes of padding per row); B, G, R, A in memory.
        let data = [
            0x30, 0x20, 0x10, 0xff, 0x01, 0x02, 0x03, 0xff, 9, 9, 9, 9, //
            0x00, 0x00, 0xff, 0xff, 0xff, 0x00, 0x00, 0x80, 9, 9, 9, 9,
        ];
        let out = to_rgba(&data, 2, 2, 12, 5).expect("ARGB32");
        assert_eq!(
            out,
            vec![0x10, 0x20, 0x30, 0xff, 0x03, 0x02, 0x01, 0xff, 0xff, 0, 0, 0xff, 0, 0, 0xff, 0x80]
        );
    }

    #[test]
    fn premultiplied_and_opaque_formats_and_an_unknown_one() {
        let half = [0x00, 0x00, 0x40, 0x80];
        assert_eq!(
            to_rgba(&half, 1, 1, 4, 6).expect("premultiplied"),
            vec![0x80, 0, 0, 0x80]
        );
        assert_eq!(
            to_rgba(&[1, 2, 3, 0], 1, 1, 4, 4).expect("RGB32"),
            vec![3, 2, 1, 255]
        );
        assert_eq!(
            to_rgba(&[1, 2, 3, 4], 1, 1, 4, 17).expect("RGBA8888"),
            vec![1, 2, 3, 4]
        );
        assert!(to_rgba(&[0; 4], 1, 1, 4, 3).is_err());
    }
}
