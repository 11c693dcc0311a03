//! The constants of a configuration, as functions of the settings:
//! `MCDiskPaxos`'s `Ballot(p)` (from `K` and `BallotLayout`) and
//! `IsMajority(S)` (from `QuorumKind`), the number of initial states, and the
//! finite universe of `[block, proc]` records that `blocksRead`'s bitsets
//! range over. Also the limits of the state's fixed size, checked before a
//! search starts.
//!
//! Processes and disks are 0-based here (TLA+ process `p + 1`, disk
//! `d + 1`); ballots are the specification's numbers.

use super::DiskPaxosSettings;
use super::state::Block;

/// Processes the state has room for.
pub const PROCS_MAX: usize = 4;
/// Disks the state has room for.
pub const DISKS_MAX: usize = 4;
/// Inputs `allInput`'s bitmask has room for.
pub const INPUTS_MAX: usize = 8;
/// Bits of one `blocksRead[p][d]` set.
pub const UNIVERSE_BITS_MAX: usize = 64;

/// `BallotLayout`.
pub mod layout {
    /// `Ballot(p) = p*K .. p*K+K-1`.
    pub const BLOCK: u8 = 0;
    /// `Ballot(p) = {p + N*i : i \in 0..K-1}`.
    pub const INTERLEAVED: u8 = 1;
    /// Process 1 owns `1..K`, process `p > 1` the single ballot `K+p-1`.
    pub const ASYM: u8 = 2;
    /// The configuration strings, by value.
    pub const NAMES: [&str; 3] = ["block", "interleaved", "asym"];
}

/// `QuorumKind`.
pub mod quorum {
    /// `2 * Cardinality(S) > Cardinality(Disk)`.
    pub const MAJORITY: u8 = 0;
    /// `1 \in S`.
    pub const DISK1: u8 = 1;
    /// `Cardinality(S) * 2 > N`.
    pub const PROC_N: u8 = 2;
    /// `S # {}` (quorums need not intersect).
    pub const ANY: u8 = 3;
    /// The configuration strings, by value.
    pub const NAMES: [&str; 4] = ["majority", "disk1", "procN", "any"];
}

impl DiskPaxosSettings {
    /// N.
    #[inline]
    pub fn n(&self) -> usize {
        self.procs as usize
    }

    /// |Disk|.
    #[inline]
    pub fn d(&self) -> usize {
        self.disks as usize
    }

    /// |Inputs|.
    #[inline]
    pub fn i(&self) -> usize {
        self.inputs as usize
    }

    /// |Ballot(p)|.
    #[inline]
    pub fn ballot_count(&self, p: usize) -> usize {
        if self.ballot_layout == layout::ASYM && p > 0 { 1 } else { self.k as usize }
    }

    /// The `j`-th smallest ballot of process `p`, unbounded (for checking
    /// that it fits the state's byte).
    fn ballot_wide(&self, p: usize, j: usize) -> u32 {
        let (p1, k, n, j) = (p as u32 + 1, self.k as u32, self.procs as u32, j as u32);
        match self.ballot_layout {
            layout::BLOCK => p1 * k + j,
            layout::INTERLEAVED => p1 + n * j,
            _ if p1 == 1 => 1 + j,
            _ => k + p1 - 1,
        }
    }

    /// The `j`-th smallest ballot of process `p` (`j < ballot_count(p)`),
    /// which is also the order in which TLC enumerates `\E b \in Ballot(p)`.
    #[inline]
    pub fn ballot(&self, p: usize, j: usize) -> u8 {
        self.ballot_wide(p, j) as u8
    }

    /// The position of `b` in `{0} \cup Ballot(p)`, ascending: 0 for ballot
    /// 0, `j + 1` for `ballot(p, j)`; `None` if `b` is not one of them.
    #[inline]
    pub fn ballot_rank(&self, p: usize, b: u8) -> Option<usize> {
        if b == 0 {
            return Some(0);
        }
        (0..self.ballot_count(p)).find(|&j| self.ballot(p, j) == b).map(|j| j + 1)
    }

    /// `b \in UNION {Ballot(p) : p \in Proc} \cup {0}`.
    pub fn is_ballot_or_zero(&self, b: u8) -> bool {
        b == 0 || (0..self.n()).any(|p| self.ballot_rank(p, b).is_some())
    }

    /// `IsMajority(S)`, for `S` a bitmask over the disks.
    #[inline]
    pub fn is_majority(&self, set: u8) -> bool {
        let c = set.count_ones() as usize;
        match self.quorum_kind {
            quorum::MAJORITY => 2 * c > self.d(),
            quorum::DISK1 => set & 1 != 0,
            quorum::PROC_N => 2 * c > self.n(),
            _ => set != 0,
        }
    }

    /// `Disk` as a bitmask.
    #[inline]
    pub fn disk_mask(&self) -> u8 {
        ((1u16 << self.disks) - 1) as u8
    }

    /// `Inputs` as a bitmask (bit `v - 1` for input `v`).
    #[inline]
    pub fn input_mask(&self) -> u8 {
        ((1u16 << self.inputs) - 1) as u8
    }

