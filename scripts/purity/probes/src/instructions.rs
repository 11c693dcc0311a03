//! Probes: one forbidden instruction each, written with `asm!`, so that the
//! machine-code check is shown to find each one.

use std::arch::asm;

use cmc::{Context, Core, Effects, Event, NoSettings};

use crate::{ProbeState, base};

macro_rules! instruction_probe {
    ($ty:ident, $name:literal, $insn:literal) => {
        pub struct $ty;

        impl Core for $ty {
            const NAME: &'static str = $name;
            type State = ProbeState;
            type Settings = NoSettings;
            const DURABLE: usize = 0;

            fn step(_: &Context<'_, NoSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
                let mut extra = s.n;
                // SAFETY: none; the instruction is the forbidden thing.
                unsafe { asm!($insn, inout("rax") extra, out("rcx") _, out("rdx") _, out("r11") _) };
                base(s, event, out, extra);
            }
        }
    };
}

instruction_probe!(AsmSyscall, "probe-asm-syscall", "syscall");
instruction_probe!(AsmSysenter, "probe-asm-sysenter", "sysenter");
instruction_probe!(AsmInt, "probe-asm-int", "int 0x80");
instruction_probe!(AsmRdtscp, "probe-asm-rdtscp", "rdtscp");
instruction_probe!(AsmRdrand, "probe-asm-rdrand", "rdrand rax");
instruction_probe!(AsmRdseed, "probe-asm-rdseed", "rdseed rax");
instruction_probe!(AsmCpuid, "probe-asm-cpuid", "cpuid");
