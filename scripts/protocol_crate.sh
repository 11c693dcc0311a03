#!/bin/sh
# The protocol crate made from the docs (examples/protocol-crate: its own
# workspace, cmc as a path dependency), run as its user runs it:
#
#   1. `cargo test` in it: its models pass and match their reviewed
#      snapshots (a core, its planted bug, a C program as nodes);
#   2. in a copy with a model that fails, every command the failure prints
#      is run verbatim, from the crate and from a folder inside it, and
#      does what it says: the replay fails as the model did; the same file
#      replayed through models of that configuration passes where the
#      trace confirms their expectation, and fails where it does not;
#   3. a new model's first run writes its snapshot for review in one line,
#      and writes nothing under CI=true; a snapshot of no model is reported;
#   4. a test target without `harness = false` fails, saying so.
#
# Its build has its own target folder (target/protocol-crate): the crate's
# workspace has its own profile and lock file.
#
#   scripts/protocol_crate.sh
set -eu
# The checks below are of a plain run: no CI (which writes no snapshot),
# no insta setting, no override (which skips the snapshot).
unset CI INSTA_UPDATE INSTA_FORCE_PASS
for v in $(env | sed -n 's/^\(CMC_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
root=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR_PROTOCOL_CRATE:-$root/target/protocol-crate}"
crate="$root/examples/protocol-crate"
say() { echo "protocol_crate: $*"; }
fail() { echo "protocol_crate: FAILED: $*" >&2; exit 1; }

say "cargo test in examples/protocol-crate"
(cd "$crate" && cargo test --locked)

# A copy at the same depth, so that its relative paths (the C examples,
# cmc.h) resolve; its dependencies are the same packages, by absolute path,
# so that nothing is rebuilt but the crate itself.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/examples"
ln -s "$root/examples/c" "$work/examples/c"
ln -s "$root/examples/ccores" "$work/examples/ccores"
ln -s "$root/cmc.h" "$work/cmc.h"
copy="$work/examples/protocol-crate"
mkdir "$copy"
(cd "$crate" && cp -r Cargo.toml Cargo.lock build.rs src tests snapshots "$copy/")
sed -i "s#path = \"../../#path = \"$root/#" "$copy/Cargo.toml"
out="$work/out"

# 2. A model that fails: the planted bug, declared as expected to pass.
cat >>"$copy/tests/models.rs" <<'EOF'

#[cmc::model(clients = 2, crashes = 1, timeouts = 2)]
fn bug_expected_to_pass() -> Model<Outbox> {
    model(OutboxSettings { bug_deliver_before_persist: 1 })
}

// The same configuration, for the replay of bug_expected_to_pass's file.
#[cmc::model(clients = 2, crashes = 1, timeouts = 2, expect = violation("all-delivered"))]
fn bug_expecting_another_property() -> Model<Outbox> {
    model(OutboxSettings { bug_deliver_before_persist: 1 })
}

fn holding(settings: OutboxSettings) -> Model<Outbox> {
    Model::<Outbox>::new(settings).nodes(2).always("delivered-once", |_| true)
}

#[cmc::model(clients = 2, crashes = 1, timeouts = 2, expect = violation("delivered-once"))]
fn bug_whose_property_holds() -> Model<Outbox> {
    holding(OutboxSettings { bug_deliver_before_persist: 1 })
}

#[cmc::model(clients = 2, crashes = 1, timeouts = 2)]
fn property_fixed() -> Model<Outbox> {
    holding(OutboxSettings { bug_deliver_before_persist: 1 })
}
EOF
say "a failing model prints commands that work"
if (cd "$copy" && cargo test --test models -- --exact bug_expected_to_pass) >"$out" 2>&1; then
    cat "$out"; fail "a model expected to pass that fails passed"
fi
grep -q "expected pass, got:" "$out" || { cat "$out"; fail "no failure message"; }
reproduce=$(sed -n 's/^reproduce: //p' "$out")
replay=$(sed -n 's/^replay:    //p' "$out")
[ -n "$reproduce" ] && [ -n "$replay" ] || { cat "$out"; fail "no reproduce or replay command printed"; }
for where in "$copy" "$copy/tests"; do
    say "  in ${where#"$work"/}: $reproduce"
    if (cd "$where" && sh -c "$reproduce") >"$out" 2>&1; then
        cat "$out"; fail "the reproduce command passed"
    fi
    grep -q "bug_expected_to_pass (tests/models.rs:.*) expected pass, got:" "$out" || { cat "$out"; fail "the reproduce command did not run the model"; }
    say "  in ${where#"$work"/}: $replay"
    if (cd "$where" && sh -c "$replay") >"$out" 2>&1; then
        cat "$out"; fail "the replay command passed, though its trace violates a model expected to pass"
    fi
    grep -q "bug_expected_to_pass (tests/models.rs:.*) expected pass; CMC_REPLAY=.* replayed to a violation of \`delivered-once\`" "$out" || { cat "$out"; fail "the replay command did not say how its trace contradicts the model"; }
    grep -q "violation of always property \`delivered-once\`" "$out" || { cat "$out"; fail "the replay command did not show the replayed trace"; }
