#!/usr/bin/env bash
# The purity gate (manual, GATES; DESIGN.md section 9): checks that a core's
# code can do nothing but compute on its arguments and act through the
# `cmc::Effects` methods.
#
# Usage: scripts/purity_gate.sh CORE...      (CORE = crate::path::Type,
#                                             e.g. cmc_examples::two_phase::TwoPhase)
#        scripts/purity_gate.sh --all        (every core in scripts/purity/cores.txt,
#                                             and every C core examples/ccores/*.c)
#        scripts/purity_gate.sh --crate DIR CORE...   (a core of your crate in DIR,
#                                             which depends on this clone's cmc by path)
#        scripts/purity_gate.sh --c FILE.c...  (cores written in C, one file each)
#
# Exit status: 0 when every core passes, 1 when any fails, 2 when the gate
# itself cannot run (a build error, an unknown crate, a missing tool).
#
# How: the script generates a shim crate (in target/purity/shim) that calls
# each core's `step`, `apply_persist` and `direct_actions` from a
# never-inlined root function, and builds it in release (opt-level 3,
# codegen-units 1, no LTO, line tables) with its own target directory,
# target/purity, so the shared `target/` is never invalidated. Two flags
# make the machine code checkable without changing what it does:
# `-C relocation-model=static` (calls are direct, not through the GOT) and
# no jump tables (an indirect jump is then always a real indirect call).
# The roots see exactly the code the engine runs: an `#[inline]` step is
# inlined into them, a generic helper is monomorphised next to them.
#
# scripts/purity/analyse.rs (std only, built with plain rustc) then walks,
# for each core, the call graph from the roots through the object files of
# the build (objdump -drl), and fails the core, naming it, the function, the
# instruction, the source line and the call path, on:
#
#   [call]            a call (direct, or a tail call) to a function defined
#                     outside the built crates, other than the allowed set:
#                     memcpy memmove memset memcmp bcmp; the panic entry
#                     points (core::panicking::*, the core::* `*_fail`,
#                     `*_failed` and `panic_*` helpers such as slice-index and
#                     unwrap failures, std::panicking::begin_panic,
#                     _Unwind_Resume); and the effect methods
#                     cmc::core::Effects::{send,arm,cancel,persist,wake,
#                     reply,not_enabled} as compiled in the cmc crate: they
#                     are the engine's code and are not followed. The mem*
#                     and panic names are trusted only where the C and Rust
#                     runtimes define them (outside the built crates); a
#                     `memcpy` a crate defines itself is walked like any
#                     other function. Every other function the core reaches
#                     in the built crates (its helpers, generic std code
#                     monomorphised for it, cmc helpers) is walked under the
#                     same rules. Allocation is a call (`__rust_alloc`), so
#                     it is rejected too, as the manual's "no calls but
#                     mem*()" says.
#   [indirect-call]   a call or jump through a register or memory.
#   [writable-data]   a reference to .data/.bss (a static with interior
#                     mutability, a `static mut`), directly or through a
#                     pointer stored in read-only data (.rodata/.data.rel.ro,
#                     followed transitively); writable data of the standard
#                     library is looked up in libstd's exported symbols.
#   [thread-local]    a %fs:/%gs: access, a TLS relocation, .tdata/.tbss.
#   [instruction:X]   syscall sysenter sysexit sysret int int1 int3 into
#                     rdtsc rdtscp rdpid rdpmc rdrand rdseed cpuid xgetbv
#                     rd/wr{fs,gs}base rdmsr wrmsr hlt in out ins* outs*
#                     vmcall.
#   [external-reference]  a reference to a symbol outside the built crates
#                     that libstd does not export (its kind is unknown).
#
# and it scans the source of that code: every top-level item (fn, impl,
# mod, ...) of a file of the core's crate(s) that holds a line the walked
# machine code was compiled from (DWARF line tables), plus the file's
# `use`, `extern`, `macro_rules!`, `thread_local!`, `static mut` and asm
# items. Files of the engine (cmc/) and of the shim are trusted. Comments
# and literal contents are ignored. Findings, tagged [source:X]:
#
#   unsafe        `unsafe` anywhere. The effect buffer is private, so the
#                 only way to write it other than through its methods is
#                 unsafe code (a pointer cast, transmute, ptr::write), and
#                 the machine code cannot tell such a write from an inlined
#                 `Effects::send`; `unsafe` is also what a static mut, an
#                 extern function or an intrinsic needs. A core needs none.
#   pointer       raw pointers (*mut, *const, ptr::, addr_of).
#   asm, arch     asm!/global_asm!/naked_asm!; core::arch/std::arch and
#                 the rdtsc/rdrand/rdseed/cpuid intrinsics.
#   static-mut    `static mut`, declared or used.
#   global        std::sync/core::sync, Atomic*, Mutex, RwLock, OnceLock,
#                 LazyLock, and uses of any static of the package whose type
#                 has interior mutability.
#   thread-local  thread_local!, LocalKey.
#   clock         std::time, Instant, SystemTime, UNIX_EPOCH.
#   random        RandomState, HashMap, HashSet (random seeds, random
#                 order), std::random, rand::, getrandom, fastrand, OsRng...
#   system        std::{fs,io,net,os,process,env,thread,panic}, print!
#                 and friends, dbg!.
#   ffi           libc::, nix::, extern "C" / extern { } blocks.
#   effects       any way around the Effects methods that safe code has:
#                 Effects:: paths (Effects::default()), building an Effects,
#                 transmute, mem::swap/replace/take, clone_from, and for a
#                 parameter `out: &mut Effects`, `*out = ..` and
#                 `out.clone()`. (Safe code cannot forge an effect: the
#                 fields are private. These rules stop a core from erasing
#                 what it emitted, or a limit it crossed.)
#
# The named cores are analysed together, as if linked into one program: a
# global symbol one crate defines (say a probe's own `memcpy`) is what the
# others' calls to it reach. Run the probes (scripts/purity_teeth.sh) apart
# from the real cores (--all), as the scripts do.
#
# Not checked, by design: `validate` and `action_label`, which return a
# String (they allocate) and are not transitions; whatever they could leave
# behind would have to be read by step/apply_persist/direct_actions through
# writable data, which is checked. A function whose address is only taken
# (not called) is not followed: it can run only through an indirect call,
# which is rejected, or inside a panic message, after which the step has
# failed anyway.
#
# Cores written in C (--c, and examples/ccores/*.c with --all): a C core
# is one file, a `const struct cmc_core` and the functions it names
# (cmc.h, "Cores"). Each file is compiled alone, as the gate compiles Rust,
# with what makes machine code checkable: `cc -O2 -g -fno-pic
# -fno-jump-tables -fno-asynchronous-unwind-tables -fno-stack-protector
# -fcf-protection=none -ffunction-sections -fdata-sections -I <repo>` into
# target/purity/c/, and preprocessed (`cc -E`) with the same flags. The
# analyser then walks the object alone (a C core is linked with no other
# core), every function it defines being a root (init, step, apply_persist,
# direct_actions, validate, action_label, their helpers, and the core's C
# properties if the file has them), under the rules above, except that
# the only allowed callees are memcpy memmove memset memcmp bcmp: a C core
# has no panic entry points, and cmc.h's effect functions are `static
# inline`, compiled into the core and walked with it. A `const` table is
# read-only data; a global, a `static` local, `_Thread_local` and anything
# reached through a pointer in a `const` table are found as above. Its
# source rules, tagged [source:X], are matched in the preprocessed source
# (so a macro cannot hide what it expands to) on the lines of the core's
# own files; the lines of cmc.h and of the system headers are trusted:
#
#   asm             `asm`, `__asm`, `__asm__`: an asm statement can do what
#                   no instruction list foresees, or nothing the machine
#                   code would show.
#   effects         the effects buffer touched other than through cmc.h's
#                   cmc_send() ... cmc_not_enabled(): a member `o` accessed
#                   at all (`out->o[i].len = 1`, `&out->o[0]`, of whatever
#                   struct: the gate cannot tell types), `struct
#                   cmc_effect`, cmc.h's internal cmc__* helpers. In machine
#                   code such a write is what cmc_send() compiles to.
#   line-directive  `#line` or a `# N "FILE"` marker in a file of the core's
#                   own, which would make its lines claim to be cmc.h's.
#
# Not seen by the C half, by design: a cast of `out` to a struct of the
# core's own making (the source rules name the buffer, not every way to
# reach its bytes); --det and the engine's own checks of the buffer are
# what is left for that. A core split over several .c files is not
# supported: each file is taken as one core.
#
# Environment: PURITY_TARGET_DIR (default: target/purity); PURITY_CC (the C
# compiler, default cc).
set -euo pipefail

