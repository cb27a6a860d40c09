//! The selected window's pixels through `screencapture -x -o -l <window number>`, the fallback
//! the original product uses where ScreenCaptureKit is not available (before macOS 14, or when
//! it fails): the command line, a bounded run (a stuck capture costs its timeout, never a hang)
//! and the PNG it writes read back as RGBA. Platform-free apart from the tool itself, so the
//! Linux tests run it with a stand-in program.

use lsm_core::{ErrorCode, GuiError, GuiResult, RgbaImage};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// The macOS tool.
pub const SCREENCAPTURE: &str = "/usr/sbin/screencapture";
/// How long one capture may take.
pub const CAPTURE_TIMEOUT: Duration = Duration::from_secs(5);

/// Which path took the picture, said in the observation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapturePath {
    /// ScreenCaptureKit's screenshot of the window alone (macOS 14+).
    ScreenCaptureKit,
    /// The `screencapture` tool.
    ScreenCaptureTool,
}

impl CapturePath {
    pub fn name(self) -> &'static str {
        match self {
            Self::ScreenCaptureKit => "screencapturekit",
            Self::ScreenCaptureTool => "screencapture",
        }
    }
}

/// The first macOS with ScreenCaptureKit's screenshot API (`SCScreenshotManager`).
pub const SCK_SCREENSHOT_SINCE: u32 = 14;

/// The major version in a `sw_vers -productVersion` / `kern.osproductversion` string ("14.4.1").
pub fn macos_major(product_version: &str) -> Option<u32> {
    product_version.trim().split('.').next()?.parse().ok()
}

/// The capture paths to try, in order, and why ScreenCaptureKit is not among them when it is not.
pub fn capture_paths(major: Option<u32>) -> (Vec<CapturePath>, Option<String>) {
    match major {
        Some(m) if m >= SCK_SCREENSHOT_SINCE => {
            (vec![CapturePath::ScreenCaptureKit, CapturePath::ScreenCaptureTool], None)
        }
        Some(m) => (
            vec![CapturePath::ScreenCaptureTool],
            Some(format!(
                "macOS {m} has no ScreenCaptureKit screenshots (macOS {SCK_SCREENSHOT_SINCE}+): captured with screencapture"
            )),
        ),
        None => (
            vec![CapturePath::ScreenCaptureKit, CapturePath::ScreenCaptureTool],
            None,
        ),
    }
}

/// The arguments for one window: no sound (`-x`), no shadow (`-o`, so the picture is the window's
/// frame and nothing around it), that window only (`-l`), PNG, to `out`.
pub fn screencapture_args(window_number: u32, out: &Path) -> Vec<String> {
    vec![
        "-x".into(),
        "-o".into(),
        "-l".into(),
        window_number.to_string(),
        "-t".into(),
        "png".into(),
        out.to_string_lossy().into_owned(),
    ]
}

/// Runs the capture tool, bounded by `timeout`, and reads the picture it wrote to `out`.
pub async fn run_capture(
    program: &str,
    args: &[String],
    out: &Path,
    timeout: Duration,
) -> GuiResult<RgbaImage> {
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| GuiError::backend(format!("could not start {program}: {e}")))?;
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return Err(GuiError::backend(format!("{program} failed: {e}"))),
        Err(_) => {
            let _ = child.kill().await;
            return Err(GuiError::new(
                ErrorCode::Timeout,
                format!("{program} did not finish within {} s", timeout.as_secs()),
            ));
        }
    };
    if !status.success() {
        return Err(GuiError::backend(format!(
            "{program} failed ({status}); Screen Recording may not be granted to this process"
        )));
    }
    let bytes = tokio::fs::read(out)
        .await
        .map_err(|e| GuiError::backend(format!("{program} wrote no picture: {e}")))?;
    let _ = tokio::fs::remove_file(out).await;
    decode_png(&bytes)
}

/// A PNG (8 or 16 bits, grey, RGB or RGBA, palette) as 8-bit RGBA.
pub fn decode_png(bytes: &[u8]) -> GuiResult<RgbaImage> {
    let bad = |e: &dyn std::fmt::Display| {
        GuiError::backend(format!("the captured picture is not a readable PNG: {e}"))
    };
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| bad(&"the picture is too large"))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| bad(&e))?;
    buf.truncate(info.buffer_size());
    let data = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        png::ColorType::Grayscale => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err(bad(&"an indexed picture was not expanded")),
    };
    RgbaImage::new(info.width, info.height, data)
}

