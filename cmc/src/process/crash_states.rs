//! What a crash may leave of a node's data directory (model key
//! `crash_states`; `calls::disk` records the changes, `action` lists one
//! CRASH per state, the supervisor applies it). This module reads a
//! [`Disk`] and never a process.
//!
//! Under [`CrashStates::Prefix`], the manual's, a crash keeps the oldest j
//! pending changes, for each j. Under [`CrashStates::Ext4`], the default,
//! it may also keep any state ext4 (default mount: `data=ordered`, delayed
//! allocation, `auto_da_alloc`, one journal) can leave, as far as these
//! orders describe it (SEMANTICS, "Crash states of files"):
//!
//! - the *journal*: creations, unlinks, renames, truncations and the
//!   allocations of `auto_da_alloc` at a close ([`DiskOp::Allocate`]),
//!   kept in the order they were made, as a prefix;
//! - each file's *writes* ([`DiskOp::Write`]), kept in the order they were
//!   made, as a prefix, apart from the journal and from other files' (the
//!   page cache writes files back in any order);
//! - each file's *growths* ([`DiskOp::Grow`]: the size a write past the
//!   end gives it), kept in order, apart from its writes: a growth without
//!   its write leaves zeros (ext4 commits the size of an allocated, not yet
//!   written extent);
//!
//! and, between them, what ext4 guarantees:
//!
//! - a growth is never kept without the journal changes made before it
//!   (the size is committed in a transaction at or after the write);
//! - a write into a block the file does not have on disk yet (a file empty
//!   on disk, or written after a truncation) is never kept without the
//!   journal changes made before it (its block is allocated, and written,
//!   at or after the write); an overwrite of a block on disk is;
//! - a rename over an existing name keeps the growths of the renamed file
//!   made before it (`auto_da_alloc` allocates them before the rename), and
//!   so does an allocation at a close (after a truncation to zero) of its
//!   file's.
//!
//! A crash state is then a set of pending changes closed under these
//! orders: every prefix is one, so every state of the manual's is one of
//! ext4's. Each is named by the set it keeps ([`Keep`]); CRASH lists the
//! prefixes first, as the manual does, then each other set whose
//! directory differs from every one listed before it, by their bits.
//! Their number is bounded by [`limits::CRASH_STATES_MAX`] (`count`, which
//! the supervisor checks after every change and every sync: a sync takes
//! whole files, or names with the growths their renames forced
//! ([`Disk::sync_dir`]), out of the orders, which mostly leaves fewer sets,
//! but not always (a file's growths made durable make its later writes
//! overwrites of a block on disk, which need no journal change), so the
//! bound is checked, not assumed.

use std::collections::{BTreeMap, BTreeSet};

use super::limits;
pub use super::world::Keep;
use super::world::{CrashStates, Disk, DiskOp, prefix_mask};

// A set of pending changes is a `u64`.
const _: () = assert!(limits::DATA_PENDING_MAX <= 64);

/// The orders ext4 keeps among a data directory's pending changes
/// (module docs), as bounds on prefixes: for a journal prefix of j
/// changes, how many of each file's writes and growths may be kept.
struct Orders {
    /// The journal changes, by index in `pending`, oldest first.
    journal: Vec<usize>,
    /// Each file with writes or growths pending, by inode.
    files: Vec<FileOrders>,
}

/// One file's writes and growths, oldest first: each with its index in
/// `pending` and the length of the journal prefix it needs.
#[derive(Default)]
struct FileOrders {
    writes: Vec<(usize, usize)>,
    grows: Vec<(usize, usize)>,
    /// For each journal change that keeps this file's growths made before
    /// it (a rename over a name, an allocation at a close): its place in
    /// the journal and how many growths.
    forced: Vec<(usize, usize)>,
}

