//! How a lost peer becomes an error. timely's network threads panic when a
//! connection breaks ("timely communication error: ..."), and the other
//! threads then panic on a poisoned queue. A panic hook keeps the first such
//! message and says nothing; the thread that waits for the workers sees it
//! and ends the search with it. Every other panic goes to the hook that was
//! there before (a core's panic is caught and reported by cmc as before).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static FAILED: AtomicBool = AtomicBool::new(false);
static STALLED: AtomicBool = AtomicBool::new(false);
static FIRST: Mutex<Option<String>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Records `message` as the run's failure, unless one came first.
pub(crate) fn fail(message: String) {
    let mut first = FIRST.lock().unwrap_or_else(|p| p.into_inner());
    if first.is_none() {
        *first = Some(message);
    }
    FAILED.store(true, Ordering::SeqCst);
}

/// Records that a peer has stalled ([`crate::heartbeat`]): unlike a lost
/// connection, which ends timely's threads, a stall leaves them waiting.
pub(crate) fn stall(message: String) {
    fail(message);
    STALLED.store(true, Ordering::SeqCst);
}

/// Whether a peer has stalled.
pub(crate) fn stalled() -> bool {
    STALLED.load(Ordering::SeqCst)
}

/// The first failure recorded in this process, if any.
pub(crate) fn first() -> Option<String> {
    if !FAILED.load(Ordering::SeqCst) {
        return None;
    }
    FIRST.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Installs the hook, once per process.
pub(crate) fn install_hook() {
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let thread = std::thread::current().name().unwrap_or_default().to_string();
            let timely = message.starts_with("timely communication error")
                || message.starts_with("MergeQueue poisoned")
                || thread.starts_with("timely:send")
                || thread.starts_with("timely:recv");
            if timely {
                // timely names its network threads after the remote process.
                let peer = thread.strip_prefix("timely:recv-").or_else(|| thread.strip_prefix("timely:send-"));
                fail(match peer {
                    Some(p) => format!("lost the connection to process {p} ({message})"),
                    None => format!("{message} (in thread {thread})"),
                });
            } else {
                before(info);
            }
        }));
    });
}

/// Forgets the recorded failure: a new search in this process starts clean.
pub(crate) fn reset() {
    *FIRST.lock().unwrap_or_else(|p| p.into_inner()) = None;
    FAILED.store(false, Ordering::SeqCst);
    STALLED.store(false, Ordering::SeqCst);
}
