#!/usr/bin/env bash
# Times `cmc calibrate` on the 22 configurations with a release build and
# prints one Markdown table row per configuration: TLC's verdict, cmc's
# counts, the median search time over RUNS runs (default 5) and states per
# second. The time is the report's elapsed_s: the breadth-first search and
# its invariants, without process start or reading the file.
#
#   calibration/bench.sh [RUNS]
set -euo pipefail
runs=${1:-5}
cd "$(dirname "$0")/.."
cargo build --release -q -p cmc-cli --bin cmc
cmc=target/release/cmc

field() { grep -m1 "\"$1\":" | sed -e 's/.*: *//' -e 's/[",]//g'; }

echo "| cfg | module | TLC's verdict | distinct | generated | depth | cmc seconds (median of $runs) | distinct/s | generated/s |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
for cfg in calibration/configs/c*.cfg; do
    id=$(basename "$cfg" .cfg)
    module=$(sed -n 2p "$cfg" | grep -o '[A-Za-z]*\.tla' | sed 's/\.tla$//')
    tlc=$(awk -F'\t' -v id="$id" '$1 == id { print ($3 == "holds" ? "holds" : "violated " $4) }' calibration/expected.tsv)
    times=()
    for _ in $(seq "$runs"); do
        json=$("$cmc" calibrate --config "$cfg" "$module" --json 2>/dev/null || true)
        times+=("$(echo "$json" | field elapsed_s)")
    done
    median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(( (runs + 1) / 2 ))p")
    distinct=$(echo "$json" | field distinct_states)
    generated=$(echo "$json" | field generated_states)
    depth=$(echo "$json" | field depth)
    awk -v id="$id" -v m="$module" -v tlc="$tlc" -v d="$distinct" -v g="$generated" -v depth="$depth" -v t="$median" \
        'BEGIN { printf "| %s | %s | %s | %d | %d | %d | %.4f | %.0f | %.0f |\n", id, m, tlc, d, g, depth, t, d / t, g / t }'
done
