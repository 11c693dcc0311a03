//! The supervisor: runs one process per node, answers every modelled system
//! call itself, keeps the [`ProcessWorld`] those calls make, and waits for
//! quiescence (every node blocked in a modelled call or exited).
//!
//! It owns the processes and their kernel objects (pidfds, listeners, the
//! epoll set) and the world's data; it does not decide which action comes
//! next (that is `action`, from the world alone) nor search.
//!
//! Determinism (research, pitfalls 2-7): each notification edits only the
//! calling node's part of the world, or a connection queue only that node
//! writes to, and every identity is (node, per-node counter); so the world
//! at quiescence does not depend on the order in which concurrently running
//! nodes' calls arrive. The clock moves only at TIMEOUT actions, and each
//! node has its own random stream.
//!
//! Held calls: a node in `accept` or in a read of a connection is left
//! blocked in the kernel (its notification is kept, unanswered) until an
//! action answers it. A node silent for `stall_timeout` in a call the filter
//! does not notify is an error naming the node and the call, read from
//! `/proc/PID/syscall`.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::rc::Rc;
use std::time::Instant;

use nix::errno::Errno;
use nix::libc;

use super::action::ProcessAction;
use super::filter::SNAPSHOT_SIGNAL;
use super::forkserver::{self, ForkError, Parked};
use super::notif::{self, Notif};
use super::snapshot::{Pool, ProcIo, Snapshot};
use super::spawn::{self, Spec};
use super::world::{Blocked, Conn, ConnKind, End, Label, Life, ProcessWorld, Side, VFd};
use super::{Config, PORT_BASE, ProcessError, limits, syscalls};

/// The preload's handshake (`cmc-preload`'s `HELLO_*`; kept in step by the
/// test that starts a node with the preload).
const HELLO_REQUEST: u64 = 0x434d_4301;
const HELLO_MAGIC: u64 = 0x6f6c_6568_2d63_6d63;
const HELLO_VERSION: u32 = 2;
const HELLO_BYTES: usize = 40;
/// The `ioctl` on fd 3 a template parks in (`cmc-preload`'s `PARK_REQUEST`).
const PARK_REQUEST: u64 = 0x434d_4302;

/// `getpid()` of node i is `VIRTUAL_PID_BASE + i`: real pids differ on every
/// replay (research, pitfall 3).
pub const VIRTUAL_PID_BASE: i64 = 1000;
/// `CLOCK_REALTIME` at logical second 0 (2026-01-01T00:00:00Z). Monotonic
/// clocks start at 0.
pub const EPOCH_BASE: i64 = 1_767_225_600;
/// A dialer's end of connection k of node n has port `EPHEMERAL_BASE +
/// 256 * n + k`.
pub const EPHEMERAL_BASE: u16 = 40000;
/// One `getrandom` answers at most this much, as the kernel answers at most
/// 32 MiB; the caller loops.
const RANDOM_CALL_MAX: usize = 1 << 20;

/// The kinds of epoll events of a node: its listener is readable, or its
/// process exited (pidfd readable).
const LISTENER: u64 = 0;
const EXIT: u64 = 1;

/// The epoll token of an event of `kind` of node `n`'s process from spawn
/// `serial`: bit 0 the kind, bits 1-8 the node, the rest the spawn.
fn token(serial: u64, n: u8, kind: u64) -> u64 {
    serial << 9 | (n as u64) << 1 | kind
}

fn untoken(token: u64) -> (u64, u8, u64) {
    (token >> 9, (token >> 1) as u8, token & 1)
}

/// Counters for cost measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Node processes started (lives: at START and after each CRASH).
    pub spawns: u64,
    /// Programs exec'd: one template per node and search.
    pub execs: u64,
    /// Seccomp filters installed: only a template installs one.
    pub filters_installed: u64,
    /// Processes forked from a parked one (lives and snapshots).
    pub forks: u64,
    pub notifications: u64,
}

enum Run {
    Running(Instant),
    Held(Notif),
}

/// One running node process: a life of its node.
struct Proc {
    pid: i32,
    /// Which spawn of this supervisor it is: part of its epoll tokens, so
    /// that an event is only ever taken for the process it was registered
    /// for.
    serial: u64,
    pidfd: OwnedFd,
    run: Run,
    io: ProcIo,
}

/// A node's template: its program exec'd once, parked before `main`, the
/// process every life of the node is forked from. Its listener is the
/// node's: every fork of the template notifies on it.
struct Template {
    parked: Parked,
    listener: OwnedFd,
}

/// What to do with a notification.
enum Answer {
    Val(i64),
    Err(i32),
    Continue,
    Hold(Blocked),
    /// Already answered (by ADDFD with SEND), or the node is gone.
    Done,
    /// The preload's hello, accepted (answered 0).
    Hello,
}

/// Runs the nodes of one replay at a time. Must stay on the thread that
/// created it: the nodes' death signal follows the spawning thread.
pub struct Supervisor {
    cfg: Config,
    world: ProcessWorld,
    procs: Vec<Option<Proc>>,
    templates: Vec<Option<Template>>,
    epoll: OwnedFd,
    handoff_parent: OwnedFd,
    handoff_child: OwnedFd,
    devnull: OwnedFd,
    filter: Vec<libc::sock_filter>,
    path: CString,
    argvs: Vec<Vec<CString>>,
    envp: Vec<CString>,
    cwd: CString,
    cpu: Option<usize>,
    old_affinity: Option<libc::cpu_set_t>,
    pub counters: Counters,
    /// The spawns so far: the next process's serial (kept apart from the
    /// public `counters`, which a caller may reset).
    serials: u64,
    /// Not `Send`: the nodes' death signal is tied to the spawning thread,
    /// so a supervisor moved to another thread would see its nodes killed
    /// when the first thread ends.
    _thread_bound: std::marker::PhantomData<*const ()>,
}

fn sys(call: &'static str) -> ProcessError {
    ProcessError::Sys { call, errno: Errno::last() }
}

fn cstring(bytes: &[u8], what: &'static str) -> Result<CString, ProcessError> {
    CString::new(bytes).map_err(|_| ProcessError::Config { key: what, reason: "contains a NUL byte".to_string() })
}

