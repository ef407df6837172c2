//! The evidence behind a claim: one observation per server start, and the interval it allows.
//!
//! Runs on one server process share its buffer-pool layout, its thread placement and its
//! warm-up: measured here, one MariaDB profile started twice differed by 10–45 % on nearly
//! every query while the runs within each start agreed to a few per cent
//! (shared/notes/statistics.md). Pooling the runs as independent samples made intervals far
//! too narrow. So the unit of a claim's evidence is the server start (a pass of the suite):
//! each pass gives one value per side (the mean of its runs and repeats), the two sides of one
//! pass are paired (they ran on the same host in the same hour), and the interval of a/b rests
//! on the per-pass log ratios with P − 1 degrees of freedom (Kalibera and Jones 2013: the
//! uncertainty comes from the outermost level that varies). The spread of the runs within a
//! start is kept beside it, so a reader sees both variance components.
//!
//! A side compared with a constant (a bound: "stalls below 0.5 s") is judged on the linear
//! scale, so a side whose values are 0 can be decided.

use std::collections::BTreeMap;

/// The smallest relative spread a measured side is given per start: a metric that came out
/// exactly equal in every start (a size, a counter) has not shown that it cannot vary, and a
/// spread of zero would make any difference significant. 0.5 % of the value.
pub const SPREAD_FLOOR: f64 = 0.005;

/// One side's value in one server start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StartValue {
    /// The mean of the start's runs and repeats (a divided side: its ratio of means).
    pub mean: f64,
    /// The variance of `ln(mean)` from the spread of the runs inside the start (0 when the
    /// start has one value).
    pub within: f64,
    /// Values behind the mean.
    pub n: usize,
}

impl StartValue {
    /// From the values one start measured.
    pub fn of(values: &[f64]) -> Option<StartValue> {
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let within = if values.len() > 1 && mean != 0.0 {
            let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            var / (n * mean * mean)
        } else {
            0.0
        };
        Some(StartValue {
            mean,
            within,
            n: values.len(),
        })
    }

    /// This value over another of the same start: the within-start spreads add.
    pub fn over(self, base: StartValue) -> StartValue {
        StartValue {
            mean: self.mean / base.mean,
            within: self.within + base.within,
            n: self.n.min(base.n),
        }
    }
}

/// One side of a comparison: a value per server start, or a constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Observed {
    Starts(BTreeMap<u32, StartValue>),
    Constant(f64),
}

/// a/b from the starts both sides have, with its interval and the variance at each level.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub ratio: f64,
    pub ci: [f64; 2],
    /// Server starts (passes) the interval rests on.
    pub starts: usize,
    /// Degrees of freedom of the interval (starts − 1).
    pub df: f64,
    /// The spread between starts: the standard deviation of one start's log a/b beyond what
    /// the runs inside it explain (≈ relative), and the spread inside a start (the standard
    /// error of one start's log a/b from its runs).
    pub between_sd: f64,
    pub within_sd: f64,
    /// a/b of each start.
    pub per_start: Vec<(u32, f64)>,
}

impl Interval {
    pub fn excludes_one(&self) -> bool {
        self.ci[0] > 1.0 || self.ci[1] < 1.0
    }
}

/// The interval of a/b at two-sided confidence `1 − alpha`, the server start as the unit.
/// `Err` says why there is none.
pub fn interval(a: &Observed, b: &Observed, alpha: f64) -> Result<Interval, String> {
    match (a, b) {
        (Observed::Starts(a), Observed::Starts(b)) => paired(a, b, alpha),
        (Observed::Starts(a), Observed::Constant(c)) => against_constant(a, *c, alpha, false),
        (Observed::Constant(c), Observed::Starts(b)) => against_constant(b, *c, alpha, true),
        (Observed::Constant(_), Observed::Constant(_)) => {
            Err("both sides are constants: nothing was measured".into())
        }
    }
}

