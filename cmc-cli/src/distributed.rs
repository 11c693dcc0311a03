//! `--distributed`: breadth-first search over timely dataflow workers, in
//! this process and in others on other hosts (`cmc-distributed`,
//! docs/DISTRIBUTED.md). Every process runs the same command but
//! `--process`; process 0 prints the report, and every process exits with
//! the verdict's code.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use cmc::catalog::DynModel;
use cmc::{Options, Report};
use cmc_distributed::{Cluster, MakeControl};
use cmc_runner::control::RunControl;

/// The options of a distributed search, as `cmc check` and `cmc calibrate`
/// take them.
#[derive(Args, Debug, Clone)]
pub struct DistributedArgs {
    /// Search breadth-first over timely dataflow workers: threads of this
    /// process and, with --processes, processes on other hosts. The report
    /// is the one-thread report. Cores only.
    #[arg(long)]
    pub distributed: bool,
    /// With --distributed: worker threads in each process; 0 (the default)
    /// for one per core. Every process must give the same number.
    #[arg(long, requires = "distributed", default_value_t = 0)]
    pub workers: usize,
    /// With --distributed: how many processes take part.
    #[arg(long, requires = "distributed", default_value_t = 1)]
    pub processes: usize,
    /// With --distributed: this process's index, from 0 (process 0 prints
    /// the report).
    #[arg(long, requires = "distributed", default_value_t = 0)]
    pub process: usize,
    /// With --distributed: the processes' addresses, one host:port per
    /// line in process order (timely's hostfile); process P listens on line
    /// P. Default: 127.0.0.1:2101, 127.0.0.1:2102, ...
    #[arg(long, requires = "distributed", value_name = "FILE")]
    pub hostfile: Option<PathBuf>,
    /// With --distributed: seconds to wait for every process to connect.
    #[arg(long, requires = "distributed", default_value_t = 60.0, value_name = "SECONDS")]
    pub connect_timeout: f64,
    /// With --distributed: seconds a process may send nothing, not even
    /// its heartbeat (one every half second), before the others end the
    /// search with an error: a process that is stopped or stalled. At
    /// least 2.
    #[arg(long, requires = "distributed", default_value_t = 30.0, value_name = "SECONDS")]
    pub peer_timeout: f64,
}

impl DistributedArgs {
    /// The cluster these arguments describe.
    pub fn cluster(&self) -> Result<Cluster> {
        for (name, seconds) in [("--connect-timeout", self.connect_timeout), ("--peer-timeout", self.peer_timeout)] {
            if !(seconds > 0.0 && seconds < 1e9) {
                bail!("{name} {seconds}: expected a positive number of seconds");
            }
        }
        let least = cmc_distributed::PEER_TIMEOUT_MIN.as_secs_f64();
        if self.peer_timeout < least {
            bail!(
                "--peer-timeout {}: below {least} s, four heartbeats: a late beat would pass for a stall",
                self.peer_timeout
            );
        }
        let addresses = match &self.hostfile {
            Some(path) => cmc_distributed::net::read_hostfile(path, self.processes)?,
            None => cmc_distributed::net::local_addresses(self.processes),
        };
        let workers = match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        Ok(Cluster {
            workers,
            processes: self.processes,
            process: self.process,
            addresses,
            connect_timeout: Duration::from_secs_f64(self.connect_timeout),
            peer_timeout: Duration::from_secs_f64(self.peer_timeout),
        })
    }

    /// Whether this process prints the report.
    pub fn reports(&self) -> bool {
        !self.distributed || self.process == 0
    }
}

/// Runs this process's part of the search; every worker polls a control
/// with the time and memory caps.
pub fn check(
    model: Box<dyn DynModel>,
    options: &Options,
    args: &DistributedArgs,
    time_max: Option<Duration>,
    memory_max: Option<u64>,
) -> Result<Report> {
    let cluster = args.cluster()?;
    let control: MakeControl = Arc::new(move || Box::new(RunControl::new(time_max).with_memory_max(memory_max)));
    Ok(cmc_distributed::check(Arc::from(model), options, &cluster, control)?)
}
