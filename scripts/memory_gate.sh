#!/usr/bin/env bash
# memory_gate.sh: uninitialised reads, caught where --det cannot see them
# (DESIGN 9, "Memory"; manual, GATES).
#
#   scripts/memory_gate.sh        (from any directory; exit 0 when clean)
#
# C programs: every model file in examples/c (and counter.c with
# scripts/memory/counter.toml) is checked by BFS, depth_max at most
# $MEMORY_GATE_DEPTH (default 5), over MemorySanitizer builds of its
# program; a node that reads an uninitialised byte makes the checker report
# a violation of `msan_quiet`, and MSan's report is printed, symbolized.
# A model may still find its own planted bug: that is not this gate's
# business, and passes it. The invariants of examples/c/*_props.c, which
# run inside the checker where MSan cannot reach, are built with MSan too
# and called by scripts/memory/props_driver.c over $MEMORY_GATE_VIEWS
# (default 100000) generated views each.
#
# Cores: every core of `cmc check --list`, with its default settings and
# with each planted bug on, is checked by BFS to the end (at most
# $MEMORY_GATE_STATES states) by the checker built with cmc's `valgrind`
# feature, under valgrind's memcheck: the engine checks every byte each
# step hands back, and any memcheck error fails the run.
#
# C cores: every examples/ccores/*.c, as is and with each planted bug
# (`#if BUG_X`), compiled at -O1 and at -O0 with MemorySanitizer into one
# program with scripts/memory/ccore_msan.c, which plays the engine: the
# core's default settings, $MEMORY_GATE_WALKS (default 1000) seeded random
# walks of at most $MEMORY_GATE_STEPS (default 60) steps over every event
# the engine can produce (on the nodes of the core's model file), and a
# check of the state and of every byte of every effect after each call.
# An uninitialised byte, read or handed back, fails the run, with the
# driver's word on which call and byte and MSan's report with its origin.
# No C core at all is said, and passes; a clang that cannot build MSan
# programs fails the gate.
#
# The halves run at once (the valgrind one beside the others).
# scripts/memory_teeth.sh shows that each catches its probe.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/memory/lib.sh"

DEPTH=${MEMORY_GATE_DEPTH:-5}
STATES=${MEMORY_GATE_STATES:-100000}
VIEWS=${MEMORY_GATE_VIEWS:-100000}
WALKS=${MEMORY_GATE_WALKS:-1000}
STEPS=${MEMORY_GATE_STEPS:-60}
start=$SECONDS
mem_tools
mem_say "building (cargo may wait for the target lock)"
mem_build_c
mem_build_cores
built=$SECONDS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Cores, under memcheck: one line per run; the failures' output in full.
cores() {
    local cmc=$MEMORY_CMC failed=0 name setting rc t
    local names
    names=$("$cmc" check --list | grep -v '^ ')
    for name in $names; do
        for setting in "" $("$cmc" check --list | awk -v n="$name" '
            /^[^ ]/ { this = ($1 == n) } this && $1 == "--set" && $2 ~ /^bug_/ { sub(/=.*/, "=1", $2); print $2 }'); do
            t=$SECONDS rc=0
            "${VALGRIND[@]}" "$cmc" check "$name" ${setting:+--set "$setting"} --states-max "$STATES" \
                >"$tmp/core.log" 2>&1 || rc=$?
            case $rc in
                0 | 1 | 3)
                    printf '  ok    %-16s %-32s %3ss  %s\n' "$name" "$setting" $((SECONDS - t)) "$(head -n1 "$tmp/core.log")"
                    ;;
                *)
                    failed=1
                    printf '  FAIL  %-16s %-32s exit %s\n' "$name" "$setting" "$rc"
                    sed 's/^/        /' "$tmp/core.log"
                    ;;
            esac
        done
    done
    return $failed
}

