//! Each watched application's Accessibility notifications, the settle signal of the macOS
//! backend: one `AXObserver` per process, registered on the application element for
//! [`WATCHED`] when one of its windows is first observed, its run loop source served by one
//! dedicated thread running a `CFRunLoop`. The callback only records the notification in the
//! [`ActivityLog`] (what it means is decided in [`crate::notifications`]); a registration that
//! fails leaves the application without events (settling then compares observations) and is
//! said once. The observers are owned by the Accessibility worker thread
//! ([`super::context::AxContext`]); the log is shared with the callback and with
//! `DesktopBackend::activity`.

use super::element::{identity_key, AxElement};
use crate::ax_errors::AxFailure;
use crate::notifications::{
    ends_registration, registration, ActivityLog, Next, Registration, DESTROYED, WATCHED,
};
use lsm_core::Activity;
use objc2_application_services::{AXObserver, AXUIElement};
use objc2_core_foundation::{
    kCFRunLoopDefaultMode, CFRetained, CFRunLoop, CFRunLoopRunResult, CFRunLoopSource, CFString,
};
use std::collections::HashMap;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::{mpsc, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Every watched application's events. One per process: the callback has no owner to reach
/// but this (its `refcon` carries only the pid), so nothing it reads can be freed under it.
static LOG: LazyLock<Mutex<ActivityLog>> = LazyLock::new(|| Mutex::new(ActivityLog::default()));

/// The log, whatever a panicking holder left (the log stays consistent between its calls).
fn log() -> MutexGuard<'static, ActivityLog> {
    LOG.lock().unwrap_or_else(|p| p.into_inner())
}

/// The events of the application `pid` so far; `None` when it is not watched.
pub fn activity(pid: i32) -> Option<Activity> {
    log().activity(pid)
}

/// The run loop of the events thread. `CFRunLoopAddSource`, `CFRunLoopWakeUp` and
/// `CFRunLoopSourceInvalidate` may be called from any thread (CFRunLoop.h: run loops are
/// thread-safe for these), which is all the other threads do with it.
struct EventLoop(CFRetained<CFRunLoop>);
// SAFETY: see above; the run loop itself is only run by its own thread.
unsafe impl Send for EventLoop {}
// SAFETY: as for Send.
unsafe impl Sync for EventLoop {}

static EVENT_LOOP: OnceLock<Option<EventLoop>> = OnceLock::new();

/// How long the events thread may take to start.
const THREAD_START: Duration = Duration::from_secs(2);
/// While no observer is added, the run loop has no source and returns at once: the thread
/// waits this long before running it again.
const IDLE: Duration = Duration::from_millis(20);

/// The events thread's run loop, the thread started on first use; `None` if it could not start.
fn event_loop() -> Option<&'static EventLoop> {
    EVENT_LOOP
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("lsm-ax-events".into())
                .spawn(move || {
                    let Some(run_loop) = CFRunLoop::current() else {
                        let _ = tx.send(None);
                        return;
                    };
                    let _ = tx.send(Some(EventLoop(run_loop)));
                    // SAFETY: reading the framework's constant.
                    let mode = unsafe { kCFRunLoopDefaultMode };
                    loop {
                        if CFRunLoop::run_in_mode(mode, 3600.0, false) == CFRunLoopRunResult::Finished {
                            std::thread::sleep(IDLE);
                        }
                    }
                });
            match spawned {
                Ok(_) => rx.recv_timeout(THREAD_START).ok().flatten(),
                Err(_) => None,
            }
        })
        .as_ref()
}

/// The pid carried in an observer's `refcon` (no pointer: nothing to keep alive for it).
fn refcon_of(pid: i32) -> *mut c_void {
    std::ptr::without_provenance_mut(usize::try_from(pid).unwrap_or(0))
}

/// Receives every notification of every observer, on the events thread. Never blocks on
/// anything but the log's lock (held for a few hundred nanoseconds by anyone), never asks the
/// application anything (the sender's key is its hash), and never lets a panic out.
unsafe extern "C-unwind" fn on_notification(
    _observer: NonNull<AXObserver>,
    element: NonNull<AXUIElement>,
    notification: NonNull<CFString>,
    refcon: *mut c_void,
) {
    let at = Instant::now();
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let pid = i32::try_from(refcon.addr()).unwrap_or(0);
        // SAFETY: the framework passes valid objects, alive for the call.
        let (element, notification) = unsafe { (element.as_ref(), notification.as_ref()) };
        let name = notification.to_string();
        let from_app = name == DESTROYED && is_application(element, pid);
        log().record(pid, &name, identity_key(pid, element), from_app, at);
    }));
}

