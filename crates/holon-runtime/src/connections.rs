//! The open connections: at most a fixed number at once, each knowing whether a call is
//! running on it, so that an idle or half-sent one can be closed to make room or at shutdown
//! while one with a call running is left to answer.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// The registry of open connections and the cap on their number.
pub(crate) struct Connections {
    slots: Arc<Semaphore>,
    open: Mutex<BTreeMap<u64, Open>>,
    next: AtomicU64,
    /// The most connections open at once since the last time none were.
    peak: AtomicUsize,
}

/// After a burst of at least this many connections has ended, freed memory is handed back to
/// the system (see [`give_back_memory`]).
const BURST: usize = 64;

struct Open {
    calls: Arc<AtomicUsize>,
    close: CancellationToken,
}

impl Connections {
    pub(crate) fn new(max: usize) -> Arc<Connections> {
        Arc::new(Connections {
            slots: Arc::new(Semaphore::new(max.max(1))),
            open: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    /// A slot for a connection just accepted. At the cap, the oldest connection with no call
    /// running is closed first; if every connection has a call running, this waits for one to
    /// end (and the listen queue holds the callers behind it).
    pub(crate) async fn admit(self: &Arc<Connections>) -> Connection {
        let permit = match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.close_oldest_idle();
                // The semaphore is never closed, so acquiring only waits.
                match Arc::clone(&self.slots).acquire_owned().await {
                    Ok(permit) => permit,
                    Err(_) => unreachable!("the connection semaphore is never closed"),
                }
            }
        };
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let calls = Arc::new(AtomicUsize::new(0));
        let close = CancellationToken::new();
        let open = {
            let mut map = self.lock();
            map.insert(
                id,
                Open {
                    calls: Arc::clone(&calls),
                    close: close.clone(),
                },
            );
            map.len()
        };
        self.peak.fetch_max(open, Ordering::Relaxed);
        Connection {
            registry: Arc::clone(self),
            id,
            calls,
            close,
            _permit: permit,
        }
    }

    /// How many connections are open.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    fn close_oldest_idle(&self) {
        if let Some(open) = self
            .lock()
            .values()
            .find(|o| o.calls.load(Ordering::Acquire) == 0 && !o.close.is_cancelled())
        {
            open.close.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Open>> {
        // A panic while holding the lock leaves the map consistent: every operation is one call.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One open connection's slot; dropping it frees the slot.
pub(crate) struct Connection {
    registry: Arc<Connections>,
    id: u64,
    calls: Arc<AtomicUsize>,
    close: CancellationToken,
    _permit: OwnedSemaphorePermit,
}

impl Connection {
    /// Cancelled when the connection must close to make room for another.
    pub(crate) fn evicted(&self) -> &CancellationToken {
        &self.close
    }

    /// Whether a call is running on it (its request fully read and handed to the agent).
    pub(crate) fn busy(&self) -> bool {
        self.calls.load(Ordering::Acquire) > 0
    }

    /// A counter the request handler marks a call with, for as long as the call runs.
    pub(crate) fn calls(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.calls)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let none_left = {
            let mut map = self.registry.lock();
            map.remove(&self.id);
            map.is_empty()
        };
        if none_left && self.registry.peak.swap(0, Ordering::Relaxed) >= BURST {
            give_back_memory();
        }
    }
}

/// Returns the allocator's free memory to the system. glibc keeps what a burst of connections
/// freed (their buffers are spread over its per-thread arenas), so without this a server's RSS
/// only grows with each storm; measured in BENCHMARKS.md. Called only when a burst of at least
/// [`BURST`] connections has fully ended, so ordinary traffic never pays for it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_memory() {
    // SAFETY: malloc_trim only releases free memory; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other allocators (musl, macOS) return memory on their own terms; nothing to do.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back_memory() {}

/// Marks a call as running on its connection while it lives.
pub(crate) struct Running(Arc<AtomicUsize>);

impl Running {
    pub(crate) fn start(calls: &Arc<AtomicUsize>) -> Running {
        calls.fetch_add(1, Ordering::AcqRel);
        Running(Arc::clone(calls))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn at_the_cap_the_oldest_idle_connection_is_closed_and_a_busy_one_kept() {
        let connections = Connections::new(2);
        let busy = connections.admit().await;
        let _running = Running::start(&busy.calls());
        let idle = connections.admit().await;
        assert_eq!(connections.len(), 2);
        let closing = idle.evicted().clone();
        let admitting = tokio::spawn({
            let connections = Arc::clone(&connections);
            async move { connections.admit().await }
        });
        closing.cancelled().await;
        assert!(!busy.evicted().is_cancelled());
        drop(idle);
        let third = admitting.await.expect("admitted");
        assert_eq!(connections.len(), 2);
        assert!(busy.busy() && !third.busy());
    }
}
