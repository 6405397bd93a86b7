//! A fixed-memory log-linear histogram (HdrHistogram-style: 64 linear sub-buckets per power of two,
//! relative error under 1.6 %) for delay percentiles, so memory does not grow with simulated time.
//! A quantile is the midpoint of its bucket clamped to the smallest and largest values recorded, so
//! it never falls outside what was observed; printed figures carry three significant digits
//! (docs/reports.md), which is what the bucket width supports.
//!
//! Buckets are held only from the smallest to the largest bucket recorded, allocated on the first
//! record: a histogram nothing was recorded in (an idle access link, a flow that has not started)
//! holds no heap memory, and one whose values stay within an octave or two holds a few dozen
//! buckets instead of all 1,920. Zeros are only counted (`zeros`), never held in a bucket: a link
//! that rarely queues records mostly zero delays and a few of a microsecond or more, and holding
//! bucket 0 alongside those would hold (and at the end of the run zero-fill) every bucket between.
//! Counts, quantiles and the bucket list are the same as with every bucket held.

/// Values below 64 get a bucket each; above, each power of two [2^m, 2^(m+1)) is split into 32.
const LINEAR: u64 = 64;
const HALF: u64 = 32;
const N_BUCKETS: usize = (LINEAR + 58 * HALF) as usize;

/// Zero counts, copied into the buckets a histogram grows by.
const ZEROS: [u64; 64] = [0; 64];
/// Buckets summed at a time when a quantile or the bucket list skips over them.
const SKIP: usize = 8;

/// Every count of `chunk` (at most `SKIP` of them) is zero; a whole chunk is tested with a few
/// wide instructions.
#[inline]
fn all_zero(chunk: &[u64]) -> bool {
    match <&[u64; SKIP]>::try_from(chunk) {
        Ok(whole) => whole.iter().fold(0, |a, &c| a | c) == 0,
        Err(_) => chunk.iter().all(|&c| c == 0),
    }
}

#[derive(Clone, Debug)]
pub struct Histogram {
    /// Counts of buckets `first..first + counts.len()`, `first` >= 1; empty until the first
    /// non-zero value is recorded.
    counts: Vec<u64>,
    first: usize,
    /// Values of zero recorded: bucket 0's count.
    zeros: u64,
    total: u64,
    /// Exact: the mean is this sum rounded once. (It was a float sum, which is the same number
    /// while the sum stays below 2^53 ns, 104 days of delays; above, this is the exact one.)
    sum: u128,
    min: u64,
    max: u64,
}

impl Histogram {
    /// Heap bytes of a histogram whose values span every bucket (the most it can hold).
    pub const MAX_HEAP_BYTES: usize = N_BUCKETS * std::mem::size_of::<u64>();

    /// Heap bytes it holds now (its buckets' capacity).
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u64>()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Vec::new(), first: 0, zeros: 0, total: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros() as u64; // >= 6
    let exp = msb - 5; // v >> exp lies in [32, 64)
    let sub = v >> exp;
    (LINEAR + (exp - 1) * HALF + (sub - HALF)) as usize
}

/// Lower bound of a bucket (inverse of `bucket_of`).
fn bucket_low(b: usize) -> u64 {
    let b = b as u64;
    if b < LINEAR {
        return b;
    }
    let exp = (b - LINEAR) / HALF + 1;
    let sub = (b - LINEAR) % HALF + HALF;
    ((sub as u128) << exp).min(u64::MAX as u128) as u64
}

impl Histogram {
    /// Records a non-negative value (e.g. nanoseconds). Inlined into the per-packet paths: a value
    /// in a bucket already held is an increment and four updates; making room is out of line.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = bucket_of(v);
        // `wrapping_sub`: a bucket below `first` wraps to a huge index and takes the slow path too
        // (one bounds check: `get_mut` is it; the slow path counts the value in its new bucket,
        // or a zero in `zeros`: bucket 0 is below every `first`)
        match self.counts.get_mut(b.wrapping_sub(self.first)) {
            Some(c) => *c += 1,
            None => self.count_in_new_bucket(b),
        }
        self.total += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Records `n` values of zero at once (as `n` calls of `record(0)` would).
    pub fn record_zeros(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.zeros += n;
        self.total += n;
        self.min = 0;
    }

