//! The C interface of `cmc.h`'s "Cores" section, mirrored type for type.
//! Each size is asserted here and, with the same number, in `cmc.h`, so
//! that the two cannot drift apart without one of the compilers saying so.

use std::ffi::{c_char, c_void};

/// `CMC_CORE_ABI`.
pub const CORE_ABI: u32 = 1;
/// `CMC_CORE_STATE_MAX`: bytes of one node's state.
pub const STATE_MAX: usize = 4096;

/// `enum cmc_event_kind`.
pub mod event {
    pub const DELIVER: u32 = 1;
    pub const FIRE: u32 = 2;
    pub const FLUSHED: u32 = 3;
    pub const WAKE: u32 = 4;
    pub const CLIENT: u32 = 5;
    pub const RESTART: u32 = 6;
    pub const RESET: u32 = 7;
    pub const ACTION: u32 = 8;
}

/// `enum cmc_effect_kind`.
pub mod effect {
    pub const SEND: u8 = 1;
    pub const ARM: u8 = 2;
    pub const CANCEL: u8 = 3;
    pub const PERSIST: u8 = 4;
    pub const WAKE: u8 = 5;
    pub const REPLY: u8 = 6;
}

/// `enum cmc_effect_error`.
pub mod effect_error {
    pub const OK: u32 = 0;
    pub const TOO_MANY: u32 = 1;
    pub const TOO_LONG: u32 = 2;
    pub const BAD_TIMER: u32 = 3;
    pub const BAD_WAITER: u32 = 4;
}

/// `struct cmc_event`: the kind, then the union at offset 8, written here
/// as its bytes. Every member's first byte is at `a` (`deliver.from`,
/// `fire.timer`, `wake.waiter`, `client.index`, `reset.peer`, the low byte
/// of `action.index`); `deliver.len` and the high byte of `action.index`
/// are at `b`; `deliver.msg` is at offset 16.
#[repr(C)]
pub struct Event {
    pub(crate) kind: u32,
    pub(crate) pad: u32,
    pub(crate) a: u8,
    pub(crate) b: u8,
    pub(crate) pad2: [u8; 6],
    pub(crate) msg: *const u8,
}

/// `struct cmc_ctx`.
#[repr(C)]
pub struct Ctx {
    pub(crate) node: u8,
    pub(crate) nodes: u8,
    pub(crate) reserved: [u8; 6],
    pub(crate) settings: *const c_void,
}

/// `struct cmc_effect`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Effect {
    pub(crate) kind: u8,
    pub(crate) arg: u8,
    pub(crate) len: u8,
    pub(crate) bytes: [u8; 32],
}

/// `struct cmc_effects`.
#[repr(C)]
pub struct Effects {
    pub(crate) n: u32,
    pub(crate) error: u32,
    pub(crate) error_arg: u32,
    pub(crate) disabled: u32,
    pub(crate) o: [Effect; 16],
}

impl Effects {
    pub const ZERO: Effects = Effects {
        n: 0,
        error: 0,
        error_arg: 0,
        disabled: 0,
        o: [Effect { kind: 0, arg: 0, len: 0, bytes: [0; 32] }; 16],
    };
}

/// `struct cmc_setting`.
#[repr(C)]
pub struct Setting {
    pub(crate) name: *const c_char,
    pub(crate) doc: *const c_char,
    pub(crate) offset: u32,
    pub(crate) width: u32,
    pub(crate) value: u64,
}

/// `struct cmc_direct`.
#[repr(C)]
#[derive(Default)]
pub struct Direct {
    pub(crate) actions: u32,
    pub(crate) initial_states: u32,
}

pub type InitFn = unsafe extern "C" fn(*const Ctx, *mut c_void, u32, *mut Effects);
pub type StepFn = unsafe extern "C" fn(*const Ctx, *mut c_void, *const Event, *mut Effects);
pub type PersistFn = unsafe extern "C" fn(*const Ctx, *mut c_void, *const u8, u32);
pub type DirectFn = unsafe extern "C" fn(*const c_void, *mut Direct);
pub type ValidateFn = unsafe extern "C" fn(*const c_void) -> *const c_char;
pub type LabelFn = unsafe extern "C" fn(*const c_void, u32, *mut c_char, u32);
pub type ShowStateFn = unsafe extern "C" fn(*const c_void, *const c_void, *mut c_char, u32);
pub type ShowPayloadFn = unsafe extern "C" fn(*const c_void, u32, u32, u32, *const u8, u32, *mut c_char, u32);
pub type InterchangeableFn = unsafe extern "C" fn(*const c_void, u32) -> u32;
pub type RenameStateFn = unsafe extern "C" fn(*const c_void, *const u8, *mut c_void);
pub type RenamePayloadFn = unsafe extern "C" fn(*const c_void, *const u8, u32, u32, u32, *mut u8, u32);

