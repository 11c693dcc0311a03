//! Overrides from the environment: libtest-mimic accepts no custom flags,
//! so budgets, caps and the seed of every model a run selects can be
//! changed with `CMC_*` variables (`CMC_SEED`, `CMC_STATES_MAX`, ...). Any
//! other `CMC_*` variable is an error, so that a typo is not silently
//! ignored.

use std::path::PathBuf;

use cmc::Search;
use cmc::harness::Attributes;

/// Overrides read from `CMC_*` environment variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    /// (variable, value) as given, for the report and the reproduce line.
    pub given: Vec<(String, String)>,
    /// `CMC_SEED`: a simulation's seed (a model that simulates only).
    pub seed: Option<u64>,
    /// `CMC_WALKS`: a simulation's walks (a model that simulates only).
    pub walks: Option<u64>,
    /// `CMC_WALK_LENGTH`: a simulation's longest walk, in actions (a model
    /// that simulates only).
    pub walk_length: Option<u32>,
    /// `CMC_DEPTH_MAX`: the depth bound of BFS or DFS, the initial state
    /// being depth 1.
    pub depth_max: Option<u32>,
    /// `CMC_STATES_MAX`: stop (incomplete) past this many distinct states.
    pub states_max: Option<u64>,
    /// `CMC_TIME_MAX_S`: stop (incomplete) after this many seconds.
    pub time_max_s: Option<u64>,
    /// `CMC_NODES`: the number of nodes, 1 to 8.
    pub nodes: Option<u8>,
    /// `CMC_DROPS`: the drop budget.
    pub drops: Option<u8>,
    /// `CMC_DUPS`: the dup budget (cores with the bag network only).
    pub dups: Option<u8>,
    /// `CMC_CRASHES`: the crash budget.
    pub crashes: Option<u8>,
    /// `CMC_CLIENTS`: client requests (or connections) per node.
    pub clients: Option<u8>,
    /// `CMC_TIMEOUTS`: the timeout budget.
    pub timeouts: Option<u8>,
    /// `CMC_DET`: run every step twice and compare.
    pub det: Option<bool>,
    /// `CMC_DEADLOCK`: a world with no enabled action is a violation of
    /// `deadlock`. Cores only: a program model ignores it, as it ignores
    /// `CMC_DUPS`.
    pub deadlock: Option<bool>,
    /// `CMC_MEMORY_MAX`: stop (incomplete) once the test process holds
    /// this much memory (`4G`, `512M`, bytes, or `none`); by default nine
    /// tenths of what is available when the model starts.
    pub memory_max: Option<Option<u64>>,
    /// `CMC_THREADS`: the threads breadth-first search may use (0: one per
    /// core). Not an override: the result is the same whatever the number,
    /// so the snapshot is still compared.
    pub threads: Option<usize>,
    /// `CMC_PRELOAD`: the `cmc-preload` library for program models, instead
    /// of the one embedded in `cmc`. Not an override: the snapshot is still
    /// compared.
    pub preload: Option<PathBuf>,
    /// `CMC_REPLAY`: a counterexample file to replay through the one model
    /// run, instead of searching it. Not an override either: it is checked
    /// against the model's identity, overrides included.
    pub replay: Option<PathBuf>,
    /// `CMC_EXPLORE=PORT`: serves the one model run in the browser on
    /// 127.0.0.1:PORT (`cmc explore`), instead of searching it, until the
    /// test is stopped. Not an override either.
    pub explore: Option<u16>,
}

/// The variables [`Overrides::from_env`] reads; any other `CMC_*` variable
/// is an error, so that a typo is not silently ignored.
pub const VARIABLES: &[&str] = &[
    "CMC_SEED",
    "CMC_WALKS",
    "CMC_WALK_LENGTH",
    "CMC_DEPTH_MAX",
    "CMC_STATES_MAX",
    "CMC_TIME_MAX_S",
    "CMC_NODES",
    "CMC_DROPS",
    "CMC_DUPS",
    "CMC_CRASHES",
    "CMC_CLIENTS",
    "CMC_TIMEOUTS",
    "CMC_DET",
    "CMC_DEADLOCK",
    "CMC_THREADS",
    "CMC_MEMORY_MAX",
    "CMC_PRELOAD",
    "CMC_REPLAY",
    "CMC_EXPLORE",
];

/// The most threads `CMC_THREADS` may ask for.
const THREADS_MAX: usize = 1024;

