//! The core contract: what a protocol model implements, and the only ways it
//! can talk to the engine.
//!
//! A core is a step function over a fixed-size, pointer-free state per node.
//! It owns nothing but that state: the network, the timers, the disk, crashes
//! and clients belong to the engine. A step receives one [`Event`] and may emit
//! up to [`limits::EFFECTS_PER_STEP`] effects through [`Effects`]'s methods;
//! the buffer's internals are private, so there is no other way to act.
//!
//! This module does not run anything: the world and the actions live in
//! `world` and `action`, the searches in `search`.

use core::fmt;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::symmetry::{NodeSet, Renaming};

/// A node's number, `0..nodes`.
pub type NodeId = u8;

/// The limits of the in-process front end (manual, LIMITS). Crossing any of
/// them is an error naming the limit, never a truncation.
pub mod limits {
    /// Nodes in a model.
    pub const NODES_MAX: usize = 8;
    /// Bytes in one message, persist record or reply.
    pub const PAYLOAD_BYTES_MAX: usize = 32;
    /// Effects one step may emit.
    pub const EFFECTS_PER_STEP: usize = 16;
    /// Possible actions in one world.
    pub const ACTIONS_PER_STATE: usize = 2048;
    /// Timers per node (`arm(t)` with `t < TIMERS_MAX`).
    pub const TIMERS_MAX: usize = 16;
    /// Waiters per node (`wake(w)` with `w < WAITERS_MAX`).
    pub const WAITERS_MAX: usize = 8;
    /// Bytes of core settings.
    pub const SETTINGS_BYTES_MAX: usize = 256;
    /// Every budget, and every queue the world holds: messages in flight on
    /// one channel, pending persists of one node, replies in the ghost log.
    pub const BUDGET_MAX: usize = 255;
    /// See [`BUDGET_MAX`].
    pub const QUEUE_MAX: usize = 255;
}

/// What a step is told happened. One event is one call to [`Core::step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// Build the initial state. Message-passing cores get it once per node,
    /// in node order, with `variant` 0. A direct-actions core gets it with
    /// each `variant < DirectActions::initial_states`, one initial world each.
    Init {
        /// Which initial state to build: 0 for a message-passing core.
        variant: u32,
    },
    /// The oldest message from `from` on this node's channel (any copy, in
    /// bag mode) arrives.
    Deliver {
        /// The node that sent it.
        from: NodeId,
        /// Its bytes, at most [`limits::PAYLOAD_BYTES_MAX`].
        msg: &'a [u8],
    },
    /// Armed timer `timer` fired; it is disarmed.
    Fire {
        /// The timer, below [`limits::TIMERS_MAX`].
        timer: u8,
    },
    /// The oldest pending persist reached disk; `apply_persist` has run.
    Flushed,
    /// A wake of waiter `waiter` emitted earlier is delivered.
    Wake {
        /// The waiter, below [`limits::WAITERS_MAX`].
        waiter: u8,
    },
    /// A client request arrives.
    Client {
        /// This node's requests before this one: 0 for its first.
        index: u8,
    },
    /// The node crashed and restarts: volatile bytes are zero, durable bytes
    /// hold what reached disk.
    Restart,
    /// The connection to `peer` was reset (a drop in FIFO mode, or a crash
    /// at either end).
    Reset {
        /// The node at the connection's other end.
        peer: NodeId,
    },
    /// Direct-actions cores only: take `Next` disjunct number `index`.
    Action {
        /// The action, below [`DirectActions::actions`].
        index: u16,
    },
}

impl fmt::Display for Event<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Init { variant } => write!(f, "Init({variant})"),
            Event::Deliver { from, msg } => write!(f, "Deliver(from {from}, {} bytes)", msg.len()),
            Event::Fire { timer } => write!(f, "Fire({timer})"),
            Event::Flushed => write!(f, "Flushed"),
            Event::Wake { waiter } => write!(f, "Wake({waiter})"),
            Event::Client { index } => write!(f, "Client({index})"),
            Event::Restart => write!(f, "Restart"),
            Event::Reset { peer } => write!(f, "Reset(peer {peer})"),
            Event::Action { index } => write!(f, "Action({index})"),
        }
    }
}

