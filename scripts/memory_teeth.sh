#!/usr/bin/env bash
# memory_teeth.sh: the memory gate catches each of its probes, each for the
# right reason (a gate without teeth is no gate).
#
#   scripts/memory_teeth.sh       (from any directory; exit 0 when every
#                                  probe is caught and every control passes)
#
# C programs: scripts/memory/uninit.c, run as two nodes by the checker over
# its MemorySanitizer build, exactly as the gate runs the examples
# (scripts/memory/lib.sh). Only after an ACCEPT and a DELIVER does node 0
# branch on a never-written stack byte (stack), or heap byte (heap), or
# report a state with a never-written byte (report). Each must end in a
# violation of `msan_quiet` with node 0 exited with MSan's exit code, and
# MSan's report must say use-of-uninitialized-value, with the origin the
# probe planted. Mode clean, the control, must pass with no report.
#
# Invariants: scripts/memory/uninit_props.c through props_driver, as the
# gate runs the examples' invariants: `reads_uninit` branches on a local it
# never wrote, for some views only, and must be stopped by MSan naming that
# local; `clean`, the control, must pass.
#
# C cores: scripts/memory/ccore_uninit.c, built and run with
# scripts/memory/ccore_msan.c exactly as the gate runs examples/ccores
# (each planted bug a build, each at -O1 and -O0). The control must pass
# at both levels. BUG_BRANCH must be stopped by MSan inside the core, at
# its branch, naming the local; BUG_STATE and BUG_MESSAGE by the driver's
# checks (the state's byte, the message's byte) and then MSan, naming the
# local the byte came from; all at both levels. BUG_PADDING must be caught
# at -O0 (at -O1 the compiler may copy the fields alone; what it did is
# shown, not required). BUG_RENAME, a symmetry renaming that writes a
# never-written byte into the state, by the driver's check of the renamed
# copy, at both levels.
#
# Cores: cmc-memory-probe (scripts/memory/probe), whose node 1 leaves one
# byte of its next state (state) or of a message (message) uninitialised on
# a delivery, under valgrind's memcheck with cmc's `valgrind` feature, as
# the gate runs the example cores. Each must fail with memcheck's report of
# the engine's client request and the engine's error naming the byte; the
# control (clean) must pass; and without valgrind, even with --det, the
# bad modes pass: only this gate sees them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/memory/lib.sh"

start=$SECONDS
mem_tools
mem_say "building (cargo may wait for the target lock)"
mem_build_c
mem_build_cores
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

pass() { printf '  caught  %s\n' "$*"; }
fail() {
    printf '  FAILED  %s\n' "$*"
    failures=$((failures + 1))
}
# expect NAME LOG TEXT...: LOG contains every TEXT (fixed strings).
expect() {
    local name=$1 log=$2 text
    shift 2
    for text in "$@"; do
        if ! grep -qF -- "$text" "$log"; then
            fail "$name: no \"$text\" in:"
            sed 's/^/            /' "$log"
            return 1
        fi
    done
}

