//! The self-contained HTML report: one file, no script, no network access (a Content Security
//! Policy forbids any load), charts as inline SVG. Sections appear for whatever the results hold.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::compare;
use super::svg::{auto_scale, escape, short, Chart, Scale, Series};
use super::{Owners, ResultDoc};

// A result with its label lives in the model, below every section, so that the sections and
// this page do not import each other.
pub use crate::model::{full_intervals, labels, Labeled};

// Small multiples: `.charts` is a grid of cells at least 400 px wide (three per row on a
// 1366 px laptop, one on a 390 px phone); every chart scales to its cell. A table is its own
// horizontal scroll box, so a wide one never widens the page.
pub(crate) const STYLE: &str = "*{box-sizing:border-box}\
body{font-family:system-ui,sans-serif;margin:0 auto;padding:12px 16px;color:#222;max-width:1400px}\
h1{font-size:1.5em;overflow-wrap:anywhere}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:1.6em}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px;display:block;overflow-x:auto;max-width:100%}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,400px),1fr));gap:12px;align-items:start}\
.charts>*{min-width:0}.cell details{font-size:13px}\
@media (min-width:900px){.charts>svg[data-wide]{grid-column:span 2}}\
svg.chart{display:block;width:100%;height:auto;background:#fff;border:1px solid #ddd}\
.ct{font-size:14px;font-weight:600;text-anchor:middle}\
.xt{font-size:12px;text-anchor:middle}.yt{font-size:12px;text-anchor:end}.xl,.yl{font-size:13px;text-anchor:middle}\
.lg{font-size:12px}.grid{stroke:#eee}.frame{fill:none;stroke:#999}.note{color:#555;font-size:13px}\
.warn{color:#a00}details{margin:6px 0}summary{cursor:pointer;overflow-wrap:anywhere}\
table.sum td,table.claims td{overflow-wrap:anywhere;vertical-align:top}.claims .holds{color:#060}.claims .fails{color:#a00}.claims td{text-align:left}.claims .unmeasured{color:#666}.claims .direction{color:#850}.claims tr.why td{border-top:0;font-size:.9em}.claims pre{white-space:pre-wrap;max-height:24em;overflow:auto}.sum .sig{color:#a00}.sum .ns{color:#555}code{overflow-wrap:anywhere}\
@media (max-width:600px){body{padding:8px}h1{font-size:1.25em}td,th{padding:2px 4px}table{font-size:12px}}";

/// Render the report for one or more results; each owner adds its sections.
pub fn render(docs: &[ResultDoc], owners: Owners) -> String {
    render_labeled(docs, labels(docs), owners)
}

/// Render with labels chosen by the caller (a suite names its series after its cells).
pub fn render_labeled(docs: &[ResultDoc], labels: Vec<String>, owners: Owners) -> String {
    render_with_preface(docs, labels, owners, None, "")
}

/// The page with `preface` (HTML: a suite's claims table) right under its title.
/// `heading`: the page's title instead of the results' names (a reproduction: the report's
/// title).
pub fn render_with_preface(
    docs: &[ResultDoc],
    labels: Vec<String>,
    owners: Owners,
    heading: Option<&str>,
    preface: &str,
) -> String {
    let rs: Vec<Labeled> = docs
        .iter()
        .zip(labels)
        .map(|(doc, label)| Labeled { label, doc })
        .collect();
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">");
    // Nothing may be loaded from anywhere: styles inline, images as inline SVG.
    h.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">");
    let heading = heading
        .map(str::to_string)
        .unwrap_or_else(|| format!("enginebench report: {}", title(&rs)));
    let _ = write!(
        h,
        "<title>{}</title><style>{STYLE}</style></head><body>",
        escape(&heading)
    );
    let _ = write!(h, "<h1>{}</h1>", escape(&heading));
    // A suite's claims, when it has some, then the answer: who leads each operation, by how
    // much, and whether that is noise.
    h.push_str(preface);
    super::html_summary::section(&mut h, &rs);
    what_was_run(&mut h, &rs);
    super::html_fleet::section(&mut h, &rs);
    throughput(&mut h, &rs);
    latency(&mut h, &rs);
    time_series(&mut h, &rs, owners);
    load_steps(&mut h, &rs);
    per_transaction(&mut h, &rs);
    super::html_kinds::section(&mut h, &rs);
    super::html_nodes::section(&mut h, &rs);
    for o in owners {
        h.push_str(&o.html(&rs));
    }
    fairness(&mut h, &rs);
    if rs.len() == 2 {
        comparison(&mut h, &rs);
    }
    h.push_str("<p class=\"note\">Made by enginebench. Units: ops/s operations per second; µs microseconds.</p></body></html>\n");
    h
}

