//! The UI Automation client lives on one dedicated COM thread (multi-threaded apartment): the
//! server's async threads never enter COM, and COM is initialised only when the first GUI call
//! needs it. The thread, its time bound per job and the abandoning of a hung one are lsm-core's
//! [`Worker`]: one hung application costs one timeout, and the next call gets a fresh thread.

use super::client::Client;
use lsm_core::worker::Worker;
use lsm_core::GuiResult;
use std::time::Duration;
use windows::Win32::System::Com::{CoInitializeEx, CoUninitialize, COINIT_MULTITHREADED};

/// COM initialised on the thread that made it, uninitialised when it goes.
struct Apartment;

impl Apartment {
    fn enter() -> Result<Self, String> {
        // SAFETY: COM is initialised for this thread; `Drop` pairs it on the same thread.
        unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) }
            .ok()
            .map(|()| Apartment)
            .map_err(|e| format!("COM could not be initialised: {e}"))
    }
}

impl Drop for Apartment {
    fn drop(&mut self) {
        // SAFETY: pairs the CoInitializeEx of `enter`, on the thread that owns this value.
        unsafe { CoUninitialize() };
    }
}

/// What the COM thread owns. Fields drop in order: the client (every COM object of the
/// thread) before the apartment.
struct OnComThread {
    client: Client,
    _apartment: Apartment,
}

pub struct UiaThread {
    worker: Worker<OnComThread>,
}

impl UiaThread {
    /// Starts the thread and its client. `Err`: why UI Automation cannot be used here.
    pub fn start() -> Result<Self, String> {
        let worker = Worker::new("UI Automation", || {
            let apartment = Apartment::enter()?;
            Ok(OnComThread {
                client: Client::new()?,
                _apartment: apartment,
            })
        });
        worker.start().map_err(|e| e.message)?;
        Ok(Self { worker })
    }

    /// Runs `job` on the COM thread and waits at most `timeout` for its answer. Call it from a
    /// blocking thread.
    pub fn run<T: Send + 'static>(
        &self,
        timeout: Duration,
        job: impl FnOnce(&mut Client) -> GuiResult<T> + Send + 'static,
    ) -> GuiResult<T> {
        self.worker.run(timeout, move |on| job(&mut on.client))
    }
}
