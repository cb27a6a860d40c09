//! Capturing a window's client area.
//!
//! With the Composite extension the pixels come from the window's own off-screen pixmap
//! (`NameWindowPixmap` of its top-level), so parts covered by other windows or lying off the
//! screen show the window itself. A running compositor redirects every window already. Without
//! one, a top-level is redirected here on its first capture, in Automatic mode: the X server
//! keeps drawing it on the screen itself, so what a person sees does not change, and the window
//! stays redirected while this connection lives (a compositor that starts later takes over with
//! its Manual redirection; ours are then dropped). Redirecting exposes the parts that were not
//! visible; that first capture waits, bounded, until the application has repainted them (Damage
//! events). Without Composite the screen is read with GetImage and the capture says which parts
//! cannot be the window's own.

use super::connection::*;
use super::shm;
use crate::window::WindowRecord;
use lsm_core::{ErrorCode, GuiError, GuiResult, Rect, RgbaImage};
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::composite::{ConnectionExt as _, Redirect};
use x11rb::protocol::xproto::{self, ConnectionExt as _, ImageFormat, ImageOrder, MapState, WindowClass};
use x11rb::protocol::ErrorKind;

/// Upper bound for the first capture after redirecting a covered or partly off-screen window
/// to wait for the application to repaint what the redirection exposed.
pub const REPAINT_WAIT: Duration = Duration::from_millis(800);
pub const REPAINT_POLL: Duration = Duration::from_millis(5);
/// Bound on damage areas kept between two looks (the wait looks every few ms).
const MAX_DAMAGE_AREAS: usize = 4096;
/// Damage objects whose areas are kept at once (one per window being redirected).
const MAX_DAMAGES: usize = 64;
/// The repaint grid has at most this many cells along a side.
const GRID_CELLS: i32 = 64;
/// Redirected top-levels remembered before the ones that no longer exist are pruned.
const MAX_REDIRECTED: usize = 256;

/// Why some pixels of a capture may not be the window's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// Other windows cover part of it and the screen was read: those parts show them.
    /// `why` says why the window's own pixels could not be read.
    Covered { why: String },
    /// Part of it lies outside the screen and the screen was read: that part is black.
    OffScreen { why: String },
    /// Redirected just now: the application had not finished repainting its covered or
    /// off-screen parts within [`REPAINT_WAIT`], so they may still show other windows or black.
    NotRepainted,
}

/// A captured client area.
#[derive(Debug, Clone)]
pub struct Capture {
    pub image: RgbaImage,
    /// True when parts may show other windows instead of this one (see `gaps`).
    pub occluded: bool,
    /// The pixels were read from the window's own pixmap (covered and off-screen parts
    /// included), not from the screen.
    pub own_pixels: bool,
    /// Where the image may differ from the window's own pixels, and why.
    pub gaps: Vec<Gap>,
    /// The capture path, where the observation names it (KDE: KWin's ScreenShot2).
    pub via: Option<&'static str>,
}

impl Capture {
    /// A capture of the window's own pixels (a compositor's window stream).
    pub fn of_own_pixels(image: RgbaImage, gaps: Vec<Gap>) -> Capture {
        Self::new(image, true, gaps)
    }

    /// A capture read from the screen (parts covered by other windows show them: see `gaps`).
    pub fn of_screen(image: RgbaImage, gaps: Vec<Gap>) -> Capture {
        Self::new(image, false, gaps)
    }

    fn new(image: RgbaImage, own_pixels: bool, gaps: Vec<Gap>) -> Capture {
        let occluded = gaps
            .iter()
            .any(|g| matches!(g, Gap::Covered { .. } | Gap::NotRepainted));
        Capture {
            image,
            occluded,
            own_pixels,
            gaps,
            via: None,
        }
    }

    /// The same capture with one more gap, if any (one found before it was read).
    pub fn with_gap(self, gap: Option<Gap>) -> Capture {
        let Some(g) = gap else {
            return self;
        };
        let mut gaps = self.gaps;
        if !gaps.contains(&g) {
            gaps.push(g);
        }
        Capture {
            via: self.via,
            ..Capture::new(self.image, self.own_pixels, gaps)
        }
    }

    /// The same capture, naming the path that took it.
    pub fn via(self, path: &'static str) -> Capture {
        Capture {
            via: Some(path),
            ..self
        }
    }
}

