//! The SACK scoreboard of RFC 6675 section 3: which sequence ranges above snd_una the receiver has
//! reported (RFC 2018), and the loss rule IsLost() derived from it.

/// Sorted, disjoint, non-adjacent ranges [start, end) of SACKed bytes, all above snd_una.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    ranges: Vec<(u64, u64)>,
    /// Bytes the ranges cover, kept as they change: the sender asks for it several times per ACK
    /// (RFC 6675 pipe, the delivered count), a sum over the ranges each time.
    total: u64,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.total = 0;
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
        let mut held = 0;
        let (s, e) = crate::ranges::insert_merged_visit(&mut self.ranges, start, end, |a, b| held += b - a);
        let newly = (e - s) - held;
        self.total += newly;
        newly
    }

    /// Drops everything below the new cumulative ACK.
    pub fn advance(&mut self, snd_una: u64) {
        if self.ranges.is_empty() {
            return;
        }
        // The ranges wholly below snd_una are a prefix; the first one left may be cut.
        let gone = self.ranges.partition_point(|&(_, b)| b <= snd_una);
        let mut removed: u64 = self.ranges[..gone].iter().map(|(a, b)| b - a).sum();
        self.ranges.drain(..gone);
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < snd_una {
                removed += snd_una - first.0;
                first.0 = snd_una;
            }
        }
        self.total -= removed;
        debug_assert_eq!(self.total, self.sum());
    }

    /// SACKed bytes in all.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// SACKed bytes inside [from, to).
    pub fn sacked_in(&self, from: u64, to: u64) -> u64 {
        self.ranges.iter().map(|&(a, b)| b.min(to).saturating_sub(a.max(from))).sum()
    }

    /// The parts of [start, end) not SACKed yet, in order (what a new block newly reports).
    pub fn uncovered(&self, start: u64, end: u64, out: &mut Vec<(u64, u64)>) {
        let mut from = start;
        for &(a, b) in &self.ranges {
            if b <= from {
                continue;
            }
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
        self.ranges.iter().find(|&&(a, b)| a <= seq && seq < b).map(|&(_, b)| b)
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
}