/// What a step may see besides its own state: which node it is, how many
/// there are, and the run's settings. All of it is fixed for a run.
#[derive(Debug)]
pub struct Context<'a, S> {
    /// The node stepping, below `nodes`.
    pub node: NodeId,
    /// How many nodes the model has, 1 to [`limits::NODES_MAX`].
    pub nodes: u8,
    /// The core's settings for this run.
    pub settings: &'a S,
}

/// What [`Core::show_payload`] is asked to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadKind {
    /// A message, sent from one node to another.
    Message {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
    },
    /// A persist record of a node, pending or applied.
    Persist {
        /// The node whose record it is.
        node: NodeId,
    },
    /// A reply a node emitted into the ghost log.
    Reply {
        /// The node that replied.
        node: NodeId,
    },
}

/// The shape of a direct-actions (calibration) core: the world is one state,
/// and the possible actions are the specification's `Next` disjuncts with
/// their witnesses, one index each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirectActions {
    /// Action indices `0..actions` are tried in every state, in order.
    pub actions: u16,
    /// Initial states, built by `Init { variant }` for each variant.
    pub initial_states: u32,
}

/// A protocol model the engine can check.
///
/// The per-node state is plain bytes to the engine: `zerocopy`'s derives make
/// the compiler reject padding (`IntoBytes`) and guarantee that every byte
/// pattern is a state (`FromBytes`), so the world's bytes are the state and
/// nothing else is.
///
/// A core that answers each client request once it is durable: a request
/// queues a persist record, [`Core::apply_persist`] counts it in the
/// durable byte, and the reply waits for [`Event::Flushed`]. With two
/// requests and a crash (which may lose a pending record), no reply ever
/// runs ahead of the disk:
///
/// ```
/// use cmc::{Context, Core, Effects, Event, Model, NoSettings, Options, Verdict, check};
/// use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
///
/// struct Counter;
///
/// #[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
/// #[repr(C)]
/// struct CounterState {
///     /// Durable: requests that reached the disk.
///     saved: u8,
/// }
///
/// impl Core for Counter {
///     const NAME: &'static str = "counter";
///     type State = CounterState;
///     type Settings = NoSettings;
///     const DURABLE: usize = 1;
///
///     fn step(_ctx: &Context<'_, NoSettings>, state: &mut CounterState, event: Event<'_>, out: &mut Effects) {
///         match event {
///             Event::Client { .. } => out.persist(&[1]),
///             Event::Flushed => out.reply(&[state.saved]),
///             _ => {}
///         }
///     }
///
///     fn apply_persist(_ctx: &Context<'_, NoSettings>, state: &mut CounterState, record: &[u8]) {
///         state.saved += record[0];
///     }
/// }
///
/// let model = Model::<Counter>::new(NoSettings)
///     .clients(2)
///     .crashes(1)
///     .always("replies_durable", |w| w.replies().count() <= w.state(0).saved as usize);
/// let report = check(&model, &Options::default())?;
/// assert_eq!(report.verdict, Verdict::Pass);
/// # Ok::<(), cmc::ModelError>(())
/// ```
pub trait Core: Send + Sync + 'static {
    /// The name the catalog, reports and counterexample files use.
    const NAME: &'static str;
    /// One node's state. Its first [`Core::DURABLE`] bytes are durable.
    type State: FromBytes + IntoBytes + Immutable + KnownLayout + Copy + fmt::Debug;
    /// Plain data fixed for a run: sizes and planted-bug selectors.
    type Settings: Settings;
    /// How many leading bytes of `State` survive a crash.
    const DURABLE: usize;

    /// The only transition. Must be a pure function of its arguments: no
    /// globals, no clock, no randomness, no I/O. Must leave the durable bytes
    /// unchanged; the engine checks.
    fn step(ctx: &Context<'_, Self::Settings>, state: &mut Self::State, event: Event<'_>, out: &mut Effects);

    /// Applies one persist record to the durable bytes: the only code that
    /// changes them. Must leave the volatile bytes unchanged; the engine
    /// checks.
    fn apply_persist(ctx: &Context<'_, Self::Settings>, state: &mut Self::State, record: &[u8]) {
        let _ = (ctx, state, record);
    }

    /// Rejects settings the core cannot run with (say, more resource
    /// managers than its state has room for). The message names the key.
    fn validate(settings: &Self::Settings) -> Result<(), String> {
        let _ = settings;
        Ok(())
    }

    /// Calibration cores only: the world is one state and the actions are
    /// `Next`'s disjuncts. `None` (the default) means a message-passing core.
    fn direct_actions(settings: &Self::Settings) -> Option<DirectActions> {
        let _ = settings;
        None
    }

    /// How traces show a message, a persist record or a reply of this core
    /// (`kind` says which), for people: `Some("ack 3")`. `None`, the
    /// default, shows the bytes in hex. Counterexample files keep the
    /// bytes whatever this returns.
    fn show_payload(settings: &Self::Settings, kind: PayloadKind, bytes: &[u8]) -> Option<String> {
        let _ = (settings, kind, bytes);
        None
    }

    /// A label for direct action `index`, used in traces (`TMCommit`,
    /// `RMPrepare(r2)`, ...).
    fn action_label(settings: &Self::Settings, index: u16) -> String {
        let _ = settings;
        format!("Action({index})")
    }

    /// Symmetry: the nodes this core treats alike, of a model of `nodes`
    /// nodes. Renaming them among themselves (with
    /// [`Core::rename_state`] and [`Core::rename_payload`]) must map every
    /// behaviour of the model onto another one, and the model's properties
    /// must not tell renamed worlds apart. A search under
    /// [`Options::symmetry`](crate::Options::symmetry) then explores one
    /// world of each class ([`crate::symmetry`]). The default is no node.
    fn interchangeable(settings: &Self::Settings, nodes: u8) -> NodeSet {
        let _ = (settings, nodes);
        NodeSet::EMPTY
    }

    /// Symmetry: renames the node numbers held in one node's state (a
    /// peer's number, a bitmap of peers) by `renaming`. The engine moves
    /// the state itself to its node's new number. The default renames
    /// nothing: for a state that holds no node number.
    fn rename_state(settings: &Self::Settings, renaming: &Renaming, state: &mut Self::State) {
        let _ = (settings, renaming, state);
    }

    /// Symmetry: renames the node numbers held in a message, a persist
    /// record or a reply (`kind` says which, with the nodes it had before
    /// the renaming). The default renames nothing.
    fn rename_payload(settings: &Self::Settings, renaming: &Renaming, kind: PayloadKind, bytes: &mut [u8]) {
        let _ = (settings, renaming, kind, bytes);
    }

    /// How traces show a node's state: its `Debug` form by default; a C
    /// core's state is its `state_size` bytes in hex.
    #[doc(hidden)]
    fn show_state(settings: &Self::Settings, state: &Self::State) -> String {
        let _ = settings;
        format!("{state:?}")
    }

    /// What the engine needs to know of the core at run time. A Rust core
    /// has it in its types and constants (the default); a core written in
    /// C ([`crate::ccore`]) has it in its `struct cmc_core`.
    #[doc(hidden)]
    fn layout(settings: &Self::Settings) -> Layout {
        let _ = settings;
        Layout {
            name: Self::NAME,
            state_size: core::mem::size_of::<Self::State>(),
            durable: Self::DURABLE,
            settings_size: core::mem::size_of::<Self::Settings>(),
        }
    }
}

