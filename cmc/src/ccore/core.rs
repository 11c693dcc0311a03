//! A C core as a [`Core`]: [`CCore<N>`] calls a `struct cmc_core`'s
//! functions, with a state type of `N` bytes, a size class at least the
//! core's `state_size` (the world keeps only `state_size` bytes of it;
//! the rest stays zero, and a core that writes there is an error).
//!
//! A `Core`'s functions take no `self`, so what a run's core is travels in
//! its settings: [`CSettings`] holds the core's slot in a registry of the
//! cores checked so far in this process, and the settings' bytes.

use std::borrow::Cow;
use std::ffi::{CStr, c_char, c_void};
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::abi::{self, CmcCore};
use crate::core::{
    Context, Core, DirectActions, EffectError, Effects, Event, Layout, NodeId, PayloadKind, SettingError, SettingKey,
    Settings, limits,
};
use crate::symmetry::{NodeSet, Renaming};

/// Distinct C cores one process may check.
pub const CORES_MAX: usize = 64;

/// A registered C core: its `struct cmc_core`, checked, with what the
/// engine asks of it often kept in Rust form.
pub(crate) struct Registered {
    pub(crate) core: &'static CmcCore,
    pub(crate) name: &'static str,
    pub(crate) keys: &'static [SettingKey],
    /// Each key's offset and width, in `keys`' order.
    pub(crate) fields: Vec<(usize, usize)>,
    pub(crate) state_size: usize,
    pub(crate) durable: usize,
    pub(crate) settings_size: usize,
    /// Kept loaded for as long as the process runs: a core's functions
    /// may be called from any model built from it.
    pub(crate) _library: Option<super::Library>,
}

static SLOTS: [AtomicPtr<Registered>; CORES_MAX] = [const { AtomicPtr::new(std::ptr::null_mut()) }; CORES_MAX];
static REGISTERING: Mutex<()> = Mutex::new(());

/// Why a `struct cmc_core` cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("C core `{core}`: {reason}")]
pub struct AbiError {
    /// The core's `name`, or where it came from when it has none.
    pub core: String,
    /// What is wrong.
    pub reason: String,
}

/// A C string of a core's, as a `&'static str` (the core's strings live as
/// long as the process: its library is never closed).
fn text(p: *const c_char, what: &str, core: &str) -> Result<&'static str, AbiError> {
    if p.is_null() {
        return Err(AbiError { core: core.to_string(), reason: format!("{what} is null") });
    }
    // SAFETY: cmc.h's strings are NUL-terminated constants of the core.
    let s = unsafe { CStr::from_ptr(p) };
    let s = s.to_str().map_err(|_| AbiError { core: core.to_string(), reason: format!("{what} is not UTF-8") })?;
    Ok(Box::leak(s.to_string().into_boxed_str()))
}

/// Registers `core` (once per `struct cmc_core`: the same one again gets
/// its first slot), checking every field `cmc.h` constrains.
pub(crate) fn register(core: &'static CmcCore, library: Option<super::Library>, from: &str) -> Result<usize, AbiError> {
    let _guard = REGISTERING.lock().unwrap_or_else(|e| e.into_inner());
    for (i, slot) in SLOTS.iter().enumerate() {
        let p = slot.load(Ordering::Acquire);
        if p.is_null() {
            let registered = check(core, library, from)?;
            slot.store(Box::into_raw(Box::new(registered)), Ordering::Release);
            return Ok(i);
        }
        // SAFETY: a non-null slot holds a leaked, never freed `Registered`.
        if std::ptr::eq(unsafe { &*p }.core, core) {
            return Ok(i);
        }
    }
    Err(AbiError { core: from.to_string(), reason: format!("more than {CORES_MAX} C cores in one process") })
}

