//! The Wayland window systems of the Linux backend. AT-SPI is shared with X11; what differs is
//! where windows are, how they are captured and how input reaches them:
//!
//! - `gnome/`: GNOME Shell: lsm's Shell extension for the window list (`gnome/setup.rs` installs
//!   it), mutter's remote-desktop and screen-cast API for input and pixels, or the desktop portal
//!   where lsm cannot reach that API (`gnome/portal.rs`).
//! - `kde/`: KDE Plasma: KWin scripts for the window list and raising, the RemoteDesktop portal
//!   for input.
//! - `portal/`: the XDG desktop portal's RemoteDesktop client both use.
//!
//! Shared here: the window list in the extension's format (`shell_windows.rs`, `window_list.rs`),
//! raw input sequences over any remote-input session (`input.rs`), PipeWire frames
//! (`stream_frames.rs`), bounded D-Bus calls (`dbus.rs`), and where AT-SPI coordinates start
//! in a window (`coords.rs`).

pub mod coords;
pub mod dbus;
pub mod gnome;
pub mod input;
pub mod kde;
pub mod portal;
pub mod shell_windows;
pub mod stream_frames;
pub mod window_list;