/// A core's name and sizes, as the engine uses them ([`Core::layout`]).
/// The world keeps `state_size` bytes per node: a core whose `State` type
/// is larger (a C core's, a size class) keeps the rest zero.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// [`Core::NAME`].
    pub name: &'static str,
    /// The bytes of one node's state, at most the size of `State`.
    pub state_size: usize,
    /// [`Core::DURABLE`].
    pub durable: usize,
    /// The bytes of the settings.
    pub settings_size: usize,
}

/// One setting a core accepts: its key, its default and what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettingKey {
    /// The key: the field's name, as `--set KEY=VALUE` and model
    /// declarations spell it.
    pub name: &'static str,
    /// The value [`Default`] gives the field.
    pub default: u64,
    /// The largest value the field's type holds.
    pub max: u64,
    /// The field's doc comment, which `cmc check --list` shows.
    pub doc: &'static str,
}

/// Plain-data settings of a core, at most [`limits::SETTINGS_BYTES_MAX`]
/// bytes. Write them with [`crate::settings!`], which derives everything.
pub trait Settings:
    FromBytes + IntoBytes + Immutable + KnownLayout + Copy + fmt::Debug + Default + Send + Sync + 'static
{
    /// Every key, in declaration order.
    const KEYS: &'static [SettingKey];
    /// Sets `key` to `value`. Unknown keys and out-of-range values are
    /// errors.
    fn set(&mut self, key: &str, value: u64) -> Result<(), SettingError>;
    /// The value of `key`, if there is such a key.
    fn get(&self, key: &str) -> Option<u64>;
    /// Every key of these settings: [`Settings::KEYS`] for a Rust core; a
    /// C core's come with the core.
    #[doc(hidden)]
    fn keys(&self) -> std::borrow::Cow<'static, [SettingKey]> {
        std::borrow::Cow::Borrowed(Self::KEYS)
    }
}

