//! The example C programs of `examples/c` as nodes (the process front end),
//! each declared with `#[cmc::model(program = ...)]`, their invariants Rust
//! closures over the world, equivalent to the C predicates the model files
//! load (`examples/c/*_props.c`). `tests/build.rs` builds the programs
//! (`make -C examples/c`); the paths are relative to `tests/Cargo.toml`.
//!
//! Every planted bug (`#if BUG_NAME` in `examples/c/PROGRAM.c`, built as
//! `PROGRAM-BUG_NAME`) is an expected violation named after it, with its
//! shortest counterexample in `snapshots/` (the planted-bug gate, `tests/tests/planted.rs`, finds the sites
//! and requires the models). The correct `logship` passes exhaustively; the
//! correct `register` and `election` do too (`cmc/tests/process_models.rs`),
//! but take longer (10,550 and 5,039 worlds, `register.toml` and
//! `election.toml`), too long for every `cargo test`.

use cmc::process::{Life, NodeWorld, ProcessWorld, ProgramModel};

/// Stands for no node in the programs' reports.
const NONE: u8 = 0xff;

/// Every node's reported state of exactly `N` bytes; a node that is down
/// (crashed, not restarted yet: no state) as `down` reads it, `None` to
/// leave it out; `None` if a live node reported anything else (which breaks
/// every property, as in C: the checker cannot read it).
fn states<const N: usize>(w: &ProcessWorld, down: impl Fn(&NodeWorld) -> Option<[u8; N]>) -> Option<Vec<[u8; N]>> {
    let mut out = Vec::new();
    for n in &w.nodes {
        match n.life {
            Life::Down => out.extend(down(n)),
            _ => out.push(n.state.as_slice().try_into().ok()?),
        }
    }
    Some(out)
}

fn who(n: u8) -> String {
    if n == NONE { "-".to_string() } else { n.to_string() }
}

/// `election.c`: leader election with timeouts, Raft's in miniature.
mod election {
    use super::*;

    const LEADER: u8 = 2;

    /// The model of `examples/c/election.c`'s build `program`: its two
    /// invariants as `election_props.c` writes them.
    fn model() -> ProgramModel {
        ProgramModel::default()
            .show(show)
            .always("one_leader_per_term", one_leader_per_term)
            .always("one_belief_per_term", one_belief_per_term)
    }

    /// Every pair of nodes: a node's state is {phase, term, voted, role,
    /// leader, votes, asking}; a node that is down, a follower of no one.
    fn pairs(w: &ProcessWorld) -> Option<Vec<([u8; 7], [u8; 7])>> {
        let nodes = states::<7>(w, |_| Some([0, 0, NONE, 0, NONE, 0, 0]))?;
        Some(nodes.iter().enumerate().flat_map(|(i, a)| nodes[i + 1..].iter().map(move |b| (*a, *b))).collect())
    }

    /// No two nodes are leaders of the same term.
    fn one_leader_per_term(w: &ProcessWorld) -> bool {
        pairs(w).is_some_and(|p| p.iter().all(|(a, b)| !(a[3] == LEADER && b[3] == LEADER && a[1] == b[1])))
    }

    /// No two nodes of the same term believe in different leaders.
    fn one_belief_per_term(w: &ProcessWorld) -> bool {
        pairs(w).is_some_and(|p| p.iter().all(|(a, b)| !(a[1] == b[1] && a[4] != NONE && b[4] != NONE && a[4] != b[4])))
    }

    fn show(state: &[u8], durable: Option<&[u8]>) -> String {
        let disk = match durable {
            Some(&[term, voted]) => format!("term {term} voted {}", who(voted)),
            Some(other) => format!("{other:02x?}"),
            None => "-".to_string(),
        };
        let &[phase, term, voted, role, leader, votes, asking] = state else {
            return format!("{state:02x?}, disk {disk}");
        };
        let phase = ["?", "idle", "reading", "asking"].get(phase as usize).unwrap_or(&"?");
        let role = ["follower", "candidate", "leader"].get(role as usize).unwrap_or(&"?");
        format!(
            "{phase:<7} term {term} {role:<9} voted {} leader {} votes {votes} asking {}, disk {disk}",
            who(voted),
            who(leader),
            who(asking)
        )
    }

