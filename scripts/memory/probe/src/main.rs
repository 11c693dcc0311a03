//! The core probe of the memory gate (`scripts/memory_teeth.sh`): a core
//! whose step, in one mode or another, leaves one byte it hands back to the
//! engine uninitialised, and a command that checks it by BFS.
//!
//! `cmc-memory-probe MODE [--det]`, where MODE is `clean` (the control: nothing is
//! left undefined, and the search must pass), `state` (node 1 leaves one
//! byte of its next state undefined on a delivery) or `message` (node 1
//! sends a message with one undefined byte on a delivery). Only a delivery
//! the search chooses reaches the bad step. Run under valgrind's memcheck
//! with cmc's `valgrind` feature, the engine's client request must report
//! the byte; `--det` cannot, since both runs of the step copy the same
//! garbage. Exit code as `cmc`: 0 pass, 1 violation, 4 error.

use std::mem::MaybeUninit;
use std::process::ExitCode;

use cmc::{Context, Core, Effects, Event, Model, Options, Search, Verdict};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Node 0 sends 7 to node 1 at `Init`; node 1 records what it got.
struct Probe;

cmc::settings! {
    struct ProbeSettings {
        /// 0: clean; 1: an undefined state byte; 2: an undefined message byte.
        mode: u8 = 0,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
struct ProbeState {
    got: u8,
    value: u8,
}

/// A byte nobody wrote: read from a fresh heap block, volatile so that the
/// compiler cannot substitute a value of its choosing for the read.
fn uninitialised() -> u8 {
    let block: Box<MaybeUninit<u8>> = Box::new_uninit();
    // SAFETY: none, on purpose: this reads uninitialised memory, which is
    // what the probe is for. The volatile read keeps it a real load.
    unsafe { std::ptr::read_volatile(block.as_ptr().cast::<u8>()) }
}

impl Core for Probe {
    const NAME: &'static str = "memory-probe";
    type State = ProbeState;
    type Settings = ProbeSettings;
    const DURABLE: usize = 0;

    fn step(ctx: &Context<'_, ProbeSettings>, s: &mut ProbeState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } if ctx.node == 0 => out.send(1, &[7]),
            Event::Deliver { msg, .. } if ctx.node == 1 => {
                s.got = msg[0];
                match ctx.settings.mode {
                    1 => s.value = uninitialised(),
                    2 => out.send(0, &[uninitialised()]),
                    _ => s.value = 1,
                }
            }
            _ => {}
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let det = args.get(1).is_some_and(|a| a == "--det");
    let mode = match args.first().map_or("", String::as_str) {
        "clean" => 0,
        "state" => 1,
        "message" => 2,
        _ => {
            eprintln!("usage: cmc-memory-probe clean|state|message [--det]");
            return ExitCode::from(2);
        }
    };
    let model = Model::<Probe>::new(ProbeSettings { mode }).nodes(2);
    let options = Options { search: Search::Bfs { depth_max: None }, det, ..Options::default() };
    let report = match cmc::check(&model, &options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", report.to_text());
    ExitCode::from(match report.verdict {
        Verdict::Pass => 0,
        Verdict::Violation => 1,
        Verdict::Incomplete => 3,
        Verdict::Error => 4,
    })
}
