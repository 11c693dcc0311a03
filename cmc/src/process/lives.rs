//! Lives: the processes of the nodes. A node's *template* is the start stub
//! (`start`) exec'd once under the filter and parked before any of the
//! program's code runs; every *life* of the node (at START and after each
//! CRASH) is a fork of it that loads the program, and every
//! resumed world forks its one touched node from a *snapshot* (`snapshot`).
//! This module makes, parks, resumes, watches, kills and reaps them, and
//! says what became of a life from its wait status.
//!
//! It owns the processes' bookkeeping (`Proc`, `Template`, their epoll
//! registrations); it does not exec (`spawn`), make a parked process fork
//! (`forkserver`), answer calls (`calls`) nor wait for quiescence (the
//! supervisor's `settle`).

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::rc::Rc;
use std::time::Instant;

use nix::errno::Errno;
use nix::libc;

use super::calls::{Answer, PARK_REQUEST};
use super::filter::SNAPSHOT_SIGNAL;
pub(super) use super::forkserver::ThreadProc;
use super::forkserver::{self, ForkError, Parked};
use super::notif::{self, Notif};
use super::snapshot::{Pool, Snapshot};
use super::spawn::{self, Spec};
use super::supervisor::{EXIT, LISTENER, Supervisor, token};
use super::world::{Life, ProcessWorld, VFd};
use super::{ProcessError, syscalls};

/// Where a life is: running since an instant (the stall timeout counts
/// from it), or held in a call until an action answers it.
pub(super) enum Run {
    Running(Instant),
    Held(Notif),
    /// No thread runs and the slot's has ended (`calls::threads`): the
    /// scheduler puts another there.
    Idle,
}

/// One running node process: a life of its node.
pub(super) struct Proc {
    pub(super) pid: i32,
    /// Which spawn of this supervisor it is: part of its epoll tokens, so
    /// that an event is only ever taken for the process it was registered
    /// for.
    pub(super) serial: u64,
    pub(super) pidfd: OwnedFd,
    pub(super) run: Run,
    /// The data it gave its epoll interests.
    pub(super) cookies: forkserver::Cookies,
    /// Its threads, once it has made one (`calls::threads`).
    pub(super) threads: Vec<ThreadProc>,
    /// The thread made and not yet heard from: its first call comes next.
    pub(super) birth: Option<usize>,
    /// The running thread's call that came while a thread was being born,
    /// examined once its first call has come.
    pub(super) deferred: Option<Notif>,
    /// Where its main thread's robust futex list is, before it made a
    /// thread (`set_robust_list`), 0 for none.
    pub(super) robust: u64,
    /// It called `exit_group` (let run), or was sent a signal whose
    /// default action ends it: every thread of it is ending, and a
    /// thread's end seen before the process's is the process's.
    pub(super) exiting: std::cell::Cell<bool>,
}

/// A node's template: the start stub exec'd once, parked before the
/// program is loaded, the process every life of the node is forked from. Its listener is the
/// node's: every fork of the template notifies on it.
pub(super) struct Template {
    pub(super) parked: Parked,
    pub(super) listener: OwnedFd,
}

/// A fresh open of `/dev/null`, read and write: a placeholder with an open
/// file description of its own.
pub(super) fn open_devnull() -> Result<OwnedFd, Errno> {
    let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(Errno::last());
    }
    Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// The descriptors every life of a node starts with, each a `/dev/null` of
/// its own in the process: stdin, stdout, stderr (`VFd::Device`,
/// `VFd::Out`: the checker keeps what is written to the last two), and the
/// records on 3 and 193.
pub(super) const LIFE_FDS: [i32; 5] = [0, 1, 2, 3, 193];

