//! A lock server with a wait queue, as the core `lock-service`.
//!
//! Node 0 is the lock server; every node, the server included, runs one lock
//! user, and user `u` is node `u`. A client request at node `n` (CLIENT(n))
//! asks for the lock once more: a remote user sends `Acquire(r)`, where `r`
//! counts its requests from 1, and the server's own user acquires locally.
//! A user holds the lock until its timer 0 fires, then releases it
//! (`Release(r)`) and asks again if it has requests left; a user has at most
//! one request outstanding. The server grants a free lock at once, even with
//! users waiting (a newcomer may barge in), and otherwise queues the user.
//! On release it wakes the lowest waiting user (`out.wake(u)`); the WAKE
//! grants that user the lock if it is still free and leaves it waiting if a
//! newcomer took it meanwhile, for the newcomer's release wakes again. The
//! protocol is idempotent under duplicated messages: the server ignores an
//! `Acquire` whose request id it has seen and a `Release` that is not the
//! current holder's, and a user ignores a `Grant` it is not waiting for.
//!
//! Properties: `mutual-exclusion` (at most one user holds the lock) and
//! `all-requests-served` (eventually: in a world with nothing left to do
//! every request has been granted).
//!
//! Planted bugs: `bug_lost_wakeup` (a woken user that finds the lock taken
//! by a newcomer is dropped from the queue, so the newcomer's release wakes
//! nobody and the user waits forever; found through `all-requests-served`)
//! and `bug_unchecked_release` (the server frees the lock on any `Release`,
//! so a duplicated one frees a lock another user holds; found through
//! `mutual-exclusion`).
//!
//! Actions exercised (bag network with a dup by default, FIFO too): CLIENT,
//! DELIVER, DUP, FIRE, WAKE.

use std::fmt;

use cmc::{Context, Core, Effects, Event, Model, Network, NodeId, limits};
use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

cmc::settings! {
    /// Settings of `lock-service`.
    pub struct LockServiceSettings {
        /// Planted bug: a woken waiter that finds the lock taken is dropped
        /// from the wait queue.
        bug_lost_wakeup: u8 = 0,
        /// Planted bug: any `Release` frees the lock, whoever holds it.
        bug_unchecked_release: u8 = 0,
    }
}

/// Message tags; each carries a request id.
pub mod msg {
    /// `Acquire(r)`, user to server: request `r` for the lock.
    pub const ACQUIRE: u8 = 1;
    /// `Grant(r)`, server to user: request `r` holds the lock.
    pub const GRANT: u8 = 2;
    /// `Release(r)`, user to server: the holder of request `r` lets go.
    pub const RELEASE: u8 = 3;
}

/// The timer a holder releases the lock on.
pub const HOLD: u8 = 0;

/// One node's state; nothing is durable.
#[derive(Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct LockState {
    /// Server: the holder's user id plus one, 0 when the lock is free.
    pub holder: u8,
    /// Server: the holder's request id.
    pub holder_req: u8,
    /// Server: waiting users, by bit.
    pub waiting: u8,
    /// Server: per user, the highest request id seen.
    pub last_req: [u8; limits::NODES_MAX],
    /// This node's user: requests made (client requests received).
    pub requested: u8,
    /// This node's user: requests granted.
    pub granted: u8,
    /// This node's user: 1 while it holds the lock.
    pub holding: u8,
}

impl fmt::Debug for LockState {
    /// The user's counts, then the server's lock table if there is one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "user: granted {}/{}", self.granted, self.requested)?;
        if self.holding != 0 {
            f.write_str(" HOLDING")?;
        }
        let table = self.holder != 0 || self.waiting != 0 || self.last_req.iter().any(|&r| r != 0);
        if table {
            match self.holder {
                0 => f.write_str("; lock free")?,
                h => write!(f, "; lock held by {} (request {})", h - 1, self.holder_req)?,
            }
            let waiting: Vec<u8> = (0..8).filter(|u| self.waiting & (1 << u) != 0).collect();
            let last: Vec<String> = (0..limits::NODES_MAX)
                .filter(|&u| self.last_req[u] != 0)
                .map(|u| format!("{u}:{}", self.last_req[u]))
                .collect();
            write!(f, ", waiting {waiting:?}, last request ids {{{}}}", last.join(", "))?;
        }
        Ok(())
    }
}

/// The core `lock-service`.
pub struct LockService;

impl Core for LockService {
    const NAME: &'static str = "lock-service";
    type State = LockState;
    type Settings = LockServiceSettings;
    const DURABLE: usize = 0;