impl Supervisor {
    /// Prepares everything a spawn needs; starts nothing.
    pub fn new(cfg: &Config) -> Result<Supervisor, ProcessError> {
        let program = std::fs::canonicalize(&cfg.program)
            .map_err(|e| ProcessError::Program { path: cfg.program.clone(), reason: e.to_string() })?;
        let path = cstring(program.as_os_str().as_bytes(), "program")?;
        let mut argvs = Vec::new();
        for n in 0..cfg.nodes {
            let mut argv = vec![path.clone(), cstring(n.to_string().as_bytes(), "args")?];
            for a in &cfg.args {
                argv.push(cstring(a.as_bytes(), "args")?);
            }
            argvs.push(argv);
        }
        // The same environment byte for byte on every run: it moves the
        // stack (research, pitfall 7).
        let mut envp = Vec::new();
        if let Some(p) = &cfg.preload {
            let p = std::fs::canonicalize(p)
                .map_err(|e| ProcessError::Preload { path: p.clone(), reason: e.to_string() })?;
            let mut e = b"LD_PRELOAD=".to_vec();
            e.extend_from_slice(p.as_os_str().as_bytes());
            envp.push(cstring(&e, "preload")?);
        }
        let cwd = match &cfg.workdir {
            Some(d) => d.clone(),
            None => {
                std::env::current_dir().map_err(|e| ProcessError::Config { key: "workdir", reason: e.to_string() })?
            }
        };
        let cwd = cstring(cwd.as_os_str().as_bytes(), "workdir")?;
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(sys("epoll_create1"));
        }
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        let mut pair = [0; 2];
        if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, pair.as_mut_ptr()) }
            < 0
        {
            return Err(sys("socketpair"));
        }
        let (handoff_parent, handoff_child) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        let devnull = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if devnull < 0 {
            return Err(sys("open /dev/null"));
        }
        let devnull = unsafe { OwnedFd::from_raw_fd(devnull) };
        let (cpu, old_affinity) = if cfg.pin_cpu { pin_here() } else { (None, None) };
        Ok(Supervisor {
            world: ProcessWorld::new(cfg.nodes, &cfg.budgets),
            procs: (0..cfg.nodes).map(|_| None).collect(),
            templates: (0..cfg.nodes).map(|_| None).collect(),
            cfg: cfg.clone(),
            epoll,
            handoff_parent,
            handoff_child,
            devnull,
            filter: super::filter::program().map_err(|e| ProcessError::Filter(e.to_string()))?,
            path,
            argvs,
            envp,
            cwd,
            cpu,
            old_affinity,
            counters: Counters::default(),
            serials: 0,
            _thread_bound: std::marker::PhantomData,
        })
    }

    /// The world as the nodes have made it so far (quiescent after
    /// [`Supervisor::start`] and [`Supervisor::apply`]).
    pub fn world(&self) -> &ProcessWorld {
        &self.world
    }

    /// The pids of the templates and the running lives.
    pub fn pids(&self) -> Vec<i32> {
        let lives = self.procs.iter().flatten().map(|p| p.pid);
        lives.chain(self.templates.iter().flatten().map(|t| t.parked.pid)).collect()
    }

    /// Kills every node and starts them all afresh, then waits for
    /// quiescence: the initial world. Each node's template is exec'd the
    /// first time; every life is a fork of it.
    pub fn start(&mut self) -> Result<(), ProcessError> {
        self.kill_all();
        self.world = ProcessWorld::new(self.cfg.nodes, &self.cfg.budgets);
        if let Some(dir) = &self.cfg.log_dir {
            for n in 0..self.cfg.nodes {
                // Truncate: each replay's log starts empty (the template
                // holds it open in append mode).
                let _ = std::fs::write(dir.join(format!("node{n}.log")), b"");
            }
        }
        for n in 0..self.cfg.nodes {
            if self.templates[n as usize].is_none() {
                self.boot_template(n)?;
            }
        }
        for n in 0..self.cfg.nodes {
            self.new_life(n)?;
        }
        self.settle()
    }

    /// Execs node `n`'s program under the filter and runs it to its park
    /// before `main`, checking the preload's hello on the way.
    fn boot_template(&mut self, n: u8) -> Result<(), ProcessError> {
        let log = match &self.cfg.log_dir {
            None => None,
            Some(dir) => {
                let path = dir.join(format!("node{n}.log"));
                let file =
                    std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|e| {
                        ProcessError::Config { key: "log_dir", reason: format!("{}: {e}", path.display()) }
                    })?;
                Some(OwnedFd::from(file))
            }
        };
        let spec = Spec {
            path: &self.path,
            argv: &self.argvs[n as usize],
            envp: &self.envp,
            cwd: &self.cwd,
            filter: &self.filter,
            devnull: self.devnull.as_fd(),
            log: log.as_ref().map_or(self.devnull.as_fd(), |l| l.as_fd()),
            handoff_child: self.handoff_child.as_fd(),
            handoff_parent: self.handoff_parent.as_fd(),
            cpu: self.cpu,
            timeout_ms: self.cfg.stall_timeout.as_millis().min(i32::MAX as u128) as i32,
        };
        let s = spawn::spawn(&spec).map_err(|e| ProcessError::Spawn { node: n, step: e.step, errno: e.errno })?;
        self.counters.execs += 1;
        self.counters.filters_installed += 1;
        let since = Instant::now();
        let mut hello = false;
        let parked = loop {
            let left = self.cfg.stall_timeout.saturating_sub(since.elapsed());
            if !forkserver::readable(s.listener.as_fd(), s.pidfd.as_fd(), left) {
                let status = match try_reap(s.pid) {
                    Ok(Some(status)) => status,
                    _ => {
                        let e = stall_error(n, s.pid, since.elapsed().as_secs_f64());
                        kill_and_reap(s.pid, &s.pidfd);
                        return Err(e);
                    }
                };
                let life = life_of(status);
                return Err(ProcessError::MissingPreload {
                    node: n,
                    detail: format!("it ended ({life:?}) before the preload's hello"),
                });
            }
            let notif = match notif::recv(s.listener.as_fd()) {
                Ok(Some(c)) => c,
                Ok(None) => continue,
                Err(errno) => {
                    kill_and_reap(s.pid, &s.pidfd);
                    return Err(ProcessError::NodeSys { node: n, call: "NOTIF_RECV", errno });
                }
            };
            self.counters.notifications += 1;
            let park = notif.nr == libc::SYS_ioctl && notif.args[0] as i32 == 3 && notif.args[1] == PARK_REQUEST;
            if hello && park {
                break notif;
            }
            let answer = if hello {
                Err(ProcessError::Unmodelled {
                    node: n,
                    call: syscalls::describe(notif.nr),
                    detail: "a call between the preload's hello and main".to_string(),
                })
            } else {
                self.before_hello(n, &notif)
            };
            let answer = match answer {
                Ok(a) => a,
                Err(e) => {
                    kill_and_reap(s.pid, &s.pidfd);
                    return Err(e);
                }
            };
            hello |= matches!(answer, Answer::Hello);
            let sent = match answer {
                Answer::Continue => notif::continue_call(s.listener.as_fd(), notif.id),
                Answer::Err(e) => notif::respond(s.listener.as_fd(), notif.id, 0, e),
                _ => notif::respond(s.listener.as_fd(), notif.id, 0, 0),
            };
            if let Err(errno) = sent {
                kill_and_reap(s.pid, &s.pidfd);
                return Err(ProcessError::NodeSys { node: n, call: "NOTIF_SEND", errno });
            }
        };
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token(0, n, LISTENER) };
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, s.listener.as_raw_fd(), &mut ev) } < 0
        {
            let e = ProcessError::NodeSys { node: n, call: "epoll_ctl", errno: Errno::last() };
            kill_and_reap(s.pid, &s.pidfd);
            return Err(e);
        }
        self.templates[n as usize] =
            Some(Template { parked: Parked { pid: s.pid, pidfd: s.pidfd, notif: parked }, listener: s.listener });
        Ok(())
    }

    /// Forks a new life of node `n` from its template and lets it run into
    /// `main`. Its reads of fd 193 return the node's durable record.
    fn new_life(&mut self, n: u8) -> Result<(), ProcessError> {
        let Some(t) = self.templates[n as usize].as_mut() else {
            return Err(ProcessError::NotEnabled { action: format!("a life of node {n}, which has no template") });
        };
        let child = forkserver::fork(t.listener.as_fd(), &mut t.parked, self.cfg.stall_timeout)
            .map_err(|e| fork_error(n, e))?;
        self.counters.forks += 1;
        self.counters.spawns += 1;
        let recovery = match &self.world.nodes[n as usize].durable {
            None => Vec::new(),
            Some(d) => {
                let mut r = vec![d.len() as u8];
                r.extend_from_slice(d);
                r
            }
        };
        let serial = self.watch_exit(n, &child)?;
        // Out of its park: on into main.
        let listener = self.templates[n as usize].as_ref().map(|t| t.listener.as_fd());
        if let Some(l) = listener {
            notif::respond(l, child.notif.id, 0, 0).map_err(|errno| ProcessError::NodeSys {
                node: n,
                call: "NOTIF_SEND",
                errno,
            })?;
        }
        self.procs[n as usize] = Some(Proc {
            pid: child.pid,
            serial,
            pidfd: child.pidfd,
            run: Run::Running(Instant::now()),
            io: ProcIo { recovery, ..ProcIo::default() },
        });
        Ok(())
    }

    /// Takes every node's process out of the supervisor as a snapshot: the
    /// world must be quiescent, so each live one is held in its call.
    /// `None` for a node whose process has exited.
    pub fn park_all(&mut self, live: &Rc<Pool>) -> Result<Vec<Option<Snapshot>>, ProcessError> {
        let mut out = Vec::with_capacity(self.procs.len());
        for n in 0..self.procs.len() {
            let Some(p) = self.procs[n].take() else {
                out.push(None);
                continue;
            };
            self.unregister(&[&p.pidfd]);
            let Run::Held(notif) = p.run else {
                kill_and_reap(p.pid, &p.pidfd);
                return Err(ProcessError::NotEnabled { action: format!("a snapshot of node {n}, which is running") });
            };
            out.push(Some(Snapshot::new(Parked { pid: p.pid, pidfd: p.pidfd, notif }, p.io, live)));
        }
        Ok(out)
    }

    /// Makes `world` the supervisor's, with no process running but a fork
    /// of `snapshot` as node `n`'s, held in the call the snapshot is parked
    /// in: the processes the next action needs.
    pub fn resume(&mut self, world: ProcessWorld, from: Option<(u8, &Snapshot)>) -> Result<(), ProcessError> {
        self.kill_all();
        self.world = world;
        let Some((n, snap)) = from else { return Ok(()) };
        let Some(t) = self.templates[n as usize].as_ref() else {
            return Err(ProcessError::NotEnabled { action: format!("a fork of node {n}, which has no template") });
        };
        let (child, io) = snap.fork(t.listener.as_fd(), self.cfg.stall_timeout).map_err(|e| fork_error(n, e))?;
        self.counters.forks += 1;
        let serial = self.watch_exit(n, &child)?;
        self.procs[n as usize] =
            Some(Proc { pid: child.pid, serial, pidfd: child.pidfd, run: Run::Held(child.notif), io });
        Ok(())
    }

    /// Registers a new process of node `n` for its exit, under a new
    /// serial (returned); kills it if that fails.
    fn watch_exit(&mut self, n: u8, child: &Parked) -> Result<u64, ProcessError> {
        self.serials += 1;
        let serial = self.serials;
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token(serial, n, EXIT) };
        if unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, child.pidfd.as_raw_fd(), &mut ev) } < 0
        {
            let e = ProcessError::NodeSys { node: n, call: "epoll_ctl", errno: Errno::last() };
            kill_and_reap(child.pid, &child.pidfd);
            return Err(e);
        }
        Ok(serial)
    }

    /// Kills every node process and reaps it.
    pub fn kill_all(&mut self) {
        for p in self.procs.iter().flatten() {
            signal(&p.pidfd, libc::SIGKILL);
        }
        for n in 0..self.procs.len() {
            if let Some(p) = self.procs[n].take() {
                reap(p.pid);
                self.retire(p);
            }
        }
    }

    /// Closes a process's pidfd and listener, deleting their epoll
    /// registrations first. Closing alone does not remove them: a
    /// registration lasts as long as the open file description, and a node
    /// that another thread's supervisor is spawning holds copies of every
    /// descriptor of the process until its `close_range` (`spawn` clones
    /// without `CLONE_FILES`). The old process's exit would then be read
    /// as an event of this supervisor's set.
    fn retire(&self, p: Proc) {
        self.unregister(&[&p.pidfd]);
    }

    fn unregister(&self, fds: &[&OwnedFd]) {
        for fd in fds {
            // ENOENT when it was never registered (a failed spawn).
            unsafe {
                libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, fd.as_raw_fd(), std::ptr::null_mut())
            };
        }
    }

    /// Waits until every node is blocked in a modelled call or has exited.
    pub fn settle(&mut self) -> Result<(), ProcessError> {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 16];
        loop {
            let oldest = self
                .procs
                .iter()
                .enumerate()
                .filter_map(|(n, p)| match p.as_ref()?.run {
                    Run::Running(since) => Some((since, n)),
                    Run::Held(_) => None,
                })
                .min();
            let Some((since, n)) = oldest else { return Ok(()) };
            let waited = since.elapsed();
            if waited >= self.cfg.stall_timeout {
                let pid = self.procs[n].as_ref().map_or(0, |p| p.pid);
                return Err(stall_error(n as u8, pid, waited.as_secs_f64()));
            }
            let left = self.cfg.stall_timeout - waited;
            let timeout_ms = left.as_millis().min(i32::MAX as u128) as i32 + 1;
            let got = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), 16, timeout_ms) };
            if got < 0 {
                if Errno::last() == Errno::EINTR {
                    continue;
                }
                return Err(sys("epoll_wait"));
            }
            for ev in &events[..got as usize] {
                let (serial, n, kind) = untoken(ev.u64);
                // An event of a process this supervisor no longer runs (not
                // expected since `retire`, but it must never be taken for
                // its successor) or of a node an earlier event ended. A
                // listener is the node's template's, for every life.
                let life = self.procs.get(n as usize).and_then(Option::as_ref);
                if life.is_none_or(|p| kind == EXIT && p.serial != serial) {
                    continue;
                }
                if kind == EXIT {
                    self.on_exit(n)?;
                } else if ev.events & libc::EPOLLIN as u32 != 0 {
                    self.on_readable(n)?;
                }
            }
        }
    }

    fn on_exit(&mut self, n: u8) -> Result<(), ProcessError> {
        let Some(p) = self.procs[n as usize].as_ref() else { return Ok(()) };
        // Reap only a process that has exited: a blocking wait for a live
        // node, blocked in a call only this thread answers, would never
        // end. Its pid is not reused before it is reaped.
        let status = match try_reap(p.pid) {
            Ok(Some(status)) => status,
            Ok(None) => return Ok(()),
            Err(errno) => return Err(ProcessError::NodeSys { node: n, call: "waitpid", errno }),
        };
        let Some(p) = self.procs[n as usize].take() else { return Ok(()) };
        self.retire(p);
        self.world.node_gone(n, false);
        self.world.nodes[n as usize].life = life_of(status);
        Ok(())
    }

    fn on_readable(&mut self, n: u8) -> Result<(), ProcessError> {
        let (Some(p), Some(t)) = (self.procs[n as usize].as_ref(), self.templates[n as usize].as_ref()) else {
            return Ok(());
        };
        let Some(notif) = notif::recv(t.listener.as_fd()).map_err(|errno| ProcessError::NodeSys {
            node: n,
            call: "NOTIF_RECV",
            errno,
        })?
        else {
            return Ok(());
        };
        self.counters.notifications += 1;
        if notif.pid as i32 != p.pid {
            // Every other process of the node is parked in a held call.
            return Err(ProcessError::Unmodelled {
                node: n,
                call: syscalls::describe(notif.nr),
                detail: format!("a call from process {}, which is not the node's running life", notif.pid),
            });
        }
        let answer = self.handle(n, &notif)?;
        self.answer(n, &notif, answer)
    }

    fn answer(&mut self, n: u8, notif: &Notif, answer: Answer) -> Result<(), ProcessError> {
        let (Some(p), Some(t)) = (self.procs[n as usize].as_mut(), self.templates[n as usize].as_ref()) else {
            return Ok(());
        };
        let listener = t.listener.as_fd();
        let fail = |errno| ProcessError::NodeSys { node: n, call: "NOTIF_SEND", errno };
        match answer {
            Answer::Val(v) => notif::respond(listener, notif.id, v, 0).map_err(fail)?,
            Answer::Err(e) => notif::respond(listener, notif.id, 0, e).map_err(fail)?,
            Answer::Continue => notif::continue_call(listener, notif.id).map_err(fail)?,
            Answer::Hello => notif::respond(listener, notif.id, 0, 0).map_err(fail)?,
            Answer::Hold(b) => {
                p.run = Run::Held(*notif);
                self.world.nodes[n as usize].blocked = b;
                return Ok(());
            }
            Answer::Done => true,
        };
        p.run = Run::Running(Instant::now());
        Ok(())
    }

    fn handle(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let unmodelled = |detail: &str| {
            Err(ProcessError::Unmodelled { node: n, call: syscalls::describe(c.nr), detail: detail.to_string() })
        };
        let vfd = self.world.nodes[n as usize].fds.get(&fd).copied();
        let reserved = fd == 3 || fd == 193;
        Ok(match c.nr {
            libc::SYS_read | libc::SYS_readv | libc::SYS_recvfrom | libc::SYS_recvmsg => self.on_read(n, c, vfd)?,
            libc::SYS_write | libc::SYS_writev | libc::SYS_sendto | libc::SYS_sendmsg => self.on_write(n, c, vfd)?,
            libc::SYS_close => match vfd {
                _ if reserved => Answer::Val(0),
                Some(v) => {
                    self.world.nodes[n as usize].fds.remove(&fd);
                    if let VFd::Conn { label, side } = v {
                        self.world.close_end(&label, side);
                    }
                    Answer::Continue
                }
                None => Answer::Continue,
            },
            libc::SYS_ioctl => match vfd {
                _ if fd == 3 && c.args[1] == HELLO_REQUEST => Answer::Val(0),
                _ if reserved => Answer::Err(libc::ENOTTY),
                Some(_) if c.args[1] == libc::TCGETS => Answer::Err(libc::ENOTTY),
                Some(_) => return unmodelled("ioctl on a connection (non-blocking I/O and FIONREAD are not modelled)"),
                None => Answer::Continue,
            },
            libc::SYS_fcntl => match (vfd, c.args[1] as i32) {
                (_, libc::F_DUPFD | libc::F_DUPFD_CLOEXEC) if vfd.is_some() || reserved => {
                    return unmodelled("duplicating a connection or fd 3 or 193");
                }
                (Some(_), libc::F_GETFL) => Answer::Val(libc::O_RDWR as i64),
                (Some(_), libc::F_SETFL) if c.args[2] as i32 & libc::O_NONBLOCK != 0 => {
                    return unmodelled("non-blocking I/O on a connection is not modelled");
                }
                (Some(_), libc::F_SETFL) => Answer::Val(0),
                (Some(_), libc::F_GETFD | libc::F_SETFD) => Answer::Continue,
                (Some(_), _) => {
                    return unmodelled("fcntl on a connection other than F_GETFL, F_SETFL, F_GETFD, F_SETFD");
                }
                (None, _) => Answer::Continue,
            },
            libc::SYS_dup => {
                if vfd.is_some() || reserved {
                    return unmodelled("duplicating a connection or fd 3 or 193");
                }
                Answer::Continue
            }
            libc::SYS_dup2 | libc::SYS_dup3 => {
                let fds = &self.world.nodes[n as usize].fds;
                let touches = |f: i32| fds.contains_key(&f) || f == 3 || f == 193;
                if touches(c.args[0] as i32) || touches(c.args[1] as i32) {
                    return unmodelled("duplicating onto or from a connection or fd 3 or 193");
                }
                Answer::Continue
            }
            libc::SYS_close_range => {
                let (lo, hi) = (c.args[0] as u32 as i64, c.args[1] as u32 as i64);
                let fds = &self.world.nodes[n as usize].fds;
                let touches = |f: i64| (lo..=hi).contains(&f);
                if touches(3) || touches(193) || fds.keys().any(|&f| touches(f as i64)) {
                    return unmodelled("closing a range that holds a connection or fd 3 or 193");
                }
                Answer::Continue
            }
            libc::SYS_socket => self.on_socket(n, c)?,
            libc::SYS_socketpair => return unmodelled("only AF_INET stream sockets through socket() are modelled"),
            libc::SYS_bind | libc::SYS_connect | libc::SYS_listen | libc::SYS_accept | libc::SYS_accept4 => {
                self.on_socket_call(n, c, vfd)?
            }
            // A shutdown changes nothing, as a close does not notify the
            // peer (manual, LIMITS).
            libc::SYS_shutdown => match vfd {
                Some(_) => Answer::Val(0),
                None => Answer::Continue,
            },
            libc::SYS_setsockopt => match vfd {
                Some(_) => self.on_setsockopt(n, c)?,
                None => Answer::Continue,
            },
            libc::SYS_getsockopt => match vfd {
                Some(_) => {
                    let pid = c.pid;
                    if c.args[3] != 0 && !notif::write_mem(pid, c.args[3], &0i32.to_ne_bytes()) {
                        return Ok(Answer::Err(libc::EFAULT));
                    }
                    if c.args[4] != 0 && !notif::write_mem(pid, c.args[4], &4u32.to_ne_bytes()) {
                        return Ok(Answer::Err(libc::EFAULT));
                    }
                    Answer::Val(0)
                }
                None => Answer::Continue,
            },
            libc::SYS_getsockname | libc::SYS_getpeername => match vfd {
                Some(v) => self.on_sockname(n, c, v),
                None => Answer::Continue,
            },
            // A socket cannot seek. The placeholder can, and stdio, told
            // that a connection seeks, drops the input it has buffered when
            // it syncs a stream.
            libc::SYS_lseek => match vfd {
                Some(VFd::Conn { .. } | VFd::Socket { .. }) => Answer::Err(libc::ESPIPE),
                _ => Answer::Continue,
            },
            libc::SYS_pread64
            | libc::SYS_pwrite64
            | libc::SYS_preadv
            | libc::SYS_pwritev
            | libc::SYS_preadv2
            | libc::SYS_pwritev2 => self.on_positional(n, c, vfd)?,
            libc::SYS_sendfile | libc::SYS_splice | libc::SYS_tee | libc::SYS_vmsplice | libc::SYS_copy_file_range => {
                // The descriptors each call takes (vmsplice takes one).
                let ends = match c.nr {
                    libc::SYS_sendfile | libc::SYS_tee => [c.args[0], c.args[1]],
                    libc::SYS_vmsplice => [c.args[0], c.args[0]],
                    _ => [c.args[0], c.args[2]],
                };
                if ends.iter().any(|&f| self.owns(n, f as i32)) {
                    return unmodelled(
                        "a transfer to or from a connection, a socket, /dev/urandom or fd 3 or 193 is not modelled: use read and write",
                    );
                }
                Answer::Continue
            }
            libc::SYS_epoll_ctl => {
                if self.owns(n, c.args[2] as i32) {
                    return unmodelled(
                        "polling a connection or socket is not modelled: block in read or accept, and TIMEOUT fires",
                    );
                }
                Answer::Continue
            }
            libc::SYS_sendmmsg | libc::SYS_recvmmsg => match vfd {
                Some(_) => return unmodelled("sendmmsg and recvmmsg on a connection are not modelled"),
                None => Answer::Continue,
            },
            libc::SYS_clock_gettime => {
                let clock = c.args[0] as i32;
                let base = match clock {
                    libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => EPOCH_BASE,
                    _ => 0,
                };
                let sec = base + self.world.clock as i64;
                let ts = [sec.to_ne_bytes(), 0i64.to_ne_bytes()].concat();
                if notif::write_mem(c.pid, c.args[1], &ts) { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
            }
            libc::SYS_gettimeofday => {
                let sec = EPOCH_BASE + self.world.clock as i64;
                let tv = [sec.to_ne_bytes(), 0i64.to_ne_bytes()].concat();
                let ok_tv = c.args[0] == 0 || notif::write_mem(c.pid, c.args[0], &tv);
                let ok_tz = c.args[1] == 0 || notif::write_mem(c.pid, c.args[1], &[0u8; 8]);
                if ok_tv && ok_tz { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
            }
            libc::SYS_time => {
                let sec = EPOCH_BASE + self.world.clock as i64;
                if c.args[0] != 0 && !notif::write_mem(c.pid, c.args[0], &sec.to_ne_bytes()) {
                    Answer::Err(libc::EFAULT)
                } else {
                    Answer::Val(sec)
                }
            }
            libc::SYS_getrandom => {
                let len = (c.args[1] as usize).min(RANDOM_CALL_MAX);
                let bytes = self.random(n, len);
                if notif::write_mem(c.pid, c.args[0], &bytes) {
                    Answer::Val(len as i64)
                } else {
                    Answer::Err(libc::EFAULT)
                }
            }
            libc::SYS_open | libc::SYS_openat => self.on_open(n, c)?,
            libc::SYS_getpid | libc::SYS_gettid => Answer::Val(VIRTUAL_PID_BASE + n as i64),
            libc::SYS_getppid => Answer::Val(1),
            libc::SYS_kill | libc::SYS_tkill | libc::SYS_tgkill => {
                // A node may signal itself (raise, abort, a failed assert)
                // by its virtual pid; the supervisor sends the signal to the
                // real one, which takes it as the call returns. Signals
                // between nodes, or to anything else, are not modelled, nor
                // are stop signals (a stopped node would only stall).
                let me = VIRTUAL_PID_BASE + n as i64;
                let (targets, sig) = match c.nr {
                    libc::SYS_tgkill => (&c.args[..2], c.args[2] as i32),
                    _ => (&c.args[..1], c.args[1] as i32),
                };
                if targets.iter().any(|&t| t as i32 as i64 != me) {
                    return unmodelled("a signal to another process is not modelled; a node may signal only itself");
                }
                if matches!(sig, libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU) {
                    return unmodelled("stopping a node is not modelled");
                }
                if !(0..=libc::SIGRTMAX()).contains(&sig) {
                    Answer::Err(libc::EINVAL)
                } else {
                    if sig != 0
                        && let Some(p) = self.procs[n as usize].as_ref()
                    {
                        signal(&p.pidfd, sig);
                    }
                    Answer::Val(0)
                }
            }
            libc::SYS_rt_sigqueueinfo
            | libc::SYS_rt_tgsigqueueinfo
            | libc::SYS_pidfd_open
            | libc::SYS_pidfd_send_signal => {
                return unmodelled("queued signals and pidfds are not modelled");
            }
            libc::SYS_seccomp | libc::SYS_prctl => {
                return Err(ProcessError::Forbidden {
                    node: n,
                    what: "a seccomp filter (it would be compiled for every life)",
                    call: syscalls::describe(c.nr),
                });
            }
            libc::SYS_execve | libc::SYS_execveat => {
                return Err(ProcessError::Forbidden { node: n, what: "exec", call: syscalls::describe(c.nr) });
            }
            libc::SYS_mmap => {
                // Only shared mappings are notified. One of a file runs (a
                // file a node may read is the same for every life); shared
                // anonymous memory would be shared by a snapshot and its
                // forks, state outside the world.
                if c.args[3] as i32 & libc::MAP_ANONYMOUS != 0 || c.args[4] as i32 == -1 {
                    return unmodelled("shared anonymous memory would be shared between lives of the node");
                }
                Answer::Continue
            }
            libc::SYS_madvise => {
                return unmodelled("MADV_WIPEONFORK and MADV_DONTFORK make memory differ between forks of a node");
            }
            libc::SYS_rt_sigaction => {
                return unmodelled(&format!("signal {SNAPSHOT_SIGNAL} is the checker's (it makes snapshots)"));
            }
            libc::SYS_memfd_create
            | libc::SYS_shmget
            | libc::SYS_shmat
            | libc::SYS_msgget
            | libc::SYS_semget
            | libc::SYS_mq_open => {
                return unmodelled("shared memory, message queues and semaphores would hold state outside the world");
            }
            libc::SYS_clone | libc::SYS_clone3 | libc::SYS_fork | libc::SYS_vfork => {
                return Err(ProcessError::Forbidden {
                    node: n,
                    what: "a thread or a child process",
                    call: syscalls::describe(c.nr),
                });
            }
            libc::SYS_nanosleep
            | libc::SYS_clock_nanosleep
            | libc::SYS_poll
            | libc::SYS_ppoll
            | libc::SYS_select
            | libc::SYS_pselect6
            | libc::SYS_epoll_wait
            | libc::SYS_epoll_pwait
            | libc::SYS_epoll_pwait2
            | libc::SYS_pause
            | libc::SYS_alarm
            | libc::SYS_setitimer
            | libc::SYS_timer_create
            | libc::SYS_timerfd_create => {
                return unmodelled(
                    "sleeping, polling and timers are not modelled: block in read or accept, and TIMEOUT fires",
                );
            }
            libc::SYS_io_uring_setup | libc::SYS_io_setup => {
                return unmodelled("asynchronous I/O is not modelled: its reads and writes would bypass the checker");
            }
            _ => Answer::Continue,
        })
    }

    /// Before the preload's hello only ld.so's own file I/O may pass: any
    /// modelled call means the preload is not there.
    fn before_hello(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let missing = |detail: String| Err(ProcessError::MissingPreload { node: n, detail });
        match c.nr {
            libc::SYS_ioctl if fd == 3 && c.args[1] == HELLO_REQUEST => {
                let Some(b) = notif::read_mem(c.pid, c.args[2], HELLO_BYTES) else {
                    return missing("unreadable hello".to_string());
                };
                let u32_at = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().unwrap_or_default());
                let magic = u64::from_ne_bytes(b[0..8].try_into().unwrap_or_default());
                if magic != HELLO_MAGIC || u32_at(8) != HELLO_VERSION {
                    return missing(format!("a hello of another version ({magic:#x}, {})", u32_at(8)));
                }
                let (found, patched) = (u32_at(12), u32_at(16));
                if found != patched || found & 7 != 7 {
                    return Err(ProcessError::VdsoUnpatched { node: n, found, patched });
                }
                if u32_at(24) != SNAPSHOT_SIGNAL as u32 {
                    return missing(format!("the preload could not install its handler of signal {SNAPSHOT_SIGNAL}"));
                }
                Ok(Answer::Hello)
            }
            libc::SYS_open | libc::SYS_openat => Ok(Answer::Continue),
            // The preload installs its snapshot handler before its hello.
            libc::SYS_rt_sigaction => Ok(Answer::Continue),
            // ld.so's and libc's own start-up I/O on files and the log.
            nr if FILE_CALLS.contains(&nr) && fd != 3 && fd != 193 => Ok(Answer::Continue),
            nr => missing(format!("{} before the preload's hello", syscalls::describe(nr))),
        }
    }

    fn random(&mut self, n: u8, len: usize) -> Vec<u8> {
        let node = &mut self.world.nodes[n as usize];
        let from = node.random_used;
        node.random_used += len as u64;
        random_stream(n, from, len)
    }

    fn on_open(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (path_at, flags) = if c.nr == libc::SYS_open { (c.args[0], c.args[1]) } else { (c.args[1], c.args[2]) };
        let Some(path) = notif::read_cstr(c.pid, path_at, 4096) else { return Ok(Answer::Continue) };
        if !matches!(path.as_slice(), b"/dev/urandom" | b"/dev/random" | b"/dev/srandom") {
            return Ok(Answer::Continue);
        }
        let cloexec = flags as i32 & libc::O_CLOEXEC != 0;
        Ok(match self.add_fd(n, c, cloexec)? {
            Some(fd) => {
                self.world.nodes[n as usize].fds.insert(fd, VFd::Random);
                Answer::Done
            }
            None => Answer::Done,
        })
    }

    /// Installs a placeholder in node `n` and completes its call with the
    /// new descriptor's number. `None` when the node is gone.
    fn add_fd(&mut self, n: u8, c: &Notif, cloexec: bool) -> Result<Option<i32>, ProcessError> {
        let (Some(_), Some(t)) = (self.procs[n as usize].as_ref(), self.templates[n as usize].as_ref()) else {
            return Ok(None);
        };
        notif::add_fd_and_return(t.listener.as_fd(), c.id, self.devnull.as_fd(), cloexec)
            .map_err(|errno| ProcessError::NodeSys { node: n, call: "NOTIF_ADDFD", errno })
    }

    fn on_socket(&mut self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        let (domain, ty) = (c.args[0] as i32, c.args[1] as i32);
        if domain != libc::AF_INET {
            return Ok(Answer::Err(libc::EAFNOSUPPORT));
        }
        if ty & 0xf != libc::SOCK_STREAM {
            return Ok(Answer::Err(libc::EPROTONOSUPPORT));
        }
        if ty & libc::SOCK_NONBLOCK != 0 {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: "socket".to_string(),
                detail: "non-blocking sockets are not modelled".to_string(),
            });
        }
        if let Some(fd) = self.add_fd(n, c, ty & libc::SOCK_CLOEXEC != 0)? {
            self.world.nodes[n as usize].fds.insert(fd, VFd::Socket { port: None, listening: false });
        }
        Ok(Answer::Done)
    }

    /// Whether the checker answers for node `n`'s descriptor `fd`: a
    /// connection, a socket, `/dev/urandom`, or fd 3 or 193. A descriptor it
    /// does not own is a file, and a CONTINUE runs the call on it: the fd
    /// table cannot change in between, as a target has one thread (a second
    /// is an error) and that thread waits in the call being answered.
    fn owns(&self, n: u8, fd: i32) -> bool {
        fd == 3 || fd == 193 || self.world.nodes[n as usize].fds.contains_key(&fd)
    }

    /// `pread64`, `pwrite64`, `preadv`, `pwritev`, `preadv2`, `pwritev2`.
    /// On a connection or socket they fail with ESPIPE, as on a real
    /// socket; `preadv2` and `pwritev2` at offset -1 (the current position)
    /// without flags are `readv` and `writev`; `/dev/urandom` ignores the
    /// offset. Fds 3 and 193 carry records, not a file one could seek in.
    fn on_positional(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        if !self.owns(n, fd) {
            return Ok(Answer::Continue);
        }
        let unmodelled = |detail: &str| ProcessError::Unmodelled {
            node: n,
            call: syscalls::describe(c.nr),
            detail: detail.to_string(),
        };
        let writes = matches!(c.nr, libc::SYS_pwrite64 | libc::SYS_pwritev | libc::SYS_pwritev2);
        let flagged = matches!(c.nr, libc::SYS_preadv2 | libc::SYS_pwritev2);
        if flagged && c.args[5] != 0 {
            return Err(unmodelled(
                "RWF_ flags (RWF_NOWAIT is non-blocking I/O) on a connection, a socket, /dev/urandom or fd 3 or 193",
            ));
        }
        let at_current = flagged && c.args[3] as i64 == -1;
        if at_current || vfd == Some(VFd::Random) {
            return if writes { self.on_write(n, c, vfd) } else { self.on_read(n, c, vfd) };
        }
        match vfd {
            Some(VFd::Conn { .. } | VFd::Socket { .. }) => Ok(Answer::Err(libc::ESPIPE)),
            _ => Err(unmodelled("fds 3 and 193 hold records, not a file: read and write them without an offset")),
        }
    }

    /// Every option is accepted and changes nothing, but a receive timeout:
    /// it would end a read with EAGAIN, where in the model a read waits for
    /// an action (TIMEOUT answers it with 'T').
    fn on_setsockopt(&self, n: u8, c: &Notif) -> Result<Answer, ProcessError> {
        /// `SO_RCVTIMEO` with a 64-bit `time_t` everywhere; on x86-64 it
        /// reads the same struct as `SO_RCVTIMEO`.
        const SO_RCVTIMEO_NEW: i32 = 66;
        let (level, name) = (c.args[1] as i32, c.args[2] as i32);
        if level != libc::SOL_SOCKET || (name != libc::SO_RCVTIMEO && name != SO_RCVTIMEO_NEW) {
            return Ok(Answer::Val(0));
        }
        if (c.args[4] as u32 as usize) < 16 {
            return Ok(Answer::Err(libc::EINVAL));
        }
        let Some(timeval) = notif::read_mem(c.pid, c.args[3], 16) else { return Ok(Answer::Err(libc::EFAULT)) };
        if timeval.iter().all(|&b| b == 0) {
            // No timeout: what a socket starts with.
            return Ok(Answer::Val(0));
        }
        Err(ProcessError::Unmodelled {
            node: n,
            call: "setsockopt".to_string(),
            detail: "a receive timeout (SO_RCVTIMEO) is not modelled: a read waits until TIMEOUT answers it with 'T'"
                .to_string(),
        })
    }

    fn conns_of(&self, n: u8) -> usize {
        self.world.nodes[n as usize].fds.values().filter(|v| matches!(v, VFd::Conn { .. })).count()
    }

    fn check_conn_limit(&self, n: u8, call: &str) -> Result<(), ProcessError> {
        if self.conns_of(n) >= limits::CONNECTIONS_PER_NODE_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "connections_per_node_max",
                max: limits::CONNECTIONS_PER_NODE_MAX,
                detail: format!("{call} would open one more connection"),
            });
        }
        Ok(())
    }

    fn on_socket_call(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let Some(VFd::Socket { port, listening }) = vfd else {
            return Ok(match vfd {
                None => Answer::Continue,
                Some(VFd::Conn { .. }) if c.nr == libc::SYS_connect => Answer::Err(libc::EISCONN),
                Some(_) => Answer::Err(libc::EINVAL),
            });
        };
        let read_port = |c: &Notif| -> Option<(u16, u16)> {
            let b = notif::read_mem(c.pid, c.args[1], 4)?;
            Some((u16::from_ne_bytes([b[0], b[1]]), u16::from_be_bytes([b[2], b[3]])))
        };
        let fds = &mut self.world.nodes[n as usize].fds;
        Ok(match c.nr {
            libc::SYS_bind => match read_port(c) {
                None => Answer::Err(libc::EFAULT),
                Some((family, _)) if family != libc::AF_INET as u16 => Answer::Err(libc::EAFNOSUPPORT),
                Some((_, p)) => {
                    fds.insert(fd, VFd::Socket { port: Some(p), listening });
                    Answer::Val(0)
                }
            },
            libc::SYS_listen => {
                fds.insert(fd, VFd::Socket { port, listening: true });
                Answer::Val(0)
            }
            libc::SYS_connect => {
                let Some((family, p)) = read_port(c) else { return Ok(Answer::Err(libc::EFAULT)) };
                let nodes = self.cfg.nodes as u16;
                if family != libc::AF_INET as u16 || !(PORT_BASE..PORT_BASE + nodes).contains(&p) {
                    // Only the nodes' ports can ever exist.
                    return Ok(Answer::Err(libc::ECONNREFUSED));
                }
                let target = (p - PORT_BASE) as u8;
                self.check_conn_limit(n, "connect")?;
                let node = &mut self.world.nodes[n as usize];
                if node.dials as usize >= limits::BUDGET_MAX {
                    return Err(ProcessError::Limit {
                        node: n,
                        limit: "connects_per_node_max",
                        max: limits::BUDGET_MAX,
                        detail: "one connect too many".to_string(),
                    });
                }
                let label = Label { kind: ConnKind::Node, node: n, k: node.dials };
                node.dials += 1;
                node.fds.insert(fd, VFd::Conn { label, side: Side::Dialer });
                // A connect never fails: it waits at the dialled node, which
                // may not listen yet (research, pitfall 6).
                let live = self.world.nodes[target as usize].life == Life::Live;
                let conn = Conn {
                    target,
                    dialer_end: End::Open,
                    target_end: if live { End::Pending } else { End::Gone },
                    to_target: Default::default(),
                    to_dialer: Default::default(),
                };
                self.world.conns.insert(label, conn);
                Answer::Val(0)
            }
            _ => {
                // accept, accept4
                if !listening {
                    return Ok(Answer::Err(libc::EINVAL));
                }
                if c.nr == libc::SYS_accept4 && c.args[3] as i32 & libc::SOCK_NONBLOCK != 0 {
                    return Err(ProcessError::Unmodelled {
                        node: n,
                        call: "accept4".to_string(),
                        detail: "non-blocking accept is not modelled".to_string(),
                    });
                }
                Answer::Hold(Blocked::Accept { fd })
            }
        })
    }

    fn on_sockname(&self, n: u8, c: &Notif, v: VFd) -> Answer {
        let peer = c.nr == libc::SYS_getpeername;
        let ephemeral = |l: &Label| EPHEMERAL_BASE + 256 * l.node as u16 + l.k as u16;
        let port = match (v, peer) {
            (VFd::Socket { port, .. }, false) => port.unwrap_or(0),
            (VFd::Conn { label, side: Side::Dialer }, false) => ephemeral(&label),
            (VFd::Conn { side: Side::Target, .. }, false) => PORT_BASE + n as u16,
            (VFd::Conn { label, side: Side::Dialer }, true) => {
                PORT_BASE + self.world.conns.get(&label).map_or(0, |c| c.target as u16)
            }
            (VFd::Conn { label, side: Side::Target }, true) => ephemeral(&label),
            _ => return Answer::Err(libc::ENOTCONN),
        };
        let mut sa = [0u8; 16];
        sa[0..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        sa[2..4].copy_from_slice(&port.to_be_bytes());
        sa[4..8].copy_from_slice(&[127, 0, 0, 1]);
        write_sockaddr(c.pid, c.args[1], c.args[2], &sa)
    }

    fn on_read(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        let Some(v) = vfd else {
            return Ok(match fd {
                193 => {
                    let Some(p) = self.procs[n as usize].as_mut() else { return Ok(Answer::Done) };
                    let rest = p.io.recovery[p.io.recovery_at..].to_vec();
                    match scatter(c, &rest) {
                        Ok(k) => {
                            if let Some(p) = self.procs[n as usize].as_mut() {
                                p.io.recovery_at += k;
                            }
                            Answer::Val(k as i64)
                        }
                        Err(e) => Answer::Err(e),
                    }
                }
                3 => Answer::Val(0),
                _ => Answer::Continue,
            });
        };
        let flags = match c.nr {
            libc::SYS_recvfrom => c.args[3] as i32,
            libc::SYS_recvmsg => c.args[2] as i32,
            _ => 0,
        };
        Ok(match v {
            VFd::Random => {
                let want = match iovecs(c) {
                    Ok(iov) => iov.iter().map(|(_, l)| l).sum::<usize>().min(RANDOM_CALL_MAX),
                    Err(e) => return Ok(Answer::Err(e)),
                };
                let bytes = self.random(n, want);
                match scatter(c, &bytes) {
                    Ok(k) => Answer::Val(k as i64),
                    Err(e) => Answer::Err(e),
                }
            }
            VFd::Socket { .. } => Answer::Err(libc::ENOTCONN),
            VFd::Conn { label, side } => {
                if flags & (libc::MSG_DONTWAIT | libc::MSG_PEEK) != 0 {
                    return Err(ProcessError::Unmodelled {
                        node: n,
                        call: syscalls::describe(c.nr),
                        detail: "MSG_DONTWAIT and MSG_PEEK are not modelled".to_string(),
                    });
                }
                // Only the checker writes to a timer connection, and it did so
                // before the node could read: no race, so answer at once.
                let ready = label.kind == ConnKind::Timer
                    && self.world.queue_toward(&label, side).is_some_and(|q| !q.is_empty());
                if ready {
                    let msg = self.world.queue_toward(&label, side).and_then(|q| q.pop_front()).unwrap_or_default();
                    match scatter(c, &msg) {
                        Ok(k) => Answer::Val(k as i64),
                        Err(e) => Answer::Err(e),
                    }
                } else {
                    Answer::Hold(Blocked::Read { fd })
                }
            }
        })
    }

    fn on_write(&mut self, n: u8, c: &Notif, vfd: Option<VFd>) -> Result<Answer, ProcessError> {
        let fd = c.args[0] as i32;
        if vfd.is_none() && fd != 3 && fd != 193 {
            return Ok(Answer::Continue);
        }
        let data = match gather(c) {
            Ok(d) => d,
            Err(e) => return Ok(Answer::Err(e)),
        };
        let len = data.len() as i64;
        let Some(v) = vfd else {
            let durable = fd == 193;
            let Some(p) = self.procs[n as usize].as_mut() else { return Ok(Answer::Done) };
            let buf = if durable { &mut p.io.durable_in } else { &mut p.io.state_in };
            buf.extend_from_slice(&data);
            let record = take_records(buf).map_err(|len| ProcessError::Limit {
                node: n,
                limit: "state_bytes_max",
                max: limits::STATE_BYTES_MAX,
                detail: format!("a {len}-byte record on fd {fd}"),
            })?;
            if let Some(r) = record {
                let node = &mut self.world.nodes[n as usize];
                if durable {
                    node.durable = Some(r);
                } else {
                    node.state = r;
                }
            }
            return Ok(Answer::Val(len));
        };
        let (label, side) = match v {
            VFd::Random => return Ok(Answer::Val(len)),
            VFd::Socket { .. } => return Ok(Answer::Err(libc::ENOTCONN)),
            VFd::Conn { label, side } => (label, side),
        };
        if data.len() > limits::WRITE_BYTES_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "write_bytes_max",
                max: limits::WRITE_BYTES_MAX,
                detail: format!("a {}-byte {} on connection {label}", data.len(), syscalls::describe(c.nr)),
            });
        }
        if data.is_empty() {
            return Ok(Answer::Val(0));
        }
        match (label.kind, side) {
            (ConnKind::Client, Side::Target) => {
                if self.world.replies.len() >= limits::REPLIES_MAX {
                    return Err(ProcessError::Limit {
                        node: n,
                        limit: "replies_max",
                        max: limits::REPLIES_MAX,
                        detail: format!("one more reply on connection {label}"),
                    });
                }
                self.world.replies.push((n, data));
            }
            (ConnKind::Timer, _) => {}
            _ => {
                let toward = if side == Side::Dialer { Side::Target } else { Side::Dialer };
                let open = self.world.conns.get(&label).is_some_and(|c| match toward {
                    Side::Target => !c.target_end.done(),
                    Side::Dialer => !c.dialer_end.done(),
                });
                // What travels toward a closed or gone end can never be read:
                // the write succeeds and the bytes are lost (no SIGPIPE).
                if open {
                    if self.world.in_flight() >= limits::MESSAGES_IN_FLIGHT_MAX {
                        return Err(ProcessError::Limit {
                            node: n,
                            limit: "messages_in_flight_max",
                            max: limits::MESSAGES_IN_FLIGHT_MAX,
                            detail: format!("one more message on connection {label}"),
                        });
                    }
                    if let Some(q) = self.world.queue_toward(&label, toward) {
                        q.push_back(data);
                    }
                }
            }
        }
        Ok(Answer::Val(len))
    }

    /// Answers node `n`'s held read with `data` (at most its buffer's size);
    /// returns how many bytes were taken.
    fn answer_read(&mut self, n: u8, data: &[u8]) -> Result<usize, ProcessError> {
        let notif = self.held(n)?;
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        let (answer, taken) = match scatter(&notif, data) {
            Ok(k) => (Answer::Val(k as i64), k),
            Err(e) => (Answer::Err(e), 0),
        };
        self.answer(n, &notif, answer)?;
        Ok(taken)
    }

    /// Answers node `n`'s held accept with connection `label`.
    fn answer_accept(&mut self, n: u8, label: Label) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        self.check_conn_limit(n, "accept")?;
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        if notif.args[1] != 0 {
            let port = match label.kind {
                ConnKind::Node => EPHEMERAL_BASE + 256 * label.node as u16 + label.k as u16,
                _ => EPHEMERAL_BASE - 1 - label.k as u16,
            };
            let mut sa = [0u8; 16];
            sa[0..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
            sa[2..4].copy_from_slice(&port.to_be_bytes());
            sa[4..8].copy_from_slice(&[127, 0, 0, 1]);
            if let Answer::Err(e) = write_sockaddr(notif.pid, notif.args[1], notif.args[2], &sa) {
                return self.answer(n, &notif, Answer::Err(e));
            }
        }
        let cloexec = notif.nr == libc::SYS_accept4 && notif.args[3] as i32 & libc::SOCK_CLOEXEC != 0;
        if let Some(c) = self.world.conns.get_mut(&label) {
            c.target_end = End::Open;
        }
        if let Some(fd) = self.add_fd(n, &notif, cloexec)? {
            self.world.nodes[n as usize].fds.insert(fd, VFd::Conn { label, side: Side::Target });
        }
        self.answer(n, &notif, Answer::Done)
    }

    fn held(&self, n: u8) -> Result<Notif, ProcessError> {
        match self.procs[n as usize].as_ref().map(|p| &p.run) {
            Some(Run::Held(notif)) => Ok(*notif),
            _ => Err(ProcessError::NotEnabled { action: format!("an answer to node {n}, which is not blocked") }),
        }
    }

    /// Carries out one action on a quiescent world and waits for quiescence
    /// again. The caller has checked that the action is enabled.
    pub fn apply(&mut self, action: &ProcessAction) -> Result<(), ProcessError> {
        let not_enabled = || ProcessError::NotEnabled { action: action.to_string() };
        match *action {
            ProcessAction::Deliver { node, conn } => {
                let (_, side) = self.reading(node).ok_or_else(not_enabled)?;
                let msg = self.world.queue_toward(&conn, side).and_then(|q| q.pop_front()).ok_or_else(not_enabled)?;
                let taken = self.answer_read(node, &msg)?;
                if taken < msg.len() {
                    // A short buffer: the rest stays at the head of the queue.
                    if let Some(q) = self.world.queue_toward(&conn, side) {
                        q.push_front(msg[taken..].to_vec());
                    }
                }
            }
            ProcessAction::Eof { node, .. } => {
                self.answer_read(node, &[])?;
            }
            ProcessAction::Accept { node, from } => {
                let label = self
                    .world
                    .conns
                    .iter()
                    .find(|(l, c)| {
                        c.target == node
                            && c.target_end == End::Pending
                            && match from {
                                Some(d) => l.kind == ConnKind::Node && l.node == d,
                                None => l.kind == ConnKind::Client,
                            }
                    })
                    .map(|(l, _)| *l)
                    .ok_or_else(not_enabled)?;
                self.answer_accept(node, label)?;
            }
            ProcessAction::Drop { conn, to } => {
                self.world.drops -= 1;
                let c = self.world.conns.get_mut(&conn).ok_or_else(not_enabled)?;
                let q = if c.target == to && !c.to_target.is_empty() { &mut c.to_target } else { &mut c.to_dialer };
                q.pop_front().ok_or_else(not_enabled)?;
            }
            ProcessAction::Timeout { node } => {
                self.world.timeouts -= 1;
                self.world.clock += 1;
                match self.world.nodes[node as usize].blocked {
                    Blocked::Read { .. } => {
                        self.answer_read(node, b"T")?;
                    }
                    Blocked::Accept { .. } => {
                        let w = &mut self.world.nodes[node as usize];
                        if w.timer_conns as usize >= limits::BUDGET_MAX {
                            return Err(ProcessError::Limit {
                                node,
                                limit: "timer_connections_per_node_max",
                                max: limits::BUDGET_MAX,
                                detail: "one TIMEOUT in accept too many".to_string(),
                            });
                        }
                        let label = Label { kind: ConnKind::Timer, node, k: w.timer_conns };
                        // The 'T' is queued on the timer connection until
                        // the node reads it: a message in flight like any
                        // other.
                        if self.world.in_flight() >= limits::MESSAGES_IN_FLIGHT_MAX {
                            return Err(ProcessError::Limit {
                                node,
                                limit: "messages_in_flight_max",
                                max: limits::MESSAGES_IN_FLIGHT_MAX,
                                detail: format!("the 'T' of timer connection {label}"),
                            });
                        }
                        let w = &mut self.world.nodes[node as usize];
                        w.timer_conns += 1;
                        let conn = Conn {
                            target: node,
                            dialer_end: End::Gone,
                            target_end: End::Pending,
                            to_target: [b"T".to_vec()].into(),
                            to_dialer: Default::default(),
                        };
                        self.world.conns.insert(label, conn);
                        self.answer_accept(node, label)?;
                    }
                    Blocked::Nothing => return Err(not_enabled()),
                }
            }
            ProcessAction::Client { node } => {
                let w = &mut self.world.nodes[node as usize];
                let k = self.cfg.budgets.clients - w.clients_left;
                w.clients_left -= 1;
                let label = Label { kind: ConnKind::Client, node, k };
                let mut conn = Conn {
                    target: node,
                    dialer_end: End::Open,
                    target_end: End::Pending,
                    to_target: Default::default(),
                    to_dialer: Default::default(),
                };
                if !self.cfg.request.is_empty() {
                    if self.world.in_flight() >= limits::MESSAGES_IN_FLIGHT_MAX {
                        return Err(ProcessError::Limit {
                            node,
                            limit: "messages_in_flight_max",
                            max: limits::MESSAGES_IN_FLIGHT_MAX,
                            detail: format!("the request of client connection {label}"),
                        });
                    }
                    conn.to_target.push_back(self.cfg.request.clone());
                }
                self.world.conns.insert(label, conn);
            }
            ProcessAction::Crash { node } => {
                self.world.crashes -= 1;
                if let Some(p) = self.procs[node as usize].take() {
                    signal(&p.pidfd, libc::SIGKILL);
                    reap(p.pid);
                    self.retire(p);
                }
                self.world.node_gone(node, true);
                // It restarts at once, as a fresh process that recovers from
                // fd 193; its reported state is empty until it writes one.
                self.world.nodes[node as usize].state.clear();
                self.new_life(node)?;
            }
        }
        self.settle()
    }

    fn reading(&self, n: u8) -> Option<(Label, Side)> {
        match self.world.nodes[n as usize].blocked {
            Blocked::Read { fd } => self.world.conn_of(n, fd),
            _ => None,
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.kill_all();
        for t in self.templates.iter_mut() {
            if let Some(t) = t.take() {
                kill_and_reap(t.parked.pid, &t.parked.pidfd);
            }
        }
        if let Some(set) = self.old_affinity {
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        }
    }
}

