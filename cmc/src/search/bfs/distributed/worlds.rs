//! Who owns what, and what a worker keeps of a level: its worlds, the new
//! worlds it owns, the parent links it ranked.

use super::event::Key;
use crate::search::FpMap;
use crate::world::Fingerprint;

/// The worker that owns fingerprint `fp` among `peers`: from bits the
/// fingerprint set uses for neither its shard nor its bucket.
pub(super) fn owner(fp: Fingerprint, peers: usize) -> usize {
    (((fp >> 64) as u32 as u64 * peers as u64) >> 32) as usize
}

/// The worker that ranks new worlds whose parent is `parent`, among the
/// parent ids `lo..hi` of the level expanded.
pub(super) fn range_of(parent: u64, lo: u64, hi: u64, peers: usize) -> usize {
    (((parent - lo) as u128 * peers as u128) / (hi - lo) as u128) as usize
}

/// Worlds in stored form, back to back, each with an id.
#[derive(Default)]
pub(super) struct Worlds {
    pub(super) ids: Vec<u64>,
    pub(super) bytes: Vec<u8>,
    pub(super) ends: Vec<usize>,
}

impl Worlds {
    pub(super) fn push(&mut self, id: u64, world: &[u8]) {
        self.ids.push(id);
        self.bytes.extend_from_slice(world);
        self.ends.push(self.bytes.len());
    }
    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }
    pub(super) fn get(&self, k: usize) -> (u64, &[u8]) {
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        (self.ids[k], &self.bytes[start..self.ends[k]])
    }
}

/// The new worlds a worker owns in the level being found: per fingerprint,
/// the least key offered and its action position.
#[derive(Default)]
pub(super) struct Fresh {
    pub(super) index: FpMap<usize>,
    pub(super) fps: Vec<Fingerprint>,
    pub(super) keys: Vec<Key>,
    pub(super) positions: Vec<u32>,
    pub(super) worlds: Worlds,
}

impl Fresh {
    /// Adds a world not seen before.
    pub(super) fn add(&mut self, fp: Fingerprint, key: Key, position: u32, world: &[u8]) {
        self.index.insert(fp, self.fps.len());
        self.fps.push(fp);
        self.keys.push(key);
        self.positions.push(position);
        self.worlds.push(0, world);
    }

    /// Offers another way to a world of this level: `false` when the world
    /// is not one of this level's; otherwise keeps the lesser key.
    pub(super) fn improve(&mut self, fp: Fingerprint, key: Key, position: u32) -> bool {
        let Some(&k) = self.index.get(&fp) else { return false };
        if key < self.keys[k] {
            self.keys[k] = key;
            self.positions[k] = position;
        }
        true
    }

    pub(super) fn len(&self) -> usize {
        self.fps.len()
    }
}

/// The parent links of one block of consecutive ids a worker ranked.
pub(super) struct Block {
    pub(super) first: u64,
    pub(super) parents: Vec<u64>,
    pub(super) positions: Vec<u32>,
}