started=$(date +%s%N)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${PURITY_TARGET_DIR:-$root/target/purity}
cores_file=$root/scripts/purity/cores.txt

say() { echo "purity_gate: $*"; }
die() {
    echo "purity_gate: error: $*" >&2
    exit 2
}
elapsed() { echo "$(( ($(date +%s%N) - started) / 1000000 ))" | sed -E 's/([0-9]{3})$/.\1/; s/^\./0./'; }

usage() {
    sed -n '6,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
}

cores=()
crates=()
c_files=()
c_mode=0
while [ $# -gt 0 ]; do
    case $1 in
    --c) c_mode=1 ;;
    --crate)
        [ $# -gt 1 ] || die "--crate needs the crate's folder"
        [ -f "$2/Cargo.toml" ] || die "--crate $2: no Cargo.toml there"
        crates+=("$(cd "$2" && pwd)")
        shift
        ;;
    --all)
        while read -r line; do
            line=${line%%#*}
            line=$(echo "$line" | tr -d '[:space:]')
            [ -n "$line" ] && cores+=("$line")
        done <"$cores_file"
        for file in "$root"/examples/ccores/*.c; do
            [ -f "$file" ] && c_files+=("$file")
        done
        ;;
    -h | --help) usage ;;
    -*) die "unknown option $1" ;;
    *.c) c_files+=("$1") ;;
    *)
        if [ $c_mode -eq 1 ]; then c_files+=("$1"); else cores+=("$1"); fi
        ;;
    esac
    shift
done
[ ${#cores[@]} -gt 0 ] || [ ${#c_files[@]} -gt 0 ] || usage

tools=(rustc objdump c++filt)
[ ${#cores[@]} -eq 0 ] || tools+=(cargo ar)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || die "$tool not found (objdump, c++filt and ar come with binutils)"
done
host=$(rustc -vV | sed -n 's/^host: //p')
[ "$host" = x86_64-unknown-linux-gnu ] || die "the gate reads x86-64 Linux object code; this host is $host"

# The analyser: std only, rebuilt when its source changes.
analyse=$target/bin/purity-analyse
build_analyse() {
    if [ ! -x "$analyse" ] || [ "$root/scripts/purity/analyse.rs" -nt "$analyse" ]; then
        mkdir -p "$target/bin"
        rustc --edition 2024 -O -o "$analyse" "$root/scripts/purity/analyse.rs" || die "the analyser did not build"
    fi
}

# The C half (see above): compiles and preprocesses each file into
# target/purity/c, then runs the analyser over them. Returns its status.
c_gate() {
    local out=$target/c cc=${PURITY_CC:-cc} list file abs name stem c_started c_status=0
    c_started=$(date +%s%N)
    command -v "$cc" >/dev/null || die "$cc not found: C cores are compiled with it (PURITY_CC names another)"
    local flags=(-O2 -g -fno-pic -fno-jump-tables -fno-asynchronous-unwind-tables -fno-stack-protector
        -fcf-protection=none -ffunction-sections -fdata-sections -I "$root")
    mkdir -p "$out"
    list=$out/cores.txt
    : >"$list"
    say "compiling ${#c_files[@]} C core(s) in $out ($cc ${flags[*]})"
    for file in "${c_files[@]}"; do
        [ -f "$file" ] || die "$file: no such file"
        abs=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
        name=${abs#"$root"/}
        stem=${name//\//_}
        stem=${stem%.c}
        "$cc" "${flags[@]}" -c "$abs" -o "$out/$stem.o" || die "$name did not compile"
        "$cc" "${flags[@]}" -E "$abs" -o "$out/$stem.i" || die "$name did not preprocess"
        printf '%s\t%s\t%s\t%s\n' "$name" "$out/$stem.o" "$out/$stem.i" "$abs" >>"$list"
    done
    build_analyse
    "$analyse" --c-cores "$list" --c-trust "$root/cmc.h" --scan-root "$root" || c_status=$?
    local took
    took=$(echo "$((($(date +%s%N) - c_started) / 1000000))" | sed -E 's/([0-9]{3})$/.\1/; s/^\./0./')
    case $c_status in
    0) say "all ${#c_files[@]} C core(s) pure ($took s)" ;;
    1) say "FAILED: impure C core(s) above ($took s)" ;;
    *) say "error: the analysis of the C cores did not run ($took s)" ;;
    esac
    return "$c_status"
}

if [ ${#cores[@]} -eq 0 ]; then
    status=0
    c_gate || status=$?
    exit "$status"
fi

# Crate name -> package directory, over the workspace's packages and the
# probe crate.
declare -A package_dir package_name
manifests=("$root"/*/Cargo.toml "$root"/scripts/purity/probes/Cargo.toml)
for dir in "${crates[@]}"; do manifests+=("$dir/Cargo.toml"); done
for manifest in "${manifests[@]}"; do
    [ -f "$manifest" ] || continue
    name=$(awk '/^\[/{section=$0} section=="[package]" && /^name *=/ {gsub(/.*= *"|".*/, ""); print; exit}' "$manifest")
    [ -n "$name" ] || continue
    package_dir[${name//-/_}]=$(dirname "$manifest")
    package_name[${name//-/_}]=$name
done

# The shim: a root per core method.
shim=$target/shim
mkdir -p "$shim"
declare -A needed=([cmc]=1)
lib="//! Generated by scripts/purity_gate.sh: one never-inlined root per core
//! method, so that each is compiled here with everything it inlines.
#![allow(clippy::all, unused)]
use cmc::{Context, Core, DirectActions, Effects, Event};
"
roots=""
i=0
for core in "${cores[@]}"; do
    [[ $core =~ ^[a-z_][a-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)+$ ]] ||
        die "'$core' is not a core path (crate::path::Type, e.g. cmc_examples::two_phase::TwoPhase)"
    crate=${core%%::*}
    [ -n "${package_dir[$crate]:-}" ] ||
        die "'$core': no package in the workspace (or given with --crate) has a crate named $crate"
    needed[$crate]=1
    lib+="
type Core$i = $core;
#[inline(never)]
pub fn purity_${i}_step(ctx: &Context<'_, <Core$i as Core>::Settings>, state: &mut <Core$i as Core>::State, event: Event<'_>, out: &mut Effects) {
    <Core$i as Core>::step(ctx, state, event, out)
}
#[inline(never)]
pub fn purity_${i}_apply_persist(ctx: &Context<'_, <Core$i as Core>::Settings>, state: &mut <Core$i as Core>::State, record: &[u8]) {
    <Core$i as Core>::apply_persist(ctx, state, record)
}
#[inline(never)]
pub fn purity_${i}_direct_actions(settings: &<Core$i as Core>::Settings) -> Option<DirectActions> {
    <Core$i as Core>::direct_actions(settings)
}
"
    for method in step apply_persist direct_actions; do
        roots+="$core	$method	cmc_purity_shim::purity_${i}_${method}
"
    done
    i=$((i + 1))
done
deps=""
optimised=""
for crate in "${!needed[@]}"; do
    deps+="${package_name[$crate]} = { path = \"${package_dir[$crate]}\" }
"
    optimised+="[profile.release.package.${package_name[$crate]}]
opt-level = 3
codegen-units = 1
"
done
manifest="[package]
name = \"cmc-purity-shim\"
version = \"0.0.0\"
edition = \"2024\"
publish = false

[lib]
path = \"lib.rs\"

[dependencies]
$(echo -n "$deps" | sort)

# Its own workspace: it is generated under target/, outside the workspace.
[workspace]

[profile.release]
opt-level = 3
codegen-units = 1
lto = false
debug = \"line-tables-only\"
incremental = false

# The cores' crates and the engine are compiled as above; the libraries
# under them (serde, toml, nix, ...) fast, since a core that reached into
# them would be walked all the same.
[profile.release.package.\"*\"]
opt-level = 0
codegen-units = 16

$(echo -n "$optimised" | sed 's/^\[/\n[/' | sed '1{/^$/d}')
"
write_if_changed() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ] || printf '%s\n' "$2" >"$1"; }
write_if_changed "$shim/Cargo.toml" "$manifest"
write_if_changed "$shim/lib.rs" "$lib"
printf '%s' "$roots" >"$shim/roots.txt"
# The workspace's lock pins every version, so the shim needs no resolution
# from the network.
# A crate of the user's brings its own lock file: its dependencies, at its
# versions. (The shim's lock starts from the workspace's, and cargo adds
# what is missing.)
lock=$root/Cargo.lock
for dir in "${crates[@]}"; do [ -f "$dir/Cargo.lock" ] && lock=$dir/Cargo.lock; done
cmp -s "$lock" "$shim/Cargo.lock.from" 2>/dev/null || {
    cp "$lock" "$shim/Cargo.lock"
    cp "$lock" "$shim/Cargo.lock.from"
}

say "building ${#cores[@]} core(s) in $target (release, codegen-units 1, no LTO, static relocations, no jump tables)"
if ! env -u CARGO_ENCODED_RUSTFLAGS CARGO_TARGET_DIR="$target" \
    RUSTFLAGS="-C relocation-model=static -C llvm-args=-min-jump-table-entries=1000000" \
    cargo build --quiet --release --target "$host" --manifest-path "$shim/Cargo.toml" \
    --message-format=json-render-diagnostics >"$shim/build.json"; then
    die "the shim did not build (is every CORE a type implementing cmc::Core?)"
fi

# Objects: every rlib built for the target, unpacked once per version.
objs=$target/objs
mkdir -p "$objs"
: >"$shim/objects.txt"
keep=()
while read -r rlib; do
    dir=$objs/$(basename "$rlib" .rlib)
    keep+=("$(basename "$dir")")
    if [ ! -f "$dir/.stamp" ] || [ "$rlib" -nt "$dir/.stamp" ]; then
        rm -rf "$dir"
        mkdir -p "$dir"
        (cd "$dir" && ar x "$rlib" && rm -f lib.rmeta && touch .stamp)
    fi
    ls "$dir"/*.o >>"$shim/objects.txt"
done < <(grep '"reason":"compiler-artifact"' "$shim/build.json" | grep -o "\"$target/$host/[^\"]*\\.rlib\"" | tr -d '"' | sort -u)
for dir in "$objs"/*/; do
    name=$(basename "$dir")
    [[ " ${keep[*]} " == *" $name "* ]] || rm -rf "$dir"
done

build_analyse

scan_roots=()
for dir in "${crates[@]}"; do scan_roots+=(--scan-root "$dir"); done
libstd=$(ls "$(rustc --print sysroot)/lib/rustlib/$host/lib"/libstd-*.so 2>/dev/null | head -n 1 || true)
status=0
"$analyse" --objects "$shim/objects.txt" --roots "$shim/roots.txt" --scan-root "$root" "${scan_roots[@]}" \
    --trust "$root/cmc" --trust "$shim" ${libstd:+--libstd "$libstd"} || status=$?
case $status in
0) say "all ${#cores[@]} core(s) pure ($(elapsed) s)" ;;
1) say "FAILED: impure core(s) above ($(elapsed) s)" ;;
*) say "error: the analysis did not run ($(elapsed) s)" ;;
esac
# Then the C cores, if any; the worse status is the gate's.
if [ ${#c_files[@]} -gt 0 ]; then
    c_status=0
    c_gate || c_status=$?
    [ "$c_status" -le "$status" ] || status=$c_status
fi
exit "$status"
