//! What makes two results comparable: one identity of a result's configuration, computed here
//! and nowhere else, from the result as it was written (so a result recorded today and one
//! recorded before the catalog knew identities get the same one).
//!
//! The identity is a set of named parts in two tiers:
//! - **the work**: the workload, its options (every one it records, but for what a workload says
//!   does not change the work: a fleet shard's own block, the seed, and what its report owner
//!   lists in [`SectionOwner::not_the_work`]), the common options that shape the work (table
//!   size, table options, pacing and rate, storage engine), the target's kind and engine, and a
//!   fleet's shape. Results of different work are different series everywhere.
//! - **the setup**: the server's version, profile, `--server-opt`s and non-ephemeral settings,
//!   the client's driver and I/O path, the client host, and every other common option that is
//!   not listed below as not counting. Within a series of the same work, a change of setup is
//!   "what changed" between two results.
//!
//! Two results are the same configuration when every part of both tiers is equal. What a run
//! chose that does not change what a point measures (how long and how often it measured, where
//! it wrote, what it printed, the seed) is not a part; neither is anything that differs between
//! two starts of the same server ([`crate::server::capture::ephemeral`]).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::report::Owners;

use crate::model::ResultDoc;

/// Common options (`config`'s keys) that shape the work: a change makes another series.
const WORK_CONFIG: &[&str] = &["table_size", "table_options", "pacing", "engine"];

/// Common options that are not part of the identity: the method (how long, how often), where
/// results and reports go, what is printed, and what has a part of its own. Every other key
/// of a result's config counts (as setup), so an option added later counts until it is
/// listed here.
const NOT_COUNTED: &[&str] = &[
    "workload",
    "workload_options",
    "target",
    "server",
    "fleet",
    "operations",
    "threads",
    "method",
    "warmup_s",
    "duration_s",
    "runs",
    "events",
    "aggregate",
    "seed",
    "results_dir",
    "report_interval_s",
    "live_report",
    "extra_percentiles",
    "metrics_addr",
    "connect_timeout_s",
    "disturbed_above_cpus",
    "server_pid",
    "server_label",
];

/// Workload options that never count: what differs between the shards of one fleet (the
/// contract's convention), and the random seed (another seed draws the same distributions).
const NOT_THE_WORK: &[&str] = &["shard", "seed"];

/// A result's identity: its parts by tier, each `name → value` in words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sameness {
    pub work: BTreeMap<String, String>,
    pub setup: BTreeMap<String, String>,
}

impl Sameness {
    pub fn of(doc: &ResultDoc, owners: Owners) -> Sameness {
        let mut s = Sameness::default();
        let cfg = &doc.config;
        let workload = cfg
            .get("workload")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| doc.points.first().map(|p| p.workload.clone()))
            .unwrap_or_default();
        s.work.insert("workload".into(), workload.clone());
        put(&mut s.work, "target", &doc.target.dbms);
        put(&mut s.work, "engine_used", &doc.target.engine);
        if let Some(f) = super::fleet_of(doc) {
            s.work.insert("fleet".into(), f);
        }
        if let Some(m) = cfg.as_object() {
            for (k, v) in m {
                if NOT_COUNTED.contains(&k.as_str()) {
                    continue;
                }
                let tier = if WORK_CONFIG.contains(&k.as_str()) {
                    &mut s.work
                } else {
                    &mut s.setup
                };
                flatten(k, v, tier);
            }
        }
        let skip: Vec<&str> = owners
            .iter()
            .filter(|o| o.key() == workload)
            .flat_map(|o| o.not_the_work().iter().copied())
            .chain(NOT_THE_WORK.iter().copied())
            .collect();
        if let Some(m) = cfg.get("workload_options").and_then(Value::as_object) {
            for (k, v) in m {
                if skip.contains(&k.as_str()) {
                    continue;
                }
                // A workload option named like a common one (oltp's table_size) is the same
                // value; a different one is kept apart.
                let mut own = BTreeMap::new();
                flatten(k, v, &mut own);
                for (k, v) in own {
                    match s.work.get(&k) {
                        Some(old) if *old == v => {}
                        Some(_) => {
                            s.work.insert(format!("options.{k}"), v);
                        }
                        None => {
                            s.work.insert(k, v);
                        }
                    }
                }
            }
        }
        put(&mut s.setup, "server", &doc.target.server_version);
        if let Some(srv) = &doc.target.server {
            if let Some(p) = &srv.profile {
                put(&mut s.setup, "profile", p);
            }
        }
        // `--server-opt KEY=VALUE`s, recorded as [key, value] pairs.
        if let Some(opts) = cfg.pointer("/server/opts").and_then(Value::as_array) {
            let opts: Vec<String> = opts
                .iter()
                .filter_map(|kv| match kv.as_array().map(Vec::as_slice) {
                    Some([k, v]) => Some(format!(
                        "{}={}",
                        k.as_str().unwrap_or_default(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string)
                    )),
                    _ => kv.as_str().map(str::to_string),
                })
                .collect();
            if !opts.is_empty() {
                s.setup.insert("server_opts".into(), opts.join(" "));
            }
        }
        let settings = super::settings_compared(doc);
        if !settings.is_empty() {
            s.setup
                .insert("settings".into(), super::fingerprint_of(&settings));
        }
        if let Some(c) = &doc.client {
            put(&mut s.setup, "client", &format!("{} {}", c.driver, c.io));
        }
        put(&mut s.setup, "host", &doc.host.hostname);
        s
    }

    /// The identity of the whole configuration: 12 hex digits of the SHA-1 of every part.
    pub fn key(&self) -> String {
        hash(&[&self.work, &self.setup])
    }

    /// The identity of the work alone (a trend's series).
    pub fn work_key(&self) -> String {
        hash(&[&self.work])
    }

    /// Both tiers as one JSON object `{"work": {...}, "setup": {...}}` (the catalog's column).
    pub fn to_json(&self) -> String {
        serde_json::json!({"work": self.work, "setup": self.setup}).to_string()
    }

    pub fn from_json(text: &str) -> Sameness {
        let v: Value = serde_json::from_str(text).unwrap_or_default();
        let map = |k: &str| -> BTreeMap<String, String> {
            v.get(k)
                .and_then(|m| serde_json::from_value(m.clone()).ok())
                .unwrap_or_default()
        };
        Sameness {
            work: map("work"),
            setup: map("setup"),
        }
    }

    /// Every part that differs from `b`, in words (`table_size 20000 → 200000`), work first.
    pub fn changes_to(&self, b: &Sameness) -> Vec<String> {
        let mut out = differing(&self.work, &b.work);
        out.extend(differing(&self.setup, &b.setup));
        out
    }
}

