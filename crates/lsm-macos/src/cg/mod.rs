//! The CoreGraphics calls of the macOS backend: the window server's window list and displays,
//! and the Screen Recording preflight ([`windows`]); Quartz input events ([`input`]). Compiled for macOS only; the join of these
//! facts with the Accessibility windows and the coordinate maths are platform-free
//! ([`crate::join`], [`crate::geometry`]).

pub mod input;
pub mod session;
pub mod windows;
