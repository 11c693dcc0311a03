//! A stalled peer becomes an error. A process that is alive but does not
//! run (stopped with SIGSTOP, swapping, its host overloaded) keeps its
//! connections open, and its kernel answers TCP's keepalive: timely's
//! workers would wait for it forever. Every process therefore sends every
//! other a byte every half second ([`BEAT`]), from a thread of its own, on
//! a connection of its own ([`crate::net::Connections::heartbeat`]); a peer
//! from which nothing has come for the peer timeout is a failure of the
//! search.
//!
//! Only silence is a failure here: a heartbeat connection that closes or
//! breaks ends its thread quietly, because a peer that finished its search
//! closes it, and one that crashed breaks timely's connection too, which
//! reports it ([`crate::failure`]). A thread that ends so shuts its
//! connection down, so that the peer reads its end rather than a silence
//! it would take for a stall.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::failure;

/// How often a process sends its byte, and wakes to look at the time.
pub(crate) const BEAT: Duration = Duration::from_millis(500);

/// [`crate::PEER_TIMEOUT_MIN`].
pub(crate) const PEER_TIMEOUT_MIN: Duration = Duration::from_secs(2);

/// The heartbeat threads of one search; dropping it stops them and closes
/// their connections.
pub(crate) struct Heartbeat {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// The threads' connections, to shut them down: that wakes the
    /// threads at once.
    sockets: Vec<TcpStream>,
}

/// Starts a thread per peer: it beats, and records a failure when the peer
/// has been silent for `timeout`.
pub(crate) fn start(sockets: Vec<Option<TcpStream>>, timeout: Duration) -> Result<Heartbeat, String> {
    // Built as it goes, so that a failure part way drops it, which stops
    // the threads already started.
    let mut heartbeat = Heartbeat { stop: Arc::new(AtomicBool::new(false)), threads: Vec::new(), sockets: Vec::new() };
    for (peer, socket) in sockets.into_iter().enumerate() {
        let Some(socket) = socket else { continue };
        let clone = socket.try_clone().map_err(|e| format!("the heartbeat's connection to process {peer}: {e}"))?;
        heartbeat.sockets.push(clone);
        let stop = heartbeat.stop.clone();
        let thread = std::thread::Builder::new()
            .name(format!("cmc:heartbeat-{peer}"))
            .spawn(move || {
                beat(&socket, peer, timeout, &stop);
                socket.shutdown(Shutdown::Both).ok();
            })
            .map_err(|e| format!("starting the heartbeat to process {peer}: {e}"))?;
        heartbeat.threads.push(thread);
    }
    Ok(heartbeat)
}

/// Beats until stopped, until the connection ends or breaks, or until the
/// peer has been silent for `timeout`.
fn beat(mut socket: &TcpStream, peer: usize, timeout: Duration, stop: &AtomicBool) {
    if socket.set_write_timeout(Some(BEAT)).is_err() {
        return;
    }
    let mut heard = Instant::now();
    let mut beaten: Option<Instant> = None;
    let mut buffer = [0u8; 64];
    while !stop.load(Ordering::SeqCst) {
        // One byte a beat, however often the peer's come.
        if beaten.is_none_or(|b| b.elapsed() >= BEAT) {
            match socket.write(&[0]) {
                Ok(_) => {}
                // A full send buffer: the peer reads nothing; silence decides.
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                // A signal: the next turn of the loop tries again.
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
            beaten = Some(Instant::now());
        }
        let next = BEAT.saturating_sub(beaten.map_or(BEAT, |b| b.elapsed()));
        if socket.set_read_timeout(Some(next.max(Duration::from_millis(1)))).is_err() {
            return;
        }
        match socket.read(&mut buffer) {
            Ok(0) => return,
            Ok(_) => heard = Instant::now(),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => return,
        }
        let silent = heard.elapsed();
        if silent >= timeout && !stop.load(Ordering::SeqCst) {
            failure::stall(format!(
                "process {peer} has sent nothing for {:.1} s (--peer-timeout {}): it is stopped, stalled or its \
                 host is overloaded",
                silent.as_secs_f64(),
                timeout.as_secs_f64()
            ));
            return;
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Each thread's read ends at once, and so does the peer's thread's.
        for socket in &self.sockets {
            socket.shutdown(Shutdown::Both).ok();
        }
        for thread in self.threads.drain(..) {
            thread.join().ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    /// A connected pair of loopback sockets.
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let dialed = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        (dialed, listener.accept().unwrap().0)
    }

    // One test, because the failure it looks at is the process's.
    #[test]
    fn silence_is_a_failure_and_a_closed_or_beating_peer_is_not() {
        failure::reset();
        let timeout = Duration::from_millis(1500);

        // Two heartbeats that hear each other: no failure, however long.
        let (a, b) = pair();
        let one = start(vec![None, Some(a)], timeout).unwrap();
        let two = start(vec![Some(b), None], timeout).unwrap();
        std::thread::sleep(timeout * 2);
        assert_eq!(failure::first(), None);

        // A peer that ends its search closes its end: the other's thread
        // stops quietly.
        drop(two);
        std::thread::sleep(timeout * 2);
        assert_eq!(failure::first(), None);
        drop(one);

        // Stopping is prompt, not a beat later: right after a beat, the
        // thread waits a whole beat for the next.
        let (a, mut peer) = pair();
        let beating = start(vec![None, Some(a)], timeout).unwrap();
        let mut byte = [0u8; 1];
        peer.read_exact(&mut byte).unwrap();
        let stopping = Instant::now();
        drop(beating);
        assert!(stopping.elapsed() < BEAT / 2, "stopping took {:?}", stopping.elapsed());
        peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(peer.read(&mut byte).unwrap(), 0, "the peer reads the end of the connection");

        // A thread that ends while its heartbeat lives (here: the peer
        // closed its side) shuts its connection down: the peer reads the
        // end, not a silence it would take for a stall.
        let (a, mut peer) = pair();
        let beating = start(vec![None, Some(a)], timeout).unwrap();
        peer.shutdown(Shutdown::Write).unwrap();
        peer.set_read_timeout(Some(timeout)).unwrap();
        let mut buffer = [0u8; 64];
        loop {
            match peer.read(&mut buffer) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => panic!("the peer reads no end of the connection: {e}"),
            }
        }
        assert_eq!(failure::first(), None);
        drop(beating);

        // A peer that answers every byte at once gets one a beat, not a
        // byte for each of its own.
        let (a, mut echo) = pair();
        let beating = start(vec![None, Some(a)], timeout).unwrap();
        let started = Instant::now();
        let mut got = 0usize;
        echo.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        while started.elapsed() < Duration::from_secs(2) {
            let mut buffer = [0u8; 4096];
            if let Ok(n) = echo.read(&mut buffer) {
                got += n;
                echo.write_all(&buffer[..n]).unwrap();
            }
        }
        assert!((2..=6).contains(&got), "{got} beats in 2 s");
        assert_eq!(failure::first(), None);
        drop(beating);

        // A peer whose connection is open but says nothing: a failure
        // naming it, after the timeout.
        let (a, silent) = pair();
        let started = Instant::now();
        let beating = start(vec![None, None, Some(a)], timeout).unwrap();
        while failure::first().is_none() && started.elapsed() < timeout * 4 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let failed = failure::first().expect("a failure");
        assert!(started.elapsed() >= timeout, "{:?}", started.elapsed());
        assert!(failed.starts_with("process 2 has sent nothing for 1."), "{failed}");
        assert!(failed.contains("(--peer-timeout 1.5)"), "{failed}");
        drop(beating);
        drop(silent);
        failure::reset();
    }
}
