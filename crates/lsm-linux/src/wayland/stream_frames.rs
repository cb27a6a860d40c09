//! Reading a window's pixels from its PipeWire stream without linking PipeWire or GStreamer
//! (the default binary must start on a machine that has neither). One long-lived
//! `gst-launch-1.0 pipewiresrc` helper per observed window writes every new frame to a pipe
//! as an uncompressed PNG (self-describing: each carries its size, so a resized window or a
//! renegotiated stream needs no side channel); a thread keeps the latest one. Mutter sends a
//! frame only when the window changes, so an idle window costs nothing, and a screenshot costs
//! no process start and no new screen-cast session: it is the latest frame, decoded.

use lsm_core::{GuiError, GuiResult, RgbaImage};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The helper program; its absence is an honest "no screenshots" capability.
pub const GST_LAUNCH: &str = "gst-launch-1.0";
/// Bound on a single PNG frame (a 8K RGBA frame is 132 MB; refuse beyond that).
const MAX_FRAME: usize = 160 << 20;
/// The most frames per second a window stream sends. Mutter throttles to the negotiated
/// `max-framerate` and still sends the last change once the interval has passed (its
/// follow-up frame), so a window that stops changing is always seen as it ended. Uncapped, an
/// animated window (a spinner) streamed ~47 frames/s, 216 MB/s through the helper, all rendered
/// by the shell and encoded by the helper, competing with the walk; at 10 frames/s a screenshot
/// after input waits at most 100 ms more for a frame of the result.
const MAX_FRAME_RATE: &str = "video/x-raw,max-framerate=10/1";
/// How long the first frame of a new helper may take (process start included).
pub const FIRST_FRAME_WAIT: Duration = Duration::from_secs(3);

const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// GStreamer elements the helper's pipeline uses, and the Debian/Ubuntu package of each.
const ELEMENTS: &[(&str, &str)] = &[
    ("pipewiresrc", "gstreamer1.0-pipewire"),
    ("videoconvert", "gstreamer1.0-plugins-base"),
    ("pngenc", "gstreamer1.0-plugins-good"),
    ("fdsink", "gstreamer1.0-tools"),
];

/// Why the frame helper cannot run here (None: it can), checked once when the backend
/// connects (never at server start): the program and each element of its pipeline.
pub fn helper_missing() -> Option<String> {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(GST_LAUNCH).is_file()))
        .unwrap_or(false);
    if !found {
        return Some(format!(
            "{GST_LAUNCH} is not installed (Debian/Ubuntu: gstreamer1.0-tools, gstreamer1.0-pipewire, \
             gstreamer1.0-plugins-good), so lsm cannot read window pixels from mutter's screen-cast streams; elements \
             and input work"
        ));
    }
    let missing: Vec<String> = ELEMENTS
        .iter()
        .filter(|(element, _)| !element_exists(element))
        .map(|(element, package)| format!("{element} ({package})"))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "GStreamer lacks {}, so lsm cannot read window pixels from mutter's screen-cast streams; elements and \
             input work",
            missing.join(", ")
        )
    })
}

/// `gst-inspect-1.0 NAME` succeeds, within 5 s.
fn element_exists(name: &str) -> bool {
    let Ok(mut child) = Command::new("gst-inspect-1.0")
        .arg(name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Splits a byte stream into whole PNG files (signature, chunks, IEND).
#[derive(Default)]
pub struct PngSplitter {
    buf: Vec<u8>,
}

impl PngSplitter {
    /// Feeds bytes; returns the PNG files completed by them, or an error when the stream is
    /// not PNG (the helper printed something else).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        loop {
            if self.buf.len() < 8 {
                break;
            }
            if self.buf[..8] != PNG_SIGNATURE {
                return Err("the frame stream is not PNG".into());
            }
            let mut at = 8;
            let mut end = None;
            while at + 8 <= self.buf.len() {
                let len =
                    u32::from_be_bytes([self.buf[at], self.buf[at + 1], self.buf[at + 2], self.buf[at + 3]])
                        as usize;
                let next = at + 12 + len;
                if next > MAX_FRAME {
                    return Err(format!("a frame is larger than {} MB", MAX_FRAME >> 20));
                }
                if next > self.buf.len() {
                    break;
                }
                let is_end = &self.buf[at + 4..at + 8] == b"IEND";
                at = next;
                if is_end {
                    end = Some(at);
                    break;
                }
            }
            match end {
                Some(n) => out.push(self.buf.drain(..n).collect()),
                None => break,
            }
        }
        Ok(out)
    }
}

