//! The Win32 calls (Windows only): they gather what the platform-free modules decide on.

pub mod list;
