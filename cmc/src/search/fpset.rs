//! The set of fingerprints a search has seen.
//!
//! Open addressing over 128-bit fingerprints in buckets of four (one 64-byte
//! cache line each), probed bucket by bucket. Most lookups touch one cache
//! line, and [`FpSet::prefetch`] lets a search ask for the lines of a whole
//! batch of successors before it looks any of them up, so that their memory
//! latencies overlap.
//!
//! The set is split into [`SHARDS`] tables by the fingerprint's top bits,
//! each grown on its own (doubled when 88% full). So the memory peak of a
//! growth is one shard's old and new tables, a sixty-fourth of the set,
//! not a whole table kept alive beside its double. Shards also let the
//! parallel search insert from several threads, one shard per thread at a
//! time. Fingerprints are uniform, so their bits pick the shard and the
//! bucket directly.
//!
//! The empty slot is 0; a fingerprint that is 0 is stored as 1 (the two
//! collide with probability 2^-128, like any two fingerprints).

/// Slots per bucket: four 16-byte fingerprints fill a 64-byte cache line.
const SLOTS: usize = 4;

/// How many tables the set is split into; a power of two.
pub(crate) const SHARDS: usize = 1 << SHARD_BITS;
const SHARD_BITS: u32 = 6;

/// A shard grows when it is this full (in percent of its slots)...
const LOAD_MAX_PERCENT: usize = 88;

/// ... by this much (in percent of its buckets). Growing by a quarter at
/// nine tenths full kept the table fuller (27 bytes a state at TwoPhase
/// N=8 against 29) but made the search 15 to 30% slower: lookups in a
/// fuller table probe further (docs/PERFORMANCE.md).
const GROWTH_PERCENT: usize = 100;

/// Buckets of a new shard's table.
const BUCKETS_MIN: usize = 16;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([u128; SLOTS]);

/// A set of fingerprints.
pub(crate) struct FpSet {
    shards: Box<[Shard]>,
}

impl Default for FpSet {
    fn default() -> Self {
        FpSet { shards: (0..SHARDS).map(|_| Shard::default()).collect() }
    }
}

/// One table of the set: the fingerprints whose top bits name it.
pub(crate) struct Shard {
    buckets: Table,
    len: usize,
}

impl Default for Shard {
    fn default() -> Self {
        Shard { buckets: Table::zeroed(BUCKETS_MIN), len: 0 }
    }
}

/// A zeroed array of buckets. On Linux, large tables are mapped from the
/// kernel and those of 2 MiB or more advised to use transparent huge pages:
/// lookups land on random buckets, and with 4 KiB pages nearly every one is
/// also a TLB miss.
struct Table {
    ptr: std::ptr::NonNull<Bucket>,
    len: usize,
}

// SAFETY: `Table` owns its allocation exclusively, like a `Vec`.
unsafe impl Send for Table {}
// SAFETY: shared access only reads.
unsafe impl Sync for Table {}

const HUGE_PAGE: usize = 2 << 20;

/// Tables this large are mapped from the kernel ([`Table::mapped`]): from
/// a page on, so that a shard's outgrown tables go back to the kernel
/// rather than fragment the heap (2 MB less at TwoPhase N=7).
const MAPPED_MIN: usize = 4 << 10;

impl Table {
    fn layout(len: usize) -> std::alloc::Layout {
        let bytes = len * std::mem::size_of::<Bucket>();
        let align = std::mem::align_of::<Bucket>();
        std::alloc::Layout::from_size_align(bytes, align)
            .unwrap_or_else(|_| panic!("fingerprint table of {len} buckets"))
    }

    fn zeroed(len: usize) -> Table {
        assert!(len > 0);
        let layout = Self::layout(len);
        #[cfg(target_os = "linux")]
        if layout.size() >= MAPPED_MIN {
            return Self::mapped(len, layout.size());
        }
        // SAFETY: the layout has a non-zero size (len >= 1, buckets are 64 bytes).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Bucket;
        let Some(ptr) = std::ptr::NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        Table { ptr, len }
    }

