//! Value generators of workload files, for loaded columns and for transaction parameters:
//! sequence, uniform, Zipf (YCSB's, plain or scrambled), latest, Gaussian, NURand, constants,
//! strings, dates, choices and foreign keys. Pure and seedable: a loaded row depends only on
//! (seed, table, column, row id).

use crate::db::Value;
use crate::rng::Rng;
use crate::workload::textgen::TextGen;

/// YCSB's Zipfian constant (`ZipfianGenerator.ZIPFIAN_CONSTANT`).
pub const YCSB_THETA: f64 = 0.99;
/// YCSB's scrambled Zipfian draws from this many items, then hashes into the real range
/// (`ScrambledZipfianGenerator.ITEM_COUNT`).
const SCRAMBLED_ITEMS: u64 = 10_000_000_000;

/// YCSB's 64-bit FNV hash of a long (`Utils.fnvhash64`): used to scramble Zipf draws and to
/// turn key numbers into hashed key names.
pub fn fnvhash64(mut val: i64) -> i64 {
    let mut h: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        h ^= octet;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    h.wrapping_abs()
}

/// zeta(n, theta) = sum over i in 1..=n of 1 / i^theta. Exact up to 10^7 terms; beyond, the
/// tail is the Euler-Maclaurin integral approximation (relative error below 1e-9 there).
pub fn zeta(n: u64, theta: f64) -> f64 {
    const EXACT: u64 = 10_000_000;
    let m = n.min(EXACT);
    let mut s = 0.0;
    for i in 1..=m {
        s += 1.0 / (i as f64).powf(theta);
    }
    if n > m {
        let (a, b) = (m as f64, n as f64);
        let q = 1.0 - theta;
        s += (b.powf(q) - a.powf(q)) / q + 0.5 * (b.powf(-theta) - a.powf(-theta));
    }
    s
}

/// YCSB's ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic
/// databases"): item 0 is the most popular. The item count may grow (for `latest`).
#[derive(Debug, Clone)]
pub struct Zipf {
    items: u64,
    theta: f64,
    zetan: f64,
    zeta2: f64,
    alpha: f64,
    eta: f64,
}

impl Zipf {
    pub fn new(items: u64, theta: f64) -> Self {
        Self::with_zeta(items, theta, zeta(items, theta))
    }

    fn with_zeta(items: u64, theta: f64, zetan: f64) -> Self {
        let zeta2 = zeta(2, theta);
        let mut z = Zipf {
            items,
            theta,
            zetan,
            zeta2,
            alpha: 1.0 / (1.0 - theta),
            eta: 0.0,
        };
        z.eta = z.eta_of();
        z
    }

    fn eta_of(&self) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    /// Grow to `items` (adds the new terms to zeta, like YCSB's incremental recomputation).
    pub fn grow(&mut self, items: u64) {
        if items <= self.items {
            return;
        }
        if items - self.items > 1_000_000 {
            self.zetan = zeta(items, self.theta);
        } else {
            for i in self.items + 1..=items {
                self.zetan += 1.0 / (i as f64).powf(self.theta);
            }
        }
        self.items = items;
        self.eta = self.eta_of();
    }

    /// An item in 0..items.
    #[inline]
    pub fn next(&self, r: &mut Rng) -> u64 {
        let u = unit(r);
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.items - 1);
        }
        let v = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.items - 1)
    }
}

