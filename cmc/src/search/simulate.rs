//! Simulation: seeded random walks. Each walk starts from a random initial
//! world and takes a random enabled action at each step, up to the walk
//! length, weighting actions by kind with weights drawn per walk
//! ([`Weights`]). It computes every successor to learn which actions are enabled
//! (and counts them as generated), unless the front end says every listed
//! action is enabled: then it computes only the one it takes. Walk `i` draws from its own generator seeded from (seed, i), so a
//! walk reproduces alone. A simulation reports a violation it finds and
//! otherwise says how many walks found none: it is never a pass.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Checker, Control, End, Explore, FpSet, terminal};
use crate::property::Kind;

/// SplitMix64 (Steele, Lea and Flood): small, fast, and fixed forever, so a
/// seed means the same walks on every machine and every version.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (n > 0), by rejection so there is no bias.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

/// Kinds of action share weight slots modulo this.
const WEIGHT_SLOTS: usize = 32;

/// One walk's weights per kind of action (swarm testing: Groce et al.,
/// ISSTA 2012). A uniform choice among enabled actions makes a walk whose
/// bug needs a fault at one exact moment improbable: with crashes enabled
/// from the first step, most walks spend their crash early. Each walk
/// instead draws a weight per kind, log-uniform from 1 to 256 or zero, so
/// some walks crash often, some rarely and late, some never, and deliver
/// at every density in between. Every other walk (the odd ones) stays
/// uniform, so that weighting never loses what uniform walks find.
struct Weights([u32; WEIGHT_SLOTS]);

impl Weights {
    fn draw(walk: u64, rng: &mut SplitMix64) -> Weights {
        if walk % 2 == 1 {
            return Weights([1; WEIGHT_SLOTS]);
        }
        let mut w = [0u32; WEIGHT_SLOTS];
        for x in &mut w {
            *x = if rng.below(4) == 0 { 0 } else { 1 << rng.below(9) };
        }
        Weights(w)
    }

    /// An enabled action, with probability proportional to its kind's
    /// weight; uniform when every enabled kind weighs zero, so a walk never
    /// ends while actions are enabled.
    fn choose<A: Copy>(&self, enabled: &[A], kind: impl Fn(&A) -> u32, rng: &mut SplitMix64) -> A {
        let weight = |a: &A| u64::from(self.0[kind(a) as usize % WEIGHT_SLOTS]);
        let total: u64 = enabled.iter().map(weight).sum();
        if total == 0 {
            return enabled[rng.below(enabled.len())];
        }
        let mut x = rng.below(total as usize) as u64;
        for a in enabled {
            let w = weight(a);
            if x < w {
                return *a;
            }
            x -= w;
        }
        unreachable!("a draw below the total weight picks an action")
    }
}

/// What one walk did, for the merge that counts walks in order.
struct Walk<A> {
    /// The fingerprints of the worlds it visited, in order.
    fps: Vec<u128>,
    generated: u64,
    /// The deepest world it reached, the initial one being depth 1.
    depth: u32,
    /// The `sometimes` properties it witnessed: (property, the length of
    /// its path then).
    witnessed: Vec<(usize, usize)>,
    terminal_checked: bool,
    path: Vec<A>,
    /// How the walk ended the simulation, if it did.
    end: Option<End<A>>,
    /// A `sometimes` property failed to evaluate: a walk run ahead of its
    /// turn (on another thread) is run again in order, where that property
    /// may be witnessed already and so not evaluated.
    sometimes_failed: bool,
}

/// The fixed inputs of every walk.
struct Plan {
    properties: Vec<(String, Kind)>,
    deadlock: bool,
    walk_length: u32,
    seed: u64,
    variants: u32,
}

impl Plan {
    fn new<E: Explore>(c: &Checker<E>, walk_length: u32, seed: u64) -> Plan {
        Plan {
            properties: c.properties.clone(),
            deadlock: c.options.deadlock,
            walk_length,
            seed,
            variants: c.explorer.initial_variants(),
        }
    }
}

