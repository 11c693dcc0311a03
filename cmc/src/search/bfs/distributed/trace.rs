//! Traces across workers: parent links are walked back one round per
//! step, the worker holding each link broadcasting it; then every worker
//! replays the chain from its initial world, as one thread does.

use super::super::store::replay_chain;
use super::wire::In;
use super::{LINK, Run};
use crate::search::{End, Explore};

impl<E: Explore> Run<'_, E> {
    /// Rebuilds the traces the end needs (its own, to `target`, and every
    /// witness's), walking parent links back over the workers, and puts
    /// them in place.
    pub(super) fn finish(&mut self, end: End<E::Action>, target: Option<u64>) -> Result<End<E::Action>, String> {
        self.finish_with(end, target, false)
    }

    /// [`Run::finish`]; with `expand_again`, the error's trace ends with the
    /// action that failed, found by expanding the target again.
    pub(super) fn finish_with(
        &mut self,
        end: End<E::Action>,
        target: Option<u64>,
        expand_again: bool,
    ) -> Result<End<E::Action>, String> {
        let mut targets: Vec<u64> = self.witness_ids.iter().flatten().copied().collect();
        targets.extend(target);
        let chains = self.walk(&targets)?;
        let mut chains = chains.into_iter();
        for i in 0..self.witness_ids.len() {
            if self.witness_ids[i].is_some() {
                let chain = chains.next().expect("a chain per target");
                self.c.witnesses[i] = Some(replay_chain(self.c, &chain).0);
            }
        }
        let Some(chain) = chains.next() else { return Ok(end) };
        let (path, world) = replay_chain(self.c, &chain);
        Ok(match end {
            End::Violation { property, kind, .. } => End::Violation { property, kind, path },
            End::Error { error, failed, .. } => {
                // An expansion's error names the action that failed: take
                // the step again, as one thread took it.
                let failed = failed.or_else(|| {
                    if !expand_again {
                        return None;
                    }
                    let world = world?;
                    let e = &mut self.c.explorer;
                    let (mut scratch, mut actions, mut bytes, mut succ) =
                        (e.empty_world(), Vec::new(), Vec::new(), Vec::new());
                    let mut stored = Vec::new();
                    let fp = e.store(&world, &mut stored);
                    e.expand(&world, &stored, fp, &mut scratch, &mut actions, &mut bytes, &mut succ).err()?;
                    e.failed_action()
                });
                End::Error { error, path, failed }
            }
            end => end,
        })
    }

    /// The chain of links (initial variant, then action positions) to each
    /// of `targets`, one round per step back.
    fn walk(&mut self, targets: &[u64]) -> Result<Vec<Vec<u32>>, String> {
        let mut at = targets.to_vec();
        let mut chains: Vec<Vec<u32>> = vec![Vec::new(); targets.len()];
        let mut done = vec![false; targets.len()];
        loop {
            for t in 0..targets.len() {
                if !done[t] && at[t] < self.roots.len() as u64 {
                    chains[t].push(self.roots[at[t] as usize]);
                    done[t] = true;
                }
            }
            if done.iter().all(|&d| d) {
                break;
            }
            let mut out = self.outs();
            for t in 0..targets.len() {
                if done[t] || self.holder(at[t])? != self.me {
                    continue;
                }
                let (parent, position) = self.link(at[t])?;
                Self::broadcast(&mut out, |o| {
                    o.u8(LINK);
                    o.u32(t as u32);
                    o.u64(parent);
                    o.u32(position);
                });
            }
            let got = self.round(out)?;
            let mut moved = vec![false; targets.len()];
            for buf in &got {
                let mut r = In::new(buf);
                while !r.done() {
                    match r.u8()? {
                        LINK => {
                            let t = r.u32()? as usize;
                            let (parent, position) = (r.u64()?, r.u32()?);
                            if t >= targets.len() || done[t] || moved[t] {
                                return Err("internal: an unexpected parent link".to_string());
                            }
                            chains[t].push(position);
                            at[t] = parent;
                            moved[t] = true;
                        }
                        t => return Err(format!("internal: record {t} while walking a trace back")),
                    }
                }
            }
            if (0..targets.len()).any(|t| !done[t] && !moved[t]) {
                return Err("internal: no worker holds a parent link the trace needs".to_string());
            }
        }
        for chain in &mut chains {
            chain.reverse();
        }
        Ok(chains)
    }

    /// The worker holding the parent link of state `id`.
    fn holder(&self, id: u64) -> Result<usize, String> {
        let k = self.blocks.partition_point(|b| b.0 <= id);
        match k.checked_sub(1).map(|k| self.blocks[k]) {
            Some((first, n, w)) if id < first + n => Ok(w as usize),
            _ => Err(format!("internal: no block holds state {id}")),
        }
    }

    /// This worker's parent link of state `id`.
    fn link(&self, id: u64) -> Result<(u64, u32), String> {
        let k = self.links.partition_point(|b| b.first <= id);
        let b = k.checked_sub(1).map(|k| &self.links[k]).ok_or_else(|| format!("internal: no link of state {id}"))?;
        let i = (id - b.first) as usize;
        match (b.parents.get(i), b.positions.get(i)) {
            (Some(&p), Some(&pos)) => Ok((p, pos)),
            _ => Err(format!("internal: no link of state {id}")),
        }
    }
}