/// Whether `element` is the application element of `pid` (equal elements are `CFEqual`; making
/// an application element asks the application nothing).
fn is_application(element: &AXUIElement, pid: i32) -> bool {
    // SAFETY: creating an application element has no precondition.
    let app = unsafe { AXUIElement::new_application(pid) };
    *element == *app
}

/// One application's observer and its run loop source.
struct Watched {
    _observer: CFRetained<AXObserver>,
    source: CFRetained<CFRunLoopSource>,
}

/// The observers of the watched applications, owned by the Accessibility worker thread.
#[derive(Default)]
pub struct Observers {
    watched: HashMap<i32, Watched>,
}

impl Observers {
    /// Watches the application `pid` (its element `app`, its name `name` for a note) unless it
    /// is watched or failed lately. Returns a note the first time it is left without events.
    pub fn ensure(&mut self, pid: i32, app: &AxElement, name: &str) -> Option<String> {
        self.sweep();
        // The log's guard must be gone before `remove` locks it again.
        let next = log().next(pid, Instant::now());
        match next {
            Next::Nothing => return None,
            // Ended but not swept yet: the process quit, nothing to watch.
            Next::Remove => {
                self.remove(pid);
                return None;
            }
            Next::Register => {}
        }
        let how = self.register(pid, app);
        log().registered(pid, name, &how, Instant::now())
    }

    /// Registers [`WATCHED`] on the application element, each call bounded by its messaging
    /// timeout and the first timeout ending it; on success the run loop source is added to the
    /// events thread's run loop.
    fn register(&mut self, pid: i32, app: &AxElement) -> Registration {
        self.remove_observer(pid);
        let Some(event_loop) = event_loop() else {
            return Registration::Failed("the thread that receives notifications could not start".into());
        };
        let mut out: *mut AXObserver = std::ptr::null_mut();
        // SAFETY: the callback has the signature the framework calls; the out pointer is valid.
        let err = unsafe { AXObserver::create(pid, Some(on_notification), NonNull::from(&mut out)) };
        if let Some(f) = AxFailure::of(err.0) {
            return Registration::Failed(format!("AXObserverCreate failed ({f:?})"));
        }
        let Some(out) = NonNull::new(out) else {
            return Registration::Failed("AXObserverCreate returned no observer".into());
        };
        // SAFETY: a Create call returned a +1 reference, which we take over.
        let observer = unsafe { CFRetained::from_raw(out) };
        let mut answers = Vec::with_capacity(WATCHED.len());
        for &name in WATCHED {
            let cf_name = CFString::from_str(name);
            // SAFETY: valid observer, element and name; the refcon is no pointer.
            let err = unsafe { observer.add_notification(app.raw(), &cf_name, refcon_of(pid)) };
            let answer = match AxFailure::of(err.0) {
                None => Ok(()),
                Some(f) => Err(f),
            };
            let stop = ends_registration(&answer);
            answers.push((name, answer));
            if stop {
                break;
            }
        }
        let how = registration(&answers);
        if matches!(how, Registration::Watching(_)) {
            // SAFETY: a valid observer.
            let source = unsafe { observer.run_loop_source() };
            // SAFETY: reading the framework's constant.
            let mode = unsafe { kCFRunLoopDefaultMode };
            event_loop.0.add_source(Some(&source), mode);
            event_loop.0.wake_up();
            self.watched.insert(
                pid,
                Watched {
                    _observer: observer,
                    source,
                },
            );
        }
        how
    }

    /// Stops watching the application: its source leaves the run loop (a callback running
    /// now finishes: it holds nothing of the observer), the log forgets it.
    pub fn remove(&mut self, pid: i32) {
        self.remove_observer(pid);
        log().forget(pid);
    }

    fn remove_observer(&mut self, pid: i32) {
        if let Some(w) = self.watched.remove(&pid) {
            w.source.invalidate();
        }
    }

    /// Stops watching the applications whose process is gone from the window list.
    pub fn keep_only(&mut self, live: &[i32]) {
        let gone: Vec<i32> = self
            .watched
            .keys()
            .filter(|p| !live.contains(p))
            .copied()
            .collect();
        for pid in gone {
            self.remove(pid);
        }
        self.sweep();
    }

    /// Removes the observers of applications whose element was destroyed (the process quit).
    fn sweep(&mut self) {
        let ended = log().ended();
        for pid in ended {
            self.remove(pid);
        }
    }
}

impl Drop for Observers {
    fn drop(&mut self) {
        let pids: Vec<i32> = self.watched.keys().copied().collect();
        for pid in pids {
            self.remove(pid);
        }
    }
}
