//! Seeded, splittable pseudo-random streams (xoshiro256++ seeded through SplitMix64).
//!
//! Every component that draws random numbers (a lossy link, a RED queue, an HD flow) owns its own
//! stream derived from the run seed and a stable stream id, so adding a flow never changes the draws
//! of another one, and there is no global generator (unlike FreeBSD's kernel-wide `random()`, see
//! `docs/choices.md`). The algorithm is fixed here, not taken from a crate, so that output stays
//! byte-identical across dependency upgrades.

/// A deterministic random stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A stream for component `stream_id` of the run seeded with `seed`.
    pub fn new(seed: u64, stream_id: u64) -> Rng {
        let mut sm = seed ^ stream_id.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mut s = [0u64; 4];
        for x in &mut s {
            *x = splitmix64(&mut sm);
        }
        if s == [0; 4] {
            s[0] = 1;
        }
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[0].wrapping_add(self.s[3]).rotate_left(23).wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (p <= 0 never, p >= 1 always).
    pub fn bernoulli(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            self.uniform() < p
        }
    }

    /// Exponentially distributed value with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_streams_differ() {
        let mut a = Rng::new(7, 1);
        let mut b = Rng::new(7, 1);
        let mut c = Rng::new(7, 2);
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn uniform_mean_is_about_half_and_bernoulli_rate_matches() {
        let mut r = Rng::new(1, 0);
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "mean {mean}");
        let hits = (0..n).filter(|_| r.bernoulli(0.01)).count() as f64 / n as f64;
        assert!((hits - 0.01).abs() < 0.001, "rate {hits}");
    }
}
