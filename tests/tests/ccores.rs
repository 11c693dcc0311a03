//! Cores written in C (`cmc.h`, `cmc::ccore`): the same engine under the
//! same rules. The example C cores give TLC's and the Rust cores' counts;
//! the probe core `c/abi_probe.c` misbehaves one way per setting, and each
//! way is an error naming it, never a pass; a `struct cmc_core` whose
//! fields are wrong is refused when it is named.
#![cfg(target_os = "linux")]

use cmc::ccore::{CModel, CmcCore};
use std::path::PathBuf;

use cmc::{Kind, NoControl, Options, Report, Verdict};
use cmc_tests::ccores;

fn check(model: CModel, options: &Options) -> Report {
    let model = model.into_dyn().unwrap_or_else(|e| panic!("{e}"));
    model.check(options, &mut NoControl).unwrap_or_else(|e| panic!("{e}"))
}

fn counts(r: &Report) -> (Verdict, u64, u64, u32) {
    (r.verdict, r.distinct_states, r.generated_states, r.depth)
}

fn linked(core: &'static CmcCore) -> CModel {
    CModel::new(core).unwrap_or_else(|e| panic!("{e}"))
}

fn tla(rms: u64) -> CModel {
    // SAFETY: a `struct cmc_core` the build links into this package.
    let mut m = linked(unsafe { &ccores::two_phase_tla_core });
    m.set("rms", rms).unwrap_or_else(|e| panic!("{e}"));
    for (name, f) in ccores::TWO_PHASE_TLA_ALWAYS {
        m = m.c_property(Kind::Always, name, f);
    }
    m
}

#[test]
fn the_c_two_phase_tla_core_gives_tlcs_counts_at_3_7_and_8_on_any_thread_count() {
    // TLC, one worker, -deadlock (calibration/ and examples/src/two_phase_tla.rs).
    for (rms, expected) in [(3, (288, 1_146, 11)), (7, (296_448, 2_744_706, 23)), (8, (1_745_408, 18_507_778, 26))] {
        for threads in [1, 2] {
            let r = check(tla(rms), &Options { threads, ..Options::default() });
            assert_eq!(counts(&r), (Verdict::Pass, expected.0, expected.1, expected.2), "N={rms}, {threads} threads");
        }
    }
}