fn title(rs: &[Labeled]) -> String {
    let workloads: BTreeSet<&str> = rs
        .iter()
        .filter_map(|r| r.doc.config.get("workload").and_then(|w| w.as_str()))
        .collect();
    format!(
        "{} on {}",
        workloads.into_iter().collect::<Vec<_>>().join(", "),
        rs.iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>()
            .join(" vs ")
    )
}

fn cfg_str(doc: &ResultDoc, key: &str) -> String {
    match doc.config.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => "-".into(),
    }
}

fn what_was_run(h: &mut String, rs: &[Labeled]) {
    h.push_str("<h2>What was run</h2><table><tr><th class=l>result</th><th class=l>workload</th><th class=l>server</th><th class=l>engine</th><th class=l>method</th><th>threads</th><th>warm-up s</th><th>runs × s</th><th>rows</th><th class=l>host</th><th class=l>status</th><th class=l>started</th></tr>");
    for r in rs {
        let d = r.doc;
        let _ = write!(
            h,
            "<tr><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{} × {}</td><td>{}</td><td class=l>{} cores, {:.0} GiB, {}</td><td class=l>{}</td><td class=l>{}</td></tr>",
            escape(&r.label),
            escape(&cfg_str(d, "workload")),
            escape(&d.target.server_version),
            escape(&d.target.engine),
            escape(&cfg_str(d, "method")),
            escape(&cfg_str(d, "threads")),
            escape(&cfg_str(d, "warmup_s")),
            escape(&cfg_str(d, "runs")),
            escape(&cfg_str(d, "duration_s")),
            escape(&cfg_str(d, "table_size")),
            d.host.cores,
            d.host.memory_bytes as f64 / (1u64 << 30) as f64,
            escape(&d.host.kernel),
            escape(&format!("{:?}", d.status).to_lowercase()),
            escape(&d.started_at)
        );
    }
    h.push_str("</table>");
    for r in rs {
        if let Some(e) = &r.doc.error {
            let _ = write!(h, "<p class=warn>{}: {}</p>", escape(&r.label), escape(e));
        }
        let disturbed = r
            .doc
            .points
            .iter()
            .flat_map(|p| &p.runs)
            .filter(|x| x.disturbed)
            .count();
        if disturbed > 0 {
            let _ = write!(
                h,
                "<p class=warn>{}: {disturbed} run(s) disturbed by other processes.</p>",
                escape(&r.label)
            );
        }
    }
    let notes: BTreeSet<&String> = rs.iter().flat_map(|r| r.doc.notes.iter()).collect();
    if !notes.is_empty() {
        h.push_str("<details><summary>Notes on method and approximations</summary><ul>");
        for n in notes {
            let _ = write!(h, "<li class=note>{}</li>", escape(n));
        }
        h.push_str("</ul></details>");
    }
}

/// Operations in first-seen order across all results.
fn operations(rs: &[Labeled]) -> Vec<String> {
    let mut ops: Vec<String> = Vec::new();
    for r in rs {
        for p in &r.doc.points {
            if !ops.contains(&p.operation) {
                ops.push(p.operation.clone());
            }
        }
    }
    ops
}

fn thread_counts(rs: &[Labeled], op: &str) -> Vec<usize> {
    let set: BTreeSet<usize> = rs
        .iter()
        .flat_map(|r| {
            r.doc
                .points
                .iter()
                .filter(|p| p.operation == op)
                .map(|p| p.threads)
        })
        .collect();
    set.into_iter().collect()
}

