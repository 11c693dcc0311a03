//! Sequence charts (`cmc::chart`) against the traces they draw: one
//! lifeline per node, one arrow into the right node at every step that
//! delivers a message, a cross for every message a drop or a crash lost,
//! the messages left in flight at the end, and the same bytes every time.

use cmc::{Model, Options, Report, Verdict, chart, check};
use cmc_examples::{lock_service, two_phase};

fn violation<C: cmc::Core>(model: &Model<C>) -> Report {
    let r = check(model, &Options::default()).expect("a valid model");
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.summary());
    r
}

/// The `<g class="message ...">` elements of a chart, as (kind, from, to,
/// sent, end).
fn messages(html: &str) -> Vec<(String, String, String, usize, Option<usize>)> {
    html.split("<g class=\"message ")
        .skip(1)
        .map(|g| {
            let attr = |name: &str| {
                let at = g.find(&format!("{name}=\"")).expect(name) + name.len() + 2;
                g[at..at + g[at..].find('"').unwrap()].to_string()
            };
            let kind = g[..g.find('"').unwrap()].to_string();
            (
                kind,
                attr("data-from"),
                attr("data-to"),
                attr("data-sent").parse().unwrap(),
                attr("data-end").parse().ok(),
            )
        })
        .collect()
}

/// Checks the chart of `r` against its trace.
fn check_chart(r: &Report) {
    let html = chart::html("a model", r);
    let nodes = r.trace[0].world.nodes.len();
    assert_eq!(html.matches("<g class=\"lifeline\"").count(), nodes);
    let msgs = messages(&html);
    for (k, step) in r.trace.iter().enumerate() {
        let delivered: Vec<_> = msgs.iter().filter(|m| m.0 == "delivered" && m.4 == Some(k + 1)).collect();
        match step.action.strip_prefix("DELIVER(") {
            Some(rest) => {
                let (from, to) = rest.split_once(',').unwrap().0.split_once("->").unwrap();
                assert_eq!(delivered.len(), 1, "step {}: {}", k + 1, step.action);
                assert_eq!((delivered[0].1.as_str(), delivered[0].2.as_str()), (from, to), "step {}", k + 1);
                assert!(delivered[0].3 <= k + 1, "sent before it is delivered");
            }
            None => assert!(delivered.is_empty(), "step {}: {} delivers nothing", k + 1, step.action),
        }
        for kind in ["DUP", "CRASH", "FIRE", "FLUSH", "CLIENT", "RESET", "WAKE"] {
            let marked = html.contains(&format!("data-step=\"{}\" data-kind=\"{kind}\"", k + 1));
            assert_eq!(marked, step.action.starts_with(&format!("{kind}(")), "step {}: {}", k + 1, step.action);
        }
        let lost = msgs.iter().filter(|m| m.0 == "lost" && m.4 == Some(k + 1)).count();
        if step.action.starts_with("DROP(") {
            assert!(lost >= 1, "step {}: a drop loses a message", k + 1);
        }
    }
    let last = &r.trace.last().unwrap().world;
    assert_eq!(msgs.iter().filter(|m| m.0 == "in-flight").count(), last.messages.len());
    assert_eq!(html, chart::html("a model", r), "the same report, the same bytes");
    // Self-contained: nothing fetched.
    for outside in ["<script", " src=", "href=", "http://", "https://"] {
        let allowed = outside == "http://" && html.matches(outside).count() == 1; // the SVG namespace
        assert!(!html.contains(outside) || allowed, "{outside}");
    }
}

#[test]
fn a_fifo_counterexample_with_a_crash_is_drawn_as_its_trace() {
    let r =
        violation(&two_phase::model(two_phase::TwoPhaseSettings { bug_no_persist_decision: 1, ..Default::default() }));
    check_chart(&r);
    let html = chart::html("two_phase::bug_no_persist_decision", &r);
    assert!(html.contains("data-kind=\"CRASH\""), "the crash is marked");
}

#[test]
fn a_bag_counterexample_with_a_dup_is_drawn_as_its_trace() {
    let r =
        violation(&lock_service::model(lock_service::LockServiceSettings { bug_lost_wakeup: 1, ..Default::default() }));
    check_chart(&r);
}

#[test]
fn a_counterexample_with_a_drop_is_drawn_as_its_trace() {
    // Fails as soon as the one drop is spent: the shortest trace drops.
    let model = Model::<cmc_tests::Echo>::new(cmc_tests::EchoSettings { count: 2, reply: 1 })
        .nodes(2)
        .drops(1)
        .always("nothing-lost", |w| w.world().budgets_left().0 == 1);
    let r = violation(&model);
    assert!(r.trace.iter().any(|s| s.action.starts_with("DROP(")), "the trace drops a message");
    check_chart(&r);
}
