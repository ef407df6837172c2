//! `report --trend`: the catalogued results over time, one small chart per work (the
//! workload, its options, target kind and engine: catalog/same.rs), operation and thread
//! count, answering "when did this get slower, and what changed then?". The
//! page is self-contained like the result page (no script, nothing loaded; its style).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use super::{Catalog, HistoryRow};
use crate::error::Result;
use crate::report::svg::escape;

/// One series: the points of one work (catalog/same.rs: the workload, its options, the
/// target's kind and engine, ...), operation and thread count, oldest first.
struct Series<'a> {
    title: String,
    rows: Vec<&'a HistoryRow>,
    /// Per row: what changed since the series' previous row (empty: nothing).
    changes: Vec<Vec<String>>,
}

/// What differs between two results of a series (the same work), as short phrases: every
/// part of their setup that changed in words (the settings one by one), and the tool's version.
fn changed(
    a: &HistoryRow,
    b: &HistoryRow,
    cat: &mut Catalog,
    cache: &mut HashMap<i64, BTreeMap<String, String>>,
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for c in a.config.changes_to(&b.config) {
        if !c.starts_with("settings ") {
            out.push(c);
        }
    }
    if a.tool_version != b.tool_version {
        out.push(format!(
            "enginebench {} → {}",
            a.tool_version, b.tool_version
        ));
    }
    if a.config.setup.get("settings") != b.config.setup.get("settings") {
        for id in [a.id, b.id] {
            if let std::collections::hash_map::Entry::Vacant(e) = cache.entry(id) {
                e.insert(cat.settings(id)?);
            }
        }
        let (sa, sb) = (&cache[&a.id], &cache[&b.id]);
        let mut keys: Vec<&String> = sa.keys().chain(sb.keys()).collect();
        keys.sort();
        keys.dedup();
        let diff: Vec<String> = keys
            .into_iter()
            .filter(|k| sa.get(*k) != sb.get(*k))
            .map(|k| {
                let v = |m: &BTreeMap<String, String>| {
                    m.get(k).cloned().unwrap_or_else(|| "(unset)".into())
                };
                format!("{k} {} → {}", v(sa), v(sb))
            })
            .collect();
        // A new server may change hundreds of settings: the first few say enough.
        let n = diff.len();
        out.extend(diff.into_iter().take(4));
        if n > 4 {
            out.push(format!("{} more settings", n - 4));
        }
    }
    Ok(out)
}

/// The parts that make a series' work, for its title: what is not the workload, target or
/// engine (named anyway) and differs between the series of one workload on the page.
fn telling_parts(rows: &[HistoryRow]) -> BTreeMap<String, Vec<String>> {
    let mut works: BTreeMap<&str, Vec<&BTreeMap<String, String>>> = BTreeMap::new();
    for r in rows {
        let w = works.entry(r.workload.as_str()).or_default();
        if !w.contains(&&r.config.work) {
            w.push(&r.config.work);
        }
    }
    works
        .into_iter()
        .map(|(w, maps)| {
            let mut keys: Vec<&String> = maps.iter().flat_map(|m| m.keys()).collect();
            keys.sort();
            keys.dedup();
            let telling = keys
                .into_iter()
                .filter(|k| !["workload", "target", "engine_used"].contains(&k.as_str()))
                .filter(|k| maps.iter().any(|m| m.get(*k) != maps[0].get(*k)))
                .cloned()
                .collect();
            (w.to_string(), telling)
        })
        .collect()
}

/// The work's identity, operation, threads.
type SeriesKey = (String, String, i64);

fn series<'a>(rows: &'a [HistoryRow], cat: &mut Catalog) -> Result<Vec<Series<'a>>> {
    let mut by: BTreeMap<SeriesKey, Vec<&HistoryRow>> = BTreeMap::new();
    for r in rows {
        by.entry((r.work_id.clone(), r.operation.clone(), r.threads))
            .or_default()
            .push(r);
    }
    let telling = telling_parts(rows);
    let mut cache = HashMap::new();
    let mut out = Vec::new();
    for ((_, op, t), rows) in by {
        let mut changes = vec![Vec::new()];
        for pair in rows.windows(2) {
            changes.push(changed(pair[0], pair[1], cat, &mut cache)?);
        }
        let first = rows[0];
        let (w, dbms, engine) = (&first.workload, &first.dbms, &first.engine);
        let engine = if engine.is_empty() || engine.starts_with(dbms.as_str()) {
            String::new()
        } else {
            format!(" {engine}")
        };
        let parts: Vec<String> = telling
            .get(w)
            .into_iter()
            .flatten()
            .map(|k| {
                let v = first
                    .config
                    .work
                    .get(k)
                    .map_or_else(|| "(none)".to_string(), |v| super::short_part(v));
                format!(", {k}={v}")
            })
            .collect();
        out.push(Series {
            title: format!("{w} {op} @{t} threads, {dbms}{engine}{}", parts.concat()),
            rows,
            changes,
        });
    }
    out.sort_by(|a, b| a.title.cmp(&b.title));
    Ok(out)
}

