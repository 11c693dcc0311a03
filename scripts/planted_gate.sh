#!/usr/bin/env bash
# The planted-bug gate (manual, GATES; DESIGN.md section 9): every bug site
# in the shipped sources is caught, with its expected property, by BFS, by
# simulation and by replay of the saved counterexample.
#
# Usage: scripts/planted_gate.sh
#
# Sites are found in the sources: `ctx.settings.bug_NAME != 0` in an example
# core (examples/src) and `#if BUG_NAME` in an example program
# (examples/c). A site's expectation is the model the models suite
# (tests/models) declares for it, named after the bug, with `expect =
# violation("PROPERTY")`; the gate fails on a site without one (a new site,
# or a deleted model) and on a bug model without a site. The work is done by
# tests/tests/planted.rs; this script runs it alone and prints its table.
# Exit status: 0 when every bug is caught three ways, nonzero otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
cargo test -p cmc-tests --test planted -- --nocapture --test-threads 1
echo "planted_gate: every planted bug caught by BFS, simulation and replay ($(($(date +%s) - start)) s)"