/// Decodes one PNG into RGBA.
pub fn decode_png(bytes: &[u8]) -> GuiResult<RgbaImage> {
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND);
    // Our own helper wrote it into a pipe: checking its CRCs and Adler sums would only cost
    // time (about a third of the decoding of an uncompressed frame).
    dec.ignore_checksums(true);
    let mut reader = dec
        .read_info()
        .map_err(|e| GuiError::backend(format!("a stream frame is not a PNG: {e}")))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| GuiError::backend("a stream frame is too large"))?;
    let mut data = vec![0u8; size];
    let info = reader
        .next_frame(&mut data)
        .map_err(|e| GuiError::backend(format!("a stream frame did not decode: {e}")))?;
    data.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => data,
        png::ColorType::Rgb => data
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => {
            return Err(GuiError::backend(format!(
                "unexpected stream frame colour type {other:?}"
            )))
        }
    };
    Ok(RgbaImage {
        width: info.width,
        height: info.height,
        data: rgba,
    })
}

#[derive(Default)]
struct Latest {
    png: Option<Arc<Vec<u8>>>,
    /// Frames seen so far.
    count: u64,
    at: Option<Instant>,
    /// Why the helper stopped, once it has.
    ended: Option<String>,
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Starts `cmd` so that it ends when lsm ends, however lsm ends (a helper whose stream is gone
/// waits forever otherwise: six were left behind by test runs). The kernel's parent-death
/// signal is tied to the thread that started the child, so every helper is started from one
/// thread that lives as long as lsm.
fn spawn_tied(mut cmd: Command) -> std::io::Result<Child> {
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and only makes two system
    // calls (prctl, getppid), which are async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // lsm may have ended between the fork and the prctl.
            if std::os::unix::process::parent_id() != parent {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            Ok(())
        });
    }
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        let started = std::thread::Builder::new()
            .name("lsm-helper-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            });
        if let Err(e) = started {
            tracing::warn!("the helper spawner thread did not start: {e}");
        }
        Mutex::new(tx)
    });
    let (reply, answer) = mpsc::channel();
    spawner
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((cmd, reply))
        .map_err(|_| std::io::Error::other("the helper spawner thread is gone"))?;
    answer
        .recv_timeout(Duration::from_secs(5))
        .map_err(|_| std::io::Error::other("the helper did not start within 5 s"))?
}

/// A PNG frame and its decoding.
type Decoded = (Arc<Vec<u8>>, Arc<RgbaImage>);

/// One helper reading one PipeWire node.
pub struct FrameReader {
    child: Mutex<Child>,
    latest: Arc<(Mutex<Latest>, Condvar)>,
    /// The last frame decoded, with the PNG it came from: a window that did not change since
    /// the last screenshot is not decoded again.
    decoded: Mutex<Option<Decoded>>,
}