/// The error for capturing a minimized (or unmapped) window: it has no pixels at all.
pub fn minimized_error(id: u32) -> GuiError {
    GuiError::new(
        ErrorCode::WindowMinimized,
        format!(
            "window 0x{id:x} is minimized (or on another workspace) and has no pixels to capture; restore it with \
             gui_action [{{\"type\":\"focus\"}}] (no element_id), then call gui_state again"
        ),
    )
}

// ---------------------------------------------------------------- pixels (pure)

/// How a GetImage reply lays out its pixels.
#[derive(Debug, Clone, Copy)]
struct PixelFormat {
    bits_per_pixel: u8,
    scanline_pad: u8,
    msb_first: bool,
    masks: [u32; 3],
}

fn channel(pixel: u32, mask: u32) -> u8 {
    if mask == 0 {
        return 0;
    }
    let shift = mask.trailing_zeros();
    let bits = (mask >> shift).count_ones();
    let v = (pixel & mask) >> shift;
    if bits >= 8 {
        (v >> (bits - 8)) as u8
    } else {
        // Scale small channels (e.g. 5 or 6 bits) to the full 0..255 range.
        ((v * 255) / ((1 << bits) - 1)) as u8
    }
}

/// Converts a Z-pixmap block (`width x height`, as the X server sent it) to RGBA, written into
/// `dst` (an RGBA canvas `dst_width` pixels wide) with its top-left corner at `(x, y)`.
#[allow(clippy::too_many_arguments)]
fn zpixmap_into(
    data: &[u8],
    width: usize,
    height: usize,
    f: &PixelFormat,
    dst: &mut [u8],
    dst_width: usize,
    x: usize,
    y: usize,
) -> GuiResult<()> {
    let bytes_pp = match f.bits_per_pixel {
        16 | 24 | 32 => f.bits_per_pixel as usize / 8,
        other => {
            return Err(GuiError::backend(format!(
                "unsupported X image format: {other} bits per pixel"
            )))
        }
    };
    let pad = (f.scanline_pad.max(8) as usize) / 8;
    let stride = (width * bytes_pp).div_ceil(pad) * pad;
    if data.len() < stride * height.saturating_sub(1) + width * bytes_pp {
        return Err(GuiError::backend(format!(
            "X image has {} bytes, too few for {width}x{height}",
            data.len()
        )));
    }
    if x + width > dst_width || (y + height) * dst_width * 4 > dst.len() {
        return Err(GuiError::backend("X image block does not fit its canvas"));
    }
    let bgrx = bytes_pp == 4 && !f.msb_first && f.masks == [0xff_0000, 0xff00, 0xff];
    for row in 0..height {
        let line = &data[row * stride..row * stride + width * bytes_pp];
        let start = ((y + row) * dst_width + x) * 4;
        let out = &mut dst[start..start + width * 4];
        if bgrx {
            // The usual 24/32-bit layout: a byte shuffle the compiler vectorises.
            for (o, px) in out.chunks_exact_mut(4).zip(line.chunks_exact(4)) {
                o.copy_from_slice(&[px[2], px[1], px[0], 255]);
            }
            continue;
        }
        for (o, px) in out.chunks_exact_mut(4).zip(line.chunks_exact(bytes_pp)) {
            let mut v: u32 = 0;
            for (i, &b) in px.iter().enumerate() {
                let shift = if f.msb_first {
                    (bytes_pp - 1 - i) * 8
                } else {
                    i * 8
                };
                v |= (b as u32) << shift;
            }
            o.copy_from_slice(&[
                channel(v, f.masks[0]),
                channel(v, f.masks[1]),
                channel(v, f.masks[2]),
                255,
            ]);
        }
    }
    Ok(())
}

/// An RGBA canvas the size of a window, black where nothing was captured.
struct Canvas {
    data: Vec<u8>,
    width: usize,
    height: usize,
}

impl Canvas {
    /// `full`: every pixel will be written (no need to paint it black first).
    fn new(width: usize, height: usize, full: bool) -> Canvas {
        let mut data = vec![0u8; width * height * 4];
        if !full {
            for px in data.chunks_exact_mut(4) {
                px[3] = 255;
            }
        }
        Canvas { data, width, height }
    }

