//! A small, fast, seedable generator (SplitMix64) for data and parameters. Rows are generated
//! from `Rng::keyed(seed, stream, row)` so that a row's values depend on nothing but its key.

#[derive(Debug, Clone)]
pub struct Rng(u64);

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(mix(seed ^ GOLDEN))
    }

    /// A generator for one key of one stream: independent of any other key.
    pub fn keyed(seed: u64, stream: u64, key: u64) -> Self {
        Rng(mix(mix(seed ^ GOLDEN)
            .wrapping_add(stream.wrapping_mul(GOLDEN))
            ^ key.wrapping_mul(0xD6E8_FEB8_6659_FD93)))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }

    /// Uniform integer in `lo..=hi` (multiply-shift; the bias is below 2^-32 for our ranges).
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        let span = hi - lo + 1;
        if span == 0 {
            return self.next_u64();
        }
        lo + ((self.next_u64() as u128 * span as u128) >> 64) as u64
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p
    }

    /// Pick one element of a non-empty slice.
    #[inline]
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as u64 - 1) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_is_deterministic_and_distinct() {
        assert_eq!(
            Rng::keyed(1, 2, 3).next_u64(),
            Rng::keyed(1, 2, 3).next_u64()
        );
        assert_ne!(
            Rng::keyed(1, 2, 3).next_u64(),
            Rng::keyed(1, 2, 4).next_u64()
        );
        assert_ne!(
            Rng::keyed(1, 2, 3).next_u64(),
            Rng::keyed(2, 2, 3).next_u64()
        );
    }

    #[test]
    fn range_is_uniform_chi_square() {
        let mut r = Rng::new(42);
        let k = 20u64;
        let n = 200_000;
        let mut counts = vec![0u64; k as usize];
        for _ in 0..n {
            let v = r.range(1, k);
            assert!((1..=k).contains(&v));
            counts[(v - 1) as usize] += 1;
        }
        let expected = n as f64 / k as f64;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        // 19 degrees of freedom: the 99.9th percentile of chi-square is about 43.8.
        assert!(chi2 < 43.8, "chi2 = {chi2}");
    }
}