/// Pins the calling thread to the CPU it runs on; returns the CPU and the
/// affinity to restore.
fn pin_here() -> (Option<usize>, Option<libc::cpu_set_t>) {
    unsafe {
        let cpu = libc::sched_getcpu();
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        if cpu < 0 || libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old) != 0 {
            return (None, None);
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return (None, None);
        }
        (Some(cpu as usize), Some(old))
    }
}

fn signal(pidfd: &OwnedFd, sig: i32) {
    unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), sig, std::ptr::null::<u8>(), 0) };
}

fn reap(pid: i32) -> i32 {
    let mut status = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || Errno::last() != Errno::EINTR {
            return status;
        }
    }
}

/// Reaps `pid` if it has exited: `Ok(None)` while it runs.
fn try_reap(pid: i32) -> Result<Option<i32>, Errno> {
    let mut status = 0;
    loop {
        match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
            0 => return Ok(None),
            r if r > 0 => return Ok(Some(status)),
            _ if Errno::last() == Errno::EINTR => continue,
            _ => return Err(Errno::last()),
        }
    }
}

fn stall_error(n: u8, pid: i32, seconds: f64) -> ProcessError {
    let call = match std::fs::read_to_string(format!("/proc/{pid}/syscall")) {
        Ok(s) => match s.split_whitespace().next() {
            Some("running") => "no system call (running on a CPU: a busy loop?)".to_string(),
            Some(nr) => match nr.parse::<i64>() {
                Ok(nr) => syscalls::describe(nr),
                Err(_) => format!("an unknown call ({nr})"),
            },
            None => "an unknown call".to_string(),
        },
        Err(e) => format!("an unknown call (/proc/{pid}/syscall: {e})"),
    };
    ProcessError::Stall { node: n, call, seconds }
}

