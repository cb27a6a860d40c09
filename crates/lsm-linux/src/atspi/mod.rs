//! The AT-SPI half of the Linux backend, shared by every Linux session (X11, GNOME and KDE on
//! Wayland): the connection to the accessibility bus (`connection.rs`) and what each toolkit
//! answers right on it (`flavor.rs`), the applications on it (`apps.rs`) and their proper names
//! (`app_name.rs`), fast tree walks (`walk.rs`, reading each
//! object with `fetch.rs`, `cache.rs` for `Cache.GetItems` and `list.rs` for huge containers),
//! the first-observation settle (`fresh.rs`), semantic actions (`act.rs`) and reading their
//! effects back, with the accessibility events (`verify.rs`).
//!
//! It knows nothing of any window system: windows reach it only as `crate::window` records,
//! and no file here names X11 or Wayland (tests/layout/check_cycles.py checks that).

mod act;
pub(crate) mod app_name;
mod apps;
mod cache;
mod connection;
mod fetch;
mod flavor;
pub(crate) mod fresh;
mod list;
pub(crate) mod verify;
mod walk;

pub use connection::*;
pub(crate) use flavor::{Flavor, TextMode};
pub use walk::{Skipped, WalkOptions, WalkResult};

#[cfg(test)]
mod tests {
    use super::*;

    // The backend calls these from async_trait methods, which need Send futures.
    #[allow(dead_code)]
    fn futures_are_send(a: &Atspi, r: &ObjRef, o: &WalkOptions) {
        fn send<T: Send>(_: T) {}
        send(a.walk(r, o));
        send(a.applications());
        send(a.frames(r));
        send(a.node(r, CoordKind::Screen, (0, 0)));
        send(a.do_action(r, &["click"], true));
        send(a.set_text(r, "x"));
        send(a.insert_text(r, "x"));
        send(a.set_numeric_value(r, 1.0));
        send(a.grab_focus(r));
        send(Atspi::connect(None));
    }
}
