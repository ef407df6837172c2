//! The lines `compare` prints beside its table: how the client sent its statements when that
//! differs, the node settings that differ between the two results, the server functions whose
//! share changed, and what the batched client did on each side. None of them is judged; they
//! say where to look.

use super::compare::find;
use super::{Point, ResultDoc};

/// How the client talked to the server, where a result records it: the config's options with
/// the value a result without them had (it predates the option, or ran with its default), then
/// the target URL's client options (`?begin=`, `?pipeline=`) and the client that ran.
const CLIENT_OPTIONS: &[(&str, &str)] = &[("statements", "prepared")];
const URL_OPTIONS: &[(&str, &str)] = &[("begin", "pipelined"), ("pipeline", "on")];

/// The client options in which the two results differ, one line each ("statements A=prepared
/// B=text"); nothing for two SQLite results, which have no client.
pub fn config_lines(a: &ResultDoc, b: &ResultDoc) -> Vec<String> {
    let cfg = |d: &ResultDoc, k: &str, default: &str| -> String {
        match d.config.get(k) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) if !v.is_null() => v.to_string(),
            _ => default.to_string(),
        }
    };
    let url = |d: &ResultDoc, k: &str, default: &str| -> String {
        let target = d
            .config
            .get("target")
            .and_then(|t| t.as_str())
            .unwrap_or("");
        url::Url::parse(target)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(q, _)| q == k)
                    .map(|(_, v)| v.into_owned())
            })
            .unwrap_or_else(|| default.to_string())
    };
    let client = |d: &ResultDoc, what: fn(&super::ClientInfo) -> &str| -> String {
        d.client
            .as_ref()
            .map_or("-".into(), |c| what(c).to_string())
    };
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    for &(k, default) in CLIENT_OPTIONS {
        pairs.push((k.into(), cfg(a, k, default), cfg(b, k, default)));
    }
    for &(k, default) in URL_OPTIONS {
        pairs.push((format!("?{k}="), url(a, k, default), url(b, k, default)));
    }
    pairs.push((
        "client".into(),
        client(a, |c| c.driver.as_str()),
        client(b, |c| c.driver.as_str()),
    ));
    pairs.push((
        "client I/O".into(),
        client(a, |c| c.io.as_str()),
        client(b, |c| c.io.as_str()),
    ));
    pairs
        .into_iter()
        .filter(|(_, va, vb)| va != vb)
        .map(|(k, va, vb)| format!("{k} A={va} B={vb}"))
        .collect()
}