done

# The same file through the models of the same configuration that expect
# other things: the replay holds its trace to each one's expectation.
file=$(printf '%s\n' "$replay" | sed -n 's/^CMC_REPLAY=\([^ ]*\) .*/\1/p')
[ -f "$file" ] || fail "no counterexample file in: $replay"
replay_as() { (cd "$copy" && CMC_REPLAY="$file" cargo test --test models -- --exact "$1") >"$out" 2>&1; }
say "the same file replayed through models that expect other things"
replay_as bug_deliver_before_persist || { cat "$out"; fail "a replay that confirms the expected violation failed"; }
grep -q "bug_deliver_before_persist: replayed .*: violation of always property \`delivered-once\`" "$out" || { cat "$out"; fail "no replayed violation"; }
if replay_as bug_expecting_another_property; then cat "$out"; fail "a replay that violates another property passed"; fi
grep -q "expected a violation of \`all-delivered\`; CMC_REPLAY=.* replayed to a violation of \`delivered-once\`" "$out" || { cat "$out"; fail "another property: no message"; }
if replay_as bug_whose_property_holds; then cat "$out"; fail "a replay that no longer violates passed"; fi
grep -q "expected a violation of \`delivered-once\`; CMC_REPLAY=.* no longer fails: every step replays and the replayed trace does not violate always property \`delivered-once\`" "$out" || { cat "$out"; fail "no longer violates: no message"; }
replay_as property_fixed || { cat "$out"; fail "a replay that confirms a pass failed"; }
grep -q "property_fixed: replayed .*: every step replays and the replayed trace does not violate always property \`delivered-once\`" "$out" || { cat "$out"; fail "a confirmed pass: no message"; }

# 3. Snapshots: a new one is written for review, in one line.
say "a new snapshot is written for review, in one line"
rm "$copy/snapshots/correct.snap"
if (cd "$copy" && cargo test --test models -- --exact correct) >"$out" 2>&1; then
    cat "$out"; fail "a model with no snapshot passed"
fi
grep -q "^correct: new snapshot written to .*/snapshots/correct.snap.new for review" "$out" || { cat "$out"; fail "no one-line message"; }
if grep -q -e "panicked" -e "stack backtrace" "$out"; then cat "$out"; fail "a backtrace"; fi
[ -f "$copy/snapshots/correct.snap.new" ] || fail "no correct.snap.new"
rm "$copy/snapshots/correct.snap.new"
if (cd "$copy" && CI=true cargo test --test models -- --exact correct) >"$out" 2>&1; then
    cat "$out"; fail "a model with no snapshot passed under CI=true"
fi
grep -q "none written (CI is set)" "$out" || { cat "$out"; fail "CI=true: no message"; }
[ ! -e "$copy/snapshots/correct.snap.new" ] || fail "CI=true wrote correct.snap.new"
cp "$crate/snapshots/correct.snap" "$copy/snapshots/"
sed -i '/^fn bug_expected_to_pass/,$d; /^#\[cmc::model(clients = 2, crashes = 1, timeouts = 2)\]$/d' "$copy/tests/models.rs"
touch "$copy/snapshots/renamed_model.snap"
say "a snapshot of no model is reported"
(cd "$copy" && cargo test --test models) >"$out" 2>&1 || { cat "$out"; fail "the copy's models failed"; }
grep -q "snapshot of no model in this test target .*renamed_model.snap" "$out" || { cat "$out"; fail "not reported"; }

# 4. Without `harness = false`.
say "a test target without harness = false fails, saying so"
sed -i '/^harness = false$/d' "$copy/Cargo.toml"
if (cd "$copy" && cargo test --test models) >"$out" 2>&1; then
    cat "$out"; fail "a target without harness = false passed"
fi
grep -q "add \`harness = false\` to its \[\[test\]\] section" "$out" || { cat "$out"; fail "no message"; }

say "ok"
