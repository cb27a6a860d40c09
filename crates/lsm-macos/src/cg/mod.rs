//! The CoreGraphics calls of the macOS backend: the window server's window list and displays,
//! and the Screen Recording preflight ([`windows`]); Quartz input events ([`input`]); the keyboard layout's keys for characters ([`layout`]). Compiled for macOS only; the join of these
//! facts with the Accessibility windows and the coordinate maths are platform-free
//! ([`crate::join`], [`crate::geometry`]).

pub mod input;
pub mod layout;
pub mod session;
pub mod windows;