/// Runs walk number `walk`, checking each world it visits with the
/// `sometimes` properties `unwitnessed` leaves to witness. `poll` is asked
/// after each generated state (with the walk's count so far) whether to
/// stop.
fn walk<E: Explore>(
    e: &mut E,
    plan: &Plan,
    unwitnessed: &[bool],
    walk: u64,
    poll: &mut dyn FnMut(&Walk<E::Action>) -> Option<String>,
) -> Walk<E::Action> {
    let mut w = Walk {
        fps: Vec::new(),
        generated: 0,
        depth: 0,
        witnessed: Vec::new(),
        terminal_checked: false,
        path: Vec::new(),
        end: None,
        sometimes_failed: false,
    };
    let mut unwitnessed = unwitnessed.to_vec();
    let mut world = e.empty_world();
    let mut next = e.empty_world();
    let mut stored = Vec::new();
    let mut actions = Vec::new();
    let mut enabled: Vec<E::Action> = Vec::new();
    let mut rng = SplitMix64::new(SplitMix64::new(plan.seed ^ walk.wrapping_mul(0xa076_1d64_78bd_642f)).next_u64());
    // The initial worlds that exist.
    let mut variants_ok: Vec<u32> = Vec::new();
    for v in 0..plan.variants {
        match e.initial(v, &mut next) {
            Ok(true) => variants_ok.push(v),
            Ok(false) => {}
            Err(error) => {
                w.end = Some(End::Error { error, path: Vec::new(), failed: Some(e.init_action(v)) });
                return w;
            }
        }
        w.generated += 1;
    }
    if variants_ok.is_empty() {
        w.end = Some(End::Incomplete("no initial world (simulation is never a pass)".to_string()));
        return w;
    }
    let start = variants_ok[rng.below(variants_ok.len())];
    let weights = Weights::draw(walk, &mut rng);
    w.path.push(e.init_action(start));
    match e.initial(start, &mut world) {
        Ok(true) => {}
        Ok(false) => unreachable!("an initial world exists again"),
        Err(error) => {
            w.end = Some(End::Error { error, path: Vec::new(), failed: Some(e.init_action(start)) });
            return w;
        }
    }
    let mut depth = 1;
    let end = loop {
        stored.clear();
        w.fps.push(e.store(&world, &mut stored));
        w.depth = w.depth.max(depth);
        match check(e, &plan.properties, &mut unwitnessed, &world) {
            Ok((failed, witnessed)) => {
                w.witnessed.extend(witnessed.into_iter().map(|i| (i, w.path.len())));
                if let Some(i) = failed {
                    let (property, kind) = plan.properties[i].clone();
                    break Some(End::Violation { property, kind, path: w.path.clone() });
                }
            }
            Err((error, sometimes)) => {
                w.sometimes_failed = sometimes;
                break Some(End::Error { error, path: w.path.clone(), failed: None });
            }
        }
        if depth > plan.walk_length {
            break None;
        }
        if let Err(error) = e.actions(&world, &mut actions) {
            break Some(End::Error { error, path: w.path.clone(), failed: None });
        }
        enabled.clear();
        if e.listed_actions_are_enabled() {
            // Every listed action has a successor (the process front
            // end): choose among them without computing the others,
            // each of which would cost a replay.
            enabled.extend_from_slice(&actions);
            w.generated += u64::from(!enabled.is_empty());
        } else {
            let mut failed = None;
            for action in &actions {
                match e.apply(&world, action, &mut next) {
                    Ok(true) => {
                        enabled.push(*action);
                        w.generated += 1;
                    }
                    Ok(false) => {}
                    Err(error) => {
                        failed = Some(End::Error { error, path: w.path.clone(), failed: Some(*action) });
                        break;
                    }
                }
            }
            if failed.is_some() {
                break failed;
            }
        }
        if enabled.is_empty() {
            w.terminal_checked = true;
            match terminal(e, &plan.properties, plan.deadlock, &world) {
                Ok(None) => break None,
                Ok(Some((property, kind))) => break Some(End::Violation { property, kind, path: w.path.clone() }),
                Err(error) => break Some(End::Error { error, path: w.path.clone(), failed: None }),
            }
        }
        let action = weights.choose(&enabled, |a| e.action_kind(a), &mut rng);
        match e.apply(&world, &action, &mut next) {
            Ok(true) => {}
            Ok(false) => unreachable!("an enabled action is enabled again"),
            Err(error) => break Some(End::Error { error, path: w.path.clone(), failed: Some(action) }),
        }
        // The walk has moved on: it never loads this world again.
        e.retire(&stored);
        std::mem::swap(&mut world, &mut next);
        w.path.push(action);
        depth += 1;
        if let Some(reason) = poll(&w) {
            break Some(End::Incomplete(reason));
        }
    };
    // The walk is over.
    e.retire(&stored);
    w.end = end;
    w
}

/// The properties of a world a walk visits, as [`Checker::check_new`]
/// checks them, with the `sometimes` properties `unwitnessed` leaves
/// (updated). An error says whether a `sometimes` property failed.
#[allow(clippy::type_complexity)]
fn check<E: Explore>(
    e: &E,
    properties: &[(String, Kind)],
    unwitnessed: &mut [bool],
    world: &E::World,
) -> Result<(Option<usize>, Vec<usize>), (String, bool)> {
    let mut witnessed = Vec::new();
    for (i, (_, kind)) in properties.iter().enumerate() {
        match kind {
            Kind::Always => {
                if !e.holds(i, world).map_err(|error| (error, false))? {
                    return Ok((Some(i), witnessed));
                }
            }
            Kind::Sometimes => {
                if unwitnessed[i] && e.holds(i, world).map_err(|error| (error, true))? {
                    unwitnessed[i] = false;
                    witnessed.push(i);
                }
            }
            Kind::Eventually => {}
        }
    }
    Ok((None, witnessed))
}