const STYLE: &str = "svg.trend .spread{stroke:#0072B2;stroke-width:1.5}\
svg.trend .line{fill:none;stroke:#0072B2;stroke-width:1}\
svg.trend circle.pt{fill:#0072B2}svg.trend circle.pt.dist{fill:#fff;stroke:#D55E00;stroke-width:2}\
svg.trend .change{stroke:#a00;stroke-dasharray:4 3}svg.trend .cn{font-size:11px;fill:#a00;text-anchor:middle}\
.up{color:#060}.down{color:#a00}ol.changes li{margin:2px 0;overflow-wrap:anywhere}";

/// The page for `rows` (the catalog's history, oldest first); `from` names the catalog.
pub fn page(rows: &[HistoryRow], cat: &mut Catalog, from: &str) -> Result<String> {
    let all = series(rows, cat)?;
    let results: std::collections::BTreeSet<i64> = rows.iter().map(|r| r.id).collect();
    let first = rows
        .iter()
        .map(|r| r.started_at.as_str())
        .min()
        .unwrap_or("");
    let last = rows
        .iter()
        .map(|r| r.started_at.as_str())
        .max()
        .unwrap_or("");
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">");
    // Nothing may be loaded from anywhere, as on the result page.
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">");
    let _ = write!(
        h,
        "<title>enginebench trend</title><style>{}{STYLE}</style></head><body>",
        crate::report::html::STYLE
    );
    let _ = write!(
        h,
        "<h1>enginebench trend</h1><p class=\"note\">{} result(s) from {} to {}, {} series, from the catalog {}. Each point is one result: the mean ops/s of its measured runs, the bar from its slowest to its fastest run; a hollow point had disturbed runs; a dashed line marks a change of setup: server version, profile, settings, client path, host or enginebench version (listed under the summary). Results of other work (another table size, other options) are another series.</p>",
        results.len(),
        escape(first),
        escape(last),
        all.len(),
        escape(from)
    );
    summary(&mut h, &all);
    change_list(&mut h, &all);
    h.push_str("<h2>Over time</h2><div class=\"charts\">");
    for s in &all {
        chart(&mut h, s);
    }
    h.push_str("</div><p class=\"note\">Made by enginebench from its catalog. Units: ops/s operations per second.</p></body></html>\n");
    Ok(h)
}

/// The answer first: per series, the newest result against the one before and against the
/// first, and the largest step between two neighbours (with what changed there).
fn summary(h: &mut String, all: &[Series]) {
    h.push_str("<h2>Summary</h2><table class=\"sum\"><tr><th class=\"l\">series</th><th>results</th><th>newest ops/s</th><th>vs previous</th><th>vs first</th><th class=\"l\">largest step</th></tr>");
    for s in all {
        let v: Vec<f64> = s.rows.iter().map(|r| r.ops_per_s.unwrap_or(0.0)).collect();
        let n = v.len();
        let rel = |a: f64, b: f64| if a > 0.0 { (b / a - 1.0) * 100.0 } else { 0.0 };
        let pct = |p: f64| {
            let class = if p > 0.5 {
                "up"
            } else if p < -0.5 {
                "down"
            } else {
                "ns"
            };
            format!("<td class=\"{class}\">{p:+.1}%</td>")
        };
        let prev = if n > 1 {
            pct(rel(v[n - 2], v[n - 1]))
        } else {
            "<td>-</td>".into()
        };
        let first = if n > 1 {
            pct(rel(v[0], v[n - 1]))
        } else {
            "<td>-</td>".into()
        };
        let step = (1..n)
            .max_by(|&a, &b| {
                rel(v[a - 1], v[a])
                    .abs()
                    .total_cmp(&rel(v[b - 1], v[b]).abs())
            })
            .map(|i| {
                let what = if s.changes[i].is_empty() {
                    "nothing recorded changed".to_string()
                } else {
                    s.changes[i].join("; ")
                };
                format!(
                    "{:+.1}% at #{} ({}): {}",
                    rel(v[i - 1], v[i]),
                    s.rows[i].id,
                    escape(&s.rows[i].started_at),
                    escape(&what)
                )
            })
            .unwrap_or_else(|| "-".into());
        let _ = write!(
            h,
            "<tr><td class=\"l\">{}</td><td>{n}</td><td>{:.1}</td>{prev}{first}<td class=\"l\">{step}</td></tr>",
            escape(&s.title),
            v[n - 1],
        );
    }
    h.push_str("</table>");
}

fn change_list(h: &mut String, all: &[Series]) {
    let mut any = false;
    for s in all {
        for (i, c) in s.changes.iter().enumerate() {
            if c.is_empty() {
                continue;
            }
            if !any {
                h.push_str("<h2>What changed</h2><ol class=\"changes\">");
                any = true;
            }
            let _ = write!(
                h,
                "<li>{}: at result #{} ({}): {}</li>",
                escape(&s.title),
                s.rows[i].id,
                escape(&s.rows[i].started_at),
                escape(&c.join("; "))
            );
        }
    }
    if any {
        h.push_str("</ol>");
    }
}

