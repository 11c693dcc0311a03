//! The preload library of cmc's process front end, loaded into every node
//! with `LD_PRELOAD` by the supervisor (`cmc::process`).
//!
//! Every node runs under the start stub (`cmc/start/`), which sets the
//! process up before any of the program's code runs: it fixes `AT_RANDOM`,
//! removes the vDSO (so glibc's clock and random calls are real system
//! calls, which the supervisor answers from the world), makes `rdtsc` and
//! `cpuid` fault and emulates them, handles the snapshot signal by forking,
//! parks as the node's template, and in each life loads ld.so and the
//! program. This library, preloaded by ld.so into each life, owns what the
//! stub cannot do from outside the program:
//!
//! - the libc entry points of the clock and randomness (`clock_gettime`,
//!   `gettimeofday`, `time`, `getrandom`, `getentropy`), which issue the
//!   real system call whatever the libc would do (`shim`);
//! - the program's view of SIGSEGV: its own handler for the faults that
//!   are not `rdtsc` or `cpuid`, which it emulates as the stub does, behind
//!   interposed `sigaction` and `signal` (`trap`);
//! - the handshake: its constructor says hello to the supervisor with an
//!   `ioctl` on fd 3 (see [`HELLO_REQUEST`]), so that a node started without
//!   it is detected as an error instead of running with the system's
//!   allocator.
//!
//! It does not model sockets, files or state reports: those are the
//! supervisor's. It depends on no crate (`sys` declares the few glibc items
//! it uses), allocates nothing through Rust's allocator and never panics on
//! its paths: it runs inside an arbitrary C program, before and around its
//! `main`.
//!
//! Its sources live in `cmc/preload/`, inside the `cmc` package, because
//! `cmc`'s build script compiles them with `rustc` and the library embeds
//! the result (`cmc::process::preload`), so that a crate depending on `cmc`
//! from crates.io gets the preload too. The `cmc-preload` crate builds the
//! same sources, for `cargo build -p cmc-preload` and for clippy.

/// The start stub's protocol (its table of `cpuid` answers), shared as
/// source.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[path = "../start/protocol.rs"]
mod protocol;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod shim;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod sys;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod trap;

/// The `ioctl` request number of the handshake on fd 3 (`'C' 'M' 'C' 1`).
/// The supervisor keeps the same constants (`cmc/src/process/calls/mod.rs`).
pub const HELLO_REQUEST: u64 = 0x434d_4301;
/// The magic at the start of [`Hello`].
pub const HELLO_MAGIC: u64 = 0x6f6c_6568_2d63_6d63; // "cmc-helo", little endian
/// The version of the handshake.
pub const HELLO_VERSION: u32 = 4;

/// What the preload tells the supervisor at start-up, by `ioctl(3,
/// HELLO_REQUEST, &hello)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Hello {
    pub magic: u64,
    pub version: u32,
    /// Nonzero when `rdtsc` faults into the preload's handler.
    pub tsc_trapped: u32,
    /// Nonzero when `cpuid` faults into the preload's handler (the CPU
    /// supports CPUID faulting), so that RDRAND and RDSEED are hidden from
    /// it.
    pub cpuid_trapped: u32,
    /// Zero.
    pub reserved: u32,
    /// Zero (the fixed heap's base, before glibc's own allocator served
    /// nodes: with the vDSO gone, ASLR off and `getrandom` answered from the
    /// node's stream, it is as deterministic, and keeps its checks).
    pub reserved2: u64,
    /// The instruction pointer of the preload's one call that lifts CPUID
    /// faulting (`arch_prctl(ARCH_SET_CPUID, 1)`): one of the two the
    /// supervisor lets run (the stub's is the other).
    pub cpuid_gate: u64,
}
