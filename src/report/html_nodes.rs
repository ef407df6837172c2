//! Targets of several nodes (a cluster named host by host in one URL): every node's share of
//! each run (connections, ops/s, errors, latency) and, where its counters were read, its
//! commits, the cluster's conflicts and flow-control pauses per node, and the replication
//! sampled during the run (replica lag, Galera queues); and every node's version and the
//! settings in which it differs from node 0, read at the start.

use super::tables::{Cell, Table};
use crate::model::Labeled;

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
        ("commits_per_op", "commits per op of the run"),
        (
            "conflicts_per_1000_ops",
            "conflicts per 1,000 ops of the run",
        ),
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
                    // A counter that did not move is absent: it counted 0.
                    let counted = |keys: &[&str]| {
                        (!n.server_counters.is_empty()).then(|| {
                            keys.iter()
                                .filter_map(|k| n.server_counters.get(*k))
                                .sum::<f64>()
                        })
                    };
                    for (_, _, keys, scale) in COUNTERS {
                        row.push(Cell::opt(counted(keys).map(|v| v * scale), 0));
                    }
                    // Over the whole run's operations (every node's): what one operation of
                    // the client costs on this node.
                    let per_op = |v: f64| v / (run.ops.max(1) as f64);
                    row.push(Cell::opt(counted(COUNTERS[0].2).map(per_op), 2));
                    row.push(Cell::opt(
                        counted(COUNTERS[1].2).map(|v| per_op(v) * 1000.0),
                        2,
                    ));
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
    vec![t, settings_table(rs)]
}

/// Every node's version and each setting in which it differs from node 0 (`target.nodes`):
/// one row per such setting, or one row for a node with none.
fn settings_table(rs: &[Labeled]) -> Table {
    let mut t = Table::new(
        "node_settings",
        &[
            ("result", "result"),
            ("node", "node"),
            ("server_version", "version"),
            ("setting", "setting"),
            ("node0_value", "node 0's value"),
            ("value", "this node's value"),
        ],
    );
    for r in rs {
        let target = &r.doc.target;
        for n in &target.nodes {
            let mut version = match &n.error {
                Some(e) => format!("not read: {e}"),
                None => n.server_version.clone(),
            };
            if n.exited {
                version.push_str(" (ended during the run)");
            }
            let head = [
                Cell::text(&r.label),
                Cell::text(&n.node),
                Cell::text(version),
            ];
            if n.settings_differ.is_empty() {
                let mut row = head.to_vec();
                row.extend([Cell::Empty, Cell::Empty, Cell::Empty]);
                t.rows.push(row);
            }
            for (k, v) in &n.settings_differ {
                let node0 = target.settings.get(k).cloned().unwrap_or_default();
                let mut row = head.to_vec();
                row.extend([Cell::text(k), Cell::text(node0), Cell::text(v)]);
                t.rows.push(row);
            }
        }
    }
    t
}

