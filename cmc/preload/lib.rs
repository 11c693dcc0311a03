//! The preload library of cmc's process front end, loaded into every node
//! with `LD_PRELOAD` by the supervisor (`cmc::process`).
//!
//! It owns what the seccomp filter cannot see or cannot make deterministic:
//!
//! - the heap, served from a fixed address range so that `malloc` returns
//!   the same pointers on every run (`heap`);
//! - the clock and randomness: the libc entry points (`clock_gettime`,
//!   `gettimeofday`, `time`, `getrandom`, `getentropy`) issue the real system
//!   call, which the supervisor is notified of and answers from the world's
//!   logical clock and the node's random stream; the vDSO entry points, which
//!   never reach seccomp, are patched to do the same (`vdso`); `rdtsc` is
//!   made to fault once the vDSO no longer needs it, and `cpuid` where the
//!   CPU allows, and both are emulated in a SIGSEGV handler: `rdtsc` from
//!   the logical clock, `cpuid` without RDRAND and RDSEED (`trap`);
//! - the handshake: its constructor announces itself to the supervisor with
//!   an `ioctl` on fd 3 (see [`HELLO_REQUEST`]), so that a node started
//!   without the preload is detected as an error instead of running with
//!   real time and real entropy;
//! - the fork server: its constructor parks the process in a notified call
//!   before `main`, so that the process is its node's *template*, and it
//!   handles `fork::SNAPSHOT_SIGNAL` by forking: every life and snapshot
//!   of a node is a fork of a parked process, made when the supervisor asks
//!   (`fork`), so the node's program is exec'd once per search and its
//!   seccomp filter installed once;
//! - `AT_RANDOM`: the auxiliary vector's 16 random bytes are overwritten
//!   with bytes fixed by the node's number (its first argument), so that
//!   `getauxval(AT_RANDOM)` is the same in every run.
//!
//! It does not model sockets, files or state reports: those are the
//! supervisor's. `/dev/urandom` reads are answered by the supervisor too
//! (it notifies `openat`). It depends on no crate (`sys` declares the few
//! glibc items it uses), allocates nothing through Rust's allocator and
//! never panics on its paths: it runs inside an arbitrary C program, before
//! and around its `main`.
//!
//! Its sources live in `cmc/preload/`, inside the `cmc` package, because
//! `cmc`'s build script compiles them with `rustc` and the library embeds
//! the result (`cmc::process::preload`), so that a crate depending on `cmc`
//! from crates.io gets the preload too. The `cmc-preload` crate builds the
//! same sources, for `cargo build -p cmc-preload` and for clippy.

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod fork;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod heap;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod shim;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod sys;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod trap;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod vdso;

/// The `ioctl` request number of the handshake on fd 3 (`'C' 'M' 'C' 1`).
/// The supervisor keeps the same constants (`cmc/src/process/calls/mod.rs`).
pub const HELLO_REQUEST: u64 = 0x434d_4301;
/// The magic at the start of [`Hello`].
pub const HELLO_MAGIC: u64 = 0x6f6c_6568_2d63_6d63; // "cmc-helo", little endian
/// The version of the handshake.
pub const HELLO_VERSION: u32 = 3;
/// The `ioctl` request on fd 3 a template parks in; answered 0, the process
/// goes on into `main`.
pub const PARK_REQUEST: u64 = 0x434d_4302;

/// What the preload tells the supervisor at start-up, by `ioctl(3,
/// HELLO_REQUEST, &hello)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Hello {
    pub magic: u64,
    pub version: u32,
    /// vDSO entry points found, one bit each (see `vdso::ENTRIES`).
    pub vdso_found: u32,
    /// vDSO entry points patched; must equal `vdso_found`.
    pub vdso_patched: u32,
    /// Nonzero when `rdtsc` was made to fault.
    pub tsc_trapped: u32,
    /// The signal that makes a parked process fork, or 0 if its handler
    /// could not be installed.
    pub snapshot_signal: u32,
    /// Nonzero when `cpuid` was made to fault (the CPU supports CPUID
    /// faulting), so that RDRAND and RDSEED are hidden from it.
    pub cpuid_trapped: u32,
    /// The base address of the fixed heap.
    pub heap_base: u64,
    /// The instruction pointer of the preload's one call that lifts CPUID
    /// faulting (`arch_prctl(ARCH_SET_CPUID, 1)`): the only one the
    /// supervisor lets run.
    pub cpuid_gate: u64,
}
