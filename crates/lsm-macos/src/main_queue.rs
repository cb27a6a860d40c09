//! The main dispatch queue, for the calls Apple allows only there.
//!
//! Text Input Sources (the keyboard layout, `cg::layout`) must run on the main queue: its
//! header says so for applications, and since macOS 11 HIToolbox asserts it
//! (`dispatch_assert_queue` in `islGetInputSourceListWithAdditions`), which kills a process
//! that calls it from another thread, headless command-line tools included. lsm's main thread
//! serves that queue when the binary starts through [`serve_main_queue_while`]; [`run`] sends
//! work there and waits a bounded time, so a main thread that does not serve the queue costs
//! one timeout and a clear refusal, never a hang or a crash. Compiled for macOS only.

use dispatch2::DispatchQueue;
use objc2::MainThreadMarker;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Set while a job sent to the main queue has not started: nothing more is queued behind it
/// (a queue nobody serves would only pile jobs up).
static WAITING: AtomicBool = AtomicBool::new(false);

/// Runs `f` on the main queue and returns its result, or why it could not within `timeout`.
/// On the main thread itself, `f` runs at once. A panic in `f` is caught on the main thread and
/// reported as an error (unwinding out of the queue's callback would abort the process).
pub fn run<T: Send + 'static>(
    timeout: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    if MainThreadMarker::new().is_some() {
        return catch_unwind(AssertUnwindSafe(f)).map_err(|_| "the main-queue job panicked".to_string());
    }
    if WAITING.swap(true, Ordering::SeqCst) {
        return Err(
            "an earlier job on the main dispatch queue has not run yet: lsm's main thread \
                    does not serve the queue"
                .into(),
        );
    }
    let (tx, rx) = mpsc::sync_channel(1);
    DispatchQueue::main().exec_async(move || {
        WAITING.store(false, Ordering::SeqCst);
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(_)) => Err("the main-queue job panicked".into()),
        Err(_) => Err(format!(
            "the main dispatch queue did not answer within {} ms",
            timeout.as_millis()
        )),
    }
}

/// Runs `body` on a new thread while the calling (main) thread serves the main dispatch queue
/// (`dispatch_main`); when `body` returns, the process exits with its code (101, Rust's code
/// for a panic, when it panics). The binary's `main` calls this on macOS, so that
/// [`run`] finds the queue served. Called on another thread, it runs `body` there and exits.
pub fn serve_main_queue_while(body: impl FnOnce() -> i32 + Send + 'static) -> ! {
    if MainThreadMarker::new().is_none() {
        run_then_exit(body)
    }
    // The main thread's stack size, which the async runtime had before it moved here.
    let spawned = std::thread::Builder::new()
        .name("lsm-runtime".into())
        .stack_size(8 << 20)
        .spawn(move || run_then_exit(body));
    match spawned {
        Ok(_) => dispatch2::dispatch_main(),
        Err(e) => {
            eprintln!("lsm: cannot start the runtime thread: {e}");
            std::process::exit(1)
        }
    }
}

fn run_then_exit(body: impl FnOnce() -> i32) -> ! {
    let code = catch_unwind(AssertUnwindSafe(body)).unwrap_or(101);
    std::process::exit(code)
}