    /// A node grants every vote request of its term: two candidates of one
    /// term both win, with two timeouts and no crash.
    #[cmc::model(
        program = "../examples/c/build/election-BUG_VOTE_TWICE",
        nodes = 3,
        timeouts = 2,
        timeout_byte,
        expect = violation("one_leader_per_term")
    )]
    fn bug_vote_twice() -> ProgramModel {
        model()
    }

    /// A node's vote is not durable: a voter that crashes after voting
    /// votes again in the same term.
    #[cmc::model(
        program = "../examples/c/build/election-BUG_VOLATILE_VOTE",
        nodes = 3,
        crashes = 1,
        timeouts = 2,
        timeout_byte,
        expect = violation("one_leader_per_term")
    )]
    fn bug_volatile_vote() -> ProgramModel {
        model()
    }
}

/// `register.c`: a replicated register, majority-acknowledged client writes,
/// durable timestamps.
mod register {
    use super::*;

    /// The model of `examples/c/register.c`'s build `program`: clients send
    /// {'W'}; `acked_writes_survive` as `register_props.c` writes it.
    fn model() -> ProgramModel {
        ProgramModel::default().request("W").show(show).always("acked_writes_survive", acked_writes_survive)
    }

    /// Every write acknowledged in the ghost log ({'A', counter, writer}) is
    /// held, its timestamp or a newer one, by a majority of the nodes. A
    /// node's state is {phase, counter, writer, asking, acks}; a node that
    /// is down holds what its durable record {counter, writer} says.
    fn acked_writes_survive(w: &ProcessWorld) -> bool {
        let durable = |n: &NodeWorld| match n.durable.as_deref() {
            Some(&[counter, writer]) => Some([0, counter, writer, 0, 0]),
            _ => None,
        };
        let Some(nodes) = states::<5>(w, durable) else { return false };
        let majority = w.nodes.len() / 2 + 1;
        w.replies.iter().all(|(_, reply)| match reply.as_slice() {
            &[b'A', counter, writer] => nodes.iter().filter(|s| (s[1], s[2]) >= (counter, writer)).count() >= majority,
            _ => true,
        })
    }

    fn show(state: &[u8], durable: Option<&[u8]>) -> String {
        let disk = match durable {
            Some(&[counter, writer]) => format!("({counter}, {writer})"),
            Some(other) => format!("{other:02x?}"),
            None => "-".to_string(),
        };
        let &[phase, counter, writer, asking, acks] = state else { return format!("{state:02x?}, disk {disk}") };
        let phase = ["?", "idle", "reading", "asking"].get(phase as usize).unwrap_or(&"?");
        format!("{phase:<7} holds ({counter}, {writer}) asking {} acks {acks}, disk {disk}", who(asking))
    }

    /// The coordinator acknowledges the client before any replica has the
    /// write: no crash needed. With crash budget left the coordinator is
    /// held at a crash point inside the step that acknowledges (RUN takes
    /// it on), so the shortest counterexample, of the same length, spends
    /// the crash on node 1 first and the step runs whole.
    #[cmc::model(
        program = "../examples/c/build/register-BUG_EARLY_ACK",
        nodes = 3,
        crashes = 1,
        clients = 1,
        expect = violation("acked_writes_survive")
    )]
    fn bug_early_ack() -> ProgramModel {
        model()
    }

    /// A replica acknowledges a write it holds only in memory, then
    /// crashes and recovers the older one.
    #[cmc::model(
        program = "../examples/c/build/register-BUG_UNSYNCED_STORE",
        nodes = 3,
        crashes = 1,
        clients = 1,
        expect = violation("acked_writes_survive")
    )]
    fn bug_unsynced_store() -> ProgramModel {
        model()
    }
}

