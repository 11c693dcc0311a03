//! [`cmc::Exchange`] over timely dataflow: one dataflow per worker, an
//! input of (destination, sender, sequence, bytes), an exchange pact that
//! routes by destination, and an operator that files what arrives by round.
//! A round ends when the probe says every worker's input has passed it, so
//! timely's progress tracking is the barrier.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange as Pact;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use crate::failure;

/// One piece of a round's buffer: destination worker, sender, piece
/// number, bytes.
type Piece = (u32, u32, u32, Bytes);

/// Bytes that serialize as one byte string: timely serializes a message
/// between processes with bincode, which writes a `Vec<u8>` (a sequence)
/// one element at a time, and also walks it once more to size it.
#[derive(Clone, Debug, Default)]
struct Bytes(Vec<u8>);

impl serde::Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
        }
        d.deserialize_byte_buf(Visitor)
    }
}

/// A buffer is sent in pieces of at most this many bytes, so that a large
/// round streams through the channels rather than as one allocation.
const PIECE: usize = 1 << 20;

/// What arrived for this worker, by round: a faster worker may send round
/// k + 1 before this one has taken round k.
type Inbox = Rc<RefCell<HashMap<u64, Vec<(u32, u32, Vec<u8>)>>>>;

/// A worker's end of the rounds.
pub(crate) struct Rounds<'w> {
    worker: &'w mut Worker,
    input: InputHandle<u64, CapacityContainerBuilder<Vec<Piece>>>,
    probe: ProbeHandle<u64>,
    inbox: Inbox,
    round: u64,
}

impl<'w> Rounds<'w> {
    /// Builds this worker's dataflow.
    pub fn new(worker: &'w mut Worker) -> Self {
        let inbox: Inbox = Rc::default();
        let mut input = InputHandle::new();
        let probe = ProbeHandle::new();
        let filed = inbox.clone();
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    Pact::new(|p: &Piece| u64::from(p.0)),
                    "Inbox",
                    move |_, _| {
                        move |input, _output| {
                            input.for_each(|cap, data| {
                                let mut inbox = filed.borrow_mut();
                                let round = inbox.entry(*cap.stamp().expect_singleton()).or_default();
                                round.extend(data.drain(..).map(|(_, from, seq, bytes)| (from, seq, bytes.0)));
                            });
                        }
                    },
                )
                .probe_with(&probe);
        });
        Rounds { worker, input, probe, inbox, round: 0 }
    }
}

impl cmc::Exchange for Rounds<'_> {
    fn index(&self) -> usize {
        self.worker.index()
    }

    fn peers(&self) -> usize {
        self.worker.peers()
    }

    fn exchange(&mut self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, String> {
        let me = self.worker.index() as u32;
        let mut sent = 0u64;
        for (to, buf) in out.into_iter().enumerate() {
            if buf.len() <= PIECE {
                if !buf.is_empty() {
                    self.input.send((to as u32, me, 0, Bytes(buf)));
                    sent += 1;
                }
            } else {
                for (seq, piece) in buf.chunks(PIECE).enumerate() {
                    self.input.send((to as u32, me, seq as u32, Bytes(piece.to_vec())));
                    sent += 1;
                    // Let the channels drain while a large round is sent.
                    if sent % 64 == 0 {
                        self.worker.step();
                    }
                }
            }
        }
        self.round += 1;
        self.input.advance_to(self.round);
        while self.probe.less_than(&self.round) {
            if let Some(e) = failure::first() {
                return Err(e);
            }
            self.worker.step_or_park(Some(Duration::from_millis(20)));
        }
        // What was sent in round k carries time k - 1.
        let mut pieces = self.inbox.borrow_mut().remove(&(self.round - 1)).unwrap_or_default();
        pieces.sort_unstable_by_key(|p| (p.0, p.1));
        let mut got: Vec<Vec<u8>> = vec![Vec::new(); self.worker.peers()];
        for (from, _, bytes) in pieces {
            let to = got.get_mut(from as usize).ok_or("internal: a piece from an unknown worker")?;
            if to.is_empty() {
                *to = bytes;
            } else {
                to.extend_from_slice(&bytes);
            }
        }
        Ok(got)
    }
}
