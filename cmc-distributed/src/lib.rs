//! Distributed breadth-first search for cmc, on timely dataflow.
//!
//! cmc's engine runs a distributed search as rounds of messages between
//! workers ([`cmc::Exchange`], [`cmc::search::check_distributed`]); this crate
//! carries the rounds over timely dataflow, between worker threads of one
//! process and between processes on several hosts. Every worker ends with
//! the report a one-thread search gives.
//!
//! What timely leaves open, this crate closes, so that a run ends with a
//! report or an error and never hangs ([`net`], and a panic hook):
//! connections have a deadline; a handshake refuses a process that runs
//! another check; keepalive turns a vanished host into an error, and a
//! heartbeat a stalled process; a lost peer's panics in timely's threads
//! become one error.

#![warn(missing_docs)]

mod failure;
mod heartbeat;
pub mod net;
mod rounds;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cmc::catalog::{DynError, DynModel};
use cmc::{Control, DistributedError, Options, Report};
use timely::communication::allocator::ProcessBuilder;
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;

/// Where this process stands in a distributed search: timely's
/// configuration (workers per process, processes, this process's index,
/// the processes' addresses) and how long to wait for the others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Worker threads in each process (the same in every process).
    pub workers: usize,
    /// How many processes take part.
    pub processes: usize,
    /// This process's index, from 0. Process 0 prints the report.
    pub process: usize,
    /// Every process's `host:port`, in process order (a hostfile's lines,
    /// [`net::read_hostfile`]); process `i` listens on its own.
    pub addresses: Vec<String>,
    /// How long to wait for every process to connect.
    pub connect_timeout: Duration,
    /// How long a peer may send nothing, not even its heartbeat, before
    /// the search fails: a process that is alive but stopped or stalled.
    pub peer_timeout: Duration,
}

impl Cluster {
    /// One process of `workers` threads.
    pub fn local(workers: usize) -> Cluster {
        Cluster {
            workers,
            processes: 1,
            process: 0,
            addresses: net::local_addresses(1),
            connect_timeout: Duration::from_secs(60),
            peer_timeout: PEER_TIMEOUT,
        }
    }
}

/// The default [`Cluster::peer_timeout`].
pub const PEER_TIMEOUT: Duration = Duration::from_secs(30);

/// The least [`Cluster::peer_timeout`]: four heartbeats, so that a beat
/// late by a scheduler's hiccup is not taken for a stall.
pub const PEER_TIMEOUT_MIN: Duration = heartbeat::PEER_TIMEOUT_MIN;

/// Why a distributed search gave no report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command's own configuration: workers, processes, hostfile.
    #[error("{0}")]
    Usage(String),
    /// The processes did not all connect, or one runs another check.
    #[error("{0}")]
    Connect(String),
    /// A peer was lost during the search (killed, crashed, its host gone,
    /// silent for the peer timeout), or a worker failed.
    #[error("process {process}: the distributed search failed after {elapsed_s:.2} s: {message}")]
    Lost {
        /// This process's index.
        process: usize,
        /// Seconds since the search started.
        elapsed_s: f64,
        /// What failed first.
        message: String,
    },
    /// The model cannot be searched so.
    #[error(transparent)]
    Model(#[from] DynError),
}

/// Makes each worker's [`Control`] (a time cap, a memory cap, Ctrl-C),
/// polled once per level.
pub type MakeControl = Arc<dyn Fn() -> Box<dyn Control> + Send + Sync>;