    /// A large table straight from the kernel, its pages populated at once:
    /// a table is written all over as soon as it is made (growing rehashes
    /// into it), and faulting its pages in one by one costs more than the
    /// rehash on a virtual machine.
    #[cfg(target_os = "linux")]
    fn mapped(len: usize, bytes: usize) -> Table {
        use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags, madvise, mmap_anonymous, munmap};
        let huge = bytes >= HUGE_PAGE;
        // A table of huge pages starts on a huge page: map one more and
        // trim both ends. Its pages are faulted in 2 MiB at a time, so
        // they are not populated up front.
        let mapping = if huge { bytes + HUGE_PAGE } else { bytes };
        let flags = if huge { MapFlags::MAP_PRIVATE } else { MapFlags::MAP_PRIVATE | MapFlags::MAP_POPULATE };
        let size = std::num::NonZeroUsize::new(mapping).expect("tables are not empty");
        // SAFETY: a fresh private anonymous mapping aliases nothing.
        let mapped = unsafe { mmap_anonymous(None, size, ProtFlags::PROT_READ | ProtFlags::PROT_WRITE, flags) };
        let start = mapped.unwrap_or_else(|e| panic!("mapping a fingerprint table of {bytes} bytes: {e}"));
        if !huge {
            return Table { ptr: start.cast(), len };
        }
        let base = start.as_ptr() as usize;
        let head = base.next_multiple_of(HUGE_PAGE) - base;
        // SAFETY: both trimmed ranges lie inside the fresh mapping, outside
        // the table kept; failing to trim only wastes address space.
        unsafe {
            if head > 0 {
                let _ = munmap(start, head);
            }
            let tail = HUGE_PAGE - head;
            if tail > 0 {
                let _ = munmap(start.byte_add(head + bytes), tail);
            }
        }
        // SAFETY: `head < HUGE_PAGE`, inside the mapping.
        let table = unsafe { start.byte_add(head) };
        // SAFETY: the range is exactly the table kept. The advice only
        // changes how it is backed; failure is harmless.
        let _ = unsafe { madvise(table, bytes, MmapAdvise::MADV_HUGEPAGE) };
        Table { ptr: table.cast(), len }
    }

    fn len(&self) -> usize {
        self.len
    }
}

impl std::ops::Deref for Table {
    type Target = [Bucket];
    fn deref(&self) -> &[Bucket] {
        // SAFETY: `ptr` points to `len` initialised (zeroed or written) buckets we own.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for Table {
    fn deref_mut(&mut self) -> &mut [Bucket] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        let layout = Self::layout(self.len);
        #[cfg(target_os = "linux")]
        if layout.size() >= MAPPED_MIN {
            // SAFETY: mapped in `mapped` with this same size, and no
            // reference into it outlives the table.
            let _ = unsafe { nix::sys::mman::munmap(self.ptr.cast(), layout.size()) };
            return;
        }
        // SAFETY: allocated in `zeroed` with this same layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, layout) }
    }
}

fn key(fp: u128) -> u128 {
    if fp == 0 { 1 } else { fp }
}

/// The shard a fingerprint belongs to: its top bits (the bucket is chosen
/// by its low bits, so the two are independent).
#[inline]
pub(crate) fn shard_of(fp: u128) -> usize {
    (key(fp) >> (128 - SHARD_BITS)) as usize
}

impl FpSet {
    /// How many fingerprints the set holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len).sum()
    }

    /// Hints that `fp` will be looked up soon.
    #[inline]
    pub(crate) fn prefetch(&self, fp: u128) {
        self.shards[shard_of(fp)].prefetch(fp);
    }

    #[inline]
    pub(crate) fn contains(&self, fp: u128) -> bool {
        let key = key(fp);
        self.shards[shard_of(key)].contains(key)
    }

    /// Adds `fp`; `true` if it was not there.
    #[inline]
    pub(crate) fn insert(&mut self, fp: u128) -> bool {
        let key = key(fp);
        self.shards[shard_of(key)].insert(key)
    }

    /// The shards, for inserting into several at once (shard `i` holds the
    /// fingerprints with [`shard_of`] `i`).
    pub(crate) fn shards_mut(&mut self) -> &mut [Shard] {
        &mut self.shards
    }

    /// Every fingerprint in the set, in table order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        self.shards.iter().flat_map(|s| s.buckets.iter()).flat_map(|b| b.0).filter(|&k| k != 0)
    }
}