fn check(core: &'static CmcCore, library: Option<super::Library>, from: &str) -> Result<Registered, AbiError> {
    let bad = |reason: String| AbiError { core: from.to_string(), reason };
    if core.abi != abi::CORE_ABI {
        return Err(bad(format!("abi = {} (this cmc reads CMC_CORE_ABI {})", core.abi, abi::CORE_ABI)));
    }
    let name = text(core.name, "name", from)?;
    let bad = |reason: String| AbiError { core: name.to_string(), reason };
    let state_size = core.state_size as usize;
    if state_size == 0 || state_size > abi::STATE_MAX {
        return Err(bad(format!("state_size = {state_size} (1 to CMC_CORE_STATE_MAX = {})", abi::STATE_MAX)));
    }
    let durable = core.durable_size as usize;
    if durable > state_size {
        return Err(bad(format!("durable_size = {durable} is over state_size = {state_size}")));
    }
    let settings_size = core.settings_size as usize;
    if settings_size > limits::SETTINGS_BYTES_MAX {
        return Err(bad(format!(
            "settings_size = {settings_size} (limit settings_bytes_max = {})",
            limits::SETTINGS_BYTES_MAX
        )));
    }
    if core.init.is_none() || core.step.is_none() {
        return Err(bad("`init` and `step` are required".into()));
    }
    let count = core.settings_count as usize;
    if count > 0 && core.settings.is_null() {
        return Err(bad(format!("settings_count = {count} but settings is null")));
    }
    let table: &[abi::Setting] = if count == 0 {
        &[]
    } else {
        // SAFETY: the core says `settings` has `settings_count` entries.
        unsafe { std::slice::from_raw_parts(core.settings, count) }
    };
    let mut keys = Vec::with_capacity(count);
    let mut fields = Vec::with_capacity(count);
    let mut used = vec![false; settings_size];
    for (i, s) in table.iter().enumerate() {
        let key = text(s.name, &format!("settings[{i}].name"), name)?;
        let doc = if s.doc.is_null() { "" } else { text(s.doc, &format!("settings[{i}].doc"), name)? };
        let (offset, width) = (s.offset as usize, s.width as usize);
        if ![1, 2, 4, 8].contains(&width) {
            return Err(bad(format!("setting `{key}`: width = {width} (1, 2, 4 or 8)")));
        }
        if offset + width > settings_size {
            return Err(bad(format!(
                "setting `{key}`: bytes {offset}..{} are past settings_size = {settings_size}",
                offset + width
            )));
        }
        if used[offset..offset + width].iter().any(|&u| u) {
            return Err(bad(format!("setting `{key}` overlaps another")));
        }
        used[offset..offset + width].fill(true);
        if keys.iter().any(|k: &SettingKey| k.name == key) {
            return Err(bad(format!("setting `{key}` is declared twice")));
        }
        let max = if width == 8 { u64::MAX } else { (1u64 << (8 * width)) - 1 };
        if s.value > max {
            return Err(bad(format!("setting `{key}`: default {} does not fit {width} bytes", s.value)));
        }
        keys.push(SettingKey { name: key, default: s.value, max, doc });
        fields.push((offset, width));
    }
    Ok(Registered {
        core,
        name,
        keys: Box::leak(keys.into_boxed_slice()),
        fields,
        state_size,
        durable,
        settings_size,
        _library: library,
    })
}

/// The registered core in `slot`.
pub(crate) fn registered(slot: u32) -> &'static Registered {
    let p = SLOTS.get(slot as usize).map_or(std::ptr::null_mut(), |s| s.load(Ordering::Acquire));
    assert!(!p.is_null(), "C core settings of no registered core (slot {slot})");
    // SAFETY: a non-null slot holds a leaked, never freed `Registered`.
    unsafe { &*p }
}

/// The settings of a C core's model: which core (its slot) and the bytes
/// its functions get as `settings`.
#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct CSettings {
    slot: u32,
    bytes: [u8; limits::SETTINGS_BYTES_MAX],
}

impl CSettings {
    /// The defaults of the core in `slot`.
    pub(crate) fn defaults(slot: usize) -> CSettings {
        let mut s = CSettings { slot: slot as u32, bytes: [0; limits::SETTINGS_BYTES_MAX] };
        let r = registered(s.slot);
        for (k, &(offset, width)) in r.keys.iter().zip(&r.fields) {
            s.bytes[offset..offset + width].copy_from_slice(&k.default.to_le_bytes()[..width]);
        }
        s
    }

    pub(crate) fn core(&self) -> &'static Registered {
        registered(self.slot)
    }

    /// The bytes the core's functions read.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.core().settings_size]
    }
}

impl Default for CSettings {
    /// Settings of no core: only a core's own settings
    /// ([`crate::ccore::CModel`] makes them) can be used.
    fn default() -> CSettings {
        CSettings { slot: u32::MAX, bytes: [0; limits::SETTINGS_BYTES_MAX] }
    }
}

impl fmt::Debug for CSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.core();
        let mut d = f.debug_struct(r.name);
        for k in r.keys {
            d.field(k.name, &self.get(k.name).unwrap_or(0));
        }
        d.finish()
    }
}

impl Settings for CSettings {
    const KEYS: &'static [SettingKey] = &[];

