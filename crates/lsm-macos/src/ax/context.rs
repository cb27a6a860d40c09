//! What the Accessibility worker thread owns: one application element per process (each with
//! its messaging timeout), the elements of recent walks under their handles, and which
//! processes were asked to build their trees. Everything here runs on that one thread
//! ([`lsm_core::worker::Worker`]); nothing in it crosses threads.

use super::app::Awakened;
use super::element::{AxElement, AxValue};
use super::observer::Observers;
use crate::ax_errors::AxFailure;
use crate::geometry::{GlobalPoint, PointSize};
use crate::join::AxWindow;
use crate::registry::Registry;
use std::collections::HashMap;
use std::time::Duration;

/// How long one Accessibility message to an application may take: a hung application costs
/// this once per call, then the call stops reading it.
pub const MESSAGE_TIMEOUT: Duration = Duration::from_millis(1500);

/// The attributes of a window read for the window list, in one message.
pub const WINDOW_ATTRIBUTES: &[&str] = &[
    "AXTitle",
    "AXPosition",
    "AXSize",
    "AXMinimized",
    "AXMain",
    "AXFocused",
    "AXSubrole",
    "AXModal",
];

/// One of an application's windows as Accessibility describes it, with the handle of its element.
#[derive(Debug, Clone, PartialEq)]
pub struct AxWindowRead {
    pub handle: String,
    pub window: AxWindow,
}

#[derive(Default)]
pub struct AxContext {
    apps: HashMap<i32, AxElement>,
    pub awakened: Awakened,
    pub elements: Registry<AxElement>,
    /// The notifications of the applications whose windows were observed.
    observers: Observers,
    /// What the first contact with a process did (it was asked to build its tree), kept until
    /// the first observation of one of its windows says it.
    first_contact: HashMap<i32, String>,
}

impl AxContext {
    /// The application element of a process, made once.
    pub fn app(&mut self, pid: i32) -> AxElement {
        self.apps
            .entry(pid)
            .or_insert_with(|| AxElement::application(pid, MESSAGE_TIMEOUT))
            .clone()
    }

    /// Forgets processes that are gone (their elements answer nothing any more).
    pub fn keep_only(&mut self, live: &[i32]) {
        self.apps.retain(|pid, _| live.contains(pid));
        self.first_contact.retain(|pid, _| live.contains(pid));
        self.observers.keep_only(live);
    }

    /// Watches the application's notifications (the settle signal) from its first observed
    /// window on. A note comes back the first time it is left without them.
    pub fn watch(&mut self, pid: i32, name: &str) -> Option<String> {
        let app = self.app(pid);
        self.observers.ensure(pid, &app, name)
    }

    /// The application's windows (`AXWindows`), each read in one message and kept in the
    /// registry. The first time the application is asked to build its tree, the note saying so
    /// waits for [`AxContext::take_first_contact_note`].
    pub fn windows_of(&mut self, pid: i32) -> Result<Vec<AxWindowRead>, AxFailure> {
        let app = self.app(pid);
        if let Some(note) = self.awakened.ensure(&app, pid) {
            self.first_contact.insert(pid, note);
        }
        let windows = match app.attribute("AXWindows")? {
            AxValue::Elements(w) => w,
            _ => Vec::new(),
        };
        let mut read = Vec::with_capacity(windows.len());
        for (index, w) in windows.into_iter().enumerate() {
            let values = match w.attributes(WINDOW_ATTRIBUTES) {
                Ok(v) => v,
                // A window that closed while being read is simply not there.
                Err(AxFailure::Gone) => continue,
                Err(e) => return Err(e),
            };
            let text = |i: usize| {
                values
                    .get(i)
                    .and_then(|v| v.text())
                    .unwrap_or_default()
                    .to_string()
            };
            let flag = |i: usize| values.get(i).and_then(|v| v.flag()).unwrap_or(false);
            let point = |i: usize| match values.get(i) {
                Some(AxValue::Point(x, y)) => Some(GlobalPoint { x: *x, y: *y }),
                _ => None,
            };
            let size = |i: usize| match values.get(i) {
                Some(AxValue::Size(width, height)) => Some(PointSize {
                    width: *width,
                    height: *height,
                }),
                _ => None,
            };
            let subrole = text(6);
            read.push(AxWindowRead {
                handle: self.elements.keep(w),
                window: AxWindow {
                    index,
                    title: text(0),
                    position: point(1),
                    size: size(2),
                    minimized: flag(3),
                    main: flag(4),
                    focused: flag(5),
                    subrole: (!subrole.is_empty()).then_some(subrole),
                    modal: flag(7),
                },
            });
        }
        Ok(read)
    }

    /// The note of what the first contact with the process did, once: the first observation of
    /// one of its windows says it (its tree may still be filling in).
    pub fn take_first_contact_note(&mut self, pid: i32) -> Option<String> {
        self.first_contact.remove(&pid)
    }

    /// Whether the application is hidden (Command-H): its windows are off screen, neither
    /// minimized nor on another Space.
    pub fn hidden(&mut self, pid: i32) -> Result<bool, AxFailure> {
        Ok(self.app(pid).attribute("AXHidden")?.flag().unwrap_or(false))
    }

    /// The process of the application with the keyboard focus (the frontmost one).
    pub fn frontmost_pid(&mut self) -> Option<i32> {
        let system = AxElement::system_wide(MESSAGE_TIMEOUT);
        match system.attribute("AXFocusedApplication").ok()? {
            AxValue::Element(app) => app.pid(),
            _ => None,
        }
    }
}