/// A screenshot as ScreenCaptureKit hands it over (SDR: 8-bit BGRA, premultiplied, rows
/// `bytes_per_row` apart, which may be padded) as tight RGBA.
pub fn bgra_rows_to_rgba(
    width: usize,
    height: usize,
    bytes_per_row: usize,
    data: &[u8],
) -> GuiResult<RgbaImage> {
    let short = || GuiError::backend("the captured picture is shorter than its size says");
    if width == 0 || height == 0 || bytes_per_row < width * 4 {
        return Err(short());
    }
    let needed = bytes_per_row
        .checked_mul(height - 1)
        .and_then(|n| n.checked_add(width * 4))
        .ok_or_else(short)?;
    if data.len() < needed {
        return Err(short());
    }
    let mut rgba = Vec::with_capacity(width * height * 4);
    for row in data.chunks(bytes_per_row).take(height) {
        for p in row[..width * 4].chunks_exact(4) {
            rgba.extend_from_slice(&[p[2], p[1], p[0], p[3]]);
        }
    }
    let (w, h) = (
        u32::try_from(width).map_err(|_| short())?,
        u32::try_from(height).map_err(|_| short())?,
    );
    RgbaImage::new(w, h, rgba)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(width: u32, height: u32, color: png::ColorType, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, width, height);
            enc.set_color(color);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().expect("header");
            w.write_image_data(data).expect("data");
        }
        out
    }

    #[test]
    fn screencapturekit_first_from_macos_14() {
        assert_eq!(macos_major("14.4.1"), Some(14));
        assert_eq!(macos_major(" 13.6\n"), Some(13));
        assert_eq!(macos_major("junk"), None);
        let (paths, why) = capture_paths(Some(15));
        assert_eq!(
            paths,
            vec![CapturePath::ScreenCaptureKit, CapturePath::ScreenCaptureTool]
        );
        assert!(why.is_none());
        let (paths, why) = capture_paths(Some(13));
        assert_eq!(paths, vec![CapturePath::ScreenCaptureTool]);
        assert!(why.is_some_and(|w| w.contains("macOS 13")));
        assert_eq!(capture_paths(None).0.len(), 2);
    }

    #[test]
    fn the_arguments_ask_for_one_window_without_shadow_or_sound() {
        let args = screencapture_args(4242, Path::new("/tmp/x.png"));
        assert_eq!(args, ["-x", "-o", "-l", "4242", "-t", "png", "/tmp/x.png"]);
    }

    #[test]
    fn rgb_and_rgba_pictures_read_as_rgba() {
        let rgb = png_of(2, 1, png::ColorType::Rgb, &[1, 2, 3, 4, 5, 6]);
        let img = decode_png(&rgb).expect("rgb");
        assert_eq!((img.width, img.height), (2, 1));
        assert_eq!(img.data, vec![1, 2, 3, 255, 4, 5, 6, 255]);
        let rgba = png_of(1, 1, png::ColorType::Rgba, &[9, 8, 7, 6]);
        assert_eq!(decode_png(&rgba).expect("rgba").data, vec![9, 8, 7, 6]);
        assert!(decode_png(b"not a png").is_err());
    }

    #[test]
    fn padded_bgra_rows_become_tight_rgba() {
        // 2x2 pixels, rows padded to 12 bytes.
        let data = [
            1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, //
            9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 0,
        ];
        let img = bgra_rows_to_rgba(2, 2, 12, &data).expect("image");
        assert_eq!(
            img.data,
            vec![3, 2, 1, 4, 7, 6, 5, 8, 11, 10, 9, 12, 15, 14, 13, 16]
        );
        // The last row need not carry its padding.
        assert!(bgra_rows_to_rgba(2, 2, 12, &data[..20]).is_ok());
        assert!(bgra_rows_to_rgba(2, 2, 12, &data[..19]).is_err());
        assert!(bgra_rows_to_rgba(2, 2, 4, &data).is_err());
        assert!(bgra_rows_to_rgba(0, 2, 12, &data).is_err());
    }

    #[tokio::test]
    async fn a_stand_in_tool_is_run_and_its_picture_read() {
        let dir = std::env::temp_dir().join(format!("lsm-macos-capture-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let out = dir.join("shot.png");
        let src = dir.join("src.png");
        std::fs::write(&src, png_of(1, 1, png::ColorType::Rgb, &[10, 20, 30])).expect("src");
        // The stand-in copies a picture to the last argument, as screencapture writes to it.
        let args = vec![
            "-c".to_string(),
            format!("cp {} \"$0\"", src.display()),
            out.to_string_lossy().into_owned(),
        ];
        let img = run_capture("/bin/sh", &args, &out, CAPTURE_TIMEOUT)
            .await
            .expect("capture");
        assert_eq!(img.data, vec![10, 20, 30, 255]);
        assert!(!out.exists(), "the picture file is removed once read");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn a_stuck_or_failing_tool_is_an_error_not_a_hang() {
        let out = std::env::temp_dir().join("lsm-macos-never.png");
        let stuck = vec!["-c".to_string(), "sleep 30".to_string()];
        let e = run_capture("/bin/sh", &stuck, &out, Duration::from_millis(200))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::Timeout);
        let failing = vec!["-c".to_string(), "exit 1".to_string()];
        let e = run_capture("/bin/sh", &failing, &out, CAPTURE_TIMEOUT)
            .await
            .unwrap_err();
        assert!(e.message.contains("Screen Recording"), "{}", e.message);
        let e = run_capture("/nonexistent/screencapture", &[], &out, CAPTURE_TIMEOUT)
            .await
            .unwrap_err();
        assert!(e.message.contains("could not start"), "{}", e.message);
    }
}