impl FileOrders {
    /// How many writes, and the least and most growths, a crash keeping
    /// the first `j` journal changes may keep.
    fn bounds(&self, j: usize) -> (usize, usize, usize) {
        let writes = self.writes.iter().take_while(|(_, need)| *need <= j).count();
        let grows_max = self.grows.iter().take_while(|(_, need)| *need <= j).count();
        let grows_min = self.forced.iter().filter(|(at, _)| *at < j).map(|(_, n)| *n).max().unwrap_or(0);
        debug_assert!(grows_min <= grows_max, "a forced growth needs no journal change after its force");
        (writes, grows_min, grows_max)
    }
}

impl Orders {
    fn of(disk: &Disk) -> Orders {
        let mut journal = Vec::new();
        let mut files: BTreeMap<u32, FileOrders> = BTreeMap::new();
        let renames_over: BTreeMap<usize, u32> = disk.renames_over().into_iter().collect();
        // Files that have a block on disk: durable and not empty. A
        // truncation makes later writes need the journal up to it.
        let on_disk = |inode: u32| disk.files.get(&inode).is_some_and(|b| !b.is_empty());
        let mut truncated: BTreeSet<u32> = BTreeSet::new();
        for (i, op) in disk.pending.iter().enumerate() {
            let before = journal.len();
            match op {
                DiskOp::Write { inode, .. } => {
                    let need = if on_disk(*inode) && !truncated.contains(inode) { 0 } else { before };
                    files.entry(*inode).or_default().writes.push((i, need));
                }
                DiskOp::Grow { inode, .. } => files.entry(*inode).or_default().grows.push((i, before)),
                DiskOp::Truncate { inode, .. } => {
                    truncated.insert(*inode);
                    journal.push(i);
                }
                DiskOp::Allocate { inode } => {
                    let f = files.entry(*inode).or_default();
                    f.forced.push((before, f.grows.len()));
                    journal.push(i);
                }
                DiskOp::Link { .. } | DiskOp::Unlink { .. } => journal.push(i),
                DiskOp::Rename { .. } => {
                    if let Some(&inode) = renames_over.get(&i) {
                        let f = files.entry(inode).or_default();
                        f.forced.push((before, f.grows.len()));
                    }
                    journal.push(i);
                }
            }
        }
        let files = files.into_values().filter(|f| !f.writes.is_empty() || !f.grows.is_empty()).collect();
        Orders { journal, files }
    }

    /// How many crash states there are: for each journal prefix, the
    /// product over files of their choices (saturating).
    fn count(&self) -> usize {
        (0..=self.journal.len())
            .map(|j| {
                self.files.iter().fold(1usize, |n, f| {
                    let (writes, grows_min, grows_max) = f.bounds(j);
                    n.saturating_mul(writes + 1).saturating_mul(grows_max - grows_min + 1)
                })
            })
            .fold(0usize, usize::saturating_add)
    }

    /// Every crash state, as the set it keeps.
    fn sets(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for j in 0..=self.journal.len() {
            let base = self.journal[..j].iter().fold(0u64, |m, &i| m | 1 << i);
            // Each file's choices, then every combination of them.
            let choices: Vec<Vec<u64>> = self
                .files
                .iter()
                .map(|f| {
                    let (writes, grows_min, grows_max) = f.bounds(j);
                    let mut sets = Vec::new();
                    for w in 0..=writes {
                        let w_bits = f.writes[..w].iter().fold(0u64, |m, &(i, _)| m | 1 << i);
                        for g in grows_min..=grows_max {
                            sets.push(f.grows[..g].iter().fold(w_bits, |m, &(i, _)| m | 1 << i));
                        }
                    }
                    sets
                })
                .collect();
            let mut sets = vec![base];
            for file in &choices {
                sets = sets.iter().flat_map(|s| file.iter().map(move |c| s | c)).collect();
            }
            out.extend(sets);
        }
        out
    }

