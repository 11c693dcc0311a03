//! The start stub (`cmc/start/`), run natively: a program started through
//! it sees what it would see exec'd by the kernel (arguments, environment
//! without `CMC_EXEC`, auxiliary vector, `.preinit_array`, constructors,
//! IFUNC resolvers), except what the stub changes on purpose: no vDSO,
//! `rdtsc` and `cpuid` emulated, and the stack canary and pointer guard
//! fixed by the node's number. Programs it cannot start are refused with a
//! message and a distinct exit status. Last, a small supervisor of this
//! file's own (seccomp user notification, `spawn` and `forkserver`) checks
//! the hello, the park, and lives forked from the parked stub.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use cmc::process::forkserver::{self, Parked};
use cmc::process::notif::{self, Notif};
use cmc::process::spawn::{self, Spec};
use cmc::process::start::protocol::{self, Hello};
use nix::libc;

fn stub() -> PathBuf {
    cmc::process::start::find_start().unwrap_or_else(|e| panic!("no start stub: {e}"))
}

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/start")
}

fn out_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("start");
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `cmd` (a compiler) to make `out`, through a temporary name.
fn build(mut cmd: Command, out: &Path) -> PathBuf {
    let building = out.with_extension(format!("building-{}", std::process::id()));
    let result = cmd.arg("-o").arg(&building).output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(result.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&result.stderr));
    std::fs::rename(&building, out).expect("rename a build into place");
    out.to_path_buf()
}

/// `tests/start/NAME.c` compiled with `flags`, once per test binary.
fn c_program(name: &str, flags: &[&str]) -> PathBuf {
    let out = out_dir().join(format!("{name}{}", flags.join("").replace([' ', '-', ','], "_")));
    let mut cmd = Command::new("cc");
    cmd.args(["-O1", "-Wall", "-Werror"]).args(flags).arg(sources().join(format!("{name}.c")));
    build(cmd, &out)
}

fn probe_no_pie() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| c_program("probe", &["-no-pie"]))
}

fn probe_pie() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| c_program("probe", &["-pie", "-fPIE"]))
}

/// The C compiler's `-z execstack` puts `PF_X` in `PT_GNU_STACK`.
fn probe_exec_stack() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| c_program("probe", &["-no-pie", "-Wl,-z,execstack"]))
}

fn rust_program() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let mut cmd = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()));
        cmd.args(["-O", "--edition", "2021"]).arg(sources().join("hello.rs"));
        build(cmd, &out_dir().join("hello_rs"))
    })
}

/// The environment both ways: `CMC_EXEC` sorts between these.
const ENV: [(&str, &str); 2] = [("AAA", "first"), ("ZZZ", "last")];

fn direct(program: &Path, args: &[&str]) -> Output {
    Command::new(program).arg0("probe").args(args).env_clear().envs(ENV).output().expect("run the program")
}

fn through_stub(program: &Path, args: &[&str]) -> Output {
    Command::new(stub())
        .arg0("probe")
        .args(args)
        .env_clear()
        .envs(ENV)
        .env(protocol::EXEC_VAR, program)
        .output()
        .expect("run the stub")
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lines that must not differ between a direct run and one through the
/// stub (the probe's lines without '@').
fn common(out: &Output) -> Vec<String> {
    text(out).lines().filter(|l| !l.starts_with('@')).map(str::to_string).collect()
}

/// The value of the probe's line `@NAME=VALUE`.
fn at(out: &Output, name: &str) -> String {
    let prefix = format!("@{name}=");
    text(out)
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("no {prefix} in:\n{}", text(out)))
}

