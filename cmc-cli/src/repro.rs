//! Reproduce commands: every failure prints one command that runs it again.

use cmc::{Identity, Options, Search};

/// `cmc check NAME ...` with every setting, the environment and the search,
/// so that the same bytes come out on any machine at this commit.
pub fn check_command(id: &Identity, options: &Options) -> String {
    let mut s = format!("cmc check {}", id.core);
    for (k, v) in &id.settings {
        s.push_str(&format!(" --set {k}={v}"));
    }
    s.push_str(&format!(" --nodes {} --network {}", id.nodes, id.network.name()));
    let b = &id.budgets;
    for (k, v) in [("drops", b.drops), ("dups", b.dups), ("crashes", b.crashes), ("clients", b.clients)] {
        if v != 0 {
            s.push_str(&format!(" --{k} {v}"));
        }
    }
    if let Some(t) = b.timeouts {
        s.push_str(&format!(" --timeouts {t}"));
    }
    match options.search {
        Search::Bfs { depth_max: None } => {}
        Search::Bfs { depth_max: Some(d) } => s.push_str(&format!(" --depth-max {d}")),
        Search::Dfs { depth_max } => s.push_str(&format!(" --search dfs --depth-max {depth_max}")),
        Search::Simulate { walks, walk_length, seed } => {
            s.push_str(&format!(" --search simulate --walks {walks} --walk-length {walk_length} --seed {seed}"))
        }
    }
    if let Some(m) = options.states_max {
        s.push_str(&format!(" --states-max {m}"));
    }
    if options.det {
        s.push_str(" --det");
    }
    if options.deadlock {
        s.push_str(" --deadlock");
    }
    if options.symmetry {
        s.push_str(" --symmetry");
    }
    s
}