/// A setting could not be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// The core has no setting of that name.
    #[error("unknown setting `{key}` (known: {known})")]
    Unknown {
        /// The key asked for.
        key: String,
        /// The keys the core has, separated by commas.
        known: String,
    },
    /// The value does not fit the setting's type.
    #[error("setting `{key}` = {value} is out of range (at most {max})")]
    OutOfRange {
        /// The key.
        key: String,
        /// The value asked for.
        value: u64,
        /// The largest value the setting holds.
        max: u64,
    },
}

/// Declares a core's settings struct: every field an unsigned integer with a
/// default and a doc line. Generates the `zerocopy` derives, `Default` and
/// [`Settings`], and rejects at compile time a struct over
/// [`limits::SETTINGS_BYTES_MAX`] bytes.
///
/// ```
/// cmc::settings! {
///     /// Settings of a toy core.
///     pub struct ToySettings {
///         /// Number of rounds.
///         rounds: u8 = 2,
///         /// Planted bug: forget to persist.
///         bug_no_persist: u8 = 0,
///     }
/// }
/// use cmc::Settings as _;
/// let mut s = ToySettings::default();
/// s.set("rounds", 3).unwrap();
/// assert_eq!(s.rounds, 3);
/// assert!(s.set("round", 3).is_err());
/// ```
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[doc = $doc:literal])* $field:ident : $ty:ty = $default:expr ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq,
            $crate::zerocopy::FromBytes,
            $crate::zerocopy::IntoBytes,
            $crate::zerocopy::Immutable,
            $crate::zerocopy::KnownLayout,
        )]
        #[zerocopy(crate = "::cmc::zerocopy")]
        #[repr(C)]
        $vis struct $name {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        const _: () = assert!(
            ::core::mem::size_of::<$name>() <= $crate::limits::SETTINGS_BYTES_MAX,
            "core settings are limited to 256 bytes"
        );

        impl ::core::default::Default for $name {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        impl $crate::Settings for $name {
            const KEYS: &'static [$crate::SettingKey] = &[
                $( $crate::SettingKey {
                    name: stringify!($field),
                    default: $default as u64,
                    max: <$ty>::MAX as u64,
                    doc: concat!($($doc),*),
                }, )*
            ];

            fn set(&mut self, key: &str, value: u64) -> ::core::result::Result<(), $crate::SettingError> {
                match key {
                    $( stringify!($field) => {
                        self.$field = <$ty>::try_from(value).map_err(|_| $crate::SettingError::OutOfRange {
                            key: key.to_string(),
                            value,
                            max: <$ty>::MAX as u64,
                        })?;
                        Ok(())
                    } )*
                    _ => Err($crate::SettingError::Unknown {
                        key: key.to_string(),
                        known: [$(stringify!($field)),*].join(", "),
                    }),
                }
            }

            fn get(&self, key: &str) -> ::core::option::Option<u64> {
                match key {
                    $( stringify!($field) => Some(self.$field as u64), )*
                    _ => None,
                }
            }
        }
    };
}

