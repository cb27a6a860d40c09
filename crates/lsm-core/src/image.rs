//! Captured images and their encoding.

use crate::error::{GuiError, GuiResult};

/// An 8-bit RGBA image, rows top to bottom, no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbaImage {
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
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

    /// Encodes as PNG with fast compression (screenshots are large and sent often).
    pub fn to_png(&self) -> GuiResult<Vec<u8>> {
        let mut out = Vec::with_capacity(self.data.len() / 4);
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            enc.set_compression(png::Compression::Fast);
            let mut writer = enc
                .write_header()
                .map_err(|e| GuiError::backend(format!("png: {e}")))?;
            writer
                .write_image_data(&self.data)
                .map_err(|e| GuiError::backend(format!("png: {e}")))?;
        }
        Ok(out)
    }
}
