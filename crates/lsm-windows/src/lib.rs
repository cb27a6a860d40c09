//! The Windows backend of lsm.
//!
//! What it decides is kept apart from the calls that carry it out, so the Linux unit tests run
//! it: [`dpi`] (physical and logical pixels, window-relative points, SendInput's absolute
//! coordinates over the virtual desktop), [`roles`] (UI Automation control types and properties
//! to lsm's roles and states), [`patterns`] (which UI Automation pattern carries out an action),
//! [`keys`] (key names to virtual keys, text to Unicode input), [`listing`] (which windows are
//! listed, and whether the session has a desktop at all), [`modal`] (modal dialogs from their
//! owner's state, and who gets raw input at a point) and [`frame`] (a window's bounds as drawn
//! on the screen, where no DWM reports them: Wine). The Win32 and UI Automation
//! calls come on top of these, compiled for Windows only.

pub mod doctor;
pub mod dpi;
pub mod element;
pub mod errors;
pub mod frame;
pub mod keys;
pub mod listing;
pub mod modal;
pub mod patterns;
pub mod pixels;
pub mod roles;
pub mod walk;

#[cfg(windows)]
pub mod uia;
#[cfg(windows)]
pub mod win32;
