#!/usr/bin/env bash
# The fuzz gate (issue 12, item 8: hostile inputs): coverage-guided fuzzing
# of what the `cmc` command reads from its users, a target each: model files
# (`model_file`), TLC configurations (`cfg`), counterexample files
# (`counterexample`) and `--set KEY=VALUE` (`set`). Their bodies are
# `cmc_cli::fuzzing`'s; any input may be an error, none may panic.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]      (default 15)
#
# Builds fuzz/ (a workspace of its own, with libFuzzer from libfuzzer-sys,
# on stable: the flags below are the coverage instrumentation cargo-fuzz
# passes) in fuzz/target; replays every file in fuzz/regressions/TARGET
# (past findings, which tests/tests/fuzz_regressions.rs also runs under
# `cargo test`); then fuzzes each target for SECONDS_PER_TARGET from its
# committed seeds, fuzz/seeds/TARGET, which stay unchanged: new inputs go to
# a temporary corpus, given first. A crash (a panic, a timeout of 10 s, more
# than 2 GiB) is written to fuzz/artifacts/ and printed with the commands
# that reproduce and minimize it; fuzz/README.md says how to turn it into a
# regression.
#
# Exit status: 0 when nothing crashed, 1 when a target crashed, 2 when the
# gate itself cannot run (a build error, a bad argument).
set -uo pipefail
cd "$(dirname "$0")/.."

secs=${1:-15}
case $secs in
    '' | *[!0-9]* | 0)
        echo "fuzz: SECONDS_PER_TARGET must be a positive integer, not \`$secs\`" >&2
        exit 2
        ;;
esac
targets=(model_file cfg counterexample set)
triple=x86_64-unknown-linux-gnu
export CARGO_TARGET_DIR="$PWD/fuzz/target"
bin_dir="$CARGO_TARGET_DIR/$triple/release"
start=$(date +%s)

# `--target` keeps the instrumentation off build scripts and proc-macros;
# debug assertions and overflow checks are on, as cargo-fuzz builds.
if ! (cd fuzz && RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
    cargo build --locked --release --target "$triple"); then
    echo "fuzz: the fuzz targets do not build" >&2
    exit 2
fi
built=$(date +%s)

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p fuzz/artifacts
failed=()
summary=()

# Past findings: each must now run clean.
for t in "${targets[@]}"; do
    files=()
    if [ -d "fuzz/regressions/$t" ]; then
        while IFS= read -r f; do files+=("$f"); done < <(find "fuzz/regressions/$t" -type f | sort)
    fi
    [ ${#files[@]} -eq 0 ] && continue
    if ! "$bin_dir/$t" -runs=0 "${files[@]}" >"$corpus/$t.regressions.log" 2>&1; then
        cat "$corpus/$t.regressions.log" >&2
        echo "fuzz: $t: a regression in fuzz/regressions/$t crashes again" >&2
        failed+=("$t (regression)")
    fi
done

for t in "${targets[@]}"; do
    mkdir -p "$corpus/$t"
    log="$corpus/$t.log"
    touch "$corpus/$t.stamp"
    "$bin_dir/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="fuzz/artifacts/$t-" -print_final_stats=1 \
        "$corpus/$t" "fuzz/seeds/$t" >"$log" 2>&1
    status=$?
    # The last status line: `#RUNS DONE cov: N ft: N corp: N/SIZE ... exec/s: N ...`.
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1)
    runs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}')
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$done_line")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$done_line")
    corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$done_line")
    speed=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{print $2}')
    summary+=("$(printf '%-15s %10s runs %8s execs/s  cov %6s  ft %6s  corpus %5s' \
        "$t" "${runs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")")
    if [ $status -ne 0 ]; then
        grep -vE '^#[0-9]+' "$log" | tail -n 60 >&2
        failed+=("$t")
        artifacts=$(find fuzz/artifacts -maxdepth 1 -name "$t-*" -newer "$corpus/$t.stamp" -type f | sort)
        if [ -z "$artifacts" ]; then
            # A stack overflow kills libFuzzer before it can save the input.
            echo "fuzz: $t failed (exit $status) and saved no input: see its log above" >&2
        fi
        for a in $artifacts; do
            echo "fuzz: $t crashed (exit $status) on $a" >&2
            echo "  reproduce: $bin_dir/$t $a" >&2
            echo "  minimize:  $bin_dir/$t -minimize_crash=1 -runs=2000 -exact_artifact_path=fuzz/regressions/$t/NAME $a" >&2
        done
    fi
done

echo "fuzz: $secs s per target, build $((built - start)) s, all $(($(date +%s) - start)) s"
printf 'fuzz:   %s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz: FAILED: ${failed[*]} (see fuzz/README.md to turn a crash into a regression test)" >&2
    exit 1
fi
echo "fuzz: no crash"
