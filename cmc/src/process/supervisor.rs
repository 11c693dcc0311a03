//! The supervisor: runs one process per node, answers every modelled system
//! call itself, keeps the [`ProcessWorld`] those calls make, and waits for
//! quiescence (every node blocked in a modelled call or exited).
//!
//! It owns the processes and their kernel objects (pidfds, listeners, the
//! epoll set) and the world's data, and this file its event loop: `settle`
//! waits on the epoll set, takes each notification to the table of calls
//! and sends the answer, and `apply` carries out an action by answering
//! the held calls it concerns. The table and the handlers by family are in
//! `calls`; making, parking, resuming and reaping the processes (templates
//! and lives) in `lives`. It does not decide which action comes next (that
//! is `action`, from the world alone) nor search.
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
//! action answers it. A node that runs for `stall_timeout` from the action
//! that let it go without waiting in a modelled call (every blocking call is
//! notified, so it loops, with or without calls) is an error naming the
//! node and what it is in, read from `/proc/PID/syscall`.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::time::Instant;

use nix::errno::Errno;
use nix::libc;

use super::action::{Part, ProcessAction};
use super::calls::{Answer, IN, READABLE};
use super::crash_states::{self, Keep};
use super::lives::{Proc, Run, Template, kill_and_reap, life_of, reap, signal, stall_error, try_reap};
use super::notif::{self, Notif};
use super::world::{Blocked, Conn, ConnKind, End, Label, Life, ProcessWorld, Side, Trail};
use super::{Config, ProcessError, limits, syscalls};

pub use super::calls::{EPHEMERAL_BASE, EPOCH_BASE, VIRTUAL_PID_BASE, random_stream};

/// The output of one node in one step kept for a trace (`capture`): past
/// it, a note says how many bytes were left out.
pub const OUTPUT_BYTES_MAX: usize = 64 << 10;

/// The kinds of epoll events of a node: its listener is readable, or its
/// process exited (pidfd readable).
pub(super) const LISTENER: u64 = 0;
pub(super) const EXIT: u64 = 1;

/// The epoll token of an event of `kind` of node `n`'s process from spawn
/// `serial`: bit 0 the kind, bits 1-8 the node, the rest the spawn.
pub(super) fn token(serial: u64, n: u8, kind: u64) -> u64 {
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
    /// Seccomp notifications received.
    pub notifications: u64,
}

