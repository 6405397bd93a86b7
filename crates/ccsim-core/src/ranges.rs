//! Sorted, disjoint byte ranges [start, end): the receiver's out-of-order buffer and the sender's
//! SACK scoreboard both keep one.

/// Inserts [start, end), merging it with every range it overlaps or touches; returns the merged range.
pub fn insert_merged(ranges: &mut Vec<(u64, u64)>, start: u64, end: u64) -> (u64, u64) {
    insert_merged_visit(ranges, start, end, |_, _| {})
}

/// `insert_merged`, calling `absorbed(a, b)` for each stored range merged into the new one (in
/// order), so a caller can keep sums over the ranges up to date.
///
/// The ranges are sorted and disjoint, so the ones to merge are a run found by binary search: an
/// insert costs O(log n + merged) comparisons (plus the move of the tail in the vector), not a
/// walk over every stored range (a scoreboard holds one range per SACKed run of segments, hundreds
/// in a long recovery).
pub fn insert_merged_visit(
    ranges: &mut Vec<(u64, u64)>,
    start: u64,
    end: u64,
    mut absorbed: impl FnMut(u64, u64),
) -> (u64, u64) {
    // First range reaching `start` (a range ending exactly at `start` touches it and is merged).
    let first = ranges.partition_point(|&(_, b)| b < start);
    let (mut s, mut e) = (start, end);
    let mut last = first;
    // Every range from `first` on that begins at or before the growing end is merged (a range
    // beginning exactly at the end touches it).
    while last < ranges.len() && ranges[last].0 <= e {
        let (a, b) = ranges[last];
        absorbed(a, b);
        s = s.min(a);
        e = e.max(b);
        last += 1;
    }
    if first == last {
        ranges.insert(first, (s, e));
    } else {
        ranges[first] = (s, e);
        ranges.drain(first + 1..last);
    }
    (s, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The previous definition (a walk over every range), kept as the reference.
    fn insert_merged_linear(ranges: &mut Vec<(u64, u64)>, start: u64, end: u64) -> (u64, u64) {
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

    #[test]
    fn merges_overlapping_and_adjacent_ranges_and_keeps_order() {
        let mut r = vec![(10, 20), (30, 40)];
        assert_eq!(insert_merged(&mut r, 50, 60), (50, 60));
        assert_eq!(insert_merged(&mut r, 20, 30), (10, 40), "touching both neighbours");
        assert_eq!(r, vec![(10, 40), (50, 60)]);
        assert_eq!(insert_merged(&mut r, 0, 5), (0, 5));
        assert_eq!(r, vec![(0, 5), (10, 40), (50, 60)]);
        assert_eq!(insert_merged(&mut r, 3, 70), (0, 70), "spanning all");
        assert_eq!(r, vec![(0, 70)]);
    }

    #[test]
    fn binary_search_insert_matches_the_linear_walk_on_random_blocks() {
        // A small xorshift so the test needs no crate and is the same on every run.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..200 {
            let (mut fast, mut slow) = (Vec::new(), Vec::new());
            for _ in 0..60 {
                let start = next(400);
                let end = start + 1 + next(30);
                let mut seen = Vec::new();
                let got = insert_merged_visit(&mut fast, start, end, |a, b| seen.push((a, b)));
                let before = slow.clone();
                assert_eq!(got, insert_merged_linear(&mut slow, start, end));
                assert_eq!(fast, slow);
                let expect: Vec<_> = before.into_iter().filter(|&(a, b)| !(b < start || a > got.1) && a >= got.0).collect();
                assert_eq!(seen, expect, "the absorbed ranges, in order");
            }
        }
    }
}