    fn into_image(self) -> GuiResult<RgbaImage> {
        RgbaImage::new(self.width as u32, self.height as u32, self.data)
    }
}

// ---------------------------------------------------------------- capture

impl X11 {
    /// Captures the client area of `id` as RGBA, `bounds.width x bounds.height`.
    pub fn capture(&self, id: u32) -> GuiResult<Capture> {
        let w = self
            .window(id)?
            .ok_or_else(|| GuiError::window_not_found(&format!("0x{id:x}")))?;
        self.capture_window(&w)
    }

    /// Captures a window just read with [`X11::window`] (no second read of its properties).
    pub fn capture_window(&self, w: &WindowRecord) -> GuiResult<Capture> {
        let id = w.id;
        if w.minimized {
            return Err(minimized_error(id));
        }
        if w.bounds.is_empty() {
            return Err(GuiError::backend(format!("window 0x{id:x} has an empty area")));
        }
        if !self.has_composite {
            return self.capture_direct(id, w.bounds, "the X server has no Composite extension");
        }
        let top = self.toplevel_of(id)?;
        if self.compositor_running()? {
            // The compositor redirects every window itself (and may unredirect a full-screen
            // one for speed, which a redirection of ours would defeat).
            self.release_redirects();
            return match self.capture_pixmap(id, top, w.bounds) {
                Ok(image) => Ok(Capture::new(image, true, Vec::new())),
                Err(e) if is_not_found(&e) => Err(e),
                Err(e) => {
                    tracing::debug!("composite capture of 0x{id:x} failed: {e}");
                    self.capture_direct(
                        id,
                        w.bounds,
                        "the compositor does not keep this window's contents (unredirected, e.g. full screen)",
                    )
                }
            };
        }
        let mut last = None;
        for _ in 0..2 {
            let gaps = if self.is_redirected(top) {
                Vec::new()
            } else {
                self.redirect(top, id, w.bounds)?.into_iter().collect()
            };
            match self.capture_pixmap(id, top, w.bounds) {
                Ok(image) => return Ok(Capture::new(image, true, gaps)),
                Err(e) if is_not_found(&e) => return Err(e),
                Err(e) => {
                    // Not redirected after all: the window we redirected was destroyed and its
                    // id reused. Once more from the start.
                    tracing::debug!("pixmap capture of 0x{id:x} (top-level 0x{top:x}) failed: {e}");
                    self.lock_redirected().remove(&top);
                    last = Some(e);
                }
            }
        }
        let why = format!(
            "the window could not be redirected for capture ({})",
            last.map(|e| e.message).unwrap_or_default()
        );
        self.capture_direct(id, w.bounds, &why)
    }

    pub(super) fn lock_redirected(&self) -> MutexGuard<'_, std::collections::HashSet<u32>> {
        self.redirected.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn is_redirected(&self, top: u32) -> bool {
        self.lock_redirected().contains(&top)
    }

    /// Redirects `top` (Automatic) and, when parts of the window were not visible (covered or
    /// off screen), waits until the application has repainted them. `Some(NotRepainted)` when
    /// it did not within [`REPAINT_WAIT`]. This waits holding the connection: the backend
    /// redirects ahead of a capture in steps instead (`redirect.rs`), and this serves the rest.
    fn redirect(&self, top: u32, id: u32, bounds: Rect) -> GuiResult<Option<Gap>> {
        let Some(mut pending) = self.start_redirect(top, id, bounds)? else {
            return Ok(None);
        };
        if pending.by_another() {
            // Another request waits for its repaint and needs the connection to finish.
            return Ok(Some(Gap::NotRepainted));
        }
        let start = Instant::now();
        let done = loop {
            if self.repaint_progress(&mut pending)? {
                break true;
            }
            if start.elapsed() >= pending.wait() {
                break false;
            }
            std::thread::sleep(REPAINT_POLL);
        };
        Ok(self.end_redirect(pending, done))
    }

