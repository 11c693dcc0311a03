//! thread_lease: a lease server on `std::thread`, one thread per
//! connection, as a Rust service is written without an async runtime
//! (`tests/models/thread_lease.rs` declares it with
//! `#[cmc::model(program = env!("CARGO_BIN_EXE_thread_lease"), ...)]`).
//!
//! Node i listens on port 20000 + i. The main thread accepts, numbers
//! each connection's session, logs it and starts a thread for it; the
//! session's thread reads its requests, two bytes each (`A` and the
//! asker's number), and answers each under the server's mutex: the lease
//! (`G`) to a session when nobody holds it or that session does (asking
//! again is idempotent: a client that retries on its connection keeps
//! its grant), `D` otherwise.
//!
//! States on fd 3 (a length byte, then the bytes): `[0, holder]`, the
//! number the holding session's request gave (0: nobody). The property is
//! that at most one client is granted the lease.
//!
//! Planted bugs, chosen on the command line (as `args` in the model):
//! `--bug-double-grant` grants the lease whoever holds it;
//! `--bug-racy-session` lets a session's thread number itself from the
//! count of sessions, which the main thread moves on only after it has
//! logged the new session. Where the main thread logs before the new
//! thread runs, as in the checker's fixed order of threads, every session
//! has a number of its own; where the new thread runs first, as Linux may
//! run it, two sessions share one, and the second is granted the lease as
//! if it held it. The checker finds it with a thread switch
//! (`thread_switches = 1`) and misses it without.
//! `--bug-split-check` checks that the lease is free and takes it under
//! two locks, with a log line between: where a second session's request
//! arrives while the first session's thread is between the two, as on
//! Linux it may, both are granted. The checker answers a waiting thread
//! between two calls of another only with a thread switch, so it too is
//! found with `thread_switches = 1` and missed without.

use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::net::{TcpListener, TcpStream};
use std::os::fd::FromRawFd;
use std::sync::{Arc, Mutex};
use std::thread;

/// The checker's record descriptor for the reported state.
const STATE_FD: i32 = 3;

/// Node i listens on 127.0.0.1, port 20000 + i.
const PORT_BASE: u16 = 20000;

/// Writes one record (a length byte, then `bytes`) to `fd`.
fn record(fd: i32, bytes: &[u8]) {
    // SAFETY: fd 3 is the checker's, open for the whole run; the File is
    // never dropped, so it stays open.
    let mut file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    let mut out = vec![bytes.len() as u8];
    out.extend_from_slice(bytes);
    file.write_all(&out).expect("a record is written whole");
}

/// The planted bugs.
#[derive(Clone, Copy)]
struct Bugs {
    bug_double_grant: bool,
    bug_racy_session: bool,
    bug_split_check: bool,
}

/// What the server's threads share.
#[derive(Default)]
struct Lease {
    /// The session holding the lease, if one does.
    holder: Option<u64>,
    /// Sessions opened so far.
    sessions: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let node: u16 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let bugs = Bugs {
        bug_double_grant: args.iter().any(|a| a == "--bug-double-grant"),
        bug_racy_session: args.iter().any(|a| a == "--bug-racy-session"),
        bug_split_check: args.iter().any(|a| a == "--bug-split-check"),
    };
    let lease = Arc::new(Mutex::new(Lease::default()));
    record(STATE_FD, &[0, 0]);
    let listener = TcpListener::bind(("127.0.0.1", PORT_BASE + node)).expect("bind");
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let shared = lease.clone();
        if bugs.bug_racy_session {
            // The new thread reads the count before the main thread has
            // moved it on, unless the log comes first.
            thread::spawn(move || {
                let id = shared.lock().expect("not poisoned").sessions;
                session(conn, id, shared, bugs)
            });
            eprintln!("session opened");
            lease.lock().expect("not poisoned").sessions += 1;
        } else {
            let id = {
                let mut l = lease.lock().expect("not poisoned");
                l.sessions += 1;
                l.sessions
            };
            eprintln!("session {id} opened");
            thread::spawn(move || session(conn, id, shared, bugs));
        }
    }
}

/// Answers session `id`'s requests on `conn` until it ends.
fn session(mut conn: TcpStream, id: u64, lease: Arc<Mutex<Lease>>, bugs: Bugs) {
    let mut request = [0u8; 2];
    while conn.read_exact(&mut request).is_ok() {
        let answer = match request {
            [b'A', who] if bugs.bug_split_check => {
                // Checked, logged, then taken: another session's thread
                // may check between the two.
                let free = lease.lock().expect("not poisoned").holder.is_none_or(|h| h == id);
                eprintln!("session {id} asks, the lease free: {free}");
                if free {
                    lease.lock().expect("not poisoned").holder = Some(id);
                    record(STATE_FD, &[0, who]);
                    b'G'
                } else {
                    b'D'
                }
            }
            [b'A', who] => {
                let mut l = lease.lock().expect("not poisoned");
                if l.holder.is_none() || l.holder == Some(id) || bugs.bug_double_grant {
                    l.holder = Some(id);
                    record(STATE_FD, &[0, who]);
                    b'G'
                } else {
                    b'D'
                }
            }
            _ => b'?',
        };
        if conn.write_all(&[answer]).is_err() {
            return;
        }
    }
}
