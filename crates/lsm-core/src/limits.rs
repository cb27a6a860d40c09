//! Configurable limits (SPEC §2.2).

use std::time::Duration;

/// The longest settle bound `gui_action` may use (per call or per server).
pub const MAX_SETTLE: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub state_ttl: Duration,
    pub states_per_machine: usize,
    pub actions_per_call: usize,
    pub wait_per_call: Duration,
    pub type_text_bytes: usize,
    pub keys_bytes: usize,
    pub key_combo_parts: usize,
    pub elements_json_bytes: usize,
    pub windows_per_list: usize,
    pub max_elements_default: usize,
    pub max_elements_cap: usize,
    pub max_depth_default: u32,
    pub max_depth_cap: u32,
    pub walk_budget: Duration,
    pub set_value_bytes: usize,
    pub scroll_clicks: i32,
    /// Long-edge cap of an observation's coordinate space and screenshot (0: none). Larger
    /// windows are observed in a uniformly scaled space (see `space::Space`).
    pub max_image_edge: u32,
    /// Longest `gui_state` `query` string, in bytes.
    pub query_bytes: usize,
    /// Default bound of `gui_action`'s wait for the window to settle after its actions.
    pub settle: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            state_ttl: Duration::from_secs(30),
            states_per_machine: 32,
            actions_per_call: 32,
            wait_per_call: Duration::from_secs(30),
            type_text_bytes: 4096,
            keys_bytes: 256,
            key_combo_parts: 16,
            elements_json_bytes: 64 * 1024,
            windows_per_list: 256,
            max_elements_default: 300,
            max_elements_cap: 1000,
            max_depth_default: 12,
            max_depth_cap: 20,
            walk_budget: Duration::from_millis(2500),
            set_value_bytes: 65536,
            scroll_clicks: 100,
            max_image_edge: 1568,
            query_bytes: 256,
            settle: Duration::from_millis(1500),
        }
    }
}