    /// Counts a value whose bucket `b` is not held yet (or a zero).
    #[cold]
    #[inline(never)]
    fn count_in_new_bucket(&mut self, b: usize) {
        if b == 0 {
            self.zeros += 1;
            return;
        }
        self.make_room(b);
        let i = b - self.first;
        self.counts[i] += 1;
    }

    /// Holds bucket `b` (not 0) from now on: the first bucket, or the gap to it below or above
    /// those held.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, b: usize) {
        if self.counts.is_empty() {
            self.first = b;
        } else if b < self.first {
            // A new smallest bucket: prepend the gap (rare: at most once per bucket).
            self.counts.splice(0..0, std::iter::repeat_n(0, self.first - b));
            self.first = b;
        }
        let len = b - self.first + 1;
        if len > self.counts.len() {
            // `resize(len, 0)`, with the zeros copied a chunk at a time (a `memcpy` each) instead of
            // stored one by one: the room is reserved once, as `resize` reserves it.
            self.counts.reserve(len - self.counts.len());
            while self.counts.len() < len {
                let k = (len - self.counts.len()).min(ZEROS.len());
                self.counts.extend_from_slice(&ZEROS[..k]);
            }
        }
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.total as f64
        }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The smallest value recorded (`u64::MAX` while empty).
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest relative error of a quantile of values of 64 or more: half a bucket's width over its
    /// lower bound (1/64, 1.6 %); below 64 every integer has a bucket of its own (error under 0.5).
    pub const RELATIVE_ERROR: f64 = 1.0 / 64.0;

    /// The value standing for bucket `b`: the value itself below 64 (one value per bucket), else the
    /// bucket's midpoint; clamped to [min, max] seen (a midpoint can lie outside the values in it).
    fn representative(&self, b: usize) -> f64 {
        let v = if (b as u64) < LINEAR { bucket_low(b) as f64 } else { (bucket_low(b) + bucket_low(b + 1)) as f64 / 2.0 };
        v.clamp(self.min as f64, self.max as f64)
    }

    /// Calls `f` with each non-empty bucket in increasing order: (representative value, count), the
    /// value being the bucket's midpoint clamped to [min, max] seen, as for quantiles. A CDF drawn
    /// from these is the per-sample distribution within RELATIVE_ERROR, at a few hundred rows per
    /// histogram. (A loop rather than an iterator: the zeros' bucket ahead of the held ones made
    /// the iterator's chain a call per bucket in the summary.)
    #[inline]
    pub fn for_each_bucket(&self, mut f: impl FnMut(f64, u64)) {
        if self.zeros > 0 {
            f(self.representative(0), self.zeros);
        }
        // Most buckets between the smallest and largest value are empty: `SKIP` of them at a time
        // are passed over with one test.
        for (k, chunk) in self.counts.chunks(SKIP).enumerate() {
            if all_zero(chunk) {
                continue;
            }
            for (i, &c) in chunk.iter().enumerate() {
                if c > 0 {
                    f(self.representative(self.first + k * SKIP + i), c);
                }
            }
        }
    }

    /// How many buckets `for_each_bucket` lists (the non-empty ones).
    pub fn buckets_used(&self) -> usize {
        let used = |chunk: &[u64]| if all_zero(chunk) { 0 } else { chunk.iter().filter(|&&c| c > 0).count() };
        (self.zeros > 0) as usize + self.counts.chunks(SKIP).map(used).sum::<usize>()
    }

    /// Value at quantile q in [0, 1]: the midpoint of its bucket, clamped to [min, max] seen (a
    /// bucket's midpoint can lie outside the values that fell in it).
    pub fn quantile(&self, q: f64) -> f64 {
        self.quantiles([q])[0]
    }

    /// `quantile` of each of `qs`, in one pass over the buckets held when they come in increasing
    /// order (as percentiles are asked for); a smaller one after a larger starts the pass again.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [f64; N] {
        let mut out = [f64::NAN; N];
        if self.total == 0 {
            return out;
        }
        let counts = &self.counts;
        // The pass stands at bucket `first + i`, having seen the `seen` values below it (the zeros
        // first).
        let (mut i, mut seen, mut last_rank) = (0, self.zeros, 0);
        for (k, q) in qs.into_iter().enumerate() {
            let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
            if rank < last_rank {
                (i, seen) = (0, self.zeros);
            }
            last_rank = rank;
            if rank <= self.zeros {
                out[k] = self.representative(0);
                continue;
            }
            // `SKIP` buckets at a time while the rank lies beyond them, then one at a time: the
            // answer is the first bucket at which the values seen reach the rank.
            while let Some(chunk) = counts.get(i..i + SKIP).and_then(|c| <&[u64; SKIP]>::try_from(c).ok()) {
                let s = chunk.iter().sum::<u64>();
                if seen + s >= rank {
                    break;
                }
                seen += s;
                i += SKIP;
            }
            while i < counts.len() && seen + counts[i] < rank {
                seen += counts[i];
                i += 1;
            }
            out[k] = if i < counts.len() { self.representative(self.first + i) } else { self.max as f64 };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Histogram {
        /// The buckets `for_each_bucket` lists.
        fn buckets(&self) -> Vec<(f64, u64)> {
            let mut out = Vec::new();
            self.for_each_bucket(|v, c| out.push((v, c)));
            out
        }
    }

    #[test]
    fn zeros_recorded_at_once_are_the_same_as_one_by_one() {
        // Before, among and after other values; into an empty histogram and one whose lowest
        // bucket is above zero.
        for others in [vec![], vec![5, 70_000, 3], vec![1_000_000], vec![0, 12]] {
            for n in [0u64, 1, 7] {
                let (mut one, mut many) = (Histogram::default(), Histogram::default());
                for &v in &others {
                    one.record(v);
                    many.record(v);
                }
                for _ in 0..n {
                    one.record(0);
                }
                many.record_zeros(n);
                assert_eq!(format!("{one:?}"), format!("{many:?}"), "{others:?} and {n} zeros");
                // and as a histogram holding every bucket (bucket 0 among them) answers
                let mut full = vec![0u64; N_BUCKETS];
                for &v in others.iter().chain(std::iter::repeat_n(&0, n as usize)) {
                    full[bucket_of(v)] += 1;
                }
                let want: Vec<(f64, u64)> = full.iter().enumerate().filter(|(_, &c)| c > 0).map(|(b, &c)| (many.representative(b), c)).collect();
                assert_eq!(many.buckets(), want, "{others:?} and {n} zeros");
                assert_eq!(many.buckets_used(), want.len());
                let total = many.count();
                for q in [0.0, 0.1, 0.3, 0.5, 0.7, 0.95, 1.0] {
                    let rank = ((q * total as f64).ceil() as u64).max(1);
                    let mut seen = 0;
                    let b = full.iter().position(|&c| {
                        seen += c;
                        seen >= rank
                    });
                    let want = b.map_or(f64::NAN, |b| many.representative(b));
                    assert_eq!(many.quantile(q).to_bits(), want.to_bits(), "{others:?} and {n} zeros, q{q}");
                }
                assert_eq!(many.heap_bytes(), one.heap_bytes());
                if others.iter().all(|&v| v == 0) {
                    assert_eq!(many.heap_bytes(), 0, "zeros alone hold no bucket");
                }
            }
        }
    }

    #[test]
    fn buckets_are_monotone_and_cover_values() {
        let mut prev = 0;
        for v in (0..100_000u64).chain([1 << 20, 123_456_789, 40_000_000_000]) {
            let b = bucket_of(v);
            assert!(b >= prev || v < 100_000, "non-monotone at {v}");
            assert!(bucket_low(b) <= v && v < bucket_low(b + 1), "v={v} b={b} [{}, {})", bucket_low(b), bucket_low(b + 1));
            prev = b;
        }
    }

    #[test]
    fn quantiles_within_two_percent() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for (q, want) in [(0.5, 50_000_000.0), (0.95, 95_000_000.0), (0.99, 99_000_000.0)] {
            let got = h.quantile(q);
            assert!((got - want).abs() / want < 0.02, "q{q}: {got} vs {want}");
        }
        assert!((h.mean() - 50_000_500.0).abs() < 1.0);
    }

    #[test]
    fn quantiles_stay_within_the_observed_range() {
        // All samples in one bucket whose midpoint lies above them: p50 must not exceed the maximum
        // nor fall below the minimum (the old midpoint-only rule printed p50 below the minimum when
        // the samples sat in the top of a bucket, and above the maximum in the bottom).
        let mut h = Histogram::default();
        for v in [140_000_000u64, 140_000_100, 140_000_200] {
            h.record(v);
        }
        for q in [0.0, 0.5, 0.95, 1.0] {
            let got = h.quantile(q);
            assert!((140_000_000.0..=140_000_200.0).contains(&got), "q{q}: {got}");
        }
        let mut h = Histogram::default();
        let (lo, hi) = (bucket_low(bucket_of(1_000_000)), bucket_low(bucket_of(1_000_000) + 1));
        for v in [hi - 3, hi - 2, hi - 1] {
            h.record(v);
        }
        assert!(h.quantile(0.5) >= (hi - 3) as f64, "p50 {} below the minimum {}", h.quantile(0.5), hi - 3);
        assert!(lo < hi);
        assert_eq!(h.min(), hi - 3);
    }

    #[test]
    fn buckets_count_every_sample_in_order() {
        let mut h = Histogram::default();
        for v in [5u64, 5, 70, 1_000_000, 1_000_001, 3_000_000_000] {
            h.record(v);
        }
        let b: Vec<(f64, u64)> = h.buckets();
        assert_eq!(h.buckets_used(), b.len());
        assert_eq!(b.iter().map(|&(_, c)| c).sum::<u64>(), 6);
        assert!(b.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(b[0], (5.0, 2));
        assert!(b.iter().all(|&(v, _)| (5.0..=3e9).contains(&v)));
    }

    #[test]
    fn buckets_are_held_only_between_the_values_recorded() {
        let mut h = Histogram::default();
        assert_eq!(h.heap_bytes(), 0, "nothing allocated before the first record");
        assert!(h.quantile(0.5).is_nan());
        h.record(0);
        assert_eq!(h.heap_bytes(), 0, "a zero is only counted");
        h.record(5);
        assert!(h.heap_bytes() > 0 && h.heap_bytes() < 64);
        // Values arriving in any order, downwards too, give the same answers as one full array.
        let values: Vec<u64> = (0..5000u64).map(|k| (k * 7_919_993) % 90_000_000 + 10_000_000).collect();
        let (mut lazy, mut full) = (Histogram::default(), vec![0u64; N_BUCKETS]);
        for &v in &values {
            lazy.record(v);
            full[bucket_of(v)] += 1;
        }
        let held: Vec<(usize, u64)> = lazy.counts.iter().enumerate().map(|(i, &c)| (lazy.first + i, c)).filter(|&(_, c)| c > 0).collect();
        let want: Vec<(usize, u64)> = full.iter().enumerate().map(|(b, &c)| (b, c)).filter(|&(_, c)| c > 0).collect();
        assert_eq!(held, want);
        assert!(lazy.counts.len() < N_BUCKETS / 10, "{} buckets held for one decade of values", lazy.counts.len());
    }

    #[test]
    fn quantiles_in_one_pass_are_each_quantile() {
        let mut h = Histogram::default();
        assert!(h.quantiles([0.5, 0.9]).iter().all(|q| q.is_nan()));
        for k in 0..3000u64 {
            h.record((k * 7_919_993) % 50_000_000 + if k % 7 == 0 { 200_000_000 } else { 1_000 });
        }
        let qs = [0.0, 0.001, 0.25, 0.5, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0];
        let one_pass = h.quantiles(qs);
        for (q, got) in qs.iter().zip(one_pass) {
            assert_eq!(got, h.quantile(*q), "q{q}");
        }
        // out of order: still each one's own answer
        assert_eq!(h.quantiles([0.99, 0.5, 0.95]), [h.quantile(0.99), h.quantile(0.5), h.quantile(0.95)]);
        // the reference: the first bucket whose cumulative count reaches the rank, over all buckets
        let total = h.count();
        for &q in &qs {
            let rank = ((q * total as f64).ceil() as u64).max(1);
            let mut seen = 0;
            let b = h.counts.iter().position(|&c| {
                seen += c;
                seen >= rank
            });
            assert_eq!(h.quantile(q), h.representative(h.first + b.unwrap()), "q{q}");
        }
    }

    #[test]
    fn sparse_buckets_are_listed_and_counted_as_a_plain_walk_finds_them() {
        // Values spread over a few hundred buckets with most of them empty (an access link's
        // queueing delays), and a dense histogram: the chunked walks against plain ones.
        let mut rng = ccsim_cc::Rng::new(5, 7);
        for spread in [3u64, 40, 400_000, 40_000_000] {
            let mut h = Histogram::default();
            for _ in 0..300 {
                h.record(rng.next_u64() % spread * (1 + rng.next_u64() % 3));
            }
            let zeros = (h.zeros > 0).then(|| (h.representative(0), h.zeros));
            let plain: Vec<(f64, u64)> = zeros
                .into_iter()
                .chain(h.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (h.representative(h.first + i), c)))
                .collect();
            assert_eq!(h.buckets(), plain, "spread {spread}");
            assert_eq!(h.buckets_used(), plain.len());
            for q in [0.0, 0.01, 0.3, 0.5, 0.95, 0.99, 1.0] {
                let rank = ((q * h.count() as f64).ceil() as u64).max(1);
                let mut seen = h.zeros;
                let b = if seen >= rank {
                    0
                } else {
                    h.first
                        + h.counts
                            .iter()
                            .position(|&c| {
                                seen += c;
                                seen >= rank
                            })
                            .unwrap()
                };
                assert_eq!(h.quantile(q), h.representative(b), "spread {spread} q{q}");
            }
        }
    }

    #[test]
    fn growing_holds_the_room_a_resize_would() {
        // The buckets grow by the same steps as `resize`, so a histogram holds the same memory.
        let mut rng = ccsim_cc::Rng::new(3, 1);
        let mut h = Histogram::default();
        let mut reference: Vec<u64> = Vec::new();
        for _ in 0..2000 {
            let v = rng.next_u64() % (1 << (rng.next_u64() % 40));
            let b = bucket_of(v);
            // (a zero is only counted)
            if b > 0 && (reference.is_empty() || b >= h.first) {
                let first = if reference.is_empty() { b } else { h.first };
                if b - first >= reference.len() {
                    reference.resize(b - first + 1, 0);
                }
                h.record(v);
                assert_eq!(h.counts.len(), reference.len());
                assert_eq!(h.counts.capacity(), reference.capacity());
            }
        }
    }

    #[test]
    fn relative_error_bound_holds() {
        // The unclamped estimate (the bucket's midpoint) is within RELATIVE_ERROR of every value in it.
        for v in (64..200_000u64).chain((0..2000).map(|k| 1_000_000 + k * 7_919_993)) {
            let b = bucket_of(v);
            let mid = (bucket_low(b) + bucket_low(b + 1)) as f64 / 2.0;
            assert!((mid - v as f64).abs() / v as f64 <= Histogram::RELATIVE_ERROR + 1e-12, "{v}: {mid}");
        }
    }
}
