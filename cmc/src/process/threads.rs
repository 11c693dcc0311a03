//! A node's threads in the world (SEMANTICS, "Threads"): which thread is
//! where, with no I/O. The supervisor's side (making, running and ending
//! them) is `calls::threads`.
//!
//! A node's threads run one at a time, and switch only where the running
//! one waits, yields or ends. The node's `blocked`, `watch` and `waitall`
//! (`NodeWorld`) are those of one thread, the *slot's*: the running thread
//! while the node runs, and between actions the thread whose wait the
//! actions answer (a read, an accept, a poll, a sleep). Every other thread
//! is here, as the world keeps it: made and not yet run, ready to run,
//! waiting (on a futex, or out of the slot while another thread runs), or
//! ended. Between actions the slot holds the lowest-numbered thread
//! waiting for anything but an untimed futex or a signal
//! ([`NodeWorld::slot_wanted`]), so the world is a function of where each
//! thread is, not of which ran last; an action for another thread waiting
//! for the world names it (`thread k`), and the slot moves to it first.
//! Thread numbers are the world's (the k-th made in this life, the main
//! thread 0), never the kernel's.
//!
//! A node whose life never made a thread has no entry here, and is
//! written as before threads existed.

use std::collections::BTreeMap;

use super::world::{Blocked, Millis, NodeWorld};

/// Where a thread is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadRun {
    /// In the node's slot (`NodeWorld::blocked`).
    Slot,
    /// Made by a clone, and not run yet: it runs from its first call.
    New,
    /// Woken from a futex wait, or yielded: its call returns 0 when it
    /// runs. A yielded thread runs after the other ready ones.
    Ready {
        /// Whether it yielded (`sched_yield`).
        yielded: bool,
    },
    /// Waiting out of the slot, with what the slot would say of it.
    Waits {
        /// The call it waits in.
        blocked: Blocked,
        /// What its poll watches, if it polls.
        watch: BTreeMap<i32, i16>,
        /// What its `MSG_WAITALL` receive has, if it makes one.
        waitall: Vec<u8>,
        /// Whether its call may end if made again (what it waits on is
        /// ready: `Supervisor::wait_may_end`), found before the running
        /// thread's next call (at a `Blocked::Choice`): a SWITCH to it
        /// makes its call again, as on Linux, where it may be woken and
        /// run before that call; the world may still answer it as it
        /// waits.
        changed: bool,
    },
    /// Ended (`exit`, the thread's own).
    Exited,
    /// Was running, and another thread was chosen to run before its next
    /// call (SWITCH at a `Blocked::Choice`): that call is examined when it
    /// runs again.
    Preempted,
    /// Was waiting in a poll or a read of something inside the node (a
    /// pipe, an eventfd, a socketpair, an epoll instance), which another
    /// thread has changed since: its call is made again when it runs, and
    /// returns or waits as it then finds. What its wait had of its own
    /// (a poll's watch, a `MSG_WAITALL` receive's bytes so far, when its
    /// timeout ends) goes back to the slot with it, and the call goes on
    /// from there.
    Again {
        /// What its poll watched.
        watch: BTreeMap<i32, i16>,
        /// What its `MSG_WAITALL` receive had received.
        waitall: Vec<u8>,
        /// Its wait's timeout (a receive timeout, a poll's): none, or when
        /// it ends. Linux reads it when the call begins, so the call made
        /// again keeps it, whatever the descriptor's timeout is now.
        until: Option<Millis>,
    },
}

/// One thread of a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadWorld {
    /// Where it is.
    pub run: ThreadRun,
    /// The word its end clears and wakes (`CLONE_CHILD_CLEARTID`, glibc's
    /// `pthread_join` waits on it), 0 for none.
    pub clear_tid: u64,
}

impl ThreadRun {
    /// Whether it waits for nothing the world brings: a futex with no
    /// timeout, a signal.
    pub fn waits_inside(b: &Blocked) -> bool {
        matches!(b, Blocked::Futex { until: None, .. } | Blocked::Pause | Blocked::Nothing)
    }

    /// Whether it may run now (made or woken, and not running).
    pub fn ready(&self) -> bool {
        matches!(self, ThreadRun::New | ThreadRun::Ready { .. } | ThreadRun::Again { .. } | ThreadRun::Preempted)
    }

    /// Whether a SWITCH at a choice may run it: it may run, or what it
    /// waits on is ready (`Waits { changed: true, .. }`).
    pub fn switchable(&self) -> bool {
        self.ready() || matches!(self, ThreadRun::Waits { changed: true, .. })
    }

    /// Whether it waits for something another thread may change: any
    /// wait but a futex's (a wake ends that) out of the slot (a poll, a
    /// read of a connection another thread shuts down, of a pipe, an
    /// eventfd or a socketpair another thread writes, `Blocked::Pause`).
    pub fn waits_on_node(&self) -> bool {
        matches!(
            self,
            ThreadRun::Waits { blocked, .. }
                if !matches!(blocked, Blocked::Futex { .. } | Blocked::Nothing | Blocked::Sleep { .. })
        )
    }
}