/// `logship.c`: log shipping from a primary (node 0) to backups over TCP.
mod logship {
    use super::*;

    /// The model of `examples/c/logship.c`'s build `program`:
    /// `backups_are_prefixes` as `logship_props.c` writes it.
    fn model() -> ProgramModel {
        ProgramModel::default().show(show).always("backups_are_prefixes", backups_are_prefixes)
    }

    /// A node's log: its state is {role, phase, subscribed, length, log...}.
    fn log(state: &[u8]) -> Option<&[u8]> {
        match state {
            [_, _, _, length, log @ ..] if log.len() == *length as usize => Some(log),
            _ => None,
        }
    }

    /// Every backup's log is a prefix of the primary's (node 0's): no hole,
    /// no entry the primary does not have at that index.
    /// A node that is down has no log in memory: nothing to compare.
    fn backups_are_prefixes(w: &ProcessWorld) -> bool {
        if w.nodes[0].life == Life::Down {
            return true;
        }
        let up = w.nodes.iter().filter(|n| n.life != Life::Down);
        let Some(logs) = up.map(|n| log(&n.state)).collect::<Option<Vec<_>>>() else { return false };
        let Some((primary, backups)) = logs.split_first() else { return false };
        backups.iter().all(|b| primary.starts_with(b))
    }

    fn show(state: &[u8], _durable: Option<&[u8]>) -> String {
        let (&[role, phase, subscribed, _, ..], Some(log)) = (state, log(state)) else {
            return format!("{state:02x?}");
        };
        let phase = ["?", "idle", "reading"].get(phase as usize).unwrap_or(&"?");
        match role {
            0 => {
                let backups: Vec<u8> = (1..8).filter(|b| subscribed >> b & 1 != 0).collect();
                format!("primary {phase:<7} log {log:?} backups {backups:?}")
            }
            _ => format!("backup  {phase:<7} log {log:?}"),
        }
    }

    /// Whatever is dropped, the next shipment repairs it: the whole space
    /// with one drop and two appends.
    #[cmc::model(program = "../examples/c/build/logship", nodes = 3, drops = 1, timeouts = 2, timeout_byte)]
    fn correct() -> ProgramModel {
        model()
    }

    /// The primary ships only the new entry: a dropped message leaves a
    /// hole in a backup's log.
    #[cmc::model(
        program = "../examples/c/build/logship-BUG_SEND_DELTA",
        nodes = 3,
        drops = 1,
        timeouts = 2,
        timeout_byte,
        expect = violation("backups_are_prefixes")
    )]
    fn bug_send_delta() -> ProgramModel {
        model()
    }
}

/// `evstore.c`: a durable counter served from an epoll event loop over
/// non-blocking sockets, committed by a timerfd to a file made durable
/// with fsync.
mod evstore {
    use super::*;

    /// The directory the nodes see as their data directory (its real
    /// contents are never read nor written), and the one they run in, so
    /// that the program's argument names it without a path that differs
    /// between machines.
    const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/c");
    const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/c/evstore-data");

    /// The model of `examples/c/evstore.c`'s build `program`: clients send
    /// "+1\n".
    fn model() -> ProgramModel {
        ProgramModel::default()
            .args(["evstore-data"])
            .workdir(EXAMPLES)
            .data_dir(DATA)
            .request("+1\n")
            .show(show)
            .always("acked_increments_are_durable", acked_increments_are_durable)
    }

    /// The value in `value` of the data directory as a crash would leave
    /// it (its durable name and contents), 0 if there is none.
    fn durable_value(w: &ProcessWorld) -> u32 {
        let disk = &w.nodes[0].disk;
        let Some(inode) = disk.names.get(b"value".as_slice()) else { return 0 };
        let text = disk.files.get(inode).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
        text.trim().parse().unwrap_or(0)
    }