/// Runs the nodes of one replay at a time. Must stay on the thread that
/// created it: the nodes' death signal follows the spawning thread.
pub struct Supervisor {
    pub(super) cfg: Config,
    pub(super) world: ProcessWorld,
    pub(super) procs: Vec<Option<Proc>>,
    pub(super) templates: Vec<Option<Template>>,
    pub(super) epoll: OwnedFd,
    pub(super) handoff_parent: OwnedFd,
    pub(super) handoff_child: OwnedFd,
    pub(super) filter: Vec<libc::sock_filter>,
    /// The start stub every template is (`start`).
    pub(super) stub: CString,
    pub(super) argvs: Vec<Vec<CString>>,
    pub(super) envp: Vec<CString>,
    pub(super) cwd: CString,
    pub(super) cpu: Option<usize>,
    old_affinity: Option<libc::cpu_set_t>,
    /// What it has done so far.
    pub counters: Counters,
    /// Per node, the instruction pointers of the two calls that may lift
    /// CPUID faulting: the start stub's (its hello's `cpuid_gate`) and the
    /// preload's (its hello's); 0 before each hello.
    pub(super) cpuid_gates: Vec<[u64; 2]>,
    /// Where each node's start stub keeps its thread slots (its hello's
    /// `thread_slots`), 0 before its hello.
    pub(super) thread_slots: Vec<u64>,
    /// `log_dir` as the kernel names it (symbolic links followed), once a
    /// node's path is compared with it.
    pub(super) log_dir_real: std::cell::OnceCell<Option<std::path::PathBuf>>,
    /// Per node, whether its running life has said the preload's hello: a
    /// life must, before it first waits (or ends), or it runs without the
    /// preload. Not world state: a life waits first within the action that
    /// started it, and a snapshot is always of a life that said it.
    pub(super) greeted: Vec<bool>,
    /// Per node, whether its last call had an effect outside the process
    /// while crash budget was left: its next call is a crash point, held
    /// there (`Blocked::CrashPoint`). Not world state: it is set and taken
    /// within one run of the node, between two of its calls.
    pub(super) crash_due: Vec<bool>,
    /// Per node, what its process's memory is a function of in the step
    /// under way (the trail of a node held in the middle of it, [`Trail`]):
    /// at an action, a hash of the node's surroundings
    /// (`ProcessWorld::encode_local`) and the action, and the holds the
    /// node was held at before it; at each hold, a hash of the one before
    /// and the calls the step made before the hold (`calls`).
    /// Set and used within one action.
    pub(super) trails: Vec<Trail>,
    /// Per node, the calls it has made in the step under way, folded into
    /// its trail at each hold: whether a call is held may turn on parts of
    /// the world the trail leaves out (what its peer has read), so two
    /// holds with one trail before them may be at different calls of the
    /// program. Set and used within one action.
    pub(super) calls: Vec<u32>,
    /// The node whose held call RUN makes as it stands (a write toward a
    /// peer still open, an observation): the call is not held again. Set
    /// and used within one action.
    pub(super) let_run: Option<u8>,
    /// A thread's wait made again (`ThreadRun::Again`): the timeout its
    /// first call had (none, or its end), which it keeps. Set and used
    /// within one call.
    pub(super) kept_until: Option<Option<super::world::Millis>>,
    /// Whether the action under way read other nodes' parts of the world
    /// (`others_may_act`), beyond its node's surroundings: the transition
    /// cache, keyed by those, must not keep it.
    pub nonlocal: bool,
    /// Starting the nodes (START): a crash point does not hold a node
    /// then (`starting`), and the nodes after the one starting may still
    /// act (`others_may_act`).
    pub(super) starting: bool,
    /// While an action is carried out, the nodes whose threads are
    /// scheduled and slots settled as it goes: its node, or none for
    /// CLIENT and DROP, which run no node (an action runs no other node,
    /// whose process a checkpoint's world may not even have; a peer's
    /// crash that ends another node's wait is for that node's own actions
    /// to answer). `None` while the nodes start: every node.
    pub(super) acting: Option<Option<u8>>,
    /// While the nodes start: the choices (crashes, orders) asked for in
    /// the start, and those found (`starting`). Set and used within one
    /// start.
    pub(super) start_plan: super::starting::StartPlan,
    /// Absolute paths resolved before (`calls::disk::resolve_at`): the
    /// machine's file system does not change during a search.
    pub(super) resolved: std::cell::RefCell<std::collections::HashMap<(Vec<u8>, bool), super::calls::Resolved>>,
    /// The spawns so far: the next process's serial (kept apart from the
    /// public `counters`, which a caller may reset).
    pub(super) serials: u64,
    /// The most messages in flight seen by a check against their limit
    /// since the last action began (`None`: no check yet); the transition
    /// cache keeps it to check the limit again elsewhere.
    pub in_flight_peak: Option<usize>,
    /// Keep what each node writes to its stdout and stderr (fds 1 and 2)
    /// in `output`, from the last start or action on.
    pub capture: bool,
    /// Per node, what it wrote to fds 1 and 2 since the last start or
    /// action began (kept while `capture`), at most [`OUTPUT_BYTES_MAX`]
    /// of it, and the bytes left out past that.
    output: Vec<Vec<u8>>,
    output_dropped: Vec<usize>,
    /// Per node, what its life wrote to stderr before the preload's hello
    /// (the start stub says there why it could not load the program), at
    /// most [`START_MESSAGE_MAX`] bytes: part of the error when the life
    /// ends there.
    pub(super) start_message: Vec<Vec<u8>>,
    /// Each node's log (`node<i>.log` in `log_dir`), which the checker
    /// writes what the node writes to stdout and stderr to.
    pub(super) logs: Vec<Option<std::fs::File>>,
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
        // Every node's template is the start stub, which loads the program
        // in each life (`start`): no code of the program runs before the
        // template parks.
        let stub = super::start::find_start().map_err(|e| ProcessError::Preload {
            path: std::path::PathBuf::from("cmc-start"),
            reason: e.to_string(),
        })?;
        let stub = cstring(stub.as_os_str().as_bytes(), "start stub")?;
        let mut argvs = Vec::new();
        for n in 0..cfg.nodes {
            let mut argv = vec![path.clone()];
            for a in cfg.argv_of(n) {
                argv.push(cstring(a.as_bytes(), if cfg.argv.is_some() { "argv" } else { "args" })?);
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
        // No restartable sequences: glibc's sched_getcpu() would read the
        // real processor from the rseq area the kernel writes, which no call
        // reaches; without it, it calls the vDSO's getcpu, which the preload
        // patches into the notified system call.
        envp.push(cstring(b"GLIBC_TUNABLES=glibc.pthread.rseq=0", "environment")?);
        let mut exec = format!("{}=", super::start::protocol::EXEC_VAR).into_bytes();
        exec.extend_from_slice(program.as_os_str().as_bytes());
        envp.push(cstring(&exec, "program")?);
        let cwd = match &cfg.workdir {
            Some(d) => d.clone(),
            None => {
                std::env::current_dir().map_err(|e| ProcessError::Config { key: "workdir", reason: e.to_string() })?
            }
        };
        let cwd = cstring(cwd.as_os_str().as_bytes(), "workdir")?;
        // The data directory as paths resolve: absolute, no links.
        let mut cfg = cfg.clone();
        if let Some(d) = &cfg.data_dir {
            let dir = std::fs::canonicalize(d)
                .map_err(|e| ProcessError::Config { key: "data_dir", reason: format!("{}: {e}", d.display()) })?;
            if !dir.is_dir() {
                return Err(ProcessError::Config {
                    key: "data_dir",
                    reason: format!("{} is not a directory", dir.display()),
                });
            }
            // Paths are resolved through the real directory: a link or a
            // directory in it could lead a node's path out of the world.
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| ProcessError::Config { key: "data_dir", reason: format!("{}: {e}", dir.display()) })?;
            for entry in entries.flatten() {
                let kind = entry.file_type().map_err(|e| ProcessError::Config {
                    key: "data_dir",
                    reason: format!("{}: {e}", entry.path().display()),
                })?;
                if kind.is_symlink() || kind.is_dir() {
                    return Err(ProcessError::Config {
                        key: "data_dir",
                        reason: format!(
                            "{} holds {}, a link or a directory: the nodes' paths resolve through it",
                            dir.display(),
                            entry.path().display()
                        ),
                    });
                }
            }
            cfg.data_dir = Some(dir);
        }
        let cfg = &cfg;
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
        let cpu = node_cpu(&path, &argvs);
        let old_affinity = if cfg.pin_cpu { cpu.and_then(pin_to) } else { None };
        Ok(Supervisor {
            world: ProcessWorld::new(cfg.nodes, &cfg.budgets),
            procs: (0..cfg.nodes).map(|_| None).collect(),
            templates: (0..cfg.nodes).map(|_| None).collect(),
            cfg: cfg.clone(),
            epoll,
            handoff_parent,
            handoff_child,
            filter: super::filter::program().map_err(|e| ProcessError::Filter(e.to_string()))?,
            stub,
            argvs,
            envp,
            cwd,
            cpu,
            old_affinity,
            counters: Counters::default(),
            cpuid_gates: vec![[0; 2]; cfg.nodes as usize],
            thread_slots: vec![0; cfg.nodes as usize],
            log_dir_real: std::cell::OnceCell::new(),
            greeted: vec![false; cfg.nodes as usize],
            crash_due: vec![false; cfg.nodes as usize],
            trails: vec![Trail::default(); cfg.nodes as usize],
            calls: vec![0; cfg.nodes as usize],
            nonlocal: false,
            let_run: None,
            kept_until: None,
            starting: false,
            acting: None,
            start_plan: Default::default(),
            resolved: Default::default(),
            serials: 0,
            in_flight_peak: None,
            capture: false,
            output: vec![Vec::new(); cfg.nodes as usize],
            output_dropped: vec![0; cfg.nodes as usize],
            start_message: vec![Vec::new(); cfg.nodes as usize],
            logs: (0..cfg.nodes).map(|_| None).collect(),
            _thread_bound: std::marker::PhantomData,
        })
    }

    /// The world as the nodes have made it so far (quiescent after
    /// [`Supervisor::start_with`] and [`Supervisor::apply`]).
    pub fn world(&self) -> &ProcessWorld {
        &self.world
    }

