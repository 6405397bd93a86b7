//! Sorted, disjoint byte ranges [start, end): the receiver's out-of-order buffer and the sender's
//! SACK scoreboard both keep one.

/// Inserts [start, end), merging it with every range it overlaps or touches; returns the merged range.
pub fn insert_merged(ranges: &mut Vec<(u64, u64)>, start: u64, end: u64) -> (u64, u64) {
    let (mut s, mut e) = (start, end);
    ranges.retain(|&(a, b)| {
        if b < s || a > e {
            true
        } else {
            s = s.min(a);
            e = e.max(b);
            false
        }
    });
    let pos = ranges.partition_point(|&(a, _)| a < s);
    ranges.insert(pos, (s, e));
    (s, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_overlapping_and_adjacent_ranges_and_keeps_order() {
        let mut r = vec![(10, 20), (30, 40)];
        assert_eq!(insert_merged(&mut r, 50, 60), (50, 60));
        assert_eq!(insert_merged(&mut r, 20, 30), (10, 40), "touching both neighbours");
        assert_eq!(r, vec![(10, 40), (50, 60)]);
        assert_eq!(insert_merged(&mut r, 0, 5), (0, 5));
        assert_eq!(r, vec![(0, 5), (10, 40), (50, 60)]);
    }
}
