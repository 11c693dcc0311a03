//! The program run natively, as a user would run it: one process per node
//! (`PROGRAM NODE ARGS...`), real loopback sockets in a private network
//! namespace, no seccomp, no preload. Fds 3 and 193 are Unix socket pairs
//! whose other ends the gate reads, so it sees every record a node writes,
//! in order; the gate writes a new life's recovery record into fd 193's
//! pair and shuts its side, so the node reads that record and then 0, as
//! the checker answers (a first life reads 0 at once), and a read of fd 3
//! returns 0, as the checker's does.
//!
//! [`Native::drive`] carries out one segment's external action (see
//! [`crate::follow::Drive`]) and waits for quiescence: every node waits
//! with nothing it could still get (`inspect`), or has exited, and no TCP
//! socket of the namespace has a handshake, a FIN or data unacknowledged
//! (so nothing is on its way to a node), twice, a few milliseconds apart,
//! with no node woken in between. Not quiescent within
//! [`QUIESCENCE_MAX`] is an error naming the node and what it is doing.
//! Then it reads what each node wrote on fds 3 and 193 and what the nodes
//! wrote to the gate's client connections.
//!
//! A CRASH is the checker's, a machine's crash: the node is stopped,
//! every TCP socket it holds is destroyed (`ss -K`, which resets each
//! peer: its peers read what it wrote, then ECONNRESET), it is killed,
//! the others reach quiescence, and a new life starts. Then every TCP
//! socket left on the node's port is destroyed too (none should be), as a
//! crashed machine's TCP state goes with it: a process's death alone would
//! leave its connections in TIME_WAIT, and a program that does not set
//! `SO_REUSEADDR` (none of the examples does) would fail to listen again
//! for a minute (EADDRINUSE), which the checker does not model.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cmc::process::{Config, Label, PORT_BASE};

use crate::follow::Drive;
use crate::inspect::{self, Now};
use crate::netns;

/// How long a segment may take to become quiescent.
pub const QUIESCENCE_MAX: Duration = Duration::from_secs(10);

/// How long the gate waits for a wait that ends by itself (a timer).
pub const TIMED_WAIT_MAX: Duration = Duration::from_secs(10);

/// How a native node process ended, if it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeLife {
    /// Running, or waiting.
    Live,
    /// Exited with this status.
    Exited(i32),
    /// Killed by this signal (not the gate's SIGKILL of a CRASH).
    Signaled(i32),
    /// Killed by the gate's CRASH, and not started again yet.
    Down,
}

/// One thing a node did that the gate sees, in order for each descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A life began (START, or the restart of a CRASH).
    Life,
    /// A whole record written to fd 3.
    State(Vec<u8>),
    /// A whole record written to fd 193.
    Durable(Vec<u8>),
}

/// What one node did in a segment, and where it stands at its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeObserved {
    /// How its process stands.
    pub life: NativeLife,
    /// Its latest state record in its current life (empty before one).
    pub state: Vec<u8>,
    /// Its latest durable record, over all its lives.
    pub durable: Option<Vec<u8>>,
    /// Its records and lives in this segment, in order (fd 3's and fd
    /// 193's each in order; the two are read from two sockets).
    pub records: Vec<Record>,
    /// What it wrote to the gate's client connections in this segment, in
    /// their label order.
    pub replies: Vec<u8>,
}

/// A connect of the gate's that Linux refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The node dialled.
    pub node: u8,
    /// The error, as Linux gave it.
    pub error: String,
}

/// What the gate saw in one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// Per node.
    pub nodes: Vec<NodeObserved>,
    /// The gate's own connect, refused.
    pub refused: Option<Refused>,
}

/// What went wrong natively that is no divergence: the gate could not do
/// its part.
#[derive(Debug)]
pub enum NativeError {
    /// A system call or file of the gate's failed.
    Io {
        /// What the gate was doing.
        what: String,
        /// The error.
        error: io::Error,
    },
    /// The nodes were not quiescent in time.
    NotQuiescent {
        /// The node that was not, if a node (else the network).
        node: Option<u8>,
        /// What it was doing.
        detail: String,
        /// How long the gate waited.
        waited: Duration,
    },
    /// The configuration cannot be run natively.
    Setup(String),
}

