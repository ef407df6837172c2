//! The statistics of one verdict: a/b's interval over the paired server starts, its direction
//! and its size.

use super::*;

impl Claim {
    /// The verdict at one thread count, at two-sided level `alpha` (`a ~ b`: two one-sided
    /// tests at `alpha` each).
    pub(super) fn judge(&self, threads: usize, a: &Side, b: &Side, alpha: f64) -> PairEval {
        let equal = self.expect == "a ~ b";
        let mut p = PairEval {
            threads,
            outcome: Outcome::NotMeasured,
            direction: None,
            size: None,
            a: a.mean(),
            b: b.mean(),
            ratio: None,
            ci: None,
            level: None,
            n: Some([a.n, b.n]),
            starts: None,
            between_start_sd: None,
            within_start_sd: None,
            passes: Vec::new(),
            why: String::new(),
        };
        let level_alpha = if equal { 2.0 * alpha } else { alpha };
        let iv = match evidence::interval(&a.obs, &b.obs, level_alpha) {
            Ok(iv) => iv,
            Err(e) => {
                p.why = e;
                return p;
            }
        };
        p.ratio = Some(iv.ratio);
        p.ci = Some(iv.ci);
        p.level = Some(1.0 - level_alpha);
        p.starts = Some(iv.starts);
        p.between_start_sd = Some(iv.between_sd);
        p.within_start_sd = Some(iv.within_sd);
        p.passes = iv
            .per_start
            .iter()
            .map(|&(pass, ratio)| PassRatio { pass, ratio })
            .collect();
        let band = self.band().map(|b| b.0);
        let [lo, hi] = band.unwrap_or([None, None]);
        let below = lo.is_some_and(|lo| iv.ci[1] < lo);
        let above = hi.is_some_and(|hi| iv.ci[0] > hi);
        let size = if band.is_none() {
            Size::NoBand
        } else if lo.is_none_or(|lo| iv.ratio >= lo) && hi.is_none_or(|hi| iv.ratio <= hi) {
            Size::Inside
        } else if below || above {
            Size::Outside
        } else {
            Size::Undetermined
        };
        let direction = if equal {
            let inside = lo.is_none_or(|lo| iv.ci[0] >= lo) && hi.is_none_or(|hi| iv.ci[1] <= hi);
            if inside {
                Direction::Claimed
            } else if below || above {
                Direction::Opposite
            } else {
                Direction::Unclear
            }
        } else {
            let (up, down) = (iv.ci[0] > 1.0, iv.ci[1] < 1.0);
            let want_up = self.expect == "a > b";
            if (up && want_up) || (down && !want_up) {
                Direction::Claimed
            } else if up || down {
                Direction::Opposite
            } else {
                Direction::Unclear
            }
        };
        p.outcome = verdict(equal, direction, size);
        p.direction = Some(direction);
        p.size = Some(size);
        let ratio = fmt_ratio(iv.ratio);
        let ci = format!(
            "{} % CI [{}, {}] over {} server starts",
            fmt_pct(1.0 - level_alpha),
            fmt_ratio(iv.ci[0]),
            fmt_ratio(iv.ci[1]),
            iv.starts
        );
        let band_text = match band {
            Some([Some(lo), Some(hi)]) => format!("[{}, {}]", fmt_ratio(lo), fmt_ratio(hi)),
            Some([Some(lo), None]) => format!("≥ {}", fmt_ratio(lo)),
            Some([None, Some(hi)]) => format!("≤ {}", fmt_ratio(hi)),
            _ => String::new(),
        };
        let side_of_band = if below { "below" } else { "above" };
        p.why = match (equal, p.outcome, size) {
            (true, Outcome::Holds, _) => {
                format!("a/b {ratio}, {ci} inside the band {band_text} (two one-sided tests)")
            }
            (true, Outcome::DoesNotHold, _) => {
                format!("a/b {ratio}, {ci} outside the band {band_text}")
            }
            (true, _, _) => format!(
                "a/b {ratio}: the evidence is too weak to call them equal ({ci} reaches outside the band {band_text})"
            ),
            (false, Outcome::Holds, Size::NoBand) => format!(
                "a/b {ratio}, significant ({ci}); the report gives no figure to size it by"
            ),
            (false, Outcome::Holds, _) => {
                format!("a/b {ratio} inside the band {band_text}, significant ({ci})")
            }
            (false, Outcome::HoldsInDirection, Size::Outside) => format!(
                "the claimed way, significant ({ci}), but beyond the band {band_text}: not the report's size"
            ),
            (false, Outcome::HoldsInDirection, _) => format!(
                "the claimed way, significant ({ci}); a/b {ratio} is outside the band {band_text} but the interval reaches into it: size undetermined"
            ),
            (false, Outcome::NotInSize, _) => format!(
                "not the report's size: the whole {ci} lies {side_of_band} the band {band_text}; the direction itself is inside the noise"
            ),
            (false, Outcome::DoesNotHold, _) => {
                format!("the other way: a/b {ratio}, significant ({ci})")
            }
            _ => format!("a/b {ratio}: the difference is inside the noise ({ci} holds 1)"),
        };
        let mut left: Vec<u32> = a.left_out.iter().chain(&b.left_out).copied().collect();
        left.sort_unstable();
        left.dedup();
        if !left.is_empty() {
            p.why.push_str(&format!(
                " (left out, partial or disturbed: pass {})",
                left.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        p
    }
}