/// Settings of a core that has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NoSettings;

impl Settings for NoSettings {
    const KEYS: &'static [SettingKey] = &[];
    fn set(&mut self, key: &str, _value: u64) -> Result<(), SettingError> {
        Err(SettingError::Unknown { key: key.to_string(), known: String::new() })
    }
    fn get(&self, _key: &str) -> Option<u64> {
        None
    }
}

/// A payload of at most [`limits::PAYLOAD_BYTES_MAX`] bytes, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Payload {
    len: u8,
    bytes: [u8; limits::PAYLOAD_BYTES_MAX],
}

impl Payload {
    /// The payload of no bytes.
    pub const EMPTY: Payload = Payload { len: 0, bytes: [0; limits::PAYLOAD_BYTES_MAX] };

    /// `None` when `bytes` is longer than the limit.
    pub fn new(bytes: &[u8]) -> Option<Payload> {
        if bytes.len() > limits::PAYLOAD_BYTES_MAX {
            return None;
        }
        let mut p = Payload::EMPTY;
        p.len = bytes.len() as u8;
        p.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(p)
    }

    /// The payload's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The payload's bytes, to change in place (their number is fixed).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes[..self.len as usize]
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::trace::hex(self.as_slice()))
    }
}

/// One effect of a step, in emission order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// [`Effects::send`]: a message put on the network.
    Send {
        /// The receiver.
        to: NodeId,
        /// The message.
        msg: Payload,
    },
    /// [`Effects::arm`]: a timer armed.
    Arm {
        /// The timer, below [`limits::TIMERS_MAX`].
        timer: u8,
    },
    /// [`Effects::cancel`]: a timer disarmed.
    Cancel {
        /// The timer, below [`limits::TIMERS_MAX`].
        timer: u8,
    },
    /// [`Effects::persist`]: a durable write queued.
    Persist {
        /// The record [`Core::apply_persist`] will be given.
        record: Payload,
    },
    /// [`Effects::wake`]: a wake made pending.
    Wake {
        /// The waiter, below [`limits::WAITERS_MAX`].
        waiter: u8,
    },
    /// [`Effects::reply`]: a reply appended to the ghost log.
    Reply {
        /// The reply.
        msg: Payload,
    },
}

/// A limit a core crossed inside one step. Reported as an error naming the
/// core, node, event and limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EffectError {
    /// More than [`limits::EFFECTS_PER_STEP`] effects.
    #[error("more than {max} effects in one step (limit effects_per_step)", max = limits::EFFECTS_PER_STEP)]
    TooManyEffects,
    /// A message, persist record or reply over
    /// [`limits::PAYLOAD_BYTES_MAX`] bytes.
    #[error("a {what} of {len} bytes (limit payload_bytes_max = {max})", max = limits::PAYLOAD_BYTES_MAX)]
    PayloadTooLong {
        /// Which: `message`, `persist record` or `reply`.
        what: &'static str,
        /// Its length, in bytes.
        len: usize,
    },
    /// A timer number not below [`limits::TIMERS_MAX`].
    #[error("timer {timer} (limit timers_max = {max}: timers are 0..{max})", max = limits::TIMERS_MAX)]
    TimerOutOfRange {
        /// The number given.
        timer: u8,
    },
    /// A waiter number not below [`limits::WAITERS_MAX`].
    #[error("waiter {waiter} (limit waiters_max = {max}: waiters are 0..{max})", max = limits::WAITERS_MAX)]
    WaiterOutOfRange {
        /// The number given.
        waiter: u8,
    },
    /// A C core broke the C interface (`cmc.h`): wrote past its state, or
    /// left its effects buffer in a state its functions never make.
    #[error("the C core {what} (cmc.h)")]
    Abi {
        /// What it did.
        what: &'static str,
    },
}