/// What a wait status says became of a life.
fn life_of(status: i32) -> Life {
    if libc::WIFSIGNALED(status) {
        Life::Signaled(libc::WTERMSIG(status))
    } else {
        Life::Exited(libc::WEXITSTATUS(status))
    }
}

fn fork_error(n: u8, e: ForkError) -> ProcessError {
    match e {
        ForkError::SignalBlocked => ProcessError::Unmodelled {
            node: n,
            call: "rt_sigprocmask".to_string(),
            detail: format!("the node blocks signal {SNAPSHOT_SIGNAL}, which the checker makes snapshots with"),
        },
        ForkError::Unexpected { pid, nr } => ProcessError::Unmodelled {
            node: n,
            call: syscalls::describe(nr),
            detail: format!("process {pid} made it while the node was being forked"),
        },
        ForkError::Died => ProcessError::NodeSys { node: n, call: "fork", errno: Errno::ESRCH },
        ForkError::Silent => {
            ProcessError::Stall { node: n, call: "a fork of a parked process".to_string(), seconds: 0.0 }
        }
        ForkError::Sys { call, errno } => ProcessError::NodeSys { node: n, call, errno },
    }
}

/// Calls on descriptors that ld.so and libc make on files and the log
/// before the preload's hello.
const FILE_CALLS: &[i64] = &[
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_close,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_lseek,
    libc::SYS_fcntl,
    libc::SYS_ioctl,
    libc::SYS_dup,
];