/// Uniform in [0, 1).
#[inline]
fn unit(r: &mut Rng) -> f64 {
    (r.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// How an integer becomes the value sent: as is, or as text `prefix{n}suffix`, optionally
/// after YCSB's FNV hash (hashed key names: `user` + fnvhash64(keynum)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Format {
    pub prefix: String,
    pub suffix: String,
    pub hash: bool,
    pub text: bool,
}

impl Format {
    #[inline]
    pub fn value(&self, n: i64) -> Value {
        let n = if self.hash { fnvhash64(n) } else { n };
        if self.text {
            Value::Text(format!("{}{n}{}", self.prefix, self.suffix))
        } else {
            Value::Int(n)
        }
    }
}

/// A resolved generator (bounds evaluated, parents' ranges known).
#[derive(Debug, Clone)]
pub enum Gen {
    /// Loading: `start + row - 1`.
    Sequence {
        start: i64,
    },
    Uniform {
        min: i64,
        max: i64,
    },
    /// `min + zipf` (scrambled: YCSB's scrambled Zipfian, the popular items spread over the
    /// range by a hash).
    Zipf {
        min: i64,
        n: u64,
        zipf: Box<Zipf>,
        scrambled: bool,
    },
    Gaussian {
        min: i64,
        max: i64,
        mean: f64,
        stddev: f64,
    },
    /// TPC-C 2.1.6: NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
    NuRand {
        a: i64,
        min: i64,
        max: i64,
        c: i64,
    },
    Const(Value),
    /// Random characters, length uniform in min_len..=max_len; with `--compressed-fraction`
    /// from the shared generator calibrated for these lengths (`text`).
    Text {
        min_len: usize,
        max_len: usize,
        text: Option<std::sync::Arc<TextGen>>,
    },
    /// A day uniform in [min_day, max_day] (days since 1970-01-01).
    Date {
        min_day: i64,
        max_day: i64,
    },
    /// One of the values, with cumulative weights (empty: equal weights).
    Choice {
        values: Vec<Value>,
        cum: Vec<u64>,
    },
    /// A key of another table whose keys are `start..start + rows`: random, or (loading only)
    /// spread in order, so that each parent gets the same number of children.
    Fk {
        start: i64,
        rows: i64,
        spread: bool,
        own_rows: i64,
    },
    /// Parameters only: a new key of `table` (index in the spec's tables), partitioned across
    /// connections (see the driver).
    NextKey {
        table: usize,
    },
    /// Parameters only: YCSB's "latest": recently inserted keys of `table` are the popular ones.
    Latest {
        table: usize,
        theta: f64,
    },
}

impl Gen {
    /// The integer or value for row `row` (1-based) of a load, or a parameter draw (`row` 0).
    /// `NextKey` and `Latest` are resolved by the driver, not here.
    #[inline]
    pub fn draw(&self, r: &mut Rng, row: u64, fmt: &Format) -> Value {
        let n = match self {
            Gen::Sequence { start } => start + row as i64 - 1,
            Gen::Uniform { min, max } => uniform(r, *min, *max),
            Gen::Zipf {
                min,
                n,
                zipf,
                scrambled,
            } => {
                let z = zipf.next(r);
                if *scrambled {
                    min + (fnvhash64(z as i64) as u64 % n) as i64
                } else {
                    min + z as i64
                }
            }
            Gen::Gaussian {
                min,
                max,
                mean,
                stddev,
            } => gaussian(r, *min, *max, *mean, *stddev),
            Gen::NuRand { a, min, max, c } => {
                ((uniform(r, 0, *a) | uniform(r, *min, *max)) + c) % (max - min + 1) + min
            }
            Gen::Const(v) => return v.clone(),
            Gen::Text {
                min_len,
                max_len,
                text: tg,
            } => {
                let len = r.range(*min_len as u64, *max_len as u64) as usize;
                if let Some(g) = tg {
                    let mut v = Vec::with_capacity(len);
                    g.fill(r, len, &mut v);
                    return Value::Text(String::from_utf8(v).expect("ASCII alphabet"));
                }
                let mut s = String::with_capacity(len);
                text(r, len, &mut s);
                return Value::Text(s);
            }
            Gen::Date { min_day, max_day } => {
                let (y, m, d) = civil_from_days(uniform(r, *min_day, *max_day));
                return Value::Date { y, m, d };
            }
            Gen::Choice { values, cum } => {
                let i = if cum.is_empty() {
                    r.range(0, values.len() as u64 - 1) as usize
                } else {
                    let x = r.range(0, cum[cum.len() - 1] - 1);
                    cum.partition_point(|&c| c <= x)
                };
                return values[i].clone();
            }
            Gen::Fk {
                start,
                rows,
                spread,
                own_rows,
            } => {
                if *spread && row > 0 {
                    start + ((row as i64 - 1) * rows / (*own_rows).max(1)).min(rows - 1)
                } else {
                    start + uniform(r, 0, rows - 1)
                }
            }
            Gen::NextKey { .. } | Gen::Latest { .. } => 0,
        };
        fmt.value(n)
    }

    /// The index of a `Choice` draw (inline parameters pick a prepared statement by it).
    pub fn choice_index(&self, r: &mut Rng) -> usize {
        match self {
            Gen::Choice { values, cum } => {
                if cum.is_empty() {
                    r.range(0, values.len() as u64 - 1) as usize
                } else {
                    let x = r.range(0, cum[cum.len() - 1] - 1);
                    cum.partition_point(|&c| c <= x)
                }
            }
            _ => 0,
        }
    }
}

#[inline]
fn uniform(r: &mut Rng, min: i64, max: i64) -> i64 {
    min.wrapping_add(r.range(0, max.wrapping_sub(min) as u64) as i64)
}

/// Normal by Box-Muller, redrawn until it falls in [min, max] (bounded: after 64 misses the
/// value is clamped, which only happens for a stddev far wider than the range).
fn gaussian(r: &mut Rng, min: i64, max: i64, mean: f64, stddev: f64) -> i64 {
    for _ in 0..64 {
        let u1 = 1.0 - unit(r);
        let u2 = unit(r);
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let v = (mean + z * stddev).round();
        if v >= min as f64 && v <= max as f64 {
            return v as i64;
        }
    }
    (mean.round() as i64).clamp(min, max)
}

/// Random text of `len` characters, uniform over 62 letters and digits (like YCSB's and
/// sysbench's: they barely compress). With `--compressed-fraction` a `string` generator uses
/// the shared generator of src/workload/textgen.rs instead (`Gen::Text::text`).
pub fn text(r: &mut Rng, len: usize, out: &mut String) {
    const CHARS: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut left = len;
    while left > 0 {
        let mut x = r.next_u64();
        // Ten characters per 64-bit draw (6 bits each, rejection-free via multiply-shift).
        for _ in 0..left.min(10) {
            let c = (((x & 0x3f) * 62) >> 6) as usize;
            out.push(CHARS[c] as char);
            x >>= 6;
            left -= 1;
        }
    }
}

/// Days since 1970-01-01 of y-m-d (Howard Hinnant's days_from_civil).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// y-m-d of a day number (Howard Hinnant's civil_from_days).
pub fn civil_from_days(z: i64) -> (i32, u8, u8) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    ((if m <= 2 { y + 1 } else { y }) as i32, m as u8, d as u8)
}

