//! The order of a listing of a data directory (`dir_order`): ext4 lists
//! names by a hash under the file system's seed, which is unknown, so a
//! listing that shows new names branches over the ways they may fall, and
//! an order once shown stays. `examples/c/segments.c` keeps a log as
//! numbered segment files and recovers by listing them.

mod process_support;

use cmc::process::{Config, DirOrder, NO_NODE_KILLED, ProcessExplorer, ProgramModel};
use cmc::{NoControl, Options, Report, Verdict, explore};
use process_support::{config, enabled, replay_exact};

/// `segments 0 DIR mode`, one node, `crashes` crashes, a fresh data
/// directory.
fn segments(mode: &str, crashes: u8, order: DirOrder) -> Config {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("segments-{mode}-{crashes}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    let mut c = config("segments", 1);
    c.args = vec![dir.to_str().unwrap().to_string(), mode.to_string()];
    c.data_dir = Some(dir);
    c.timeout_byte = false;
    c.budgets.crashes = crashes;
    c.dir_order = order;
    c
}

fn check(c: Config) -> Report {
    let model = ProgramModel::new("segments", c);
    explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl)
}

/// Recovery that takes the last name listed for the newest segment is a
/// violation: the listing may give seg3 before seg1 and seg2. It passed
/// when a listing gave its names sorted (the review's `segs`: natively,
/// on ext4, 10 of 10 runs abort), as it still does under
/// `dir_order = "sorted"`; the greatest number listed passes either way.
#[test]
fn a_listing_gives_its_names_in_any_order_the_hash_may_give() {
    let _serial = process_support::serial();
    let r = check(segments("last", 1, DirOrder::Hash));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert_eq!(r.property.as_deref(), Some(NO_NODE_KILLED), "{}", r.to_text());
    let trace: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(trace, ["START", "CRASH(0)", "RESTART(0)", "ORDER(0, 0)"], "{}", r.to_text());
    let r = check(segments("last", 1, DirOrder::Sorted));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    let r = check(segments("max", 1, DirOrder::Hash));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
}

/// Three names shown first fall six ways (way 0 puts each before those
/// placed before it); once shown, their order is the file system's: a
/// later life lists them so with no choice, and a crash keeps it.
#[test]
fn an_order_once_shown_stays() {
    let _serial = process_support::serial();
    let c = segments("max", 2, DirOrder::Hash);
    let w = replay_exact(&c, &["CRASH(0)", "RESTART(0)"]);
    assert_eq!(enabled(&w), (0..6).map(|i| format!("ORDER(0, {i})")).collect::<Vec<_>>());
    let shown = replay_exact(&c, &["CRASH(0)", "RESTART(0)", "ORDER(0, 0)"]);
    assert_eq!(shown.nodes[0].disk.order, [b"seg3".to_vec(), b"seg2".to_vec(), b"seg1".to_vec()]);
    assert_eq!(shown.nodes[0].state, [2, 3]);
    let again = replay_exact(&c, &["CRASH(0)", "RESTART(0)", "ORDER(0, 0)", "CRASH(0)", "RESTART(0)"]);
    assert_eq!(again.nodes[0].disk.order, shown.nodes[0].disk.order);
    assert_eq!(again.nodes[0].state, [2, 3]);
    assert!(!enabled(&again).iter().any(|a| a.starts_with("ORDER")), "{:?}", enabled(&again));
}
