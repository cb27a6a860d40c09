//! The Accessibility (AX) calls of the macOS backend: one element's attributes, actions and
//! settable attributes ([`element`]), per-application set-up and raising ([`app`]), each
//! watched application's notifications ([`observer`]), and whether Accessibility is granted
//! ([`trust`]). Compiled for macOS only; what the answers mean is decided in the platform-free
//! modules ([`crate::roles`], [`crate::actions`], [`crate::ax_errors`], [`crate::notifications`]).

pub mod act;
pub mod app;
pub mod context;
pub mod element;
pub mod observer;
pub mod tree;
pub mod trust;
