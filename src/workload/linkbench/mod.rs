//! `linkbench`: LinkBench (Facebook's social-graph benchmark, 2013) — its MySQL schema per
//! DBMS, the graph load on the shared loader, and the request phase: the ten request types in
//! LinkBench's default mix with its access distributions, as one operation ("requests") whose
//! steps carry the request type (per-type counts and latencies come from the runner).
//!
//! Facts taken from the reference sources (config/FBWorkload.properties, LinkStoreMysql,
//! LinkBenchRequest, ID2Chooser, the distributions); what differs is in docs/linkbench.md
//! and in `Spec::notes`.

pub mod check;
pub mod data;
pub mod dist;
pub mod driver;
mod entry;
pub mod input;
pub mod ops;
pub mod props;
mod report;

pub use entry::{LinkbenchArgs, ENTRY};
pub use report::Report;

use crate::contract::shard::{Placement, ShardKeys};
use crate::db::{Conn, Dbms, TargetSpec};
use crate::error::{Context, Error, Result};
use crate::model::fleet_load::FleetLoad;
use crate::model::LoadOptions;
use crate::model::LoadStats;
use crate::workload::place::{open_schema, Opened, Tables};

pub use driver::LinkbenchDriver;
pub use props::{Props, KINDS};

pub const NAME: &str = "linkbench";

/// LinkBench's default requesters (the MariaDB-vs-MySQL report ran 64).
pub const DEFAULT_REQUESTERS: usize = 64;

const SCHEMA_MYSQL: &str = include_str!("schema/mysql.sql");
const SCHEMA_POSTGRES: &str = include_str!("schema/postgres.sql");
const SCHEMA_SQLITE: &str = include_str!("schema/sqlite.sql");

/// The resolved options of a linkbench run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// LinkBench's maxid1 (exclusive): nodes 1..maxid1.
    pub maxid1: u64,
    pub seed: u64,
    pub props: Props,
    /// The file the props came from, if any.
    pub config_file: Option<String>,
    /// Command-line settings the workload file held (maxid1, requesters, maxtime, ...).
    pub file_settings: Vec<(String, String)>,
    /// Precomputed generators shared by every requester (computing Zipf's normalizer for
    /// millions of ids takes milliseconds: once, not per connection).
    pub dists: driver::Dists,
    /// `run --shard I/N`: this shard's requests draw their id1 and node ids in its block of
    /// the nodes only (`dists.ids`).
    pub shard: Option<crate::model::Shard>,
}

impl Spec {
    pub fn new(maxid1: u64, seed: u64, props: Props, config_file: Option<String>) -> Result<Spec> {
        if !(3..=(1u64 << 40)).contains(&maxid1) {
            return Err(Error::usage(format!(
                "--maxid1: {maxid1} is out of range (3 to 2^40; nodes are 1..maxid1-1)"
            )));
        }
        let dists = driver::Dists::new(&props, maxid1 - 1, seed);
        Ok(Spec {
            maxid1,
            seed,
            props,
            config_file,
            file_settings: Vec::new(),
            dists,
            shard: None,
        })
    }

    /// Make this spec shard `s`'s: its requests keep to its block of the node ids.
    pub fn set_shard(&mut self, s: crate::model::Shard) -> Result<()> {
        self.dists.ids = Some(s.block(self.nodes(), "--maxid1 (nodes)")?);
        self.shard = Some(s);
        Ok(())
    }

    /// A command-line setting from the workload file.
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.file_settings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn nodes(&self) -> u64 {
        self.maxid1 - 1
    }

    pub fn options(&self) -> serde_json::Value {
        serde_json::json!({
            "maxid1": self.maxid1,
            "config_file": self.config_file,
            "mix_percent": KINDS.iter().zip(self.props.mix).map(|(k, w)| (k.to_string(), serde_json::json!(w))).collect::<serde_json::Map<_, _>>(),
            "props": self.props,
            "expected_links": self.dists.graph.links,
            "shard": self.shard.map(|s| serde_json::json!({
                "index": s.index,
                "count": s.count,
                "ids": self.dists.ids,
            })),
        })
    }

    pub fn notes(&self) -> Vec<String> {
        let mean = self.dists.graph.links as f64 / self.nodes() as f64;
        vec![
            format!("linkbench: out-degrees follow a 42-point log-linear approximation of LinkBench's measured nlinks distribution (mean 4.10 links per node; the approximation's is 4.11 at 1,000,000 nodes, less for small graphs, which miss the far tail); this graph has {} links for {} nodes (mean {mean:.2}).", self.dists.graph.links, self.nodes()),
            "linkbench: payload bytes are 7-bit text: LinkBench's node byte range 50..220 is drawn as 50..126, so node payloads are somewhat more compressible than LinkBench's; link payloads (32..100) are as in LinkBench.".into(),
            "linkbench: link writes read the link's visibility with SELECT ... FOR UPDATE, then INSERT or UPDATE it and update counttable in the same transaction (LinkBench on MySQL uses INSERT ... ON DUPLICATE KEY UPDATE and the affected-row count instead: one statement fewer).".into(),
            "linkbench: a request failed by deadlock, lock-wait timeout, serialization failure, busy or (PostgreSQL/SQLite, two inserts of one new link) duplicate key is counted as an error of its class and retried once per error with the same input (LinkBench retries deadlocks and lock-wait timeouts inside the operation, uncounted): retries by class equal those error counts.".into(),
            "linkbench: linktable is not partitioned (LinkBench's README partitions it by key(id1) into 16 parts on MySQL).".into(),
            "linkbench: getlinklist_history is a percentage as LinkBench reads it (0.3 = 0.3 % of getlinklist requests page back in a list seen truncated at range_limit).".into(),
        ]
    }
}