/// Settings in which the two results' nodes of the same index differ (both results of
/// several nodes: `target.nodes`), one line each: a node's value is its `settings_differ` entry,
/// else node 0's. What names a private server (paths, ports) is left out, as in the
/// comparison of suites; nodes that could not be read are skipped.
pub fn node_setting_lines(a: &ResultDoc, b: &ResultDoc) -> Vec<String> {
    let value = |d: &ResultDoc, i: usize, k: &str| -> String {
        let n = &d.target.nodes[i];
        n.settings_differ
            .get(k)
            .or_else(|| d.target.settings.get(k))
            .cloned()
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    let pairs = a.target.nodes.iter().zip(&b.target.nodes).enumerate();
    for (i, (na, nb)) in pairs {
        if na.error.is_some() || nb.error.is_some() {
            continue;
        }
        let names: std::collections::BTreeSet<&String> = (a.target.settings.keys())
            .chain(b.target.settings.keys())
            .chain(na.settings_differ.keys())
            .chain(nb.settings_differ.keys())
            .collect();
        for k in names {
            let (va, vb) = (value(a, i, k), value(b, i, k));
            let ephemeral = |v: &str| crate::server::capture::ephemeral(k, v);
            if ephemeral(&va) || ephemeral(&vb) {
                continue;
            }
            if va != vb {
                out.push(format!(
                    "node {i} ({} / {}): {k} A={va} B={vb}",
                    na.node, nb.node
                ));
            }
        }
    }
    out
}

/// `--profile-server` on both sides: per common point, the server functions whose self time
/// per operation differs most (the mean over each side's runs), as lines for the terminal.
pub fn function_lines(a: &ResultDoc, b: &ResultDoc, per_point: usize) -> Vec<String> {
    use crate::measure::profile;
    let mean = |p: &Point| {
        let v: Vec<_> = p
            .runs
            .iter()
            .filter_map(|r| r.server_profile.as_ref())
            .collect();
        profile::mean(&v)
    };
    let mut out = Vec::new();
    for pa in &a.points {
        let Some(pb) = find(b, &pa.operation, pa.threads) else {
            continue;
        };
        let (Some(fa), Some(fb)) = (mean(pa), mean(pb)) else {
            continue;
        };
        out.push(format!(
            "{} at {} threads: server CPU {:.1} -> {:.1} us/op by perf, which saw {} -> {} of it (/proc); functions (self us/op, A -> B):",
            pa.operation,
            pa.threads,
            fa.cpu_us_per_op,
            fb.cpu_us_per_op,
            profile::coverage_text(&fa),
            profile::coverage_text(&fb)
        ));
        for (name, x, y) in profile::differing_functions(&fa, &fb, per_point) {
            out.push(format!(
                "  {name:<50} {x:>9.2} -> {y:>9.2}  ({:+.2})",
                y - x
            ));
        }
    }
    out
}

/// What the batched I/O path did on each side, per point (means over its runs), beside the
/// latency percentiles: a held reply is counted in them (docs/method.md, "Batched waits and
/// held replies"). Nothing when neither side has batch figures.
pub fn batch_lines(a: &ResultDoc, b: &ResultDoc) -> Vec<String> {
    let mut out = Vec::new();
    for (label, doc) in [("A", a), ("B", b)] {
        let Some(c) = &doc.client else { continue };
        let mut points: Vec<(&str, usize)> = Vec::new();
        for r in &c.batch {
            if !points.contains(&(r.operation.as_str(), r.threads)) {
                points.push((r.operation.as_str(), r.threads));
            }
        }
        for (op, threads) in points {
            let runs: Vec<_> = c
                .batch
                .iter()
                .filter(|r| r.operation == op && r.threads == threads)
                .collect();
            let n = runs.len() as f64;
            let mean =
                |f: &dyn Fn(&super::BatchRun) -> f64| runs.iter().map(|r| f(r)).sum::<f64>() / n;
            let p50 = find(doc, op, threads).map(|p| p.aggregate.latency_us.p50_us);
            out.push(format!(
                "batch {label}: {op} at {threads} threads: {:.0} batched waits/run, {:.1} % to the 2 ms limit, hold mean {:.0} us p99 {:.0} us{} (io_uring loops {}, epoll {})",
                mean(&|r| r.batched_waits as f64),
                100.0 * mean(&|r| r.waits_to_timeout as f64) / mean(&|r| r.batched_waits as f64).max(1e-9),
                mean(&|r| r.hold_mean_us),
                mean(&|r| r.hold_p99_us as f64),
                p50.map(|v| format!(" (latency p50 {v} us)")).unwrap_or_default(),
                runs[0].loops.io_uring,
                runs[0].loops.epoll,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> ResultDoc {
        ResultDoc {
            points: vec![Point {
                operation: "op".into(),
                threads: 2,
                runs: vec![crate::report::RunRecord::default()],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn node_settings_of_the_same_index() {
        use crate::report::NodeInfo;
        use std::collections::BTreeMap;
        let two = |buffer1: &str, port1: &str| {
            let mut d = doc();
            d.target.settings = BTreeMap::from([
                ("buffer".to_string(), "1G".to_string()),
                ("port".to_string(), "3306".to_string()),
            ]);
            d.target.nodes = vec![
                NodeInfo {
                    node: "h1:3306".into(),
                    ..NodeInfo::default()
                },
                NodeInfo {
                    node: "h2:3307".into(),
                    settings_differ: [("buffer", buffer1), ("port", port1)]
                        .iter()
                        .filter(|(_, v)| !v.is_empty())
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                    ..NodeInfo::default()
                },
            ];
            d
        };
        let a = two("2G", "3307");
        assert!(node_setting_lines(&a, &a).is_empty());
        // Node 1 of B has node 0's buffer; ports never count.
        assert_eq!(
            node_setting_lines(&a, &two("", "3308")),
            vec!["node 1 (h2:3307 / h2:3307): buffer A=2G B=1G"]
        );
        // A one-node result: nothing to line up.
        assert!(node_setting_lines(&a, &doc()).is_empty());
    }

    #[test]
    fn client_options_that_differ() {
        let with = |statements: Option<&str>, target: &str| {
            let mut d = doc();
            d.config = serde_json::json!({ "target": target });
            if let Some(s) = statements {
                d.config["statements"] = s.into();
            }
            d
        };
        let pg = "postgres://u@h/db";
        // A result without the option ran prepared (its default, and every older result).
        assert!(config_lines(&with(None, pg), &with(None, pg)).is_empty());
        assert_eq!(
            config_lines(&with(None, pg), &with(Some("text"), pg)),
            vec!["statements A=prepared B=text"]
        );
        assert_eq!(
            config_lines(
                &with(Some("extended"), pg),
                &with(None, "postgres://u@h/db?begin=separate&pipeline=on")
            ),
            vec![
                "statements A=extended B=prepared",
                "?begin= A=pipelined B=separate"
            ]
        );
    }
}