/// `enum cmc_show_kind`.
pub mod show {
    pub const MESSAGE: u32 = 1;
    pub const PERSIST: u32 = 2;
    pub const REPLY: u32 = 3;
}

/// `struct cmc_core`: what a C core is. A test that links a C core's
/// static library declares its variable as one of these:
///
/// ```ignore
/// unsafe extern "C" {
///     static two_phase_core: cmc::ccore::CmcCore;
/// }
/// ```
#[repr(C)]
pub struct CmcCore {
    pub(crate) abi: u32,
    pub(crate) state_size: u32,
    pub(crate) durable_size: u32,
    pub(crate) settings_size: u32,
    pub(crate) name: *const c_char,
    pub(crate) settings: *const Setting,
    pub(crate) settings_count: u32,
    pub(crate) reserved: u32,
    pub(crate) init: Option<InitFn>,
    pub(crate) step: Option<StepFn>,
    pub(crate) apply_persist: Option<PersistFn>,
    pub(crate) direct_actions: Option<DirectFn>,
    pub(crate) validate: Option<ValidateFn>,
    pub(crate) action_label: Option<LabelFn>,
    pub(crate) show_state: Option<ShowStateFn>,
    pub(crate) show_payload: Option<ShowPayloadFn>,
    pub(crate) interchangeable: Option<InterchangeableFn>,
    pub(crate) rename_state: Option<RenameStateFn>,
    pub(crate) rename_payload: Option<RenamePayloadFn>,
}

// SAFETY: a `struct cmc_core` is constant data (cmc.h: the core's
// functions are pure, and it has no writable data, which the purity gate
// checks); its pointers are to constant strings, tables and functions.
unsafe impl Sync for CmcCore {}

/// `struct cmc_message`.
#[repr(C)]
pub struct Message {
    pub(crate) from: u8,
    pub(crate) to: u8,
    pub(crate) len: u8,
    pub(crate) bytes: [u8; 32],
}

/// `struct cmc_record_of`.
#[repr(C)]
pub struct RecordOf {
    pub(crate) node: u8,
    pub(crate) len: u8,
    pub(crate) bytes: [u8; 32],
}

/// `struct cmc_node_env`.
#[repr(C)]
pub struct NodeEnv {
    pub(crate) clients_left: u8,
    pub(crate) wakes: u8,
    pub(crate) timers: u16,
    pub(crate) resets: u8,
    pub(crate) reserved: [u8; 3],
}

/// `struct cmc_world`.
#[repr(C)]
pub struct World {
    pub(crate) version: u32,
    pub(crate) nodes: u32,
    pub(crate) state_size: u32,
    pub(crate) messages: u32,
    pub(crate) persists: u32,
    pub(crate) replies: u32,
    pub(crate) states: *const u8,
    pub(crate) settings: *const c_void,
    pub(crate) env: *const NodeEnv,
    pub(crate) message: *const Message,
    pub(crate) persist: *const RecordOf,
    pub(crate) reply: *const RecordOf,
}

/// `int NAME(const struct cmc_world *)`: a C property.
pub type Predicate = unsafe extern "C" fn(*const World) -> i32;

// The sizes cmc.h asserts too.
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<Event>() == 24 && offset_of!(Event, msg) == 16);
    assert!(size_of::<Ctx>() == 16);
    assert!(size_of::<Effect>() == 35);
    assert!(size_of::<Effects>() == 16 + 35 * 16);
    assert!(size_of::<Setting>() == 32);
    assert!(size_of::<CmcCore>() == 128);
    assert!(size_of::<Message>() == 35 && size_of::<RecordOf>() == 34 && size_of::<NodeEnv>() == 8);
    assert!(size_of::<World>() == 72);
};