impl FrameReader {
    /// Starts `gst-launch-1.0` on PipeWire node `node`; through `remote` when given (a
    /// portal's PipeWire connection, which alone may read the node), else on the user's
    /// PipeWire daemon.
    pub fn start(node: u32, remote: Option<std::os::fd::OwnedFd>) -> GuiResult<Self> {
        use std::os::fd::AsRawFd;
        let mut cmd = Command::new(GST_LAUNCH);
        cmd.args(["-q", "pipewiresrc"]).arg(format!("path={node}"));
        if let Some(fd) = &remote {
            let raw = fd.as_raw_fd();
            cmd.arg(format!("fd={raw}"));
            // SAFETY: runs in the forked child before exec; one fcntl, async-signal-safe. The
            // helper inherits the connection under the same number (ours is close-on-exec).
            unsafe {
                cmd.pre_exec(move || {
                    let fd = std::os::fd::BorrowedFd::borrow_raw(raw);
                    rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
                    Ok(())
                });
            }
        }
        cmd.args([
            "always-copy=true",
            "!",
            MAX_FRAME_RATE,
            "!",
            "videoconvert",
            "!",
            "video/x-raw,format=RGBA",
            "!",
        ])
        .args([
            "pngenc",
            "compression-level=0",
            "snapshot=false",
            "!",
            "fdsink",
            "fd=1",
            "sync=false",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        let mut child = spawn_tied(cmd)
            .map_err(|e| GuiError::unavailable(format!("{GST_LAUNCH} could not start ({e}): install gstreamer1.0-tools and gstreamer1.0-pipewire for screenshots on Wayland")))?;
        // The helper has its own copy of the connection now.
        drop(remote);
        let mut out = child
            .stdout
            .take()
            .ok_or_else(|| GuiError::backend("the frame helper has no output pipe"))?;
        let latest: Arc<(Mutex<Latest>, Condvar)> = Arc::default();
        let shared = latest.clone();
        std::thread::Builder::new()
            .name(format!("lsm-frames-{node}"))
            .spawn(move || {
                let mut split = PngSplitter::default();
                let mut chunk = vec![0u8; 1 << 20];
                let why = loop {
                    match out.read(&mut chunk) {
                        Ok(0) => break "the frame helper exited".to_string(),
                        Ok(n) => match split.feed(&chunk[..n]) {
                            Ok(frames) => {
                                if let Some(last) = frames.into_iter().last() {
                                    let (m, cv) = &*shared;
                                    let mut l = m.lock().unwrap_or_else(|p| p.into_inner());
                                    l.png = Some(Arc::new(last));
                                    l.count += 1;
                                    l.at = Some(Instant::now());
                                    cv.notify_all();
                                }
                            }
                            Err(e) => break e,
                        },
                        Err(e) => break format!("reading frames: {e}"),
                    }
                };
                let (m, cv) = &*shared;
                m.lock().unwrap_or_else(|p| p.into_inner()).ended = Some(why);
                cv.notify_all();
            })
            .map_err(|e| GuiError::backend(format!("cannot start the frame thread: {e}")))?;
        Ok(Self {
            child: Mutex::new(child),
            latest,
            decoded: Mutex::new(None),
        })
    }

    /// True while the helper runs.
    pub fn alive(&self) -> bool {
        let (m, _) = &*self.latest;
        m.lock().unwrap_or_else(|p| p.into_inner()).ended.is_none()
    }

    /// The latest frame, if one came; never waits.
    pub fn peek(&self) -> Option<Arc<Vec<u8>>> {
        let (m, _) = &*self.latest;
        m.lock().unwrap_or_else(|p| p.into_inner()).png.clone()
    }

    /// The latest frame: waits (bounded by `first`) for one when none came yet; when input
    /// was sent at `input_at`, waits (bounded by `after_input`) for a frame that arrived after
    /// it. Mutter sends a frame only when the window changed, so when none comes the latest one
    /// is still the window as it is.
    pub fn latest(
        &self,
        first: Duration,
        input_at: Option<Instant>,
        after_input: Duration,
    ) -> GuiResult<Arc<Vec<u8>>> {
        let (m, cv) = &*self.latest;
        let start = Instant::now();
        let mut l = m.lock().unwrap_or_else(|p| p.into_inner());
        while l.png.is_none() {
            if let Some(why) = &l.ended {
                return Err(GuiError::backend(format!("no window frame: {why}")));
            }
            let left = first.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(GuiError::timeout(
                    "the first frame of the window's screen-cast stream",
                ));
            }
            l = cv
                .wait_timeout(l, left)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        if let Some(input) = input_at {
            let until = input + after_input;
            while l.at.is_some_and(|t| t < input) && l.ended.is_none() {
                let now = Instant::now();
                if now >= until {
                    break;
                }
                l = cv
                    .wait_timeout(l, until - now)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
        }
        l.png.clone().ok_or_else(|| GuiError::backend("no window frame"))
    }
}

impl FrameReader {
    /// `png` (a frame from `latest`) decoded, or the same frame's earlier decoding.
    pub fn image(&self, png: Arc<Vec<u8>>) -> GuiResult<Arc<RgbaImage>> {
        let mut d = self.decoded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, img)) = &*d {
            if Arc::ptr_eq(seen, &png) {
                return Ok(img.clone());
            }
        }
        let img = Arc::new(decode_png(&png)?);
        *d = Some((png, img.clone()));
        Ok(img)
    }
}

impl Drop for FrameReader {
    fn drop(&mut self) {
        let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// The window's frame (`full` px) cut out of `img` (`crop`: the part of the image the frame
/// covers, from `window_crop`; `offset`: the frame's origin from the image's, in stage px, `k`
/// image px per stage px). What the image does not show (a clipped part) is opaque black; so are
/// transparent pixels (the shadow): rows are copied, then their alpha set. Returns the image and
/// whether part was clipped.
pub fn cut_to_frame(
    img: &RgbaImage,
    crop: lsm_core::Rect,
    full: (u32, u32),
    offset: (i32, i32),
    k: f64,
) -> (RgbaImage, bool) {
    let clipped = crop.width < full.0 as i32 || crop.height < full.1 as i32;
    let mut data = if clipped {
        [0u8, 0, 0, 255].repeat(full.0 as usize * full.1 as usize)
    } else {
        vec![0u8; full.0 as usize * full.1 as usize * 4]
    };
    let (ox, oy) = (
        (offset.0 as f64 * k).round() as i32,
        (offset.1 as f64 * k).round() as i32,
    );
    for row in 0..crop.height {
        let sy = (crop.y + row) as usize;
        let dy = (crop.y + row - oy) as usize;
        if dy >= full.1 as usize {
            break;
        }
        let (sx, dx) = (crop.x as usize, (crop.x - ox) as usize);
        let n = (crop.width as usize).min(full.0 as usize - dx);
        let src = (sy * img.width as usize + sx) * 4;
        let dst = (dy * full.0 as usize + dx) * 4;
        let out_row = &mut data[dst..dst + n * 4];
        out_row.copy_from_slice(&img.data[src..src + n * 4]);
        for px in out_row.chunks_exact_mut(4) {
            px[3] = 255;
        }
    }
    let out = RgbaImage {
        width: full.0,
        height: full.1,
        data,
    };
    (out, clipped)
}

/// The window's own part of a window-stream frame: mutter puts the buffer at the frame's top
/// left, so the visible window is at (frame − buffer) in buffer px, times the monitor scale;
/// clipped to the frame (a window wider than the monitor loses its right edge).
pub fn window_crop(
    frame_img: (u32, u32),
    frame: lsm_core::Rect,
    buffer: lsm_core::Rect,
    scale: f64,
) -> Option<lsm_core::Rect> {
    let s = |v: i32| (v as f64 * scale).round() as i32;
    let r = lsm_core::Rect::new(
        s(frame.x - buffer.x),
        s(frame.y - buffer.y),
        s(frame.width),
        s(frame.height),
    );
    let img = lsm_core::Rect::new(0, 0, frame_img.0 as i32, frame_img.1 as i32);
    img.intersect(&r).filter(|r| !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(w: u32, h: u32) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, w, h);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            let mut wr = enc.write_header().unwrap();
            wr.write_image_data(&vec![7u8; (w * h * 4) as usize]).unwrap();
        }
        out
    }

