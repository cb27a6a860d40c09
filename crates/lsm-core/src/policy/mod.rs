//! Which windows the model may observe and act on, per machine (docs/policy.md): a file in the
//! state directory and command-line shortcuts, enforced by the machine's own `LocalGui` before
//! anything is read or sent, whatever face (MCP, worker link) the call came through.

pub mod enforce;
pub mod file;
pub mod live;
pub mod rules;

pub use enforce::{ask_reason, enforce, enforce_approved, Intent};
pub use file::{flag_rules, parse, FILE_NAME};
pub use live::{default_path, LivePolicy};
pub use rules::{Access, Decision, Pattern, Policy, Rule};
