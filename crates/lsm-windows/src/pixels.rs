//! Pixel buffers from Windows' capture paths made into the window's RGBA image: rows copied out
//! of a GPU texture's pitch, BGRA to RGBA, the window's frame cut out of a larger capture, and
//! the test that tells a capture that rendered nothing (PrintWindow of a window it cannot
//! draw gives a black bitmap) from a real one.

use lsm_core::geometry::Rect;

/// Rows of `width` BGRA pixels, `pitch` bytes apart, as tightly packed RGBA (alpha opaque).
/// `None` when the buffer is shorter than the rows it should hold.
pub fn bgra_rows_to_rgba(data: &[u8], pitch: usize, width: usize, height: usize) -> Option<Vec<u8>> {
    let row = width.checked_mul(4)?;
    if pitch < row || (height > 0 && data.len() < pitch * (height - 1) + row) {
        return None;
    }
    let mut out = Vec::with_capacity(row * height);
    for y in 0..height {
        for px in data[y * pitch..y * pitch + row].chunks_exact(4) {
            out.extend_from_slice(&[px[2], px[1], px[0], 255]);
        }
    }
    Some(out)
}

/// Whether an RGBA image holds one colour only, black: nothing was rendered into it.
pub fn looks_blank(rgba: &[u8]) -> bool {
    rgba.chunks_exact(4).all(|p| p[0] == 0 && p[1] == 0 && p[2] == 0)
}

/// The part `part` (in the image's own pixel coordinates) of an RGBA image `width` wide.
/// `None` when it does not lie inside the image.
pub fn crop_rgba(rgba: &[u8], width: usize, height: usize, part: Rect) -> Option<Vec<u8>> {
    let (x, y) = (usize::try_from(part.x).ok()?, usize::try_from(part.y).ok()?);
    let (w, h) = (
        usize::try_from(part.width).ok()?,
        usize::try_from(part.height).ok()?,
    );
    if w == 0 || h == 0 || x + w > width || y + h > height || rgba.len() < width * height * 4 {
        return None;
    }
    let mut out = Vec::with_capacity(w * h * 4);
    for row in y..y + h {
        let start = (row * width + x) * 4;
        out.extend_from_slice(&rgba[start..start + w * 4]);
    }
    Some(out)
}

/// Where the window's frame (its visible bounds) lies in a capture of `captured` (the whole
/// window rectangle, invisible resize borders included), both in screen pixels.
pub fn frame_within(captured: Rect, frame: Rect) -> Rect {
    Rect::new(
        frame.x - captured.x,
        frame.y - captured.y,
        frame.width,
        frame.height,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pitched_bgra_rows_become_packed_rgba() {
        // 2x2 pixels, 12 bytes per row (4 of padding).
        let data = [
            1, 2, 3, 0, 4, 5, 6, 0, 9, 9, 9, 9, //
            7, 8, 9, 0, 10, 11, 12, 0, 9, 9, 9, 9,
        ];
        let out = bgra_rows_to_rgba(&data, 12, 2, 2).expect("fits");
        assert_eq!(out, [3, 2, 1, 255, 6, 5, 4, 255, 9, 8, 7, 255, 12, 11, 10, 255]);
        assert_eq!(bgra_rows_to_rgba(&data[..19], 12, 2, 2), None);
        assert_eq!(bgra_rows_to_rgba(&data, 4, 2, 2), None);
    }

    #[test]
    fn black_is_blank_and_anything_else_is_not() {
        assert!(looks_blank(&[0, 0, 0, 255, 0, 0, 0, 0]));
        assert!(!looks_blank(&[0, 0, 0, 255, 0, 1, 0, 255]));
    }

    #[test]
    fn the_frame_is_cut_out_of_the_window_rectangle() {
        // A 4x3 image whose pixel value is its index.
        let img: Vec<u8> = (0..12u8).flat_map(|i| [i, i, i, 255]).collect();
        let part = frame_within(Rect::new(-7, 10, 4, 3), Rect::new(-6, 11, 2, 2));
        assert_eq!(part, Rect::new(1, 1, 2, 2));
        let cut = crop_rgba(&img, 4, 3, part).expect("inside");
        let firsts: Vec<u8> = cut.chunks_exact(4).map(|p| p[0]).collect();
        assert_eq!(firsts, [5, 6, 9, 10]);
        assert_eq!(crop_rgba(&img, 4, 3, Rect::new(3, 0, 2, 1)), None);
        assert_eq!(crop_rgba(&img, 4, 3, Rect::new(-1, 0, 2, 1)), None);
    }
}