/// One series' chart: x is the results in time order, y the ops/s.
fn chart(h: &mut String, s: &Series) {
    const W: f64 = 480.0;
    const LEFT: f64 = 62.0;
    const RIGHT: f64 = 14.0;
    const TOP: f64 = 32.0;
    const PH: f64 = 190.0;
    const AXIS: f64 = 44.0;
    let n = s.rows.len();
    let hi = s
        .rows
        .iter()
        .filter_map(|r| r.ops_per_s_max.or(r.ops_per_s))
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.1;
    let x = |i: usize| {
        let pw = W - LEFT - RIGHT;
        if n <= 1 {
            LEFT + pw / 2.0
        } else {
            LEFT + pw * i as f64 / (n - 1) as f64
        }
    };
    let y = |v: f64| TOP + PH - PH * (v / hi).clamp(0.0, 1.0);
    let height = TOP + PH + AXIS;
    let _ = write!(
        h,
        "<svg class=\"chart trend\" viewBox=\"0 0 {W} {height}\" role=\"img\" aria-label=\"{}\">",
        escape(&s.title)
    );
    let _ = write!(
        h,
        "<text class=\"ct\" x=\"{}\" y=\"18\">{}</text>",
        W / 2.0,
        escape(&super::query::fit(&s.title, 60))
    );
    for k in 0..=4 {
        let v = hi * k as f64 / 4.0;
        let _ = write!(
            h,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\"/><text class=\"yt\" x=\"{}\" y=\"{:.1}\">{}</text>",
            W - RIGHT,
            y(v),
            y(v),
            LEFT - 4.0,
            y(v) + 4.0,
            tick(v)
        );
    }
    let _ = write!(
        h,
        "<rect class=\"frame\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{PH}\"/>",
        W - LEFT - RIGHT
    );
    // The changes first, under the points.
    let mut mark = 0;
    for (i, c) in s.changes.iter().enumerate() {
        if c.is_empty() {
            continue;
        }
        mark += 1;
        let cx = (x(i - 1) + x(i)) / 2.0;
        let _ = write!(
            h,
            "<line class=\"change\" x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{TOP}\" y2=\"{}\"><title>{}</title></line><text class=\"cn\" x=\"{cx:.1}\" y=\"{}\">{mark}</text>",
            TOP + PH,
            escape(&c.join("; ")),
            TOP - 3.0
        );
    }
    let line: Vec<String> = s
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some(format!("{:.1},{:.1}", x(i), y(r.ops_per_s?))))
        .collect();
    let _ = write!(
        h,
        "<polyline class=\"line\" points=\"{}\"/>",
        line.join(" ")
    );
    for (i, r) in s.rows.iter().enumerate() {
        let Some(v) = r.ops_per_s else { continue };
        if let (Some(lo), Some(hi)) = (r.ops_per_s_min, r.ops_per_s_max) {
            let _ = write!(
                h,
                "<line class=\"spread\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\"/>",
                x(i),
                y(lo),
                y(hi)
            );
        }
        let sd = match (r.ops_per_s_sd, r.runs > 1) {
            (Some(sd), true) if v > 0.0 => format!(" ±{:.1}%", sd / v * 100.0),
            _ => String::new(),
        };
        let _ = write!(
            h,
            "<circle class=\"pt{}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\"><title>#{} {}: {:.1} ops/s{sd} over {} run(s){}; {} {}</title></circle>",
            if r.disturbed { " dist" } else { "" },
            x(i),
            y(v),
            r.id,
            escape(&r.started_at),
            v,
            r.runs,
            if r.disturbed { ", disturbed" } else { "" },
            escape(&r.dbms),
            escape(super::short_version(&r.server_version)),
        );
    }
    let date = |r: &HistoryRow| r.started_at.get(..10).unwrap_or(&r.started_at).to_string();
    let _ = write!(
        h,
        "<text class=\"xt\" x=\"{LEFT}\" y=\"{0:.1}\" style=\"text-anchor:start\">{1}</text><text class=\"xt\" x=\"{2}\" y=\"{0:.1}\" style=\"text-anchor:end\">{3}</text><text class=\"xl\" x=\"{4}\" y=\"{5:.1}\">results in time order ({6})</text><text class=\"yl\" transform=\"rotate(-90)\" x=\"{7:.1}\" y=\"14\">ops/s</text></svg>",
        TOP + PH + 16.0,
        escape(&date(s.rows[0])),
        W - RIGHT,
        escape(&date(s.rows[n - 1])),
        (LEFT + W - RIGHT) / 2.0,
        TOP + PH + 36.0,
        n,
        -(TOP + PH / 2.0),
    );
}

fn tick(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}
