//! Runs each input on one worker thread with the CLI's stack (1 GiB) and a
//! time bound: a panic comes back as `Panic`, an input that takes longer
//! than the bound as `Hang`. A stack overflow aborts the process (Rust
//! cannot catch it), which fails the test or stops the long run; the long
//! run writes each input to a file before trying it, so the input that
//! killed it is kept.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

pub enum Ran<T> {
    Done(T),
    Panic(String),
    Hang,
}

pub struct Worker<J, T> {
    jobs: Sender<J>,
    results: Receiver<Result<T, String>>,
    thread: std::thread::JoinHandle<()>,
}

impl<J: Send + 'static, T: Send + 'static> Worker<J, T> {
    /// `make` runs on the worker thread and builds the handler (so that an
    /// OpenCL context is created and used on one thread).
    pub fn spawn<H, M>(make: M) -> Worker<J, T>
    where
        H: FnMut(J) -> T,
        M: FnOnce() -> H + Send + 'static,
    {
        let (jobs, job_rx) = channel::<J>();
        let (res_tx, results) = channel();
        let thread = std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn(move || {
                let mut h = make();
                for j in job_rx {
                    let r = catch_unwind(AssertUnwindSafe(|| h(j))).map_err(|p| {
                        p.downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "(no message)".into())
                    });
                    if res_tx.send(r).is_err() {
                        break;
                    }
                }
            })
            .expect("a worker thread");
        Worker { jobs, results, thread }
    }

    /// Ends the worker and waits until it has dropped its handler.
    pub fn finish(self) {
        drop(self.jobs);
        let _ = self.thread.join();
    }

    /// Runs one job within `limit`. After `Hang` the worker is still busy:
    /// the caller stops using it.
    pub fn run(&self, job: J, limit: Duration) -> Ran<T> {
        if self.jobs.send(job).is_err() {
            return Ran::Panic("the worker thread is gone".into());
        }
        match self.results.recv_timeout(limit) {
            Ok(Ok(t)) => Ran::Done(t),
            Ok(Err(msg)) => Ran::Panic(msg),
            Err(RecvTimeoutError::Timeout) => Ran::Hang,
            Err(RecvTimeoutError::Disconnected) => Ran::Panic("the worker thread died".into()),
        }
    }
}