fn kill_and_reap(pid: i32, pidfd: &OwnedFd) {
    signal(pidfd, libc::SIGKILL);
    reap(pid);
}

/// The random stream of node `n`: byte `i` is byte `i % 8` of the xxh3 of
/// the block number `i / 8`, seeded by the node. Fixed forever: replays and
/// counterexample files depend on it.
pub fn random_stream(n: u8, from: u64, len: usize) -> Vec<u8> {
    let seed = 0x636d_6300 ^ n as u64;
    (from..from + len as u64)
        .map(|i| xxhash_rust::xxh3::xxh3_64_with_seed(&(i / 8).to_le_bytes(), seed).to_le_bytes()[(i % 8) as usize])
        .collect()
}

/// Takes every complete record (length byte, bytes) from the front of
/// `buf`; returns the last one. `Err(len)` for a record over the limit.
fn take_records(buf: &mut Vec<u8>) -> Result<Option<Vec<u8>>, usize> {
    let mut last = None;
    while let Some(&len) = buf.first() {
        let len = len as usize;
        if len > limits::STATE_BYTES_MAX {
            return Err(len);
        }
        if buf.len() < 1 + len {
            break;
        }
        last = Some(buf[1..1 + len].to_vec());
        buf.drain(..1 + len);
    }
    Ok(last)
}