    fn set(&mut self, key: &str, value: u64) -> Result<(), SettingError> {
        let r = self.core();
        let Some(i) = r.keys.iter().position(|k| k.name == key) else {
            let known = r.keys.iter().map(|k| k.name).collect::<Vec<_>>().join(", ");
            return Err(SettingError::Unknown { key: key.to_string(), known });
        };
        let (offset, width) = r.fields[i];
        if value > r.keys[i].max {
            return Err(SettingError::OutOfRange { key: key.to_string(), value, max: r.keys[i].max });
        }
        self.bytes[offset..offset + width].copy_from_slice(&value.to_le_bytes()[..width]);
        Ok(())
    }

    fn get(&self, key: &str) -> Option<u64> {
        let r = self.core();
        let i = r.keys.iter().position(|k| k.name == key)?;
        let (offset, width) = r.fields[i];
        let mut le = [0u8; 8];
        le[..width].copy_from_slice(&self.bytes[offset..offset + width]);
        Some(u64::from_le_bytes(le))
    }

    fn keys(&self) -> Cow<'static, [SettingKey]> {
        Cow::Borrowed(self.core().keys)
    }
}

/// A C core with a state type of `N` bytes (a size class, at least its
/// `state_size`).
pub struct CCore<const N: usize>;

/// `enum cmc_show_kind` and the two node numbers a C function gets for a
/// payload of `kind`.
fn show_kind(kind: PayloadKind) -> (u32, NodeId, NodeId) {
    match kind {
        PayloadKind::Message { from, to } => (abi::show::MESSAGE, from, to),
        PayloadKind::Persist { node } => (abi::show::PERSIST, node, node),
        PayloadKind::Reply { node } => (abi::show::REPLY, node, node),
    }
}

/// A renaming as cmc.h's `to` table: node n becomes `to[n]`.
fn table(renaming: &Renaming) -> [u8; limits::NODES_MAX] {
    std::array::from_fn(|n| renaming.node(n as NodeId))
}

/// The text a C function writes into a buffer (NUL-terminated, at most
/// its cap with the NUL), or `None` for an empty one.
fn text_from(write: impl FnOnce(*mut c_char, u32)) -> Option<String> {
    let mut buf = [0u8; 256];
    write(buf.as_mut_ptr().cast(), buf.len() as u32);
    // A core that wrote no NUL still ends at the buffer's last byte.
    buf[buf.len() - 1] = 0;
    let s = CStr::from_bytes_until_nul(&buf).ok()?;
    (!s.is_empty()).then(|| s.to_string_lossy().into_owned())
}

thread_local! {
    /// The effects buffer C calls write; initialised once, so that every
    /// entry the engine reads is initialised whatever a core did.
    static BUFFER: std::cell::UnsafeCell<abi::Effects> = const { std::cell::UnsafeCell::new(abi::Effects::ZERO) };
}

/// Calls `call` with a cleared `struct cmc_effects`, then carries out what
/// it holds into `out` (cmc.h's effect order) and checks that the state's
/// bytes past `state_size` are still zero.
#[inline]
fn with_effects(state: &mut [u8], size: usize, out: &mut Effects, call: impl FnOnce(*mut c_void, *mut abi::Effects)) {
    let p = state.as_mut_ptr().cast();
    BUFFER.with(|cell| {
        let fx = cell.get();
        // SAFETY: the buffer is this thread's, and no call here reenters
        // (a C core calls nothing but mem* and cmc.h's inline functions).
        unsafe {
            (*fx).n = 0;
            (*fx).error = abi::effect_error::OK;
            (*fx).disabled = 0;
        }
        call(p, fx);
        // SAFETY: as above; the C call has returned.
        let fx = unsafe { &*fx };
        carry_out(fx, out);
    });
    if state[size..].iter().any(|&b| b != 0) {
        out.fail(EffectError::Abi { what: "wrote past its state_size" });
    }
}

#[inline]
fn carry_out(fx: &abi::Effects, out: &mut Effects) {
    if fx.n == 0 && fx.error == abi::effect_error::OK {
        // The common case of a direct-actions core: nothing emitted.
        if fx.disabled != 0 {
            out.not_enabled();
        }
        return;
    }
    carry_out_effects(fx, out);
}