    #[test]
    fn the_splitter_finds_whole_pngs_across_reads() {
        let (a, b) = (png_of(3, 2), png_of(5, 4));
        let stream: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
        let mut s = PngSplitter::default();
        let mut got = Vec::new();
        for piece in stream.chunks(7) {
            got.extend(s.feed(piece).unwrap());
        }
        assert_eq!(got, vec![a.clone(), b]);
        let img = decode_png(&got[0]).unwrap();
        assert_eq!((img.width, img.height, img.data.len()), (3, 2, 24));
        assert!(PngSplitter::default().feed(b"WARNING: something else").is_err());
    }

    #[test]
    fn the_window_is_cut_out_of_its_stream_frame() {
        use lsm_core::Rect;
        // GTK3 on GNOME 43: buffer 26 px left of and 23 px above the frame (CSD shadow).
        let frame = Rect::new(0, 32, 1415, 732);
        let buffer = Rect::new(-26, 9, 1467, 784);
        assert_eq!(
            window_crop((1280, 800), frame, buffer, 1.0),
            Some(Rect::new(26, 23, 1254, 732))
        );
        // Qt draws no shadow: frame == buffer.
        let q = Rect::new(50, 82, 310, 331);
        assert_eq!(
            window_crop((1280, 800), q, q, 1.0),
            Some(Rect::new(0, 0, 310, 331))
        );
        assert_eq!(
            window_crop((1280, 800), q, q, 2.0),
            Some(Rect::new(0, 0, 620, 662))
        );
    }
}