    /// The pids of the templates and the running lives.
    pub fn pids(&self) -> Vec<i32> {
        let lives = self.procs.iter().flatten().map(|p| p.pid);
        lives.chain(self.templates.iter().flatten().map(|t| t.parked.pid)).collect()
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
                    Run::Held(_) | Run::Idle => None,
                })
                .min();
            let Some((since, n)) = oldest else {
                // Every node waits: a node's next thread runs, if one is
                // ready; else each node's slot holds the wait the actions
                // answer.
                let mut ran = false;
                let nodes: Vec<u8> = match self.acting {
                    Some(node) => node.into_iter().collect(),
                    None => (0..self.procs.len() as u8).collect(),
                };
                for &n in &nodes {
                    ran |= self.schedule(n)?;
                }
                if ran {
                    continue;
                }
                for &n in &nodes {
                    self.settle_slot(n)?;
                }
                return Ok(());
            };
            // A stop (Ctrl-C, a time cap) is answered while a node runs,
            // not only between actions.
            if let Some(reason) = self.cfg.stop_requested() {
                return Err(ProcessError::Stopped { reason });
            }
            let waited = since.elapsed();
            if waited >= self.cfg.stall_timeout {
                let pid = self.procs[n].as_ref().map_or(0, |p| p.pid);
                return Err(stall_error(n as u8, pid, waited.as_secs_f64()));
            }
            let left = (self.cfg.stall_timeout - waited).min(super::STOP_POLL);
            let timeout_ms = left.as_millis().min(i32::MAX as u128) as i32 + 1;
            let got = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), 16, timeout_ms) };
            if got < 0 {
                if Errno::last() == Errno::EINTR {
                    continue;
                }
                return Err(sys("epoll_wait"));
            }
            if got == 0 {
                // A main thread that ended before the others: the kernel
                // does not wake its thread pidfd, which reads as ended.
                for n in 0..self.procs.len() as u8 {
                    self.thread_exited(n)?;
                }
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
            // The process is ending (`exit_group`): its threads end one by
            // one, and it is reaped once they all have.
            Ok(None) if p.exiting.get() => reap(p.pid),
            // The running thread has ended (`exit`, the thread's own).
            Ok(None) => return self.thread_exited(n),
            Err(errno) => return Err(ProcessError::NodeSys { node: n, call: "waitpid", errno }),
        };
        let Some(p) = self.procs[n as usize].take() else { return Ok(()) };
        self.crash_due[n as usize] = false;
        self.retire(p);
        let life = life_of(status);
        if !self.greeted[n as usize] {
            let said = String::from_utf8_lossy(&self.start_message[n as usize]).trim().to_string();
            return Err(match start_failure(n, life) {
                ProcessError::StartFailed { node, detail } if !said.is_empty() => {
                    ProcessError::StartFailed { node, detail: format!("{detail} (it said: {said})") }
                }
                other => other,
            });
        }
        self.world.node_gone(n, false);
        self.world.nodes[n as usize].life = life;
        Ok(())
    }

    fn on_readable(&mut self, n: u8) -> Result<(), ProcessError> {
        let (Some(_), Some(t)) = (self.procs[n as usize].as_ref(), self.templates[n as usize].as_ref()) else {
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
        if Some(notif.pid as i32) != self.running_tid(n) {
            // A thread's first call, held until it runs.
            if self.take_birth(n, &notif)? {
                return match self.procs[n as usize].as_mut().and_then(|p| p.deferred.take()) {
                    Some(deferred) => self.on_call(n, deferred),
                    None => Ok(()),
                };
            }
            // Every other process of the node is parked in a held call,
            // and every other thread of its life is held.
            return Err(ProcessError::Unmodelled {
                node: n,
                call: syscalls::describe(notif.nr),
                detail: format!("a call from process {}, which is not the node's running life", notif.pid),
            });
        }
        if let Some(p) = self.procs[n as usize].as_mut()
            && p.birth.is_some()
        {
            // The running thread's next call waits for the first of the
            // thread it made.
            p.deferred = Some(notif);
            return Ok(());
        }
        self.on_call(n, notif)
    }

    /// Node `n`'s running thread's call `notif`: held at a crash point, or
    /// handled and answered.
    pub(super) fn on_call(&mut self, n: u8, notif: Notif) -> Result<(), ProcessError> {
        // Another thread may run before this call, where switches are left.
        if self.preempt(n, notif)? {
            return Ok(());
        }
        self.on_call_now(n, notif)
    }

    /// [`Supervisor::on_call`] with no switch of threads before it.
    pub(super) fn on_call_now(&mut self, n: u8, notif: Notif) -> Result<(), ProcessError> {
        // A crash point: the node's last call had an effect outside it, so
        // it is held before this one; while the nodes start, it is counted
        // (and the node killed there, if the path asks for that).
        if std::mem::take(&mut self.crash_due[n as usize]) && self.crash_points() {
            if self.starting {
                if self.start_crash_point(n, notif)? {
                    return Ok(());
                }
                return self.run_call(n, &notif);
            }
            if let Some(p) = self.procs[n as usize].as_mut() {
                p.run = Run::Held(notif);
            }
            let trail = self.trail_at_crash_point(n);
            self.world.nodes[n as usize].blocked = Blocked::CrashPoint { trail };
            return Ok(());
        }
        self.run_call(n, &notif)
    }

    /// Handles node `n`'s call and answers it; with crash budget left, a
    /// call with an effect outside the process makes the node's next call
    /// a crash point.
    pub(super) fn run_call(&mut self, n: u8, notif: &Notif) -> Result<(), ProcessError> {
        let watch = self.crash_points();
        let before = if watch { self.effects(n) } else { 0 };
        let seen = self.world.seen_by_others(n);
        self.calls[n as usize] = self.calls[n as usize].wrapping_add(1);
        // What the step's action changed is a wake-up before the call.
        self.world.sync_ready_list(n);
        let answer = self.handle(n, notif);
        // RUN's leave to make a held call as it stands is for that call.
        self.let_run = None;
        let mut answer = answer?;
        self.world.sync_ready_list(n);
        self.follow_epoll_waits(n)?;
        // In the start, the order of a listing's new names is a choice of
        // the start's: made, and the listing answered.
        if let Answer::Hold(Blocked::Order { choices, .. }) = answer
            && self.starting
        {
            self.start_listing(n, choices)?;
            answer = self.handle(n, notif)?;
        }
        for (p, (now, before)) in self.world.seen_by_others(n).iter().zip(seen).enumerate() {
            if *now != before {
                self.trails[n as usize].acted |= 1 << p;
            }
        }
        // A call that does not wait, held for what is on its way: the node
        // is in the middle of its step.
        let answer = match answer {
            Answer::Hold(mut b) if b.trail().is_some() => {
                // A write adds a message in flight, so holds of writes are
                // bounded by that limit, and not counted.
                // Nor holds of a listing: each shows a new name.
                let counted = !matches!(b, Blocked::WriteNow { .. } | Blocked::Order { .. });
                b.set_trail(self.trail_at_hold(n, notif, counted)?);
                Answer::Hold(b)
            }
            other => other,
        };
        // A call that makes the node wait leaves it quiescent, where a
        // CRASH falls anyway: no crash point, and nothing carried to the
        // next action.
        if watch && !matches!(answer, Answer::Hold(_)) && self.effects(n) != before {
            self.crash_due[n as usize] = true;
        }
        self.answer(n, notif, answer)
    }

    /// Lets node `n`'s held call run now, as if it had just been made (a
    /// crash point's RUN, a held write after its peer's close arrived).
    pub(super) fn run_held_call(&mut self, n: u8) -> Result<(), ProcessError> {
        let notif = self.held(n)?;
        self.world.nodes[n as usize].blocked = Blocked::Nothing;
        if let Some(p) = self.procs[n as usize].as_mut() {
            p.run = Run::Running(Instant::now());
        }
        self.run_call(n, &notif)
    }

    /// The trail of node `n` held at a crash point: one more link of its
    /// step's.
    pub(super) fn trail_at_crash_point(&mut self, n: u8) -> Trail {
        self.trail_at(n, 0)
    }

    /// The trail of node `n` held at a point of kind `kind` (0 a crash
    /// point, 2 a choice of its next thread) that counts no hold.
    pub(super) fn trail_at(&mut self, n: u8, kind: u8) -> Trail {
        let seen = self.seen_by_waits(n);
        let t = &mut self.trails[n as usize];
        let calls = self.calls[n as usize].to_le_bytes();
        t.hash = nonzero(xxhash_rust::xxh3::xxh3_64(&[&t.hash.to_le_bytes()[..], &[n, kind], &calls, &seen].concat()));
        *t
    }

    /// What node `n`'s threads waiting out of the slot last saw of its
    /// insides (`ThreadProc::seen`), as bytes (none for a node without
    /// threads, whose trails read as before). Part of a hold's trail: a wait whose insides changed
    /// since it looked is made again when the running thread next waits,
    /// so at a hold in the middle of a step what each saw is part of the
    /// node's future, and two holds that differ there are two worlds (a
    /// review found a snapshot shared by two such, one of which made a
    /// wait again that the other did not: different counts than with no
    /// snapshots).
    fn seen_by_waits(&self, n: u8) -> Vec<u8> {
        let node = &self.world.nodes[n as usize];
        let Some(p) = self.procs[n as usize].as_ref().filter(|_| !node.threads.is_empty()) else { return Vec::new() };
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for (k, (t, tp)) in node.threads.iter().zip(&p.threads).enumerate() {
            if matches!(t.run, super::threads::ThreadRun::Waits { .. }) {
                h.update(&(k as u64).to_le_bytes());
                h.update(&tp.seen.to_le_bytes());
            }
        }
        h.digest().to_le_bytes().to_vec()
    }

    /// The trail of node `n` held at call `notif`, which does not wait: one
    /// more link of its step's, with `counted` one more hold against
    /// [`limits::HOLDS_PER_STEP_MAX`].
    fn trail_at_hold(&mut self, n: u8, notif: &Notif, counted: bool) -> Result<Trail, ProcessError> {
        let t = &mut self.trails[n as usize];
        if counted && usize::from(t.holds) >= limits::HOLDS_PER_STEP_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "holds_per_step_max",
                max: limits::HOLDS_PER_STEP_MAX,
                detail: format!(
                    "{} that does not wait held once more in one step, for what is on its way, the node never \
                     waiting between: each hold may find the process with other memory (a count of its EAGAINs), \
                     so each is a world of its own, and a node that spins so makes worlds without end; make it \
                     wait (a blocking call, or a poll, select or epoll wait that waits)",
                    syscalls::describe(notif.nr)
                ),
            });
        }
        t.holds += u8::from(counted);
        let calls = self.calls[n as usize].to_le_bytes();
        let seen = self.seen_by_waits(n);
        let t = &mut self.trails[n as usize];
        t.hash = nonzero(xxhash_rust::xxh3::xxh3_64(&[&t.hash.to_le_bytes()[..], &[n, 1], &calls, &seen].concat()));
        Ok(*t)
    }

    /// Whether a crash may fall between two calls now: the model asks for
    /// it (`Config::crash_points`) and crash budget is left.
    fn crash_points(&self) -> bool {
        self.cfg.crash_points && self.world.crashes > 0
    }

    pub(super) fn answer(&mut self, n: u8, notif: &Notif, answer: Answer) -> Result<(), ProcessError> {
        // The filter lets `sendmsg` on the hand-off descriptor through to
        // the kernel (the pre-exec child sends its listener there), so a
        // node's own descriptor of that number would escape the world: an
        // error at the call that made it (a descriptor an ACCEPT hands out
        // included), before the node runs on.
        if self.world.nodes[n as usize].fds.contains_key(&(super::filter::HANDOFF_FD as i32)) {
            return Err(ProcessError::Unmodelled {
                node: n,
                call: syscalls::describe(notif.nr),
                detail: format!(
                    "descriptor {} is the checker's (the filter passes sendmsg on it through, for the hand-off of \
                     the node's listener before exec); a node may not have it",
                    super::filter::HANDOFF_FD
                ),
            });
        }
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
            Answer::Hold(_) if !self.greeted[n as usize] => {
                return Err(ProcessError::MissingPreload {
                    node: n,
                    detail: format!("it waited in {} before the preload's hello", syscalls::describe(notif.nr)),
                });
            }
            Answer::Hold(b) => {
                p.run = Run::Held(*notif);
                self.world.nodes[n as usize].blocked = match self.kept_until {
                    Some(until) => b.keep_until(until),
                    None => b,
                };
                return Ok(());
            }
            Answer::Done => true,
        };
        if self.cfg.node_state == super::NodeState::Inputs {
            // What the process got: the call's result and what was
            // written into its memory for it.
            let (tag, value) = match answer {
                Answer::Val(v) => (0u8, v),
                Answer::Err(e) => (1, e as i64),
                Answer::Hello => (2, 0),
                Answer::Continue => (3, 0),
                _ => (4, 0),
            };
            let node = &mut self.world.nodes[n as usize];
            let mut h = xxhash_rust::xxh3::Xxh3::with_seed(node.inputs);
            h.update(&notif.nr.to_le_bytes());
            h.update(&[tag]);
            h.update(&value.to_le_bytes());
            h.update(&notif::take_written(notif.pid).to_le_bytes());
            node.inputs = nonzero(h.digest());
        }
        // The stall timeout counts from when the node was last let go out
        // of a wait, not from its last call: a node that spins on calls the
        // checker answers at once (a non-blocking accept's EAGAIN) never
        // blocks, and is reported as one that never does.
        if let Run::Held(_) = p.run {
            p.run = Run::Running(Instant::now());
        }
        Ok(())
    }

    /// Carries out one action on a quiescent world and waits for quiescence
    /// again. The caller has checked that the action is enabled. Every
    /// node's epoll ready lists then follow what the action changed
    /// (`calls/ready_list.rs`).
    pub fn apply(&mut self, action: &ProcessAction) -> Result<(), ProcessError> {
        self.act(action)?;
        self.world.sync_ready_lists();
        Ok(())
    }

    fn act(&mut self, action: &ProcessAction) -> Result<(), ProcessError> {
        let not_enabled = || ProcessError::NotEnabled { action: action.to_string() };
        self.in_flight_peak = None;
        self.nonlocal = false;
        self.acting = Some(action.node());
        self.clear_output();
        notif::forget_written();
        // Between actions every node waits or is held at a crash point:
        // none has a crash point still to come.
        self.crash_due.fill(false);
        // Any action is after the start: no crash falls in it any more.
        self.world.start_choices.clear();
        // What the action's node's process will be a function of, should it
        // be held in the middle of this step. No other node runs in it (a
        // RESTART starts the new life of its own node; CRASH, DROP and
        // CLIENT run none), so no other node's trail is read.
        if let Some(n) = action.node() {
            let mut key = Vec::new();
            self.world.encode_memory_key(n, &mut key);
            key.extend_from_slice(action.to_string().as_bytes());
            let trail = self.world.nodes[n as usize].blocked.trail().unwrap_or_default();
            // A step that begins at a TIMEOUT under deadline order: a
            // peer's later deadline may pass while it runs, and no world
            // puts that TIMEOUT first.
            let deadline = matches!(self.world.timeout_order, super::TimeoutOrder::Deadline { .. });
            let timed = deadline && matches!(action, ProcessAction::Timeout { .. });
            let acted = trail.acted | if timed { Trail::TIMED } else { 0 };
            self.trails[n as usize] =
                Trail { hash: nonzero(xxhash_rust::xxh3::xxh3_64(&key)), holds: trail.holds, acted };
            self.calls[n as usize] = 0;
            // A step that begins between actions (not at a hold): each
            // waiting thread has looked at the node's insides as they are
            // (the last of the step before looked again at every change),
            // whichever path led here, so what it saw is a function of the
            // world (a review found a thread moved out of the slot between
            // actions keeping what it saw long before: a wait made again
            // on one path and not on another, and counts that differed
            // with snapshots and without).
            if self.world.nodes[n as usize].blocked.trail().is_none()
                && !self.world.nodes[n as usize].threads.is_empty()
            {
                let inside = self.inside(n);
                if let Some(p) = self.procs[n as usize].as_mut() {
                    p.threads.iter_mut().for_each(|t| t.seen = inside);
                }
            }
        }
        // An action for a thread waiting for the world out of its node's
        // slot: the slot moves to it (after the trail, which a choice's
        // hold carries on). At a choice of the node's next thread it
        // spends a switch, the running thread going out preempted.
        if let (Some(k), Some(n)) = (action.thread(), action.node()) {
            let node = &self.world.nodes[n as usize];
            if !node.outward_out_of_slot().contains(&(k as usize)) {
                return Err(not_enabled());
            }
            match node.blocked {
                Blocked::Choice { .. } => {
                    let left = self.world.thread_switches.filter(|&s| s > 0).ok_or_else(not_enabled)?;
                    self.world.thread_switches = Some(left - 1);
                    self.answer_at_choice(n, k as usize);
                }
                b if b.mid_step() => return Err(not_enabled()),
                _ => self.focus(n, k as usize),
            }
        }
        match *action {
            ProcessAction::Deliver { node, conn, part, .. } if self.polling(node) => {
                // Into the watched end's receive buffer; the poll sees it.
                let side = self.watched_end(node, &conn, IN | libc::POLLRDHUP).ok_or_else(not_enabled)?;
                let msg = self.take_delivery(&conn, side, part).ok_or_else(not_enabled)?;
                self.world.conns.get_mut(&conn).ok_or_else(not_enabled)?.arrived(side).push_back(msg);
                self.answer_poll(node, false)?;
            }
            ProcessAction::Deliver { node, conn, part, .. }
                if matches!(self.world.nodes[node as usize].blocked, Blocked::LookNow { .. }) =>
            {
                // Into the end's receive buffer, before the observation.
                let side = self.looking(node).filter(|(l, _)| *l == conn).ok_or_else(not_enabled)?.1;
                let msg = self.take_delivery(&conn, side, part).ok_or_else(not_enabled)?;
                self.world.conns.get_mut(&conn).ok_or_else(not_enabled)?.arrived(side).push_back(msg);
            }
            ProcessAction::Deliver { node, conn, part, .. } => {
                let (_, side) = self.reading(node).ok_or_else(not_enabled)?;
                let msg = self.take_delivery(&conn, side, part).ok_or_else(not_enabled)?;
                if Self::read_flags(&self.held(node)?) & libc::MSG_PEEK != 0 {
                    // A peek leaves the message received, not read.
                    self.world.conns.get_mut(&conn).ok_or_else(not_enabled)?.arrived(side).push_back(msg.clone());
                    self.answer_read(node, &msg)?;
                    return self.settle();
                }
                let taken = self.answer_read(node, &msg)?;
                if taken < msg.len() {
                    // A short buffer: the rest has arrived, and is the
                    // next read's, received and not read yet.
                    if let Some(c) = self.world.conns.get_mut(&conn) {
                        c.arrived(side).push_front(msg[taken..].to_vec());
                    }
                }
            }
            // The peer's FIN or reset arrives, if one was on its way; the
            // end of the stream is in the world then, and the read or the
            // poll sees it.
            ProcessAction::Eof { node, conn, .. }
                if matches!(self.world.nodes[node as usize].blocked, Blocked::WriteNow { .. }) =>
            {
                // The peer's close comes first: the held write runs after it.
                let Blocked::WriteNow { fd, .. } = self.world.nodes[node as usize].blocked else {
                    return Err(not_enabled());
                };
                let (label, side) = self.world.conn_of(node, fd).filter(|(l, _)| *l == conn).ok_or_else(not_enabled)?;
                if let Some(c) = self.world.conns.get_mut(&label) {
                    c.close_arrives(side);
                }
                // `sk_state_change`: a wake-up naming no event.
                self.world.wake_end(&label, side, 0);
                self.run_held_call(node)?;
            }
            ProcessAction::Eof { node, conn, .. }
                if matches!(self.world.nodes[node as usize].blocked, Blocked::LookNow { .. }) =>
            {
                // The FIN or the reset arrives before the observation.
                let side = self.looking(node).filter(|(l, _)| *l == conn).ok_or_else(not_enabled)?.1;
                self.world.conns.get_mut(&conn).ok_or_else(not_enabled)?.end_arrives(side);
                self.world.wake_end(&conn, side, 0);
            }
            ProcessAction::Eof { node, conn, .. } => {
                let side = if self.polling(node) {
                    self.watched_end(node, &conn, !0)
                } else {
                    self.reading(node).filter(|(l, _)| *l == conn).map(|(_, side)| side)
                };
                if let (Some(side), Some(c)) = (side, self.world.conns.get_mut(&conn)) {
                    c.end_arrives(side);
                    self.world.wake_end(&conn, side, 0);
                }
                if self.polling(node) {
                    self.answer_poll(node, false)?;
                } else {
                    self.answer_end(node)?;
                }
            }
            ProcessAction::Accept { node, from, .. } => {
                let w = &self.world.nodes[node as usize];
                let queued = &w.accept_queue;
                let listeners: Vec<i32> = match w.blocked {
                    Blocked::Accept { fd, .. } | Blocked::AcceptNow { fd, .. } => vec![fd],
                    _ => w.watch.iter().filter(|(_, e)| **e & IN != 0).map(|(fd, _)| *fd).collect(),
                };
                let label = self
                    .world
                    .conns
                    .iter()
                    .find(|(l, c)| {
                        c.target == node
                            && c.target_end == End::Pending
                            && listeners.contains(&c.listener)
                            && !queued.contains(l)
                            && match from {
                                Some(d) => l.kind == ConnKind::Node && l.node == d,
                                None => l.kind == ConnKind::Client,
                            }
                    })
                    .map(|(l, _)| *l)
                    .ok_or_else(not_enabled)?;
                // In the listener's queue: an edge for an edge-triggered
                // epoll of it.
                if let Some(listener) = self.world.conns.get(&label).map(|c| c.listener) {
                    self.world.nodes[node as usize].wake(READABLE, |fd, _| fd == listener);
                }
                if self.polling(node) {
                    // Ready at the listening socket; `accept` takes it.
                    self.world.nodes[node as usize].accept_queue.push(label);
                    self.answer_poll(node, false)?;
                } else {
                    self.answer_accept(node, label)?;
                }
            }
            ProcessAction::Drop { .. } => {
                self.world.drops -= 1;
                let (conn, side) = action.dropped().ok_or_else(not_enabled)?;
                if self.world.queue_toward(&conn, side).is_none_or(|q| q.is_empty()) {
                    return Err(not_enabled());
                }
                self.world.drop_reset(&conn, side);
            }
            ProcessAction::Timeout { node, .. } => {
                // Overdue: the clock passed the wait's deadline already;
                // no budget, no time.
                if !self.world.overdue(node) {
                    self.world.timeouts -= 1;
                    // To the wait's deadline, which is after the clock; the
                    // manual's `T` moves it one second.
                    let to = match self.world.deadline(node) {
                        Some(deadline) => Some(deadline),
                        None => self.world.clock.checked_add(super::world::T_MS),
                    };
                    self.world.clock = to.ok_or(ProcessError::Limit {
                        node,
                        limit: "clock_max",
                        max: usize::MAX,
                        detail: "the logical clock would pass its last millisecond".to_string(),
                    })?;
                }
                match self.world.nodes[node as usize].blocked {
                    Blocked::Read { until: Some(until), .. } | Blocked::Accept { until: Some(until), .. } => {
                        // The program's receive timeout: the clock reaches
                        // its end, and the call fails with EAGAIN.
                        self.world.clock = self.world.clock.max(until);
                        self.time_out_receive(node)?;
                    }
                    // The manual's convention, where the model asks for it.
                    Blocked::Read { until: None, .. } | Blocked::Accept { until: None, .. }
                        if !self.world.timeout_byte =>
                    {
                        return Err(not_enabled());
                    }
                    Blocked::Read { until: None, .. } => {
                        self.answer_read(node, b"T")?;
                    }
                    Blocked::Accept { until: None, .. } => {
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
                        self.check_in_flight(node, || format!("the 'T' of timer connection {label}"))?;
                        let w = &mut self.world.nodes[node as usize];
                        w.timer_conns += 1;
                        let Blocked::Accept { fd, .. } = self.world.nodes[node as usize].blocked else {
                            return Err(not_enabled());
                        };
                        let mut conn = Conn::new(node, End::Gone, End::Pending).at(
                            fd,
                            [127, 0, 0, 1],
                            super::PORT_BASE + node as u16,
                        );
                        conn.to_target.push_back(b"T".to_vec());
                        self.world.conns.insert(label, conn);
                        self.answer_accept(node, label)?;
                    }
                    Blocked::Sleep { until } => {
                        // Late, never early: the clock reaches the sleep's
                        // end, a millisecond at least after it began.
                        self.world.clock = self.world.clock.max(until);
                        self.wake(node)?;
                    }
                    Blocked::Poll { .. } => {
                        // The earliest of the poll's end and the watched
                        // timers' expiries.
                        let end = self.world.deadline(node).ok_or_else(not_enabled)?;
                        self.world.clock = self.world.clock.max(end);
                        self.answer_poll(node, true)?;
                    }
                    Blocked::Timer { fd } => self.expire_timer(node, fd)?,
                    Blocked::Futex { until: Some(until), .. } => {
                        self.world.clock = self.world.clock.max(until);
                        self.time_out_futex(node)?;
                    }
                    Blocked::Nothing
                    | Blocked::Pause
                    | Blocked::CrashPoint { .. }
                    | Blocked::Woken { .. }
                    | Blocked::ReadNow { .. }
                    | Blocked::AcceptNow { .. }
                    | Blocked::WriteNow { .. }
                    | Blocked::LookNow { .. }
                    | Blocked::Order { .. }
                    | Blocked::Futex { .. }
                    | Blocked::Choice { .. } => {
                        return Err(not_enabled());
                    }
                }
            }
            ProcessAction::Run { node, .. }
                if matches!(self.world.nodes[node as usize].blocked, Blocked::Woken { .. }) =>
            {
                // The woken wait returns with what is ready now.
                self.return_poll(node)?;
            }
            ProcessAction::Run { node, .. }
                if matches!(self.world.nodes[node as usize].blocked, Blocked::WriteNow { .. }) =>
            {
                self.write_before_close(node)?;
            }
            ProcessAction::Run { node, .. }
                if matches!(self.world.nodes[node as usize].blocked, Blocked::LookNow { .. }) =>
            {
                // The observation, of the world as it is now.
                self.let_run = Some(node);
                self.run_held_call(node)?;
            }
            ProcessAction::Run { node, .. }
                if matches!(
                    self.world.nodes[node as usize].blocked,
                    Blocked::ReadNow { .. } | Blocked::AcceptNow { .. }
                ) =>
            {
                // Nothing had arrived when it ran: EAGAIN, or 0 from a
                // read shut for reading.
                let notif = self.held(node)?;
                let shut_rd = self.reading(node).is_some_and(|(label, side)| {
                    self.world.conns.get(&label).is_some_and(|c| c.sock(side).shut & super::world::Sock::RD != 0)
                });
                self.world.nodes[node as usize].blocked = Blocked::Nothing;
                let answer = if shut_rd { Answer::Val(0) } else { Answer::Err(libc::EAGAIN) };
                self.answer(node, &notif, answer)?;
            }
            ProcessAction::Order { node, choice } => {
                // The new names fall the chosen way; the listing runs again
                // and shows them so.
                let Blocked::Order { choices, .. } = self.world.nodes[node as usize].blocked else {
                    return Err(not_enabled());
                };
                if choice >= choices {
                    return Err(not_enabled());
                }
                let disk = &mut self.world.nodes[node as usize].disk;
                let new = super::dir_order::unshown(&disk.order, super::dir_order::listed(&disk.current().1).iter());
                if new.is_empty() {
                    return Err(not_enabled());
                }
                super::dir_order::place(&mut disk.order, &new, choice);
                self.run_held_call(node)?;
            }
            ProcessAction::Run { node, .. }
                if matches!(self.world.nodes[node as usize].blocked, Blocked::Choice { .. }) =>
            {
                // The fixed thread runs next: the running one goes on with
                // its call, or the lowest-numbered that may run.
                if self.world.nodes[node as usize].slot_of().is_some() {
                    self.go_on(node)?;
                } else {
                    let k = self.world.nodes[node as usize].next_ready().ok_or_else(not_enabled)?;
                    self.run_thread(node, k)?;
                }
            }
            ProcessAction::Switch { node, thread } => {
                let w = &self.world.nodes[node as usize];
                if !matches!(w.blocked, Blocked::Choice { .. }) || !w.switch_to().contains(&(thread as usize)) {
                    return Err(not_enabled());
                }
                let left = self.world.thread_switches.filter(|&s| s > 0).ok_or_else(not_enabled)?;
                self.world.thread_switches = Some(left - 1);
                self.switch_to(node, thread as usize)?;
            }
            ProcessAction::Run { node, .. } => {
                let Blocked::CrashPoint { .. } = self.world.nodes[node as usize].blocked else {
                    return Err(not_enabled());
                };
                self.run_held_call(node)?;
            }
            ProcessAction::Client { node } => {
                let w = &mut self.world.nodes[node as usize];
                let k = self.cfg.budgets.clients - w.clients_left;
                w.clients_left -= 1;
                let label = Label { kind: ConnKind::Client, node, k };
                let (target, listener) = self.world.client_listener(node).ok_or_else(not_enabled)?;
                let mut conn = Conn::new(target, End::Open, End::Pending).at(
                    listener,
                    [127, 0, 0, 1],
                    super::PORT_BASE + node as u16,
                );
                let request = self.cfg.request_of(k).to_vec();
                if !request.is_empty() {
                    self.check_in_flight(node, || format!("the request of client connection {label}"))?;
                    conn.to_target.push_back(request);
                }
                self.world.conns.insert(label, conn);
            }
            ProcessAction::Crash { node, keep } => {
                let disk = &self.world.nodes[node as usize].disk;
                let allowed = match keep {
                    None => disk.pending.is_empty(),
                    Some(k) => !disk.pending.is_empty() && crash_states::allows(self.cfg.crash_states, disk, k),
                };
                if !allowed {
                    return Err(not_enabled());
                }
                self.crash(node, keep);
            }
            // Taken by the engine, which starts the nodes again.
            ProcessAction::StartCrash(_) | ProcessAction::StartOrder { .. } => return Err(not_enabled()),
            ProcessAction::Restart { node } => {
                if self.world.nodes[node as usize].life != Life::Down {
                    return Err(not_enabled());
                }
                // A fresh process that recovers from fd 193 and its data
                // directory, with a pid of its own.
                let w = &mut self.world.nodes[node as usize];
                w.restarts = w.restarts.checked_add(1).ok_or(ProcessError::Limit {
                    node,
                    limit: "restarts_per_node_max",
                    max: u8::MAX as usize,
                    detail: "one RESTART too many".to_string(),
                })?;
                w.life = Life::Live;
                w.life_clock_reads = 0;
                self.new_life(node)?;
            }
        }
        let settled = self.settle();
        self.acting = None;
        settled
    }

    /// Kills node `n` and spends a crash; `keep` says which of its pending
    /// data-directory changes reached the disk. It is down until its
    /// RESTART: no process, nothing listening at its ports; its reported
    /// state is empty until its new life writes one.
    pub(super) fn crash(&mut self, n: u8, keep: Option<Keep>) {
        self.world.crashes -= 1;
        self.kill_crashed(n, keep);
    }

    /// [`Supervisor::crash`], its crash spent already.
    pub(super) fn kill_crashed(&mut self, n: u8, keep: Option<Keep>) {
        if let Some(p) = self.procs[n as usize].take() {
            signal(&p.pidfd, libc::SIGKILL);
            reap(p.pid);
            self.retire(p);
        }
        self.world.node_gone(n, true);
        // Nothing pending: still, a file no name reaches is gone.
        crash_states::crash(&mut self.world.nodes[n as usize].disk, keep.unwrap_or(Keep::Oldest(0)));
        self.world.nodes[n as usize].state.clear();
        self.world.nodes[n as usize].life = Life::Down;
    }

    /// One more message may enter the world for node `n` (`what` says
    /// which): an error naming the limit if as many as it allows are in
    /// flight. Remembers the count for the transition cache.
    pub(super) fn check_in_flight(&mut self, n: u8, what: impl FnOnce() -> String) -> Result<(), ProcessError> {
        let now = self.world.in_flight();
        self.in_flight_peak = Some(self.in_flight_peak.map_or(now, |p| p.max(now)));
        if now >= limits::MESSAGES_IN_FLIGHT_MAX {
            return Err(ProcessError::Limit {
                node: n,
                limit: "messages_in_flight_max",
                max: limits::MESSAGES_IN_FLIGHT_MAX,
                detail: what(),
            });
        }
        Ok(())
    }

    /// Keeps `data`, written by node `n` to its stdout or stderr, while
    /// capturing: at most [`OUTPUT_BYTES_MAX`] per step.
    pub(super) fn captured(&mut self, n: u8, data: &[u8]) {
        let out = &mut self.output[n as usize];
        let kept = data.len().min(OUTPUT_BYTES_MAX.saturating_sub(out.len()));
        out.extend_from_slice(&data[..kept]);
        self.output_dropped[n as usize] += data.len() - kept;
    }

    /// Appends `data`, written by node `n` to its stdout or stderr, to its
    /// log if there is one (a failed write loses the log, not the search).
    pub(super) fn log_output(&mut self, n: u8, _stream: u8, data: &[u8]) {
        use std::io::Write;
        if let Some(log) = self.logs[n as usize].as_mut() {
            let _ = log.write_all(data);
        }
    }

    pub(super) fn clear_output(&mut self) {
        self.output.iter_mut().for_each(Vec::clear);
        self.output_dropped.iter_mut().for_each(|d| *d = 0);
    }

    /// What each node wrote to its stdout and stderr since the last start
    /// or action began (while `capture`), as text, with a note of the
    /// bytes past [`OUTPUT_BYTES_MAX`] left out.
    pub fn take_output(&mut self) -> Vec<String> {
        let mut all = Vec::with_capacity(self.output.len());
        for (out, dropped) in self.output.iter_mut().zip(&mut self.output_dropped) {
            let mut text = String::from_utf8_lossy(out).into_owned();
            if *dropped > 0 {
                text.push_str(&format!("\n[cmc: {dropped} more bytes of output in this step not kept]\n"));
            }
            out.clear();
            *dropped = 0;
            all.push(text);
        }
        all
    }

    /// Takes what a DELIVER of `part` hands over from the messages in
    /// flight toward `side` of `conn`; `None` if they do not allow it.
    fn take_delivery(&mut self, conn: &Label, side: Side, part: Part) -> Option<Vec<u8>> {
        let c = self.world.conns.get_mut(conn)?;
        let was_split = c.split(side);
        c.set_split(side, false);
        let queue = match side {
            Side::Target => &mut c.to_target,
            Side::Dialer => &mut c.to_dialer,
        };
        let head = queue.pop_front()?;
        // A message arrives: an edge for an edge-triggered epoll of the end.
        self.world.wake_end(conn, side, READABLE);
        let c = self.world.conns.get_mut(conn)?;
        let queue = match side {
            Side::Target => &mut c.to_target,
            Side::Dialer => &mut c.to_dialer,
        };
        match part {
            Part::Whole => Some(head),
            Part::First(k) if !was_split && (k as usize) < head.len() => {
                queue.push_front(head[k as usize..].to_vec());
                c.set_split(side, true);
                Some(head[..k as usize].to_vec())
            }
            Part::Merged => {
                let mut both = head;
                both.extend(queue.pop_front()?);
                Some(both)
            }
            Part::First(_) => None,
        }
    }

    fn polling(&self, n: u8) -> bool {
        matches!(self.world.nodes[n as usize].blocked, Blocked::Poll { .. } | Blocked::Woken { .. })
    }

    /// The connection end node `n` is held observing ([`Blocked::LookNow`]).
    fn looking(&self, n: u8) -> Option<(Label, Side)> {
        match self.world.nodes[n as usize].blocked {
            Blocked::LookNow { fd, .. } => self.world.conn_of(n, fd),
            _ => None,
        }
    }

    fn reading(&self, n: u8) -> Option<(Label, Side)> {
        match self.world.nodes[n as usize].blocked {
            Blocked::Read { fd, .. } | Blocked::ReadNow { fd, .. } => self.world.conn_of(n, fd),
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

/// Why a life that ended before the preload's hello ended: the start
/// stub's own exit statuses (`start::protocol`), or a program that ran
/// without the preload (ld.so could not load it, say).
/// The most of a life's stderr before the preload's hello kept for its
/// error.
pub(super) const START_MESSAGE_MAX: usize = 512;

fn start_failure(n: u8, life: Life) -> ProcessError {
    use super::start::protocol as p;
    let stub = |detail: &str| ProcessError::StartFailed { node: n, detail: detail.to_string() };
    match life {
        Life::Exited(s) if s == p::EXIT_STATIC => {
            stub("refused a statically linked program: it must be dynamically linked, so that ld.so loads the preload")
        }
        Life::Exited(s) if s == p::EXIT_READ => stub("could not open, read or execute the program or its interpreter"),
        Life::Exited(s) if s == p::EXIT_FORMAT => {
            stub("found no x86-64 ELF executable (or its interpreter's headers are malformed)")
        }
        Life::Exited(s) if s == p::EXIT_LIMIT => {
            stub("crossed one of its limits (arguments, environment, program headers)")
        }
        Life::Exited(s) if s == p::EXIT_MAP => stub("could not map the program or its interpreter"),
        Life::Exited(s) if s == p::EXIT_USAGE => stub("was not told the program's path"),
        Life::Exited(s) if s == p::EXIT_PANIC => stub("panicked (a bug in cmc)"),
        other => {
            ProcessError::MissingPreload { node: n, detail: format!("it ended ({other:?}) before the preload's hello") }
        }
    }
}

/// The CPU every node of a search runs on: one of the checker's allowed
/// CPUs, chosen by the program and its arguments, so that the same model
/// runs on the same CPU on every run (a node can read the CPU it runs on
/// without a system call, with `rdpid` or `lsl`, which cannot be trapped)
/// while different models checked at once spread over the CPUs. `None`
/// when the affinity cannot be read.
fn node_cpu(path: &CString, argvs: &[Vec<CString>]) -> Option<usize> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return None;
    }
    let allowed: Vec<usize> =
        (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect();
    let mut key = path.as_bytes().to_vec();
    for a in argvs.iter().flatten() {
        key.extend_from_slice(a.as_bytes_with_nul());
    }
    let pick = xxhash_rust::xxh3::xxh3_64(&key) as usize % allowed.len().max(1);
    allowed.get(pick).copied()
}

/// Pins the calling thread to `cpu`, so that its round trips with the
/// nodes stay on one CPU; returns the affinity to restore.
fn pin_to(cpu: usize) -> Option<libc::cpu_set_t> {
    unsafe {
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old) != 0 {
            return None;
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return None;
        }
        Some(old)
    }
}

/// `hash`, or 1 for 0: a trail's hash is 0 only where the node's memory is
/// its reported state's ([`Trail::default`]).
pub(super) fn nonzero(hash: u64) -> u64 {
    hash.max(1)
}
