//! The platform-free core of lsm: the model every backend reports in, the error codes, the
//! action vocabulary and its validation, the `state_id` contract, and the backend trait.
//! Nothing here touches a display, a bus or a GUI library.

pub mod error;
pub mod geometry;
pub mod image;
pub mod input;

pub use error::{ErrorCode, GuiError, GuiResult};
pub use geometry::{Point, Rect};
pub use image::{EncodedImage, ImageFormat, Repaint, RgbaImage};
pub use input::{KeyCombo, Modifier, MouseButton};
pub mod action;
pub mod activity;
pub mod audit;
pub mod backend;
mod catch_up;
pub mod changes;
pub mod doctor;
mod doctor_probe;
pub mod effect;
pub mod ids;
mod kept;
mod kept_pixels;
pub mod limits;
mod look;
mod looked;
pub mod model;
pub mod observe;
pub mod outline;
pub mod output;
pub mod person;
mod person_gui;
pub mod policy;
pub mod service;
mod settle;
pub mod space;
pub mod state;
pub mod state_dir;
pub mod states;
mod step;
pub mod text;
pub mod verify;
pub mod worker;

pub use activity::{Activity, ActivityEvent, Reach};
pub use backend::{ActionOutcome, BackendAction, BackendConnector, Check, DesktopBackend, NoGui, Target};
pub use limits::Limits;
pub use model::{BackendInfo, Element, ObserveRequest, RawElement, Screenshot, Snapshot, WindowInfo};
pub use output::{
    ActionOutput, ActionRequest, CoordinateSpace, FrameOutput, FrameRequest, HumanActionRequest, ListOutput,
    ObserveAfter, ScreenshotInfo, StateOutput, StateRequest,
};
pub use service::{GuiService, LocalGui};
pub use space::Space;
pub use state::{ElementRef, StateStore};
