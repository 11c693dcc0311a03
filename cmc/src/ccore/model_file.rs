//! Model files of C cores: TOML that names a core's shared object, its
//! settings, the environment and the properties (C predicates over
//! `struct cmc_world`). A file with a `core` key is one of these; without
//! it, a program's ([`crate::process::model_file`]).
//!
//! ```toml
//! core = "build/libtwo_phase.so"   # relative to this file
//! core_symbol = "cmc_core"         # the default
//! nodes = 3
//! network = "fifo"                 # or "bag"
//! crashes = 1                      # drops, dups, clients, timeouts alike
//! properties = "build/props.so"    # default: the core's own library
//! invariants = ["atomicity"]
//! sometimes = ["commit_reachable"]
//! eventually = ["all_decided"]
//! search = "bfs"                   # bfs, dfs or simulate, with depth_max,
//! deadlock = false                 # walks, walk_length, seed, states_max,
//! det = false                      # threads
//!
//! [settings]                       # last: TOML puts later keys in it
//! no_voter = 0
//! ```
//!
//! [`parse`] checks the text alone and touches no file; [`read`] then loads
//! the core and the properties.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::CModel;
use crate::catalog::DynModel;
use crate::core::limits;
use crate::model::Budgets;
use crate::network::Network;
use crate::process::model_file::{ModelFileError, SearchKeys};
use crate::property::Kind;
use crate::search::Options;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    core: String,
    core_symbol: Option<String>,
    #[serde(default = "one")]
    nodes: i64,
    network: Option<String>,
    #[serde(default)]
    drops: i64,
    #[serde(default)]
    dups: i64,
    #[serde(default)]
    crashes: i64,
    #[serde(default)]
    clients: i64,
    timeouts: Option<i64>,
    properties: Option<String>,
    #[serde(default)]
    invariants: Vec<String>,
    #[serde(default)]
    sometimes: Vec<String>,
    #[serde(default)]
    eventually: Vec<String>,
    search: Option<String>,
    depth_max: Option<u32>,
    walks: Option<u64>,
    walk_length: Option<u32>,
    seed: Option<u64>,
    states_max: Option<u64>,
    #[serde(default)]
    det: bool,
    #[serde(default)]
    deadlock: bool,
    #[serde(default)]
    threads: usize,
    #[serde(default)]
    settings: BTreeMap<String, i64>,
}

fn one() -> i64 {
    1
}

/// A C core's model file, checked as far as it can be without the file
/// system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The model's name: the file's stem.
    pub name: String,
    /// `core`, joined to the file's folder.
    pub core: PathBuf,
    /// `core_symbol`: `cmc_core` unless set.
    pub symbol: String,
    /// `nodes`.
    pub nodes: u8,
    /// `network`.
    pub network: Network,
    /// The budgets.
    pub budgets: Budgets,
    /// `[settings]`, by key, in key order.
    pub settings: Vec<(String, u64)>,
    /// `properties` (joined to the file's folder), or the core's library.
    pub properties: PathBuf,
    /// The property names of each kind, in the file's order: invariants,
    /// then `sometimes`, then `eventually`.
    pub predicates: Vec<(Kind, String)>,
    /// The search, `states_max`, `det`, `deadlock` and `threads`.
    pub options: Options,
}

/// Whether the model file text names a C core (has a `core` key).
pub fn names_core(text: &str) -> bool {
    text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("core"))
}

/// Checks the text of the C core model file at `path` without touching the
/// file system.
pub fn parse(text: &str, path: &Path) -> Result<Parsed, ModelFileError> {
    let raw: Raw = toml::from_str(text)
        .map_err(|e| ModelFileError::Parse { path: path.to_path_buf(), message: e.to_string().trim().to_string() })?;
    let key = |key: &'static str, message: String| ModelFileError::Key { path: path.to_path_buf(), key, message };
    let dir = path.parent().unwrap_or(Path::new("."));
    let nodes =
        u8::try_from(raw.nodes).ok().filter(|&n| n >= 1 && n as usize <= limits::NODES_MAX).ok_or_else(|| {
            key("nodes", format!("{} is not 1 to {m} (limit nodes_max = {m})", raw.nodes, m = limits::NODES_MAX))
        })?;
    let network = match raw.network.as_deref().unwrap_or("fifo") {
        "fifo" => Network::Fifo,
        "bag" => Network::Bag,
        other => return Err(key("network", format!("`{other}` (expected fifo or bag)"))),
    };
    let budget = |k: &'static str, v: i64| {
        u8::try_from(v)
            .map_err(|_| key(k, format!("{v} is not 0 to {m} (limit budget_max = {m})", m = limits::BUDGET_MAX)))
    };
    let budgets = Budgets {
        drops: budget("drops", raw.drops)?,
        dups: budget("dups", raw.dups)?,
        crashes: budget("crashes", raw.crashes)?,
        clients: budget("clients", raw.clients)?,
        timeouts: raw.timeouts.map(|t| budget("timeouts", t)).transpose()?,
    };
    let mut settings = Vec::new();
    for (k, v) in raw.settings {
        let v = u64::try_from(v).map_err(|_| key("settings", format!("`{k}` = {v} is negative")))?;
        settings.push((k, v));
    }
    let keys = SearchKeys {
        search: raw.search.as_deref(),
        depth_max: raw.depth_max,
        walks: raw.walks,
        walk_length: raw.walk_length,
        seed: raw.seed,
    };
    let search = keys.search(1000, 100).map_err(|(k, m)| key(k, m))?;
    let options = Options {
        search,
        states_max: raw.states_max,
        det: raw.det,
        deadlock: raw.deadlock,
        threads: raw.threads,
        ..Options::default()
    };
    let predicates: Vec<(Kind, String)> =
        [(Kind::Always, raw.invariants), (Kind::Sometimes, raw.sometimes), (Kind::Eventually, raw.eventually)]
            .into_iter()
            .flat_map(|(kind, names)| names.into_iter().map(move |n| (kind, n)))
            .collect();
    if raw.properties.is_some() && predicates.is_empty() {
        return Err(key("properties", "names a shared object but no invariant, sometimes or eventually".into()));
    }
    let core = dir.join(&raw.core);
    Ok(Parsed {
        name: path.file_stem().map_or("model".to_string(), |s| s.to_string_lossy().into_owned()),
        properties: raw.properties.map_or_else(|| core.clone(), |p| dir.join(p)),
        core,
        symbol: raw.core_symbol.unwrap_or_else(|| "cmc_core".to_string()),
        nodes,
        network,
        budgets,
        settings,
        predicates,
        options,
    })
}