    fn step(ctx: &Context<'_, Self::Settings>, s: &mut LockState, event: Event<'_>, out: &mut Effects) {
        match event {
            Event::Init { .. } => *s = LockState::new_zeroed(),
            Event::Client { .. } => {
                s.requested = s.requested.saturating_add(1);
                // The first outstanding request goes out now; later ones
                // wait for the release.
                if s.holding == 0 && s.requested == s.granted + 1 {
                    ask(ctx, s, s.requested, out);
                }
            }
            Event::Fire { timer: HOLD } if s.holding != 0 => {
                s.holding = 0;
                if ctx.node == 0 {
                    release(ctx, s, 0, s.granted, out);
                } else {
                    out.send(0, &[msg::RELEASE, s.granted]);
                }
                if s.requested > s.granted {
                    ask(ctx, s, s.granted + 1, out);
                }
            }
            // Anything but the grant this user waits for is a duplicate.
            Event::Deliver { msg: [msg::GRANT, r], .. }
                if s.holding == 0 && *r == s.granted + 1 && *r <= s.requested =>
            {
                take(s, *r, out)
            }
            Event::Deliver { from, msg: [msg::ACQUIRE, r] } if ctx.node == 0 => acquire(ctx, s, from, *r, out),
            Event::Deliver { from, msg: [msg::RELEASE, r] } if ctx.node == 0 => release(ctx, s, from, *r, out),
            Event::Wake { waiter } if ctx.node == 0 => {
                let bit = 1 << waiter;
                if s.waiting & bit == 0 {
                    return;
                }
                if s.holder == 0 {
                    s.waiting &= !bit;
                    grant(ctx, s, waiter, s.last_req[waiter as usize], out);
                    return;
                }
                // A newcomer barged in: the waiter stays queued, and the
                // newcomer's release wakes it again.
                if ctx.settings.bug_lost_wakeup != 0 {
                    // Forgotten instead: that release finds nobody to wake.
                    s.waiting &= !bit;
                }
            }
            _ => {}
        }
    }
}

/// This node's user asks for request `r`.
fn ask(ctx: &Context<'_, LockServiceSettings>, s: &mut LockState, r: u8, out: &mut Effects) {
    if ctx.node == 0 {
        acquire(ctx, s, 0, r, out);
    } else {
        out.send(0, &[msg::ACQUIRE, r]);
    }
}

/// This node's user takes the lock for request `r`.
fn take(s: &mut LockState, r: u8, out: &mut Effects) {
    s.granted = r;
    s.holding = 1;
    out.arm(HOLD);
}

/// Server: user `u` asks for the lock with request `r`.
fn acquire(ctx: &Context<'_, LockServiceSettings>, s: &mut LockState, u: NodeId, r: u8, out: &mut Effects) {
    if r <= s.last_req[u as usize] {
        return; // A duplicate.
    }
    s.last_req[u as usize] = r;
    if s.holder == 0 {
        grant(ctx, s, u, r, out);
    } else {
        s.waiting |= 1 << u;
    }
}

/// Server: gives the lock to user `u` for request `r`.
fn grant(ctx: &Context<'_, LockServiceSettings>, s: &mut LockState, u: NodeId, r: u8, out: &mut Effects) {
    s.holder = u + 1;
    s.holder_req = r;
    if u == ctx.node {
        take(s, r, out);
    } else {
        out.send(u, &[msg::GRANT, r]);
    }
}

/// Server: user `u` releases request `r`.
fn release(ctx: &Context<'_, LockServiceSettings>, s: &mut LockState, u: NodeId, r: u8, out: &mut Effects) {
    let mut holds = s.holder == u + 1 && s.holder_req == r;
    if ctx.settings.bug_unchecked_release != 0 {
        holds = true;
    }
    if !holds {
        return; // A duplicate.
    }
    s.holder = 0;
    s.holder_req = 0;
    if s.waiting != 0 {
        out.wake(s.waiting.trailing_zeros() as u8);
    }
}

/// Three nodes (the server and two remote users, three users in all), one
/// request each, a bag network with one duplicate.
pub fn model(settings: LockServiceSettings) -> Model<LockService> {
    Model::<LockService>::new(settings)
        .nodes(3)
        .network(Network::Bag)
        .dups(1)
        .clients(1)
        .always("mutual-exclusion", |w| w.states().filter(|s| s.holding != 0).count() <= 1)
        .eventually("all-requests-served", |w| w.states().all(|s| s.granted == s.requested))
}