fn cpuid_faulting() -> bool {
    std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| c.split_whitespace().any(|f| f == "cpuid_fault"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A C program run through the stub prints what it prints exec'd directly,
/// and exits the same; what the stub changes on purpose differs as it
/// should.
fn same_as_direct(program: &Path) -> (Output, Output) {
    let args = ["0", "an argument", ""];
    let (d, s) = (direct(program, &args), through_stub(program, &args));
    assert_eq!(s.status.code(), Some(7), "through the stub: {s:?}");
    assert_eq!(d.status.code(), Some(7), "direct: {d:?}");
    assert_eq!(common(&s), common(&d), "through the stub:\n{}\ndirect:\n{}", text(&s), text(&d));
    let lines = common(&s);
    for expected in [
        "argc=4",
        "argv[0]=probe",
        "argv[1]=0",
        "argv[2]=an argument",
        "argv[3]=",
        "env AAA=first",
        "env ZZZ=last",
        "preinit=1 constructor=1",
        "ifunc=1 answer=42",
        "phdr=1 phent=56 phnum=1",
        "entry=1",
        "base=1",
        "clocks=1",
    ] {
        assert!(lines.iter().any(|l| l.starts_with(expected)), "no {expected:?} in:\n{}", text(&s));
    }
    assert!(!text(&s).contains(protocol::EXEC_VAR), "the program sees CMC_EXEC:\n{}", text(&s));
    assert_eq!(lines.iter().filter(|l| l.starts_with("env ")).count(), 2, "{}", text(&s));
    assert!(lines.contains(&format!("execfn={}", program.display())), "{}", text(&s));
    // comm: the program file's name, as its execve would have set it (the
    // kernel keeps 15 bytes).
    let name = program.file_name().unwrap().to_string_lossy();
    assert!(lines.contains(&format!("comm={}", &name[..name.len().min(15)])), "{}", text(&s));
    assert!(s.stderr.is_empty(), "{}", String::from_utf8_lossy(&s.stderr));

    assert_eq!(at(&d, "vdso"), "present", "the kernel maps a vDSO");
    assert_eq!(at(&s, "vdso"), "absent", "no [vdso] or [vvar] mapping is left");
    assert_eq!(at(&s, "sysinfo_ehdr"), "absent");
    if cpuid_faulting() {
        assert_eq!(at(&s, "rdrand"), "0 rdseed=0", "the resolver's cpuid was emulated");
    }
    // The resolver's rdtsc read CLOCK_MONOTONIC in nanoseconds, shortly
    // before main read it.
    let tsc_line = at(&s, "tsc");
    let (tsc, mono) = tsc_line.split_once(" mono=").expect("tsc and mono");
    let (tsc, mono): (u64, u64) = (tsc.parse().unwrap(), mono.parse().unwrap());
    assert!(tsc <= mono && mono - tsc < 60_000_000_000, "rdtsc not emulated: {tsc_line}");
    (d, s)
}

#[test]
fn a_no_pie_program_runs_through_the_stub_as_exec_d_directly() {
    let (_, s) = same_as_direct(probe_no_pie());
    assert!(at(&s, "addresses").starts_with("main=0x40"), "{}", text(&s));
}

#[test]
fn a_position_independent_program_is_loaded_where_the_kernel_puts_it_without_aslr() {
    let (_, s) = same_as_direct(probe_pie());
    // At the kernel's ELF_ET_DYN_BASE with ASLR off, even where ASLR is on.
    assert!(at(&s, "addresses").starts_with("main=0x555555555"), "{}", text(&s));
}

#[test]
fn an_executable_stack_is_honoured_as_the_kernel_does() {
    let (d, s) = same_as_direct(probe_exec_stack());
    assert!(common(&d).contains(&"stack=rwxp".to_string()), "{}", text(&d));
    assert!(common(&s).contains(&"stack=rwxp".to_string()), "{}", text(&s));
    let (d, s) = (direct(probe_no_pie(), &["0"]), through_stub(probe_no_pie(), &["0"]));
    assert!(common(&d).contains(&"stack=rw-p".to_string()), "{}", text(&d));
    assert!(common(&s).contains(&"stack=rw-p".to_string()), "{}", text(&s));
}

#[test]
fn a_rust_program_runs_through_the_stub_as_exec_d_directly() {
    let program = rust_program();
    let args = ["1", "x"];
    let (d, s) = (direct(program, &args), through_stub(program, &args));
    assert_eq!(s.status.code(), Some(3), "{s:?}");
    assert_eq!(d.status.code(), Some(3), "{d:?}");
    assert_eq!(text(&s), text(&d));
    assert_eq!(
        text(&s),
        "args=[\"probe\", \"1\", \"x\"]\nAAA=Ok(\"first\")\nCMC_EXEC=None\ntime=Ok(true)\nmap=328350\nelapsed=true\n"
    );
    assert!(s.stderr.is_empty(), "{}", String::from_utf8_lossy(&s.stderr));
}

/// Every life draws its 16 `AT_RANDOM` bytes with `getrandom` before ld.so
/// reads them: under cmc the node's random stream (a supervisor answers
/// it; see the next test), run natively the kernel's, so that two runs
/// through the stub differ as two execs do, and glibc takes its canary and
/// pointer guard from those bytes.
#[test]
fn every_life_draws_its_canary_and_pointer_guard_with_getrandom() {
    let program = probe_pie();
    let (a, b) = (through_stub(program, &["0"]), through_stub(program, &["0"]));
    for name in ["canary", "pointer_guard", "at_random"] {
        assert_ne!(at(&a, name), at(&b, name), "{name} is the same on two runs through the stub");
    }
    for out in [&a, &b] {
        let hex = at(out, "at_random");
        let bytes: Vec<u8> = (0..16).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
        // glibc: the canary is bytes 0..8 with the lowest byte zeroed, the
        // pointer guard bytes 8..16.
        let canary = u64::from_le_bytes(bytes[..8].try_into().unwrap()) & !0xff;
        let guard = u64::from_le_bytes(bytes[8..].try_into().unwrap());
        assert_eq!(at(out, "canary"), format!("{canary:016x}"));
        assert_eq!(at(out, "pointer_guard"), format!("{guard:016x}"));
    }
    let (x, y) = (direct(program, &["0"]), direct(program, &["0"]));
    assert_ne!(at(&x, "canary"), at(&y, "canary"), "exec'd directly, the kernel's AT_RANDOM differs per exec");
    assert_ne!(at(&x, "at_random"), at(&y, "at_random"));
}

#[test]
fn a_static_program_is_refused_by_name() {
    let program = out_dir().join("static_c");
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let program = BUILT.get_or_init(|| {
        let mut cmd = Command::new("cc");
        cmd.args(["-O1", "-static"]).arg(sources().join("static.c"));
        build(cmd, &program)
    });
    let s = through_stub(program, &["0"]);
    assert_eq!(s.status.code(), Some(protocol::EXIT_STATIC), "{s:?}");
    assert!(s.stdout.is_empty(), "the program ran: {}", text(&s));
    assert_eq!(
        String::from_utf8_lossy(&s.stderr),
        format!(
            "cmc-start: program {}: statically linked (no PT_INTERP): cmc runs dynamically linked programs only, \
             which ld.so starts\n",
            program.display()
        )
    );
}

#[test]
fn what_the_stub_cannot_start_is_refused_with_a_message_and_a_status() {
    let refused = |out: &Output, status: i32, message: &str| {
        assert_eq!(out.status.code(), Some(status), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("cmc-start: ") && stderr.contains(message), "{stderr:?} lacks {message:?}");
    };
    let no_var = Command::new(stub()).arg0("probe").arg("0").env_clear().output().unwrap();
    refused(&no_var, protocol::EXIT_USAGE, "no CMC_EXEC in the environment");
    refused(&through_stub(Path::new(""), &["0"]), protocol::EXIT_USAGE, "CMC_EXEC is empty");
    refused(&through_stub(Path::new("/nonexistent/program"), &["0"]), protocol::EXIT_READ, "ENOENT");

    let dir = out_dir();
    let script = dir.join("script.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    refused(&through_stub(&script, &["0"]), protocol::EXIT_FORMAT, "not an ELF file");

    let mut elf = std::fs::read(probe_no_pie()).unwrap();
    elf[18] = 183; // EM_AARCH64
    let arm = dir.join("aarch64_probe");
    std::fs::write(&arm, &elf).unwrap();
    std::fs::set_permissions(&arm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    refused(&through_stub(&arm, &["0"]), protocol::EXIT_FORMAT, "not an x86-64 ELF file");

    let many: Vec<String> = (0..protocol::ARGS_MAX).map(|i| i.to_string()).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    refused(
        &through_stub(probe_no_pie(), &many),
        protocol::EXIT_LIMIT,
        "arguments: more than the stub's limit ARGS_MAX = 4096",
    );
    // Exactly at the limit (argv[0] and ARGS_MAX - 1 more) it runs.
    let ok = through_stub(probe_no_pie(), &many[..protocol::ARGS_MAX - 1]);
    assert_eq!(ok.status.code(), Some(7), "{:?}", String::from_utf8_lossy(&ok.stderr));
}

// A supervisor of this file's own: the stub under seccomp user
// notification, as `spawn` starts templates, with the calls that carry
// time and entropy answered with fixed values.

const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const NOTIFIED: [i64; 9] = [
    libc::SYS_ioctl,
    libc::SYS_execve,
    libc::SYS_clone,
    libc::SYS_getppid,
    libc::SYS_arch_prctl,
    libc::SYS_clock_gettime,
    libc::SYS_gettimeofday,
    libc::SYS_time,
    libc::SYS_getrandom,
];
const REALTIME_SECONDS: i64 = 1_700_000_000;
const MONOTONIC_SECONDS: i64 = 1_000;

/// Notifies the calls of [`NOTIFIED`], allows the rest (x86-64 only).
fn filter() -> Vec<libc::sock_filter> {
    let stmt = |code: u32, k: u32| libc::sock_filter { code: code as u16, jt: 0, jf: 0, k };
    let jeq =
        |k: u32, jt: u8| libc::sock_filter { code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16, jt, jf: 0, k };
    let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    let mut f = vec![stmt(load, 4), jeq(AUDIT_ARCH_X86_64, 1), stmt(ret, SECCOMP_RET_KILL_PROCESS), stmt(load, 0)];
    for (i, &nr) in NOTIFIED.iter().enumerate() {
        // To the notify at the end: past the rest of the tests and the allow.
        f.push(jeq(nr as u32, (NOTIFIED.len() - i) as u8));
    }
    f.push(stmt(ret, SECCOMP_RET_ALLOW));
    f.push(stmt(ret, SECCOMP_RET_USER_NOTIF));
    f
}

struct Supervised {
    template: Parked,
    listener: OwnedFd,
    hello: Hello,
    log: PathBuf,
    gate_calls: usize,
}

impl Drop for Supervised {
    fn drop(&mut self) {
        unsafe {
            libc::kill(self.template.pid, libc::SIGKILL);
            libc::waitpid(self.template.pid, std::ptr::null_mut(), 0);
        }
    }
}

impl Supervised {
    /// Starts the stub for `program` as a template and takes its hello and
    /// park.
    fn start(program: &Path, node: &str, log: PathBuf) -> Supervised {
        let c = |s: &str| CString::new(s).unwrap();
        let stub = CString::new(stub().into_os_string().into_encoded_bytes()).unwrap();
        let argv = [c("probe"), c(node)];
        let envp = [c("AAA=first"), c(&format!("{}={}", protocol::EXEC_VAR, program.display())), c("ZZZ=last")];
        let cwd = c("/");
        let filter = filter();
        let devnull = OwnedFd::from(std::fs::File::options().read(true).write(true).open("/dev/null").unwrap());
        let log_file = OwnedFd::from(std::fs::File::create(&log).unwrap());
        let mut pair = [0; 2];
        let r =
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, pair.as_mut_ptr()) };
        assert_eq!(r, 0, "socketpair");
        let (parent, child) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        let spec = Spec {
            path: &stub,
            argv: &argv,
            envp: &envp,
            cwd: &cwd,
            filter: &filter,
            devnull: devnull.as_fd(),
            log: log_file.as_fd(),
            handoff_child: child.as_fd(),
            handoff_parent: parent.as_fd(),
            cpu: None,
            timeout_ms: 10_000,
        };
        let s = spawn::spawn(&spec).unwrap_or_else(|e| panic!("spawn: {} ({})", e.step, e.errno));
        let mut hello = None;
        let mut gate_calls = 0;
        let parked = loop {
            let n = next(s.listener.as_fd(), s.pidfd.as_fd()).expect("the template ended before its park");
            let request = n.args[1];
            if n.nr == libc::SYS_ioctl && n.args[0] == 3 && request == protocol::HELLO_REQUEST {
                assert!(hello.is_none(), "two hellos");
                let bytes = notif::read_mem(n.pid, n.args[2], size_of::<Hello>()).expect("the hello is readable");
                hello = Some(unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const Hello) });
                notif::respond(s.listener.as_fd(), n.id, 0, 0).unwrap();
            } else if n.nr == libc::SYS_ioctl && n.args[0] == 3 && request == protocol::PARK_REQUEST {
                assert!(hello.is_some(), "a park before the hello");
                break n;
            } else {
                gate_calls += answer(s.listener.as_fd(), &n, hello.as_ref());
            }
        };
        let template = Parked::new(s.pid, s.pidfd, parked);
        Supervised { template, listener: s.listener, hello: hello.unwrap(), log, gate_calls }
    }

    /// Forks a life from the parked template, lets it go, answers its calls
    /// until it exits; returns its wait status and what it wrote.
    fn life(&mut self) -> (i32, String) {
        let before = std::fs::read(&self.log).unwrap().len();
        let child = forkserver::fork(self.listener.as_fd(), &mut self.template, Duration::from_secs(10), &|| None)
            .unwrap_or_else(|e| panic!("fork: {e:?}"));
        notif::respond(self.listener.as_fd(), child.notif.id, 0, 0).unwrap();
        while let Some(n) = next(self.listener.as_fd(), child.pidfd.as_fd()) {
            assert_eq!(n.pid as i32, child.pid, "a call from another process than the life");
            self.gate_calls += answer(self.listener.as_fd(), &n, Some(&self.hello));
        }
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(child.pid, &mut status, 0) }, child.pid);
        let log = std::fs::read(&self.log).unwrap();
        (status, String::from_utf8_lossy(&log[before..]).into_owned())
    }
}