/// Runs this process's part of a distributed breadth-first search of
/// `model`: `cluster.workers` threads, connected to the other processes
/// of `cluster`. Every process calls this with the same model, options and
/// cluster (but `process`), and each gets the same report, the one a
/// one-thread search gives.
pub fn check(
    model: Arc<dyn DynModel>,
    options: &Options,
    cluster: &Cluster,
    control: MakeControl,
) -> Result<Report, Error> {
    if cluster.workers == 0 || cluster.processes == 0 {
        return Err(Error::Usage("--workers and --processes must be at least 1".to_string()));
    }
    if cluster.connect_timeout.is_zero() {
        return Err(Error::Usage("the connect timeout must be positive".to_string()));
    }
    if cluster.peer_timeout < PEER_TIMEOUT_MIN {
        return Err(Error::Usage(format!(
            "the peer timeout ({} s) is below its least, {} s: four heartbeats, one every {} s",
            cluster.peer_timeout.as_secs_f64(),
            PEER_TIMEOUT_MIN.as_secs_f64(),
            heartbeat::BEAT.as_secs_f64()
        )));
    }
    if cluster.process >= cluster.processes {
        return Err(Error::Usage(format!(
            "--process {} is not below --processes {} (processes count from 0)",
            cluster.process, cluster.processes
        )));
    }
    if cluster.addresses.len() != cluster.processes {
        return Err(Error::Usage(format!("{} addresses for {} processes", cluster.addresses.len(), cluster.processes)));
    }
    cmc::search::distributed_supported(options).map_err(DynError::from)?;
    failure::install_hook();
    failure::reset();
    let started = Instant::now();
    let options = *options;
    let digest = digest(&model.identity(), &options, cluster);
    let work = move |worker: &mut timely::worker::Worker| -> Result<Report, DynError> {
        let index = worker.index();
        let mut rounds = rounds::Rounds::new(worker);
        let mut control = control();
        let run = std::panic::AssertUnwindSafe(|| model.check_distributed(&options, &mut rounds, &mut *control));
        let result = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(DistributedError::Peers(format!("worker {index} panicked: {message}")).into())
        });
        match &result {
            // A model that cannot be checked so fails on every worker
            // alike, before any round or after the first: its own error,
            // not a lost peer, and the processes end in order.
            Err(
                DynError::Model(_)
                | DynError::Distributed(
                    DistributedError::Model(_) | DistributedError::Unsupported(_) | DistributedError::Refused(_),
                ),
            ) => {}
            // The other workers wait for this one in a round: end them.
            Err(e) => failure::fail(e.to_string()),
            Ok(_) => {}
        }
        result
    };
    // Beats until this function returns.
    let mut _heartbeat = None;
    let guards = if cluster.processes == 1 {
        timely::execute(timely::Config::process(cluster.workers), work)
    } else {
        let connections = net::connect(&cluster.addresses, cluster.process, cluster.connect_timeout, digest)?;
        let sockets = connections.timely;
        _heartbeat = Some(
            heartbeat::start(connections.heartbeat, cluster.peer_timeout)
                .map_err(|e| Error::Connect(format!("process {}: {e}", cluster.process)))?,
        );
        let hooks = timely::communication::Hooks::default();
        let processes = ProcessBuilder::new_typed_vector(cluster.workers, hooks.refill.clone(), hooks.spill.clone());
        let (builders, guard) =
            initialize_networking_from_sockets(processes, sockets, cluster.process, cluster.workers, hooks)
                .map_err(|e| Error::Connect(format!("process {}: starting the network: {e}", cluster.process)))?;
        let builders = builders.into_iter().map(timely::communication::AllocatorBuilder::Tcp).collect();
        timely::execute::execute_from(builders, Box::new(guard), timely::WorkerConfig::default(), work)
    }
    .map_err(|e| Error::Connect(format!("process {}: starting timely: {e}", cluster.process)))?;
    let lost =
        |message: String| Error::Lost { process: cluster.process, elapsed_s: started.elapsed().as_secs_f64(), message };
    loop {
        if let Some(message) = failure::first() {
            // Dropping the guards would wait for workers that wait for a
            // lost peer: leave them; the caller exits.
            std::mem::forget(guards);
            return Err(lost(message));
        }
        if guards.guards().iter().all(|g| g.is_finished()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    // Joining waits for timely's network threads too, which wait for the
    // peers to end their side. A peer that ends (its search done, or failed
    // on a model error it reports itself) ends them, with or without a
    // panic; one that stalls after its last message would not: a thread
    // joins, and this one watches the heartbeat meanwhile.
    let (joined, join) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("cmc:join".to_string())
        .spawn(move || joined.send(guards.join()).ok())
        .map_err(|e| Error::Connect(format!("process {}: starting a thread: {e}", cluster.process)))?;
    let results = loop {
        if failure::stalled() {
            // The joining thread waits for the stalled peer: leave it; the
            // caller exits.
            return Err(lost(failure::first().unwrap_or_default()));
        }
        match join.recv_timeout(Duration::from_millis(2)) {
            Ok(results) => break results,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(lost("internal: the thread that joins the workers ended without them".to_string()));
            }
        }
    };
    let mut reports = Vec::new();
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(Ok(report)) => reports.push(report),
            Ok(Err(e)) => return Err(e.into()),
            Err(panic) => return Err(lost(format!("worker {i} panicked: {panic}"))),
        }
    }
    let first = reports.remove(0);
    if let Some(other) = reports.iter().find(|r| r.to_json() != first.to_json()) {
        return Err(lost(format!(
            "internal: this process's workers disagree: {} states against {}",
            first.distinct_states, other.distinct_states
        )));
    }
    Ok(first)
}

/// What every process must agree on, hashed: cmc's version, the model, the
/// options that change the search, the workers and the addresses.
fn digest(identity: &cmc::Identity, options: &Options, cluster: &Cluster) -> u64 {
    let Options { search, states_max, det, deadlock, threads: _, symmetry } = options;
    let text = format!(
        "cmc {} {identity:?} {search:?} {states_max:?} {det} {deadlock} {symmetry} workers={} processes={} {:?}",
        env!("CARGO_PKG_VERSION"),
        cluster.workers,
        cluster.processes,
        cluster.addresses
    );
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}
