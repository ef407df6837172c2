//! The pieces a verdict's evidence is told with: numbers at the digits that matter, the cells a
//! selector picks and how it reads, and what differs between the compared results.

use super::*;

/// A ratio with the digits that matter at its size.
pub(super) fn fmt_ratio(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else if x.abs() >= 0.1 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// A confidence level as a percentage with the digits that tell it apart (95, 97.5, 98.75).
pub(super) fn fmt_pct(level: f64) -> String {
    let pct = level * 100.0;
    let text = format!("{pct:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The one cell a selector picks at thread count `t`.
pub(super) fn select<'a>(
    plan: &Plan,
    cells: &'a [Cell],
    si: usize,
    sel: &Selector,
    t: usize,
) -> Result<&'a Cell, String> {
    let threads = sel.threads.unwrap_or(t);
    let section = &plan.sections[si];
    let found: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.section == si && c.threads == threads)
        .filter(|c| {
            sel.server
                .as_ref()
                .is_none_or(|s| plan.servers[c.server].name() == *s)
        })
        .filter(|c| {
            sel.engine.as_ref().is_none_or(|e| {
                c.engine
                    .as_ref()
                    .is_some_and(|ce| ce.eq_ignore_ascii_case(e))
            })
        })
        .filter(|c| {
            sel.variant
                .as_ref()
                .is_none_or(|v| c.variant.is_some_and(|cv| section.variants[cv].name == *v))
        })
        .collect();
    match found.as_slice() {
        [c] => Ok(c),
        [] => Err(format!(
            "no cell of the plan matches {} at {threads} threads",
            describe(sel)
        )),
        _ => Err(format!(
            "{} at {threads} threads matches {} cells ({}); name server, engine or variant",
            describe(sel),
            found.len(),
            found
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

pub(super) fn describe(sel: &Selector) -> String {
    let mut parts = Vec::new();
    for (k, v) in [
        ("server", &sel.server),
        ("engine", &sel.engine),
        ("variant", &sel.variant),
    ] {
        if let Some(v) = v {
            parts.push(format!("{k}={v}"));
        }
    }
    if parts.is_empty() {
        "{ }".into()
    } else {
        format!("{{ {} }}", parts.join(", "))
    }
}

pub(super) fn metric_names(owners: Owners) -> Vec<String> {
    METRICS
        .iter()
        .map(|(m, _)| m.to_string())
        .chain(
            owners
                .iter()
                .flat_map(|o| o.claim_metrics().iter().map(|(m, _)| m.to_string())),
        )
        .collect()
}

/// Settings whose values differ between two results (name, a, b).
pub(super) fn settings_differ(a: &ResultDoc, b: &ResultDoc) -> Vec<(String, String, String)> {
    let d = crate::server::capture::diff(&[
        (&a.target.settings, a.target.settings_non_default.as_slice()),
        (&b.target.settings, b.target.settings_non_default.as_slice()),
    ]);
    let mut out: Vec<(String, String, String)> = d
        .differ
        .into_iter()
        .map(|(k, v)| (k, v[0].clone(), v[1].clone()))
        .collect();
    if a.target.engine != b.target.engine {
        out.insert(
            0,
            (
                "(table engine)".into(),
                a.target.engine.clone(),
                b.target.engine.clone(),
            ),
        );
    }
    out
}

/// The server counters per operation (median over runs) whose a/b ratio is furthest from 1:
/// where the work differs (pages read, rows read, bytes written). Each side reads its own
/// operation (claims across queries compare two).
pub(super) fn counters_differ(
    a: &ResultDoc,
    op_a: Option<&str>,
    b: &ResultDoc,
    op_b: Option<&str>,
    n: usize,
) -> Vec<CounterDiff> {
    let per_op = |doc: &ResultDoc, op: Option<&str>| -> BTreeMap<String, f64> {
        let Ok(p) = pick_point(doc, op) else {
            return BTreeMap::new();
        };
        let mut sums: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in &p.runs {
            for (k, v) in &r.server_counters {
                sums.entry(k.clone())
                    .or_default()
                    .push(v / r.ops.max(1) as f64);
            }
        }
        sums.into_iter()
            .map(|(k, mut v)| {
                v.sort_by(f64::total_cmp);
                (k, v[v.len() / 2])
            })
            .collect()
    };
    let (ca, cb) = (per_op(a, op_a), per_op(b, op_b));
    let mut rows: Vec<(String, f64, f64, f64)> = ca
        .iter()
        .filter_map(|(k, &x)| {
            let y = cb.get(k).copied().unwrap_or(0.0);
            // Counters below 0.01 per operation on both sides say nothing about the work.
            if x.max(y) < 0.01 || is_uninformative(k) {
                return None;
            }
            let score = ((x + 1e-3) / (y + 1e-3)).ln().abs();
            Some((k.clone(), x, y, score))
        })
        .collect();
    rows.sort_by(|l, r| r.3.total_cmp(&l.3));
    rows.into_iter()
        .take(n)
        .map(|(name, a, b, _)| CounterDiff { name, a, b })
        .collect()
}

/// Counters that move with time or with the client, not with the work of an operation.
pub(super) fn is_uninformative(name: &str) -> bool {
    const SKIP: &[&str] = &[
        "Uptime",
        "Bytes_",
        "Questions",
        "Queries",
        "Com_",
        "Handler_commit",
        "Threads_",
        "Connections",
        "Memory_used",
        "Max_used",
        "Open",
        "Opened",
    ];
    SKIP.iter().any(|s| name.starts_with(s))
}
