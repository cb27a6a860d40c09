//! Captured images: resampling, redaction and encoding (PNG, JPEG, lossless WebP), all in pure
//! Rust. Everything here is CPU work: callers run it off the async threads.

use crate::error::{GuiError, GuiResult};
use crate::geometry::Rect;
use serde::{Deserialize, Serialize};

/// An 8-bit RGBA image, rows top to bottom, no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbaImage {
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

/// How a screenshot is encoded for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// Lossless; exact pixels (default).
    #[default]
    Png,
    /// Lossy, smallest for photos and gradients; `image_quality` 1..=100.
    Jpeg,
    /// Lossless WebP: exact pixels, usually smaller than PNG.
    Webp,
}

impl ImageFormat {
    pub const ALL: [ImageFormat; 3] = [Self::Png, Self::Jpeg, Self::Webp];

    /// Parses the caller's spelling (`png`, `jpeg`/`jpg`, `webp`, any case).
    pub fn parse(s: &str) -> GuiResult<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "png" => Ok(Self::Png),
            "jpeg" | "jpg" => Ok(Self::Jpeg),
            "webp" => Ok(Self::Webp),
            _ => Err(GuiError::invalid(format!(
                "image_format {s:?} is not supported; use \"png\" (default), \"jpeg\" or \"webp\""
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpeg",
            Self::Webp => "webp",
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Webp => "image/webp",
        }
    }
}

/// An area of a window drawn on since it was captured, read again: where it lies in the
/// capture (image pixels) and what it shows now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaint {
    pub at: crate::geometry::Rect,
    pub image: RgbaImage,
}

/// An encoded image ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedImage {
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
    pub bytes: Vec<u8>,
}

impl EncodedImage {
    pub fn mime_type(&self) -> &'static str {
        self.format.mime_type()
    }
}

fn enc_err(what: &str, e: impl std::fmt::Display) -> GuiError {
    GuiError::backend(format!("{what} encoding failed: {e}"))
}

impl RgbaImage {
    /// Checks that `data` holds exactly `width * height * 4` bytes.
    pub fn new(width: u32, height: u32, data: Vec<u8>) -> GuiResult<Self> {
        let expected = width as usize * height as usize * 4;
        if data.len() != expected {
            return Err(GuiError::backend(format!(
                "image buffer has {} bytes, {width}x{height} RGBA needs {expected}",
                data.len()
            )));
        }
        Ok(Self { width, height, data })
    }

    /// Fails when `data` does not match the dimensions (the fields are public).
    fn check(&self) -> GuiResult<()> {
        if self.data.len() != self.width as usize * self.height as usize * 4 {
            return Err(GuiError::backend(format!(
                "image buffer has {} bytes, not {}x{} RGBA",
                self.data.len(),
                self.width,
                self.height
            )));
        }
        Ok(())
    }

    /// An image of one colour.
    pub fn filled(width: u32, height: u32, rgba: [u8; 4]) -> Self {
        let data = rgba.repeat(width as usize * height as usize);
        Self { width, height, data }
    }

