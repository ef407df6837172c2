//! The verdicts on the page: a tally, a Markdown list and the HTML section.

use super::*;

/// "3 hold, 1 holds in direction only, ..." for a list of verdicts.
pub fn tally(evals: &[&Evaluation]) -> String {
    let count = |o: Outcome| evals.iter().filter(|e| e.outcome == o).count();
    let decided = evals.iter().filter(|e| e.outcome.decided()).count();
    format!(
        "{} hold, {} hold in direction only, {} not the report's size, {} do not hold, {} not measured, {} undecidable here ({decided} of {} decided)",
        count(Outcome::Holds),
        count(Outcome::HoldsInDirection),
        count(Outcome::NotInSize),
        count(Outcome::DoesNotHold),
        count(Outcome::NotMeasured),
        count(Outcome::Undecidable),
        evals.len()
    )
}

pub(super) fn dir_label(d: Option<Direction>) -> &'static str {
    match d {
        Some(Direction::Claimed) => "the claimed way",
        Some(Direction::Opposite) => "the other way",
        Some(Direction::Unclear) => "inside the noise",
        None => "–",
    }
}

pub(super) fn size_label(s: Option<Size>) -> &'static str {
    match s {
        Some(Size::Inside) => "inside the band",
        Some(Size::Outside) => "beyond the band",
        Some(Size::Undetermined) => "undetermined",
        Some(Size::NoBand) => "no figure",
        None => "–",
    }
}

/// The report's claims first, then our own checks, each group with its tally.
pub(super) fn groups(evals: &[Evaluation]) -> Vec<(&'static str, Vec<&Evaluation>)> {
    let report: Vec<&Evaluation> = evals.iter().filter(|e| !e.ours_check).collect();
    let ours: Vec<&Evaluation> = evals.iter().filter(|e| e.ours_check).collect();
    let mut out = Vec::new();
    if !report.is_empty() {
        out.push(("Claims of the report", report));
    }
    if !ours.is_empty() {
        out.push(("Our own checks (not the report's)", ours));
    }
    out
}

/// The claims table in Markdown (the suite's summary opens with it).
pub fn markdown(evals: &[Evaluation]) -> String {
    if evals.is_empty() {
        return String::new();
    }
    let cell = |x: &str| x.replace('|', "\\|").replace('\n', " ");
    let mut s = String::from("## Claims\n\n");
    for (title, list) in groups(evals) {
        s.push_str(&format!("### {title}\n\n| claim | the report says | its figure | band a/b | ours | evidence | direction | size | verdict | why |\n|---|---|---|---|---|---|---|---|---|---|\n"));
        for e in &list {
            let says = match &e.contradicts {
                Some(c) => format!("{} (the report's prose: {c})", e.says),
                None => e.says.clone(),
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | **{}** | {} |\n",
                cell(&e.id),
                cell(&says),
                cell(e.figure.as_deref().unwrap_or("")),
                cell(&band_text(e)),
                cell(&e.ours),
                cell(&evidence_text(e)),
                dir_label(e.direction),
                size_label(e.size),
                e.outcome.label(),
                cell(&e.why)
            ));
        }
        s.push_str(&format!("\n{}.\n\n", tally(&list)));
    }
    s
}

/// The evidence a verdict rests on: server starts, the spread between starts and within a
/// start (the largest over the compared thread counts), and the pass that decided it.
pub(super) fn evidence_text(e: &Evaluation) -> String {
    let Some(n) = e.starts else {
        return "–".into();
    };
    let max = |f: fn(&PairEval) -> Option<f64>| e.pairs.iter().filter_map(f).reduce(f64::max);
    let pct = |x: Option<f64>| {
        x.map(|v| format!("±{:.1} %", v * 100.0))
            .unwrap_or_else(|| "–".into())
    };
    let mut t = format!(
        "{n} starts; between {}, within {}",
        pct(max(|p| p.between_start_sd)),
        pct(max(|p| p.within_start_sd))
    );
    if let Some(k) = e.looks {
        t.push_str(&format!("; looked at after pass {k}"));
    }
    t
}

pub(super) fn band_text(e: &Evaluation) -> String {
    match e.band {
        Some([Some(lo), Some(hi)]) => format!("[{}, {}]", fmt_ratio(lo), fmt_ratio(hi)),
        Some([Some(lo), None]) => format!("≥ {}", fmt_ratio(lo)),
        Some([None, Some(hi)]) => format!("≤ {}", fmt_ratio(hi)),
        _ => "–".into(),
    }
}