/// The next notification, or `None` once the process of `pidfd` ended.
fn next(listener: BorrowedFd<'_>, pidfd: BorrowedFd<'_>) -> Option<Notif> {
    loop {
        let mut fds = [
            libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, 10_000) };
        assert!(r > 0, "nothing happened for 10 s");
        if fds[0].revents & libc::POLLIN != 0 {
            if let Some(n) = notif::recv(listener).unwrap() {
                return Some(n);
            }
            continue;
        }
        return None;
    }
}

/// Answers a call of [`NOTIFIED`] other than the protocol's: time and
/// entropy from fixed values, the rest as made. Returns 1 for the stub's
/// `arch_prctl(ARCH_SET_CPUID, 1)`, after checking it comes from the gate
/// the hello named.
fn answer(listener: BorrowedFd<'_>, n: &Notif, hello: Option<&Hello>) -> usize {
    let write = |addr: u64, bytes: &[u8]| assert!(addr == 0 || notif::write_mem(n.pid, addr, bytes), "write_mem");
    let timespec = |seconds: i64| [seconds.to_ne_bytes(), 0i64.to_ne_bytes()].concat();
    let respond = |val: i64| notif::respond(listener, n.id, val, 0).unwrap();
    match n.nr {
        libc::SYS_clock_gettime => {
            let seconds = if n.args[0] == libc::CLOCK_REALTIME as u64 { REALTIME_SECONDS } else { MONOTONIC_SECONDS };
            write(n.args[1], &timespec(seconds));
            respond(0);
        }
        libc::SYS_gettimeofday => {
            write(n.args[0], &timespec(REALTIME_SECONDS));
            respond(0);
        }
        libc::SYS_time => {
            write(n.args[0], &REALTIME_SECONDS.to_ne_bytes());
            respond(REALTIME_SECONDS);
        }
        libc::SYS_getrandom => {
            write(n.args[0], &vec![0x5a; n.args[1] as usize]);
            respond(n.args[1] as i64);
        }
        nr => {
            assert!(!matches!(nr, libc::SYS_ioctl if n.args[0] == 3), "a call on fd 3 out of turn: {n:?}");
            let gate = nr == libc::SYS_arch_prctl && n.args[0] == 0x1012 && n.args[1] != 0;
            if gate {
                let hello = hello.expect("cpuid emulated before the hello");
                assert_eq!(n.ip, hello.cpuid_gate, "ARCH_SET_CPUID lifted elsewhere than the hello's gate");
            }
            notif::continue_call(listener, n.id).unwrap();
            return gate as usize;
        }
    }
    0
}

