#!/usr/bin/env bash
# The purity gate's teeth: runs scripts/purity_gate.sh over the probe cores
# of scripts/purity/probes (a correct tiny core, `Control`, and copies of it
# with one forbidden thing each), over cmc_tests::Nondet, and over the C
# probe cores of scripts/purity/cprobes (control.c, and one file per
# forbidden thing), and fails unless the gate passes both controls and
# rejects every probe for the right reason: each expected finding below,
# tagged as the gate tags it, must be in the gate's output for that probe.
# Where both halves of the gate can see the forbidden thing, both findings
# are expected, so that neither half can lose its teeth behind the other;
# where only one half can (a `!TAG` must be absent), the other is shown
# not to be what caught it.
#
# Usage: scripts/purity_teeth.sh        Exit status: 0 when the gate has its
# teeth, 1 when it let a probe through or rejected one for another reason,
# 2 when it could not run.
set -euo pipefail

started=$(date +%s%N)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
elapsed() { echo "$(( ($(date +%s%N) - started) / 1000000 ))" | sed -E 's/([0-9]{3})$/.\1/; s/^\./0./'; }

# CORE (a C core by its path in the repository), then the findings the
# gate must report for it: TAG, or TAG~TEXT when the finding's line must
# also contain TEXT, or !TAG when it must report no finding so tagged.
expectations="
purity_probes::GlobalCounter    writable-data~global_counter::COUNTER source:global
purity_probes::StaticMut        writable-data~static_mut::COUNT source:static-mut source:unsafe
purity_probes::Clock            call~Instant>::now source:clock
purity_probes::RandomStateProbe thread-local call~hashmap_random_keys source:random
purity_probes::Getrandom        call~getrandom source:ffi source:unsafe
purity_probes::Syscall          call~\`syscall\` source:ffi source:unsafe
purity_probes::Rdtsc            instruction:rdtsc source:arch
purity_probes::Cpuid            instruction:cpuid source:arch
purity_probes::AsmSyscall       instruction:syscall source:asm
purity_probes::AsmSysenter      instruction:sysenter source:asm
purity_probes::AsmInt           instruction:int source:asm
purity_probes::AsmRdtscp        instruction:rdtscp source:asm
purity_probes::AsmRdrand        instruction:rdrand source:asm
purity_probes::AsmRdseed        instruction:rdseed source:asm
purity_probes::AsmCpuid         instruction:cpuid source:asm
purity_probes::InlineAsm        source:asm source:unsafe
purity_probes::ThreadLocal      thread-local~tls::LOCAL_COUNT source:thread-local
purity_probes::EffectsWrite     source:unsafe source:pointer
purity_probes::ExternCall       call~purity_probe_elsewhere source:ffi source:unsafe
purity_probes::HelperGlobal     writable-data~helpers::bump source:global~helpers.rs
purity_probes::ReadOnlyPointer  writable-data~read_only_pointer::HIDDEN writable-data~read_only_pointer::SLOT source:global
purity_probes::IndirectCall     indirect-call
purity_probes::Alloc            call~__rust_alloc
purity_probes::Print            call~_print source:system
purity_probes::PersistGlobal    writable-data~apply_persist source:global
purity_probes::OwnMemcpy        writable-data~memcpy source:unsafe
cmc_tests::Nondet               writable-data~NONDET_COUNTER source:global
scripts/purity/cprobes/getpid.c           call~getpid
scripts/purity/cprobes/clock.c            call~\`time\`
scripts/purity/cprobes/malloc.c           call~malloc call~free
scripts/purity/cprobes/global.c           writable-data~requests
scripts/purity/cprobes/static_local.c     writable-data~seen
scripts/purity/cprobes/readonly_pointer.c writable-data~hidden
scripts/purity/cprobes/thread_local.c     thread-local~per_thread
scripts/purity/cprobes/rdtsc.c            instruction:rdtsc !source:asm
scripts/purity/cprobes/rdrand.c           instruction:rdrand !source:asm
scripts/purity/cprobes/cpuid.c            instruction:cpuid !source:asm
scripts/purity/cprobes/asm_syscall.c      instruction:syscall source:asm
scripts/purity/cprobes/asm.c              source:asm
scripts/purity/cprobes/asm_macro.c        source:asm~BARRIER
scripts/purity/cprobes/effects_write.c    source:effects~out->o
scripts/purity/cprobes/line_directive.c   source:line-directive~#line
scripts/purity/cprobes/indirect_call.c    indirect-call
"
controls=(purity_probes::Control scripts/purity/cprobes/control.c)

# A C core is named by its absolute path; the gate reports it relative to
# the repository.
arg() { if [[ $1 == *.c ]]; then echo "$root/$1"; else echo "$1"; fi; }
cores=()
for core in "${controls[@]}"; do cores+=("$(arg "$core")"); done
while read -r core _; do
    [ -n "$core" ] && cores+=("$(arg "$core")")
done <<<"$expectations"

out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$root/scripts/purity_gate.sh" "${cores[@]}" >"$out" || status=$?
if [ "$status" -ne 1 ]; then
    cat "$out"
    echo "purity_teeth: FAILED: the gate exited $status; it must exit 1 (probes rejected) ($(elapsed) s)"
    [ "$status" -eq 2 ] && exit 2
    exit 1
fi

bad=0
check() { # CORE EXPECTATION
    local tag=${2%%~*} text=""
    [[ $2 == *~* ]] && text=${2#*~}
    if [[ $tag == !* ]]; then
        tag=${tag#!}
        grep -qF "purity_gate: FAIL $1: [$tag]" "$out" || return 0
        echo "purity_teeth: $1: finding [$tag], which must not be what catches it"
        bad=1
        return 0
    fi
    if grep -F "purity_gate: FAIL $1: [$tag]" "$out" | grep -qF -- "$text"; then
        return 0
    fi
    echo "purity_teeth: $1: missing finding [$tag]${text:+ mentioning '$text'}"
    bad=1
}
for control in "${controls[@]}"; do
    if ! grep -qF "purity_gate: PASS $control " "$out"; then
        grep -F "$control" "$out" || true
        echo "purity_teeth: the control core $control did not pass: the probes' verdicts prove nothing"
        bad=1
    fi
done
probes=0
while read -r core wanted; do
    [ -n "$core" ] || continue
    probes=$((probes + 1))
    if ! grep -qF "purity_gate: FAIL $core: " "$out"; then
        echo "purity_teeth: $core: the gate did not reject it"
        bad=1
        continue
    fi
    for w in $wanted; do
        check "$core" "$w"
    done
done <<<"$expectations"

if [ "$bad" -ne 0 ]; then
    echo "purity_teeth: the gate's output was:"
    cat "$out"
    echo "purity_teeth: FAILED ($(elapsed) s)"
    exit 1
fi
echo "purity_teeth: the gate passed the controls and rejected all $probes probes, each for its reason ($(elapsed) s)"
