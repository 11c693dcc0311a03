//! Simulation: seeded random walks. Each walk starts from a random initial
//! world and takes a random enabled action at each step, up to the walk
//! length, weighting actions by kind with weights drawn per walk
//! ([`Weights`]). It computes every successor to learn which actions are enabled
//! (and counts them as generated), unless the front end says every listed
//! action is enabled: then it computes only the one it takes. Walk `i` draws from its own generator seeded from (seed, i), so a
//! walk reproduces alone. A simulation reports a violation it finds and
//! otherwise says how many walks found none: it is never a pass.

use super::{Checker, Control, End, Explore, FpSet};

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

pub(crate) fn run<E: Explore>(
    c: &mut Checker<E>,
    walks: u64,
    walk_length: u32,
    seed: u64,
    control: &mut dyn Control,
) -> End<E::Action> {
    let mut seen = FpSet::default();
    let mut world = c.explorer.empty_world();
    let mut next = c.explorer.empty_world();
    let mut stored = Vec::new();
    let mut actions = Vec::new();
    let mut enabled: Vec<E::Action> = Vec::new();
    let mut variants_ok: Vec<u32> = Vec::new();
    let mut witnessed = Vec::new();
    let poll_every = c.explorer.poll_every();
    let mut next_poll = poll_every;
    let variants = c.explorer.initial_variants();

    for walk in 0..walks {
        let mut rng = SplitMix64::new(SplitMix64::new(seed ^ walk.wrapping_mul(0xa076_1d64_78bd_642f)).next_u64());
        // The initial worlds that exist.
        variants_ok.clear();
        for v in 0..variants {
            match c.explorer.initial(v, &mut next) {
                Ok(true) => variants_ok.push(v),
                Ok(false) => {}
                Err(error) => return End::Error { error, path: Vec::new(), failed: Some(c.explorer.init_action(v)) },
            }
            c.generated += 1;
        }
        if variants_ok.is_empty() {
            return End::Incomplete("no initial world (simulation is never a pass)".to_string());
        }
        let start = variants_ok[rng.below(variants_ok.len())];
        let weights = Weights::draw(walk, &mut rng);
        let mut path: Vec<E::Action> = vec![c.explorer.init_action(start)];
        match c.explorer.initial(start, &mut world) {
            Ok(true) => {}
            Ok(false) => unreachable!("an initial world exists again"),
            Err(error) => return End::Error { error, path: Vec::new(), failed: Some(c.explorer.init_action(start)) },
        }
        let mut depth = 1;
        loop {
            stored.clear();
            let fp = c.explorer.store(&world, &mut stored);
            if seen.insert(fp) {
                c.distinct += 1;
            }
            c.depth = c.depth.max(depth);
            let failed = match c.check_new(&world, &mut witnessed) {
                Ok(failed) => failed,
                Err(error) => return End::Error { error, path, failed: None },
            };
            for &i in &witnessed {
                c.witnesses[i] = Some(path.clone());
            }
            if let Some(i) = failed {
                let (property, kind) = c.property(i);
                return End::Violation { property, kind, path };
            }
            if depth > walk_length {
                break;
            }
            if let Err(error) = c.explorer.actions(&world, &mut actions) {
                return End::Error { error, path, failed: None };
            }
            enabled.clear();
            if c.explorer.listed_actions_are_enabled() {
                // Every listed action has a successor (the process front
                // end): choose among them without computing the others,
                // each of which would cost a replay.
                enabled.extend_from_slice(&actions);
                c.generated += u64::from(!enabled.is_empty());
            } else {
                for action in &actions {
                    match c.explorer.apply(&world, action, &mut next) {
                        Ok(true) => {
                            enabled.push(*action);
                            c.generated += 1;
                        }
                        Ok(false) => {}
                        Err(error) => return End::Error { error, path, failed: Some(*action) },
                    }
                }
            }
            if enabled.is_empty() {
                match c.check_terminal(&world) {
                    Ok(None) => {}
                    Ok(Some((property, kind))) => return End::Violation { property, kind, path },
                    Err(error) => return End::Error { error, path, failed: None },
                }
                break;
            }
            let action = weights.choose(&enabled, |a| c.explorer.action_kind(a), &mut rng);
            match c.explorer.apply(&world, &action, &mut next) {
                Ok(true) => {}
                Ok(false) => unreachable!("an enabled action is enabled again"),
                Err(error) => return End::Error { error, path, failed: Some(action) },
            }
            // The walk has moved on: it never loads this world again.
            c.explorer.retire(&stored);
            std::mem::swap(&mut world, &mut next);
            path.push(action);
            depth += 1;
            if c.generated >= next_poll {
                next_poll = c.generated + poll_every;
                if let Some(reason) = control.poll(&c.progress()) {
                    return End::Incomplete(reason);
                }
            }
        }
        // The walk is over.
        c.explorer.retire(&stored);
    }
    End::Incomplete(format!(
        "no violation found in {walks} walks of at most {walk_length} actions (simulation is never a pass)"
    ))
}
