//! The order in which a listing of a node's data directory gives its names
//! (`dir_order`, [`DirOrder`](super::world::DirOrder)).
//!
//! ext4 lists a directory (indexed or of one block alike) by a hash of
//! each name under the file system's seed, made at `mkfs`; in a directory
//! of one block, as a data directory is, `.` and `..` are names like the
//! others there (an indexed one gives them first, one order among these).
//! The seed is not known, so the
//! order of two names is anyone's until a listing shows it, and fixed from
//! then on, across crashes and lives (it is the file system's). The world
//! keeps the names shown, in their order (`Disk::order`); a listing that
//! shows names not yet shown branches over the ways they may fall among
//! those shown before: `m` new names among `r` fall `(r + 1)(r + 2)...(r +
//! m)` ways, each an action `ORDER(n, i)`, i from 0. Way `i` places the new
//! names in sorted order, the j-th (from 0) at position `i_j` of the order
//! so far, where `i = i_0 + (r + 1) (i_1 + (r + 2) (i_2 + ...))`.

use super::limits;

/// The names a listing shows of a directory whose names are `names`
/// (`Disk::current`): `.`, `..` (which a directory of one block hashes
/// like the others) and those.
pub fn listed(names: &std::collections::BTreeMap<Vec<u8>, u32>) -> Vec<Vec<u8>> {
    let mut listed = vec![b".".to_vec(), b"..".to_vec()];
    listed.extend(names.keys().cloned());
    listed
}

/// The names of `present` that no listing has shown (not in `shown`), in
/// name order.
pub fn unshown<'a>(shown: &[Vec<u8>], present: impl Iterator<Item = &'a Vec<u8>>) -> Vec<Vec<u8>> {
    let mut new: Vec<Vec<u8>> = present.filter(|name| !shown.contains(name)).cloned().collect();
    new.sort_unstable();
    new.dedup();
    new
}

/// The ways `new` names may fall among `shown` names; `None` past
/// [`limits::DIR_ORDERS_MAX`].
pub fn ways(shown: usize, new: usize) -> Option<u32> {
    let mut ways: u64 = 1;
    for j in 1..=new as u64 {
        ways = ways.checked_mul(shown as u64 + j)?;
        if ways > limits::DIR_ORDERS_MAX as u64 {
            return None;
        }
    }
    Some(ways as u32)
}

/// Places `new` (in name order) into `order` the `way`-th way (module
/// docs).
pub fn place(order: &mut Vec<Vec<u8>>, new: &[Vec<u8>], mut way: u32) {
    for name in new {
        let radix = order.len() as u32 + 1;
        order.insert((way % radix) as usize, name.clone());
        way /= radix;
    }
}

/// Where `name` falls in `order` (the names not in it last, in name order:
/// none are, once a listing has placed them).
pub fn rank(order: &[Vec<u8>], name: &[u8]) -> usize {
    order.iter().position(|o| o == name).unwrap_or(usize::MAX)
}

/// A listing's position under the hash order: that of the entry `name`,
/// as ext4's is the hash of the entry a listing goes on from (its
/// `d_off`, which `telldir` and `seekdir` keep). A function of the name
/// alone, so a position stays the entry's when names are placed around it
/// (a place in the order would move); never 0 (a listing's start) nor
/// `u32::MAX` (its end).
pub fn position(name: &[u8]) -> u32 {
    (xxhash_rust::xxh3::xxh3_64(name) % (u32::MAX as u64 - 1)) as u32 + 1
}

/// The place in `order` a listing at position `pos` goes on from: the
/// start for 0, else the entry whose position it is; `None` for a
/// position no listing gave.
pub fn resume(order: &[Vec<u8>], pos: u32) -> Option<usize> {
    match pos {
        0 => Some(0),
        _ => order.iter().position(|o| position(o) == pos),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    /// A position is the entry's whatever is placed around it, and no two
    /// names the order may hold share one.
    #[test]
    fn a_position_follows_its_entry() {
        let mut order: Vec<Vec<u8>> = [&b"."[..], b"..", b"x", b"y"].iter().map(|n| n.to_vec()).collect();
        let at = resume(&order, position(b"y")).unwrap();
        assert_eq!(order[at], b"y");
        place(&mut order, &[b"a".to_vec()], 0);
        assert_eq!(order[resume(&order, position(b"y")).unwrap()], b"y");
        assert_eq!(resume(&order, 0), Some(0));
        assert_eq!(resume(&order, 12345), None);
    }

    /// Every way is a different order, and every order of the new names
    /// among the shown ones (whose own order stays) is one of them.
    #[test]
    fn each_way_is_one_order_and_every_order_is_a_way() {
        let shown = names(&["b", "a"]);
        let new = names(&["c", "d"]);
        let n = ways(shown.len(), new.len()).unwrap();
        assert_eq!(n, 3 * 4);
        let mut all = std::collections::BTreeSet::new();
        for way in 0..n {
            let mut order = shown.clone();
            place(&mut order, &new, way);
            let kept: Vec<_> = order.iter().filter(|o| shown.contains(o)).cloned().collect();
            assert_eq!(kept, shown, "the shown order stays");
            all.insert(order);
        }
        assert_eq!(all.len(), n as usize);
        assert_eq!(ways(0, 1), Some(1), "one name alone falls one way");
        assert_eq!(ways(0, 7), Some(5040));
        assert_eq!(ways(0, 8), None, "past dir_orders_max");
        assert_eq!(unshown(&shown, names(&["d", "a", "c"]).iter()), names(&["c", "d"]));
    }
}
