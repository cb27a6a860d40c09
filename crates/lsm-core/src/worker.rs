//! One dedicated thread that owns objects which must not cross threads (macOS Accessibility
//! elements, a Windows COM apartment and its UI Automation client), running jobs sent to it.
//! Every job has a time bound: when one overruns it (an application hung so badly that even the
//! platform's own timeouts did not fire), the caller gets `TIMEOUT` and the thread is abandoned
//! with what it owned; the next job starts a fresh one, so one hung application costs one
//! timeout. Platform-free so the Linux tests run it; the backends give it what to own.

use crate::{GuiError, GuiResult};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Job<C> = Box<dyn FnOnce(&mut C) + Send>;

/// How long making the owned object on a new thread may take.
const START_TIMEOUT: Duration = Duration::from_secs(10);
type Make<C> = Arc<dyn Fn() -> Result<C, String> + Send + Sync>;

/// A thread owning a `C`, made on the thread by `make` when the first job comes.
pub struct Worker<C> {
    name: &'static str,
    make: Make<C>,
    jobs: Mutex<Option<Sender<Job<C>>>>,
}

impl<C: 'static> Worker<C> {
    /// A worker whose thread starts with the first job (headless safety: nothing runs before a
    /// GUI call needs it).
    pub fn new(name: &'static str, make: impl Fn() -> Result<C, String> + Send + Sync + 'static) -> Self {
        Self {
            name,
            make: Arc::new(make),
            jobs: Mutex::new(None),
        }
    }

    /// Starts the thread now (it starts with the first job otherwise): `Err` says why it
    /// cannot run.
    pub fn start(&self) -> GuiResult<()> {
        let mut slot = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(self.spawn()?);
        }
        Ok(())
    }

    /// Runs `job` on the thread and waits at most `timeout` for its answer. Call it from a
    /// blocking thread (it blocks).
    pub fn run<T: Send + 'static>(
        &self,
        timeout: Duration,
        job: impl FnOnce(&mut C) -> GuiResult<T> + Send + 'static,
    ) -> GuiResult<T> {
        let jobs = {
            let mut slot = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(self.spawn()?);
            }
            slot.clone()
        };
        let Some(jobs) = jobs else {
            return Err(GuiError::backend(format!(
                "the {} thread could not be started",
                self.name
            )));
        };
        let (answer_tx, answer_rx) = mpsc::sync_channel(1);
        let sent = jobs.send(Box::new(move |ctx: &mut C| {
            let _ = answer_tx.send(job(ctx));
        }));
        if sent.is_err() {
            self.abandon();
            return Err(GuiError::backend(format!(
                "the {} thread had stopped; the next call starts a new one",
                self.name
            )));
        }
        match answer_rx.recv_timeout(timeout) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => {
                self.abandon();
                Err(GuiError::timeout(format!(
                    "{} (no answer within {} ms; the application may be hung)",
                    self.name,
                    timeout.as_millis()
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.abandon();
                Err(GuiError::backend(format!(
                    "the {} thread stopped during the call; the next call starts a new one",
                    self.name
                )))
            }
        }
    }

    /// Leaves the current thread to finish its stuck job alone; it ends when that returns, as
    /// its queue is closed.
    fn abandon(&self) {
        *self.jobs.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn spawn(&self) -> GuiResult<Sender<Job<C>>> {
        let (tx, rx) = mpsc::channel::<Job<C>>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
        let make = self.make.clone();
        std::thread::Builder::new()
            .name(format!("lsm-{}", self.name.replace(' ', "-")))
            .spawn(move || {
                let mut ctx = match make() {
                    Ok(c) => {
                        let _ = ready_tx.send(Ok(()));
                        c
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                while let Ok(job) = rx.recv() {
                    job(&mut ctx);
                }
            })
            .map_err(|e| GuiError::backend(format!("could not start the {} thread: {e}", self.name)))?;
        match ready_rx.recv_timeout(START_TIMEOUT) {
            Ok(Ok(())) => Ok(tx),
            Ok(Err(reason)) => Err(GuiError::unavailable(reason)),
            Err(mpsc::RecvTimeoutError::Timeout) => Err(GuiError::unavailable(format!(
                "the {} thread did not start within {} s",
                self.name,
                START_TIMEOUT.as_secs()
            ))),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(GuiError::backend(format!(
                "the {} thread ended while starting",
                self.name
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;
    use std::rc::Rc;

    /// Not `Send`, like an Accessibility element: it never leaves the worker's thread.
    struct Owned {
        seen: Rc<Vec<u32>>,
    }

    fn worker() -> Worker<Owned> {
        Worker::new("test", || {
            Ok(Owned {
                seen: Rc::new(Vec::new()),
            })
        })
    }

    #[test]
    fn jobs_share_what_the_thread_owns() {
        let w = worker();
        let secs = Duration::from_secs(5);
        w.run(secs, |o| {
            Rc::make_mut(&mut o.seen).push(1);
            Ok(())
        })
        .expect("first");
        let n = w.run(secs, |o| Ok(o.seen.len())).expect("second");
        assert_eq!(n, 1);
    }

    #[test]
    fn a_hung_job_costs_one_timeout_and_the_next_job_starts_afresh() {
        let w = worker();
        w.run(Duration::from_secs(5), |o| {
            Rc::make_mut(&mut o.seen).push(1);
            Ok(())
        })
        .expect("first");
        let started = std::time::Instant::now();
        let e = w
            .run(Duration::from_millis(100), |_| {
                std::thread::sleep(Duration::from_secs(3));
                Ok(())
            })
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::Timeout);
        assert!(started.elapsed() < Duration::from_secs(1));
        // A fresh thread, with fresh state, answers at once.
        let n = w
            .run(Duration::from_secs(5), |o| Ok(o.seen.len()))
            .expect("after");
        assert_eq!(n, 0);
    }

    #[test]
    fn a_thread_that_cannot_start_says_why() {
        let w: Worker<Owned> = Worker::new("test", || Err("no window server".into()));
        let e = w.run(Duration::from_secs(1), |_| Ok(())).unwrap_err();
        assert_eq!(e.code, ErrorCode::GuiUnavailable);
        assert!(e.message.contains("no window server"));
    }

    #[test]
    fn a_job_error_is_the_answer() {
        let w = worker();
        let e = w
            .run(Duration::from_secs(1), |_| -> GuiResult<()> {
                Err(GuiError::backend("no"))
            })
            .unwrap_err();
        assert_eq!(e.message, "no");
    }
}