    /// |Inputs|^N: `input \in [Proc -> Inputs]`.
    pub fn initial_states(&self) -> u32 {
        (self.inputs as u32).pow(self.procs as u32)
    }

    /// How TLC orders the value `v` (an input 1..=inputs, or 0 for
    /// `NotAnInput`): model values by name, so `NotAnInput` sorts after
    /// `not_an_input_rank` of the inputs.
    #[inline]
    pub fn value_order(&self, v: u8) -> u16 {
        if v == 0 { 2 * self.not_an_input_rank as u16 } else { 2 * (v as u16 - 1) + 1 }
    }

    /// Records `[block |-> b, proc |-> q]` with `b` a block of process `q`:
    /// `mbal` and `bal` in `{0} \cup Ballot(q)`, `inp` in `Inputs \cup
    /// {NotAnInput}`.
    #[inline]
    pub fn universe_size(&self, q: usize) -> usize {
        let k = self.ballot_count(q) + 1;
        k * k * (self.i() + 1)
    }

    /// The first bit of process `q`'s records.
    #[inline]
    pub fn universe_offset(&self, q: usize) -> usize {
        (0..q).map(|r| self.universe_size(r)).sum()
    }

    /// Bits of the whole universe.
    pub fn universe_bits(&self) -> usize {
        self.universe_offset(self.n())
    }

    /// The bits of records whose `proc` is `q`: `hasRead(p, d, q)` is
    /// `blocksRead[p][d] & proc_mask(q) # 0`.
    #[inline]
    pub fn proc_mask(&self, q: usize) -> u64 {
        let size = self.universe_size(q);
        let ones = if size >= 64 { u64::MAX } else { (1u64 << size) - 1 };
        ones << self.universe_offset(q)
    }

    /// The bit of `[block |-> b, proc |-> q]`, or `None` when `b` is not a
    /// block of process `q` (never the case in a reachable state: every block
    /// of `q` is built from `q`'s ballots).
    #[inline]
    pub fn record_bit(&self, q: usize, b: Block) -> Option<u32> {
        let k = self.ballot_count(q) + 1;
        let m = self.ballot_rank(q, b.mbal)?;
        let l = self.ballot_rank(q, b.bal)?;
        if b.inp as usize > self.i() {
            return None;
        }
        Some((self.universe_offset(q) + (m * k + l) * (self.i() + 1) + b.inp as usize) as u32)
    }

    /// The record of bit `bit` (which must be below `universe_bits()`).
    #[inline]
    pub fn record_at(&self, bit: u32) -> (usize, Block) {
        let mut local = bit as usize;
        let mut q = 0;
        while q + 1 < self.n() && local >= self.universe_size(q) {
            local -= self.universe_size(q);
            q += 1;
        }
        let k = self.ballot_count(q) + 1;
        let inp = (local % (self.i() + 1)) as u8;
        let rest = local / (self.i() + 1);
        let (m, l) = (rest / k, rest % k);
        let ballot = |rank: usize| if rank == 0 { 0 } else { self.ballot(q, rank - 1) };
        (q, Block { mbal: ballot(m), bal: ballot(l), inp })
    }

    /// Checks the limits of the state and the specification's `ASSUME`s;
    /// the message names the setting.
    pub fn check(&self) -> Result<(), String> {
        let in_range = |key: &str, v: u8, lo: usize, hi: usize| {
            if (lo..=hi).contains(&(v as usize)) {
                Ok(())
            } else {
                Err(format!("setting `{key}` = {v} ({lo} to {hi})"))
            }
        };
        in_range("procs", self.procs, 1, PROCS_MAX)?;
        in_range("disks", self.disks, 1, DISKS_MAX)?;
        in_range("inputs", self.inputs, 1, INPUTS_MAX)?;
        in_range("k", self.k, 1, u8::MAX as usize)?;
        in_range("ballot_layout", self.ballot_layout, 0, layout::NAMES.len() - 1)?;
        in_range("quorum_kind", self.quorum_kind, 0, quorum::NAMES.len() - 1)?;
        in_range("not_an_input_rank", self.not_an_input_rank, 0, self.i())?;
        for p in 0..self.n() {
            let top = self.ballot_wide(p, self.ballot_count(p) - 1);
            if top > u8::MAX as u32 {
                return Err(format!(
                    "settings `k` = {} and `ballot_layout` = {} give process {} ballot {top} (limit: ballots up to 255)",
                    self.k,
                    self.ballot_layout,
                    p + 1
                ));
            }
        }
        let bits = self.universe_bits();
        if bits > UNIVERSE_BITS_MAX {
            return Err(format!(
                "settings `procs`, `k` and `inputs` give {bits} possible [block, proc] records \
                 (limit: {UNIVERSE_BITS_MAX}, the bits of one blocksRead set)"
            ));
        }
        // DiskSynod's ASSUME IsMajority(Disk); the others hold for every
        // layout and quorum kind with K >= 1.
        if !self.is_majority(self.disk_mask()) {
            return Err(format!(
                "setting `quorum_kind` = {} makes IsMajority(Disk) false (DiskSynod's ASSUME)",
                self.quorum_kind
            ));
        }
        Ok(())
    }
}
