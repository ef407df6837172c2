//! Targets of several nodes (a cluster named host by host in one URL): every node's share of
//! each run (connections, ops/s, errors, latency) and, where its counters were read, its
//! commits, the cluster's conflicts and flow-control pauses per node, and the replication
//! sampled during the run (replica lag, Galera queues).

use super::html::Labeled;
use super::tables::{Cell, Table};

/// Counters per node shown next to its figures: (CSV column, header, the counters summed, scale).
const COUNTERS: [(&str, &str, &[&str], f64); 3] = [
    ("commits", "commits", &["Com_commit", "xact_commit"], 1.0),
    (
        "conflicts",
        "conflicts (cert. failures + aborts)",
        &["wsrep_local_cert_failures", "wsrep_local_bf_aborts"],
        1.0,
    ),
    (
        "flow_control_paused_ms",
        "flow control paused ms",
        &["wsrep_flow_control_paused_ns"],
        1e-6,
    ),
];

pub fn tables(rs: &[Labeled]) -> Vec<Table> {
    let mut cols = vec![
        ("result", "result"),
        ("operation", "operation"),
        ("threads", "threads"),
        ("run", "run"),
        ("node", "node"),
        ("connections", "connections"),
        ("ops_per_s", "ops/s"),
        ("errors", "errors"),
        ("p99_us", "p99 µs"),
        ("workers_lost", "connections lost"),
    ];
    cols.extend(COUNTERS.iter().map(|c| (c.0, c.1)));
    cols.extend([
        ("lag_bytes_max", "replica lag max bytes"),
        ("lag_s_max", "replica lag max s"),
        ("recv_queue_mean", "recv queue mean"),
        ("send_queue_mean", "send queue mean"),
    ]);
    let mut t = Table::new("nodes", &cols);
    for r in rs {
        for p in &r.doc.points {
            for run in &p.runs {
                for n in &run.by_node {
                    let mut row = vec![
                        Cell::text(&r.label),
                        Cell::text(&p.operation),
                        Cell::Int(p.threads as u64),
                        Cell::Int(run.run as u64),
                        Cell::text(&n.node),
                        Cell::Int(n.connections as u64),
                        Cell::Num(n.ops_per_s, 1),
                        Cell::Int(n.errors_total),
                        Cell::Int(n.latency_us.p99_us),
                        Cell::Int(n.workers_lost as u64),
                    ];
                    for (_, _, keys, scale) in COUNTERS {
                        let found: Vec<f64> = keys
                            .iter()
                            .filter_map(|k| n.server_counters.get(*k).copied())
                            .collect();
                        row.push(if n.server_counters.is_empty() {
                            Cell::Empty
                        } else {
                            // A counter that did not move is absent: it counted 0.
                            Cell::Num(found.iter().fold(0.0, |a, b| a + b) * scale, 0)
                        });
                    }
                    let r = n.replication.as_ref();
                    row.push(match r.and_then(|r| r.lag_bytes_max) {
                        Some(b) => Cell::Int(b),
                        None => Cell::Empty,
                    });
                    for f in [
                        r.and_then(|r| r.lag_s_max),
                        r.and_then(|r| r.recv_queue_mean),
                        r.and_then(|r| r.send_queue_mean),
                    ] {
                        row.push(f.map_or(Cell::Empty, |v| Cell::Num(v, 3)));
                    }
                    t.rows.push(row);
                }
            }
        }
    }
    vec![t]
}

/// Writes the section when any run was spread over several nodes; nothing otherwise.
pub fn section(h: &mut String, rs: &[Labeled]) {
    let t = tables(rs).remove(0);
    if t.is_empty() {
        return;
    }
    h.push_str("<h2 id=nodes>Nodes</h2><p class=note>Runs against several nodes of a cluster: connection <i>w</i> went to node <i>w</i> mod nodes. Each node's connections, ops/s (its operations over the run's time), errors, p99 service time and connections lost for good; then, from the node's own status counters read before and after the run over a connection of its own, its commits, the conflicts it counted (Galera certification failures plus transactions aborted by a replicated write; the client sees both as deadlock errors) and the time flow control paused it; then, sampled over the node's own connection at every report interval and at the end of the run, a PostgreSQL replica's lag behind the primary (WAL bytes not replayed yet, and seconds since its last replayed commit, 0 when it has replayed all it received: the largest sample) and a Galera node's queues (write sets waiting to be applied, and to be sent: the mean of the samples). An empty cell: not read, or not that kind of node. <code>--format csv --table nodes</code> gives the same rows.</p>");
    h.push_str(&t.to_html());
}