echo "C program probe: scripts/memory/uninit.c, MemorySanitizer build under cmc --model-file"
for mode in clean stack heap report; do
    src=$tmp/uninit-$mode.src.toml model=$tmp/uninit-$mode.toml log=$tmp/uninit-$mode.log
    printf 'program = "build/uninit"\nargs = ["%s"]\nnodes = 2\ndepth_max = 6\n' "$mode" >"$src"
    mem_msan_model "$src" "$model" 6
    mem_clear_reports
    mem_run_model "$model" "$log"
    reports=$(mem_reports)
    mem_reports | xargs -r cat >"$log.msan"
    if [ $mode = clean ]; then
        if [ "$MEM_RC" -eq 0 ] && [ -z "$reports" ]; then
            printf '  passes  clean (the control): %s\n' "$(head -n1 "$log")"
        else
            fail "clean (the control) did not pass cleanly: exit $MEM_RC, reports: ${reports:-none}"
            cat "$log" "$log.msan"
        fi
        continue
    fi
    if [ "$MEM_RC" -ne 1 ] || [ "$MEM_PROPERTY" != msan_quiet ]; then
        fail "$mode: expected a violation of msan_quiet, got exit $MEM_RC ($(head -n1 "$log"))"
        continue
    fi
    case $mode in
        stack) origin="Uninitialized value was created by an allocation of 'junk" ;;
        heap) origin="Uninitialized value was created by a heap allocation" ;;
        report) origin="Uninitialized bytes in __interceptor_write" ;;
    esac
    if ! grep -qE "^ +3\. DELIVER\(0, 1\.0\)$" "$log" ||
        ! grep -qE "^ +node 0: state [0-9a-f]+ durable - \(exited $MSAN_EXITCODE\)$" "$log"; then
        fail "$mode: expected node 0 to exit with $MSAN_EXITCODE at the DELIVER, the third world:"
        sed 's/^/            /' "$log"
        continue
    fi
    [ "$reports" = "$MSAN_OUT/reports/node0.log" ] || {
        fail "$mode: expected one report, from node 0 (its log), got: ${reports:-none}"
        continue
    }
    expect "$mode" "$log.msan" "WARNING: MemorySanitizer: use-of-uninitialized-value" "$origin" || continue
    where=""
    if [ $mode != report ]; then
        # The branch MSan stops at is the probe's `if (odd(junk))`: the
        # first such line for stack, the second for heap.
        nth=$([ $mode = stack ] && echo 1 || echo 2)
        line=$(grep -n 'if (odd(junk))' "$MEM_ROOT/scripts/memory/uninit.c" | sed -n "${nth}p" | cut -d: -f1)
        pc=$(sed -n 's/^ *#0 \(0x[0-9a-f]*\) .*/\1/p' "$log.msan" | head -n1)
        where=$(llvm-symbolizer --obj="$MSAN_OUT/uninit" "$pc" | head -n2 | paste -sd' ')
        if ! [[ $where == "serve "*"uninit.c:$line:"* ]]; then
            fail "$mode: MSan stopped at $pc ($where), not at uninit.c:$line, the planted branch"
            continue
        fi
        where=", at $(basename "${where#serve }" | cut -d: -f1,2) in serve"
    fi
    pass "$mode: violation of msan_quiet at the DELIVER; MSan: use-of-uninitialized-value$where, \"$origin\""
done
mem_clear_reports

echo "invariant probe: scripts/memory/uninit_props.c, MemorySanitizer build under props_driver"
log=$tmp/props.log
mem_run_props "$MSAN_OUT/props/uninit_props.so" 100000 "$log" clean
if [ "$MEM_RC" -eq 0 ] && [ -z "$(mem_reports)" ]; then
    printf '  passes  clean (the control): %s\n' "$(cat "$log")"
else
    fail "clean (the control): exit $MEM_RC"
    cat "$log"
fi
mem_clear_reports
mem_run_props "$MSAN_OUT/props/uninit_props.so" 100000 "$log" reads_uninit
# The driver runs outside the checker: MSan reports on its stderr, in $log.
cp "$log" "$log.msan"
origin="Uninitialized value was created by an allocation of 'seen' in the stack frame of function 'reads_uninit'"
if [ "$MEM_RC" -ne "$MSAN_EXITCODE" ]; then
    fail "reads_uninit: expected MSan's exit code $MSAN_EXITCODE, got $MEM_RC"
    cat "$log" "$log.msan"
elif expect reads_uninit "$log.msan" "WARNING: MemorySanitizer: use-of-uninitialized-value" "$origin"; then
    pass "reads_uninit: MSan: use-of-uninitialized-value, \"$origin\""
fi
mem_clear_reports

echo "C core probe: scripts/memory/ccore_uninit.c, MemorySanitizer builds with scripts/memory/ccore_msan.c"
probe_src=$MEM_ROOT/scripts/memory/ccore_uninit.c
line_of() { grep -nF -- "$1" "$probe_src" | head -n1 | cut -d: -f1; }
# BUILD, then what its log must say: the driver's words (or - when MSan
# must stop inside the core, before any check of the driver), and the
# origin MSan must name, the local of the core's step the byte came from
# (an extended regular expression: at -O1 a local may be split,
# `junk.sroa.3`, and a byte copied from one local to another may be
# named after either).
ccore_expect="
BUG_BRANCH  -                                    allocation of 'decision' in the stack frame of function 'probe_step'
BUG_STATE   byte 7 of the state of node          allocation of 'junk[.a-z0-9]*' in the stack frame of function 'probe_step'
BUG_MESSAGE byte 2 of the payload of effect 0    allocation of '(note|copy)[.a-z0-9]*' in the stack frame of function 'probe_step'
BUG_PADDING byte 1 of the state of node          allocation of 'e[.a-z0-9]*' in the stack frame of function 'probe_step'
BUG_RENAME  byte 7 of the state rename_state() renamed  allocation of 'renamed[.a-z0-9]*' in the stack frame of function 'probe_rename'
"
builds=$(mem_ccores | grep '^ccore_uninit' || true)
for bug in $(echo "$ccore_expect" | awk 'NF { print $1 }'); do
    grep -qx "ccore_uninit-$bug" <<<"$builds" || fail "ccore_uninit-$bug: msan.mk does not build it (its #if line?)"
done
for opt in O1 O0; do
    log=$tmp/ccore-clean-$opt.log
    mem_run_ccore "ccore_uninit-$opt" 200 60 "$log"
    if [ "$MEM_RC" -eq 0 ] && expect "clean -$opt" "$log" "every byte initialised"; then
        printf '  passes  clean -%s (the control): %s\n' "$opt" "$(tail -n1 "$log")"
    else
        fail "clean -$opt (the control): exit $MEM_RC"
        cat "$log"
    fi
done
while read -r bug words; do
    [ -n "$bug" ] || continue
    said=${words%%  *}
    origin=$(echo "${words#"$said"}" | sed 's/^ *//')
    for opt in O1 O0; do
        build=ccore_uninit-$bug-$opt log=$tmp/ccore-$bug-$opt.log
        mem_run_ccore "$build" 200 60 "$log"
        if [ "$bug" = BUG_PADDING ] && [ $opt = O1 ]; then
            printf '  note    %s: exit %s (not required: the compiler may copy the fields alone)\n' "$build" "$MEM_RC"
            continue
        fi
        if [ "$MEM_RC" -ne "$MSAN_EXITCODE" ]; then
            fail "$build: expected MSan's exit code $MSAN_EXITCODE, got $MEM_RC"
            cat "$log"
            continue
        fi
        expect "$build" "$log" "WARNING: MemorySanitizer: use-of-uninitialized-value" || continue
        if ! grep -qE "Uninitialized value was created by an $origin" "$log"; then
            fail "$build: no origin matching \"$origin\" in:"
            sed 's/^/            /' "$log"
            continue
        fi
        found=$(grep -oE "$origin" "$log" | head -n1)
        if [ "$said" = - ]; then
            # MSan stops at the probe's branch, inside the core, before the
            # driver checks anything.
            line=$(line_of "if (set(decision))")
            if ! grep -qE "^ +#0 0x[0-9a-f]+ in probe_step .*ccore_uninit\.c:$line:" "$log" || grep -q '^ccore_msan:' "$log"; then
                fail "$build: MSan did not stop at ccore_uninit.c:$line, the planted branch:"
                sed 's/^/            /' "$log"
                continue
            fi
            pass "$build: MSan: use-of-uninitialized-value at ccore_uninit.c:$line in probe_step, \"$found\""
        else
            expect "$build" "$log" "$said" || continue
            pass "$build: ccore_msan: \"$(grep -o "after .* is uninitialised" "$log" | head -n1)\"; MSan: \"$found\""
        fi
    done
done <<<"$ccore_expect"
mem_clear_reports

echo "core probe: cmc-memory-probe under valgrind memcheck, cmc built with the valgrind feature"
probe=$MEMORY_TARGET/gate/cmc-memory-probe
rc=0
"${VALGRIND[@]}" "$probe" clean >"$tmp/core-clean.log" 2>&1 || rc=$?
if [ $rc -eq 0 ] && expect clean "$tmp/core-clean.log" "pass (bfs"; then
    printf '  passes  clean (the control): %s\n' "$(head -n1 "$tmp/core-clean.log")"
else
    fail "clean (the control): exit $rc"
    cat "$tmp/core-clean.log"
fi
for mode in state message; do
    case $mode in
        state) what="byte 1 of the next state is undefined" ;;
        message) what="byte 0 of the message is undefined" ;;
    esac
    log=$tmp/core-$mode.log rc=0
    "${VALGRIND[@]}" "$probe" $mode >"$log" 2>&1 || rc=$?
    if [ $rc -ne "$VALGRIND_EXITCODE" ]; then
        fail "$mode: expected memcheck's exit code $VALGRIND_EXITCODE, got $rc"
        cat "$log"
        continue
    fi
    expect "$mode" "$log" "Uninitialised byte(s) found during client check request" \
        "cmc::engine::memcheck::defined" "Uninitialised value was created by a heap allocation" \
        "uninitialised (main.rs:" "<cmc_memory_probe::Probe as cmc::core::Core>::step" "error: core \`memory-probe\`, node 1, event Deliver" "$what" || continue
    native=$tmp/core-$mode-native.log rc=0
    "$probe" $mode --det >"$native" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        fail "$mode: without valgrind (--det) the probe should pass, showing only the gate sees it; exit $rc"
        cat "$native"
        continue
    fi
    pass "$mode: memcheck \"Uninitialised byte(s) found during client check request\"; cmc: \"$what\"; without valgrind, --det passes"
done

echo "memory teeth: $((SECONDS - start)) s"
if [ $failures -ne 0 ]; then
    echo "memory teeth: FAILED ($failures)"
    exit 1
fi
echo "memory teeth: every probe caught"