/// The claims tables for the top of the page: the report's figure and ours, the direction and
/// the size verdicts, and under each claim the settings that differ between the compared
/// cells, the counters per operation that differ most and the engines' own status (folded).
pub fn html(evals: &[Evaluation]) -> String {
    use crate::report::svg::escape;
    if evals.is_empty() {
        return String::new();
    }
    let mut h = String::from("<section id=\"claims\"><h2>Claims</h2><p class=\"note\">Each verdict is computed from the results below. The unit of evidence is the <b>server start</b> (a pass of the suite): each start gives one value per side, the two sides of a start are paired, and the interval of a/b rests on the per-start ratios (its degrees of freedom: starts − 1); the spread between starts and within a start are shown beside it. Two judgements are made apart: the <b>direction</b> (the claimed way or the other way when the interval excludes 1, otherwise inside the noise) and the <b>size</b> (a/b inside the band derived from the report's figure, the whole interval beyond it, or undetermined). <b>holds</b>: the claimed way, inside the band (or no figure); <b>holds in direction only</b>: the claimed way, outside the band; <b>not the report's size</b>: the direction inside the noise, the whole interval beyond the band; <b>does not hold</b>: the other way; <b>not measured</b>: a cell missing, partial or disturbed, one server start, or the difference inside the noise; <b>undecidable here</b>: the claim needs what this host or scale lacks. \"a ~ b\" holds when the 90 % interval lies inside the band (two one-sided tests). A tighter interval never gives a worse verdict to a ratio on the claimed side. a/b: the claim's first side over its second.</p>");
    for (title, list) in groups(evals) {
        h.push_str(&format!("<h3>{}</h3><p class=\"note\">{}.</p><table class=\"claims\"><tr><th>claim</th><th>the report says</th><th>its figure</th><th>band a/b</th><th>ours</th><th>evidence</th><th>direction</th><th>size</th><th>verdict</th><th>why</th></tr>", escape(title), escape(&tally(&list))));
        for e in &list {
            let says = match &e.contradicts {
                Some(c) => format!(
                    "{}<br><i>The report's prose: {}</i>",
                    escape(&e.says),
                    escape(c)
                ),
                None => escape(&e.says),
            };
            h.push_str(&format!(
                "<tr><td>{}</td><td>{says}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\"><b>{}</b></td><td>{}</td></tr>",
                escape(&e.id),
                escape(e.figure.as_deref().unwrap_or("")),
                escape(&band_text(e)),
                escape(&e.ours),
                escape(&evidence_text(e)),
                dir_label(e.direction),
                size_label(e.size),
                e.outcome.class(),
                e.outcome.label(),
                escape(&e.why),
            ));
            let mut why = String::new();
            if !e.settings.is_empty() {
                why.push_str("<p><b>Settings that differ</b> (a / b): ");
                let list: Vec<String> = e
                    .settings
                    .iter()
                    .take(12)
                    .map(|(k, a, b)| format!("{}: {} / {}", escape(k), escape(a), escape(b)))
                    .collect();
                why.push_str(&list.join("; "));
                if e.settings.len() > 12 {
                    why.push_str(&format!(" (+{} more)", e.settings.len() - 12));
                }
                why.push_str("</p>");
            }
            if !e.counters.is_empty() {
                why.push_str("<table class=\"counters\"><tr><th>server counter per operation</th><th>a</th><th>b</th><th>a/b</th></tr>");
                for c in &e.counters {
                    let r = if c.b > 0.0 {
                        fmt_ratio(c.a / c.b)
                    } else {
                        "–".into()
                    };
                    why.push_str(&format!(
                        "<tr><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{r}</td></tr>",
                        escape(&c.name),
                        c.a,
                        c.b
                    ));
                }
                why.push_str("</table>");
            }
            why.push_str(&e.functions_html);
            for s in &e.engine_status {
                why.push_str(&format!(
                    "<details><summary>Engine status of {} ({})</summary><pre>{}</pre></details>",
                    escape(&s.side),
                    escape(&s.cell),
                    escape(&s.text)
                ));
            }
            if !why.is_empty() {
                h.push_str(&format!(
                    "<tr class=\"why\"><td></td><td colspan=\"9\"><details><summary>why: settings, counters, engine status</summary>{why}</details></td></tr>"
                ));
            }
        }
        h.push_str("</table>");
    }
    h.push_str("</section>");
    h
}
