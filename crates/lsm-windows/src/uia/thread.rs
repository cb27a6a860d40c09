//! The UI Automation client lives on one dedicated COM thread (multi-threaded apartment): the
//! server's async threads never enter COM, and COM is initialised only when the first GUI call
//! needs it. Every job has a time bound: when a job overruns it (an application hung so badly
//! that even UIA's own timeouts did not fire), the caller gets `TIMEOUT` and the thread is
//! abandoned; the next call starts a fresh one, so one hung application costs one timeout.

use super::client::Client;
use lsm_core::{GuiError, GuiResult};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::Duration;
use windows::Win32::System::Com::{CoInitializeEx, CoUninitialize, COINIT_MULTITHREADED};

type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// How long creating the UI Automation client may take.
const START_TIMEOUT: Duration = Duration::from_secs(10);

pub struct UiaThread {
    jobs: Mutex<Option<Sender<Job>>>,
}

impl UiaThread {
    /// Starts the thread and its client. `Err`: why UI Automation cannot be used here.
    pub fn start() -> Result<Self, String> {
        Ok(Self {
            jobs: Mutex::new(Some(spawn()?)),
        })
    }

    /// Runs `job` on the COM thread and waits at most `timeout` for its answer. Call it from a
    /// blocking thread.
    pub fn run<T: Send + 'static>(
        &self,
        timeout: Duration,
        job: impl FnOnce(&mut Client) -> GuiResult<T> + Send + 'static,
    ) -> GuiResult<T> {
        let jobs = {
            let mut slot = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(spawn().map_err(GuiError::unavailable)?);
            }
            slot.clone()
        };
        let Some(jobs) = jobs else {
            return Err(GuiError::backend("the UI Automation thread could not be started"));
        };
        let (answer_tx, answer_rx) = mpsc::sync_channel(1);
        let sent = jobs.send(Box::new(move |client: &mut Client| {
            let _ = answer_tx.send(job(client));
        }));
        if sent.is_err() {
            self.abandon();
            return Err(GuiError::backend(
                "the UI Automation thread had stopped; the next call starts a new one",
            ));
        }
        match answer_rx.recv_timeout(timeout) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => {
                self.abandon();
                Err(GuiError::timeout(format!(
                    "UI Automation (no answer within {} ms; the application may be hung)",
                    timeout.as_millis()
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.abandon();
                Err(GuiError::backend(
                    "the UI Automation thread stopped during the call; the next call starts a new one",
                ))
            }
        }
    }

    /// Leaves the current thread to finish its stuck call alone; it ends when that returns,
    /// as its queue is closed.
    fn abandon(&self) {
        *self.jobs.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

fn spawn() -> Result<Sender<Job>, String> {
    let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
    let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
    std::thread::Builder::new()
        .name("lsm-uia".into())
        .spawn(move || {
            // SAFETY: COM is initialised for this thread's whole life and uninitialised last.
            if let Err(e) = unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) }.ok() {
                let _ = ready_tx.send(Err(format!("COM could not be initialised: {e}")));
                return;
            }
            match Client::new() {
                Ok(mut client) => {
                    let _ = ready_tx.send(Ok(()));
                    while let Ok(job) = jobs_rx.recv() {
                        job(&mut client);
                    }
                    drop(client);
                }
                Err(why) => {
                    let _ = ready_tx.send(Err(why));
                }
            }
            // SAFETY: pairs the CoInitializeEx above; every COM object of this thread is dropped.
            unsafe { CoUninitialize() };
        })
        .map_err(|e| format!("the UI Automation thread could not be started: {e}"))?;
    match ready_rx.recv_timeout(START_TIMEOUT) {
        Ok(Ok(())) => Ok(jobs_tx),
        Ok(Err(why)) => Err(why),
        Err(_) => Err(format!(
            "UI Automation did not start within {} s",
            START_TIMEOUT.as_secs()
        )),
    }
}
