//! The Wayland half of the Linux backend. AT-SPI is shared with X11; what differs is where
//! windows are, how they are captured and how input reaches them: on GNOME, lsm's Shell
//! extension for the window list (`gnome_setup.rs` installs it) and mutter's remote-desktop and
//! screen-cast API for input and pixels (or, where lsm cannot reach that API, the desktop portal:
//! `gnome_portal.rs`). The rule that places AT-SPI coordinates in a window is
//! in `coords.rs`.

#[path = "gnome/clipboard.rs"]
pub mod clipboard;
pub mod coords;
pub mod gnome;
#[path = "gnome/portal.rs"]
pub mod gnome_portal;
#[path = "gnome/setup.rs"]
pub mod gnome_setup;
pub mod input;
pub mod kde;
#[path = "kde/kwin.rs"]
pub mod kwin;
#[path = "gnome/mutter.rs"]
pub mod mutter;
pub mod portal;
pub mod shell_windows;
pub mod stream_frames;
pub mod window_list;