    /// Whether `kept` is a crash state.
    fn allows(&self, kept: u64) -> bool {
        let has = |i: usize| kept >> i & 1 != 0;
        let j = self.journal.iter().take_while(|&&i| has(i)).count();
        if self.journal[j..].iter().any(|&i| has(i)) {
            return false;
        }
        self.files.iter().all(|f| {
            let (writes, grows_min, grows_max) = f.bounds(j);
            let w = f.writes.iter().take_while(|(i, _)| has(*i)).count();
            let g = f.grows.iter().take_while(|(i, _)| has(*i)).count();
            w <= writes
                && (grows_min..=grows_max).contains(&g)
                && f.writes[w..].iter().all(|(i, _)| !has(*i))
                && f.grows[g..].iter().all(|(i, _)| !has(*i))
        })
    }
}

/// How many states a crash of a node with `disk` may leave under `mode`
/// (saturating): what [`limits::CRASH_STATES_MAX`] bounds.
pub fn count(mode: CrashStates, disk: &Disk) -> usize {
    match mode {
        CrashStates::Prefix => disk.pending.len() + 1,
        CrashStates::Ext4 => Orders::of(disk).count(),
    }
}

/// The directory a crash keeping `keep` leaves, as a new life sees it:
/// each durable name with its file's number and contents (a file with no
/// contents recorded is empty).
fn after(disk: &Disk, keep: Keep) -> Vec<(Vec<u8>, u32, Vec<u8>)> {
    let mut d = disk.clone();
    crash(&mut d, keep);
    d.names
        .iter()
        .map(|(name, inode)| (name.clone(), *inode, d.files.get(inode).cloned().unwrap_or_default()))
        .collect()
}

/// The states a crash of a node with `disk` (and changes pending) may
/// leave under `mode`, in the order CRASH lists them: every prefix, then
/// under [`CrashStates::Ext4`] each other state whose directory differs
/// from every one before it, by its bits.
pub fn keeps(mode: CrashStates, disk: &Disk) -> Vec<Keep> {
    let pending = disk.pending.len();
    let mut out: Vec<Keep> = (0..=pending).map(|j| Keep::Oldest(j as u8)).collect();
    if mode == CrashStates::Prefix {
        return out;
    }
    let orders = Orders::of(disk);
    // The supervisor refused the change that would have crossed the limit.
    assert!(orders.count() <= limits::CRASH_STATES_MAX, "crash_states_max crossed in a world");
    let mut sets = orders.sets();
    sets.sort_unstable();
    sets.dedup();
    let mut seen: BTreeSet<_> = out.iter().map(|&k| after(disk, k)).collect();
    for set in sets {
        if set == prefix_mask(set.count_ones() as usize) {
            continue;
        }
        debug_assert!(orders.allows(set));
        if seen.insert(after(disk, Keep::Set(set))) {
            out.push(Keep::Set(set));
        }
    }
    out
}

/// Whether a crash of a node with `disk` may keep `keep` under `mode`:
/// a prefix always, another set under [`CrashStates::Ext4`] if it is
/// closed under ext4's orders.
pub fn allows(mode: CrashStates, disk: &Disk, keep: Keep) -> bool {
    let pending = disk.pending.len();
    match keep {
        Keep::Oldest(j) => j as usize <= pending,
        Keep::Set(m) => {
            mode == CrashStates::Ext4
                && m & !prefix_mask(pending) == 0
                && m != prefix_mask(m.count_ones() as usize)
                && Orders::of(disk).allows(m)
        }
    }
}

