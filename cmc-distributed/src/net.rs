//! The processes' connections. timely's own set-up retries a connection
//! forever and waits for the others forever; this one has a deadline, and
//! a handshake that refuses a process running another check. Process `p`
//! listens on its own address, connects to every process below it and
//! accepts every one above it, as timely does, twice: one connection per
//! pair is timely's, the other carries the heartbeat ([`Connections`]).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::Error;

/// The first port of the addresses used without a hostfile: process `i`
/// listens on 127.0.0.1:(2101 + i), timely's default.
pub const PORT_BASE: u16 = 2101;

/// Reads a hostfile: one `host:port` per process, in process order; blank
/// lines and lines starting with `#` are skipped. Lines past `processes`
/// are ignored, as timely ignores them; fewer is an error.
pub fn read_hostfile(path: &Path, processes: usize) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Usage(format!("hostfile {}: {e}", path.display())))?;
    let mut addresses = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.split_whitespace().count() != 1 || !line.contains(':') {
            return Err(Error::Usage(format!(
                "hostfile {} line {}: expected one host:port, found `{line}`",
                path.display(),
                n + 1
            )));
        }
        addresses.push(line.to_string());
    }
    if addresses.len() < processes {
        return Err(Error::Usage(format!(
            "hostfile {}: {} addresses for {processes} processes (one host:port per line, in process order)",
            path.display(),
            addresses.len()
        )));
    }
    addresses.truncate(processes);
    Ok(addresses)
}

/// The addresses without a hostfile: every process on this machine.
pub fn local_addresses(processes: usize) -> Vec<String> {
    (0..processes).map(|i| format!("127.0.0.1:{}", PORT_BASE as usize + i)).collect()
}

/// Process `me`'s connections to every other process, by process index
/// (`None` at `me`).
#[derive(Debug)]
pub struct Connections {
    /// timely's: all of the search's traffic.
    pub timely: Vec<Option<TcpStream>>,
    /// The heartbeat's: a byte every half second each way.
    pub heartbeat: Vec<Option<TcpStream>>,
}

/// What a connection is for; the dialer says it in its hello.
const CHANNELS: usize = 2;
const TIMELY: usize = 0;
const HEARTBEAT: usize = 1;