/// Writes the section when any run was spread over several nodes; nothing otherwise.
pub fn section(h: &mut String, rs: &[Labeled]) {
    let [t, settings]: [Table; 2] = tables(rs).try_into().expect("two tables");
    if t.is_empty() && settings.is_empty() {
        return;
    }
    if t.is_empty() {
        h.push_str("<h2 id=nodes>Nodes</h2>");
    } else {
        h.push_str("<h2 id=nodes>Nodes</h2><p class=note>Runs against several nodes of a cluster: connection <i>w</i> went to node <i>w</i> mod nodes. Each node's connections, ops/s (its operations over the run's time), errors, p99 service time and connections lost for good; then, from the node's own status counters read before and after the run over a connection of its own, its commits, the conflicts it counted (Galera certification failures plus transactions aborted by a replicated write; the client sees both as deadlock errors) and the time flow control paused it, and the commits per operation and conflicts per 1,000 operations of the run (the node's counter over all nodes' operations); then, sampled over the node's own connection at every report interval and at the end of the run, a PostgreSQL replica's lag behind the primary (WAL bytes not replayed yet, and seconds since its last replayed commit, 0 when it has replayed all it received: the largest sample) and a Galera node's queues (write sets waiting to be applied, and to be sent: the mean of the samples). An empty cell: not read, or not that kind of node. <code>--format csv --table nodes</code> gives the same rows.</p>");
        h.push_str(&t.to_html());
    }
    if settings.is_empty() {
        return;
    }
    h.push_str("<h3 id=node-settings>Node settings</h3><p class=note>Every node's server version and each setting whose value differs from node 0's (a setting the node lacks shows empty), read once at the start of the run. Settings that name the node itself differ by nature: ports, sockets, paths, <code>server_id</code>, <code>wsrep_node_name</code> / <code>wsrep_node_address</code>, the host name, a replica's <code>in_hot_standby</code>. A node with no such row has every setting as node 0 has it. <code>--format csv --table node_settings</code> gives the same rows.</p>");
    h.push_str(&settings.to_html());
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::report::{NodeInfo, NodeRecord, Point, ResultDoc, RunRecord};

    fn doc() -> ResultDoc {
        let mut d = ResultDoc::default();
        d.target.settings = BTreeMap::from([
            ("port".to_string(), "3306".to_string()),
            ("wsrep_node_name".to_string(), "n1".to_string()),
        ]);
        d.target.nodes = vec![
            NodeInfo {
                node: "h1:3306".into(),
                server_version: "11.4".into(),
                ..NodeInfo::default()
            },
            NodeInfo {
                node: "h2:3307".into(),
                server_version: "11.4".into(),
                settings_differ: BTreeMap::from([
                    ("port".to_string(), "3307".to_string()),
                    ("wsrep_node_name".to_string(), "n2".to_string()),
                ]),
                ..NodeInfo::default()
            },
            NodeInfo {
                node: "h3:3308".into(),
                error: Some("connection_lost: refused".into()),
                ..NodeInfo::default()
            },
        ];
        let node = |name: &str, counters: &[(&str, f64)]| NodeRecord {
            node: name.into(),
            server_counters: counters.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..NodeRecord::default()
        };
        d.points = vec![Point {
            operation: "op".into(),
            threads: 2,
            runs: vec![RunRecord {
                run: 1,
                ops: 2000,
                by_node: vec![
                    node(
                        "h1:3306",
                        &[("Com_commit", 1000.0), ("wsrep_local_cert_failures", 3.0)],
                    ),
                    node("h2:3307", &[("Com_commit", 3000.0)]),
                    node("h3:3308", &[]),
                ],
                ..RunRecord::default()
            }],
            ..Point::default()
        }];
        d
    }

    #[test]
    fn node_settings_rows_say_what_differs_from_node_0() {
        let d = doc();
        let rs = [Labeled {
            label: "a".into(),
            doc: &d,
        }];
        let t = tables(&rs);
        assert_eq!(t[1].name, "node_settings");
        assert_eq!(
            t[1].to_csv(),
            "result,node,server_version,setting,node0_value,value\n\
             a,h1:3306,11.4,,,\n\
             a,h2:3307,11.4,port,3306,3307\n\
             a,h2:3307,11.4,wsrep_node_name,n1,n2\n\
             a,h3:3308,not read: connection_lost: refused,,,\n"
        );
        let mut h = String::new();
        section(&mut h, &rs);
        assert!(h.contains("data-table=\"node_settings\""), "{h}");
        assert!(h.contains("differ by nature"), "{h}");
    }

    #[test]
    fn nodes_gain_commits_per_op_and_conflicts_per_1000_ops() {
        let d = doc();
        let rs = [Labeled {
            label: "a".into(),
            doc: &d,
        }];
        let t = &tables(&rs)[0];
        let col = |name: &str| t.columns.iter().position(|c| c == name).unwrap();
        let csv = |row: usize, c: &str| match &t.rows[row][col(c)] {
            Cell::Num(v, _) => Some(*v),
            Cell::Empty => None,
            other => panic!("{other:?}"),
        };
        // Over the run's 2,000 operations, not the node's own.
        assert_eq!(csv(0, "commits_per_op"), Some(0.5));
        assert_eq!(csv(1, "commits_per_op"), Some(1.5));
        assert_eq!(csv(0, "conflicts_per_1000_ops"), Some(1.5));
        assert_eq!(csv(1, "conflicts_per_1000_ops"), Some(0.0));
        // Not read: no figure.
        assert_eq!(csv(2, "commits_per_op"), None);
    }
}