/// `name value` unless the value is empty.
fn put(m: &mut BTreeMap<String, String>, name: &str, v: &str) {
    if !v.is_empty() {
        m.insert(name.into(), v.into());
    }
}

/// A JSON value as parts: an object's members as `name.member`, null left out, anything else
/// in its compact canonical text.
fn flatten(name: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Null => {}
        Value::String(s) => {
            out.insert(name.into(), s.clone());
        }
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten(&format!("{name}.{k}"), v, out);
            }
        }
        other => {
            let mut t = String::new();
            super::canonical(other, &mut t);
            out.insert(name.into(), t);
        }
    }
}

fn hash(maps: &[&BTreeMap<String, String>]) -> String {
    use sha1::{Digest, Sha1};
    let mut h = Sha1::new();
    for (i, m) in maps.iter().enumerate() {
        h.update([b'0' + i as u8, 0]);
        for (k, v) in *m {
            h.update(k.as_bytes());
            h.update([0]);
            h.update(v.as_bytes());
            h.update([0]);
        }
    }
    h.finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn differing(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let v = |m: &BTreeMap<String, String>| {
                m.get(k)
                    .map(|v| short(v))
                    .unwrap_or_else(|| "(none)".into())
            };
            format!("{k} {} → {}", v(a), v(b))
        })
        .collect()
}

