# Shared by scripts/memory_gate.sh and scripts/memory_teeth.sh (sourced,
# never run): the tools, the builds, and how one model runs and is judged,
# so that the teeth test exactly the machinery the gate uses.
#
# C programs: MemorySanitizer builds (scripts/memory/msan.mk) run as nodes
# under `cmc --model-file`, with the invariant `msan_quiet` added to the
# model (msan_quiet.c): a node that reads an uninitialised byte exits with
# MSAN_EXITCODE, and the checker reports the world where it happened as a
# violation of `msan_quiet`. MSan's own report goes to $MSAN_OUT/reports.
# Invariants (C too, but run inside the checker, which MSan cannot
# instrument) are built with MSan and called by props_driver over
# generated views.
#
# Cores: the checker built with cmc's `valgrind` feature (the engine checks
# every byte a core hands back with a memcheck client request) runs under
# valgrind's memcheck, which fails the run with VALGRIND_EXITCODE on any
# error it reports.
#
# C cores (examples/ccores): each compiled with MSan into one program with
# scripts/memory/ccore_msan.c, a driver that plays the engine over seeded
# random walks and checks every byte the core hands back; MSan ends it with
# MSAN_EXITCODE at the first uninitialised byte.

MEM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MSAN_OUT=$MEM_ROOT/examples/c/build/msan
MSAN_EXITCODE=86 # passed to msan.mk
VALGRIND_EXITCODE=97
MEMORY_TARGET=$MEM_ROOT/target/memory
VALGRIND=(valgrind -q --tool=memcheck "--error-exitcode=$VALGRIND_EXITCODE" --leak-check=no
    --track-origins=yes --num-callers=12)

mem_say() { printf '%s\n' "$*" >&2; }

# Installs clang, valgrind, make and cc from the distribution when missing.
mem_tools() {
    local missing=()
    command -v clang >/dev/null || missing+=(clang)
    command -v valgrind >/dev/null || missing+=(valgrind)
    command -v make >/dev/null || missing+=(make)
    command -v cc >/dev/null || missing+=(gcc)
    command -v llvm-symbolizer >/dev/null || missing+=(llvm)
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    mem_say "installing ${missing[*]}"
    if ! "${sudo[@]}" apt-get install -y "${missing[@]}" >/dev/null 2>&1; then
        "${sudo[@]}" apt-get update >/dev/null
        "${sudo[@]}" apt-get install -y "${missing[@]}" >/dev/null
    fi
}

# Fails (exit 2), saying why, unless clang builds a MemorySanitizer program
# that runs: without MSan the gate would see nothing and pass.
mem_msan_works() {
    local dir rc=0
    dir=$(mktemp -d)
    printf 'int main(void) { return 0; }\n' >"$dir/m.c"
    if ! clang -fsanitize=memory "$dir/m.c" -o "$dir/m" >"$dir/log" 2>&1 || ! "$dir/m" >>"$dir/log" 2>&1; then
        mem_say "error: clang cannot build or run a MemorySanitizer program (is the runtime, libclang-rt-<version>-dev, installed?):"
        cat "$dir/log" >&2
        rc=2
    fi
    rm -rf "$dir"
    [ $rc -eq 0 ] || exit $rc
}

# The MSan builds. The checker that runs them is mem_build_cores's.
mem_build_c() {
    mem_msan_works
    make -s -f "$MEM_ROOT/scripts/memory/msan.mk" "OUT=$MSAN_OUT" "MSAN_EXITCODE=$MSAN_EXITCODE"
}

# The checker and the probe with cmc's `valgrind` feature, in their own
# target directory so that the shared target/ keeps its cache, in the
# `gate` profile (the workspace's Cargo.toml). The same checker runs the C
# programs: outside valgrind its client requests do nothing.
mem_build_cores() {
    (cd "$MEM_ROOT" && CARGO_TARGET_DIR=$MEMORY_TARGET cargo build --quiet --profile gate \
        -p cmc-cli -p cmc-memory-probe --features cmc/valgrind)
}

# The checker mem_build_cores builds.
MEMORY_CMC=$MEMORY_TARGET/gate/cmc

# mem_msan_model SRC DST DEPTH: DST is the model file SRC with its program
# and invariants swapped for the MSan build and msan_quiet (first, so that
# it is the one reported when a world breaks several), and depth_max at
# most DEPTH (added for a BFS or DFS model that has none).
mem_msan_model() {
    local src=$1 dst=$2 depth=$3
    awk -v out="$MSAN_OUT" -v depth="$depth" '
        /^program *=/ { sub(/"build\//, "\"" out "/") }
        /^properties *=/ { sub(/"build\//, "\"" out "/"); props = 1 }
        /^invariants *=/ { sub(/\[ */, "[\"msan_quiet\", "); sub(/, *\]/, "]") }
        /^search *=/ && /simulate/ { simulate = 1 }
        /^depth_max *=/ { d = $0; sub(/.*= */, "", d); if (d + 0 > depth + 0) $0 = "depth_max = " depth; has_depth = 1 }
        { print }
        END {
            if (!props) { print "properties = \"" out "/msan_quiet.so\""; print "invariants = [\"msan_quiet\"]" }
            if (!has_depth && !simulate) print "depth_max = " depth
            print "log_dir = \"" out "/reports\""
        }' "$src" >"$dst"
}