#[test]
fn under_a_supervisor_the_stub_says_hello_parks_and_every_fork_starts_the_program_alike() {
    for (program, name) in [(probe_no_pie(), "no-pie"), (probe_pie(), "pie")] {
        let log = out_dir().join(format!("supervised-{name}-{}.log", std::process::id()));
        let mut s = Supervised::start(program, "0", log.clone());
        let h = s.hello;
        assert_eq!((h.magic, h.version, h.size), (protocol::HELLO_MAGIC, protocol::HELLO_VERSION, 72));
        assert_eq!((h.tsc_trapped, h.segv_handler), (1, 1), "{h:?}");
        assert_eq!(h.cpuid_trapped, cpuid_faulting() as u32, "{h:?}");
        assert_eq!(h.snapshot_signal, protocol::SNAPSHOT_SIGNAL as u32, "{h:?}");
        assert_eq!(h.vdso_removed, 1, "{h:?}");
        assert!(h.vdso_mappings >= 2, "{h:?}");
        assert_eq!(h.image_start, protocol::IMAGE_BASE, "{h:?}");
        assert!((h.image_start..h.image_end).contains(&h.cpuid_gate), "{h:?}");
        assert_eq!(cmc::process::start::cpuid_gate(), Some(h.cpuid_gate), "the gate is known before the stub runs");
        assert_eq!(s.gate_calls, 0, "the stub ran cpuid before parking");
        assert_eq!(std::fs::read(&log).unwrap(), b"", "the template wrote before its park");

        let (status, first) = s.life();
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 7, "status {status:#x}:\n{first}");
        // Every cpuid of a life is answered from the table the stub read
        // before it made cpuid fault: no round trip through the gate.
        assert_eq!(s.gate_calls, 0, "cpuid emulations through the gate");
        let (status, second) = s.life();
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 7, "status {status:#x}:\n{second}");
        assert_eq!(s.gate_calls, 0, "cpuid emulations through the gate");
        // Time and entropy come from the supervisor, the vDSO is gone and
        // ASLR is off: two lives are alike to the byte, addresses too.
        assert_eq!(first, second);
        let lines: Vec<&str> = first.lines().collect();
        for expected in [
            "argv[0]=probe",
            "argv[1]=0",
            "env AAA=first",
            "env ZZZ=last",
            "preinit=1 constructor=1",
            "phdr=1 phent=56 phnum=1",
            "entry=1",
            "base=1",
            "clocks=1",
            "@vdso=absent",
            "@sysinfo_ehdr=absent",
        ] {
            assert!(lines.contains(&expected), "no {expected:?} in:\n{first}");
        }
        assert!(!first.contains("CMC_EXEC"), "{first}");
        // AT_RANDOM is what the supervisor answered the life's getrandom.
        assert!(lines.contains(&format!("@at_random={}", hex(&[0x5a; 16])).as_str()), "{first}");
        // rdtsc read the supervisor's monotonic clock, as main did.
        let mono = MONOTONIC_SECONDS * 1_000_000_000;
        assert!(lines.contains(&format!("@tsc={mono} mono={mono}").as_str()), "{first}");
        drop(s);
        let _ = std::fs::remove_file(log);
    }
}

#[test]
fn the_stub_speaks_the_documented_protocol() {
    use std::mem::{offset_of, size_of};
    assert_eq!(size_of::<Hello>(), 72);
    assert_eq!(offset_of!(Hello, cpuid_gate), 40);
    assert_eq!(protocol::HELLO_MAGIC.to_le_bytes(), *b"cmc-strt");
    assert_eq!(protocol::HELLO_REQUEST, 0x434d_4301);
    assert_eq!(protocol::PARK_REQUEST, 0x434d_4302);
    let statuses = [
        protocol::EXIT_PANIC,
        protocol::EXIT_PARK,
        protocol::EXIT_USAGE,
        protocol::EXIT_READ,
        protocol::EXIT_FORMAT,
        protocol::EXIT_STATIC,
        protocol::EXIT_LIMIT,
        protocol::EXIT_MAP,
        protocol::EXIT_ORPHAN,
    ];
    let mut sorted = statuses.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), statuses.len(), "exit statuses are distinct");
    // Natively the hello fails (fd 3 is closed: EBADF), and the stub goes
    // on without parking; a signal kills it as usual.
    let s = through_stub(probe_no_pie(), &["0"]);
    assert_eq!(s.status.code(), Some(7));
    assert!(s.status.signal().is_none());
}