    /// Called by `pump` for every DamageNotify.
    pub(super) fn note_damage(&self, ev: &x11rb::protocol::damage::NotifyEvent) {
        let a = ev.area;
        let area = Rect::new(a.x as i32, a.y as i32, a.width as i32, a.height as i32);
        if self.lock_watches().note(ev.damage, area) {
            return;
        }
        let mut areas = self.damage_areas.lock().unwrap_or_else(|p| p.into_inner());
        if areas.len() >= MAX_DAMAGES && !areas.contains_key(&ev.damage) {
            // Those of Damage objects destroyed meanwhile (their last events came late).
            areas.clear();
        }
        let kept = areas.entry(ev.damage).or_default();
        if kept.len() < MAX_DAMAGE_AREAS {
            let (g, a) = (ev.geometry, ev.area);
            kept.push(Rect::new(
                g.x as i32 + a.x as i32,
                g.y as i32 + a.y as i32,
                a.width as i32,
                a.height as i32,
            ));
        }
    }

    /// The areas Damage object `damage` reported since they were last taken.
    pub(super) fn take_damage(&self, damage: u32) -> Vec<Rect> {
        self.damage_areas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&damage)
            .unwrap_or_default()
    }

    pub(super) fn remember_redirect(&self, top: u32) {
        let mut set = self.lock_redirected();
        if set.len() >= MAX_REDIRECTED {
            // Destroyed windows take their redirection with them: forget those.
            let alive: Vec<u32> = set
                .iter()
                .copied()
                .filter(|&w| {
                    self.conn
                        .get_geometry(w)
                        .map(|c| c.reply().is_ok())
                        .unwrap_or(false)
                })
                .collect();
            set.clear();
            set.extend(alive);
        }
        set.insert(top);
    }

    /// Drops our redirections (a compositor now does it, and must be free to unredirect).
    fn release_redirects(&self) {
        let mut set = self.lock_redirected();
        if set.is_empty() {
            return;
        }
        for &w in set.iter() {
            let _ = self.conn.composite_unredirect_window(w, Redirect::AUTOMATIC);
        }
        let _ = self.conn.flush();
        tracing::debug!("a compositor runs: released {} redirection(s)", set.len());
        set.clear();
    }

    /// Reads the client area `bounds` (root coordinates) out of the top-level's off-screen
    /// pixmap.
    fn capture_pixmap(&self, id: u32, top: u32, bounds: Rect) -> GuiResult<RgbaImage> {
        let tg = self.geometry(top)?;
        let mut images = self.read_parts(id, top, &tg, &[bounds])?;
        images
            .pop()
            .ok_or_else(|| GuiError::backend(format!("window 0x{id:x}: nothing read")))
    }

    /// Reads areas (root coordinates) of window `id` out of its top-level's off-screen pixmap
    /// (`tg`: the top-level's geometry), naming the pixmap once. What lies outside the pixmap
    /// is black.
    pub(super) fn read_parts(
        &self,
        id: u32,
        top: u32,
        tg: &xproto::GetGeometryReply,
        parts: &[Rect],
    ) -> GuiResult<Vec<RgbaImage>> {
        let bw = tg.border_width as i32;
        let pix_rect = Rect::new(0, 0, tg.width as i32 + 2 * bw, tg.height as i32 + 2 * bw);
        let pixmap = self.conn.generate_id().map_err(id_err)?;
        self.conn
            .composite_name_window_pixmap(top, pixmap)
            .map_err(conn_err)?
            .check()
            .map_err(|e| match e {
                // BadMatch: not redirected.
                ReplyError::X11Error(ref x) if x.error_kind == ErrorKind::Match => {
                    GuiError::backend(format!("top-level 0x{top:x} is not redirected"))
                }
                e => win_err(top, "CompositeNameWindowPixmap", e),
            })?;
        let read = parts
            .iter()
            .map(|bounds| {
                // The pixmap covers the top-level's border too; tg.x/y is its outer corner.
                let (ox, oy) = (bounds.x - tg.x as i32, bounds.y - tg.y as i32);
                let want = Rect::new(ox, oy, bounds.width, bounds.height);
                let clip = pix_rect.intersect(&want).ok_or_else(|| {
                    GuiError::backend(format!("window 0x{id:x} lies outside its frame's pixmap"))
                })?;
                let at = clip.translate(-ox, -oy);
                let mut canvas = Canvas::new(
                    bounds.width as usize,
                    bounds.height as usize,
                    at == Rect::new(0, 0, bounds.width, bounds.height),
                );
                self.read_image(pixmap, clip, &mut canvas, at)?;
                canvas.into_image()
            })
            .collect();
        let _ = self.conn.free_pixmap(pixmap);
        read
    }

    /// GetImage of the window itself: only the part on screen can be read, and covered parts
    /// show what covers them. `why`: why the window's own pixmap could not be used.
    fn capture_direct(&self, id: u32, bounds: Rect, why: &str) -> GuiResult<Capture> {
        let screen = self.screen_rect()?;
        let visible = screen.intersect(&bounds).ok_or_else(|| {
            GuiError::new(
                ErrorCode::OutOfBounds,
                format!("window 0x{id:x} lies entirely off screen and {why}, so it cannot be captured"),
            )
        })?;
        let local = visible.translate(-bounds.x, -bounds.y);
        let mut canvas = Canvas::new(bounds.width as usize, bounds.height as usize, visible == bounds);
        self.read_image(id, local, &mut canvas, local).map_err(|e| {
            if is_not_found(&e) {
                e
            } else {
                GuiError::backend(format!("capture of 0x{id:x}: {}", e.message))
            }
        })?;
        let image = canvas.into_image()?;
        let mut gaps = Vec::new();
        if visible != bounds {
            gaps.push(Gap::OffScreen { why: why.to_owned() });
        }
        if self.is_overlapped(id, bounds)? {
            gaps.push(Gap::Covered { why: why.to_owned() });
        }
        Ok(Capture::new(image, false, gaps))
    }

    /// Reads `r` of `drawable` into `canvas` at `at` (canvas pixels), as RGBA.
    fn read_image(&self, drawable: u32, r: Rect, canvas: &mut Canvas, at: Rect) -> GuiResult<()> {
        let area = (to_i16(r.x), to_i16(r.y), r.width as u16, r.height as u16);
        let (w, h) = (r.width.max(0) as usize, r.height.max(0) as usize);
        let (x, y) = (at.x.max(0) as usize, at.y.max(0) as usize);
        if let Some(done) = self.read_image_shm(drawable, area, |data, depth, visual| {
            let format = self.pixel_format(depth, visual)?;
            zpixmap_into(data, w, h, &format, &mut canvas.data, canvas.width, x, y)
        }) {
            return done;
        }
        let reply = self
            .conn
            .get_image(
                ImageFormat::Z_PIXMAP,
                drawable,
                area.0,
                area.1,
                area.2,
                area.3,
                !0,
            )
            .map_err(conn_err)?
            .reply()
            .map_err(|e| win_err(drawable, "GetImage", e))?;
        let format = self.pixel_format(reply.depth, reply.visual)?;
        zpixmap_into(&reply.data, w, h, &format, &mut canvas.data, canvas.width, x, y)
    }

    /// Reads through MIT-SHM and hands the bytes, still in the shared memory, to `convert`;
    /// None when SHM is off or failed (then plain GetImage runs, which also reports a vanished
    /// window properly).
    fn read_image_shm(
        &self,
        drawable: u32,
        area: (i16, i16, u16, u16),
        convert: impl FnOnce(&[u8], u8, u32) -> GuiResult<()>,
    ) -> Option<GuiResult<()>> {
        if !self.shm_usable.load(Ordering::Relaxed) {
            return None;
        }
        // Z-pixmaps of the depths in use take at most 4 bytes a pixel.
        let need = area.2 as usize * area.3 as usize * 4;
        let mut slot = self.shm_segment.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|s| s.len() < need) {
            if let Some(old) = slot.take() {
                old.detach(&self.conn);
            }
            // Room for some growth, so a slightly larger window does not remap.
            match shm::Segment::new(&self.conn, need + need / 4) {
                Ok(seg) => *slot = Some(seg),
                Err(e) => {
                    tracing::debug!("MIT-SHM off: {e}");
                    self.shm_usable.store(false, Ordering::Relaxed);
                    return None;
                }
            }
        }
        let seg = slot.as_ref()?;
        match seg.get_image(&self.conn, drawable, area) {
            Ok(img) => Some(convert(img.data, img.depth, img.visual)),
            Err(e) => {
                tracing::debug!("ShmGetImage of 0x{drawable:x} failed ({e}); using GetImage");
                None
            }
        }
    }

    /// Pixel layout for `depth`; channel masks from `visual`, else any TrueColor visual of it.
    fn pixel_format(&self, depth: u8, visual: u32) -> GuiResult<PixelFormat> {
        let setup = self.conn.setup();
        let fmt = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == depth)
            .ok_or_else(|| GuiError::backend(format!("X server has no pixmap format for depth {depth}")))?;
        let visuals = || {
            setup
                .roots
                .iter()
                .flat_map(|s| &s.allowed_depths)
                .filter(|d| d.depth == depth)
                .flat_map(|d| &d.visuals)
        };
        let vt = visuals()
            .find(|v| v.visual_id == visual)
            .or_else(|| visuals().find(|v| v.class == xproto::VisualClass::TRUE_COLOR))
            .ok_or_else(|| GuiError::backend(format!("no TrueColor visual for depth {depth}")))?;
        Ok(PixelFormat {
            bits_per_pixel: fmt.bits_per_pixel,
            scanline_pad: fmt.scanline_pad,
            msb_first: setup.image_byte_order == ImageOrder::MSB_FIRST,
            masks: [vt.red_mask, vt.green_mask, vt.blue_mask],
        })
    }

    /// True if a viewable window stacked above `id`'s top-level overlaps `bounds`.
    fn is_overlapped(&self, id: u32, bounds: Rect) -> GuiResult<bool> {
        Ok(!self.covering_rects(id, bounds)?.is_empty())
    }

    /// The parts of `bounds` that viewable windows stacked above `id`'s top-level cover.
    pub(super) fn covering_rects(&self, id: u32, bounds: Rect) -> GuiResult<Vec<Rect>> {
        let top = self.toplevel_of(id)?;
        let stack = self.root_children()?;
        let above = match stack.iter().position(|&c| c == top) {
            Some(i) => &stack[i + 1..],
            None => return Ok(Vec::new()),
        };
        let mut cookies = Vec::with_capacity(above.len());
        for &w in above {
            cookies.push((
                self.conn.get_window_attributes(w).map_err(conn_err)?,
                self.conn.get_geometry(w).map_err(conn_err)?,
            ));
        }
        let mut out = Vec::new();
        for (attrs, geom) in cookies {
            // Windows closing meanwhile simply do not count.
            let (Ok(a), Ok(g)) = (attrs.reply(), geom.reply()) else {
                continue;
            };
            if a.map_state != MapState::VIEWABLE || a.class != WindowClass::INPUT_OUTPUT {
                continue;
            }
            let bw = 2 * g.border_width as i32;
            let r = Rect::new(g.x as i32, g.y as i32, g.width as i32 + bw, g.height as i32 + bw);
            out.extend(r.intersect(&bounds));
        }
        Ok(out)
    }
}

