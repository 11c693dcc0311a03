//! Probe cores for `scripts/purity_teeth.sh`.
//!
//! [`Control`] is a correct tiny core, which the purity gate must pass.
//! Every other core here is a copy of it with one forbidden thing added, and
//! the gate must reject each for that reason. Nothing runs these cores: they
//! exist to be compiled and inspected. Each probe has its own file, so that
//! one probe's imports are not charged to another.

use cmc::{Context, Core, Effects, Event, NoSettings};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

pub mod alloc;
pub mod clock;
pub mod cpuid;
pub mod effects_write;
pub mod extern_call;
pub mod global_counter;
pub mod helper_global;
pub mod helpers;
pub mod indirect_call;
pub mod inline_asm;
pub mod instructions;
pub mod os_random;
pub mod own_memcpy;
pub mod persist_global;
pub mod print;
pub mod random_state;
pub mod rdtsc;
pub mod read_only_pointer;
pub mod static_mut;
pub mod syscall;
pub mod tls;

pub use alloc::Alloc;
pub use clock::Clock;
pub use cpuid::Cpuid;
pub use effects_write::EffectsWrite;
pub use extern_call::ExternCall;
pub use global_counter::GlobalCounter;
pub use helper_global::HelperGlobal;
pub use indirect_call::IndirectCall;
pub use inline_asm::InlineAsm;
pub use instructions::{AsmCpuid, AsmInt, AsmRdrand, AsmRdseed, AsmRdtscp, AsmSyscall, AsmSysenter};
pub use os_random::Getrandom;
pub use own_memcpy::OwnMemcpy;
pub use persist_global::PersistGlobal;
pub use print::Print;
pub use random_state::RandomStateProbe;
pub use rdtsc::Rdtsc;
pub use read_only_pointer::ReadOnlyPointer;
pub use static_mut::StaticMut;
pub use syscall::Syscall;
pub use tls::ThreadLocal;

/// Every probe's state: one counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ProbeState {
    pub n: u64,
}

/// The control's behaviour, which every probe shares: a timer drives a
/// counter three times; each count, mixed with `extra` (where a probe puts
/// its forbidden value), is sent to node 0.
pub fn base(s: &mut ProbeState, event: Event<'_>, out: &mut Effects, extra: u64) {
    match event {
        Event::Init { .. } => out.arm(0),
        Event::Fire { .. } => {
            s.n = s.n.wrapping_add(1) ^ extra;
            out.send(0, &s.n.to_le_bytes());
            if s.n < 3 {
                out.arm(0);
            }
        }
        _ => {}
    }
}

/// A correct core: the gate must pass it.
pub struct Control;

impl Core for Control {
    const NAME: &'static str = "probe-control";
    type State = ProbeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        base(s, event, out, 0);
    }
}