#[inline(never)]
fn carry_out_effects(fx: &abi::Effects, out: &mut Effects) {
    let n = fx.n as usize;
    if n > limits::EFFECTS_PER_STEP {
        return out.fail(EffectError::Abi { what: "left a count of effects past CMC_EFFECTS_MAX" });
    }
    for e in &fx.o[..n] {
        let Some(bytes) = e.bytes.get(..e.len as usize) else {
            return out.fail(EffectError::Abi { what: "left an effect longer than CMC_PAYLOAD_MAX" });
        };
        match e.kind {
            abi::effect::SEND => out.send(e.arg, bytes),
            abi::effect::ARM => out.arm(e.arg),
            abi::effect::CANCEL => out.cancel(e.arg),
            abi::effect::PERSIST => out.persist(bytes),
            abi::effect::WAKE => out.wake(e.arg),
            abi::effect::REPLY => out.reply(bytes),
            _ => return out.fail(EffectError::Abi { what: "left an effect of no kind cmc.h defines" }),
        }
    }
    let arg = fx.error_arg;
    match fx.error {
        abi::effect_error::OK => {}
        abi::effect_error::TOO_MANY => out.fail(EffectError::TooManyEffects),
        abi::effect_error::TOO_LONG => out.fail(EffectError::PayloadTooLong { what: "payload", len: arg as usize }),
        abi::effect_error::BAD_TIMER => out.fail(EffectError::TimerOutOfRange { timer: arg.min(255) as u8 }),
        abi::effect_error::BAD_WAITER => out.fail(EffectError::WaiterOutOfRange { waiter: arg.min(255) as u8 }),
        _ => out.fail(EffectError::Abi { what: "left an error cmc.h does not define" }),
    }
    if fx.disabled != 0 {
        out.not_enabled();
    }
}

fn ctx(c: &Context<'_, CSettings>) -> abi::Ctx {
    abi::Ctx { node: c.node, nodes: c.nodes, reserved: [0; 6], settings: c.settings.bytes.as_ptr().cast() }
}

impl<const N: usize> Core for CCore<N> {
    const NAME: &'static str = "C core";
    type State = [u8; N];
    type Settings = CSettings;
    const DURABLE: usize = 0;

    #[inline]
    fn step(c: &Context<'_, CSettings>, state: &mut [u8; N], event: Event<'_>, out: &mut Effects) {
        let r = c.settings.core();
        let cx = ctx(c);
        let (kind, a, b, msg) = match event {
            Event::Init { variant } => {
                let init = r.core.init.unwrap_or_else(|| unreachable!("checked at registration"));
                // SAFETY: cmc.h's `init`, with a state of at least
                // `state_size` bytes and a live effects buffer.
                return with_effects(state, r.state_size, out, |p, fx| unsafe { init(&cx, p, variant, fx) });
            }
            Event::Deliver { from, msg } => (abi::event::DELIVER, from, msg.len() as u8, msg.as_ptr()),
            Event::Fire { timer } => (abi::event::FIRE, timer, 0, std::ptr::null()),
            Event::Flushed => (abi::event::FLUSHED, 0, 0, std::ptr::null()),
            Event::Wake { waiter } => (abi::event::WAKE, waiter, 0, std::ptr::null()),
            Event::Client { index } => (abi::event::CLIENT, index, 0, std::ptr::null()),
            Event::Restart => (abi::event::RESTART, 0, 0, std::ptr::null()),
            Event::Reset { peer } => (abi::event::RESET, peer, 0, std::ptr::null()),
            Event::Action { index } => {
                let [lo, hi] = index.to_ne_bytes();
                (abi::event::ACTION, lo, hi, std::ptr::null())
            }
        };
        let ev = abi::Event { kind, pad: 0, a, b, pad2: [0; 6], msg };
        let step = r.core.step.unwrap_or_else(|| unreachable!("checked at registration"));
        // SAFETY: cmc.h's `step`, with a state of at least `state_size`
        // bytes, an event whose message (if any) lives for the call, and a
        // live effects buffer.
        with_effects(state, r.state_size, out, |p, fx| unsafe { step(&cx, p, &ev, fx) });
    }

    fn apply_persist(c: &Context<'_, CSettings>, state: &mut [u8; N], record: &[u8]) {
        let r = c.settings.core();
        let Some(f) = r.core.apply_persist else { return };
        let cx = ctx(c);
        // SAFETY: cmc.h's `apply_persist`, with a state of at least
        // `state_size` bytes and a record that lives for the call.
        unsafe { f(&cx, state.as_mut_ptr().cast(), record.as_ptr(), record.len() as u32) };
        // A write past the state is corruption the engine's comparison of
        // volatile bytes reports: the tail is volatile and must stay zero.
    }

