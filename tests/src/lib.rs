//! Tiny cores for the engine's own tests: each does one thing, so that a
//! test can name the rule it checks. Some misbehave on purpose (they change
//! durable bytes, or are non-deterministic) so that the engine's checks are
//! shown to catch them.

#[cfg(target_os = "linux")]
pub mod ccores;

use cmc::{Context, Core, Effects, Event, Model, NoSettings};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Node 0 sends messages `1..=count` to node 1 at `Init`; node 1 logs each
/// delivery. Records resets and restarts. With `count` = 2 and the property
/// `in-order`, a bug that needs reordering: the bag finds it, FIFO cannot.
pub struct Echo;

cmc::settings! {
    pub struct EchoSettings {
        /// Messages node 0 sends to node 1 at Init.
        count: u8 = 2,
        /// Node 1 also sends one message (0x80) to node 0 at Init.
        reply: u8 = 0,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct EchoState {
    pub got: [u8; 4],
    pub n_got: u8,
    pub resets: u8,
    pub restarts: u8,
}

impl Core for Echo {
    const NAME: &'static str = "test-echo";
    type State = EchoState;
    type Settings = EchoSettings;
    const DURABLE: usize = 0;

    fn step(ctx: &Context<'_, EchoSettings>, s: &mut EchoState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } if ctx.node == 0 => {
                for i in 1..=ctx.settings.count {
                    out.send(1, &[i]);
                }
            }
            Event::Init { .. } if ctx.node == 1 && ctx.settings.reply != 0 => out.send(0, &[0x80]),
            Event::Deliver { msg, .. } => {
                if (s.n_got as usize) < s.got.len() {
                    s.got[s.n_got as usize] = msg[0];
                }
                s.n_got = s.n_got.saturating_add(1);
            }
            Event::Reset { peer } => s.resets |= 1 << peer,
            Event::Restart => s.restarts += 1,
            _ => {}
        }
    }
}

pub fn echo(count: u8) -> Model<Echo> {
    Model::<Echo>::new(EchoSettings { count, reply: 0 }).nodes(2).always("in-order", |w| {
        let s = w.state(1);
        let n = (s.n_got as usize).min(s.got.len());
        s.got[..n].windows(2).all(|p| p[0] < p[1])
    })
}

/// Timers and wakes: at `Init`, arms timer 3 twice, arms and cancels timer
/// 5, and wakes waiter 2 twice. Records what fired and what was woken.
pub struct TimerWake;

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TimerWakeState {
    pub fired: [u8; 2],
    pub woken: u8,
}

impl Core for TimerWake {
    const NAME: &'static str = "test-timer-wake";
    type State = TimerWakeState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut TimerWakeState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } => {
                out.arm(3);
                out.arm(3);
                out.arm(5);
                out.cancel(5);
                out.wake(2);
                out.wake(2);
            }
            Event::Fire { timer } => s.fired[timer as usize / 8] |= 1 << (timer % 8),
            Event::Wake { waiter } => s.woken |= 1 << waiter,
            _ => {}
        }
    }
}

/// Durability: node 0 persists records 1, 2, 3 at `Init`, arms timer 0 and
/// sends 9 to node 1; node 1 sends 8 to node 0. `apply_persist` appends a
/// record to the durable log. Clients get a reply with their index.
pub struct Disk;

/// The first four bytes (the log) are durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DiskState {
    pub log_len: u8,
    pub log: [u8; 3],
    pub flushed: u8,
    pub restarts: u8,
    pub clients: u8,
    pub resets: u8,
}

impl Core for Disk {
    const NAME: &'static str = "test-disk";
    type State = DiskState;
    type Settings = NoSettings;
    const DURABLE: usize = 4;

    fn step(ctx: &Context<'_, NoSettings>, s: &mut DiskState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } if ctx.node == 0 => {
                out.persist(&[1]);
                out.persist(&[2]);
                out.persist(&[3]);
                out.arm(0);
                out.send(1, &[9]);
            }
            Event::Init { .. } => out.send(0, &[8]),
            Event::Flushed => s.flushed += 1,
            Event::Restart => s.restarts += 1,
            Event::Reset { peer } => s.resets |= 1 << peer,
            Event::Client { index } => {
                s.clients += 1;
                out.reply(&[ctx.node, index]);
            }
            _ => {}
        }
    }

    fn apply_persist(_: &Context<'_, NoSettings>, s: &mut DiskState, record: &[u8]) {
        if (s.log_len as usize) < s.log.len() {
            s.log[s.log_len as usize] = record[0];
            s.log_len += 1;
        }
    }
}

/// Breaks the durability rule: `step` writes a durable byte at `Init` of
/// node 1, or (`volatile_persist`) `apply_persist` writes a volatile byte.
pub struct Cheater;

