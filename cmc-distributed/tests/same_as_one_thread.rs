//! A distributed search gives the one-thread report: counts, verdict,
//! trace, witnesses. Here its workers are threads of one process (timely's
//! in-process channels); `two_processes.rs` runs processes over loopback.

use std::sync::Arc;

use cmc::catalog::{DynModel, Overrides};
use cmc::{NoControl, Options, Report, Search};
use cmc_distributed::{Cluster, MakeControl, check};

fn no_control() -> MakeControl {
    Arc::new(|| Box::new(NoControl))
}

fn catalog(name: &str, settings: &[(&str, u64)], f: impl FnOnce(&mut Overrides)) -> Arc<dyn DynModel> {
    let catalog = cmc_examples::catalog();
    let entry = catalog.iter().find(|e| e.name == name).expect("a catalog core");
    let mut o =
        Overrides { settings: settings.iter().map(|(k, v)| (k.to_string(), *v)).collect(), ..Overrides::default() };
    f(&mut o);
    Arc::from(entry.build(&o).expect("the model builds"))
}

fn disk_paxos(config: &str) -> Arc<dyn DynModel> {
    use cmc_examples::disk_paxos::cfg::{self, Module};
    let path = format!("{}/../calibration/configs/{config}.cfg", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("a calibration config");
    let expected = format!("{}/../calibration/expected.tsv", env!("CARGO_MANIFEST_DIR"));
    let module = std::fs::read_to_string(expected)
        .expect("expected.tsv")
        .lines()
        .find(|l| l.starts_with(&format!("{config}\t")))
        .map(|l| l.split('\t').nth(1).expect("a module").to_string())
        .expect("the config's row");
    let cal = cfg::read(&path, &text, Module::from_arg(&module).expect("a module")).expect("the config reads");
    let names: Vec<&str> = cal.invariants.iter().map(String::as_str).collect();
    Arc::new(cmc_examples::disk_paxos::model_with(cal.settings, &names).expect("the model builds"))
}

/// The report without its time.
fn json(mut r: Report) -> String {
    r.elapsed_s = 0.0;
    r.to_json()
}

fn one_thread(model: &dyn DynModel, options: &Options) -> Report {
    model.check(&Options { threads: 1, ..*options }, &mut NoControl).expect("the one-thread search runs")
}

fn same(model: Arc<dyn DynModel>, options: Options, workers: &[usize]) -> Report {
    let expected = one_thread(&*model, &options);
    for &w in workers {
        let got = check(model.clone(), &options, &Cluster::local(w), no_control()).expect("the search runs");
        assert_eq!(json(got), json(expected.clone()), "{w} workers: {}", model.identity().core);
    }
    expected
}

#[test]
fn two_phase_tla_n7_counts_as_one_thread() {
    let r = same(catalog("two-phase-tla", &[("rms", 7)], |_| {}), Options::default(), &[1, 2, 3]);
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (296_448, 2_744_706, 23), "TLC's counts");
}

#[test]
fn disk_paxos_c13_counts_as_one_thread() {
    let r = same(disk_paxos("c13"), Options::default(), &[2, 3]);
    assert_eq!((r.distinct_states, r.generated_states, r.depth), (448_280, 4_537_461, 48), "TLC's counts");
}

#[test]
fn every_disk_paxos_violation_has_one_threads_trace() {
    for c in ["c14", "c15", "c16", "c17", "c18", "c19", "c20", "c21", "c22"] {
        let r = same(disk_paxos(c), Options::default(), &[2, 3]);
        assert_eq!(r.verdict, cmc::Verdict::Violation, "{c}");
    }
}

#[test]
fn message_cores_with_crashes_drops_and_bugs_report_as_one_thread() {
    let cases: Vec<(Arc<dyn DynModel>, Options)> = vec![
        (catalog("two-phase", &[], |o| o.budgets = vec![("crashes".into(), 1)]), Options::default()),
        (
            catalog("two-phase", &[("bug_commit_on_timeout", 1)], |o| o.budgets = vec![("crashes".into(), 1)]),
            Options::default(),
        ),
        (catalog("lock-service", &[("bug_lost_wakeup", 1)], |_| {}), Options::default()),
        (catalog("lock-service", &[], |_| {}), Options::default()),
        (catalog("primary-backup", &[], |_| {}), Options { deadlock: true, ..Options::default() }),
    ];
    for (model, options) in cases {
        same(model, options, &[2, 3]);
    }
}

#[test]
fn bounds_and_caps_stop_where_one_thread_stops() {
    let model = catalog("two-phase-tla", &[("rms", 4)], |_| {});
    for options in [
        Options { states_max: Some(1), ..Options::default() },
        Options { states_max: Some(2), ..Options::default() },
        Options { states_max: Some(1000), ..Options::default() },
        Options { search: Search::Bfs { depth_max: Some(1) }, ..Options::default() },
        Options { search: Search::Bfs { depth_max: Some(7) }, ..Options::default() },
        Options { search: Search::Bfs { depth_max: Some(40) }, ..Options::default() },
        Options { deadlock: true, ..Options::default() },
    ] {
        same(model.clone(), options, &[1, 2, 3]);
    }
}

#[test]
fn what_it_does_not_do_is_an_error() {
    let model = catalog("two-phase-tla", &[("rms", 3)], |_| {});
    for options in [
        Options { symmetry: true, ..Options::default() },
        Options { search: Search::Dfs { depth_max: 5 }, ..Options::default() },
    ] {
        let e = check(model.clone(), &options, &Cluster::local(2), no_control()).unwrap_err();
        assert!(e.to_string().contains("distributed search"), "{e}");
    }
    let e = check(model, &Options::default(), &Cluster { process: 2, ..Cluster::local(1) }, no_control()).unwrap_err();
    assert!(e.to_string().contains("--process 2"), "{e}");
}

fn two_phase_tla(rms: u8) -> cmc::Model<cmc_examples::two_phase_tla::TwoPhaseTla> {
    let settings = cmc_examples::two_phase_tla::TwoPhaseTlaSettings { rms };
    cmc_examples::two_phase_tla::model(settings)
}

#[test]
fn a_property_whose_code_fails_where_a_sometimes_first_holds_is_one_threads_error() {
    use cmc_examples::two_phase_tla::tm;
    let model = two_phase_tla(3).sometimes("tm-committed", |w| w.state(0).tm_state == tm::COMMITTED).always(
        "fails-once-committed",
        |w| {
            assert!(w.state(0).tm_state != tm::COMMITTED, "a property's own bug");
            true
        },
    );
    // One thread records no witness of the world whose property code
    // failed: the error comes first.
    let r = same(Arc::new(model), Options::default(), &[1, 2, 3]);
    assert_eq!(r.verdict, cmc::Verdict::Error);
    assert!(r.witnesses.is_empty(), "{:?}", r.witnesses);
    // The same at an initial world.
    let model = two_phase_tla(3).sometimes("always", |_| true).always("fails", |_| panic!("a property's own bug"));
    let r = same(Arc::new(model), Options::default(), &[1, 2]);
    assert_eq!((r.verdict, r.witnesses.len(), r.depth), (cmc::Verdict::Error, 0, 1));
}

#[test]
fn a_model_that_cannot_be_checked_is_its_own_error_not_a_lost_peer() {
    let model = two_phase_tla(3).always("deadlock", |_| true);
    let options = Options { deadlock: true, ..Options::default() };
    let e = check(Arc::new(model), &options, &Cluster::local(2), no_control()).unwrap_err();
    assert!(matches!(e, cmc_distributed::Error::Model(_)), "{e:?}");
}