/// The effects of one step. A core can add effects only through these
/// methods; the first limit crossed is recorded and the engine reports it.
/// Neither `Clone` nor `Default`: a core must not be able to make a second
/// buffer and swap it in (that would erase a recorded limit error).
#[derive(Debug, PartialEq, Eq)]
pub struct Effects {
    items: [Effect; limits::EFFECTS_PER_STEP],
    len: u8,
    error: Option<EffectError>,
    disabled: bool,
}

impl Effects {
    pub(crate) fn new() -> Effects {
        Effects { items: [Effect::Arm { timer: 0 }; limits::EFFECTS_PER_STEP], len: 0, error: None, disabled: false }
    }

    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.error = None;
        self.disabled = false;
    }

    fn push(&mut self, effect: Effect) {
        if self.error.is_some() {
            return;
        }
        if self.len as usize == limits::EFFECTS_PER_STEP {
            self.error = Some(EffectError::TooManyEffects);
            return;
        }
        self.items[self.len as usize] = effect;
        self.len += 1;
    }

    fn payload(&mut self, what: &'static str, bytes: &[u8]) -> Option<Payload> {
        let p = Payload::new(bytes);
        if p.is_none() && self.error.is_none() {
            self.error = Some(EffectError::PayloadTooLong { what, len: bytes.len() });
        }
        p
    }

    /// Sends `msg` to node `to`.
    pub fn send(&mut self, to: NodeId, msg: &[u8]) {
        if let Some(msg) = self.payload("message", msg) {
            self.push(Effect::Send { to, msg });
        }
    }

    /// Arms timer `timer`. Arming an armed timer leaves it armed.
    pub fn arm(&mut self, timer: u8) {
        if timer as usize >= limits::TIMERS_MAX {
            self.error.get_or_insert(EffectError::TimerOutOfRange { timer });
            return;
        }
        self.push(Effect::Arm { timer });
    }

    /// Cancels timer `timer`, armed or not.
    pub fn cancel(&mut self, timer: u8) {
        if timer as usize >= limits::TIMERS_MAX {
            self.error.get_or_insert(EffectError::TimerOutOfRange { timer });
            return;
        }
        self.push(Effect::Cancel { timer });
    }

    /// Queues a durable write. The engine applies it through
    /// [`Core::apply_persist`] on FLUSH, or on a crash that keeps it.
    pub fn persist(&mut self, record: &[u8]) {
        if let Some(record) = self.payload("persist record", record) {
            self.push(Effect::Persist { record });
        }
    }

    /// Wakes waiter `waiter` of this node later (a WAKE action). A wake
    /// already pending stays one wake.
    pub fn wake(&mut self, waiter: u8) {
        if waiter as usize >= limits::WAITERS_MAX {
            self.error.get_or_insert(EffectError::WaiterOutOfRange { waiter });
            return;
        }
        self.push(Effect::Wake { waiter });
    }

    /// Replies to a client: appended to the ghost log with this node's id.
    pub fn reply(&mut self, msg: &[u8]) {
        if let Some(msg) = self.payload("reply", msg) {
            self.push(Effect::Reply { msg });
        }
    }

    /// Direct-actions cores: the action this step was asked to take is not
    /// enabled in this state, so it has no successor. The step must leave
    /// the state as it found it: the engine steps the next action from the
    /// same bytes without copying them again, and reports a step that
    /// changed them as an error where it compares (`--det`, and any step it
    /// takes one at a time).
    pub fn not_enabled(&mut self) {
        self.disabled = true;
    }

    /// The effects emitted so far, in order.
    pub fn as_slice(&self) -> &[Effect] {
        &self.items[..self.len as usize]
    }

    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    pub(crate) fn error(&self) -> Option<EffectError> {
        self.error
    }

    /// Records `error` unless one is recorded already (a C core's effects
    /// buffer says the limit it crossed).
    pub(crate) fn fail(&mut self, error: EffectError) {
        self.error.get_or_insert(error);
    }

    pub(crate) fn is_disabled(&self) -> bool {
        self.disabled
    }
}
