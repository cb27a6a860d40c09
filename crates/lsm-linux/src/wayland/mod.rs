//! The Wayland half of the Linux backend (issue 10, in progress). AT-SPI is shared with X11;
//! what differs is where windows are, how they are captured and how input reaches them. So far:
//! the rule that places AT-SPI coordinates in a window (`coords.rs`), pure and unit-tested.

pub mod coords;
