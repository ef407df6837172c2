//! sysbench's random-number distributions (`--rand-type`), re-implemented from the formulas of
//! sysbench 1.0.20's `sb_rand.c` on top of our own generator (`crate::rng`). The shapes are
//! the same; the sequences are not (sysbench uses xoroshiro128+ seeded from libc `random()`).
//!
//! All take an inclusive range `a..=b` of u32 like sysbench's `sb_rand_*(a, b)`.

use serde::Serialize;

use crate::rng::Rng;

/// `--rand-type`; sysbench 1.0.20's default is `special`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
}

/// A distribution with its parameters, precomputed once (like sysbench's `*_mult` constants).
#[derive(Debug, Clone, Copy)]
pub struct Dist {
    pub kind: RandType,
    /// `--rand-spec-iter`: uniform draws summed for the gaussian and special shapes.
    iter: u32,
    iter_mult: f64,
    /// `--rand-spec-pct` / 100 and / 200.
    pct_mult: f64,
    pct_2_mult: f64,
    /// 100 / (100 - `--rand-spec-res`).
    res_mult: f64,
    /// ln(h) / ln(1 - h) for `--rand-pareto-h`.
    pareto_power: f64,
}

impl Dist {
    pub fn new(
        kind: RandType,
        spec_iter: u32,
        spec_pct: u32,
        spec_res: u32,
        pareto_h: f64,
    ) -> Dist {
        Dist {
            kind,
            iter: spec_iter.max(1),
            iter_mult: 1.0 / spec_iter.max(1) as f64,
            pct_mult: spec_pct as f64 / 100.0,
            pct_2_mult: spec_pct as f64 / 200.0,
            res_mult: 100.0 / (100.0 - spec_res.min(99) as f64),
            pareto_power: pareto_h.ln() / (1.0 - pareto_h).ln(),
        }
    }

    /// A value in `a..=b` drawn from this distribution (sysbench's `sb_rand_default`).
    #[inline]
    pub fn draw(&self, r: &mut Rng, a: u32, b: u32) -> u32 {
        match self.kind {
            RandType::Uniform => uniform(r, a, b),
            RandType::Gaussian => self.gaussian(r, a, b),
            RandType::Special => self.special(r, a, b),
            RandType::Pareto => self.pareto(r, a, b),
        }
    }

    fn gaussian(&self, r: &mut Rng, a: u32, b: u32) -> u32 {
        let t = (b - a) as f64 + 1.0;
        let sum: f64 = (0..self.iter).map(|_| unit(r) * t).sum();
        a + (sum * self.iter_mult) as u32
    }

    /// sysbench's "special": with probability `spec_res` % a value uniform in a window of
    /// `spec_pct` % of the range around its middle, otherwise a gaussian over the range.
    fn special(&self, r: &mut Rng, a: u32, b: u32) -> u32 {
        let t = (b - a) as f64;
        let rnd = unit(r);
        if rnd * t * self.res_mult < t {
            let sum: f64 = (0..self.iter).map(|_| unit(r)).sum();
            return a + (sum * t * self.iter_mult) as u32;
        }
        let d = t * self.pct_mult;
        let res = rnd * (d + 1.0) + t / 2.0 - t * self.pct_2_mult;
        a + res as u32
    }

    fn pareto(&self, r: &mut Rng, a: u32, b: u32) -> u32 {
        let t = (b - a) as f64 + 1.0;
        a + (t * unit(r).powf(self.pareto_power)) as u32
    }
}

/// A double in [0, 1) with 53 random bits.
#[inline]
pub fn unit(r: &mut Rng) -> f64 {
    (r.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// sysbench's `sysbench.rand.uniform(a, b)`: used for table numbers whatever `--rand-type` is.
#[inline]
pub fn uniform(r: &mut Rng, a: u32, b: u32) -> u32 {
    r.range(a as u64, b as u64) as u32
}

/// Fill `out` with sysbench's value format: `groups` groups of 11 random digits joined by '-'
/// (c: 10 groups, 119 characters; pad: 5 groups, 59 characters).
pub fn digit_groups(r: &mut Rng, groups: usize, out: &mut String) {
    out.clear();
    for g in 0..groups {
        if g > 0 {
            out.push('-');
        }
        // 11 digits from one 64-bit draw would bias; one draw per digit like sysbench.
        for _ in 0..11 {
            out.push((b'0' + r.range(0, 9) as u8) as char);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(kind: RandType) -> Dist {
        Dist::new(kind, 12, 1, 75, 0.2)
    }

    fn histogram(kind: RandType, n: usize, a: u32, b: u32) -> Vec<u64> {
        let d = dist(kind);
        let mut r = Rng::new(7);
        let mut h = vec![0u64; (b - a + 1) as usize];
        for _ in 0..n {
            let v = d.draw(&mut r, a, b);
            assert!((a..=b).contains(&v), "{kind:?} gave {v} outside {a}..={b}");
            h[(v - a) as usize] += 1;
        }
        h
    }

    #[test]
    fn every_distribution_stays_in_range() {
        for kind in [
            RandType::Uniform,
            RandType::Gaussian,
            RandType::Special,
            RandType::Pareto,
        ] {
            histogram(kind, 50_000, 1, 1000);
            histogram(kind, 1000, 5, 5);
            histogram(kind, 1000, 1, 2);
        }
    }

    #[test]
    fn uniform_is_flat() {
        let h = histogram(RandType::Uniform, 200_000, 1, 10);
        for c in h {
            assert!((19_000..21_000).contains(&c), "{c}");
        }
    }

    #[test]
    fn gaussian_is_centred() {
        let h = histogram(RandType::Gaussian, 100_000, 1, 1000);
        let middle: u64 = h[400..600].iter().sum();
        let edges: u64 = h[..200].iter().chain(&h[800..]).sum();
        // Sum of 12 uniforms: sd of the mean = range/sqrt(144); the middle 20 % holds ~68 %.
        assert!(middle > 60_000, "middle {middle}");
        assert!(edges < 500, "edges {edges}");
    }

    #[test]
    fn special_puts_75_percent_in_the_middle_1_percent() {
        let n = 200_000;
        let h = histogram(RandType::Special, n, 1, 10_000);
        // The window: 1 % of the range (about 101 values) centred on the middle, 4950..=5051.
        let window: u64 = h[4_949..5_051].iter().sum();
        let share = window as f64 / n as f64;
        // 75 % uniform in the window plus the gaussian's own share of it (~1 %).
        assert!((0.74..0.80).contains(&share), "share {share}");
    }

    #[test]
    fn pareto_is_skewed_to_the_low_end() {
        let n = 100_000;
        let h = histogram(RandType::Pareto, n, 1, 1000);
        // h = 0.2: the classic 80/20 rule, 80 % of draws in the lowest 20 % of the range.
        let low: u64 = h[..200].iter().sum();
        let share = low as f64 / n as f64;
        assert!((0.77..0.83).contains(&share), "share {share}");
    }

    #[test]
    fn value_format() {
        let mut r = Rng::new(1);
        let mut s = String::new();
        digit_groups(&mut r, 10, &mut s);
        assert_eq!(s.len(), 119);
        digit_groups(&mut r, 5, &mut s);
        assert_eq!(s.len(), 59);
        for (i, ch) in s.chars().enumerate() {
            if i % 12 == 11 {
                assert_eq!(ch, '-');
            } else {
                assert!(ch.is_ascii_digit());
            }
        }
    }
}