impl NodeWorld {
    /// The thread in the slot (0 for a node that never made one, and for
    /// one whose slot's thread has just ended).
    pub fn slot(&self) -> usize {
        self.slot_of().unwrap_or(0)
    }

    /// The thread in the slot, if one is: none once the slot's has ended,
    /// until the scheduler puts another there.
    pub fn slot_of(&self) -> Option<usize> {
        self.threads.iter().position(|t| t.run == ThreadRun::Slot)
    }

    /// The thread that should run next, if any may: the lowest-numbered
    /// ready one that did not yield, else the lowest that did.
    pub fn next_ready(&self) -> Option<usize> {
        let first = |yielded: bool| {
            self.threads.iter().position(|t| match t.run {
                ThreadRun::New | ThreadRun::Again { .. } | ThreadRun::Preempted => !yielded,
                ThreadRun::Ready { yielded: y } => y == yielded,
                _ => false,
            })
        };
        first(false).or_else(|| first(true))
    }

    /// The threads a SWITCH at a choice may run: every thread that may
    /// run but the fixed one (the running thread, which goes on, where the
    /// choice is before its call; else the lowest-numbered that may run).
    pub fn switch_to(&self) -> Vec<usize> {
        let fixed = if self.slot_of().is_some() { None } else { self.next_ready() };
        (0..self.threads.len()).filter(|&k| self.threads[k].run.switchable() && Some(k) != fixed).collect()
    }

    /// The call thread `k` waits in, in the slot or out of it.
    pub fn blocked_of(&self, k: usize) -> Option<&Blocked> {
        match &self.threads.get(k)?.run {
            ThreadRun::Slot => Some(&self.blocked),
            ThreadRun::Waits { blocked, .. } => Some(blocked),
            _ => None,
        }
    }

    /// The threads waiting for what the world brings (a connection, a
    /// peer, time: anything but an untimed futex or a signal), in thread
    /// order.
    pub fn outward(&self) -> Vec<usize> {
        (0..self.threads.len()).filter(|&k| self.blocked_of(k).is_some_and(|b| !ThreadRun::waits_inside(b))).collect()
    }

    /// The threads waiting for the world out of the slot, whose actions
    /// name them (`thread k`): every one of [`Self::outward`] but the
    /// slot's (between actions, the first of them).
    pub fn outward_out_of_slot(&self) -> Vec<usize> {
        let mut outward = self.outward();
        if let Some(slot) = self.slot_of() {
            outward.retain(|&k| k != slot);
        }
        outward
    }

    /// The thread the slot should hold between actions: the
    /// lowest-numbered one waiting for something the world brings (a
    /// connection, time), else the lowest-numbered one that has not
    /// ended, else the slot's.
    pub fn slot_wanted(&self) -> usize {
        let slot = self.slot_of();
        if let Some(&first) = self.outward().first() {
            return first;
        }
        if let Some(slot) = slot
            && self.blocked_of(slot).is_some_and(|b| *b != Blocked::Nothing)
        {
            return slot;
        }
        self.threads.iter().position(|t| t.run != ThreadRun::Exited).or(slot).unwrap_or(0)
    }

    /// Moves the slot's thread out of it, waiting (or `out` where it is
    /// ready or has ended), leaving the slot empty.
    pub fn swap_out(&mut self, out: Option<ThreadRun>) {
        let Some(slot) = self.slot_of() else { return };
        let leaving = out.unwrap_or_else(|| ThreadRun::Waits {
            blocked: self.blocked,
            watch: std::mem::take(&mut self.watch),
            waitall: std::mem::take(&mut self.waitall),
            changed: false,
        });
        self.threads[slot].run = leaving;
        self.blocked = Blocked::Nothing;
        self.watch.clear();
        self.waitall.clear();
    }

    /// Moves thread `k` into the slot and the slot's thread out of it,
    /// waiting (or `out` where it is ready or has ended). Nothing when `k`
    /// holds it already.
    pub fn swap_slot(&mut self, k: usize, out: Option<ThreadRun>) {
        let slot = self.slot_of();
        if slot == Some(k) || k >= self.threads.len() {
            return;
        }
        if let Some(slot) = slot {
            let leaving = out.unwrap_or_else(|| ThreadRun::Waits {
                blocked: self.blocked,
                watch: std::mem::take(&mut self.watch),
                waitall: std::mem::take(&mut self.waitall),
                changed: false,
            });
            self.threads[slot].run = leaving;
        }
        self.watch.clear();
        self.waitall.clear();
        let coming = std::mem::replace(&mut self.threads[k].run, ThreadRun::Slot);
        self.blocked = match coming {
            ThreadRun::Waits { blocked, watch, waitall, .. } => {
                self.watch = watch;
                self.waitall = waitall;
                blocked
            }
            ThreadRun::Again { watch, waitall, .. } => {
                self.watch = watch;
                self.waitall = waitall;
                Blocked::Nothing
            }
            _ => Blocked::Nothing,
        };
    }