cmc::settings! {
    pub struct CheaterSettings {
        /// 0: step writes durable bytes; 1: apply_persist writes volatile bytes.
        mode: u8 = 0,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CheaterState {
    pub durable: u8,
    pub volatile: u8,
}

impl Core for Cheater {
    const NAME: &'static str = "test-cheater";
    type State = CheaterState;
    type Settings = CheaterSettings;
    const DURABLE: usize = 1;

    fn step(ctx: &Context<'_, CheaterSettings>, s: &mut CheaterState, event: Event<'_>, out: &mut Effects) {
        if let Event::Init { .. } = event {
            if ctx.settings.mode == 0 && ctx.node == 1 {
                s.durable = 1;
            } else {
                out.persist(&[7]);
            }
        }
    }

    fn apply_persist(ctx: &Context<'_, CheaterSettings>, s: &mut CheaterState, record: &[u8]) {
        s.durable = record[0];
        if ctx.settings.mode == 1 {
            s.volatile = 1;
        }
    }
}

/// Non-deterministic on purpose: reads a global counter. Only `--det`
/// catches this (the purity gate would reject the global).
pub struct Nondet;

static NONDET_COUNTER: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NondetState {
    pub x: u8,
}

impl Core for Nondet {
    const NAME: &'static str = "test-nondet";
    type State = NondetState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut NondetState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } => out.arm(0),
            Event::Fire { .. } => s.x = NONDET_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2,
            _ => {}
        }
    }
}

/// Crosses limits on demand. Node 0 arms timer 0 at `Init`; every `Fire`
/// emits up to 15 of the chosen effect and re-arms until `amount` are out.
/// Modes 1 to 5 instead emit one oversized thing at `Init`.
pub struct Spammer;

pub mod spam {
    #![allow(missing_docs)]
    /// `Init`: send one message of `amount` bytes to node 1.
    pub const MESSAGE_BYTES: u16 = 1;
    /// `Init`: emit `amount` effects in one step.
    pub const EFFECTS: u16 = 2;
    /// `Init`: arm timer number `amount`.
    pub const TIMER: u16 = 3;
    /// `Init`: wake waiter number `amount`.
    pub const WAITER: u16 = 4;
    /// `Init`: persist one record of `amount` bytes.
    pub const PERSIST_BYTES: u16 = 5;
    /// Fires: send `amount` messages to node 1 in all.
    pub const CHANNEL: u16 = 10;
    /// Fires: queue `amount` persists in all.
    pub const PERSISTS: u16 = 11;
    /// Fires: reply `amount` times in all.
    pub const REPLIES: u16 = 12;
    /// Fires: send `amount` distinct messages, round robin to nodes 1..n.
    pub const SPREAD: u16 = 13;
}

cmc::settings! {
    pub struct SpammerSettings {
        /// What to overflow (see `spam`).
        mode: u16 = 0,
        /// How much.
        amount: u16 = 0,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SpammerState {
    pub sent: [u8; 2],
}

impl Core for Spammer {
    const NAME: &'static str = "test-spammer";
    type State = SpammerState;
    type Settings = SpammerSettings;
    const DURABLE: usize = 0;

    fn step(ctx: &Context<'_, SpammerSettings>, s: &mut SpammerState, event: Event<'_>, out: &mut Effects) {
        let st = ctx.settings;
        if ctx.node != 0 {
            return;
        }
        let bytes = [0u8; 64];
        let amount = st.amount as usize;
        match event {
            Event::Init { .. } => match st.mode {
                spam::MESSAGE_BYTES => out.send(1, &bytes[..amount.min(64)]),
                spam::EFFECTS => (0..amount).for_each(|_| out.arm(0)),
                spam::TIMER => out.arm(amount as u8),
                spam::WAITER => out.wake(amount as u8),
                spam::PERSIST_BYTES => out.persist(&bytes[..amount.min(64)]),
                _ => out.arm(0),
            },
            Event::Fire { .. } => {
                let mut sent = u16::from_le_bytes(s.sent);
                let mut burst = 0;
                while (sent as usize) < amount && burst < 15 {
                    let tag = sent.to_le_bytes();
                    match st.mode {
                        spam::CHANNEL => out.send(1, &[1]),
                        spam::PERSISTS => out.persist(&[1]),
                        spam::REPLIES => out.reply(&[1]),
                        spam::SPREAD => out.send(1 + (sent % (ctx.nodes as u16 - 1)) as u8, &tag),
                        _ => {}
                    }
                    sent += 1;
                    burst += 1;
                }
                s.sent = sent.to_le_bytes();
                if (sent as usize) < amount {
                    out.arm(0);
                }
            }
            _ => {}
        }
    }
}

pub fn spammer(mode: u16, amount: u16, nodes: u8) -> Model<Spammer> {
    Model::<Spammer>::new(SpammerSettings { mode, amount }).nodes(nodes)
}

/// A counter that a timer drives from 0 to 3: a line of four worlds.
pub struct Counter;

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CounterState {
    pub n: u8,
}

impl Core for Counter {
    const NAME: &'static str = "test-counter";
    type State = CounterState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut CounterState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } => out.arm(0),
            Event::Fire { .. } => {
                s.n += 1;
                if s.n < 3 {
                    out.arm(0);
                }
            }
            _ => {}
        }
    }
}