/// The target's buffers of a read or write call: (address, length) each.
fn iovecs(c: &Notif) -> Result<Vec<(u64, usize)>, i32> {
    let (iov_at, count) = match c.nr {
        libc::SYS_read
        | libc::SYS_write
        | libc::SYS_recvfrom
        | libc::SYS_sendto
        | libc::SYS_pread64
        | libc::SYS_pwrite64 => {
            return Ok(vec![(c.args[1], c.args[2] as usize)]);
        }
        libc::SYS_readv
        | libc::SYS_writev
        | libc::SYS_preadv
        | libc::SYS_pwritev
        | libc::SYS_preadv2
        | libc::SYS_pwritev2 => (c.args[1], c.args[2] as usize),
        libc::SYS_recvmsg | libc::SYS_sendmsg => {
            let h = notif::read_mem(c.pid, c.args[1], 32).ok_or(libc::EFAULT)?;
            let at = u64::from_ne_bytes(h[16..24].try_into().unwrap_or_default());
            let count = u64::from_ne_bytes(h[24..32].try_into().unwrap_or_default());
            (at, count as usize)
        }
        _ => return Err(libc::EINVAL),
    };
    if count > 1024 {
        return Err(libc::EINVAL);
    }
    let raw = notif::read_mem(c.pid, iov_at, 16 * count).ok_or(libc::EFAULT)?;
    Ok(raw
        .chunks_exact(16)
        .map(|v| {
            let base = u64::from_ne_bytes(v[0..8].try_into().unwrap_or_default());
            let len = u64::from_ne_bytes(v[8..16].try_into().unwrap_or_default());
            (base, len as usize)
        })
        .collect())
}