/// Parse `YYYY-MM-DD` into a day number.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.trim().splitn(3, '-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let d: i64 = it.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    // Reject 2023-02-30 and the like: the round trip must give the same date.
    (civil_from_days(days) == (y as i32, m as u8, d as u8)).then_some(days)
}

/// The scrambled Zipfian of YCSB over `n` items starting at `min`.
pub fn scrambled_zipf(min: i64, n: u64) -> Gen {
    // YCSB precomputes zeta(10^10, 0.99) = 26.46902820178302 for its item count.
    Gen::Zipf {
        min,
        n,
        zipf: Box::new(Zipf::with_zeta(
            SCRAMBLED_ITEMS,
            YCSB_THETA,
            26.469_028_201_783_02,
        )),
        scrambled: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(g: &Gen, n: usize, seed: u64) -> Vec<i64> {
        let mut r = Rng::new(seed);
        (0..n)
            .map(|_| match g.draw(&mut r, 0, &Format::default()) {
                Value::Int(i) => i,
                v => panic!("{v:?}"),
            })
            .collect()
    }

    #[test]
    fn fnv_matches_ycsb() {
        // YCSB's first hashed key is "user6284781860667377211" (key number 0).
        assert_eq!(fnvhash64(0), 6_284_781_860_667_377_211);
        assert_eq!(fnvhash64(1), 8_517_097_267_634_966_620);
        assert!(fnvhash64(12345) >= 0);
    }

    #[test]
    fn zeta_approximation_is_close() {
        // The tail approximation against the exact sum just above the exact limit.
        let exact: f64 = (1..=10_000_100u64)
            .map(|i| 1.0 / (i as f64).powf(0.99))
            .sum();
        let approx = zeta(10_000_100, 0.99);
        assert!((exact - approx).abs() / exact < 1e-9, "{exact} vs {approx}");
        // YCSB's constant for 10^10 items.
        let big = zeta(10_000_000_000, 0.99);
        assert!((big - 26.469_028_201_783_02).abs() < 1e-4, "{big}");
    }

    #[test]
    fn zipf_top_one_percent_share() {
        // Gray et al.'s generator (YCSB's) draws item < k when u < 1 + ((k/n)^(1-theta) - 1)
        // / eta, so over 10,000 items the top 1 % (100 items) get that share of the draws.
        let n = 10_000u64;
        let z = Zipf::new(n, YCSB_THETA);
        let g = Gen::Zipf {
            min: 1,
            n,
            zipf: Box::new(z.clone()),
            scrambled: false,
        };
        let draws = ints(&g, 200_000, 3);
        assert!(draws.iter().all(|v| (1..=n as i64).contains(v)));
        let top = draws.iter().filter(|v| **v <= 100).count() as f64 / draws.len() as f64;
        let want = 1.0 + ((100.0 / n as f64).powf(1.0 - YCSB_THETA) - 1.0) / z.eta;
        // 200k draws: the standard error of a share near 0.5 is 0.0011.
        assert!(
            (top - want).abs() < 0.005,
            "top 1 % share {top:.4} vs {want:.4}"
        );
        // The exact Zipf share is zeta(100) / zeta(10000) = 0.518: the approximation of the
        // algorithm stays within 2 points of it.
        let exact = zeta(100, 0.99) / zeta(n, 0.99);
        assert!((top - exact).abs() < 0.02, "{top:.4} vs exact {exact:.4}");
        // Item 1 alone: 1 / zeta(n), exactly as in the algorithm's first branch.
        let first = draws.iter().filter(|v| **v == 1).count() as f64 / draws.len() as f64;
        assert!((first - 1.0 / zeta(n, 0.99)).abs() < 0.005, "{first}");
    }

    #[test]
    fn scrambled_zipf_stays_in_range_and_is_skewed() {
        let g = scrambled_zipf(0, 1000);
        let draws = ints(&g, 100_000, 5);
        assert!(draws.iter().all(|v| (0..1000).contains(v)));
        let mut counts = vec![0u64; 1000];
        for d in &draws {
            counts[*d as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u64 = counts[..10].iter().sum();
        // The 10 most popular of YCSB's 10^10 items alone carry zeta(10) / 26.47 = 11 % of
        // the draws (a uniform draw would give the top 10 of 1000 about 1 %).
        let share = top10 as f64 / draws.len() as f64;
        assert!(share > 0.10 && share < 0.2, "{share}");
    }

    #[test]
    fn zipf_grows_like_a_fresh_one() {
        let mut z = Zipf::new(1000, 0.99);
        z.grow(5000);
        let f = Zipf::new(5000, 0.99);
        assert!((z.zetan - f.zetan).abs() < 1e-9);
        assert!((z.eta - f.eta).abs() < 1e-12);
    }

    #[test]
    fn nurand_range_and_shape() {
        // TPC-C's customer id: NURand(1023, 1, 3000).
        let g = Gen::NuRand {
            a: 1023,
            min: 1,
            max: 3000,
            c: 259,
        };
        let draws = ints(&g, 100_000, 9);
        assert!(draws.iter().all(|v| (1..=3000).contains(v)));
        assert_eq!(*draws.iter().min().unwrap(), 1);
        assert_eq!(*draws.iter().max().unwrap(), 3000);
        // Non-uniform: the most frequent value is drawn far more often than the mean 33.
        let mut counts = vec![0u64; 3001];
        for d in &draws {
            counts[*d as usize] += 1;
        }
        assert!(*counts.iter().max().unwrap() > 60);
    }

    #[test]
    fn uniform_chi_square() {
        let g = Gen::Uniform { min: -5, max: 14 };
        let draws = ints(&g, 200_000, 11);
        let mut counts = [0f64; 20];
        for d in &draws {
            assert!((-5..=14).contains(d));
            counts[(d + 5) as usize] += 1.0;
        }
        let e = draws.len() as f64 / 20.0;
        let chi2: f64 = counts.iter().map(|c| (c - e).powi(2) / e).sum();
        // 19 degrees of freedom: the 99.9th percentile of chi-square is about 43.8.
        assert!(chi2 < 43.8, "chi2 = {chi2}");
    }

    #[test]
    fn gaussian_mean_and_spread() {
        let g = Gen::Gaussian {
            min: 0,
            max: 1000,
            mean: 500.0,
            stddev: 100.0,
        };
        let d = ints(&g, 50_000, 13);
        let mean = d.iter().sum::<i64>() as f64 / d.len() as f64;
        let var = d.iter().map(|v| (*v as f64 - mean).powi(2)).sum::<f64>() / d.len() as f64;
        assert!((mean - 500.0).abs() < 2.0, "{mean}");
        assert!((var.sqrt() - 100.0).abs() < 2.0, "{}", var.sqrt());
    }

    #[test]
    fn choice_weights_and_text_and_dates() {
        let g = Gen::Choice {
            values: vec![Value::Int(1), Value::Int(2)],
            cum: vec![9, 10],
        };
        let d = ints(&g, 20_000, 17);
        let ones = d.iter().filter(|v| **v == 1).count() as f64 / d.len() as f64;
        assert!((ones - 0.9).abs() < 0.01, "{ones}");
        let mut r = Rng::new(1);
        let mut s = String::new();
        text(&mut r, 100, &mut s);
        assert_eq!(s.len(), 100);
        assert!(s.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
        assert_eq!(parse_date("1970-01-02"), Some(1));
        assert_eq!(parse_date("2023-02-30"), None);
        assert_eq!(parse_date("soon"), None);
    }

    #[test]
    fn fk_spread_gives_each_parent_its_share() {
        // pgbench: 10 tellers per branch.
        let g = Gen::Fk {
            start: 1,
            rows: 3,
            spread: true,
            own_rows: 30,
        };
        let mut r = Rng::new(1);
        let bids: Vec<Value> = (1..=30)
            .map(|row| g.draw(&mut r, row, &Format::default()))
            .collect();
        assert_eq!(bids[0], Value::Int(1));
        assert_eq!(bids[9], Value::Int(1));
        assert_eq!(bids[10], Value::Int(2));
        assert_eq!(bids[29], Value::Int(3));
    }
}