fn one_start_only(starts: usize) -> Result<(), String> {
    if starts < 2 {
        return Err(format!(
            "{} server start{} per side: the spread between starts is unknown, and it is the spread that moves a verdict (run more passes: --passes 3, or --until-decided)",
            if starts == 0 { "no" } else { "one" },
            if starts == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}

/// Both sides measured: the log ratio of each start, paired by pass.
fn paired(
    a: &BTreeMap<u32, StartValue>,
    b: &BTreeMap<u32, StartValue>,
    alpha: f64,
) -> Result<Interval, String> {
    let mut d = Vec::new();
    let mut within = Vec::new();
    let mut per_start = Vec::new();
    for (p, va) in a {
        let Some(vb) = b.get(p) else { continue };
        if va.mean <= 0.0 || vb.mean <= 0.0 || !va.mean.is_finite() || !vb.mean.is_finite() {
            return Err(format!(
                "a side is {} in pass {p}: no ratio (a side that can be 0 is judged as a bound: the other side a constant, `value = X`)",
                if va.mean <= 0.0 { va.mean } else { vb.mean }
            ));
        }
        d.push(va.mean.ln() - vb.mean.ln());
        within.push(va.within + vb.within);
        per_start.push((*p, va.mean / vb.mean));
    }
    one_start_only(d.len())?;
    let (m, var) = mean_var(&d);
    let w = within.iter().sum::<f64>() / within.len() as f64;
    // Two measured sides, each floored at SPREAD_FLOOR.
    let floor = 2.0 * SPREAD_FLOOR * SPREAD_FLOOR;
    let var_used = var.max(w).max(floor);
    let df = (d.len() - 1) as f64;
    let se = (var_used / d.len() as f64).sqrt();
    let t = t_quantile(df, alpha);
    Ok(Interval {
        ratio: m.exp(),
        ci: [(m - t * se).exp(), (m + t * se).exp()],
        starts: d.len(),
        df,
        between_sd: (var - w).max(0.0).sqrt(),
        within_sd: w.sqrt(),
        per_start,
    })
}

/// One side against a constant `c`, on the linear scale (a side of zeros can be judged);
/// `inverted`: the constant is a, the ratio c/x.
fn against_constant(
    x: &BTreeMap<u32, StartValue>,
    c: f64,
    alpha: f64,
    inverted: bool,
) -> Result<Interval, String> {
    if c <= 0.0 || !c.is_finite() {
        return Err(format!(
            "the constant side is {c}: a bound above 0 is needed"
        ));
    }
    one_start_only(x.len())?;
    let v: Vec<f64> = x.values().map(|s| s.mean).collect();
    let (m, var) = mean_var(&v);
    // The within-start variance of each mean, back on the linear scale.
    let w = x.values().map(|s| s.within * s.mean * s.mean).sum::<f64>() / v.len() as f64;
    let scale = m.abs().max(c);
    let var_used = var.max(w).max((SPREAD_FLOOR * scale).powi(2));
    let df = (v.len() - 1) as f64;
    let se = (var_used / v.len() as f64).sqrt();
    let t = t_quantile(df, alpha);
    let (lo, hi) = (m - t * se, m + t * se);
    let rel = |s: f64| if m.abs() > 0.0 { s / m.abs() } else { s / c };
    let per_start = x
        .iter()
        .map(|(p, s)| (*p, if inverted { c / s.mean } else { s.mean / c }))
        .collect();
    let (ratio, ci) = if inverted {
        (
            c / m,
            [
                if hi > 0.0 { c / hi } else { 0.0 },
                if lo > 0.0 { c / lo } else { f64::INFINITY },
            ],
        )
    } else {
        (m / c, [lo / c, hi / c])
    };
    Ok(Interval {
        ratio,
        ci,
        starts: v.len(),
        df,
        between_sd: rel((var - w).max(0.0).sqrt()),
        within_sd: rel(w.sqrt()),
        per_start,
    })
}

/// Mean and sample variance (0 for one value): `compare`'s.
pub(crate) use crate::model::mean_var;

/// The sequential rule of `--until-decided`: the claims are looked at after every pass from
/// `FIRST_LOOK` on, and look j (1, 2, ...) tests at level `alpha / 2^j`. The levels add up to
/// at most `alpha` however many passes are run, so looking again cannot raise the chance of
/// a false verdict above it (a union bound; the looks are correlated, so the real rate is
/// lower). The calibration measures it.
pub fn sequential_alpha(alpha: f64, look: u32) -> f64 {
    alpha / 2f64.powi(look.max(1) as i32)
}

/// The first pass after which `--until-decided` looks: two starts give one degree of freedom
/// (t = 12.7 at 95 %), which decides almost nothing.
pub const FIRST_LOOK: u32 = 3;

/// The two-sided quantile of Student's t: the t with P(|T| > t) = alpha at `df` degrees of
/// freedom (df may be fractional).
pub fn t_quantile(df: f64, alpha: f64) -> f64 {
    let df = df.max(1.0);
    let target = 1.0 - alpha / 2.0;
    // Bisection on the CDF: monotone, and 100 steps are far below any precision we print.
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < target && hi < 1e7 {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// P(T ≤ t) for Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(0.5 * df, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast for x below the mean; use the symmetry above it.
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        // Even step.
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { 1.0 / TINY } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        f *= d * c;
        // Odd step.
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        d = if d.abs() < TINY { 1.0 / TINY } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        let step = d * c;
        f *= step;
        if (step - 1.0).abs() < 1e-12 {
            break;
        }
    }
    front * f / a
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection.
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut s = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        s += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The Wilson score interval of a proportion `k` of `n` at 95 %.
pub fn wilson(k: usize, n: usize) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (k, n) = (k as f64, n as f64);
    let z = 1.959_964;
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    [(centre - half).max(0.0), (centre + half).min(1.0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(means: &[(u32, f64)], within: f64) -> Observed {
        Observed::Starts(
            means
                .iter()
                .map(|&(p, mean)| (p, StartValue { mean, within, n: 3 }))
                .collect(),
        )
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, alpha, t) in [
            (1.0, 0.05, 12.706),
            (2.0, 0.05, 4.303),
            (4.0, 0.05, 2.776),
            (30.0, 0.05, 2.042),
            (1.0, 0.10, 6.314),
            (10.0, 0.10, 1.812),
            (1000.0, 0.05, 1.962),
            (2.0, 0.0125, 8.860),
        ] {
            let got = t_quantile(df, alpha);
            assert!(
                (got - t).abs() < 0.005,
                "df {df} alpha {alpha}: {got} vs {t}"
            );
        }
    }

    /// A large spread between starts with tight runs inside each: the old pooling of every
    /// run called it significant; the start as the unit does not.
    #[test]
    fn between_start_spread_widens_the_interval() {
        // a/b per start 1.40 and 1.13 (READ_KEY_POINT of the A/A measurement), each from
        // runs that agree to 1 %.
        let a = starts(&[(1, 1400.0), (2, 1130.0)], 0.0001);
        let b = starts(&[(1, 1000.0), (2, 1000.0)], 0.0001);
        let i = interval(&a, &b, 0.05).unwrap();
        assert!(!i.excludes_one(), "{i:?}");
        assert_eq!(i.starts, 2);
        assert!(i.between_sd > 0.1, "{i:?}");
        // The old way: the six runs of each side pooled (±1 % around each start's mean).
        let pooled_a = [1386.0, 1400.0, 1414.0, 1119.0, 1130.0, 1141.0];
        let pooled_b = [990.0, 1000.0, 1010.0, 990.0, 1000.0, 1010.0];
        let (ma, va) = mean_var(&pooled_a);
        let (mb, vb) = mean_var(&pooled_b);
        let se = (va / (6.0 * ma * ma) + vb / (6.0 * mb * mb)).sqrt();
        let lo = (ma / mb).ln() - t_quantile(5.0, 0.05) * se;
        assert!(lo > 0.0, "the pooled runs called it significant");
        // Three starts that agree: decided.
        let a = starts(&[(1, 1300.0), (2, 1310.0), (3, 1290.0)], 0.0001);
        let b = starts(&[(1, 1000.0), (2, 1000.0), (3, 1000.0)], 0.0001);
        assert!(interval(&a, &b, 0.05).unwrap().excludes_one());
    }

    #[test]
    fn one_start_decides_nothing() {
        let a = starts(&[(1, 2000.0)], 0.0001);
        let b = starts(&[(1, 1000.0)], 0.0001);
        let e = interval(&a, &b, 0.05).unwrap_err();
        assert!(e.contains("one server start"), "{e}");
    }

    #[test]
    fn zero_spread_is_not_certainty() {
        // Equal values in every start on both sides, 0.4 % apart: the floor keeps it inside
        // the noise (df finite, se not 0).
        let a = starts(&[(1, 1004.0), (2, 1004.0), (3, 1004.0)], 0.0);
        let b = starts(&[(1, 1000.0), (2, 1000.0), (3, 1000.0)], 0.0);
        let i = interval(&a, &b, 0.05).unwrap();
        assert!(!i.excludes_one(), "{i:?}");
        assert!(i.df.is_finite() && i.ci[1] > i.ci[0], "{i:?}");
        // 30 % apart with no spread: significant, but from a finite interval.
        let a = starts(&[(1, 1300.0), (2, 1300.0), (3, 1300.0)], 0.0);
        assert!(interval(&a, &b, 0.05).unwrap().excludes_one());
    }

    #[test]
    fn a_zero_side_is_judged_against_a_bound() {
        // Stalls of 0 s in every start against a bound of 0.5 s.
        let a = starts(&[(1, 0.0), (2, 0.0), (3, 0.0)], 0.0);
        let i = interval(&a, &Observed::Constant(0.5), 0.05).unwrap();
        assert_eq!(i.ratio, 0.0);
        assert!(i.ci[1] < 1.0, "{i:?}");
        // A ratio of zeros against measured values has no log: said so.
        let b = starts(&[(1, 2.0), (2, 2.1), (3, 1.9)], 0.0);
        let e = interval(&a, &b, 0.05).unwrap_err();
        assert!(e.contains("bound"), "{e}");
        // A constant on the a side: c / x.
        let i = interval(&Observed::Constant(1.0), &b, 0.05).unwrap();
        assert!(
            (i.ratio - 0.5).abs() < 1e-9 && i.ci[0] < 0.5 && i.ci[1] > 0.5,
            "{i:?}"
        );
    }

    #[test]
    fn sequential_levels_add_up_to_alpha() {
        let total: f64 = (1..60).map(|j| sequential_alpha(0.05, j)).sum();
        assert!(total <= 0.05 && total > 0.0499, "{total}");
    }

    #[test]
    fn wilson_interval() {
        let [lo, hi] = wilson(2, 39);
        assert!(
            lo > 0.005 && lo < 0.02 && hi > 0.15 && hi < 0.19,
            "{lo} {hi}"
        );
        assert_eq!(wilson(0, 0), [0.0, 1.0]);
    }
}
