//! A server from a published crate, built by cargo as its users build it
//! and run unmodified as every node (issue 28, item 3): mini-redis 0.4.1
//! (tokio's example server, `#[tokio::main]`: the multi-thread runtime),
//! its `mini-redis-server` started as `mini-redis-server --port PORT`
//! through the `argv` key, its replies checked.
//!
//! Ignored by `cargo test` (the binary comes from crates.io); `.ci/run`
//! installs it first, as a user would:
//!
//! ```text
//! cargo install mini-redis --version 0.4.1 --locked --root target/published
//! cargo test -p cmc-tests --test published -- --ignored
//! ```
//!
//! `CMC_MINI_REDIS` names another build of the binary. Without one, the
//! test fails (it never passes with nothing checked).

#![cfg(target_os = "linux")]

use std::path::PathBuf;

use cmc::process::{NodeState, ProcessExplorer, ProcessWorld, ProgramModel};
use cmc::{NoControl, Options, Report, Verdict, explore};

/// The installed `mini-redis-server`.
fn server() -> PathBuf {
    let path = std::env::var_os("CMC_MINI_REDIS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/published/bin/mini-redis-server"));
    assert!(
        path.exists(),
        "{} is missing: cargo install mini-redis --version 0.4.1 --locked --root target/published",
        path.display()
    );
    path
}

/// Redis's protocol: `SET k v`, then `GET k`, as two clients send them.
const SET: &[u8] = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
const GET: &[u8] = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";

/// What a GET may answer: nothing yet (nil), or the value SET stored.
fn replies_are_redis(w: &ProcessWorld) -> bool {
    w.replies.iter().all(|(_, r)| [&b"+OK\r\n"[..], b"$-1\r\n", b"$1\r\nv\r\n"].contains(&r.as_slice()))
}

fn check(property: fn(&ProcessWorld) -> bool) -> Report {
    let model = ProgramModel::new("mini-redis", cmc::process::Config::new(server(), 1))
        .argv(["--port", "{port}"])
        .requests([SET, GET])
        .node_state(NodeState::Inputs)
        .always("replies", property)
        .eventually("both_answered", |w| w.replies.len() == 2);
    let mut model = model;
    model.config.budgets.clients = 2;
    model.config.preload = Some(cmc::process::find_preload().expect("the preload"));
    explore(ProcessExplorer::new(&model).expect("valid"), &Options::default(), &mut NoControl)
}

/// Two clients, a SET and a GET, in every order the network and the
/// server's two threads (main and one worker) allow: every reply is one
/// Redis gives (`+OK`, nil or the value), and both are answered.
#[test]
#[ignore = "needs mini-redis-server from crates.io: .ci/run installs it (see the module doc)"]
fn a_published_redis_server_answers_as_redis() {
    let r = check(replies_are_redis);
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.to_text());
    assert!(r.distinct_states > 10, "{}", r.to_text());
}

/// Teeth: "a GET sees the SET" does not hold (the GET may come first),
/// and the search finds the order, with the server's own nil.
#[test]
#[ignore = "needs mini-redis-server from crates.io: .ci/run installs it (see the module doc)"]
fn the_order_a_get_may_come_in_is_found() {
    let r = check(|w| w.replies.iter().all(|(_, r)| r.as_slice() != b"$-1\r\n"));
    assert_eq!(r.verdict, Verdict::Violation, "{}", r.to_text());
    assert!(r.to_text().contains("replies: 0: 242d310d0a"), "nil, `$-1`: {}", r.to_text());
}