    /// Every acknowledged increment is on disk: the durable value is at
    /// least the number of "ok" replies.
    fn acked_increments_are_durable(w: &ProcessWorld) -> bool {
        let acks = w.replies.iter().filter(|(n, r)| *n == 0 && r == b"ok\n").count() as u32;
        durable_value(w) >= acks
    }

    fn show(state: &[u8], _durable: Option<&[u8]>) -> String {
        let [value, committed, armed, conns, rest @ ..] = state else { return format!("{state:02x?}") };
        let conns: Vec<String> = rest
            .chunks_exact(6)
            .take(*conns as usize)
            .map(|c| {
                let line = String::from_utf8_lossy(&c[3..3 + (c[2] as usize).min(3)]).into_owned();
                format!("fd {}{} {line:?}", c[0], if c[1] != 0 { " waiting" } else { "" })
            })
            .collect();
        let armed = if *armed != 0 { ", commit armed" } else { "" };
        format!("value {value}, committed {committed}{armed}, [{}]", conns.join("; "))
    }

    /// Two clients, a crash anywhere and two commits: the whole space.
    #[cmc::model(program = "../examples/c/build/evstore", nodes = 1, crashes = 1, clients = 2, timeouts = 2)]
    fn correct() -> ProgramModel {
        model()
    }

    /// The same server on byte streams: however the lines are cut, it
    /// assembles them before applying them (what the first bug gets wrong).
    #[cmc::model(program = "../examples/c/build/evstore", nodes = 1, clients = 2, timeouts = 2)]
    fn correct_on_byte_streams() -> ProgramModel {
        model().stream(true)
    }

    /// One read taken as one line: a byte stream that cuts "+1\n" after
    /// its "+" makes the server acknowledge an increment it did not add.
    #[cmc::model(
        program = "../examples/c/build/evstore-BUG_ONE_READ_FRAMES",
        nodes = 1,
        clients = 1,
        timeouts = 1,
        expect = violation("acked_increments_are_durable")
    )]
    fn bug_one_read_frames() -> ProgramModel {
        model().stream(true)
    }

    /// The value written over the file before the commit: a crash that
    /// keeps the truncation and not the digits loses what was
    /// acknowledged.
    #[cmc::model(
        program = "../examples/c/build/evstore-BUG_TRUNCATE_IN_PLACE",
        nodes = 1,
        crashes = 1,
        clients = 2,
        timeouts = 1,
        expect = violation("acked_increments_are_durable")
    )]
    fn bug_truncate_in_place() -> ProgramModel {
        model()
    }
}

/// `ackfirst.c`: node 0 stores a value node 1 sends, durably (fd 193), and
/// acknowledges it in two writes; the classic durability bug of issue 27
/// (item 3), found only with a crash between two calls of one step.
mod ackfirst {
    use cmc::process::{ProcessWorld, ProgramModel};

    /// Node 1's phase once it has both bytes of the acknowledgement.
    const ACKED: u8 = 2;

    /// A value node 1 saw acknowledged (7, the value it sends) is in node
    /// 0's durable record.
    fn acked_values_are_durable(w: &ProcessWorld) -> bool {
        let acked = w.nodes[1].state.get(1) == Some(&ACKED);
        !acked || w.nodes[0].durable.as_deref().is_some_and(|d| d.contains(&7))
    }

    fn model() -> ProgramModel {
        ProgramModel::default().always("acked_values_are_durable", acked_values_are_durable)
    }

    /// The record, then the acknowledgement: a crash anywhere passes.
    #[cmc::model(program = "../examples/c/build/ackfirst", nodes = 2, crashes = 1)]
    fn correct() -> ProgramModel {
        model()
    }

    /// The acknowledgement before the record: a crash between its write and
    /// the record's (a crash point) loses an acknowledged value.
    #[cmc::model(
        program = "../examples/c/build/ackfirst-BUG_ACK_FIRST",
        nodes = 2,
        crashes = 1,
        expect = violation("acked_values_are_durable")
    )]
    fn bug_ack_first() -> ProgramModel {
        model()
    }
}
