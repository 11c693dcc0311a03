#!/usr/bin/env bash
# The manual pages gate: every page in docs/man renders under mandoc's lint
# with no warning (mandoc -Tlint -Wwarning: warnings, errors and
# unsupported requests; style notes, such as a page referred to that is not
# installed, are not counted). Any output, or a page mandoc cannot parse,
# fails the gate. What the pages say is checked against the code by
# cmc-cli/tests/man.rs (every option of cmc, every model-file key).
#
# Usage: scripts/man_gate.sh   (needs mandoc: apt-get install mandoc)
# Exit status: 0 when every page is clean, nonzero otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mandoc >/dev/null || { echo "man_gate: mandoc is missing (apt-get install mandoc)" >&2; exit 2; }
pages=(docs/man/*.[1-9])
[ -e "${pages[0]}" ] || { echo "man_gate: no pages in docs/man" >&2; exit 1; }
failed=0
for page in "${pages[@]}"; do
    if ! out=$(mandoc -Tlint -Wwarning "$page" 2>&1) || [ -n "$out" ]; then
        echo "man_gate: $page:" >&2
        printf '%s\n' "${out:-mandoc failed}" >&2
        failed=1
    fi
done
[ "$failed" = 0 ] || exit 1
echo "man_gate: ${#pages[@]} pages render without a warning"