/// Writes `data` into the call's buffers, as far as they go; returns the
/// count. For `recvmsg`, also clears the control length and flags.
fn scatter(c: &Notif, data: &[u8]) -> Result<usize, i32> {
    let mut done = 0;
    for (base, len) in iovecs(c)? {
        if done == data.len() {
            break;
        }
        let k = len.min(data.len() - done);
        if !notif::write_mem(c.pid, base, &data[done..done + k]) {
            return Err(libc::EFAULT);
        }
        done += k;
    }
    if c.nr == libc::SYS_recvmsg {
        // msg_namelen (at 8), msg_controllen (at 40), msg_flags (at 48).
        let ok = notif::write_mem(c.pid, c.args[1] + 8, &0u32.to_ne_bytes())
            && notif::write_mem(c.pid, c.args[1] + 40, &0u64.to_ne_bytes())
            && notif::write_mem(c.pid, c.args[1] + 48, &0u32.to_ne_bytes());
        if !ok {
            return Err(libc::EFAULT);
        }
    }
    Ok(done)
}

/// Reads the bytes of a write call (at most 64 KiB: more than any record or
/// message may hold, so the limit checks see the true size).
fn gather(c: &Notif) -> Result<Vec<u8>, i32> {
    let mut out = Vec::new();
    for (base, len) in iovecs(c)? {
        let len = len.min((1 << 16) - out.len().min(1 << 16));
        out.extend_from_slice(&notif::read_mem(c.pid, base, len).ok_or(libc::EFAULT)?);
    }
    Ok(out)
}

