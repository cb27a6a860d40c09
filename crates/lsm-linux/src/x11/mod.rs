//! The X11 window system, in pure Rust over `x11rb` (also XWayland's display): the connection,
//! window list, focus and modal dialogs (`connection.rs`), client-area capture (`capture.rs`:
//! the window's own pixmap through Composite, MIT-SHM in `shm.rs`), pointer input through XTest
//! (`pointer.rs`), redirecting a window for capture without holding the connection while it repaints
//! (`redirect.rs`), whether a captured window was repainted since (`repaints.rs`), and keyboard input (`keys.rs`, typing any Unicode text by temporarily
//! remapping spare keycodes of the cached mapping in `keymap.rs`). Why a display cannot be
//! opened is said in `display_error.rs`.
//!
//! Every request goes to a local server, so replies are quick; what could block forever
//! (the connect, waits for focus) is bounded explicitly.

mod capture;
mod connection;
mod display_error;
mod keymap;
mod keys;
mod pointer;
mod redirect;
mod repaints;
mod shm;
mod watches;

pub use capture::{minimized_error, Capture, Gap, REPAINT_POLL, REPAINT_WAIT};
pub use connection::X11;
pub use keymap::Stroke;
pub use redirect::PendingRepaint;
