//! The fairness tables of the HTML report: where the CPU went (client, server, other processes)
//! per operation and thread count, and the server settings that differ between the results
//! shown together; CSV from the same rows.

use std::collections::BTreeSet;

use super::tables::{Cell, Table};
use crate::model::Labeled;

/// Settings rows shown at most on the page (the CSV has them all).
const MAX_HTML_SETTINGS: usize = 80;

/// Writes the CPU table and, for several results, the settings diff.
pub fn section(h: &mut String, rs: &[Labeled]) {
    let ts = tables(rs);
    if let Some(cpu) = ts.iter().find(|t| t.name == "cpu") {
        h.push_str("<h3>Where the CPU went</h3><p class=note>Per operation, medians over the measured runs: CPU (user + system) of the benchmark client and of the server process per operation, the client's sleeps per operation (its threads going to sleep, each to be woken again: most of a client's cost besides its system calls), and the client's share of the two (on a shared machine every µs of client CPU is taken from the server); other processes: mean CPUs used by everything else during the runs (1.0 is one whole CPU), and how many runs that disturbed.</p>");
        h.push_str(&cpu.to_html());
    }
    if rs.len() < 2 || rs.iter().all(|r| r.doc.target.settings.is_empty()) {
        return;
    }
    if let Some(s) = ts.iter().find(|t| t.name == "server-settings") {
        h.push_str("<h3>Server settings that differ</h3><p class=note>Global settings as each server reported them, where two results of the same kind of server have different values or a result set them away from the compiled-in default (marked *). A setting one server does not have at all is not listed.</p>");
        if s.rows.is_empty() {
            h.push_str("<p class=note>No setting differs.</p>");
        } else if s.rows.len() <= MAX_HTML_SETTINGS {
            h.push_str(&s.to_html());
        } else {
            let mut short = s.clone();
            short.rows.truncate(MAX_HTML_SETTINGS);
            h.push_str(&short.to_html());
            h.push_str(&format!(
                "<p class=note>{} more: <code>--format csv --table server-settings</code> lists them all.</p>",
                s.rows.len() - MAX_HTML_SETTINGS
            ));
        }
    }
}

pub fn tables(rs: &[Labeled]) -> Vec<Table> {
    let mut cpu = Table::new(
        "cpu",
        &[
            ("result", "result"),
            ("operation", "operation"),
            ("threads", "threads"),
            ("client_cpu_us_per_op", "client µs/op"),
            ("client_sleeps_per_op", "client sleeps/op"),
            ("server_cpu_us_per_op", "server µs/op"),
            ("client_cpu_share", "client share"),
            ("others_cpus", "other processes (CPUs)"),
            ("disturbed_runs", "disturbed runs"),
            ("runs", "runs"),
        ],
    );
    for r in rs {
        for p in &r.doc.points {
            let a = &p.aggregate;
            let others = if p.runs.is_empty() {
                None
            } else {
                Some(
                    p.runs.iter().map(|x| x.host_cpu.others_cpus).sum::<f64>()
                        / p.runs.len() as f64,
                )
            };
            // Results from before the client's switches were counted have none.
            let sleeps = crate::model::median_of_some(
                p.runs.iter().map(|x| x.client_cpu.voluntary_cs_per_op),
            );
            cpu.rows.push(vec![
                Cell::text(&r.label),
                Cell::text(&p.operation),
                Cell::Int(p.threads as u64),
                Cell::Num(a.client_cpu_us_per_op_median, 1),
                Cell::opt(sleeps, 2),
                Cell::opt(a.server_cpu_us_per_op_median, 1),
                Cell::opt(a.client_cpu_share_median, 3),
                Cell::opt(others, 2),
                Cell::Int(a.disturbed_runs as u64),
                Cell::Int(p.runs.len() as u64),
            ]);
        }
    }
    let mut settings = Table::new("server-settings", &[("setting", "setting")]);
    for r in rs {
        settings
            .columns
            .push(r.label.to_lowercase().replace([' ', '#'], "_"));
        settings.headers.push(r.label.clone());
    }
    if rs.len() > 1 && rs.iter().any(|r| !r.doc.target.settings.is_empty()) {
        let keys: BTreeSet<&String> = rs
            .iter()
            .flat_map(|r| r.doc.target.settings.keys())
            .collect();
        for k in keys {
            let has: Vec<&Labeled> = rs
                .iter()
                .filter(|r| r.doc.target.settings.contains_key(k))
                .collect();
            // Only servers of one kind are compared value by value.
            let differs = has.iter().any(|a| {
                has.iter().any(|b| {
                    a.doc.target.dbms == b.doc.target.dbms
                        && a.doc.target.settings.get(k) != b.doc.target.settings.get(k)
                })
            });
            let non_default = has
                .iter()
                .any(|r| r.doc.target.settings_non_default.contains(k));
            if !differs && !non_default {
                continue;
            }
            let mut row = vec![Cell::text(k)];
            for r in rs {
                row.push(match r.doc.target.settings.get(k) {
                    Some(v) => {
                        let mark = if r.doc.target.settings_non_default.contains(k) {
                            " *"
                        } else {
                            ""
                        };
                        Cell::text(format!("{v}{mark}"))
                    }
                    None => Cell::Empty,
                });
            }
            settings.rows.push(row);
        }
    }
    vec![cpu, settings]
}
