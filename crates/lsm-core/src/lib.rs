//! The platform-free core of lsm: the model every backend reports in, the error codes, the
//! action vocabulary and its validation, the `state_id` contract, and the backend trait.
//! Nothing here touches a display, a bus or a GUI library.

pub mod error;
pub mod geometry;
pub mod image;
pub mod input;

pub use error::{ErrorCode, GuiError, GuiResult};
pub use geometry::{Point, Rect};
pub use image::RgbaImage;
pub use input::{KeyCombo, Modifier, MouseButton};