/// Connects process `me` to every other within `timeout`. `digest` names
/// the check (cmc's version, the model, the options, the workers per
/// process): a process whose digest differs is refused, on both sides.
pub fn connect(addresses: &[String], me: usize, timeout: Duration, digest: u64) -> Result<Connections, Error> {
    let deadline = Instant::now() + timeout;
    let own = &addresses[me];
    let listener =
        TcpListener::bind(own).map_err(|e| Error::Connect(format!("process {me}: listening on {own}: {e}")))?;
    listener.set_nonblocking(true).map_err(|e| Error::Connect(format!("{own}: {e}")))?;
    let mut sockets: [Vec<Option<TcpStream>>; CHANNELS] =
        std::array::from_fn(|_| (0..addresses.len()).map(|_| None).collect());
    // (process, channel): timely's connection to a process first.
    let mut to_connect: Vec<(usize, usize)> =
        (0..me).flat_map(|p| (0..CHANNELS).map(move |channel| (p, channel))).collect();
    let mut to_accept = (addresses.len() - me - 1) * CHANNELS;
    let mut last_error = String::new();
    while !to_connect.is_empty() || to_accept > 0 {
        if Instant::now() > deadline {
            let mut missing: Vec<String> = to_connect.iter().map(|&(i, _)| format!("{i} ({})", addresses[i])).collect();
            missing.dedup();
            let mut what = Vec::new();
            if !missing.is_empty() {
                what.push(format!("could not connect to process {}", missing.join(", ")));
            }
            if to_accept > 0 {
                let never: Vec<String> = (me + 1..addresses.len())
                    .filter(|&p| sockets.iter().any(|s| s[p].is_none()))
                    .map(|p| p.to_string())
                    .collect();
                what.push(format!("process {} never connected", never.join(", ")));
            }
            let last = if last_error.is_empty() { String::new() } else { format!(" (last error: {last_error})") };
            return Err(Error::Connect(format!("process {me}: {} within {:?}{last}", what.join("; "), timeout)));
        }
        let mut i = 0;
        while i < to_connect.len() {
            let (p, channel) = to_connect[i];
            match dial(&addresses[p], me, channel, digest, deadline) {
                Ok(s) => {
                    sockets[channel][p] = Some(s);
                    to_connect.remove(i);
                }
                Err(Refusal::Fatal(e)) => return Err(Error::Connect(format!("process {me}: {e}"))),
                Err(Refusal::Retry(e)) => {
                    last_error = format!("{}: {e}", addresses[p]);
                    i += 1;
                }
            }
        }
        match listener.accept() {
            Ok((s, from)) => {
                if let Some((p, channel, s)) = greet(s, me, addresses.len(), digest, &from.to_string())? {
                    // A dialer tries again only once it gave up on its
                    // earlier connection (no answer in time): the newest
                    // is the one it uses.
                    if sockets[channel][p].replace(s).is_none() {
                        to_accept -= 1;
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(Error::Connect(format!("process {me}: accepting on {own}: {e}"))),
        }
    }
    for s in sockets.iter().flatten().flatten() {
        keepalive(s);
    }
    let timely = std::mem::take(&mut sockets[TIMELY]);
    let heartbeat = std::mem::take(&mut sockets[HEARTBEAT]);
    Ok(Connections { timely, heartbeat })
}

enum Refusal {
    Retry(String),
    Fatal(String),
}

/// Connects to a lower process and says who this one is, what the
/// connection is for and what it checks; waits for the same from it, until
/// the deadline (it may still be connecting to processes below it).
fn dial(address: &str, me: usize, channel: usize, digest: u64, deadline: Instant) -> Result<TcpStream, Refusal> {
    let addrs: Vec<_> = address.to_socket_addrs().map_err(|e| Refusal::Retry(e.to_string()))?.collect();
    let mut last = String::from("no address");
    for a in addrs {
        let mut s = match TcpStream::connect_timeout(&a, Duration::from_millis(500)) {
            Ok(s) => s,
            Err(e) => {
                last = e.to_string();
                continue;
            }
        };
        let hello = [(me as u32).to_be_bytes(), (channel as u32).to_be_bytes()].concat();
        let hello = [hello, digest.to_be_bytes().to_vec()].concat();
        let wait = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        s.set_read_timeout(Some(wait)).ok();
        if let Err(e) = s.write_all(&hello) {
            last = e.to_string();
            continue;
        }
        let mut answer = [0u8; 8];
        match s.read_exact(&mut answer) {
            Ok(()) if u64::from_be_bytes(answer) == digest => {
                s.set_read_timeout(None).ok();
                s.set_nodelay(true).ok();
                return Ok(s);
            }
            Ok(()) => return Err(Refusal::Fatal(mismatch(address))),
            // The other side closes without an answer when it refuses us.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(Refusal::Fatal(mismatch(address))),
            Err(e) => last = e.to_string(),
        }
    }
    Err(Refusal::Retry(last))
}

fn mismatch(address: &str) -> String {
    format!(
        "the process at {address} runs another check (a different cmc, model, options or --workers): every \
         process must run the same command but for --process"
    )
}

/// Reads a higher process's hello; answers with this one's digest when it
/// matches. `Ok(None)` for a connection that is not a cmc process's.
fn greet(
    mut s: TcpStream,
    me: usize,
    processes: usize,
    digest: u64,
    from: &str,
) -> Result<Option<(usize, usize, TcpStream)>, Error> {
    s.set_nonblocking(false).ok();
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut hello = [0u8; 16];
    if s.read_exact(&mut hello).is_err() {
        return Ok(None);
    }
    let index = u32::from_be_bytes(hello[..4].try_into().expect("4 bytes")) as usize;
    let channel = u32::from_be_bytes(hello[4..8].try_into().expect("4 bytes")) as usize;
    let theirs = u64::from_be_bytes(hello[8..].try_into().expect("8 bytes"));
    if index <= me || index >= processes || channel >= CHANNELS {
        return Ok(None);
    }
    if theirs != digest {
        return Err(Error::Connect(format!(
            "process {me}: process {index} (from {from}) runs another check (a different cmc, model, options or \
             --workers): every process must run the same command but for --process"
        )));
    }
    s.write_all(&digest.to_be_bytes()).map_err(|e| Error::Connect(format!("process {me}: answering {from}: {e}")))?;
    s.set_read_timeout(None).ok();
    s.set_nodelay(true).ok();
    Ok(Some((index, channel, s)))
}

/// A peer whose host vanishes (no FIN, no RST) would leave a read waiting
/// forever: keepalive probes (after 5 s idle, 1 s apart, 5 of them) and
/// TCP_USER_TIMEOUT (data unacknowledged for 10 s) make that an error,
/// which timely's network threads report.
fn keepalive(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let fd = s.as_raw_fd();
    let set = |level: i32, option: i32, value: i32| {
        // SAFETY: a valid socket, and an int option of the right size.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                option,
                &value as *const i32 as *const libc::c_void,
                std::mem::size_of::<i32>() as libc::socklen_t,
            )
        };
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 5);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 5);
    set(libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, 10_000);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process's hello, as `dial` writes it.
    fn hello(index: u32, channel: u32, digest: u64) -> Vec<u8> {
        [index.to_be_bytes().to_vec(), channel.to_be_bytes().to_vec(), digest.to_be_bytes().to_vec()].concat()
    }

    fn free_address() -> String {
        TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string()
    }

    #[test]
    fn a_dialer_that_connects_again_is_answered_on_its_newest_connection() {
        let zero = free_address();
        let addresses = vec![zero.clone(), free_address()];
        let digest = 0x5eed;
        let acceptor = std::thread::spawn(move || connect(&addresses, 0, Duration::from_secs(20), digest));
        let dial = |channel: u32| loop {
            if let Ok(mut s) = TcpStream::connect(&zero) {
                s.write_all(&hello(1, channel, digest)).unwrap();
                let mut answer = [0u8; 8];
                s.read_exact(&mut answer).unwrap();
                assert_eq!(u64::from_be_bytes(answer), digest);
                return s;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // Process 1 gives up on its first connection and dials again.
        let given_up = dial(0);
        let mut used = dial(0);
        let _heartbeat = dial(1);
        let connections = acceptor.join().unwrap().unwrap();
        let mut timely = connections.timely[1].as_ref().unwrap();
        used.write_all(b"x").unwrap();
        timely.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = [0u8; 1];
        timely.read_exact(&mut got).expect("process 0 reads what process 1 writes on the connection it uses");
        assert_eq!(&got, b"x");
        drop(given_up);
    }
}
