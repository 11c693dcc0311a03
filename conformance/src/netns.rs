//! The private network namespace a native run lives in, and what the gate
//! reads of its TCP sockets.
//!
//! The namespace belongs to the calling thread (`unshare(CLONE_NEWNET)`
//! changes the thread's namespace, not the process's), so that tests on
//! other threads keep theirs and two runs never share a port; the node
//! processes the thread starts inherit it. Each run takes a fresh one, so
//! no socket of an earlier run (a connection in TIME_WAIT on a node's
//! port) is left in it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;

/// Puts the calling thread in a new network namespace, brings its
/// loopback up, and lets its connections carry data in their SYN (TCP
/// Fast Open, `net.ipv4.tcp_fastopen`: a listener's without a cookie
/// and without its own socket option), so that
/// a connection is accepted with what the gate's client sent in it. Needs
/// root (CAP_SYS_ADMIN).
pub fn enter_fresh() -> io::Result<()> {
    // SAFETY: unshare takes no pointer; CLONE_NEWNET affects this thread.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    loopback_up()?;
    // TFO_CLIENT_ENABLE | TFO_SERVER_ENABLE | TFO_SERVER_COOKIE_NOT_REQD
    // | TFO_SERVER_WO_SOCKOPT1, of this thread's namespace. Not
    // TFO_CLIENT_NO_COOKIE (the gate's client sets TCP_FASTOPEN_NO_COOKIE
    // on its own sockets): with it, a node's connect stayed in SYN_SENT.
    std::fs::write("/proc/sys/net/ipv4/tcp_fastopen", "1539")
}

/// `struct ifreq` with the flags member, as SIOCGIFFLAGS and SIOCSIFFLAGS
/// use it (40 bytes on x86-64).
#[repr(C)]
struct IfreqFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    pad: [u8; 22],
}

fn loopback_up() -> io::Result<()> {
    // SAFETY: socket takes no pointer; the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a new descriptor nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfreqFlags { name: [0; libc::IFNAMSIZ], flags: 0, pad: [0; 22] };
    req.name[..2].copy_from_slice(b"lo");
    // SAFETY: req is a valid `struct ifreq` for these two requests, which
    // read its name and read or write its flags.
    unsafe {
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) != 0 {
            return Err(io::Error::last_os_error());
        }
        req.flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &req) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// One line of `/proc/net/tcp`: an IPv4 TCP socket of the namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpSocket {
    /// Local port.
    pub local_port: u16,
    /// Remote port.
    pub remote_port: u16,
    /// The kernel's state number (`TCP_ESTABLISHED` is 1, `TCP_LISTEN` 10).
    pub state: u8,
    /// Bytes sent and not acknowledged (for a listener: its backlog).
    pub tx_queue: u32,
    /// Bytes received and not read (for a listener: its accept queue).
    pub rx_queue: u32,
    /// Its inode (`socket:[N]` in a process's `/proc/PID/fd`).
    pub inode: u64,
}

/// The kernel's TCP states the gate names.
pub mod state {
    /// A connect on its way.
    pub const SYN_SENT: u8 = 2;
    /// A connection being accepted by the kernel.
    pub const SYN_RECV: u8 = 3;
    /// Closed, its FIN not acknowledged.
    pub const FIN_WAIT1: u8 = 4;
    /// Both closed at once, a FIN not acknowledged.
    pub const CLOSING: u8 = 11;
    /// Closed after the peer, its FIN not acknowledged.
    pub const LAST_ACK: u8 = 9;
    /// Listening.
    pub const LISTEN: u8 = 10;
}

