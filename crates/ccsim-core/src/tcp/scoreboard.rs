//! The SACK scoreboard of RFC 6675 section 3: which sequence ranges above snd_una the receiver has
//! reported (RFC 2018), and the loss rule IsLost() derived from it.

/// Sorted, disjoint, non-adjacent ranges [start, end) of SACKed bytes, all above snd_una.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    ranges: Vec<(u64, u64)>,
    /// Bytes the ranges cover, kept as they change: the sender asks for it several times per ACK
    /// (RFC 6675 pipe, the delivered count), a sum over the ranges each time.
    total: u64,
    /// The sender's HighRxt (RFC 6675 section 2: the highest sequence number retransmitted in
    /// this recovery), set by `set_mark`, and the bytes SACKed below it, kept as the ranges and
    /// the mark move: RFC 6675 pipe counts a retransmitted segment once more unless it has been
    /// SACKed since, so it needs the SACKed bytes in [snd_una, HighRxt) on every call, which is
    /// otherwise a sum over most of the scoreboard during a long recovery.
    mark: u64,
    below_mark: u64,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.total = 0;
        self.below_mark = 0;
    }

    /// Index of the first range ending above `seq` (the ranges before it lie wholly at or below).
    fn first_above(&self, seq: u64) -> usize {
        self.ranges.partition_point(|&(_, b)| b <= seq)
    }

    fn sum(&self) -> u64 {
        self.ranges.iter().map(|(a, b)| b - a).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Adds a reported block; returns the number of bytes newly covered.
    pub fn add(&mut self, start: u64, end: u64, snd_una: u64) -> u64 {
        let start = start.max(snd_una);
        if end <= start {
            return 0;
        }
        // The bytes the merged ranges held, so the total changes by what the block newly covers
        // without a sum over every range.
        // The same for the bytes below the mark: those of [start, min(end, mark)) not held yet.
        let below_to = end.min(self.mark);
        let (mut held, mut held_below) = (0, 0);
        let (s, e) = crate::ranges::insert_merged_visit(&mut self.ranges, start, end, |a, b| {
            held += b - a;
            held_below += b.min(below_to).saturating_sub(a.max(start));
        });
        let newly = (e - s) - held;
        self.total += newly;
        self.below_mark += below_to.saturating_sub(start) - held_below;
        self.debug_check();
        newly
    }

    /// Moves the mark (the sender's HighRxt) to `mark`: the bytes SACKed between the old and the new
    /// mark are added or taken off, found by binary search.
    pub fn set_mark(&mut self, mark: u64) {
        if mark >= self.mark {
            self.below_mark += self.sacked_in(self.mark, mark);
        } else {
            self.below_mark -= self.sacked_in(mark, self.mark);
        }
        self.mark = mark;
        self.debug_check();
    }

    /// The mark: the sender's HighRxt.
    #[inline]
    pub fn mark(&self) -> u64 {
        self.mark
    }

    /// SACKed bytes below the mark (the sender's HighRxt).
    #[inline]
    pub fn sacked_below_mark(&self) -> u64 {
        self.below_mark
    }

    /// With debug assertions, the running sums against a sum over every range.
    #[inline]
    fn debug_check(&self) {
        debug_assert_eq!(self.total, self.sum());
        debug_assert_eq!(self.below_mark, self.ranges.iter().map(|&(a, b)| b.min(self.mark).saturating_sub(a)).sum::<u64>());
    }

    /// Drops everything below the new cumulative ACK.
    pub fn advance(&mut self, snd_una: u64) {
        if self.ranges.is_empty() {
            return;
        }
        // The ranges wholly below snd_una are a prefix; the first one left may be cut.
        let gone = self.ranges.partition_point(|&(_, b)| b <= snd_una);
        let mark = self.mark;
        let (mut removed, mut removed_below) = (0, 0);
        for &(a, b) in &self.ranges[..gone] {
            removed += b - a;
            removed_below += b.min(mark).saturating_sub(a);
        }
        self.ranges.drain(..gone);
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < snd_una {
                removed += snd_una - first.0;
                removed_below += snd_una.min(mark).saturating_sub(first.0);
                first.0 = snd_una;
            }
        }
        self.total -= removed;
        self.below_mark -= removed_below;
        self.debug_check();
    }

    /// SACKed bytes in all.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// SACKed bytes inside [from, to): the ranges from the first one reaching above `from`, found by
    /// binary search, up to `to`.
    pub fn sacked_in(&self, from: u64, to: u64) -> u64 {
        let mut sum = 0;
        for &(a, b) in &self.ranges[self.first_above(from)..] {
            if a >= to {
                break;
            }
            sum += b.min(to).saturating_sub(a.max(from));
        }
        sum
    }

    /// SACKed bytes at or above `from`: the last few ranges, walked from the top (what lies above
    /// the IsLost() boundary is less than DupThresh segments).
    pub fn sacked_above(&self, from: u64) -> u64 {
        let mut sum = 0;
        for &(a, b) in self.ranges.iter().rev() {
            if b <= from {
                break;
            }
            sum += b - a.max(from);
        }
        sum
    }

    /// The parts of [start, end) not SACKed yet, in order (what a new block newly reports).
    pub fn uncovered(&self, start: u64, end: u64, out: &mut Vec<(u64, u64)>) {
        let mut from = start;
        for &(a, b) in &self.ranges[self.first_above(start)..] {
            if a >= end {
                break;
            }
            if a > from {
                out.push((from, a));
            }
            from = from.max(b);
        }
        if from < end {
            out.push((from, end));
        }
    }

    /// If `seq` lies in a SACKed range, the end of that range.
    pub fn sacked_until(&self, seq: u64) -> Option<u64> {
        let (a, b) = *self.ranges.get(self.first_above(seq))?;
        (a <= seq).then_some(b)
    }

    /// End of the highest SACKed range (RFC 6675 HighACK + 1), if any.
    pub fn highest(&self) -> Option<u64> {
        self.ranges.last().map(|&(_, b)| b)
    }

    /// RFC 6675 IsLost(): a segment [s, s + len) is lost when more than (DupThresh - 1) * MSS bytes
    /// above it are SACKed. Returns the bound `x` such that exactly the segments with
    /// `s + len <= x` are lost (x = 0 when none are).
    pub fn lost_bound(&self, dupthresh: u32, mss: u64) -> u64 {
        let need = (dupthresh.saturating_sub(1) as u64) * mss + 1;
        let mut above = 0;
        for &(a, b) in self.ranges.iter().rev() {
            if above + (b - a) >= need {
                return b - (need - above);
            }
            above += b - a;
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_merge_and_advance_trims() {
        let mut sb = Scoreboard::default();
        assert_eq!(sb.add(3000, 4000, 1000), 1000);
        assert_eq!(sb.add(5000, 6000, 1000), 1000);
        assert_eq!(sb.add(4000, 5000, 1000), 1000, "fills the gap: one range");
        assert_eq!(sb.add(3500, 4500, 1000), 0, "already covered");
        assert_eq!(sb.total(), 3000);
        assert_eq!(sb.highest(), Some(6000));
        sb.advance(4500);
        assert_eq!(sb.total(), 1500);
        assert_eq!(sb.total(), sb.sum());
        assert_eq!(sb.sacked_until(5000), Some(6000));
        assert_eq!(sb.sacked_until(4000), None);
        sb.clear();
        assert_eq!((sb.total(), sb.sum()), (0, 0));
    }

    #[test]
    fn uncovered_parts_of_a_block() {
        let mut sb = Scoreboard::default();
        sb.add(3000, 4000, 0);
        sb.add(6000, 7000, 0);
        let mut out = Vec::new();
        sb.uncovered(2000, 8000, &mut out);
        assert_eq!(out, vec![(2000, 3000), (4000, 6000), (7000, 8000)]);
        out.clear();
        sb.uncovered(3000, 4000, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn is_lost_needs_more_than_two_segments_sacked_above() {
        let mss = 1000;
        let mut sb = Scoreboard::default();
        sb.add(1000, 3000, 0); // two segments SACKed above segment [0, 1000)
        let x = sb.lost_bound(3, mss);
        assert!(0 + mss > x, "2 segments above: not lost (x={x})");
        sb.add(3000, 4000, 0); // third segment SACKed
        let x = sb.lost_bound(3, mss);
        assert!(0 + mss <= x, "3 segments above: lost (x={x})");
        assert!(1000 + mss > x, "segment [1000,2000) is SACKed anyway; bound stays below it");
    }

    /// SACKed bytes in [from, to) by a walk over every range: the reference for the running sums.
    fn naive_in(sb: &Scoreboard, from: u64, to: u64) -> u64 {
        sb.ranges.iter().map(|&(a, b)| b.min(to).saturating_sub(a.max(from))).sum()
    }

    #[test]
    fn running_sums_match_full_recomputation_over_random_ack_and_sack_sequences() {
        // Random SACK blocks above snd_una, cumulative ACKs, HighRxt moving up and back (a timeout
        // sets it to snd_una) and clears: the total, the bytes below the mark, sacked_in,
        // sacked_above and sacked_until are checked against walks over every range after each step.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mss = 100;
        for _ in 0..100 {
            let mut sb = Scoreboard::default();
            let (mut una, mut snd_max, mut high_rxt) = (0u64, 50 * mss, 0u64);
            for _ in 0..300 {
                match next(10) {
                    0..=5 => {
                        let a = una + next(snd_max - una) / mss * mss;
                        let b = (a + (1 + next(4)) * mss).min(snd_max);
                        let before = sb.total;
                        let newly = sb.add(a.saturating_sub(next(2) * mss), b, una);
                        assert_eq!(sb.total, before + newly);
                    }
                    6 => {
                        una = (una + next(5) * mss).min(snd_max);
                        sb.advance(una);
                        snd_max += next(4) * mss;
                    }
                    7 => {
                        high_rxt = (high_rxt.max(una) + next(6) * mss).min(snd_max);
                        sb.set_mark(high_rxt);
                    }
                    8 => {
                        high_rxt = una;
                        sb.set_mark(high_rxt);
                    }
                    _ => {
                        if next(4) == 0 {
                            sb.clear();
                        }
                    }
                }
                assert_eq!(sb.total(), naive_in(&sb, 0, u64::MAX));
                assert_eq!(sb.sacked_below_mark(), naive_in(&sb, 0, high_rxt));
                assert_eq!(sb.sacked_below_mark(), naive_in(&sb, una, high_rxt.clamp(una, snd_max)), "pipe's retransmitted part");
                assert!(sb.ranges.iter().all(|&(a, b)| una <= a && a < b && b <= snd_max));
                assert!(sb.ranges.windows(2).all(|w| w[0].1 < w[1].0), "sorted, disjoint, not touching");
                let (f, t) = (next(snd_max + 1), next(snd_max + 1));
                assert_eq!(sb.sacked_in(f, t), naive_in(&sb, f, t));
                assert_eq!(sb.sacked_above(f), naive_in(&sb, f, u64::MAX));
                let q = next(snd_max + 1);
                let expect = sb.ranges.iter().find(|&&(a, b)| a <= q && q < b).map(|&(_, b)| b);
                assert_eq!(sb.sacked_until(q), expect);
            }
        }
    }
}