/// A part's value for a line of text: at most 40 characters (a workload file's whole text is
/// a part; its start and its length say which).
pub fn short(v: &str) -> String {
    let n = v.chars().count();
    if n <= 40 {
        return v.to_string();
    }
    let head: String = v.chars().take(24).collect();
    format!("{head}… ({n} chars)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ClientInfo, ResultDoc};

    fn doc(config: Value) -> ResultDoc {
        let mut d = ResultDoc {
            schema_version: 2,
            config,
            ..Default::default()
        };
        d.target.dbms = "mysql".into();
        d.target.engine = "InnoDB".into();
        d.target.server_version = "10.11.19-MariaDB".into();
        d.host.hostname = "h1".into();
        d.client = Some(ClientInfo {
            driver: "wire".into(),
            io: "io_uring".into(),
            ..Default::default()
        });
        d
    }

    fn micro(table_size: u64, extra: Value) -> ResultDoc {
        let mut c = serde_json::json!({
            "workload": "micro-read", "table_size": table_size, "threads": [1, 4],
            "duration_s": 1.0, "runs": 2, "seed": 1, "results_dir": "r",
            "target": "mysql://root@localhost/x?socket=/tmp/eb-sock-1-0/mdb.sock",
            "pacing": {"mode": "closed_loop"}, "sched_batch": true,
            "workload_options": {}, "server": {"kind": "mariadb", "profile": "default", "opts": [],
                "datadir": null},
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        doc(c)
    }

    /// The table size makes other work; how long, how often and where it measured does not;
    /// a changed common option the identity has never heard of counts (as setup).
    #[test]
    fn the_work_and_the_setup_are_told_apart() {
        let small = Sameness::of(&micro(20_000, serde_json::json!({})), &[]);
        let big = Sameness::of(&micro(200_000, serde_json::json!({})), &[]);
        assert_ne!(small.work_key(), big.work_key());
        assert_ne!(small.key(), big.key());
        assert_eq!(small.changes_to(&big), ["table_size 20000 → 200000"]);
        let longer = Sameness::of(
            &micro(
                20_000,
                serde_json::json!({"duration_s": 60.0, "runs": 5, "seed": 7, "threads": [16],
                    "results_dir": "elsewhere",
                    "target": "mysql://root@localhost/x?socket=/tmp/eb-sock-2-0/mdb.sock"}),
            ),
            &[],
        );
        assert_eq!(small, longer);
        let newer = Sameness::of(
            &micro(20_000, serde_json::json!({"some_new_option": 3})),
            &[],
        );
        assert_eq!(small.work_key(), newer.work_key());
        assert_ne!(small.key(), newer.key());
        assert_eq!(small.changes_to(&newer), ["some_new_option (none) → 3"]);
        let opt = Sameness::of(
            &micro(
                20_000,
                serde_json::json!({"server": {"kind": "mariadb", "profile": "default",
                    "opts": [["innodb_buffer_pool_size", "256M"]], "datadir": "/data/x"}}),
            ),
            &[],
        );
        assert_eq!(
            small.changes_to(&opt),
            ["server_opts (none) → innodb_buffer_pool_size=256M"]
        );
        let rate = Sameness::of(
            &micro(
                20_000,
                serde_json::json!({"pacing": {"mode": "open_loop", "rate_ops_per_s": 500.0}}),
            ),
            &[],
        );
        assert_ne!(small.work_key(), rate.work_key());
    }

    /// A workload's options count, but for a shard's own block and the seed; an option named
    /// like a common one with another value is kept apart.
    #[test]
    fn workload_options_count_but_the_shard_and_seed() {
        let with = |o: Value| {
            Sameness::of(
                &micro(10_000, serde_json::json!({ "workload_options": o })),
                &[],
            )
        };
        let a = with(
            serde_json::json!({"range_size": 100, "seed": 1, "table_size": 10000,
            "shard": {"index": 0, "count": 2}}),
        );
        let b = with(
            serde_json::json!({"range_size": 100, "seed": 2, "table_size": 10000,
            "shard": {"index": 1, "count": 2}}),
        );
        assert_eq!(a, b);
        assert_eq!(a.work.get("range_size").map(String::as_str), Some("100"));
        let c = with(serde_json::json!({"range_size": 1000, "table_size": 10000}));
        assert_eq!(a.changes_to(&c), ["range_size 100 → 1000"]);
        let d = with(serde_json::json!({"range_size": 100, "table_size": 5}));
        assert_eq!(
            d.work.get("options.table_size").map(String::as_str),
            Some("5")
        );
    }

    /// Setup: server version, profile, --server-opt, settings (without what names one start)
    /// and the client's path; the words survive the catalog's JSON column.
    #[test]
    fn the_setup_and_its_round_trip() {
        let mut a = micro(10_000, serde_json::json!({}));
        a.target
            .settings
            .insert("innodb_buffer_pool_size".into(), "1G".into());
        a.target.settings.insert("port".into(), "3306".into());
        a.target
            .settings
            .insert("slave_load_tmpdir".into(), "/tmp/eb-srv-1-0/tmp".into());
        let mut b = a.clone();
        b.target.settings.insert("port".into(), "4406".into());
        b.target
            .settings
            .insert("slave_load_tmpdir".into(), "/tmp/eb-srv-2-0/tmp".into());
        b.target
            .settings
            .insert("report_port".into(), "4406".into());
        let (sa, sb) = (Sameness::of(&a, &[]), Sameness::of(&b, &[]));
        assert_eq!(sa, sb, "ports and a private server's folders are not setup");
        b.target
            .settings
            .insert("innodb_buffer_pool_size".into(), "4G".into());
        b.client.as_mut().unwrap().io = "epoll".into();
        let sb = Sameness::of(&b, &[]);
        assert_eq!(sa.work_key(), sb.work_key());
        let changes = sa.changes_to(&sb);
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert!(changes[0].starts_with("client wire io_uring → wire epoll"));
        assert!(changes[1].starts_with("settings "));
        assert_eq!(Sameness::from_json(&sa.to_json()), sa);
        assert_eq!(
            short(&"x".repeat(100)),
            format!("{}… (100 chars)", "x".repeat(24))
        );
    }
}