impl Shard {
    /// Hints that `fp`, of this shard, will be looked up soon.
    #[inline]
    pub(crate) fn prefetch(&self, fp: u128) {
        let bucket = &self.buckets[home(key(fp) as u64, self.buckets.len())];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is only a hint; the pointer is to a live bucket.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(bucket as *const Bucket as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = bucket;
    }

    fn contains(&self, key: u128) -> bool {
        let n = self.buckets.len();
        let mut b = home(key as u64, n);
        loop {
            for &slot in &self.buckets[b].0 {
                if slot == key {
                    return true;
                }
                if slot == 0 {
                    return false;
                }
            }
            b += 1;
            if b == n {
                b = 0;
            }
        }
    }

    /// Adds `fp`, which must belong to this shard ([`shard_of`]); `true`
    /// if it was not there.
    pub(crate) fn insert_fp(&mut self, fp: u128) -> bool {
        self.insert(key(fp))
    }

    /// Whether fingerprint `fp` (which falls in this shard) is here.
    pub(crate) fn contains_fp(&self, fp: u128) -> bool {
        self.contains(key(fp))
    }

    fn insert(&mut self, key: u128) -> bool {
        if (self.len + 1) * 100 > self.buckets.len() * SLOTS * LOAD_MAX_PERCENT {
            self.grow();
        }
        let inserted = Self::place(&mut self.buckets, key);
        self.len += inserted as usize;
        inserted
    }

    fn place(buckets: &mut Table, key: u128) -> bool {
        let n = buckets.len();
        let mut b = home(key as u64, n);
        loop {
            for slot in &mut buckets[b].0 {
                if *slot == key {
                    return false;
                }
                if *slot == 0 {
                    *slot = key;
                    return true;
                }
            }
            b += 1;
            if b == n {
                b = 0;
            }
        }
    }

    /// Moves every key to a table [`GROWTH_PERCENT`] bigger.
    fn grow(&mut self) {
        let n = self.buckets.len();
        let mut bigger = Table::zeroed(n + n * GROWTH_PERCENT / 100);
        for bucket in self.buckets.iter() {
            for &slot in &bucket.0 {
                if slot != 0 {
                    Self::place(&mut bigger, slot);
                }
            }
        }
        self.buckets = bigger;
    }
}

/// The bucket `x` falls in among `n`: its high bits scaled to the length
/// (any length, not only powers of two).
#[inline]
fn home(x: u64, n: usize) -> usize {
    ((u128::from(x) * n as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::FpSet;

    #[test]
    fn inserts_finds_and_grows() {
        let mut s = FpSet::default();
        let fps: Vec<u128> =
            (0..100_000u128).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)).collect();
        for &fp in &fps {
            assert!(s.insert(fp));
        }
        for &fp in &fps {
            assert!(!s.insert(fp), "a second insert finds it");
            assert!(s.contains(fp));
        }
        assert_eq!(s.len(), fps.len());
        assert_eq!(s.iter().count(), fps.len());
        assert!(!s.contains(12345));
    }

    #[test]
    fn zero_is_a_fingerprint_too() {
        let mut s = FpSet::default();
        assert!(!s.contains(0));
        assert!(s.insert(0));
        assert!(s.contains(0));
        assert!(!s.insert(0));
    }

    #[test]
    fn clustered_fingerprints_probe_past_full_buckets() {
        let mut s = FpSet::default();
        // Same home bucket for all: forces probing across buckets.
        let fps: Vec<u128> = (1..=50u128).map(|i| i << 64).collect();
        for &fp in &fps {
            assert!(s.insert(fp));
        }
        assert!(fps.iter().all(|&fp| s.contains(fp)));
    }
}