# C programs, MSan builds under the checker.
programs() {
    local failed=0 src name model log t reports
    mem_clear_reports
    for src in "$MEM_ROOT"/examples/c/*.toml "$MEM_ROOT/scripts/memory/counter.toml"; do
        name=$(basename "$src" .toml)
        model=$tmp/msan-$name.toml log=$tmp/msan-$name.log
        mem_msan_model "$src" "$model" "$DEPTH"
        t=$SECONDS
        mem_run_model "$model" "$log"
        # A violation (exit 1) passes only a model of a planted-bug build,
        # and only of a property other than msan_quiet (say a node killed
        # by a signal in a correct build must fail the gate).
        local allowed='^[03]$'
        grep -q -- '-BUG_' "$src" && allowed='^[013]$'
        if [ "$MEM_PROPERTY" = msan_quiet ] || ! [[ $MEM_RC =~ $allowed ]]; then
            failed=1
            printf '  FAIL  %-28s exit %s  %s\n' "$name" "$MEM_RC" "$(head -n1 "$log")"
            sed 's/^/        /' "$log"
        else
            printf '  ok    %-28s %3ss  %s\n' "$name" $((SECONDS - t)) "$(head -n1 "$log")"
        fi
    done
    for src in "$MEM_ROOT"/examples/c/*_props.c; do
        name=$(basename "$src" .c)
        log=$tmp/props-$name.log t=$SECONDS
        # shellcheck disable=SC2046 # one invariant name a word
        mem_run_props "$MSAN_OUT/props/$name.so" "$VIEWS" "$log" $(mem_invariants "$src")
        if [ "$MEM_RC" -ne 0 ]; then
            failed=1
            printf '  FAIL  %-28s exit %s (props_driver)\n' "$name" "$MEM_RC"
            sed 's/^/        /' "$log"
        else
            printf '  ok    %-28s %3ss  %s\n' "$name" $((SECONDS - t)) "$(paste -sd';' "$log")"
        fi
    done
    reports=$(mem_reports)
    if [ -n "$reports" ]; then
        failed=1
        for r in $reports; do
            printf '  MemorySanitizer report %s:\n' "$r"
            mem_symbolize "$r"
        done
    fi
    return $failed
}

# C cores, MSan builds with the driver. The probe (ccore_uninit) is the
# teeth's.
ccores() {
    local failed=0 name opt build log t names
    names=$(mem_ccores | grep -v '^ccore_uninit' || true)
    if [ -z "$names" ]; then
        echo "  none: examples/ccores has no C core (*.c)"
        return 0
    fi
    for name in $names; do
        for opt in O1 O0; do
            build=$name-$opt log=$tmp/ccore-$build.log t=$SECONDS
            mem_run_ccore "$build" "$WALKS" "$STEPS" "$log"
            if [ "$MEM_RC" -ne 0 ]; then
                failed=1
                printf '  FAIL  %-40s exit %s\n' "$build" "$MEM_RC"
                sed 's/^/        /' "$log"
                printf '        reproduce: %s\n' "$MEM_COMMAND"
            else
                printf '  ok    %-40s %3ss  %s\n' "$build" $((SECONDS - t)) "$(tail -n1 "$log")"
            fi
        done
    done
    return $failed
}

cores_rc=0
cores >"$tmp/cores.out" 2>&1 &
cores_pid=$!
echo "C programs: MemorySanitizer builds under cmc --model-file (depth_max <= $DEPTH); invariants under props_driver"
programs_rc=0
programs || programs_rc=$?
echo "C cores: MemorySanitizer builds (-O1, -O0) with scripts/memory/ccore_msan.c ($WALKS walks of at most $STEPS steps)"
ccores_rc=0
ccores || ccores_rc=$?
wait "$cores_pid" || cores_rc=$?
echo "cores: cmc check under valgrind memcheck, with the engine's client requests (states_max $STATES)"
cat "$tmp/cores.out"

echo "memory gate: build $((built - start)) s, checks $((SECONDS - built)) s, total $((SECONDS - start)) s"
if [ "$programs_rc" -ne 0 ] || [ "$ccores_rc" -ne 0 ] || [ "$cores_rc" -ne 0 ]; then
    echo "memory gate: FAILED (C programs: $([ $programs_rc -eq 0 ] && echo ok || echo failed), C cores: $([ $ccores_rc -eq 0 ] && echo ok || echo failed), cores: $([ $cores_rc -eq 0 ] && echo ok || echo failed))"
    exit 1
fi
echo "memory gate: passed"