/// Simulation on the calling thread.
pub(crate) fn run<E: Explore>(
    c: &mut Checker<E>,
    walks: u64,
    walk_length: u32,
    seed: u64,
    control: &mut dyn Control,
) -> End<E::Action> {
    let mut seen = FpSet::default();
    let poll_every = c.explorer.poll_every();
    let mut next_poll = poll_every;
    let plan = Plan::new(c, walk_length, seed);
    for number in 0..walks {
        let (generated, distinct, depth) = (c.generated, c.distinct, c.depth);
        let unwitnessed = c.unwitnessed.clone();
        // Polled as the walk goes, with the counts it would add so far.
        let mut poll = |w: &Walk<E::Action>| {
            let now = generated + w.generated;
            if now < next_poll {
                return None;
            }
            next_poll = now + poll_every;
            let progress = super::Progress {
                generated_states: now,
                distinct_states: distinct + w.fps.len() as u64,
                depth: depth.max(w.depth),
                level: None,
            };
            control.poll(&progress)
        };
        let w = walk(&mut c.explorer, &plan, &unwitnessed, number, &mut poll);
        if let Some(end) = merge(c, &mut seen, w) {
            return end;
        }
    }
    finished(walks, walk_length)
}

/// Simulation on up to `threads` threads: walks run in batches, each walk
/// on whichever thread is free, and are merged in walk order, so the
/// report is the one-thread report.
pub(crate) fn run_threads<E>(
    c: &mut Checker<E>,
    walks: u64,
    walk_length: u32,
    seed: u64,
    control: &mut dyn Control,
    threads: usize,
) -> End<E::Action>
where
    E: Explore + Send,
    E::Action: Send,
{
    let workers = (1..threads).map(|_| c.explorer.worker()).collect::<Option<Vec<E>>>();
    let Some(mut workers) = workers.filter(|w| !w.is_empty()) else {
        return run(c, walks, walk_length, seed, control);
    };
    let batch = (threads * WALKS_PER_THREAD) as u64;
    let mut seen = FpSet::default();
    let plan = Plan::new(c, walk_length, seed);
    let mut first = 0;
    while first < walks {
        let last = (first + batch).min(walks);
        let next = AtomicU64::new(first);
        let unwitnessed = c.unwitnessed.clone();
        let done: Mutex<Vec<(u64, Walk<E::Action>)>> = Mutex::new(Vec::new());
        let job = |e: &mut E| {
            loop {
                let number = next.fetch_add(1, Ordering::Relaxed);
                if number >= last {
                    break;
                }
                let w = walk(e, &plan, &unwitnessed, number, &mut |_| None);
                done.lock().unwrap_or_else(|p| p.into_inner()).push((number, w));
            }
        };
        std::thread::scope(|scope| {
            for e in workers.iter_mut() {
                let job = &job;
                scope.spawn(move || job(e));
            }
            job(&mut c.explorer);
        });
        let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
        done.sort_by_key(|(number, _)| *number);
        for (number, mut w) in done {
            if w.sometimes_failed {
                // Run again in order, with the properties witnessed by now.
                let unwitnessed = c.unwitnessed.clone();
                w = walk(&mut c.explorer, &plan, &unwitnessed, number, &mut |_| None);
            }
            if let Some(end) = merge(c, &mut seen, w) {
                return end;
            }
        }
        if let Some(reason) = control.poll(&c.progress()) {
            return End::Incomplete(reason);
        }
        first = last;
    }
    finished(walks, walk_length)
}

/// Walks per thread in a batch of the parallel simulation.
const WALKS_PER_THREAD: usize = 16;

/// Adds a walk's counts and witnesses to the checker's, in walk order;
/// how it ended the simulation, if it did.
fn merge<E: Explore>(c: &mut Checker<E>, seen: &mut FpSet, w: Walk<E::Action>) -> Option<End<E::Action>> {
    c.generated += w.generated;
    for &fp in &w.fps {
        if seen.insert(fp) {
            c.distinct += 1;
        }
    }
    c.depth = c.depth.max(w.depth);
    c.terminal_checked |= w.terminal_checked;
    for &(i, len) in &w.witnessed {
        if c.unwitnessed[i] {
            c.unwitnessed[i] = false;
            c.witnesses[i] = Some(w.path[..len].to_vec());
        }
    }
    w.end
}

fn finished<A>(walks: u64, walk_length: u32) -> End<A> {
    End::Incomplete(format!(
        "no violation found in {walks} walks of at most {walk_length} actions (simulation is never a pass)"
    ))
}
