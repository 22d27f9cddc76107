//! The async runtime behind the blocking FileIO calls: object_store is async, the core's
//! readers and writers are blocking (they run on Spark's Python worker threads and on the
//! planner's pool), so each object-store request is driven by `block_on` on a small shared
//! runtime. A forked child (Python multiprocessing, Spark's worker daemon) gets its own.

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, ErrorKind, Result};

struct Shared {
    pid: u32,
    rt: Arc<tokio::runtime::Runtime>,
}

fn shared() -> Result<Arc<tokio::runtime::Runtime>> {
    static RT: OnceLock<Mutex<Option<Shared>>> = OnceLock::new();
    let mut guard = RT.get_or_init(|| Mutex::new(None)).lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if let Some(s) = guard.as_ref().filter(|s| s.pid == pid) {
        return Ok(s.rt.clone());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("icefloe-io")
        .enable_all()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, "cannot start the I/O runtime").with_source(e))?;
    let rt = Arc::new(rt);
    // The parent's runtime (threads gone after a fork) is leaked, never dropped: dropping
    // it would wait for threads that do not exist in this process.
    if let Some(old) = guard.replace(Shared { pid, rt: rt.clone() }) {
        if old.pid != pid {
            std::mem::forget(old);
        }
    }
    Ok(rt)
}

/// Runs a future to completion from blocking code.
pub fn block_on<F: Future>(f: F) -> Result<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        // block_on inside a runtime would panic; icefloe never calls it from async code.
        return Err(Error::new(
            ErrorKind::Internal,
            "icefloe's blocking file I/O was called from inside an async runtime",
        ));
    }
    Ok(shared()?.block_on(f))
}

/// The runtime's handle, to spawn uploads from blocking code.
pub fn handle() -> Result<tokio::runtime::Handle> {
    Ok(shared()?.handle().clone())
}