impl Overrides {
    /// Reads the overrides from `(name, value)` pairs (the environment).
    pub fn from_env(vars: impl Iterator<Item = (String, String)>) -> Result<Overrides, String> {
        let mut o = Overrides::default();
        let mut vars: Vec<(String, String)> = vars.filter(|(k, _)| k.starts_with("CMC_")).collect();
        vars.sort();
        for (name, value) in vars {
            fn num<T: std::str::FromStr>(name: &str, value: &str, max: &str) -> Result<T, String> {
                value.trim().parse().map_err(|_| format!("{name}={value}: expected an integer, at most {max}"))
            }
            fn boolean(name: &str, value: &str) -> Result<bool, String> {
                match value {
                    "1" | "true" => Ok(true),
                    "0" | "false" => Ok(false),
                    _ => Err(format!("{name}={value}: expected 1 or 0")),
                }
            }
            match name.as_str() {
                "CMC_SEED" => o.seed = Some(num(&name, &value, "2^64-1")?),
                "CMC_WALKS" => o.walks = Some(num(&name, &value, "2^64-1")?),
                "CMC_WALK_LENGTH" => o.walk_length = Some(num(&name, &value, "2^32-1")?),
                "CMC_DEPTH_MAX" => o.depth_max = Some(num(&name, &value, "2^32-1")?),
                "CMC_STATES_MAX" => o.states_max = Some(num(&name, &value, "2^64-1")?),
                "CMC_TIME_MAX_S" => o.time_max_s = Some(num(&name, &value, "2^64-1")?),
                "CMC_NODES" => o.nodes = Some(num(&name, &value, "8")?),
                "CMC_DROPS" => o.drops = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_DUPS" => o.dups = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_CRASHES" => o.crashes = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_CLIENTS" => o.clients = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_TIMEOUTS" => o.timeouts = Some(num(&name, &value, "255 (budget_max)")?),
                "CMC_PRELOAD" => {
                    o.preload = Some(PathBuf::from(value));
                    continue;
                }
                "CMC_REPLAY" => {
                    o.replay = Some(PathBuf::from(value));
                    continue;
                }
                "CMC_MEMORY_MAX" => {
                    o.memory_max = Some(match value.as_str() {
                        "none" => None,
                        v => Some(crate::control::parse_size(v).map_err(|e| format!("{name}={value}: {e}"))?),
                    });
                    continue;
                }
                "CMC_THREADS" => {
                    let n: usize = num(&name, &value, "1024")?;
                    if n > THREADS_MAX {
                        return Err(format!("{name}={value}: expected an integer, at most {THREADS_MAX}"));
                    }
                    o.threads = Some(n);
                    continue;
                }
                "CMC_EXPLORE" => {
                    o.explore = Some(num(&name, &value, "65535")?);
                    continue;
                }
                "CMC_DET" => o.det = Some(boolean(&name, &value)?),
                "CMC_DEADLOCK" => o.deadlock = Some(boolean(&name, &value)?),
                _ => return Err(format!("unknown variable {name} (known: {})", VARIABLES.join(", "))),
            }
            o.given.push((name, value));
        }
        Ok(o)
    }

    /// Whether no variable overrides anything (`CMC_PRELOAD` and
    /// `CMC_REPLAY` do not): the model's snapshot is then compared.
    pub fn is_empty(&self) -> bool {
        self.given.is_empty()
    }

    /// `NAME=value NAME=value`, as a shell prefix.
    pub fn describe(&self) -> String {
        self.given.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }

    /// The declared attributes with these overrides applied.
    pub fn apply(&self, a: &Attributes) -> Attributes {
        let mut a = *a;
        a.search = match a.search {
            Search::Bfs { depth_max } => Search::Bfs { depth_max: self.depth_max.or(depth_max) },
            Search::Dfs { depth_max } => Search::Dfs { depth_max: self.depth_max.unwrap_or(depth_max) },
            Search::Simulate { walks, walk_length, seed } => Search::Simulate {
                walks: self.walks.unwrap_or(walks),
                walk_length: self.walk_length.unwrap_or(walk_length),
                seed: self.seed.unwrap_or(seed),
            },
        };
        a.states_max = self.states_max.or(a.states_max);
        a.time_max_s = self.time_max_s.or(a.time_max_s);
        a.nodes = self.nodes.or(a.nodes);
        a.drops = self.drops.or(a.drops);
        a.dups = self.dups.or(a.dups);
        a.crashes = self.crashes.or(a.crashes);
        a.clients = self.clients.or(a.clients);
        a.timeouts = self.timeouts.or(a.timeouts);
        a.det = self.det.unwrap_or(a.det);
        if a.program.is_none() {
            a.deadlock = self.deadlock.unwrap_or(a.deadlock);
            a.threads = self.threads.unwrap_or(a.threads);
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn env(vars: &[(&str, &str)]) -> Result<Overrides, String> {
        Overrides::from_env(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn the_preload_and_a_replay_are_not_overrides() {
        let o =
            env(&[("CMC_PRELOAD", "/p/libcmc_preload.so"), ("CMC_REPLAY", "a.cex.json"), ("PATH", "/bin")]).unwrap();
        assert_eq!(o.preload.as_deref(), Some(Path::new("/p/libcmc_preload.so")));
        assert_eq!(o.replay.as_deref(), Some(Path::new("a.cex.json")));
        assert!(o.is_empty(), "the snapshot is still compared: {}", o.describe());
        let o = env(&[("CMC_DROPS", "2"), ("CMC_PRELOAD", "/p")]).unwrap();
        assert_eq!((o.drops, o.describe().as_str()), (Some(2), "CMC_DROPS=2"));
    }

    #[test]
    fn an_unknown_variable_is_an_error_naming_the_known_ones() {
        let e = env(&[("CMC_PRELAOD", "/p")]).unwrap_err();
        assert!(e.starts_with("unknown variable CMC_PRELAOD (known: CMC_SEED,"), "{e}");
        assert!(e.contains("CMC_PRELOAD, CMC_REPLAY"), "{e}");
    }
}