fn schema(dbms: Dbms) -> &'static str {
    match dbms {
        Dbms::Mysql => SCHEMA_MYSQL,
        Dbms::Postgres => SCHEMA_POSTGRES,
        Dbms::Sqlite => SCHEMA_SQLITE,
    }
}

fn meta_info(spec: &Spec, engine: Option<&str>) -> String {
    serde_json::json!({
        "maxid1": spec.maxid1,
        "seed": spec.seed,
        "engine": engine,
        "link_type_count": spec.props.link_type_count,
        "link_datasize": spec.props.link_datasize,
        "node_datasize": spec.props.node_datasize,
        "link_add": spec.props.link_add,
        "node_add": spec.props.node_add,
        "data_version": 1,
    })
    .to_string()
}

/// Create and load the three tables unless identical ones are there; per-table load stats
/// (rows/s of nodetable is nodes/s, of linktable links/s).
pub async fn prepare(
    conn: &mut Conn,
    target: &TargetSpec,
    spec: &Spec,
    engine: Option<&str>,
    opts: &LoadOptions,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Vec<LoadStats>> {
    use crate::model::fleet_load;
    use futures_util::FutureExt;
    let tables = Tables {
        workload: NAME,
        info: meta_info(spec, engine),
        check: "linktable",
        schema: schema(conn.dbms()),
        keys: shard_keys(),
        cleanup: |c| cleanup(c).boxed_local(),
    };
    let Some(mut opened) = open_schema(conn, target, tables, engine, opts, fleet).await? else {
        return Ok(Vec::new());
    };
    let loader = opened.place.loader();
    // A fleet's shards stamp their rows with shard 0's time: the tables are as one load's.
    let now = fleet_load::load_time_ms(fleet).unwrap_or_else(input::now_ms);
    let g = spec.dists.graph.clone();
    let gens = data::gens(&spec.props, spec.seed);
    let nodes = data::Nodes {
        seed: spec.seed,
        gen: gens[2].clone(),
        median: spec.props.node_datasize,
        now_s: now / 1000,
    };
    let links = data::Links {
        seed: spec.seed,
        graph: g.clone(),
        gen: gens[0].clone(),
        median: spec.props.link_datasize,
        now_ms: now,
    };
    let counts = data::Counts {
        graph: g.clone(),
        now_ms: now,
    };
    // The three tables load at the same time (LinkBench too loads nodes beside links): a
    // bulk load into an empty InnoDB table locks it, so loading one table after the other
    // leaves connections waiting. The progress bar follows linktable, the big one.
    let quiet = LoadOptions {
        progress: false,
        ..opts.clone()
    };
    if target.dbms == Dbms::Sqlite {
        // One writer at a time: one table after the other.
        let stats = vec![
            loader.load(&nodes, spec.nodes(), opts)?,
            loader.load(&links, g.links, opts)?,
            loader.load(&counts, spec.nodes() * g.link_types, opts)?,
        ];
        return finish(&mut opened, stats, fleet).await;
    }
    let (n, l, c) = std::thread::scope(|s| {
        let n = s.spawn(|| loader.load(&nodes, spec.nodes(), &quiet));
        let c = s.spawn(|| loader.load(&counts, spec.nodes() * g.link_types, &quiet));
        let l = loader.load(&links, g.links, opts);
        (n.join(), l, c.join())
    });
    let joined = |r: std::thread::Result<Result<LoadStats>>| {
        r.unwrap_or_else(|_| Err(Error::run("a loader thread panicked")))
    };
    let stats = vec![joined(n)?, l?, joined(c)?];
    finish(&mut opened, stats, fleet).await
}

/// On a Spider target every table is split by its node id: nodetable by id, linktable by id1
/// (a link lives with its source node, as LinkBench's own 16 partitions by id1), counttable
/// by id (the id1 it counts).
pub fn shard_keys() -> ShardKeys {
    [
        ("linktable", Placement::Key("id1")),
        ("counttable", Placement::Key("id")),
        ("nodetable", Placement::Key("id")),
    ]
    .into_iter()
    .map(|(t, p)| (t.to_string(), p))
    .collect()
}

/// After the rows: the id sequence, the secondary index, statistics, the metadata.
async fn finish(
    opened: &mut Opened<'_>,
    stats: Vec<LoadStats>,
    fleet: Option<&dyn FleetLoad>,
) -> Result<Vec<LoadStats>> {
    // Ids were loaded explicitly: PostgreSQL's addnode identity must continue after them.
    let sequence = [(
        "SELECT setval(pg_get_serial_sequence('nodetable', 'id'), (SELECT max(id) FROM nodetable))",
        "moving nodetable's id sequence past the loaded ids",
    )];
    let first: &[_] = match opened.place.head.dbms() {
        Dbms::Postgres => &sequence,
        _ => &[],
    };
    let what = "creating LinkBench's id1_type index";
    opened.finish(first, what, &data::TABLES, fleet).await?;
    Ok(stats)
}

/// Drop the tables and their metadata.
pub async fn cleanup(conn: &mut Conn) -> Result<()> {
    for t in data::TABLES {
        conn.execute(&format!("DROP TABLE IF EXISTS {t}"))
            .await
            .ctx(format!("dropping table {t}"))?;
    }
    crate::contract::delete_meta(conn, NAME).await
}