# mem_symbolize REPORT: MSan's report with each frame of a program or
# object in MSAN_OUT named (function, file:line), from its offset in the
# file (for a -no-pie program, its address): the nodes run with symbolize=0.
mem_symbolize() {
    local line bin addr where
    while IFS= read -r line; do
        printf '    %s\n' "$line"
        if [[ $line =~ \#[0-9]+\ 0x[0-9a-f]+\ +\(($MSAN_OUT/[^+]+)\+(0x[0-9a-f]+)\) ]]; then
            bin=${BASH_REMATCH[1]} addr=${BASH_REMATCH[2]}
            where=$(llvm-symbolizer --obj="$bin" "$addr" 2>/dev/null | paste -sd' ' | sed 's/  */ /g')
            printf '        = %s\n' "$where"
        fi
    done <"$1"
}

# mem_run_model MODEL LOG: runs the checker on MODEL, output to LOG; sets
# MEM_RC (cmc's exit code) and MEM_PROPERTY (the violated property, or "").
mem_run_model() {
    local model=$1 log=$2
    MEM_RC=0
    (cd "$MEM_ROOT" && "$MEMORY_CMC" --model-file "$model" --save "${log%.log}.cex.json") \
        >"$log" 2>&1 || MEM_RC=$?
    MEM_PROPERTY=$(sed -n 's/^violation of [a-z]* property `\([^`]*\)`.*/\1/p' "$log" | head -n1)
}

# mem_reports: the MSan reports written so far, one path a line.
mem_reports() {
    { find "$MSAN_OUT/reports" -type f -name 'node*.log' -exec grep -l MemorySanitizer {} + 2>/dev/null || true; } | sort
}

mem_clear_reports() {
    mkdir -p "$MSAN_OUT/reports"
    find "$MSAN_OUT/reports" -type f \( -name 'msan.*' -o -name 'node*.log' \) -delete
}

# mem_invariants PROPS.c: the invariants a properties source defines, by
# cmc.h's signature `int NAME(const struct cmc_view *...)`.
mem_invariants() {
    sed -n 's/^int \([A-Za-z_][A-Za-z0-9_]*\)(const struct cmc_view \*.*/\1/p' "$1"
}

# mem_run_props LIB VIEWS LOG NAME...: the invariants NAME of the MSan
# build LIB, over VIEWS views each, under props_driver; sets MEM_RC.
mem_run_props() {
    local lib=$1 views=$2 log=$3
    shift 3
    MEM_RC=0
    "$MSAN_OUT/props_driver" "$lib" "$views" "$@" >"$log" 2>&1 || MEM_RC=$?
}

# mem_ccores: the C core builds' names (NAME, NAME-BUG_X), one a line, the
# probe's (ccore_uninit*) included; each is built as OUT/ccores/NAME-O1
# and NAME-O0 (msan.mk).
mem_ccores() {
    make -s -f "$MEM_ROOT/scripts/memory/msan.mk" "OUT=$MSAN_OUT" list-ccores | tr ' ' '\n' | sed '/^$/d'
}

# mem_ccore_nodes NAME: the nodes of the first model file in
# examples/ccores whose core is NAME's (build/libNAME.so or a bug build of
# it), else 3.
mem_ccore_nodes() {
    local base=${1%%-*} model nodes=""
    model=$(grep -l "^core *= *\"build/lib$base[.-]" "$MEM_ROOT"/examples/ccores/*.toml 2>/dev/null | head -n1 || true)
    [ -n "$model" ] && nodes=$(sed -n 's/^nodes *= *\([0-9][0-9]*\).*/\1/p' "$model" | head -n1)
    echo "${nodes:-3}"
}

# mem_run_ccore BUILD WALKS STEPS LOG: runs OUT/ccores/BUILD (NAME-O1, ...)
# over WALKS walks of at most STEPS steps, output to LOG; sets MEM_RC, and
# MEM_COMMAND to the command that reproduces the run.
mem_run_ccore() {
    local build=$1 walks=$2 steps=$3 log=$4
    local cmd=("$MSAN_OUT/ccores/$build" --walks "$walks" --steps "$steps" --nodes "$(mem_ccore_nodes "$build")")
    MEM_COMMAND=${cmd[*]}
    MEM_RC=0
    "${cmd[@]}" >"$log" 2>&1 </dev/null || MEM_RC=$?
}
