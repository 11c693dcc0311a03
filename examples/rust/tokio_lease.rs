//! tokio_lease: `lease.rs` written on tokio, as a Rust team writes a
//! network service: `#[tokio::main]` on the current-thread runtime, a task
//! per connection, `tokio::time::timeout` on every request and answer, and
//! `tokio::time::sleep` for the lease's term. mio, under tokio, registers
//! every socket with edge-triggered epoll and wakes its runtime through an
//! eventfd; the checker keeps both in the world. `tests/models/tokio_lease.rs`
//! declares it with `#[cmc::model(program = env!("CARGO_BIN_EXE_tokio_lease"), ...)]`.
//!
//! Node 0 grants one lease. Every other node dials it, asks for the lease
//! (`A` and its node number), and on a grant (`G`) holds it for its term
//! (5 s, which a TIMEOUT ends), then stops holding it, dials again to
//! release it (`R`), and exits; on a denial (`D`), or no answer within
//! its timeout, it exits. The server makes the holder durable (fd 193)
//! before it answers, so a server that crashes and restarts still knows
//! who holds the lease.
//!
//! States on fd 3 (a length byte, then the bytes): the server reports
//! `[0, holder]` (holder 0: nobody), a client `[1, phase]` with phase 0
//! asking, 1 holding, 2 released, 3 denied. The property is that at most
//! one client holds the lease.
//!
//! In the models (`tests/models/tokio_lease.rs`) the askers are the
//! checker's clients: node 0 alone, each CLIENT sending one request
//! (`requests`), its answers in the ghost log.
//!
//! Planted bugs, chosen on the command line (as `args` in the model):
//! `--bug-double-grant` grants the lease whoever holds it;
//! `--bug-volatile-holder` does not make the holder durable, so a server
//! that crashed grants it again.

use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

/// The checker's record descriptors: the reported state and the durable
/// record.
const STATE_FD: i32 = 3;
const DURABLE_FD: i32 = 193;

/// Node i listens on 127.0.0.1, port 20000 + i.
const PORT_BASE: u16 = 20000;

/// How long a request or an answer may take.
const PATIENCE: Duration = Duration::from_secs(1);

/// A lease's term.
const TERM: Duration = Duration::from_secs(5);

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

/// The planted bugs.
#[derive(Clone, Copy)]
struct Bugs {
    bug_double_grant: bool,
    bug_volatile_holder: bool,
}

async fn serve(bugs: Bugs) {
    let holder = Arc::new(AtomicU8::new(recover()));
    record(STATE_FD, &[0, holder.load(Ordering::Relaxed)]);
    let listener = TcpListener::bind(("127.0.0.1", PORT_BASE)).await.expect("bind");
    loop {
        let Ok((conn, _)) = listener.accept().await else { continue };
        tokio::spawn(answer(conn, holder.clone(), bugs));
    }
}

/// Reads one request on `conn` and answers it.
async fn answer(mut conn: TcpStream, holder: Arc<AtomicU8>, bugs: Bugs) {
    let mut request = [0u8; 2];
    // A request is one write of two bytes; a client that sends nothing in
    // time is dropped.
    if !matches!(timeout(PATIENCE, conn.read_exact(&mut request)).await, Ok(Ok(_))) {
        return;
    }
    let answer = match request {
        [b'A', who] if holder.load(Ordering::Relaxed) == 0 || bugs.bug_double_grant => {
            holder.store(who, Ordering::Relaxed);
            if !bugs.bug_volatile_holder {
                record(DURABLE_FD, &[who]);
            }
            record(STATE_FD, &[0, who]);
            b'G'
        }
        [b'A', _] => b'D',
        [b'R', who] if who == holder.load(Ordering::Relaxed) => {
            holder.store(0, Ordering::Relaxed);
            if !bugs.bug_volatile_holder {
                record(DURABLE_FD, &[0]);
            }
            record(STATE_FD, &[0, 0]);
            b'R'
        }
        _ => b'?',
    };
    let _ = conn.write_all(&[answer]).await;
}

/// Sends `request` to the server on a new connection; its one-byte answer,
/// if it came in time.
async fn ask(request: [u8; 2]) -> Option<u8> {
    let mut conn = TcpStream::connect(("127.0.0.1", PORT_BASE)).await.ok()?;
    conn.write_all(&request).await.ok()?;
    let mut answer = [0u8; 1];
    timeout(PATIENCE, conn.read_exact(&mut answer)).await.ok()?.ok()?;
    Some(answer[0])
}

async fn client(me: u8) {
    record(STATE_FD, &[1, 0]);
    if ask([b'A', me]).await != Some(b'G') {
        record(STATE_FD, &[1, 3]);
        return;
    }
    record(STATE_FD, &[1, 1]);
    tokio::time::sleep(TERM).await;
    // It stops holding before it tells the server, which may grant the
    // lease again as soon as it hears.
    record(STATE_FD, &[1, 2]);
    let _ = ask([b'R', me]).await;
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    run().await
}

/// The node its arguments name, on whichever runtime `main` started
/// (`tokio_mt_lease.rs` runs it on the multi-thread one).
pub(crate) async fn run() {
    let args: Vec<String> = std::env::args().collect();
    let node: u8 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let bugs = Bugs {
        bug_double_grant: args.iter().any(|a| a == "--bug-double-grant"),
        bug_volatile_holder: args.iter().any(|a| a == "--bug-volatile-holder"),
    };
    match node {
        0 => serve(bugs).await,
        me => client(me).await,
    }
}