/// One series per result: `point_xy` of each of its points of operation `op`.
fn series_per_result(
    rs: &[Labeled],
    op: &str,
    point_xy: impl Fn(&super::Point) -> (f64, f64),
) -> Vec<Series> {
    rs.iter()
        .map(|r| Series {
            name: r.label.clone(),
            points: r
                .doc
                .points
                .iter()
                .filter(|p| p.operation == op)
                .map(&point_xy)
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

fn throughput(h: &mut String, rs: &[Labeled]) {
    h.push_str("<h2 id=throughput>Throughput vs threads</h2><p class=note>Maximum ops/s over the measured runs of each point, one line per result; under each chart its numbers: max / median and the coefficient of variation over runs. Hover a point for its value.</p><div class=charts>");
    for op in operations(rs) {
        let series = series_per_result(rs, &op, |p| (p.threads as f64, p.aggregate.ops_per_s_max));
        let chart = Chart {
            title: op.clone(),
            x_label: "threads".into(),
            y_label: "ops/s".into(),
            x_scale: Scale::Log2,
            y_scale: Scale::Linear,
            series,
        };
        let _ = write!(
            h,
            "<div class=cell data-op=\"{}\">{}<details><summary>ops/s of {}</summary>",
            escape(&op),
            chart.to_svg(),
            escape(&op)
        );
        let threads = thread_counts(rs, &op);
        h.push_str("<table><tr><th class=l>ops/s (max / median, cv)</th>");
        for t in &threads {
            let _ = write!(h, "<th>{t}</th>");
        }
        h.push_str("</tr>");
        for r in rs {
            let _ = write!(h, "<tr><td class=l>{}</td>", escape(&r.label));
            for t in &threads {
                match r
                    .doc
                    .points
                    .iter()
                    .find(|p| p.operation == op && p.threads == *t)
                {
                    Some(p) => {
                        let a = &p.aggregate;
                        let _ = write!(
                            h,
                            "<td>{:.0} / {:.0}, {:.1}%</td>",
                            a.ops_per_s_max,
                            a.ops_per_s_median,
                            a.ops_per_s_cv * 100.0
                        );
                    }
                    None => h.push_str("<td>-</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</table></details></div>");
    }
    h.push_str("</div>");
}

fn latency(h: &mut String, rs: &[Labeled]) {
    h.push_str("<h2 id=latency>Latency</h2><p class=note>Percentiles over all measured runs of a point (merged histograms). Each chart puts p99 against throughput across the thread sweep; under it, p50 to max per thread count.</p><div class=charts>");
    for op in operations(rs) {
        let series = series_per_result(rs, &op, |p| {
            (
                p.aggregate.ops_per_s_median,
                p.aggregate.latency_us.p99_us as f64,
            )
        });
        let y_scale = match auto_scale(series.iter().flat_map(|s| s.points.iter().map(|p| p.1))) {
            Scale::Linear => Scale::Linear,
            _ => Scale::Log10,
        };
        let chart = Chart {
            title: format!("{op}: p99 latency vs throughput"),
            x_label: "ops/s".into(),
            y_label: "p99 latency µs".into(),
            x_scale: Scale::Linear,
            y_scale,
            series,
        };
        let _ = write!(
            h,
            "<div class=cell data-op=\"{}\">{}<details><summary>latency of {}</summary>",
            escape(&op),
            chart.to_svg(),
            escape(&op)
        );
        h.push_str("<table><tr><th class=l>result</th><th>threads</th><th>p50 µs</th><th>p90 µs</th><th>p95 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>max µs</th><th>errors</th></tr>");
        for r in rs {
            for p in r.doc.points.iter().filter(|p| p.operation == op) {
                let l = &p.aggregate.latency_us;
                let _ = write!(
                    h,
                    "<tr><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&r.label), p.threads, l.p50_us, l.p90_us, l.p95_us, l.p99_us, l.p99_9_us, l.max_us, p.aggregate.errors_total
                );
            }
        }
        h.push_str("</table></details></div>");
    }
    h.push_str("</div>");
}

fn time_series(h: &mut String, rs: &[Labeled], owners: Owners) {
    h.push_str("<h2 id=over-time>Throughput over time</h2><p class=note>Operations per interval of each measured run, at the highest thread count of each operation; a run of more than 150 intervals is drawn with consecutive intervals merged (operations and time added).</p><div class=charts>");
    for op in operations(rs) {
        for r in rs {
            let Some(p) = r
                .doc
                .points
                .iter()
                .filter(|p| p.operation == op)
                .max_by_key(|p| p.threads)
            else {
                continue;
            };
            let mut series: Vec<Series> = p
                .runs
                .iter()
                .map(|run| Series {
                    name: format!("run {}", run.run),
                    points: merged_rates(run, MAX_TIME_POINTS),
                })
                .collect();
            series.extend(step_markers(p));
            for o in owners {
                series.extend(o.markers(r.doc, p));
            }
            let chart = Chart {
                title: format!("{} — {} at {} threads", op, r.label, p.threads),
                x_label: "time s".into(),
                y_label: "ops/s".into(),
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
                series,
            };
            h.push_str(&chart.to_svg());
        }
    }
    h.push_str("</div>");
}

/// For a run with load steps: each step's start as a vertical line, as high as the point's
/// highest interval rate, named after the step's load (the first run's steps: every run of a
/// point has the same).
fn step_markers(p: &super::Point) -> Vec<Series> {
    let Some(run) = p.runs.iter().find(|r| !r.steps.is_empty()) else {
        return Vec::new();
    };
    let top = p
        .runs
        .iter()
        .flat_map(|r| &r.intervals)
        .map(|i| i.ops_per_s)
        .fold(0.0, f64::max);
    run.steps
        .iter()
        .map(|s| Series {
            name: step_name(s),
            points: vec![(s.start_s, 0.0), (s.start_s, top)],
        })
        .collect()
}

/// "step 2: 16 thds, 2000 ops/s".
fn step_name(s: &super::StepRecord) -> String {
    match s.target_ops_per_s {
        Some(r) => format!("step {}: {} thds, {r:.0} ops/s", s.step, s.threads),
        None => format!("step {}: {} thds", s.step, s.threads),
    }
}

/// Each run's load steps: what each step asked for and what it achieved.
fn load_steps(h: &mut String, rs: &[Labeled]) {
    let has = |r: &Labeled| {
        (r.doc.points.iter())
            .flat_map(|p| &p.runs)
            .any(|x| !x.steps.is_empty())
    };
    if !rs.iter().any(has) {
        return;
    }
    h.push_str("<h3 id=load-steps>Load steps</h3><p class=note>Per measured run and step: the connections working and the target rate (open loop), the operations started (open loop: due) in the step per second of it, service-time percentiles, the open loop's response time p99 and the starts never made (backlog), errors. The steps are marked on the throughput-over-time charts above.</p><table><tr><th class=l>result</th><th class=l>operation</th><th>run</th><th>step</th><th>start s</th><th>threads</th><th>target ops/s</th><th>ops/s</th><th>p50 µs</th><th>p99 µs</th><th>response p99 µs</th><th>backlog</th><th>errors</th></tr>");
    for r in rs {
        for p in &r.doc.points {
            for run in &p.runs {
                for st in &run.steps {
                    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
                    let _ = write!(
                        h,
                        "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        escape(&r.label),
                        escape(&p.operation),
                        run.run,
                        st.step,
                        st.start_s,
                        st.threads,
                        opt(st.target_ops_per_s.map(|t| format!("{t:.0}"))),
                        st.ops_per_s,
                        st.latency_us.p50_us,
                        st.latency_us.p99_us,
                        opt(st.response_us.map(|x| x.p99_us.to_string())),
                        opt(st.backlog_ops.map(|x| x.to_string())),
                        st.errors,
                    );
                }
            }
        }
    }
    h.push_str("</table>");
}

/// `--connect per-transaction`: each run's connections and their set-up time.
fn per_transaction(h: &mut String, rs: &[Labeled]) {
    let runs: Vec<_> = rs
        .iter()
        .flat_map(|r| r.doc.points.iter().map(move |p| (r, p)))
        .flat_map(|(r, p)| p.runs.iter().map(move |x| (r, p, x)))
        .filter_map(|(r, p, x)| Some((r, p, x, x.connect_per_transaction.as_ref()?)))
        .collect();
    if runs.is_empty() {
        return;
    }
    h.push_str("<h3 id=per-transaction>Connections per transaction</h3><p class=note>--connect per-transaction: every operation connected and set its session up (the workload's prepares and settings) first; that set-up is inside the operation's latency, and shown here on its own (docs/connections.md).</p><table><tr><th class=l>result</th><th class=l>operation</th><th>threads</th><th>run</th><th>connections</th><th>set-up p50 µs</th><th>set-up p99 µs</th><th>set-up mean µs</th><th>share of the mean latency</th></tr>");
    for (r, p, x, c) in runs {
        let _ = write!(
            h,
            "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0} %</td></tr>",
            escape(&r.label),
            escape(&p.operation),
            p.threads,
            x.run,
            c.connections,
            c.setup_us.p50_us,
            c.setup_us.p99_us,
            c.setup_us.mean_us,
            c.setup_share * 100.0
        );
    }
    h.push_str("</table>");
}

/// Points drawn per run in "Throughput over time" at most: a run of more intervals is drawn
/// with consecutive intervals merged, which keeps a long run's page light.
const MAX_TIME_POINTS: usize = 150;

/// (end s, ops/s) of a run's full intervals, consecutive ones merged so that there are at most
/// `max`: operations and time are added, so a merged point's rate is exact for its span.
fn merged_rates(run: &super::RunRecord, max: usize) -> Vec<(f64, f64)> {
    let mut prev = 0.0;
    let mut spans = Vec::new();
    for i in &run.intervals {
        spans.push((prev, i));
        prev = i.t_s;
    }
    let keep: Vec<f64> = full_intervals(run).map(|i| i.t_s).collect();
    spans.retain(|(_, i)| keep.contains(&i.t_s));
    let k = spans.len().div_ceil(max.max(1)).max(1);
    spans
        .chunks(k)
        .filter_map(|c| {
            let (start, last) = (c.first()?.0, c.last()?.1);
            if c.len() == 1 {
                return Some((last.t_s, last.ops_per_s));
            }
            let ops: u64 = c.iter().map(|(_, i)| i.ops).sum();
            (last.t_s > start).then(|| (last.t_s, ops as f64 / (last.t_s - start)))
        })
        .collect()
}

/// What the batched I/O path did, per result, point and run, beside the run's latency
/// percentiles (docs/method.md, "Batched waits and held replies"); nothing without figures.
fn batch(h: &mut String, rs: &[Labeled]) {
    if rs
        .iter()
        .all(|r| r.doc.client.as_ref().is_none_or(|c| c.batch.is_empty()))
    {
        return;
    }
    h.push_str("<h3>Batched waits and held replies</h3><p class=note>Per measured run on the io_uring path: waits for half of a loop's replies, those that ran to the 2 ms limit, and how long receives waited for the loop (mean and p99 over all receives; an upper bound, the length of the wait each ended), beside the run's latency p50 and p99 (docs/method.md).</p><table><tr><th class=l>result</th><th class=l>operation</th><th>threads</th><th>run</th><th>batched waits</th><th>to the limit</th><th>hold mean µs</th><th>hold p99 µs</th><th>latency p50 µs</th><th>latency p99 µs</th></tr>");
    for r in rs {
        let Some(c) = &r.doc.client else { continue };
        for b in &c.batch {
            let run = r
                .doc
                .points
                .iter()
                .find(|p| p.operation == b.operation && p.threads == b.threads)
                .and_then(|p| p.runs.iter().find(|x| x.run == b.run));
            let lat =
                |f: fn(&super::RunRecord) -> u64| run.map(|x| f(x).to_string()).unwrap_or_default();
            let _ = write!(
                h,
                "<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.label),
                escape(&b.operation),
                b.threads,
                b.run,
                b.batched_waits,
                b.waits_to_timeout,
                b.hold_mean_us,
                b.hold_p99_us,
                lat(|x| x.latency_us.p50_us),
                lat(|x| x.latency_us.p99_us),
            );
        }
    }
    h.push_str("</table>");
}

fn fairness(h: &mut String, rs: &[Labeled]) {
    h.push_str("<h2>Fairness and explanation</h2>");
    // Config diff: which settings differ between the results shown together.
    let keys: BTreeSet<String> = rs
        .iter()
        .filter_map(|r| r.doc.config.as_object())
        .flat_map(|o| o.keys().cloned())
        .collect();
    let differing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            let vals: BTreeSet<String> = rs.iter().map(|r| cfg_str(r.doc, k)).collect();
            vals.len() > 1
        })
        .collect();
    if rs.len() > 1 {
        h.push_str("<h3>Settings that differ</h3>");
        if differing.is_empty() {
            h.push_str("<p class=note>The run configurations are identical.</p>");
        } else {
            h.push_str("<table><tr><th class=l>setting</th>");
            for r in rs {
                let _ = write!(h, "<th class=l>{}</th>", escape(&r.label));
            }
            h.push_str("</tr>");
            for k in differing {
                let _ = write!(h, "<tr><td class=l>{}</td>", escape(k));
                for r in rs {
                    let _ = write!(h, "<td class=l>{}</td>", escape(&cfg_str(r.doc, k)));
                }
                h.push_str("</tr>");
            }
            h.push_str("</table>");
        }
    }
    super::html_fairness::section(h, rs);
    batch(h, rs);
    // Server counters per operation at the highest thread count.
    let mut rows: BTreeMap<(String, String), Vec<Option<f64>>> = BTreeMap::new();
    for (i, r) in rs.iter().enumerate() {
        for op in operations(rs) {
            let Some(p) = r
                .doc
                .points
                .iter()
                .filter(|p| p.operation == op)
                .max_by_key(|p| p.threads)
            else {
                continue;
            };
            let ops: u64 = p.runs.iter().map(|x| x.ops).sum();
            let mut sums: BTreeMap<&str, f64> = BTreeMap::new();
            for run in &p.runs {
                for (k, v) in &run.server_counters {
                    *sums.entry(k).or_default() += v;
                }
            }
            for (k, v) in sums {
                let e = rows
                    .entry((op.clone(), k.to_string()))
                    .or_insert_with(|| vec![None; rs.len()]);
                e[i] = Some(v / ops.max(1) as f64);
            }
        }
    }
    // Keep the counters that move at least 0.01 per operation somewhere, most different first.
    type Row<'a> = (&'a (String, String), &'a Vec<Option<f64>>, f64);
    let mut interesting: Vec<Row> = rows
        .iter()
        .filter(|(_, v)| v.iter().flatten().any(|x| x.abs() >= 0.01))
        .map(|(k, v)| {
            let vals: Vec<f64> = v.iter().map(|x| x.unwrap_or(0.0).abs()).collect();
            let hi = vals.iter().copied().fold(0.0, f64::max);
            let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
            (k, v, if lo > 0.0 { hi / lo } else { f64::INFINITY })
        })
        .collect();
    if !interesting.is_empty() {
        interesting.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(b.0)));
        h.push_str("<h3>Server counters per operation</h3><p class=note>Status counter deltas over the measured runs divided by the operations, at each operation's highest thread count; the counters that differ most between results first (up to 40).</p><table><tr><th class=l>operation</th><th class=l>counter</th>");
        for r in rs {
            let _ = write!(h, "<th>{}</th>", escape(&r.label));
        }
        h.push_str("</tr>");
        for ((op, k), v, _) in interesting.into_iter().take(40) {
            let _ = write!(
                h,
                "<tr><td class=l>{}</td><td class=l>{}</td>",
                escape(op),
                escape(k)
            );
            for x in v {
                match x {
                    Some(x) => {
                        let _ = write!(h, "<td>{}</td>", short(*x));
                    }
                    None => h.push_str("<td>-</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
}

fn comparison(h: &mut String, rs: &[Labeled]) {
    let rows = compare::compare(rs[0].doc, rs[1].doc);
    let _ = write!(
        h,
        "<h2>Comparison: {} / {}</h2><p class=note>B/A of the means over runs, with <code>enginebench compare</code>'s verdict. Each result is one server start, the unit of significance: its runs share the start's speed, and a page has no between-start spread, so the verdicts say <i>significance unknown</i>; <code>enginebench compare A B --between-start calibration.json</code> decides them (docs/ci.md).</p><details><summary>Every metric at every point ({} rows)</summary><table><tr><th class=l>operation</th><th>threads</th><th class=l>metric</th><th>A</th><th>B</th><th>B/A</th><th class=l>verdict</th></tr>",
        escape(&rs[1].label),
        escape(&rs[0].label),
        rows.len()
    );
    for r in rows {
        h.push_str("<tr>");
        for (i, c) in r.cells().iter().enumerate() {
            // Text columns (operation, metric, verdict) align left, numbers right.
            let class = if matches!(i, 0 | 2 | 6) {
                " class=l"
            } else {
                ""
            };
            let _ = write!(h, "<td{class}>{}</td>", escape(c));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table></details>");
}