    /// Where each thread is, for a trace: `thread 0 Accept { fd: 4 };
    /// thread 1 Read { fd: 5 }; thread 2 futex; thread 3 ended`; the
    /// slot's wait alone for a node that never made a thread.
    pub fn threads_text(&self) -> String {
        if self.threads.is_empty() {
            return self.blocked.to_string();
        }
        let place = |t: &ThreadWorld| match &t.run {
            ThreadRun::Slot => self.blocked.to_string(),
            ThreadRun::New => "new".to_string(),
            ThreadRun::Ready { yielded: false } => "ready".to_string(),
            ThreadRun::Ready { yielded: true } => "yielded".to_string(),
            ThreadRun::Waits { blocked, changed: false, .. } => blocked.to_string(),
            ThreadRun::Waits { blocked, changed: true, .. } => format!("{blocked}, may end"),
            ThreadRun::Exited => "ended".to_string(),
            ThreadRun::Preempted => "preempted".to_string(),
            ThreadRun::Again { .. } => "waits again".to_string(),
        };
        let mut each: Vec<String> =
            self.threads.iter().enumerate().map(|(k, t)| format!("thread {k} {}", place(t))).collect();
        // A hold with no thread in the slot: a choice of the next thread
        // where the running one has waited.
        if self.slot_of().is_none() && self.blocked != Blocked::Nothing {
            each.insert(0, self.blocked.to_string());
        }
        each.join("; ")
    }

    /// At a choice (`Blocked::Choice`): thread `k`, waiting for the world
    /// out of the slot, takes it, for an action that answers it; the
    /// running thread, where the choice is before its call, goes out
    /// preempted.
    pub fn answer_at_choice(&mut self, k: usize) {
        if self.slot_of().is_some() {
            self.swap_out(Some(ThreadRun::Preempted));
        }
        self.swap_slot(k, None);
    }

    /// Wakes up to `count` threads waiting on the futex word at `addr`
    /// whose wait's bitset meets `bitset`, oldest first; how many.
    pub fn futex_wake(&mut self, addr: u64, bitset: u32, count: u32) -> u32 {
        let mut woken = 0;
        let mut i = 0;
        while i < self.futex_queue.len() && woken < count {
            let k = self.futex_queue[i] as usize;
            let waits_here = matches!(
                self.threads[k].run,
                ThreadRun::Waits { blocked: Blocked::Futex { addr: a, bitset: b, .. }, .. } if a == addr && b & bitset != 0
            );
            if !waits_here {
                i += 1;
                continue;
            }
            // Only the running thread wakes, and it holds the slot: a
            // waiter is out of it.
            self.futex_queue.remove(i);
            self.threads[k].run = ThreadRun::Ready { yielded: false };
            woken += 1;
        }
        woken
    }

    /// The threads' part of the node's encoding (nothing for a node that
    /// never made one): 255, the count, then each thread's place (a tag,
    /// and for a waiting one, tagged by whether what it looks at changed,
    /// its call, watch and `MSG_WAITALL` bytes) and
    /// the word its end clears, then the futex queue.
    pub(super) fn push_threads(&self, out: &mut Vec<u8>) {
        use super::world::{push_blocked, push_bytes, push_count};
        if self.threads.is_empty() {
            return;
        }
        out.push(255);
        push_count(out, self.threads.len());
        for t in &self.threads {
            match &t.run {
                ThreadRun::Slot => out.push(0),
                ThreadRun::New => out.push(1),
                ThreadRun::Ready { yielded } => out.push(2 + *yielded as u8),
                ThreadRun::Waits { blocked, watch, waitall, changed } => {
                    out.push(if *changed { 8 } else { 4 });
                    push_blocked(out, blocked);
                    push_wait(out, watch, waitall);
                }
                ThreadRun::Exited => out.push(5),
                ThreadRun::Again { watch, waitall, until } => {
                    out.push(6);
                    push_wait(out, watch, waitall);
                    match until {
                        None => out.push(0),
                        Some(until) => {
                            out.push(1);
                            out.extend_from_slice(&until.to_le_bytes());
                        }
                    }
                }
                ThreadRun::Preempted => out.push(7),
            }
            out.extend_from_slice(&t.clear_tid.to_le_bytes());
        }
        push_bytes(out, &self.futex_queue);
    }
}

/// What a wait out of the slot has of its own: its poll's watch (count,
/// then each descriptor and its events) and its `MSG_WAITALL` bytes.
fn push_wait(out: &mut Vec<u8>, watch: &BTreeMap<i32, i16>, waitall: &[u8]) {
    use super::world::{push_bytes, push_count, push_fd};
    push_count(out, watch.len());
    for (fd, events) in watch {
        push_fd(out, *fd);
        out.extend_from_slice(&events.to_le_bytes());
    }
    push_bytes(out, waitall);
}
