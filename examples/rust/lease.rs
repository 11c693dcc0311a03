//! lease: a lease server and its clients over `std::net`, written as a
//! protocol programmer writes them, to show a Rust program of the user's
//! own crate checked from `cargo test` (`tests/models/lease.rs` declares
//! it with `#[cmc::model(program = env!("CARGO_BIN_EXE_lease"), ...)]`;
//! cargo builds it as it builds any binary, position-independent).
//!
//! Node 0 grants one lease. Every other node dials it, asks for the lease
//! (`A` and its node number), and on a grant (`G`) holds it for its term
//! (a 5-second sleep, which a TIMEOUT ends), then stops holding it, dials
//! again to release it (`R`), and exits; on a denial (`D`) it exits.
//! The server makes the holder durable (fd 193) before it answers, so a
//! server that crashes and restarts still knows who holds the lease.
//!
//! States on fd 3 (a length byte, then the bytes): the server reports
//! `[0, holder]` (holder 0: nobody), a client `[1, phase]` with phase 0
//! asking, 1 holding, 2 released, 3 denied. The property is that at most
//! one client holds the lease.
//!
//! Planted bug, chosen on the command line (as `args` in the model):
//! `--bug-double-grant` grants the lease whoever holds it.

use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::net::{TcpListener, TcpStream};
use std::os::fd::FromRawFd;

/// The checker's record descriptors: the reported state and the durable
/// record.
const STATE_FD: i32 = 3;
const DURABLE_FD: i32 = 193;

/// Node i listens on 127.0.0.1, port 20000 + i.
const PORT_BASE: u16 = 20000;

/// Writes one record (a length byte, then `bytes`) to `fd`.
fn record(fd: i32, bytes: &[u8]) {
    // SAFETY: fds 3 and 193 are the checker's, open for the whole run; the
    // File is never dropped, so they stay open.
    let mut file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
    let mut out = vec![bytes.len() as u8];
    out.extend_from_slice(bytes);
    file.write_all(&out).expect("a record is written whole");
}

/// The holder the server made durable before it last crashed (0: none, or
/// a first start).
fn recover() -> u8 {
    // SAFETY: as in `record`.
    let mut file = ManuallyDrop::new(unsafe { File::from_raw_fd(DURABLE_FD) });
    let mut buf = [0u8; 2];
    match file.read(&mut buf) {
        Ok(2) if buf[0] == 1 => buf[1],
        _ => 0,
    }
}

fn serve(bug_double_grant: bool) {
    let mut holder = recover();
    record(STATE_FD, &[0, holder]);
    let listener = TcpListener::bind(("127.0.0.1", PORT_BASE)).expect("bind");
    for conn in listener.incoming() {
        let Ok(mut conn) = conn else { continue };
        let mut request = [0u8; 2];
        // A request is one write of two bytes, which one read returns. A
        // TIMEOUT answers a waiting read with the one byte `T` (time
        // passed; nothing to do), and an accept with a connection that
        // carries one: read on. (`read_exact` would keep the `T` in its
        // buffer, a position in the code the reported state does not
        // show, and `--det` finds that.)
        let got = loop {
            match conn.read(&mut request) {
                Ok(1) if request[0] == b'T' => continue,
                other => break other,
            }
        };
        if !matches!(got, Ok(2)) {
            continue;
        }
        let answer = match request {
            [b'A', who] if holder == 0 || bug_double_grant => {
                holder = who;
                record(DURABLE_FD, &[holder]);
                record(STATE_FD, &[0, holder]);
                b'G'
            }
            [b'A', _] => b'D',
            [b'R', who] if who == holder => {
                holder = 0;
                record(DURABLE_FD, &[holder]);
                record(STATE_FD, &[0, holder]);
                b'R'
            }
            _ => b'?',
        };
        let _ = conn.write_all(&[answer]);
    }
}

/// Sends `request` to the server on a new connection; its one-byte answer.
fn ask(request: [u8; 2]) -> Option<u8> {
    let mut conn = TcpStream::connect(("127.0.0.1", PORT_BASE)).ok()?;
    conn.write_all(&request).ok()?;
    let mut answer = [0u8; 1];
    conn.read_exact(&mut answer).ok()?;
    Some(answer[0])
}

fn client(me: u8) {
    record(STATE_FD, &[1, 0]);
    if ask([b'A', me]) != Some(b'G') {
        record(STATE_FD, &[1, 3]);
        return;
    }
    record(STATE_FD, &[1, 1]);
    // The lease's term: a TIMEOUT ends it.
    std::thread::sleep(std::time::Duration::from_secs(5));
    // It stops holding before it tells the server, which may grant the
    // lease again as soon as it hears.
    record(STATE_FD, &[1, 2]);
    let _ = ask([b'R', me]);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let node: u8 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let bug_double_grant = args.iter().any(|a| a == "--bug-double-grant");
    match node {
        0 => serve(bug_double_grant),
        me => client(me),
    }
}
