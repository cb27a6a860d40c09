//! The Win32 calls (Windows only): they gather what the platform-free modules decide on.

pub mod backend;
pub mod capture;
pub mod input;
pub mod list;
pub mod ontop;
pub mod wgc;

pub use backend::WindowsConnector;
