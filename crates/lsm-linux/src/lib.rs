//! The Linux desktop backend of lsm, in four parts:
//!
//! - `atspi/`: the AT-SPI half shared by every Linux session: elements, tree walks, semantic
//!   actions and reading their effects back, over D-Bus. It knows no window system.
//! - `x11/`: the X11 window system (also XWayland's display): windows, capture and raw input.
//! - `wayland/`: the Wayland window systems: `gnome/`, `kde/`, and the `portal/` client.
//! - `connect.rs` picks the window system and assembles `backend/`, which joins the AT-SPI half
//!   with the window system's half (`windowing.rs`) into one `DesktopBackend`.
//!
//! Beneath them: `window/` (the window record every window system reports, window ids, modal
//! dialogs), `keysyms.rs` (X keysyms, for X11 and GNOME input), `input_timing.rs` (the pauses
//! raw input needs for the toolkits, on every window system), `session/` (finding the
//! graphical session and its D-Bus). `doctor.rs` is `lsm doctor` on Linux. Nothing connects
//! until the first GUI call.

pub mod atspi;
pub mod backend;
mod connect;
pub mod doctor;
mod input_timing;
mod keysyms;
pub mod session;
pub mod wayland;
pub mod window;
mod windowing;
pub mod x11;

pub use connect::LinuxConnector;