#[test]
fn the_c_two_phase_core_gives_the_rust_cores_counts_in_every_environment() {
    use cmc_examples::two_phase::{TwoPhaseSettings, model};
    for (nodes, crashes, drops, bag) in [(3, 0, 0, false), (3, 1, 1, false), (4, 1, 0, false), (3, 1, 1, true)] {
        let network = if bag { cmc::Network::Bag } else { cmc::Network::Fifo };
        let rust = model(TwoPhaseSettings::default()).nodes(nodes).crashes(crashes).drops(drops).network(network);
        let rust = cmc::check(&rust, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        // SAFETY: a `struct cmc_core` the build links into this package.
        let mut c =
            linked(unsafe { &ccores::two_phase_core }).nodes(nodes).crashes(crashes).drops(drops).network(network);
        // The Rust model's properties, in its order.
        for (name, f) in ccores::TWO_PHASE_ALWAYS {
            c = c.c_property(Kind::Always, name, f);
        }
        let (name, f) = ccores::TWO_PHASE_EVENTUALLY;
        c = c.c_property(Kind::Eventually, name, f);
        let (name, f) = ccores::TWO_PHASE_SOMETIMES;
        let c = check(c.c_property(Kind::Sometimes, name, f), &Options::default());
        let rust_property = rust.property.clone().map(|p| p.replace('-', "_"));
        assert_eq!(
            (counts(&c), c.property),
            (counts(&rust), rust_property),
            "{nodes} nodes, crashes {crashes}, drops {drops}, bag {bag}"
        );
    }
}

/// The probe core set to misbehave as `how`, two nodes, one client each
/// and a crash, with its C properties.
fn probe(how: u64) -> CModel {
    // SAFETY: a `struct cmc_core` the build links into this package.
    let mut m = linked(unsafe { &ccores::abi_probe_core }).nodes(2).clients(1).crashes(1);
    m.set("misbehave", how).unwrap_or_else(|e| panic!("{e}"));
    let (name, f) = ccores::PROBE_ALWAYS[0];
    m.c_property(Kind::Always, name, f)
}

#[test]
fn a_correct_c_core_passes_and_its_c_property_can_fail() {
    let r = check(probe(0), &Options::default());
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    // Two clients on one node: it replies twice.
    let (name, f) = ccores::PROBE_ALWAYS[1];
    let r = check(probe(0).clients(2).c_property(Kind::Always, name, f), &Options::default());
    assert_eq!((r.verdict, r.property.as_deref()), (Verdict::Violation, Some("at_most_one_reply")));
    assert_eq!(r.trace.len(), 5, "{}", r.to_text());
}

#[test]
fn every_misbehaviour_of_a_c_core_is_an_error_naming_it() {
    for (how, det, expected) in [
        (1, false, "step changed durable bytes"),
        (2, false, "the C core wrote past its state_size"),
        (3, false, "more than 16 effects in one step"),
        (4, false, "a payload of 33 bytes (limit payload_bytes_max = 32)"),
        (5, false, "timer 16 (limit timers_max = 16"),
        (6, true, "non-deterministic"),
        (7, false, "apply_persist changed volatile bytes"),
        (8, false, "not_enabled() from a message-passing core"),
    ] {
        let r = check(probe(how), &Options { det, ..Options::default() });
        let error = r.reason.clone().unwrap_or_default();
        assert_eq!(r.verdict, Verdict::Error, "misbehave = {how}: {}", r.to_text());
        assert!(error.contains(expected) && error.contains("abi_probe_core"), "misbehave = {how}: {error}");
    }
}

#[test]
fn a_wrong_struct_cmc_core_is_refused_naming_the_field() {
    // SAFETY: `struct cmc_core`s the build links into this package.
    let wrong: [(&'static CmcCore, &str); 5] = unsafe {
        [
            (&ccores::abi_probe_bad_abi, "abi = 99 (this cmc reads CMC_CORE_ABI 1)"),
            (&ccores::abi_probe_durable_over_state, "durable_size = 3 is over state_size = 2"),
            (&ccores::abi_probe_no_step, "`init` and `step` are required"),
            (&ccores::abi_probe_state_too_large, "state_size = 4097 (1 to CMC_CORE_STATE_MAX = 4096)"),
            (&ccores::abi_probe_overlapping_settings, "setting `b` overlaps another"),
        ]
    };
    for (core, expected) in wrong {
        let e = CModel::new(core).err().unwrap_or_else(|| panic!("accepted: {expected}")).to_string();
        assert!(e.contains(expected), "{e}");
    }
}

#[test]
fn a_c_cores_settings_are_its_own_keys_each_checked() {
    let mut m = probe(0);
    let e = m.set("misbehaves", 1).expect_err("an unknown key").to_string();
    assert!(e.contains("unknown setting `misbehaves` (known: misbehave)"), "{e}");
    let e = m.set("misbehave", 256).expect_err("too large for one byte").to_string();
    assert!(e.contains("`misbehave` = 256 is out of range (at most 255)"), "{e}");
    let e = tla(9).into_dyn().err().expect("rms = 9 is refused").to_string();
    assert!(e.contains("setting `rms` out of range (1 to 8)"), "{e}");
}

#[test]
fn a_c_cores_counterexample_replays_and_tampering_diverges() {
    let (name, f) = ccores::PROBE_ALWAYS[1];
    let model = probe(0).clients(2).c_property(Kind::Always, name, f).into_dyn().unwrap_or_else(|e| panic!("{e}"));
    let r = model.check(&Options::default(), &mut NoControl).unwrap_or_else(|e| panic!("{e}"));
    let file = r.counterexample().expect("a violation has a counterexample file");
    let again = model.replay(&file, true).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.verdict, Verdict::Violation);
    assert!(file.reproduced_by(&again));
    assert_eq!(again.trace, r.trace, "same actions, same worlds");
    let mut tampered = file.clone();
    tampered.steps[1].fingerprint = "0".repeat(32);
    let e = model.replay(&tampered, false).expect_err("a wrong fingerprint diverges").to_string();
    assert!(e.starts_with("step 2: ") && e.contains("reached fingerprint"), "{e}");
}

#[test]
fn the_c_two_phase_cores_bug_builds_give_the_rust_cores_counterexamples_step_for_step() {
    use cmc_examples::two_phase::{TwoPhaseSettings, model};
    let so = |bug: &str| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/ccores/build/libtwo_phase-{bug}.so"))
    };
    for (bug, settings) in [
        ("BUG_COMMIT_ON_TIMEOUT", TwoPhaseSettings { bug_commit_on_timeout: 1, ..TwoPhaseSettings::default() }),
        ("BUG_NO_PERSIST_DECISION", TwoPhaseSettings { bug_no_persist_decision: 1, ..TwoPhaseSettings::default() }),
    ] {
        let rust =
            cmc::check(&model(settings).nodes(3).crashes(1), &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        let names = ["atomicity".to_string(), "commit_needs_all_yes".to_string()];
        let c = CModel::load(&so(bug), "cmc_core")
            .map(|m| m.nodes(3).crashes(1))
            .unwrap_or_else(|e| panic!("{e}"))
            .c_properties_from(Kind::Always, &so(bug), &names)
            .unwrap_or_else(|e| panic!("{e}"));
        let c = check(c, &Options::default());
        assert_eq!(c.verdict, Verdict::Violation, "{bug}");
        // The same worlds (the same bytes: the same fingerprints), shown the
        // same way (the C core's show_state), by the same actions.
        assert_eq!(c.trace, rust.trace, "{bug}");
    }
}

#[test]
fn symmetry_reduces_a_c_core_as_it_does_the_rust_core_under_det() {
    // SAFETY: a `struct cmc_core` the build links into this package.
    let m = || linked(unsafe { &ccores::two_phase_core }).nodes(4).crashes(1);
    let options = Options { symmetry: true, det: true, ..Options::default() };
    let r = check(m(), &options);
    // The Rust core's classes (`two_phase::four_nodes_by_symmetry`).
    assert_eq!(counts(&r), (Verdict::Pass, 22_391, 108_426, 21), "{}", r.to_text());
    assert_eq!(r.search, "bfs with symmetry");
    // A C core that declares no interchangeable nodes is refused.
    let e = linked(unsafe { &ccores::two_phase_tla_core }).into_dyn().unwrap_or_else(|e| panic!("{e}"));
    let e = e.check(&options, &mut NoControl).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("c-two-phase-tla"), "{e}");
}
