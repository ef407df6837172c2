//! TPC-C's pass/fail conditions on a run: the response-time limits of clause 5.2.5.3 and the
//! minimum mix of clause 5.2.3.
//!
//! Response times: the 90th percentile of each transaction type's latency, from the per-type
//! histograms of the run. What the spec calls response time starts when the terminal has sent
//! the screen; here it is the service time of the attempt that finished (closed loop, no
//! keying: the same thing), so the failed attempts of a retried transaction and its back-off are
//! not in it. Delivery runs inline, so the whole transaction is held to the 5 s limit of
//! queueing a deferred Delivery (stricter than the spec's 80 s for completing it).
//!
//! Mix: judged on the configured weights, which the deck keeps exactly over every full deck per
//! terminal; the measured shares are reported beside them (a run cuts the terminals' decks at
//! its start and end, so they differ from the weights by less than one deck per terminal).

use serde::{Deserialize, Serialize};

use super::{KINDS, RESPONSE_LIMIT_S};

/// TPC-C 5.2.3: minimum share in percent per transaction type (KINDS order); NewOrder has
/// none (it is what remains, and it is the measured one).
pub const MIX_MIN_PCT: [Option<f64>; 5] = [None, Some(43.0), Some(4.0), Some(4.0), Some(4.0)];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    /// No transaction of the type finished in the run: nothing to judge.
    NoData,
}

/// One transaction type's 90th-percentile response time against its limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseCheck {
    pub transaction: String,
    pub ops: u64,
    pub p90_us: u64,
    pub limit_us: u64,
    pub verdict: Verdict,
}

/// One transaction type's share of the mix against the spec's minimum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixCheck {
    pub transaction: String,
    /// The configured share (`--weights`).
    pub weight_pct: f64,
    /// The share of the run's finished transactions.
    pub measured_pct: f64,
    /// Absent for NewOrder (no minimum).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_pct: Option<f64>,
    /// Of the configured share; absent for NewOrder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// The conditions of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Constraints {
    /// No response-time check failed and the configured mix meets the minimums.
    pub pass: bool,
    pub response_time: Vec<ResponseCheck>,
    /// The configured weights meet every minimum of 5.2.3.
    pub mix_compliant: bool,
    pub mix: Vec<MixCheck>,
}

/// What the checker needs of one transaction type in a run.
#[derive(Debug, Clone, Copy, Default)]
pub struct KindFigures {
    pub ops: u64,
    pub p90_us: u64,
}

/// Check a run: `kinds` and `weights` in KINDS order, `limits_s` the response-time limits
/// (RESPONSE_LIMIT_S outside tests).
pub fn check(kinds: &[KindFigures; 5], weights: &[u32; 5], limits_s: &[f64; 5]) -> Constraints {
    let response_time: Vec<ResponseCheck> = (0..5)
        .map(|k| {
            let limit_us = (limits_s[k] * 1e6).round() as u64;
            let f = kinds[k];
            let verdict = if f.ops == 0 {
                Verdict::NoData
            } else if f.p90_us <= limit_us {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            ResponseCheck {
                transaction: KINDS[k].to_string(),
                ops: f.ops,
                p90_us: f.p90_us,
                limit_us,
                verdict,
            }
        })
        .collect();
    let weight_sum: u32 = weights.iter().sum();
    let ops_sum: u64 = kinds.iter().map(|f| f.ops).sum();
    let pct = |part: f64, whole: f64| {
        if whole > 0.0 {
            100.0 * part / whole
        } else {
            0.0
        }
    };
    let mix: Vec<MixCheck> = (0..5)
        .map(|k| {
            let weight_pct = pct(weights[k] as f64, weight_sum as f64);
            // Compare integers (weight * 100 >= minimum * total) so that 43 of 100 is exactly
            // 43 %, with no rounding of a float share in the way.
            let verdict = MIX_MIN_PCT[k].map(|min| {
                if weights[k] as f64 * 100.0 >= min * weight_sum as f64 {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                }
            });
            MixCheck {
                transaction: KINDS[k].to_string(),
                weight_pct,
                measured_pct: pct(kinds[k].ops as f64, ops_sum as f64),
                minimum_pct: MIX_MIN_PCT[k],
                verdict,
            }
        })
        .collect();
    let mix_compliant = mix.iter().all(|m| m.verdict != Some(Verdict::Fail));
    let pass = mix_compliant && response_time.iter().all(|r| r.verdict != Verdict::Fail);
    Constraints {
        pass,
        response_time,
        mix_compliant,
        mix,
    }
}

/// `check` with the spec's limits.
pub fn check_spec(kinds: &[KindFigures; 5], weights: &[u32; 5]) -> Constraints {
    check(kinds, weights, &RESPONSE_LIMIT_S)
}

fn secs(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.1} s", us as f64 / 1e6)
    } else {
        format!("{:.1} ms", us as f64 / 1e3)
    }
}

