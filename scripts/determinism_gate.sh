#!/usr/bin/env bash
# The determinism gate (manual, GATES; DESIGN.md section 9): every example
# model, checked twice, gives the same bytes (JSON report, text, trace,
# counterexample file), and checked with --det (every step run twice from
# copies of the same world and compared; for programs every start and
# action replayed twice) gives no error and the same report. Each model is
# run with its declared search and with a seeded simulation.
#
# Usage: scripts/determinism_gate.sh
#
# The models are the suite's own declarations (tests/models); the work is
# done by tests/tests/determinism.rs, whose teeth test shows a core that
# reads a global is rejected. Exit status: 0 when every model is
# deterministic, nonzero otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
cargo test -p cmc-tests --test determinism -- --nocapture
echo "determinism_gate: every model deterministic ($(($(date +%s) - start)) s)"
