//! Depth-first search to a depth bound (the initial state is depth 1).
//!
//! Each fingerprint is stored with the shallowest depth it was reached at,
//! and a world reached again at a shallower depth is explored again, so the
//! search reaches every world that breadth-first search reaches within the
//! bound. Successors of worlds at the bound are fingerprinted but not
//! stored; if any of them was never reached within the bound, the bound hid
//! part of the state space and the verdict is incomplete, never pass.

use super::{Checker, Control, End, Explore, FpMap, FpSet};

/// One world on the stack.
struct Frame<E: Explore> {
    world: E::World,
    /// The action that reached this world (the initial action for a root).
    via: E::Action,
    depth: u32,
    actions: Vec<E::Action>,
    next: usize,
    enabled: bool,
}

pub(crate) fn run<E: Explore>(c: &mut Checker<E>, depth_max: u32, control: &mut dyn Control) -> End<E::Action> {
    let states_max = c.options.states_max;
    let mut seen: FpMap<u32> = FpMap::default();
    let mut beyond = FpSet::default();
    let mut stack: Vec<Frame<E>> = Vec::new();
    // Worlds and action lists of popped frames, reused rather than
    // allocated again for every world the search enters.
    let mut spare: Vec<(E::World, Vec<E::Action>)> = Vec::new();
    let mut witnessed = Vec::new();
    let mut scratch = c.explorer.empty_world();
    let mut stored = Vec::new();
    let poll_every = c.explorer.poll_every();
    let mut next_poll = poll_every;
    let path_of = |stack: &[Frame<E>]| -> Vec<E::Action> { stack.iter().map(|f| f.via).collect() };
    debug_assert!(depth_max > 0, "depth_max = 0 is answered before the search");

    let mut variant = 0;
    let variants = c.explorer.initial_variants();
    loop {
        // Take the next world: a successor of the top frame, or the next
        // initial world when the stack is empty.
        let (via, depth) = match stack.last_mut() {
            None => {
                if variant == variants {
                    break;
                }
                let v = variant;
                variant += 1;
                match c.explorer.initial(v, &mut scratch) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(error) => {
                        return End::Error { error, path: Vec::new(), failed: Some(c.explorer.init_action(v)) };
                    }
                }
                c.generated += 1;
                (c.explorer.init_action(v), 1)
            }
            Some(top) => {
                if top.next == top.actions.len() {
                    let frame = stack.pop().unwrap_or_else(|| unreachable!("stack top exists"));
                    if !frame.enabled {
                        let mut path = path_of(&stack);
                        path.push(frame.via);
                        match c.check_terminal(&frame.world) {
                            Ok(None) => {}
                            Ok(Some((property, kind))) => return End::Violation { property, kind, path },
                            Err(error) => return End::Error { error, path, failed: None },
                        }
                    }
                    if c.explorer.retires() {
                        stored.clear();
                        c.explorer.store(&frame.world, &mut stored);
                        c.explorer.retire(&stored);
                    }
                    // Its world and action list serve the next frame pushed.
                    spare.push((frame.world, frame.actions));
                    continue;
                }
                let action = top.actions[top.next];
                top.next += 1;
                match c.explorer.apply(&top.world, &action, &mut scratch) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(error) => return End::Error { error, path: path_of(&stack), failed: Some(action) },
                }
                top.enabled = true;
                c.generated += 1;
                (action, top.depth + 1)
            }
        };
        if c.generated >= next_poll {
            next_poll = c.generated + poll_every;
            if let Some(reason) = control.poll(&c.progress()) {
                return End::Incomplete(reason);
            }
        }
        stored.clear();
        let fp = c.explorer.store(&scratch, &mut stored);
        if depth > depth_max {
            beyond.insert(fp);
            c.explorer.retire(&stored);
            continue;
        }
        match seen.get(&fp) {
            Some(&d) if d <= depth => {
                c.explorer.retire(&stored);
                continue;
            }
            Some(_) => {
                seen.insert(fp, depth);
            }
            None => {
                if states_max.is_some_and(|m| c.distinct >= m) {
                    return End::Incomplete(format!("states_max = {} reached", states_max.unwrap_or_default()));
                }
                seen.insert(fp, depth);
                c.distinct += 1;
                c.depth = c.depth.max(depth);
                let failed = c.check_new(&scratch, &mut witnessed);
                if !witnessed.is_empty() || !matches!(failed, Ok(None)) {
                    let mut path = path_of(&stack);
                    path.push(via);
                    let failed = match failed {
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
                }
            }
        }
        let (mut world, mut actions) = spare.pop().unwrap_or_else(|| (c.explorer.empty_world(), Vec::new()));
        if let Err(error) = c.explorer.actions(&scratch, &mut actions) {
            let mut path = path_of(&stack);
            path.push(via);
            return End::Error { error, path, failed: None };
        }
        std::mem::swap(&mut world, &mut scratch);
        stack.push(Frame { world, via, depth, actions, next: 0, enabled: false });
    }
    if beyond.iter().any(|fp| !seen.contains_key(&fp)) {
        return End::Incomplete(format!("depth_max = {depth_max} reached with worlds left to explore"));
    }
    End::Complete
}