    /// The pixel at (x, y), if inside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 4;
        self.data.get(i..i + 4).and_then(|p| p.try_into().ok())
    }

    /// Copies `part` into this image with its top-left corner at `at` (what lies outside is
    /// left out). False when nothing fits.
    pub fn paste(&mut self, at: crate::geometry::Point, part: &RgbaImage) -> bool {
        if self.check().is_err() || part.check().is_err() {
            return false;
        }
        let (x0, y0) = (at.x.max(0), at.y.max(0));
        let x1 = (at.x + part.width as i32).min(self.width as i32);
        let y1 = (at.y + part.height as i32).min(self.height as i32);
        if x0 >= x1 || y0 >= y1 {
            return false;
        }
        let row = (x1 - x0) as usize * 4;
        for y in y0..y1 {
            let src = (((y - at.y) as usize * part.width as usize) + (x0 - at.x) as usize) * 4;
            let dst = ((y as usize * self.width as usize) + x0 as usize) * 4;
            self.data[dst..dst + row].copy_from_slice(&part.data[src..src + row]);
        }
        true
    }

    /// True when every pixel has alpha 255 (screenshots nearly always do).
    pub fn is_opaque(&self) -> bool {
        // 16 pixels at a time with a fixed inner loop the compiler unrolls (screenshots are
        // megabytes and nearly always opaque, so the whole image is usually read).
        let mut blocks = self.data.chunks_exact(64);
        let opaque = |px: &[u8]| px.iter().skip(3).step_by(4).fold(255u8, |acc, &a| acc & a) == 255;
        blocks.all(|b| (3..64).step_by(4).fold(255u8, |acc, i| acc & b[i]) == 255)
            && opaque(blocks.remainder())
    }

    /// The image resampled to `width x height` (Catmull-Rom convolution: sharp text, no
    /// ringing worth noting). Returns a copy when the size is already right.
    pub fn resized(&self, width: u32, height: u32) -> GuiResult<RgbaImage> {
        use fast_image_resize::images::{Image, ImageRef};
        use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
        self.check()?;
        if (width, height) == (self.width, self.height) {
            return Ok(self.clone());
        }
        if width == 0 || height == 0 || self.width == 0 || self.height == 0 {
            return Ok(RgbaImage::filled(width, height, [0, 0, 0, 255]));
        }
        let src = ImageRef::new(self.width, self.height, &self.data, PixelType::U8x4)
            .map_err(|e| GuiError::backend(format!("resampling the screenshot: {e}")))?;
        let mut dst = Image::new(width, height, PixelType::U8x4);
        // Scaling premultiplies by alpha unless the image is opaque, where it changes nothing.
        let options = ResizeOptions::new()
            .resize_alg(ResizeAlg::Convolution(FilterType::CatmullRom))
            .use_alpha(!self.is_opaque());
        Resizer::new()
            .resize(&src, &mut dst, &options)
            .map_err(|e| GuiError::backend(format!("resampling the screenshot: {e}")))?;
        RgbaImage::new(width, height, dst.into_vec())
    }

    /// Paints `area` (clipped to the image) with one colour. Returns whether anything was painted.
    pub fn fill_rect(&mut self, area: Rect, rgba: [u8; 4]) -> bool {
        let full = Rect::new(0, 0, self.width as i32, self.height as i32);
        let Some(r) = full.intersect(&area).filter(|_| self.check().is_ok()) else {
            return false;
        };
        let stride = self.width as usize * 4;
        let (x0, x1) = (r.x as usize * 4, (r.x + r.width) as usize * 4);
        for y in r.y as usize..(r.y + r.height) as usize {
            let row = &mut self.data[y * stride..(y + 1) * stride];
            for px in row[x0..x1].chunks_exact_mut(4) {
                px.copy_from_slice(&rgba);
            }
        }
        true
    }

    /// RGB bytes without alpha.
    fn rgb(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.width as usize * self.height as usize * 3);
        for p in self.data.chunks_exact(4) {
            out.extend_from_slice(&p[..3]);
        }
        out
    }

    /// Encodes as PNG with fast compression (screenshots are large and sent often). Opaque
    /// images are written as RGB, a row at a time (no whole-image copy).
    pub fn to_png(&self) -> GuiResult<Vec<u8>> {
        use std::io::Write;
        self.check()?;
        let opaque = self.is_opaque();
        let mut out = Vec::with_capacity(self.data.len() / 8);
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(if opaque {
                png::ColorType::Rgb
            } else {
                png::ColorType::Rgba
            });
            enc.set_depth(png::BitDepth::Eight);
            enc.set_compression(png::Compression::Fast);
            // One filter for every row instead of trying five per row: on a 1415x732
            // gtk3-widget-factory window Paeth encoded in 1.7 ms to 153 KB, the adaptive choice
            // in 2.9 ms to 154 KB (Sub 272 KB, Up 410 KB).
            enc.set_filter(png::Filter::Paeth);
            let mut writer = enc.write_header().map_err(|e| enc_err("png", e))?;
            if opaque {
                let mut stream = writer.stream_writer().map_err(|e| enc_err("png", e))?;
                let mut row = vec![0u8; self.width as usize * 3];
                for line in self.data.chunks_exact(self.width.max(1) as usize * 4) {
                    for (o, p) in row.chunks_exact_mut(3).zip(line.chunks_exact(4)) {
                        o.copy_from_slice(&p[..3]);
                    }
                    stream.write_all(&row).map_err(|e| enc_err("png", e))?;
                }
                stream.finish().map_err(|e| enc_err("png", e))?;
            } else {
                writer
                    .write_image_data(&self.data)
                    .map_err(|e| enc_err("png", e))?;
                writer.finish().map_err(|e| enc_err("png", e))?;
            }
        }
        Ok(out)
    }

    /// Encodes as baseline JPEG (alpha dropped), `quality` 1..=100.
    pub fn to_jpeg(&self, quality: u8) -> GuiResult<Vec<u8>> {
        self.check()?;
        let (w, h) = (dim16(self.width, "jpeg")?, dim16(self.height, "jpeg")?);
        let mut out = Vec::with_capacity(self.data.len() / 10);
        let enc = jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100));
        enc.encode(&self.data, w, h, jpeg_encoder::ColorType::Rgba)
            .map_err(|e| enc_err("jpeg", e))?;
        Ok(out)
    }

    /// Encodes as lossless WebP (opaque images as RGB).
    pub fn to_webp(&self) -> GuiResult<Vec<u8>> {
        self.check()?;
        let mut out = Vec::with_capacity(self.data.len() / 8);
        let rgb;
        let (color, data) = if self.is_opaque() {
            rgb = self.rgb();
            (image_webp::ColorType::Rgb8, rgb.as_slice())
        } else {
            (image_webp::ColorType::Rgba8, self.data.as_slice())
        };
        image_webp::WebPEncoder::new(&mut out)
            .encode(data, self.width, self.height, color)
            .map_err(|e| enc_err("webp", e))?;
        Ok(out)
    }

    /// Encodes in `format`; `quality` is used by JPEG only.
    pub fn encode(&self, format: ImageFormat, quality: u8) -> GuiResult<EncodedImage> {
        let bytes = match format {
            ImageFormat::Png => self.to_png()?,
            ImageFormat::Jpeg => self.to_jpeg(quality)?,
            ImageFormat::Webp => self.to_webp()?,
        };
        Ok(EncodedImage {
            format,
            width: self.width,
            height: self.height,
            bytes,
        })
    }
}