    fn validate(settings: &CSettings) -> Result<(), String> {
        let r = settings.core();
        if r.state_size > N {
            return Err(format!("state_size = {} is over the size class {N}", r.state_size));
        }
        let Some(f) = r.core.validate else { return Ok(()) };
        // SAFETY: cmc.h's `validate`, with the core's settings.
        let message = unsafe { f(settings.bytes.as_ptr().cast()) };
        if message.is_null() {
            return Ok(());
        }
        // SAFETY: a NUL-terminated constant of the core's.
        Err(unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned())
    }

    fn direct_actions(settings: &CSettings) -> Option<DirectActions> {
        let f = settings.core().core.direct_actions?;
        let mut d = abi::Direct::default();
        // SAFETY: cmc.h's `direct_actions`, with the core's settings.
        unsafe { f(settings.bytes.as_ptr().cast(), &mut d) };
        // A count too large for the engine's `u16` is kept too large, so
        // that validation names it.
        let actions = u16::try_from(d.actions).unwrap_or(u16::MAX);
        Some(DirectActions { actions, initial_states: d.initial_states })
    }

    fn action_label(settings: &CSettings, index: u16) -> String {
        let Some(f) = settings.core().core.action_label else { return format!("Action({index})") };
        // SAFETY: cmc.h's `action_label`, with the buffer's size as the cap.
        text_from(|buf, cap| unsafe { f(settings.bytes.as_ptr().cast(), index as u32, buf, cap) })
            .unwrap_or_else(|| format!("Action({index})"))
    }

    fn show_state(settings: &CSettings, state: &[u8; N]) -> String {
        let r = settings.core();
        let hex = || crate::trace::hex(&state[..r.state_size]);
        let Some(f) = r.core.show_state else { return hex() };
        // SAFETY: cmc.h's `show_state`, with a state of `state_size` bytes
        // and the buffer's size as the cap.
        text_from(|buf, cap| unsafe { f(settings.bytes.as_ptr().cast(), state.as_ptr().cast(), buf, cap) })
            .unwrap_or_else(hex)
    }

    fn show_payload(settings: &CSettings, kind: PayloadKind, bytes: &[u8]) -> Option<String> {
        let f = settings.core().core.show_payload?;
        let (kind, from, to) = show_kind(kind);
        let (p, len) = (bytes.as_ptr(), bytes.len() as u32);
        // SAFETY: cmc.h's `show_payload`, with `len` bytes at `p` and the
        // buffer's size as the cap.
        text_from(|buf, cap| unsafe {
            f(settings.bytes.as_ptr().cast(), kind, from.into(), to.into(), p, len, buf, cap)
        })
    }

    fn interchangeable(settings: &CSettings, nodes: u8) -> NodeSet {
        let Some(f) = settings.core().core.interchangeable else { return NodeSet::EMPTY };
        // SAFETY: cmc.h's `interchangeable`, with the core's settings.
        let bits = unsafe { f(settings.bytes.as_ptr().cast(), nodes.into()) };
        // Bits of no node: the engine checks the set against the model's
        // nodes (`NoSymmetry`), so a bit past them is named there.
        NodeSet::from_bits(bits as u8)
    }

    fn rename_state(settings: &CSettings, renaming: &Renaming, state: &mut [u8; N]) {
        let Some(f) = settings.core().core.rename_state else { return };
        let to = table(renaming);
        // SAFETY: cmc.h's `rename_state`, with CMC_CORE_NODES_MAX entries
        // in `to` and a state of at least `state_size` bytes.
        unsafe { f(settings.bytes.as_ptr().cast(), to.as_ptr(), state.as_mut_ptr().cast()) };
    }

    fn rename_payload(settings: &CSettings, renaming: &Renaming, kind: PayloadKind, bytes: &mut [u8]) {
        let Some(f) = settings.core().core.rename_payload else { return };
        let to = table(renaming);
        let (kind, from, dest) = show_kind(kind);
        let (p, len) = (bytes.as_mut_ptr(), bytes.len() as u32);
        // SAFETY: cmc.h's `rename_payload`, with CMC_CORE_NODES_MAX entries
        // in `to` and `len` bytes at `p`.
        unsafe { f(settings.bytes.as_ptr().cast(), to.as_ptr(), kind, from.into(), dest.into(), p, len) };
    }

    fn layout(settings: &CSettings) -> Layout {
        let r = settings.core();
        Layout { name: r.name, state_size: r.state_size, durable: r.durable, settings_size: r.settings_size }
    }
}
