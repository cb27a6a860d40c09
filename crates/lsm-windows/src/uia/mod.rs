//! UI Automation (Windows only): the client on its own COM thread, the walk of a window's
//! tree through one cache request, and the element actions through patterns.

pub mod act;
pub mod client;
pub mod thread;
pub mod variant;

pub use thread::UiaThread;