/// Which parts of a window (`bounds`, root coordinates) still wait for the application's
/// repaint, on a grid of at most `GRID_CELLS` per side: the cells that were covered or off
/// screen, until damage has touched each.
pub(super) struct RepaintGrid {
    bounds: Rect,
    cell: i32,
    cols: i32,
    needed: Vec<bool>,
    left: usize,
}

impl RepaintGrid {
    pub(super) fn new(bounds: Rect, screen: Rect, covering: &[Rect]) -> RepaintGrid {
        let cell = ((bounds.width.max(bounds.height) + GRID_CELLS - 1) / GRID_CELLS).max(8);
        let cols = (bounds.width + cell - 1) / cell;
        let rows = (bounds.height + cell - 1) / cell;
        let mut needed = Vec::with_capacity((cols * rows).max(0) as usize);
        for r in 0..rows {
            for c in 0..cols {
                let rect = Self::cell_rect(bounds, cell, c, r);
                let on_screen = screen.intersect(&rect) == Some(rect);
                needed.push(!on_screen || covering.iter().any(|k| k.intersect(&rect).is_some()));
            }
        }
        let left = needed.iter().filter(|n| **n).count();
        RepaintGrid {
            bounds,
            cell,
            cols,
            needed,
            left,
        }
    }

    fn cell_rect(bounds: Rect, cell: i32, c: i32, r: i32) -> Rect {
        let (x, y) = (c * cell, r * cell);
        Rect::new(
            bounds.x + x,
            bounds.y + y,
            cell.min(bounds.width - x),
            cell.min(bounds.height - y),
        )
    }

