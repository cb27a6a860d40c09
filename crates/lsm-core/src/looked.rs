//! What an observation is before its `state_id` is issued ([`Looked`]), and what of it is needed
//! to bring it up to date after events ([`Base`]): plain data, shared by the observation
//! (`look.rs`), the settle loop and the catch-up (`catch_up.rs`).

use crate::image::{ImageFormat, RgbaImage};
use crate::model::WindowInfo;
use crate::observe::RenderedShot;
use crate::output::{StateOutput, StateRequest};
use crate::space::Space;
use crate::state::{ElementRef, Walked};
use std::collections::HashMap;
use std::sync::Arc;

/// An observation before its `state_id` is issued.
pub(crate) struct Looked {
    pub out: StateOutput,
    pub refs: HashMap<String, ElementRef>,
    pub space: Space,
    /// Neither filtered by a query nor cut short: every element of the window is in `out`.
    pub complete: bool,
    pub request: StateRequest,
    /// The windows listed beside the walk.
    pub windows: Option<Vec<WindowInfo>>,
    /// The walk it was made of (none when its elements were not asked for).
    pub walked: Option<Walked>,
}

/// The window's image as captured and encoded beside the walk: the pixels, whether other
/// windows may show in them, the space it was drawn in, the encoding, the capture's notes.
pub(crate) type Shot = (Arc<RgbaImage>, bool, Space, RenderedShot, Vec<String>);

/// How the image is to be encoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Image {
    pub format: ImageFormat,
    pub quality: u8,
}

/// An observation as far as bringing it up to date goes: its walk, and how the window is
/// observed (without an image).
#[derive(Clone, Copy)]
pub(crate) struct Base<'a> {
    pub walked: &'a Walked,
    pub request: &'a StateRequest,
}

impl<'a> Base<'a> {
    pub(crate) fn of(looked: &'a Looked) -> Option<Base<'a>> {
        Some(Base {
            walked: looked.walked.as_ref()?,
            request: &looked.request,
        })
    }
}
