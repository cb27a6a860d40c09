//! Remote desktops (SPEC §6): workers connect out to the controller over WebSocket (TLS, with
//! the controller's certificate pinned), authenticate with an enrolled token, and serve the
//! `GuiService` calls the controller forwards. Screenshots travel as checksummed binary frames.

pub mod controller;
pub mod creds;
pub mod liveness;
pub mod proto;
pub mod tls;
pub mod worker;

pub use controller::{Controller, RemoteMachine};
pub use creds::{constant_time_eq, default_state_dir, StateDir};
pub use worker::{TokenSource, WorkerConfig};