/// Parses `/proc/net/tcp` text.
pub fn parse_tcp(text: &str) -> Vec<TcpSocket> {
    let hex_port = |s: &str| s.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (tx, rx) = f.get(4)?.split_once(':')?;
            Some(TcpSocket {
                local_port: hex_port(f.get(1)?)?,
                remote_port: hex_port(f.get(2)?)?,
                state: u8::from_str_radix(f.get(3)?, 16).ok()?,
                tx_queue: u32::from_str_radix(tx, 16).ok()?,
                rx_queue: u32::from_str_radix(rx, 16).ok()?,
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// The IPv4 TCP sockets of the calling thread's namespace.
pub fn tcp_sockets() -> io::Result<Vec<TcpSocket>> {
    Ok(parse_tcp(&std::fs::read_to_string("/proc/thread-self/net/tcp")?))
}

/// Why the network is not quiet, if it is not: a handshake, a FIN or data
/// not yet acknowledged, so on its way to a peer's socket.
pub fn busy(sockets: &[TcpSocket]) -> Option<String> {
    use state::*;
    sockets.iter().find_map(|s| {
        let moving = matches!(s.state, SYN_SENT | SYN_RECV | FIN_WAIT1 | CLOSING | LAST_ACK)
            || (s.state != LISTEN && s.tx_queue != 0);
        moving.then(|| {
            format!(
                "a socket {}:{} -> {} in TCP state {} with {} bytes unacknowledged",
                "127.0.0.1", s.local_port, s.remote_port, s.state, s.tx_queue
            )
        })
    })
}

/// Destroys every TCP socket process `pid` holds (`ss -K`), each sending
/// its peer a reset: the checker's CRASH, a machine's crash, whose peers
/// read what it wrote and then the reset (SEMANTICS, "Connections as Linux
/// keeps them"). Done while the process is stopped, before it is killed:
/// a process's death alone would close them with a FIN. Returns the ports
/// it listened on.
pub fn destroy_sockets_of(pid: i32) -> io::Result<Vec<u16>> {
    let mut inodes = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd"))?.flatten() {
        let link = std::fs::read_link(entry.path()).unwrap_or_default();
        let link = link.to_string_lossy();
        if let Some(n) = link.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']')) {
            inodes.extend(n.parse::<u64>().ok());
        }
    }
    let mut listened = Vec::new();
    for s in tcp_sockets()?.into_iter().filter(|s| inodes.contains(&s.inode)) {
        if s.state == state::LISTEN {
            listened.push(s.local_port);
        }
        let (listening, filter) = if s.state == state::LISTEN {
            ("-l", format!("sport = :{}", s.local_port))
        } else {
            ("-a", format!("sport = :{} and dport = :{}", s.local_port, s.remote_port))
        };
        let out = Command::new("ss")
            .args(["-K", "-t", listening, "-n"])
            .arg(filter)
            .output()
            .map_err(|e| io::Error::other(format!("running ss (iproute2): {e}")))?;
        if !out.status.success() {
            return Err(io::Error::other(format!("ss -K failed: {}", String::from_utf8_lossy(&out.stderr))));
        }
    }
    let left: Vec<TcpSocket> = tcp_sockets()?.into_iter().filter(|s| inodes.contains(&s.inode)).collect();
    if !left.is_empty() {
        return Err(io::Error::other(format!(
            "ss -K left {} socket(s) of process {pid} (a kernel without CONFIG_INET_DIAG_DESTROY?): {left:?}",
            left.len()
        )));
    }
    Ok(listened)
}

/// Destroys every TCP socket on local port `port` that no process holds
/// any more (`ss -K`), as the machine of a crashed node would lose them:
/// its accepted connections' ends, in TIME_WAIT or FIN_WAIT2 once its
/// process is gone, which would keep its next life from binding the port
/// for a minute. A socket a live process holds on the port stays: a node
/// may have bound another node's port (`bind` is honoured), and its
/// connections are not the crashed machine's.
pub fn destroy_port(port: u16) -> io::Result<()> {
    for s in tcp_sockets()?.into_iter().filter(|s| s.local_port == port && s.inode == 0) {
        let out = Command::new("ss")
            .args(["-K", "-t", "-a", "-n"])
            .arg(format!("sport = :{} and dport = :{}", s.local_port, s.remote_port))
            .output()
            .map_err(|e| io::Error::other(format!("running ss (iproute2): {e}")))?;
        if !out.status.success() {
            return Err(io::Error::other(format!("ss -K failed: {}", String::from_utf8_lossy(&out.stderr))));
        }
    }
    let left: Vec<TcpSocket> = tcp_sockets()?.into_iter().filter(|s| s.local_port == port && s.inode == 0).collect();
    if !left.is_empty() {
        return Err(io::Error::other(format!(
            "ss -K left {} socket(s) on port {port} (a kernel without CONFIG_INET_DIAG_DESTROY?): {left:?}",
            left.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_net_tcp_lines_parse() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
           0: 0100007F:4E20 00000000:0000 0A 00000000:00000001 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n\
           1: 0100007F:4E20 0100007F:A1B2 01 00000003:00000000 01:00000014 00000000     0        0 2 1 0 20 4 30 10 -1\n";
        let s = parse_tcp(text);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].local_port, s[0].state, s[0].rx_queue), (20000, state::LISTEN, 1));
        assert_eq!((s[1].remote_port, s[1].state, s[1].tx_queue), (0xa1b2, 1, 3));
        assert_eq!(busy(&s[..1]), None, "a listener's queues are not traffic");
        assert!(busy(&s).is_some_and(|why| why.contains("3 bytes unacknowledged")));
    }
}