impl Supervisor {
    /// Execs node `n`'s program under the filter and runs it to its park
    /// before `main`, checking the preload's hello on the way.
    pub(super) fn boot_template(&mut self, n: u8) -> Result<(), ProcessError> {
        if let Some(dir) = &self.cfg.log_dir {
            // The checker writes what the node writes to stdout and stderr
            // (`VFd::Out`); the node holds /dev/null.
            let path = dir.join(format!("node{n}.log"));
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| ProcessError::Config { key: "log_dir", reason: format!("{}: {e}", path.display()) })?;
            self.logs[n as usize] = Some(file);
        }
        let devnull =
            open_devnull().map_err(|errno| ProcessError::NodeSys { node: n, call: "open /dev/null", errno })?;
        let spec = Spec {
            path: &self.stub,
            argv: &self.argvs[n as usize],
            envp: &self.envp,
            cwd: &self.cwd,
            filter: &self.filter,
            devnull: devnull.as_fd(),
            log: devnull.as_fd(),
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
            // A stop is answered while ld.so, libc and the preload start.
            if !forkserver::readable(s.listener.as_fd(), s.pidfd.as_fd(), left.min(super::STOP_POLL)) {
                let status = match try_reap(s.pid) {
                    Ok(Some(status)) => status,
                    _ => {
                        let stopped = self.cfg.stop_requested().map(|reason| ProcessError::Stopped { reason });
                        if stopped.is_none() && since.elapsed() < self.cfg.stall_timeout {
                            continue;
                        }
                        let e = stopped.unwrap_or_else(|| stall_error(n, s.pid, since.elapsed().as_secs_f64()));
                        kill_and_reap(s.pid, &s.pidfd);
                        return Err(e);
                    }
                };
                let life = life_of(status);
                return Err(ProcessError::StartFailed {
                    node: n,
                    detail: format!("ended ({life:?}) before its hello: it could not set the node up"),
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
            // The start stub's park, after its hello.
            let park = notif.nr == libc::SYS_ioctl && notif.args[0] as i32 == 3 && notif.args[1] == PARK_REQUEST;
            if hello && park {
                break notif;
            }
            let answer = if hello {
                Err(ProcessError::Unmodelled {
                    node: n,
                    call: syscalls::describe(notif.nr),
                    detail: "a call between the start stub's hello and its park".to_string(),
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
            Some(Template { parked: Parked::new(s.pid, s.pidfd, parked), listener: s.listener });
        Ok(())
    }

    /// Forks a new life of node `n` from its template and lets it run into
    /// `main`. Its reads of fd 193 return the node's durable record.
    pub(super) fn new_life(&mut self, n: u8) -> Result<(), ProcessError> {
        let Some(t) = self.templates[n as usize].as_mut() else {
            return Err(ProcessError::NotEnabled { action: format!("a life of node {n}, which has no template") });
        };
        let stop = || self.cfg.stop_requested();
        let child = match forkserver::fork(t.listener.as_fd(), &mut t.parked, self.cfg.stall_timeout, &stop) {
            Ok(child) => child,
            Err(e) => {
                // A fork cut short by a stop leaves the template between
                // two calls, where no later fork could use it: it goes, and
                // the next start execs it again.
                if matches!(e, ForkError::Stopped(_))
                    && let Some(t) = self.templates[n as usize].take()
                {
                    kill_and_reap(t.parked.pid, &t.parked.pidfd);
                }
                return Err(fork_error(n, e));
            }
        };
        self.counters.forks += 1;
        self.counters.spawns += 1;
        let serial = self.watch_exit(n, &child)?;
        // Out of its park: on into main, with placeholders of its own (the
        // template's would be shared by every life of the node).
        let listener = self.templates[n as usize].as_ref().map(|t| t.listener.as_fd());
        if let Some(l) = listener {
            let sys = |call: &'static str| move |errno| ProcessError::NodeSys { node: n, call, errno };
            for fd in LIFE_FDS {
                let devnull = open_devnull().map_err(sys("open /dev/null"))?;
                notif::add_fd_at(l, child.notif.id, devnull.as_fd(), fd).map_err(sys("NOTIF_ADDFD"))?;
            }
            notif::respond(l, child.notif.id, 0, 0).map_err(sys("NOTIF_SEND"))?;
        }
        self.procs[n as usize] = Some(Proc {
            pid: child.pid,
            serial,
            pidfd: child.pidfd,
            run: Run::Running(Instant::now()),
            cookies: child.cookies,
            threads: Vec::new(),
            birth: None,
            deferred: None,
            robust: 0,
            exiting: std::cell::Cell::new(false),
        });
        self.greeted[n as usize] = false;
        self.start_message[n as usize].clear();
        let node = &mut self.world.nodes[n as usize];
        node.recovery = match &node.durable {
            None => Vec::new(),
            Some(d) => [&[d.len() as u8][..], d].concat(),
        };
        node.state_in.clear();
        node.durable_in.clear();
        node.fds.clear();
        node.nonblock.clear();
        node.socket_timeouts.clear();
        node.fds.insert(0, VFd::Device { minor: 3, mode: libc::O_RDWR as u8 });
        node.fds.insert(1, VFd::Out { stream: 1 });
        node.fds.insert(2, VFd::Out { stream: 2 });
        Ok(())
    }

    /// Takes every node's process out of the supervisor as a snapshot: the
    /// world must be quiescent, so each live one is held in its call.
    /// `None` for a node whose process has exited. A process with threads
    /// has them captured first (`Supervisor::capture_threads`), or is an
    /// error [`ProcessError::Threaded`] where one cannot be, after which the
    /// engine keeps that world without its processes and runs it from the
    /// templates when an action needs them.
    pub fn park_all(&mut self, live: &Rc<Pool>) -> Result<Vec<Option<Snapshot>>, ProcessError> {
        let mut plans = Vec::with_capacity(self.procs.len());
        for n in 0..self.procs.len() {
            let threaded = self.procs[n].as_ref().is_some_and(|p| !p.threads.is_empty());
            plans.push(if threaded { Some(self.capture_threads(n as u8)?) } else { None });
        }
        let mut out = Vec::with_capacity(self.procs.len());
        for (n, plan) in plans.into_iter().enumerate() {
            let Some(p) = self.procs[n].take() else {
                out.push(None);
                continue;
            };
            self.unregister(&[&p.pidfd]);
            for pidfd in p.threads.iter().filter_map(|t| t.pidfd.as_ref()) {
                self.unregister(&[pidfd]);
            }
            let parked = match (plan, p.run) {
                (Some((forker, again)), _) => {
                    let Some(notif) = p.threads[forker].held else {
                        kill_and_reap(p.pid, &p.pidfd);
                        return Err(ProcessError::NotEnabled { action: format!("a snapshot of node {n}'s threads") });
                    };
                    Parked { pid: p.pid, pidfd: p.pidfd, notif, cookies: p.cookies, threads: p.threads, forker, again }
                }
                (None, Run::Held(notif)) => {
                    let mut parked = Parked::new(p.pid, p.pidfd, notif);
                    parked.cookies = p.cookies;
                    parked
                }
                (None, _) => {
                    kill_and_reap(p.pid, &p.pidfd);
                    return Err(ProcessError::NotEnabled {
                        action: format!("a snapshot of node {n}, which is running"),
                    });
                }
            };
            out.push(Some(Snapshot::new(parked, live)));
        }
        Ok(out)
    }

    /// Makes `world` the supervisor's, with no process running but a fork
    /// of `snapshot` as node `n`'s, held in the call the snapshot is parked
    /// in (each of its threads in its own): the processes the next action
    /// needs.
    pub fn resume(&mut self, world: ProcessWorld, from: Option<(u8, &Snapshot)>) -> Result<(), ProcessError> {
        self.kill_all();
        self.world = world;
        let Some((n, snap)) = from else { return Ok(()) };
        let Some(t) = self.templates[n as usize].as_ref() else {
            return Err(ProcessError::NotEnabled { action: format!("a fork of node {n}, which has no template") });
        };
        let stop = || self.cfg.stop_requested();
        let child = snap.fork(t.listener.as_fd(), self.cfg.stall_timeout, &stop).map_err(|e| fork_error(n, e))?;
        self.counters.forks += 1;
        let serial = self.watch_exit(n, &child)?;
        let Parked { pid, pidfd, notif, cookies, mut threads, .. } = child;
        let run = if threads.is_empty() {
            Run::Held(notif)
        } else {
            for t in threads.iter_mut().filter(|t| t.held.is_some()) {
                match self.watch_thread(n, serial, t.tid) {
                    Ok(fd) => t.pidfd = Some(fd),
                    Err(e) => {
                        kill_and_reap(pid, &pidfd);
                        return Err(e);
                    }
                }
            }
            // The slot's thread is held in the process's call.
            let slot = self.world.nodes[n as usize].slot_of();
            match slot.and_then(|k| threads.get_mut(k)?.held.take()) {
                Some(held) => Run::Held(held),
                None => Run::Idle,
            }
        };
        self.procs[n as usize] = Some(Proc {
            pid,
            serial,
            pidfd,
            run,
            cookies,
            threads,
            birth: None,
            deferred: None,
            robust: 0,
            exiting: std::cell::Cell::new(false),
        });
        // A snapshot is of a life that has said the preload's hello.
        self.greeted[n as usize] = true;
        Ok(())
    }

    /// Registers a new process of node `n` for its exit, under a new
    /// serial (returned); kills it if that fails.
    pub(super) fn watch_exit(&mut self, n: u8, child: &Parked) -> Result<u64, ProcessError> {
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
    pub(super) fn retire(&self, p: Proc) {
        self.unregister(&[&p.pidfd]);
        for t in &p.threads {
            if let Some(pidfd) = &t.pidfd {
                self.unregister(&[pidfd]);
            }
        }
    }

    pub(super) fn unregister(&self, fds: &[&OwnedFd]) {
        for fd in fds {
            // ENOENT when it was never registered (a failed spawn).
            unsafe {
                libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, fd.as_raw_fd(), std::ptr::null_mut())
            };
        }
    }
}

pub(super) fn signal(pidfd: &OwnedFd, sig: i32) {
    unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), sig, std::ptr::null::<u8>(), 0) };
}

/// Sends `sig` to a node's process as a signal from process `pid` (its
/// virtual pid: a signal a node sends itself), with the user the node
/// runs as: the `siginfo` its handler reads names no real process. Its
/// code is `SI_QUEUE`: the kernel lets no process but the target itself
/// send `SI_USER` or `SI_TKILL` with a `siginfo` of its own choosing.
pub(super) fn signal_from(pidfd: &OwnedFd, sig: i32, pid: i32) {
    // `siginfo_t`: signo, errno, code, padding, then the sender's pid and
    // uid (offsets 16 and 20); 128 bytes.
    let mut info = [0u8; 128];
    info[0..4].copy_from_slice(&sig.to_ne_bytes());
    info[8..12].copy_from_slice(&libc::SI_QUEUE.to_ne_bytes());
    info[16..20].copy_from_slice(&pid.to_ne_bytes());
    info[20..24].copy_from_slice(&unsafe { libc::getuid() }.to_ne_bytes());
    unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), sig, info.as_ptr(), 0) };
}

pub(super) fn reap(pid: i32) -> i32 {
    let mut status = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || Errno::last() != Errno::EINTR {
            return status;
        }
    }
}

/// Reaps `pid` if it has exited: `Ok(None)` while it runs.
pub(super) fn try_reap(pid: i32) -> Result<Option<i32>, Errno> {
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

pub(super) fn stall_error(n: u8, pid: i32, seconds: f64) -> ProcessError {
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
pub(super) fn life_of(status: i32) -> Life {
    if libc::WIFSIGNALED(status) {
        Life::Signaled(libc::WTERMSIG(status))
    } else {
        Life::Exited(libc::WEXITSTATUS(status))
    }
}

pub(super) fn fork_error(n: u8, e: ForkError) -> ProcessError {
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
        ForkError::Silent { seconds } => {
            ProcessError::Stall { node: n, call: "a fork of a parked process".to_string(), seconds }
        }
        ForkError::Sys { call, errno } => ProcessError::NodeSys { node: n, call, errno },
        ForkError::Stopped(reason) => ProcessError::Stopped { reason },
    }
}

pub(super) fn kill_and_reap(pid: i32, pidfd: &OwnedFd) {
    signal(pidfd, libc::SIGKILL);
    reap(pid);
}