    /// Damage at `r` (root coordinates): the cells it touches are repainted.
    pub(super) fn repainted(&mut self, r: Rect) {
        let Some(hit) = r.intersect(&self.bounds) else {
            return;
        };
        let (x0, y0) = (
            (hit.x - self.bounds.x) / self.cell,
            (hit.y - self.bounds.y) / self.cell,
        );
        let x1 = (hit.x + hit.width - 1 - self.bounds.x) / self.cell;
        let y1 = (hit.y + hit.height - 1 - self.bounds.y) / self.cell;
        for row in y0..=y1 {
            for col in x0..=x1 {
                let i = (row * self.cols + col) as usize;
                if let Some(n) = self.needed.get_mut(i) {
                    if std::mem::take(n) {
                        self.left -= 1;
                    }
                }
            }
        }
    }

    pub(super) fn left(&self) -> usize {
        self.left
    }

    pub(super) fn done(&self) -> bool {
        self.left == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Converts `data` into a fresh canvas of exactly its size.
    fn convert(data: &[u8], w: usize, h: usize, f: &PixelFormat) -> GuiResult<Vec<u8>> {
        let mut out = vec![0u8; w * h * 4];
        zpixmap_into(data, w, h, f, &mut out, w, 0, 0)?;
        Ok(out)
    }

    #[test]
    fn zpixmap_conversion_handles_bgrx_and_padding() {
        let f = PixelFormat {
            bits_per_pixel: 32,
            scanline_pad: 32,
            msb_first: false,
            masks: [0xff0000, 0xff00, 0xff],
        };
        let data = [0x30, 0x20, 0x10, 0x00, 0x03, 0x02, 0x01, 0xff];
        let out = convert(&data, 2, 1, &f).expect("convert");
        assert_eq!(out, vec![0x10, 0x20, 0x30, 255, 0x01, 0x02, 0x03, 255]);
        // 16 bpp RGB565, one pixel per row padded to 4 bytes.
        let f = PixelFormat {
            bits_per_pixel: 16,
            scanline_pad: 32,
            msb_first: false,
            masks: [0xf800, 0x07e0, 0x001f],
        };
        let out = convert(&[0x00, 0xf8, 0, 0, 0x1f, 0x00], 1, 2, &f).expect("convert");
        assert_eq!(out, vec![255, 0, 0, 255, 0, 0, 255, 255]);
        assert!(convert(&[0; 3], 2, 1, &f).is_err());
    }

    #[test]
    fn a_block_lands_at_its_place_on_a_black_canvas() {
        let f = PixelFormat {
            bits_per_pixel: 32,
            scanline_pad: 32,
            msb_first: false,
            masks: [0xff0000, 0xff00, 0xff],
        };
        let mut canvas = Canvas::new(3, 2, false);
        let block = [9u8, 8, 7, 0, 9, 8, 7, 0];
        zpixmap_into(&block, 2, 1, &f, &mut canvas.data, canvas.width, 1, 1).expect("fits");
        assert_eq!(&canvas.data[16..24], &[7, 8, 9, 255, 7, 8, 9, 255]);
        assert_eq!(&canvas.data[0..16], &[0, 0, 0, 255].repeat(4)[..]);
        // A block that does not fit is refused, not written out of bounds.
        assert!(zpixmap_into(&block, 2, 1, &f, &mut canvas.data, canvas.width, 2, 1).is_err());
        assert!(zpixmap_into(&block, 2, 1, &f, &mut canvas.data, canvas.width, 0, 2).is_err());
    }

    #[test]
    fn the_repaint_grid_waits_for_covered_and_off_screen_cells_only() {
        let screen = Rect::new(0, 0, 100, 100);
        // 64x64 window at (50,0): its right 14 px lie off screen, a window covers (50..70, 40..60).
        let mut g = RepaintGrid::new(Rect::new(50, 0, 64, 64), screen, &[Rect::new(40, 40, 30, 20)]);
        assert_eq!(g.cell, 8);
        // Off screen: the two right columns (x >= 100) of 8 rows; covered: columns 0..2 of rows 5..7.
        assert_eq!(g.left, 16 + 9);
        g.repainted(Rect::new(0, 0, 10, 10)); // outside the window
        assert_eq!(g.left, 25);
        g.repainted(Rect::new(98, 0, 40, 64)); // the two columns partly or wholly off screen
        assert_eq!(g.left, 9);
        g.repainted(Rect::new(50, 40, 24, 24));
        assert!(g.done());
        let g = RepaintGrid::new(Rect::new(10, 10, 50, 50), screen, &[]);
        assert!(g.done());
    }
}