/// A C core's model file, read: the model and how to search it.
pub struct CoreFile {
    /// The model's name: the file's stem.
    pub name: String,
    /// The model, checked.
    pub model: Box<dyn DynModel>,
    /// The search and its options.
    pub options: Options,
}

/// Reads the C core model file at `path`, loads the core and its
/// properties, and checks the model.
pub fn read(path: &Path) -> Result<CoreFile, ModelFileError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ModelFileError::Read { path: path.to_path_buf(), message: e.to_string() })?;
    let p = parse(&text, path)?;
    let key = |key: &'static str, message: String| ModelFileError::Key { path: path.to_path_buf(), key, message };
    let mut model = CModel::load(&p.core, &p.symbol).map_err(|e| key("core", e.to_string()))?;
    for (k, v) in &p.settings {
        model.set(k, *v).map_err(|e| key("settings", e.to_string()))?;
    }
    let mut model = model.nodes(p.nodes).network(p.network).budgets(p.budgets).model_file(path);
    for kind in [Kind::Always, Kind::Sometimes, Kind::Eventually] {
        let names: Vec<String> = p.predicates.iter().filter(|(k, _)| *k == kind).map(|(_, n)| n.clone()).collect();
        if !names.is_empty() {
            let k = match kind {
                Kind::Always => "invariants",
                Kind::Sometimes => "sometimes",
                Kind::Eventually => "eventually",
            };
            model = model.c_properties_from(kind, &p.properties, &names).map_err(|m| key(k, m))?;
        }
    }
    let model = model.into_dyn().map_err(|e| key("core", e.to_string()))?;
    Ok(CoreFile { name: p.name, model, options: p.options })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{names_core, parse};
    use crate::process::model_file::ModelFileError;
    use crate::property::Kind;

    #[test]
    fn parse_reads_every_key_and_joins_paths_to_the_files_folder() {
        let text = "core = \"build/lib.so\"\nnodes = 3\ncrashes = 1\ntimeouts = 2\nnetwork = \"bag\"\n\
                    invariants = [\"a\"]\neventually = [\"b\"]\n[settings]\nrms = 7\n";
        assert!(names_core(text));
        let p = parse(text, Path::new("dir/m.toml")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.name.as_str(), p.nodes, p.budgets.crashes, p.budgets.timeouts), ("m", 3, 1, Some(2)));
        assert_eq!(p.core, PathBuf::from("dir/build/lib.so"));
        assert_eq!(p.properties, p.core);
        assert_eq!(p.symbol, "cmc_core");
        assert_eq!(p.settings, vec![("rms".to_string(), 7)]);
        assert_eq!(p.predicates, vec![(Kind::Always, "a".to_string()), (Kind::Eventually, "b".to_string())]);
    }

    #[test]
    fn parse_errors_name_the_key_and_the_file() {
        for (text, expected) in [
            ("core = \"c\"\nnodes = 9\n", "nodes"),
            ("core = \"c\"\nnodes = 0\n", "nodes"),
            ("core = \"c\"\ndrops = 256\n", "drops"),
            ("core = \"c\"\nnetwork = \"tcp\"\n", "network"),
            ("core = \"c\"\nsearch = \"dfs\"\n", "depth_max"),
            ("core = \"c\"\nproperties = \"p.so\"\n", "properties"),
            ("core = \"c\"\n[settings]\nrms = -1\n", "settings"),
        ] {
            let err = parse(text, Path::new("m.toml")).err().unwrap_or_else(|| panic!("{text}: accepted"));
            assert!(matches!(&err, ModelFileError::Key { key, .. } if *key == expected), "{text}: {err}");
        }
        let err = parse("core = \"c\"\nprogram = \"p\"\n", Path::new("m.toml")).expect_err("rejected");
        assert!(matches!(err, ModelFileError::Parse { .. }), "{err}");
        assert!(!names_core("program = \"p\"\n"));
    }
}