fn dim16(v: u32, what: &str) -> GuiResult<u16> {
    u16::try_from(v).map_err(|_| GuiError::backend(format!("{what}: image dimension {v} exceeds 65535")))
}

/// A frame's identity: its pixels and what shaped the image (geometry, format, size).
pub(crate) fn frame_etag(image: &RgbaImage, salt: &str) -> String {
    let pixels = xxhash_rust::xxh3::xxh3_64(&image.data);
    let shape = xxhash_rust::xxh3::xxh3_64(salt.as_bytes());
    format!("{pixels:016x}{shape:08x}", shape = shape as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic "screenshot": gradients, hard edges and some text-like strokes.
    pub(crate) fn sample(width: u32, height: u32) -> RgbaImage {
        let mut data = Vec::with_capacity(width as usize * height as usize * 4);
        for y in 0..height {
            for x in 0..width {
                let stroke = (x / 3 + y / 7) % 11 == 0;
                let v = if stroke { 20 } else { 230 };
                data.extend_from_slice(&[v, (x % 256) as u8, (y % 256) as u8, 255]);
            }
        }
        RgbaImage { width, height, data }
    }

    fn decode_png(bytes: &[u8]) -> RgbaImage {
        let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
        dec.set_transformations(png::Transformations::ALPHA);
        let mut reader = dec.read_info().expect("png header");
        let mut buf = vec![0; reader.output_buffer_size().expect("size")];
        let info = reader.next_frame(&mut buf).expect("png frame");
        buf.truncate(info.buffer_size());
        assert_eq!(info.color_type, png::ColorType::Rgba);
        RgbaImage::new(info.width, info.height, buf).expect("rgba")
    }

    #[test]
    fn png_round_trips_exactly_opaque_and_transparent() {
        let img = sample(37, 23);
        assert_eq!(decode_png(&img.to_png().expect("png")), img);
        let mut see_through = img.clone();
        see_through.data[3] = 7;
        assert_eq!(decode_png(&see_through.to_png().expect("png")), see_through);
    }

    #[test]
    fn jpeg_decodes_to_the_right_size_and_close_colours() {
        let img = RgbaImage::filled(64, 40, [200, 100, 50, 255]);
        for q in [1u8, 80, 100] {
            let bytes = img.to_jpeg(q).expect("jpeg");
            assert!(bytes.starts_with(&[0xFF, 0xD8, 0xFF]));
            let mut dec = jpeg_decoder::Decoder::new(std::io::Cursor::new(&bytes));
            let px = dec.decode().expect("jpeg decodes");
            let info = dec.info().expect("info");
            assert_eq!((info.width, info.height), (64, 40));
            assert_eq!(px.len(), 64 * 40 * 3);
            if q >= 80 {
                for (a, b) in px[..3].iter().zip([200u8, 100, 50]) {
                    assert!(a.abs_diff(b) <= 4, "jpeg colour {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn webp_is_lossless() {
        let img = sample(50, 31);
        let bytes = img.to_webp().expect("webp");
        assert!(bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP");
        let mut dec = image_webp::WebPDecoder::new(std::io::Cursor::new(&bytes)).expect("webp header");
        assert_eq!(dec.dimensions(), (50, 31));
        let mut buf = vec![0; dec.output_buffer_size().expect("size")];
        dec.read_image(&mut buf).expect("webp decodes");
        let rgb: Vec<u8> = img
            .data
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        assert_eq!(buf, rgb);
    }

    #[test]
    fn encode_reports_format_and_size() {
        let img = sample(9, 5);
        for f in ImageFormat::ALL {
            let e = img.encode(f, 80).expect("encodes");
            assert_eq!((e.format, e.width, e.height), (f, 9, 5));
            assert!(!e.bytes.is_empty());
            assert_eq!(ImageFormat::parse(f.name()).expect("parse"), f);
        }
        assert_eq!(ImageFormat::parse("JPG").expect("jpg"), ImageFormat::Jpeg);
        assert!(ImageFormat::parse("gif").is_err());
    }

    #[test]
    fn resize_halves_and_keeps_flat_colour() {
        let img = RgbaImage::filled(200, 100, [10, 20, 30, 255]);
        let half = img.resized(100, 50).expect("resize");
        assert_eq!((half.width, half.height), (100, 50));
        assert!(half.data.chunks_exact(4).all(|p| p == [10, 20, 30, 255]));
        // A left/right split stays a split, blurred by at most a pixel or two.
        let mut split = RgbaImage::filled(200, 100, [0, 0, 0, 255]);
        split.fill_rect(Rect::new(100, 0, 100, 100), [255, 255, 255, 255]);
        let s = split.resized(100, 50).expect("resize");
        assert_eq!(s.pixel(10, 10), Some([0, 0, 0, 255]));
        assert_eq!(s.pixel(90, 10), Some([255, 255, 255, 255]));
        assert!(img.resized(0, 0).expect("empty").data.is_empty());
    }

    #[test]
    fn fill_rect_clips_to_the_image() {
        let mut img = sample(20, 10);
        assert!(img.fill_rect(Rect::new(15, -5, 30, 8), [1, 2, 3, 255]));
        for y in 0..10 {
            for x in 0..20 {
                let inside = x >= 15 && y < 3;
                assert_eq!(img.pixel(x, y) == Some([1, 2, 3, 255]), inside, "({x},{y})");
            }
        }
        assert!(!img.fill_rect(Rect::new(25, 0, 5, 5), [0; 4]));
    }

    #[test]
    fn opacity_sees_any_transparent_pixel_in_blocks_and_remainder() {
        for n in [1u32, 15, 16, 17, 40] {
            let solid = RgbaImage::filled(n, 1, [1, 2, 3, 255]);
            assert!(solid.is_opaque(), "{n}");
            for at in [0, n / 2, n - 1] {
                let mut img = solid.clone();
                img.data[at as usize * 4 + 3] = 254;
                assert!(!img.is_opaque(), "{n} pixels, pixel {at} translucent");
            }
        }
    }

    /// Release-mode timing of the common case (run with `--release -- --ignored --nocapture`;
    /// `LSM_BENCH_PNG=shot.png` times a real screenshot instead of a synthetic one).
    #[test]
    #[ignore]
    fn encode_timings() {
        let img = match std::env::var("LSM_BENCH_PNG") {
            Ok(path) => decode_png(&std::fs::read(path).expect("LSM_BENCH_PNG readable")),
            Err(_) => sample(1366, 741),
        };
        let big = img.resized(img.width * 2, img.height * 2).expect("upscale");
        for _ in 0..2 {
            let t = std::time::Instant::now();
            let png = img.to_png().expect("png");
            let t_png = t.elapsed();
            let t = std::time::Instant::now();
            let jpg = img.to_jpeg(80).expect("jpeg");
            let t_jpg = t.elapsed();
            let t = std::time::Instant::now();
            let webp = img.to_webp().expect("webp");
            let t_webp = t.elapsed();
            let t = std::time::Instant::now();
            let small = big.resized(img.width, img.height).expect("resize");
            let t_resize = t.elapsed();
            let t = std::time::Instant::now();
            let capped = img
                .resized(img.width * 4 / 7, img.height * 4 / 7)
                .expect("resize");
            let t_cap = t.elapsed();
            println!(
                "{}x{}: png {t_png:?} ({} B), jpeg q80 {t_jpg:?} ({} B), webp {t_webp:?} ({} B); \
                 2x->1x resize {t_resize:?} ({}x{}), cap resize {t_cap:?} ({}x{})",
                img.width,
                img.height,
                png.len(),
                jpg.len(),
                webp.len(),
                small.width,
                small.height,
                capped.width,
                capped.height
            );
        }
    }

    #[test]
    fn a_part_is_copied_in_place_and_clipped_at_the_edges() {
        let mut img = RgbaImage::filled(4, 3, [0, 0, 0, 255]);
        let red = RgbaImage::filled(2, 2, [255, 0, 0, 255]);
        assert!(img.paste(crate::geometry::Point::new(1, 1), &red));
        assert_eq!(img.pixel(0, 0), Some([0, 0, 0, 255]));
        assert_eq!(img.pixel(1, 1), Some([255, 0, 0, 255]));
        assert_eq!(img.pixel(2, 2), Some([255, 0, 0, 255]));
        assert_eq!(img.pixel(3, 2), Some([0, 0, 0, 255]));
        // Over the right and bottom edges: the part that fits.
        let blue = RgbaImage::filled(3, 3, [0, 0, 255, 255]);
        assert!(img.paste(crate::geometry::Point::new(3, 2), &blue));
        assert_eq!(img.pixel(3, 2), Some([0, 0, 255, 255]));
        assert_eq!(img.pixel(2, 2), Some([255, 0, 0, 255]));
        // Over the left and top edges.
        assert!(img.paste(crate::geometry::Point::new(-2, -2), &blue));
        assert_eq!(img.pixel(0, 0), Some([0, 0, 255, 255]));
        assert_eq!(img.pixel(1, 1), Some([255, 0, 0, 255]));
        // Entirely outside.
        assert!(!img.paste(crate::geometry::Point::new(4, 0), &blue));
    }
}