/// One line for the terminal: the failures named, or what passed.
pub fn summary_line(c: &Constraints) -> String {
    let mut fails = Vec::new();
    for r in &c.response_time {
        if r.verdict == Verdict::Fail {
            fails.push(format!(
                "{} p90 {} > {}",
                r.transaction,
                secs(r.p90_us),
                secs(r.limit_us)
            ));
        }
    }
    for m in &c.mix {
        if let (Some(Verdict::Fail), Some(min)) = (m.verdict, m.minimum_pct) {
            fails.push(format!(
                "{} weight {:.1} % < {min} %",
                m.transaction, m.weight_pct
            ));
        }
    }
    let no_data: Vec<&str> = c
        .response_time
        .iter()
        .filter(|r| r.verdict == Verdict::NoData)
        .map(|r| r.transaction.as_str())
        .collect();
    let mut line = if c.pass {
        let worst = c
            .response_time
            .iter()
            .filter(|r| r.verdict == Verdict::Pass)
            .max_by(|a, b| {
                (a.p90_us as f64 / a.limit_us as f64)
                    .total_cmp(&(b.p90_us as f64 / b.limit_us as f64))
            });
        let worst = worst
            .map(|r| format!(" (highest: {} {})", r.transaction, secs(r.p90_us)))
            .unwrap_or_default();
        format!(
            "PASS: p90 response times within 5.2.5.3's limits{worst}; mix meets 5.2.3's minimums"
        )
    } else {
        format!("FAIL: {}", fails.join("; "))
    };
    if !no_data.is_empty() {
        line.push_str(&format!("; not run: {}", no_data.join(", ")));
    }
    if !c.pass && c.mix_compliant {
        line.push_str("; mix meets 5.2.3's minimums");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpcc::DEFAULT_WEIGHTS;

    fn figures(ops: [u64; 5], p90_ms: [u64; 5]) -> [KindFigures; 5] {
        std::array::from_fn(|k| KindFigures {
            ops: ops[k],
            p90_us: p90_ms[k] * 1000,
        })
    }

    #[test]
    fn spec_limits_pass_and_fail_at_the_boundary() {
        let f = figures([450, 430, 40, 40, 40], [5000, 4000, 10, 5000, 20_000]);
        let c = check_spec(&f, &DEFAULT_WEIGHTS);
        assert!(c.pass, "{c:?}");
        assert!(c.mix_compliant);
        assert_eq!(c.response_time[4].limit_us, 20_000_000);
        // One microsecond over the limit fails, and only that type.
        let mut f2 = f;
        f2[0].p90_us += 1;
        let c = check_spec(&f2, &DEFAULT_WEIGHTS);
        assert!(!c.pass);
        assert_eq!(c.response_time[0].verdict, Verdict::Fail);
        assert!(c.response_time[1..]
            .iter()
            .all(|r| r.verdict == Verdict::Pass));
        assert!(
            summary_line(&c).starts_with("FAIL: NewOrder p90 5.0 s > 5.0 s"),
            "{}",
            summary_line(&c)
        );
    }

    /// Tiny limits: what a fast run measures fails every type.
    #[test]
    fn tiny_limits_fail_every_type() {
        let f = figures([450, 430, 40, 40, 40], [3, 2, 1, 9, 2]);
        let c = check(&f, &DEFAULT_WEIGHTS, &[0.0005; 5]);
        assert!(!c.pass);
        assert!(c.response_time.iter().all(|r| r.verdict == Verdict::Fail));
        assert!(c.mix_compliant, "the mix is not the problem");
        let line = summary_line(&c);
        for k in KINDS {
            assert!(line.contains(k), "{line}");
        }
    }

    #[test]
    fn mix_minimums() {
        let f = figures([100, 0, 0, 0, 0], [1, 0, 0, 0, 0]);
        // Exactly on the minimums (43 of 100, 4 of 100) complies.
        assert!(check_spec(&f, &[45, 43, 4, 4, 4]).mix_compliant);
        assert!(check_spec(&f, &[9, 43 * 2, 8, 8, 8]).mix_compliant);
        // Payment below 43 %.
        let c = check_spec(&f, &[46, 42, 4, 4, 4]);
        assert!(!c.mix_compliant && !c.pass);
        assert_eq!(c.mix[1].verdict, Some(Verdict::Fail));
        assert_eq!(c.mix[0].verdict, None, "NewOrder is not judged");
        assert!(summary_line(&c).contains("Payment weight 42.0 % < 43 %"));
        // StockLevel 3 of 100.
        let c = check_spec(&f, &[46, 43, 4, 4, 3]);
        assert_eq!(c.mix[4].verdict, Some(Verdict::Fail));
        // 1,0,0,0,0: every minimum fails.
        let c = check_spec(&f, &[1, 0, 0, 0, 0]);
        assert_eq!(
            c.mix
                .iter()
                .filter(|m| m.verdict == Some(Verdict::Fail))
                .count(),
            4
        );
    }

    #[test]
    fn types_without_transactions_are_no_data_not_pass() {
        let f = figures([100, 0, 0, 0, 0], [1, 0, 0, 0, 0]);
        let c = check_spec(&f, &[1, 0, 0, 0, 0]);
        assert_eq!(c.response_time[0].verdict, Verdict::Pass);
        assert!(c.response_time[1..]
            .iter()
            .all(|r| r.verdict == Verdict::NoData));
        assert!(summary_line(&c).contains("not run: Payment, OrderStatus, Delivery, StockLevel"));
        assert_eq!(c.mix[0].measured_pct, 100.0);
    }
}