fn write_sockaddr(pid: u32, addr: u64, len_at: u64, sa: &[u8; 16]) -> Answer {
    if addr == 0 {
        return Answer::Val(0);
    }
    let Some(len) = notif::read_mem(pid, len_at, 4) else { return Answer::Err(libc::EFAULT) };
    let room = u32::from_ne_bytes(len[..4].try_into().unwrap_or_default()) as usize;
    let ok = notif::write_mem(pid, addr, &sa[..room.min(16)]) && notif::write_mem(pid, len_at, &16u32.to_ne_bytes());
    if ok { Answer::Val(0) } else { Answer::Err(libc::EFAULT) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_taken_whole_and_the_last_wins() {
        let mut buf = vec![2, b'a', b'b', 1];
        assert_eq!(take_records(&mut buf), Ok(Some(b"ab".to_vec())));
        assert_eq!(buf, vec![1]);
        buf.push(b'c');
        assert_eq!(take_records(&mut buf), Ok(Some(b"c".to_vec())));
        assert!(buf.is_empty());
        let mut big = vec![65];
        assert_eq!(take_records(&mut big), Err(65));
    }

    #[test]
    fn random_streams_are_fixed_and_per_node() {
        let a = random_stream(0, 0, 16);
        assert_eq!(random_stream(0, 0, 16), a);
        assert_eq!(random_stream(0, 5, 4), a[5..9].to_vec(), "a stream is one sequence, whatever the calls");
        assert_ne!(random_stream(1, 0, 16), a);
    }
}
