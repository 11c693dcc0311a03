//! The specification's state: its nine variables in fixed-size arrays of
//! bytes, with no padding and one encoding per value.
//!
//! - Model values are bytes: the inputs are 1..|Inputs| in TLC's order (by
//!   name) and `NotAnInput` is 0.
//! - A `DiskBlock` is three bytes; `InitDB` is all zeros.
//! - Sets of disks (`disksWritten`) and of inputs (`allInput`) are bitmasks.
//! - `blocksRead[p][d]`, a set of `[block, proc]` records, is a 64-bit set
//!   over the finite universe of such records (`spec`'s `record_bit`), little
//!   endian.
//! - Entries for processes and disks beyond the configuration's stay zero.
//!
//! The first five bytes repeat the run's dimensions (N, |Disk|, |Inputs|, K,
//! BallotLayout), the same in every state of a run, so that a state can print
//! itself in TLA+ form: `Debug` has no access to the settings.

use core::fmt;

use zerocopy::byteorder::little_endian::U64;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::DiskPaxosSettings;
use super::spec::{DISKS_MAX, PROCS_MAX};

/// `NotAnInput`.
pub const NOT_AN_INPUT: u8 = 0;

/// `DiskBlock == [mbal, bal, inp]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Block {
    /// `mbal`: the largest ballot the process has begun.
    pub mbal: u8,
    /// `bal`: the largest ballot in which it reached phase 2.
    pub bal: u8,
    /// `inp`: the value it proposed in ballot `bal` (0: `NotAnInput`).
    pub inp: u8,
}

/// `InitDB == [mbal |-> 0, bal |-> 0, inp |-> NotAnInput]`.
pub const INIT_DB: Block = Block { mbal: 0, bal: 0, inp: NOT_AN_INPUT };

/// The run's dimensions, repeated in every state (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Dims {
    /// N, the processes.
    pub procs: u8,
    /// |Disk|.
    pub disks: u8,
    /// |Inputs|.
    pub inputs: u8,
    /// K, ballots per process.
    pub k: u8,
    /// BallotLayout: 0 block, 1 interleaved, 2 asym.
    pub ballot_layout: u8,
}

impl Dims {
    /// The dimensions of a run with settings `s`.
    pub fn of(s: &DiskPaxosSettings) -> Dims {
        Dims { procs: s.procs, disks: s.disks, inputs: s.inputs, k: s.k, ballot_layout: s.ballot_layout }
    }

    /// Settings with these dimensions (and defaults for the rest): enough to
    /// decode and print a state.
    pub fn settings(&self) -> DiskPaxosSettings {
        DiskPaxosSettings {
            procs: self.procs,
            disks: self.disks,
            inputs: self.inputs,
            k: self.k,
            ballot_layout: self.ballot_layout,
            ..DiskPaxosSettings::default()
        }
    }
}

/// `HDiskSynod`'s variables. Processes and disks are 0-based indices.
#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DiskPaxosState {
    /// The run's dimensions (not a variable of the specification).
    pub dims: Dims,
    /// `input[p]`.
    pub input: [u8; PROCS_MAX],
    /// `output[p]`.
    pub output: [u8; PROCS_MAX],
    /// `phase[p]`, 0 to 3.
    pub phase: [u8; PROCS_MAX],
    /// `disksWritten[p]`, bit `d` for disk `d + 1`.
    pub disks_written: [u8; PROCS_MAX],
    /// `dblock[p]`.
    pub dblock: [Block; PROCS_MAX],
    /// `disk[d][p]`.
    pub disk: [[Block; PROCS_MAX]; DISKS_MAX],
    /// `blocksRead[p][d]`, over the universe of `[block, proc]` records.
    pub blocks_read: [[U64; DISKS_MAX]; PROCS_MAX],
    /// `allInput`, bit `v - 1` for input `v`.
    pub all_input: u8,
    /// `chosen`.
    pub chosen: u8,
}

impl DiskPaxosState {
    /// `hasRead(p, d, q)`.
    #[inline]
    pub fn has_read(&self, set: &DiskPaxosSettings, p: usize, d: usize, q: usize) -> bool {
        self.blocks_read[p][d].get() & set.proc_mask(q) != 0
    }

    /// Calls `f` with every record `(proc, block)` of `blocksRead[p][d]`, in
    /// bit order, while it returns true; returns whether it always did.
    #[inline]
    pub fn all_read(
        &self,
        set: &DiskPaxosSettings,
        p: usize,
        d: usize,
        mut f: impl FnMut(usize, Block) -> bool,
    ) -> bool {
        let mut bits = self.blocks_read[p][d].get();
        while bits != 0 {
            let bit = bits.trailing_zeros();
            bits &= bits - 1;
            let (q, b) = set.record_at(bit);
            if !f(q, b) {
                return false;
            }
        }
        true
    }

    /// `x \in allInput`.
    #[inline]
    pub fn in_all_input(&self, v: u8) -> bool {
        v != NOT_AN_INPUT && self.all_input & (1 << (v - 1)) != 0
    }
}

impl fmt::Debug for DiskPaxosState {
    /// The variables in TLA+ form, as TLC prints them, on one line (`{:#?}`:
    /// one per line). Inputs are named `in1`, `in2`, ... in their order;
    /// `cmc calibrate` prints the configuration's own names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = self.dims.settings();
        let names = super::tla::Names::numbered(&set);
        let sep = if f.alternate() { "\n" } else { " " };
        let mut first = true;
        for (var, value) in super::tla::variables(&set, &names, self) {
            if !first {
                f.write_str(sep)?;
            }
            first = false;
            write!(f, "/\\ {var} = {value}")?;
        }
        Ok(())
    }
}
