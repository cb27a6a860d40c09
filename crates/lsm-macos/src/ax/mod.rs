//! The Accessibility (AX) calls of the macOS backend: one element's attributes, actions and
//! settable attributes ([`element`]). Compiled for macOS only; what the answers mean is decided
//! in the platform-free modules ([`crate::roles`], [`crate::actions`], [`crate::ax_errors`]).

pub mod element;
