//! The macOS backend of lsm.
//!
//! What it decides is kept apart from the calls that carry it out, so the Linux unit tests run
//! it: [`geometry`] (global points with a top-left origin on several displays, Retina scale,
//! window-relative logical points and back), [`join`] (CoreGraphics' window list joined to each
//! application's Accessibility windows), [`roles`] (AX roles, subroles and attributes to lsm's
//! roles and states), [`actions`] (which AX action or attribute carries out an lsm action),
//! [`keys`] (key names to virtual key codes, text to Unicode key events), [`layout`] (the
//! keyboard layout's key for each character of a combo), [`permissions`]
//! (Accessibility and Screen Recording grants, the login session), [`walk`] (the element
//! walk's limits, timeouts and order over any tree) and [`notifications`] (what each
//! Accessibility notification may have changed, and the record settling reads). The Accessibility, CoreGraphics and
//! ScreenCaptureKit calls come on top of these, compiled for macOS only.

pub mod actions;
pub mod ax_errors;
pub mod capture;
pub mod doctor;
pub mod element;
pub mod geometry;
pub mod join;
pub mod keys;
pub mod layout;
pub mod listing;
pub mod notifications;
pub mod permissions;
pub mod pointer;
pub mod registry;
pub mod roles;
#[cfg(unix)]
pub mod session;
pub mod walk;

#[cfg(target_os = "macos")]
pub mod ax;
#[cfg(target_os = "macos")]
pub mod backend;
#[cfg(target_os = "macos")]
pub mod cg;
#[cfg(target_os = "macos")]
pub mod main_queue;
#[cfg(target_os = "macos")]
pub mod sck;

/// The contract on macOS, requirement by requirement, with the function that carries each out
/// and how far it was checked.
#[doc = include_str!("../CHECKLIST.md")]
pub mod checklist {}