/// Non-deterministic in `apply_persist` only: node 0 persists one record at
/// `Init`, and applying it stores a global counter in the durable byte.
/// `step` is deterministic, so only a `--det` that also runs
/// `apply_persist` twice catches it.
pub struct NondetPersist;

static NONDET_PERSIST_COUNTER: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The first byte is durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NondetPersistState {
    pub durable: u8,
    pub flushed: u8,
}

impl Core for NondetPersist {
    const NAME: &'static str = "test-nondet-persist";
    type State = NondetPersistState;
    type Settings = NoSettings;
    const DURABLE: usize = 1;

    fn step(_: &Context<'_, NoSettings>, s: &mut NondetPersistState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } => out.persist(&[1]),
            Event::Flushed => s.flushed = 1,
            _ => {}
        }
    }

    fn apply_persist(_: &Context<'_, NoSettings>, s: &mut NondetPersistState, _: &[u8]) {
        s.durable = NONDET_PERSIST_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A direct-actions core with `initial_states` initial worlds (`Init {
/// variant }` stores the variant) and no actions: every world is initial.
pub struct Variants;

cmc::settings! {
    pub struct VariantsSettings {
        /// How many initial worlds.
        initial_states: u8 = 10,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct VariantsState {
    pub variant: u8,
}

impl Core for Variants {
    const NAME: &'static str = "test-variants";
    type State = VariantsState;
    type Settings = VariantsSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, VariantsSettings>, s: &mut VariantsState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { variant } => s.variant = variant as u8,
            _ => out.not_enabled(),
        }
    }

    fn direct_actions(settings: &VariantsSettings) -> Option<cmc::DirectActions> {
        Some(cmc::DirectActions { actions: 0, initial_states: u32::from(settings.initial_states) })
    }
}

pub fn variants(initial_states: u8) -> Model<Variants> {
    Model::<Variants>::new(VariantsSettings { initial_states })
}

/// A direct-actions core with many initial worlds, more than a 16-bit
/// action position can name (as a TLA+ port's `Init` over a set of
/// values): initial world `x` is `{ x, marked: 0 }` for each `x <
/// initial_states`. Action 0 marks an unmarked world; action 1 flips the
/// low bit of a marked world's `x` (when that stays below
/// `initial_states`), which reaches a world seen before: its neighbour's
/// marked world. With an even number n of initial worlds: 2n distinct, 3n
/// generated, depth 2.
pub struct ManyRoots;

cmc::settings! {
    pub struct ManyRootsSettings {
        /// How many initial worlds.
        initial_states: u32 = 1 << 17,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ManyRootsState {
    pub x: u32,
    pub marked: u32,
}

impl Core for ManyRoots {
    const NAME: &'static str = "test-many-roots";
    type State = ManyRootsState;
    type Settings = ManyRootsSettings;
    const DURABLE: usize = 0;

    fn step(ctx: &Context<'_, ManyRootsSettings>, s: &mut ManyRootsState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { variant } => *s = ManyRootsState { x: variant, marked: 0 },
            Event::Action { index: 0 } if s.marked == 0 => s.marked = 1,
            Event::Action { index: 1 } if s.marked == 1 && (s.x ^ 1) < ctx.settings.initial_states => s.x ^= 1,
            _ => out.not_enabled(),
        }
    }

    fn direct_actions(settings: &ManyRootsSettings) -> Option<cmc::DirectActions> {
        Some(cmc::DirectActions { actions: 2, initial_states: settings.initial_states })
    }
}

pub fn many_roots(initial_states: u32) -> Model<ManyRoots> {
    Model::<ManyRoots>::new(ManyRootsSettings { initial_states })
}

/// A timer that re-arms forever: node 0 toggles a bit on every firing, so
/// there are two worlds and neither is without an enabled action.
pub struct Ticker;

#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TickerState {
    pub bit: u8,
}

impl Core for Ticker {
    const NAME: &'static str = "test-ticker";
    type State = TickerState;
    type Settings = NoSettings;
    const DURABLE: usize = 0;

    fn step(_: &Context<'_, NoSettings>, s: &mut TickerState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } => out.arm(0),
            Event::Fire { .. } => {
                s.bit ^= 1;
                out.arm(0);
            }
            _ => {}
        }
    }
}
