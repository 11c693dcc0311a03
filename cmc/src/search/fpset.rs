//! The set of fingerprints a search has seen.
//!
//! An open-addressing table of 128-bit fingerprints in buckets of four (one
//! 64-byte cache line each), probed bucket by bucket. Most lookups touch one
//! cache line, and [`FpSet::prefetch`] lets a search ask for the lines of a
//! whole batch of successors before it looks any of them up, so that their
//! memory latencies overlap. Fingerprints are uniform, so their low bits
//! pick the bucket directly.
//!
//! The empty slot is 0; a fingerprint that is 0 is stored as 1 (the two
//! collide with probability 2^-128, like any two fingerprints).

/// Slots per bucket: four 16-byte fingerprints fill a 64-byte cache line.
const SLOTS: usize = 4;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([u128; SLOTS]);

/// A set of fingerprints.
pub(crate) struct FpSet {
    buckets: Table,
    len: usize,
}

impl Default for FpSet {
    fn default() -> Self {
        FpSet { buckets: Table::zeroed(1024), len: 0 }
    }
}

/// A zeroed array of buckets. Large tables are aligned to 2 MiB and, on
/// Linux, advised to use transparent huge pages: lookups land on random
/// buckets, and with 4 KiB pages nearly every one is also a TLB miss.
struct Table {
    ptr: std::ptr::NonNull<Bucket>,
    len: usize,
}

// SAFETY: `Table` owns its allocation exclusively, like a `Vec`.
unsafe impl Send for Table {}
// SAFETY: shared access only reads.
unsafe impl Sync for Table {}

const HUGE_PAGE: usize = 2 << 20;

impl Table {
    fn layout(len: usize) -> std::alloc::Layout {
        let bytes = len * std::mem::size_of::<Bucket>();
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { std::mem::align_of::<Bucket>() };
        std::alloc::Layout::from_size_align(bytes, align)
            .unwrap_or_else(|_| panic!("fingerprint table of {len} buckets"))
    }

    fn zeroed(len: usize) -> Table {
        assert!(len.is_power_of_two());
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size (len >= 1, buckets are 64 bytes).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Bucket;
        let Some(ptr) = std::ptr::NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        #[cfg(target_os = "linux")]
        if layout.size() >= HUGE_PAGE {
            use nix::sys::mman::{MmapAdvise, madvise};
            // SAFETY: the range is exactly our fresh allocation. The advice
            // only changes how it is backed; failure is harmless.
            let _ = unsafe { madvise(ptr.cast(), layout.size(), MmapAdvise::MADV_HUGEPAGE) };
        }
        Table { ptr, len }
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
        // SAFETY: allocated in `zeroed` with this same layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr() as *mut u8, Self::layout(self.len)) }
    }
}

impl FpSet {
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn key(fp: u128) -> u128 {
        if fp == 0 { 1 } else { fp }
    }

    fn home(&self, fp: u128) -> usize {
        (fp as usize) & (self.buckets.len() - 1)
    }

    /// Hints that `fp` will be looked up soon.
    #[inline]
    pub(crate) fn prefetch(&self, fp: u128) {
        let bucket = &self.buckets[self.home(Self::key(fp))];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetching is only a hint; the pointer is to a live bucket.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(bucket as *const Bucket as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = bucket;
    }

    pub(crate) fn contains(&self, fp: u128) -> bool {
        let key = Self::key(fp);
        let mask = self.buckets.len() - 1;
        let mut b = self.home(key);
        loop {
            for &slot in &self.buckets[b].0 {
                if slot == key {
                    return true;
                }
                if slot == 0 {
                    return false;
                }
            }
            b = (b + 1) & mask;
        }
    }

    /// Adds `fp`; `true` if it was not there.
    pub(crate) fn insert(&mut self, fp: u128) -> bool {
        // Grow at 7/8 full: buckets of four keep probe sequences short there.
        if (self.len + 1) * 8 > self.buckets.len() * SLOTS * 7 {
            self.grow();
        }
        let inserted = Self::place(&mut self.buckets, Self::key(fp));
        self.len += inserted as usize;
        inserted
    }

    fn place(buckets: &mut [Bucket], key: u128) -> bool {
        let mask = buckets.len() - 1;
        let mut b = (key as usize) & mask;
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
            b = (b + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let mut bigger = Table::zeroed(self.buckets.len() * 2);
        for bucket in self.buckets.iter() {
            for &slot in &bucket.0 {
                if slot != 0 {
                    Self::place(&mut bigger, slot);
                }
            }
        }
        self.buckets = bigger;
    }

    /// Every fingerprint in the set, in table order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        self.buckets.iter().flat_map(|b| b.0.iter().copied()).filter(|&s| s != 0)
    }
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