impl fmt::Display for NativeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NativeError::Io { what, error } => write!(f, "{what}: {error}"),
            NativeError::NotQuiescent { node: Some(n), detail, waited } => {
                write!(f, "node {n} not quiescent after {waited:?}: {detail}")
            }
            NativeError::NotQuiescent { node: None, detail, waited } => {
                write!(f, "the network not quiet after {waited:?}: {detail}")
            }
            NativeError::Setup(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for NativeError {}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> NativeError {
    let what = what.into();
    move |error| NativeError::Io { what, error }
}

struct Node {
    child: Child,
    pidfd: OwnedFd,
    state: UnixStream,
    durable: UnixStream,
    state_partial: Vec<u8>,
    durable_partial: Vec<u8>,
    life: NativeLife,
    last_state: Vec<u8>,
    last_durable: Option<Vec<u8>>,
    records: Vec<Record>,
}

struct Client {
    node: u8,
    stream: TcpStream,
    got: Vec<u8>,
}

/// A program's nodes running natively in a private network namespace of
/// the calling thread.
pub struct Native {
    program: PathBuf,
    /// Each node's arguments after the program's name (`Config::argv_of`).
    argvs: Vec<Vec<String>>,
    /// What each client sends: `Config::request`, or its `requests`.
    request: Vec<u8>,
    requests: Vec<Vec<u8>>,
    /// Each node's working directory.
    dirs: Vec<PathBuf>,
    logs: PathBuf,
    nodes: Vec<Option<Node>>,
    clients: BTreeMap<Label, Client>,
    /// The timer connections, kept open as the model keeps them (its
    /// `t<n>.k` carries one `T` and is never closed by the checker: no
    /// FIN follows the `T`).
    timers: Vec<TcpStream>,
    /// Each node's context switches when the gate last saw it quiescent.
    quiet_switches: Vec<u64>,
}

impl Native {
    /// Enters a fresh network namespace (the calling thread's; needs root)
    /// and prepares `config`'s nodes under `scratch`, which must be empty
    /// or absent: each node's working directory is `config.workdir` (the
    /// gate's own if none), or, with a data directory, a scratch one of
    /// its own holding an empty data directory where the model has it
    /// (inside `config.workdir`), which the node writes for real.
    pub fn new(config: &Config, scratch: &Path) -> Result<Native, NativeError> {
        netns::enter_fresh().map_err(io_err("a private network namespace (unshare -n needs root)"))?;
        std::fs::create_dir_all(scratch).map_err(io_err(format!("creating {}", scratch.display())))?;
        let workdir = match &config.workdir {
            Some(w) => w.clone(),
            None => std::env::current_dir().map_err(io_err("the working directory"))?,
        };
        let mut dirs = Vec::new();
        for n in 0..config.nodes {
            let dir = match &config.data_dir {
                None => workdir.clone(),
                Some(data) => {
                    let canon = |p: &Path| p.canonicalize().map_err(io_err(format!("resolving {}", p.display())));
                    let rel = canon(data)?
                        .strip_prefix(canon(&workdir)?)
                        .map_err(|_| {
                            NativeError::Setup(format!(
                                "data directory {} is not inside the working directory {}",
                                data.display(),
                                workdir.display()
                            ))
                        })?
                        .to_path_buf();
                    let dir = scratch.join(format!("node{n}"));
                    std::fs::create_dir_all(dir.join(&rel))
                        .map_err(io_err(format!("creating {}", dir.join(&rel).display())))?;
                    dir
                }
            };
            dirs.push(dir);
        }
        Ok(Native {
            program: config.program.clone(),
            argvs: (0..config.nodes).map(|n| config.argv_of(n)).collect(),
            request: config.request.clone(),
            requests: config.requests.clone(),
            dirs,
            logs: scratch.to_path_buf(),
            nodes: (0..config.nodes).map(|_| None).collect(),
            clients: BTreeMap::new(),
            timers: Vec::new(),
            quiet_switches: vec![0; config.nodes as usize],
        })
    }

    /// Carries out `drive`, waits for quiescence, and says what the nodes
    /// did.
    pub fn drive(&mut self, drive: &Drive) -> Result<Observed, NativeError> {
        let mut refused = None;
        match *drive {
            Drive::Start => {
                for n in 0..self.nodes.len() as u8 {
                    self.spawn(n, None)?;
                    self.quiesce()?;
                }
            }
            // A node's k-th client sends the k-th of `requests`
            // (`Config::request_of`), in the connection's SYN (TCP Fast
            // Open, `netns::enter_fresh`): the node's accept gives the
            // connection with the request in it, as the model's DELIVER
            // before the node looks, which `follow` takes.
            Drive::Client { node, label } => match self.connect_with(node, label.k) {
                Ok(stream) => {
                    stream.set_nonblocking(true).map_err(io_err("a client connection"))?;
                    self.clients.insert(label, Client { node, stream, got: Vec::new() });
                    self.quiesce()?;
                }
                Err(e) => refused = Some(Refused { node, error: e.to_string() }),
            },
            Drive::TimerConnection { node, addr, port } => {
                match TcpStream::connect_timeout(&SocketAddr::from((addr, port)), Duration::from_secs(5)) {
                    Ok(mut stream) => {
                        stream.write_all(b"T").map_err(io_err(format!("writing T to node {node}")))?;
                        self.timers.push(stream);
                        self.quiesce()?;
                    }
                    Err(e) => refused = Some(Refused { node, error: e.to_string() }),
                }
            }
            Drive::ClientTimeout { node, label } => {
                let c = self
                    .clients
                    .get_mut(&label)
                    .ok_or_else(|| NativeError::Setup(format!("no client connection {label} to node {node}")))?;
                c.stream.write_all(b"T").map_err(io_err(format!("writing T on {label}")))?;
                self.quiesce()?;
            }
            Drive::Timed { node } => {
                self.wait_woken(node)?;
                self.quiesce()?;
            }
            Drive::Crash { node } => {
                // The machine's crash: every socket of the node resets its
                // peer (stopped first, so that it does nothing in between),
                // then the process goes.
                let mut ports = vec![PORT_BASE + node as u16];
                if let Some(n) = self.nodes[node as usize].as_ref()
                    && n.life == NativeLife::Live
                {
                    let pid = n.child.id() as i32;
                    unsafe { libc::kill(pid, libc::SIGSTOP) };
                    ports.extend(
                        netns::destroy_sockets_of(pid)
                            .map_err(io_err(format!("resetting node {node}'s connections at its crash")))?,
                    );
                }
                self.kill(node)?;
                // The others see the node gone (EOF, or a reset) and do what
                // they do; then the ports it listened on are freed as a
                // crashed machine's would be. It is down until its RESTART.
                self.quiesce()?;
                ports.sort_unstable();
                ports.dedup();
                for port in ports {
                    netns::destroy_port(port)
                        .map_err(io_err(format!("freeing node {node}'s port {port} after its crash")))?;
                }
            }
            Drive::Restart { node } => {
                let recovery = self.nodes[node as usize].as_ref().and_then(|n| n.last_durable.clone());
                self.spawn(node, recovery)?;
                self.quiesce()?;
            }
        }
        Ok(self.collect(refused))
    }

    /// A client connection to `node` whose SYN carries the `k`-th
    /// client's request (`TCP_FASTOPEN_CONNECT`: the connect returns at
    /// once, and the first write sends the SYN with the data; refused, the
    /// write fails).
    fn connect_with(&self, node: u8, k: u8) -> io::Result<TcpStream> {
        use std::os::fd::FromRawFd;
        let request = self.requests.get(k as usize).unwrap_or(&self.request);
        // With nothing to send, a plain connect: a deferred one would never
        // send its SYN.
        if request.is_empty() {
            let addr = SocketAddr::from(([127, 0, 0, 1], PORT_BASE + node as u16));
            return TcpStream::connect_timeout(&addr, Duration::from_secs(5));
        }
        // SAFETY: socket takes no pointer; the descriptor is owned at once.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new socket no one else owns.
        let mut stream = unsafe { TcpStream::from_raw_fd(fd) };
        tcp_option_on(fd, libc::TCP_FASTOPEN_CONNECT)?;
        // Its data in the SYN without a cookie (the namespace's listeners
        // take it so: `netns::enter_fresh`).
        tcp_option_on(fd, libc::TCP_FASTOPEN_NO_COOKIE)?;
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: (PORT_BASE + node as u16).to_be(),
            sin_addr: libc::in_addr { s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be() },
            sin_zero: [0; 8],
        };
        // SAFETY: `addr` outlives the call, which reads its size.
        let r = unsafe {
            libc::connect(fd, (&raw const addr).cast(), std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        stream.write_all(request)?;
        Ok(stream)
    }

    /// Starts a life of node `n` whose fd 193 reads `recovery` (length
    /// byte, bytes) and then 0.
    fn spawn(&mut self, n: u8, recovery: Option<Vec<u8>>) -> Result<(), NativeError> {
        let err = |what: &str| io_err(format!("starting node {n}: {what}"));
        let (state_gate, state_node) = UnixStream::pair().map_err(err("socketpair"))?;
        let (durable_gate, durable_node) = UnixStream::pair().map_err(err("socketpair"))?;
        if let Some(r) = &recovery {
            durable_gate
                .try_clone()
                .and_then(|mut d| d.write_all(&[r.len() as u8]).and(d.write_all(r)))
                .map_err(err("writing the recovery record"))?;
        }
        for s in [&state_gate, &durable_gate] {
            s.shutdown(Shutdown::Write).map_err(err("shutdown"))?;
            s.set_nonblocking(true).map_err(err("non-blocking"))?;
        }
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.logs.join(format!("node{n}.log")))
            .map_err(err("its log"))?;
        let log2 = log.try_clone().map_err(err("its log"))?;
        let (s, d) = (state_node.as_raw_fd(), durable_node.as_raw_fd());
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.argvs[n as usize])
            .current_dir(&self.dirs[n as usize])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .env_remove("LD_PRELOAD");
        // SAFETY: between fork and exec the closure calls only
        // async-signal-safe functions (fcntl, dup2, close, prctl) on
        // descriptors the child inherited.
        unsafe {
            cmd.pre_exec(move || {
                // Out of the way first, so that neither lands on the other's
                // target; dup2 clears close-on-exec.
                let s2 = libc::fcntl(s, libc::F_DUPFD, 256);
                let d2 = libc::fcntl(d, libc::F_DUPFD, 256);
                if s2 < 0 || d2 < 0 || libc::dup2(s2, 3) < 0 || libc::dup2(d2, 193) < 0 {
                    return Err(io::Error::last_os_error());
                }
                libc::close(s2);
                libc::close(d2);
                // The gate's thread gone, its nodes go too.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(err(&format!("exec {}", self.program.display())))?;
        drop((state_node, durable_node));
        let pidfd = inspect::pidfd_open(child.id() as i32).map_err(err("pidfd_open"))?;
        let previous = self.nodes[n as usize].take();
        let last_durable = previous.as_ref().and_then(|p| p.last_durable.clone());
        let mut records = previous.map(|p| p.records).unwrap_or_default();
        records.push(Record::Life);
        self.nodes[n as usize] = Some(Node {
            child,
            pidfd,
            state: state_gate,
            durable: durable_gate,
            state_partial: Vec::new(),
            durable_partial: Vec::new(),
            life: NativeLife::Live,
            last_state: Vec::new(),
            last_durable,
            records,
        });
        Ok(())
    }

    /// SIGKILL of node `n`'s process, reaped, and its last records read.
    fn kill(&mut self, n: u8) -> Result<(), NativeError> {
        let node =
            self.nodes[n as usize].as_mut().ok_or_else(|| NativeError::Setup(format!("node {n} not started")))?;
        if node.life == NativeLife::Live {
            node.child.kill().map_err(io_err(format!("SIGKILL of node {n}")))?;
            node.child.wait().map_err(io_err(format!("reaping node {n}")))?;
        }
        node.life = NativeLife::Down;
        drain(node);
        // Down, it has no life, and so no state record (its durable one
        // stays).
        node.last_state.clear();
        // A record half written when it died is not written.
        node.state_partial.clear();
        node.durable_partial.clear();
        Ok(())
    }

    /// Waits until node `n` wakes by itself (its timer, its timeout).
    fn wait_woken(&mut self, n: u8) -> Result<(), NativeError> {
        let node =
            self.nodes[n as usize].as_mut().ok_or_else(|| NativeError::Setup(format!("node {n} not started")))?;
        let pid = node.child.id() as i32;
        // Counted from when the gate last saw it quiescent: its timer may
        // have fired since.
        let before = self.quiet_switches[n as usize];
        let started = Instant::now();
        while inspect::switches(pid) == before && node.child.try_wait().ok().flatten().is_none() {
            if started.elapsed() > TIMED_WAIT_MAX {
                return Err(NativeError::NotQuiescent {
                    node: Some(n),
                    detail: "its wait did not end by itself (a timer, a timeout)".to_string(),
                    waited: started.elapsed(),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Waits until every node is quiescent and the network quiet, twice in
    /// a row a few milliseconds apart with no node woken in between.
    fn quiesce(&mut self) -> Result<(), NativeError> {
        let started = Instant::now();
        let mut pause = Duration::from_micros(200);
        loop {
            let why = match self.busy() {
                None => {
                    let before = self.switches();
                    std::thread::sleep(Duration::from_millis(3));
                    match self.busy() {
                        None if self.switches() == before => {
                            for (n, node) in self.nodes.iter().enumerate() {
                                if let Some(node) = node {
                                    self.quiet_switches[n] = inspect::switches(node.child.id() as i32);
                                }
                            }
                            return Ok(());
                        }
                        None => None,
                        Some(why) => Some(why),
                    }
                }
                Some(why) => Some(why),
            };
            if started.elapsed() > QUIESCENCE_MAX {
                let (node, detail) = why.unwrap_or((None, "nodes kept waking".to_string()));
                return Err(NativeError::NotQuiescent { node, detail, waited: started.elapsed() });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    /// A node, or the network, that is not quiescent, and why.
    fn busy(&mut self) -> Option<(Option<u8>, String)> {
        for (n, slot) in self.nodes.iter_mut().enumerate() {
            let Some(node) = slot.as_mut() else { continue };
            if node.life != NativeLife::Live {
                continue;
            }
            match node.child.try_wait() {
                Ok(Some(status)) => {
                    node.life = match (status.code(), status.signal()) {
                        (Some(code), _) => NativeLife::Exited(code),
                        (None, Some(sig)) => NativeLife::Signaled(sig),
                        (None, None) => NativeLife::Exited(-1),
                    };
                    continue;
                }
                Ok(None) => {}
                Err(e) => return Some((Some(n as u8), format!("waitpid: {e}"))),
            }
            if let Now::Busy(why) = inspect::now(node.child.id() as i32, &node.pidfd) {
                return Some((Some(n as u8), why));
            }
        }
        match netns::tcp_sockets() {
            Ok(sockets) => netns::busy(&sockets).map(|why| (None, why)),
            Err(e) => Some((None, format!("reading /proc/thread-self/net/tcp: {e}"))),
        }
    }

    fn switches(&self) -> Vec<u64> {
        self.nodes
            .iter()
            .flatten()
            .filter(|n| n.life == NativeLife::Live)
            .map(|n| inspect::switches(n.child.id() as i32))
            .collect()
    }

    /// What each node wrote since the last call, and where it stands.
    fn collect(&mut self, refused: Option<Refused>) -> Observed {
        let mut replies: Vec<Vec<u8>> = vec![Vec::new(); self.nodes.len()];
        for c in self.clients.values_mut() {
            let mut buf = [0u8; 4096];
            loop {
                match c.stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => c.got.extend_from_slice(&buf[..k]),
                }
            }
            replies[c.node as usize].append(&mut c.got);
        }
        let nodes = self
            .nodes
            .iter_mut()
            .zip(replies)
            .map(|(slot, replies)| match slot.as_mut() {
                Some(node) => {
                    drain(node);
                    NodeObserved {
                        life: node.life,
                        state: node.last_state.clone(),
                        durable: node.last_durable.clone(),
                        records: std::mem::take(&mut node.records),
                        replies,
                    }
                }
                None => NodeObserved {
                    life: NativeLife::Live,
                    state: Vec::new(),
                    durable: None,
                    records: Vec::new(),
                    replies,
                },
            })
            .collect();
        Observed { nodes, refused }
    }

    /// Each node's log (stdout and stderr, every life), for a report.
    pub fn log(&self, n: u8) -> String {
        let mut text = String::new();
        if let Ok(mut f) = File::open(self.logs.join(format!("node{n}.log"))) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }
}

/// Reads what node `node` has written to fds 3 and 193 and not been read,
/// into its records.
fn drain(node: &mut Node) {
    let mut buf = [0u8; 4096];
    for durable in [false, true] {
        loop {
            let sock = if durable { &mut node.durable } else { &mut node.state };
            let k = match sock.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => k,
            };
            let partial = if durable { &mut node.durable_partial } else { &mut node.state_partial };
            partial.extend_from_slice(&buf[..k]);
            while let Some(&len) = partial.first() {
                let end = 1 + len as usize;
                if partial.len() < end {
                    break;
                }
                let record = partial[1..end].to_vec();
                partial.drain(..end);
                if durable {
                    node.last_durable = Some(record.clone());
                    node.records.push(Record::Durable(record));
                } else {
                    node.last_state = record.clone();
                    node.records.push(Record::State(record));
                }
            }
        }
    }
}

impl Drop for Native {
    fn drop(&mut self) {
        for node in self.nodes.iter_mut().flatten() {
            if node.life == NativeLife::Live && node.child.try_wait().ok().flatten().is_none() {
                let _ = node.child.kill();
                let _ = node.child.wait();
            }
        }
    }
}

/// Sets TCP option `option` of socket `fd` to 1.
fn tcp_option_on(fd: i32, option: libc::c_int) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` outlives the call, which reads its size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            option,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r != 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}