/// Carries out a crash that keeps `keep` of `disk`'s pending changes.
pub fn crash(disk: &mut Disk, keep: Keep) {
    disk.crash(keep.mask(), matches!(keep, Keep::Set(_)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(inode: u32, offset: u32, bytes: &[u8]) -> DiskOp {
        DiskOp::Write { inode, offset, bytes: bytes.to_vec() }
    }

    fn grow(inode: u32, len: u32) -> DiskOp {
        DiskOp::Grow { inode, len }
    }

    fn link(name: &str, inode: u32) -> DiskOp {
        DiskOp::Link { name: name.into(), inode }
    }

    fn rename(from: &str, to: &str) -> DiskOp {
        DiskOp::Rename { from: from.into(), to: to.into() }
    }

    /// Every directory a crash may leave, as (name, contents) lists.
    fn states(mode: CrashStates, disk: &Disk) -> BTreeSet<Vec<(String, Vec<u8>)>> {
        keeps(mode, disk)
            .into_iter()
            .map(|k| {
                after(disk, k).into_iter().map(|(n, _, b)| (String::from_utf8_lossy(&n).into_owned(), b)).collect()
            })
            .collect()
    }

    fn dir(entries: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
        entries.iter().map(|(n, b)| (n.to_string(), b.to_vec())).collect()
    }

    #[test]
    fn a_new_file_renamed_to_a_new_name_may_be_empty_or_zeros_under_it() {
        let disk = Disk {
            pending: vec![link("tmp", 0), grow(0, 2), write(0, 0, b"v1"), rename("tmp", "value")],
            ..Disk::default()
        };
        let prefix = states(CrashStates::Prefix, &disk);
        let ext4 = states(CrashStates::Ext4, &disk);
        assert!(!prefix.contains(&dir(&[("value", b"")])));
        assert!(ext4.contains(&dir(&[("value", b"")])), "the rename before the file's size: {ext4:?}");
        assert!(ext4.contains(&dir(&[("value", b"\0\0")])), "the size before the bytes: {ext4:?}");
        assert!(prefix.is_subset(&ext4));
        assert_eq!(ext4.len(), 7, "{ext4:?}");
    }

    #[test]
    fn two_files_are_written_back_in_either_order() {
        let on_disk = |inode: u32, b: &[u8]| (inode, b.to_vec());
        let disk = Disk {
            files: [on_disk(0, b"a"), on_disk(1, b"b")].into(),
            names: [(b"a".to_vec(), 0), (b"b".to_vec(), 1)].into(),
            pending: vec![write(0, 0, b"A"), write(1, 0, b"B")],
            order: Vec::new(),
        };
        assert_eq!(states(CrashStates::Prefix, &disk).len(), 3);
        let ext4 = states(CrashStates::Ext4, &disk);
        assert!(ext4.contains(&dir(&[("a", b"a"), ("b", b"B")])), "the second without the first: {ext4:?}");
        assert_eq!(ext4.len(), 4);
    }

    #[test]
    fn a_rename_over_a_name_keeps_the_size_of_the_file_renamed() {
        let disk = Disk {
            files: [(0, b"old".to_vec())].into(),
            names: [(b"value".to_vec(), 0)].into(),
            pending: vec![link("tmp", 1), grow(1, 2), write(1, 0, b"v1"), rename("tmp", "value")],
            order: Vec::new(),
        };
        let ext4 = states(CrashStates::Ext4, &disk);
        let values: BTreeSet<Vec<u8>> =
            ext4.iter().filter_map(|d| d.iter().find(|(n, _)| n == "value").map(|(_, b)| b.clone())).collect();
        // auto_da_alloc: the old value, the new, or its size in zeros (the
        // extent allocated, not yet written), never an empty file.
        assert_eq!(values, [b"old".to_vec(), b"v1".to_vec(), b"\0\0".to_vec()].into());
    }

    #[test]
    fn writes_after_a_truncation_need_it_and_a_growth_needs_the_journal_before_it() {
        let disk = Disk {
            files: [(0, b"12345".to_vec())].into(),
            names: [(b"f".to_vec(), 0)].into(),
            pending: vec![
                DiskOp::Truncate { inode: 0, len: 0 },
                grow(0, 1),
                write(0, 0, b"9"),
                DiskOp::Allocate { inode: 0 },
                link("g", 1),
            ],
            order: Vec::new(),
        };
        let orders = Orders::of(&disk);
        // The write without the truncation would read "92345": no file
        // system leaves that.
        assert!(!orders.allows(0b00100));
        // The growth alone, after the truncation: one zero.
        assert!(orders.allows(0b00011));
        // The allocation at the close keeps the growth before it...
        assert!(!orders.allows(0b01001));
        assert!(orders.allows(0b01011));
        // ...and so does any journal change after it.
        assert!(!orders.allows(0b11001));
        let f: BTreeSet<Vec<u8>> = states(CrashStates::Ext4, &disk)
            .iter()
            .filter_map(|d| d.iter().find(|(n, _)| n == "f").map(|(_, b)| b.clone()))
            .collect();
        assert_eq!(f, [b"12345".to_vec(), b"".to_vec(), b"\0".to_vec(), b"9".to_vec()].into());
        assert_eq!(count(CrashStates::Ext4, &disk), orders.sets().len());
    }

    #[test]
    fn every_prefix_is_a_state_and_is_listed_first() {
        let disk = Disk {
            pending: vec![link("a", 0), grow(0, 1), write(0, 0, b"x"), link("b", 1), grow(1, 1), write(1, 0, b"y")],
            ..Disk::default()
        };
        let orders = Orders::of(&disk);
        for j in 0..=6 {
            assert!(orders.allows(prefix_mask(j)), "prefix {j}");
        }
        let listed = keeps(CrashStates::Ext4, &disk);
        assert_eq!(listed[..7], (0..=6).map(Keep::Oldest).collect::<Vec<_>>()[..]);
        for k in &listed[7..] {
            assert!(matches!(k, Keep::Set(_)) && allows(CrashStates::Ext4, &disk, *k), "{k:?}");
            assert!(!allows(CrashStates::Prefix, &disk, *k), "{k:?}");
        }
        // b's bytes without a's: the second file written back first.
        assert!(listed.contains(&Keep::Set(0b111011)), "{listed:?}");
    }

    /// Files `0..files`, each durable as `v<f>`, each replaced by a new
    /// file grown and written `grows` times and renamed over it.
    fn replaced(files: u32, grows: u32) -> Disk {
        let mut disk = Disk::default();
        for f in 0..files {
            disk.files.insert(f, b"old".to_vec());
            disk.names.insert(format!("v{f}").into_bytes(), f);
        }
        for f in 0..files {
            let (inode, tmp) = (files + f, format!("t{f}"));
            disk.pending.push(link(&tmp, inode));
            for g in 0..grows {
                disk.pending.push(grow(inode, g + 1));
                disk.pending.push(write(inode, g, b"x"));
            }
            disk.pending.push(rename(&tmp, &format!("v{f}")));
        }
        disk
    }

    #[test]
    fn a_directory_fsync_keeps_the_size_a_rename_over_a_name_committed() {
        let mut disk = replaced(1, 2);
        disk.sync_dir();
        // The rename and the growths auto_da_alloc committed with it; the
        // bytes still pending.
        assert_eq!(disk.pending, vec![write(1, 0, b"x"), write(1, 1, b"x")]);
        let values: BTreeSet<Vec<u8>> = states(CrashStates::Ext4, &disk)
            .iter()
            .filter_map(|d| d.iter().find(|(n, _)| n == "v0").map(|(_, b)| b.clone()))
            .collect();
        assert_eq!(values, [b"\0\0".to_vec(), b"x\0".to_vec(), b"xx".to_vec()].into());
    }

    /// After files replaced by rename, a sync leaves no more crash states
    /// than there were before it. Before `sync_dir` kept the growths the
    /// renames forced, three files replaced, with three growths each, made
    /// 421 states before a directory fsync and 4,096 after it. (In general
    /// a sync may leave a few more, which is why the supervisor checks the
    /// bound after every sync.)
    #[test]
    fn syncs_after_replaces_leave_no_more_crash_states() {
        for files in 1..=4 {
            for grows in 1..=3 {
                let disk = replaced(files, grows);
                let before = count(CrashStates::Ext4, &disk);
                let mut synced = disk.clone();
                synced.sync_dir();
                assert!(count(CrashStates::Ext4, &synced) <= before, "{files} files, {grows} growths: sync_dir");
                for inode in 0..2 * files {
                    let mut synced = disk.clone();
                    synced.sync_file(inode);
                    assert!(count(CrashStates::Ext4, &synced) <= before, "{files} files, {grows} growths: sync_file");
                }
            }
        }
    }
}
