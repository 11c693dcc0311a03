//! What breadth-first search keeps: the worlds of the level being expanded
//! and of the next one, in their stored form, and one parent link per
//! distinct state, from which a trace is rebuilt by re-running actions.
//!
//! Both are laid out for memory: a level of worlds of one size keeps no
//! offsets, and parent links are six bytes, in fixed-size chunks that are
//! never copied when the search grows.

use super::super::{Checker, Explore};

/// Entries per chunk of a [`Chunked`] array.
const CHUNK: usize = 1 << 14;

/// A growable array in fixed-size chunks: pushing never moves what is
/// there, and the slack is at most one chunk (where a `Vec` that doubles
/// may hold twice what it needs, and both copies while it moves).
pub(crate) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T: Copy> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: Vec::new(), len: 0 }
    }
}

impl<T: Copy> Chunked<T> {
    pub fn push(&mut self, value: T) {
        if self.len % CHUNK == 0 {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        self.chunks[self.len / CHUNK].push(value);
        self.len += 1;
    }

    pub fn get(&self, i: usize) -> T {
        self.chunks[i / CHUNK][i % CHUNK]
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

/// How each distinct state was first reached, by state id. The initial
/// worlds come first (BFS finds every one before any successor), so ids
/// `0..roots.len()` are roots, each kept as its initial variant, a `u32`
/// (initial states are as many as a core declares, millions in some TLA+
/// ports, so a root needs the width an action position does not); every
/// other state keeps its parent's id and the action's position in the
/// parent's action list, six bytes.
#[derive(Default)]
pub(crate) struct Parents {
    roots: Chunked<u32>,
    parent: Chunked<u32>,
    position: Chunked<u16>,
}

/// How a state was first reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Link {
    /// An initial world, by its variant.
    Root { variant: u32 },
    /// A successor: its parent's id and the action's position in the
    /// parent's action list.
    Step { parent: u32, position: u32 },
}

/// Parent links keep action positions in 16 bits; a world with more
/// actions is beyond every front end's limit
/// ([`crate::core::limits::ACTIONS_PER_STATE`] for cores, fewer for
/// programs), so this is a check, not a bound users meet. Initial variants
/// are not positions: a root keeps its variant whole.
pub(crate) const POSITION_MAX: u32 = u16::MAX as u32;

/// Ids are `u32`: the most distinct states a search can number. At 22
/// bytes a state or more (fingerprint and parent link), memory runs out
/// first on all but the largest machines; a search that gets here stops
/// `incomplete` rather than wrap.
pub(crate) const IDS_MAX: usize = u32::MAX as usize;

impl Parents {
    /// Records the next state's link; its id is the count before. Roots
    /// come before every other link.
    pub fn push(&mut self, link: Link) {
        match link {
            Link::Root { variant } => {
                assert_eq!(self.parent.len(), 0, "every initial world is found before any successor");
                self.roots.push(variant);
            }
            Link::Step { parent, position } => {
                debug_assert!(position <= POSITION_MAX, "positions are checked before they are stored");
                debug_assert!((parent as usize) < self.len(), "a parent is recorded before its successors");
                self.parent.push(parent);
                self.position.push(position as u16);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.roots.len() + self.parent.len()
    }

    fn get(&self, id: u32) -> Link {
        let id = id as usize;
        match id.checked_sub(self.roots.len()) {
            None => Link::Root { variant: self.roots.get(id) },
            Some(k) => Link::Step { parent: self.parent.get(k), position: u32::from(self.position.get(k)) },
        }
    }
}

/// The links from a root to state `id`: the root's initial variant, then
/// each action's position in its world's action list.
pub(crate) fn chain(parents: &Parents, id: u32) -> Vec<u32> {
    let mut chain = Vec::new();
    let mut at = id;
    loop {
        match parents.get(at) {
            Link::Root { variant } => {
                chain.push(variant);
                break;
            }
            Link::Step { parent, position } => {
                chain.push(position);
                at = parent;
            }
        }
    }
    chain.reverse();
    chain
}

/// Rebuilds the actions that reach state `id`, by following parent links to
/// a root and re-running each action list.
pub(crate) fn path_to<E: Explore>(c: &mut Checker<E>, parents: &Parents, id: u32) -> Vec<E::Action> {
    replay_chain(c, &chain(parents, id)).0
}

/// Re-runs a chain of links (a root's initial variant, then action
/// positions): the actions, and the world they reach when every one of them
/// could be taken again (`None` if one could not, the path then ending
/// where it stopped).
pub(crate) fn replay_chain<E: Explore>(c: &mut Checker<E>, chain: &[u32]) -> (Vec<E::Action>, Option<E::World>) {
    let e = &mut c.explorer;
    let mut path = vec![e.init_action(chain[0])];
    let mut world = e.empty_world();
    let mut next = e.empty_world();
    let mut actions = Vec::new();
    if !matches!(e.initial(chain[0], &mut world), Ok(true)) {
        return (path, None);
    }
    for &position in &chain[1..] {
        if e.actions(&world, &mut actions).is_err() {
            return (path, None);
        }
        let Some(&action) = actions.get(position as usize) else {
            return (path, None);
        };
        path.push(action);
        if !matches!(e.apply(&world, &action, &mut next), Ok(true)) {
            return (path, None);
        }
        std::mem::swap(&mut world, &mut next);
    }
    (path, Some(world))
}

/// One BFS level: worlds in their stored form. The states of a level are
/// found one after another, so their ids are consecutive: the level keeps
/// the first and, while every world has the same size (a direct-actions
/// core's always do), nothing else; once sizes differ, where each world's
/// bytes end (8 bytes a world).
#[derive(Default)]
pub(crate) struct Level {
    bytes: Vec<u8>,
    first_id: u32,
    count: usize,
    /// The size every world has so far, while they all have one.
    size: Option<usize>,
    ends: Vec<u64>,
}

impl Level {
    pub fn push(&mut self, id: u32, world: &[u8]) {
        if self.count == 0 {
            self.first_id = id;
            self.size = Some(world.len());
        }
        debug_assert_eq!(id as usize, self.first_id as usize + self.count, "level ids are consecutive");
        if let Some(size) = self.size
            && size != world.len()
        {
            self.ends = (1..=self.count).map(|k| (k * size) as u64).collect();
            self.size = None;
        }
        self.bytes.extend_from_slice(world);
        if self.size.is_none() {
            self.ends.push(self.bytes.len() as u64);
        }
        self.count += 1;
    }

    /// Appends `ends.len()` worlds with consecutive ids from `first_id`,
    /// stored back to back in `bytes`, world `i` ending at `ends[i]`: as
    /// many [`Level::push`]es, with one copy.
    pub fn extend(&mut self, first_id: u32, bytes: &[u8], ends: &[u32]) {
        let Some(&last) = ends.last() else { return };
        if self.count == 0 {
            self.first_id = first_id;
            self.size = Some(ends[0] as usize);
        }
        debug_assert_eq!(first_id as usize, self.first_id as usize + self.count, "level ids are consecutive");
        if let Some(size) = self.size
            && !ends.iter().enumerate().all(|(i, &end)| end as usize == (i + 1) * size)
        {
            self.ends = (1..=self.count).map(|k| (k * size) as u64).collect();
            self.size = None;
        }
        let base = self.bytes.len() as u64;
        self.bytes.extend_from_slice(&bytes[..last as usize]);
        if self.size.is_none() {
            self.ends.extend(ends.iter().map(|&end| base + u64::from(end)));
        }
        self.count += ends.len();
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn first_id(&self) -> u32 {
        self.first_id
    }

    /// The id and stored bytes of world `k`.
    pub fn get(&self, k: usize) -> (u32, &[u8]) {
        let (start, end) = match self.size {
            Some(size) => (k * size, (k + 1) * size),
            None => (if k == 0 { 0 } else { self.ends[k - 1] as usize }, self.ends[k] as usize),
        };
        (self.first_id + k as u32, &self.bytes[start..end])
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.count = 0;
        self.size = None;
    }
}

#[cfg(test)]
mod tests {
    use super::{CHUNK, Chunked, Level, Link, Parents, chain};

    #[test]
    fn a_level_keeps_worlds_of_one_size_and_of_many() {
        let mut level = Level::default();
        level.push(7, b"abc");
        level.push(8, b"def");
        assert_eq!(level.get(1), (8, &b"def"[..]));
        level.push(9, b"ghij");
        level.push(10, b"");
        let all: Vec<(u32, &[u8])> = (0..level.len()).map(|k| level.get(k)).collect();
        assert_eq!(all, vec![(7, &b"abc"[..]), (8, &b"def"[..]), (9, &b"ghij"[..]), (10, &b""[..])]);
        level.clear();
        level.push(11, b"xy");
        assert_eq!((level.len(), level.get(0)), (1, (11, &b"xy"[..])));
    }

    #[test]
    fn a_level_extended_at_once_is_the_level_pushed_one_by_one() {
        let cases: [(&[u8], &[u32]); 3] = [(b"abcdef", &[3, 6]), (b"ghi", &[3]), (b"jklmn", &[2, 2, 5])];
        let mut one = Level::default();
        let mut many = Level::default();
        let mut id = 4;
        for (bytes, ends) in cases {
            many.extend(id, bytes, ends);
            let mut from = 0;
            for &end in ends {
                one.push(id, &bytes[from..end as usize]);
                (from, id) = (end as usize, id + 1);
            }
            fn all(l: &Level) -> Vec<(u32, &[u8])> {
                (0..l.len()).map(|k| l.get(k)).collect()
            }
            assert_eq!(all(&many), all(&one));
        }
        assert_eq!(many.get(4), (8, &b""[..]));
        many.extend(10, b"", &[]);
        assert_eq!(many.len(), 6);
    }

    #[test]
    fn a_root_keeps_its_whole_variant_and_a_step_its_parent_and_position() {
        let mut parents = Parents::default();
        for variant in [3, 70_000, u32::MAX - 1] {
            parents.push(Link::Root { variant });
        }
        parents.push(Link::Step { parent: 1, position: 65_535 });
        parents.push(Link::Step { parent: 3, position: 0 });
        assert_eq!(parents.len(), 5);
        assert_eq!(parents.get(1), Link::Root { variant: 70_000 });
        assert_eq!(parents.get(3), Link::Step { parent: 1, position: 65_535 });
        assert_eq!(chain(&parents, 4), vec![70_000, 65_535, 0]);
        assert_eq!(chain(&parents, 2), vec![u32::MAX - 1]);
    }

    #[test]
    fn a_chunked_array_keeps_order_across_chunks() {
        let mut a = Chunked::default();
        for i in 0..(2 * CHUNK + 3) as u32 {
            a.push(i);
        }
        assert_eq!(a.len(), 2 * CHUNK + 3);
        assert!((0..a.len()).all(|i| a.get(i) == i as u32));
    }
}
