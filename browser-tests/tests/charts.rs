//! Sequence charts (`cmc::chart`) as a browser draws them: the lifelines
//! and arrows of a counterexample's chart, read from the rendered page,
//! against the trace the chart was made from.

use cmc::{Options, Report, Verdict, chart, check};
use cmc_browser_tests::{eval, launch, open, screenshot};
use cmc_examples::two_phase;

/// A counterexample with deliveries, flushes and a crash.
fn report() -> Report {
    let settings = two_phase::TwoPhaseSettings { bug_no_persist_decision: 1, ..Default::default() };
    let r = check(&two_phase::model(settings), &Options::default()).expect("a valid model");
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.summary());
    r
}

#[test]
fn a_chart_in_a_browser_has_the_trace_s_lifelines_and_arrows() -> anyhow::Result<()> {
    let r = report();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("charts");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("two_phase-bug_no_persist_decision.cex.html");
    std::fs::write(&file, chart::html("two_phase::bug_no_persist_decision", &r))?;

    let h = launch(1400, 1000)?;
    let tab = open(&h, &file)?;
    // One lifeline per node, each a vertical line, left to right by node.
    let lanes = eval(
        &tab,
        "JSON.stringify([...document.querySelectorAll('svg g.lifeline')].map(g => {
            const r = g.querySelector('line').getBoundingClientRect();
            return [g.dataset.node, Math.round(r.left + r.width / 2), Math.round(r.height)];
        }))",
    )?;
    let lanes: Vec<(String, i64, i64)> = serde_json::from_str(lanes.as_str().unwrap())?;
    let nodes = r.trace[0].world.nodes.len();
    assert_eq!(lanes.len(), nodes, "{lanes:?}");
    for (n, (node, _, height)) in lanes.iter().enumerate() {
        assert_eq!(node, &n.to_string());
        assert!(*height > 100, "lifeline {n} is drawn down the page: {lanes:?}");
    }
    assert!(lanes.windows(2).all(|w| w[0].1 < w[1].1), "left to right: {lanes:?}");

    // Every delivered message, as drawn: its arrow ends on its receiver's
    // lifeline, at the row of the step that delivered it.
    let arrows = eval(
        &tab,
        "JSON.stringify([...document.querySelectorAll('svg g.message.delivered')].map(g => {
            const line = g.querySelector('line');
            const box = line.getBoundingClientRect();
            const down = +line.getAttribute('y2') >= +line.getAttribute('y1');
            const rightward = +line.getAttribute('x2') >= +line.getAttribute('x1');
            return [g.dataset.from, g.dataset.to, +g.dataset.end, Math.round(rightward ? box.right : box.left), down];
        }))",
    )?;
    let arrows: Vec<(String, String, usize, i64, bool)> = serde_json::from_str(arrows.as_str().unwrap())?;
    let deliveries: Vec<(String, String, usize)> = r
        .trace
        .iter()
        .enumerate()
        .filter_map(|(k, s)| {
            let rest = s.action.strip_prefix("DELIVER(")?;
            let (from, to) = rest.split_once(',')?.0.split_once("->")?;
            Some((from.to_string(), to.to_string(), k + 1))
        })
        .collect();
    let drawn: Vec<(String, String, usize)> = arrows.iter().map(|a| (a.0.clone(), a.1.clone(), a.2)).collect();
    let mut sorted = drawn.clone();
    sorted.sort_by_key(|a| a.2);
    assert_eq!(sorted, deliveries, "one arrow per DELIVER, from and to the right nodes");
    for (from, to, step, end_x, down) in &arrows {
        let target = lanes.iter().find(|l| &l.0 == to).expect("a lifeline");
        assert!((end_x - target.1).abs() <= 2, "the arrow {from}->{to} of step {step} ends on node {to}'s lifeline");
        assert!(*down, "the arrow of step {step} goes down the page: sent before it is delivered");
    }

    // The crash is marked on the crashed node's lifeline.
    let crashes = eval(&tab, "document.querySelectorAll('svg g.event[data-kind=\"CRASH\"]').length")?;
    let crash_steps = r.trace.iter().filter(|s| s.action.starts_with("CRASH(")).count();
    assert_eq!(crashes.as_u64(), Some(crash_steps as u64));

    // The screenshot, for people: beside the page.
    screenshot(&tab, &dir.join("two_phase-bug_no_persist_decision.png"))?;
    Ok(())
}
