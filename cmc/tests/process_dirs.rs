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
    // The first life's listing of its empty directory is held in START
    // (`.` and `..` fall two ways); its step goes on with crash points.
    let trace: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(trace.last(), Some(&"ORDER(0, 0)"), "{}", r.to_text());
    assert!(trace.contains(&"RESTART(0)"), "{}", r.to_text());
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
    // The first life lists its empty directory: `.` and `..` fall two
    // ways: in START a choice of the start's, as its crashes are (START
    // takes way 0, `..` before `.`, and lists the other).
    let w = replay_exact(&c, &[]);
    assert!(enabled(&w).contains(&"ORDER(0, start 1, 1)".to_string()), "{:?}", enabled(&w));
    assert_eq!(w.nodes[0].disk.order, [b"..".to_vec(), b".".to_vec()]);
    // The path to the next life's listing, crash points run on.
    let (_, done) = process_support::run_on(&c, &["ORDER(0, start 1, 1)", "CRASH(0)", "RESTART(0)", "ORDER(0, 0)"]);
    let last = done.iter().rposition(|a| matches!(a, cmc::process::ProcessAction::Order { .. })).unwrap();
    let tokens: Vec<String> = done[..last].iter().map(ToString::to_string).collect();
    let w = replay_exact(&c, &tokens.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(enabled(&w), (0..60).map(|i| format!("ORDER(0, {i})")).collect::<Vec<_>>(), "3 names among 2");
    let shown = process_support::replay(&c, &["ORDER(0, start 1, 1)", "CRASH(0)", "RESTART(0)", "ORDER(0, 0)"]);
    let order: Vec<&[u8]> = shown.nodes[0].disk.order.iter().map(Vec::as_slice).collect();
    assert_eq!(order, [&b"seg3"[..], b"seg2", b"seg1", b".", b".."]);
    assert_eq!(shown.nodes[0].state, [2, 3]);
    let again = process_support::replay(
        &c,
        &["ORDER(0, start 1, 1)", "CRASH(0)", "RESTART(0)", "ORDER(0, 0)", "CRASH(0)", "RESTART(0)"],
    );
    assert_eq!(again.nodes[0].disk.order, shown.nodes[0].disk.order);
    assert_eq!(again.nodes[0].state, [2, 3]);
    assert!(!enabled(&again).iter().any(|a| a.starts_with("ORDER")), "{:?}", enabled(&again));
}

/// `examples/c/listing.c` in `mode`, one node, no crash.
fn listing(mode: &str, order: DirOrder) -> Config {
    let mut c = segments("max", 0, order);
    c.program = process_support::program("listing");
    let dir = c.args[0].clone();
    c.args = vec![dir, mode.to_string()];
    c
}

/// Found by the review of the directory order, each a pass before:
/// in a directory of one block ext4 hashes `.` and `..` like any name, so
/// skipping the first two entries may skip a name ("skipdots": 9 of 10
/// fresh ext4 file systems abort); and it reads such a directory whole at
/// a listing's first `getdents64`, so a name made during the listing is
/// not listed ("add": 10 of 10 abort; a position was an index, and the
/// listing gave it), nor is a name given twice ("again": 0 of 10 abort;
/// with an index, a name made before the position gave one again).
#[test]
fn a_listing_is_as_ext4_gives_it() {
    let _serial = process_support::serial();
    let r = check(listing("skipdots", DirOrder::Hash));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    let r = check(listing("skipdots", DirOrder::Sorted));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    for order in [DirOrder::Hash, DirOrder::Sorted] {
        let r = check(listing("add", order));
        assert_eq!(r.verdict, Verdict::Violation, "{order:?}: {}", r.to_text());
        let r = check(listing("again", order));
        assert_eq!(r.verdict, Verdict::Pass, "{order:?}: {}", r.to_text());
    }
}

/// A listing's position (`telldir`, `seekdir`) is that of the entry it goes
/// on from, as ext4's is that entry's hash: a name made since falls before
/// or after it, and going back gives that entry first ("seek": 0 of 10
/// native runs abort). It was a place in the order, which a name placed
/// before it moved: going back gave the entry before (the review's
/// `s9seek`, a violation no native run gives, and its converse a pass
/// where half of them abort).
#[test]
fn a_position_in_a_listing_stays_with_its_entry() {
    let _serial = process_support::serial();
    for order in [DirOrder::Hash, DirOrder::Sorted] {
        let r = check(listing("seek", order));
        assert_eq!(r.verdict, Verdict::Pass, "{order:?}: {}", r.to_text());
    }
}

/// A directory whose entries need more than one block of ext4 is indexed,
/// and lists `.` and `..` first: past one 4 KiB block a listing is an
/// error naming the node and the call, under the hash order (the review's
/// `s9grow`: on a file system of 1 KiB blocks, 9 of 10 native runs abort
/// where `.`, `..` and a name changed their order, and it passed).
#[test]
fn a_listing_past_one_block_is_an_error() {
    let _serial = process_support::serial();
    let r = check(listing("wide", DirOrder::Hash));
    assert_eq!(r.verdict, Verdict::Error, "{}", r.to_text());
    let reason = r.reason.unwrap_or_default();
    assert!(
        reason.contains("node 0") && reason.contains("getdents64") && reason.contains("past one block"),
        "{reason}"
    );
    let r = check(listing("wide", DirOrder::Sorted));
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
}

/// The order of a listing in a node's start is a choice of the start's,
/// as its crashes are: START takes way 0 and lists the others as
/// `ORDER(n, start j, i)`, and the node's start goes on to its first wait
/// before the next node starts. Before, the listing was held, which ended
/// node 0's start there: node 1 started before node 0 listened, and
/// always found it not listening (the review's `startlisten`: natively,
/// started one at a time, 10 of 10 runs find it listening).
#[test]
fn a_listing_in_a_start_is_a_choice_of_the_starts() {
    let _serial = process_support::serial();
    let mut c = listing("listenfirst", DirOrder::Hash);
    c.nodes = 2;
    let r = check(c.clone());
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    let trace: Vec<&str> = r.trace.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(trace, ["START"], "{}", r.to_text());
    let w = replay_exact(&c, &[]);
    let orders: Vec<String> = enabled(&w).into_iter().filter(|a| a.starts_with("ORDER")).collect();
    // `.`, `..` and x: 1 x 2 x 3 ways, way 0 taken.
    assert_eq!(orders, (1..6).map(|i| format!("ORDER(0, start 1, {i})")).collect::<Vec<_>>());
}
