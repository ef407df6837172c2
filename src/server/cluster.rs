//! Clusters the tool starts itself: `--server mariadb-galera:N` (N MariaDB nodes in one Galera
//! cluster), `--server postgres-replicas:N` (a PostgreSQL primary and N streaming
//! replicas) and `--server mariadb-spider:N` (a Spider head and N backends), every node a private `Server` on 127.0.0.1 in a folder of its own under the
//! cluster's folder (`n1`, `n2`, ...). A `Cluster` owns its nodes and the multi-host target URL
//! that names them; stopping it (or dropping it: on errors and Ctrl-C too) stops every node,
//! the last one first. A node that fails to start stops the others, and the error names the
//! node and its log's last lines.
//!
//! One server is a cluster of one node, so that the harness has one thing to start and stop.
//! Another topology is one more `Topology` variant, a `Role` for its nodes and a start
//! function here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{free_port, spec_of, tempdir, Kind, Role, Server, ServerSpec, Topology};
use crate::db::Conn;
use crate::error::{Error, Failure, Result};
use crate::interrupt;

/// How long a node may take to be in sync with the cluster (a Galera joiner: the state
/// transfer; a replica: its first WAL streamed) after it answers.
const SYNC_WAIT: Duration = Duration::from_secs(90);

/// What `cluster.json` holds: the nodes' folders, for `server stop|status` in another
/// invocation (each node folder has its own `server.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterState {
    pub kind: Kind,
    /// The `--server` word: `mariadb-galera:3`, `postgres-replicas:1`.
    pub server: String,
    pub url: String,
    pub nodes: Vec<PathBuf>,
}

/// Running servers started together: one, or the nodes of a cluster.
pub struct Cluster {
    pub kind: Kind,
    pub topology: Topology,
    pub profile: String,
    /// In URL order: Galera nodes 1..N; the PostgreSQL primary, then its replicas.
    pub nodes: Vec<Server>,
    /// The target URL that names every node (one server: its own URL, over its socket).
    pub url: String,
    /// The folder holding the nodes' folders (one server: its own folder).
    pub root: PathBuf,
    keep: bool,
    stopped: bool,
}

/// The node of `spec`'s cluster number `i` (1-based), in `root/n<i>`.
fn node_spec(spec: &ServerSpec, root: &Path, i: usize, role: Role) -> ServerSpec {
    let mut s = spec.clone();
    s.topology = Topology::Single;
    s.role = role;
    s.datadir = Some(root.join(format!("n{i}")));
    s.bind = None;
    s
}

/// `k` free TCP ports on 127.0.0.1, all different (group communication, IST, state transfer).
fn free_ports(k: usize) -> Result<Vec<u16>> {
    let mut v: Vec<u16> = Vec::with_capacity(k);
    let mut attempt = 0;
    while v.len() < k {
        let p = free_port(attempt);
        attempt += 1;
        if p == 0 || attempt > 100 * k {
            return Err(Error::usage("no free TCP port on 127.0.0.1 in 20000-32767"));
        }
        if !v.contains(&p) {
            v.push(p);
        }
    }
    Ok(v)
}

/// Where Debian's mariadb-plugin-spider puts the Spider engine.
const SPIDER_PLUGIN: &str = "/usr/lib/mysql/plugin/ha_spider.so";

/// The settings a node's role adds to its option file (after the profile and --server-opt:
/// these are the tool's, a cluster does not work without them).
pub(super) fn node_settings(role: &Role) -> String {
    match role {
        Role::Alone => String::new(),
        Role::Galera {
            cluster_name,
            peers,
            gcomm_port,
            ist_port,
            sst_port,
            ..
        } => format!(
            "\n[mariadbd]\n# set by enginebench for this node of the Galera cluster (addresses chosen by the tool)\n\
             wsrep_cluster_name = {cluster_name}\n\
             wsrep_cluster_address = gcomm://{peers}\n\
             wsrep_node_address = 127.0.0.1:{gcomm_port}\n\
             wsrep_provider_options = \"gmcast.listen_addr=tcp://127.0.0.1:{gcomm_port};ist.recv_addr=127.0.0.1:{ist_port};gcache.size=64M\"\n\
             wsrep_sst_receive_address = 127.0.0.1:{sst_port}\n"
        ),
        // A standby needs max_wal_senders (and max_connections) at least the primary's:
        // both get the same.
        Role::PgPrimary { replicas } => format!(
            "\n# set by enginebench: the primary of {replicas} streaming replica(s)\n\
             wal_level = 'replica'\nmax_wal_senders = '10'\nhot_standby = 'on'\n"
        ),
        // hot_standby_feedback: the primary's vacuum keeps the rows the replica's queries
        // read, so reads on a replica are not cancelled mid-run.
        Role::PgReplica { primary_port } => format!(
            "\n# set by enginebench: a streaming replica of the primary on 127.0.0.1:{primary_port} (primary_conninfo from pg_basebackup -R)\n\
             max_wal_senders = '10'\nhot_standby = 'on'\nhot_standby_feedback = 'on'\n"
        ),
        Role::SpiderHead { backends } => format!(
            "\n[mariadbd]\n# set by enginebench: the Spider head of {backends} backend(s)\n\
             plugin_load_add = ha_spider\n"
        ),
    }
}

/// Run one query on one node (over its own socket) and return the first row's columns.
fn query_row(url: &str, sql: &str) -> Result<Option<Vec<Option<String>>>> {
    let spec = spec_of(url)?;
    super::rt().block_on(async {
        let mut c = tokio::time::timeout(Duration::from_secs(5), Conn::connect(&spec))
            .await
            .map_err(|_| Error::usage("connect timed out"))?
            .map_err(|e| Error::usage(e.message))?;
        Ok(c.query(sql)
            .await
            .map_err(|e| Error::usage(e.message))?
            .into_iter()
            .next())
    })
}

/// Poll `ready` until it says true; fail naming `what` and the node's log after SYNC_WAIT.
fn wait_until(node: &mut Server, what: &str, mut ready: impl FnMut(&Server) -> bool) -> Result<()> {
    let deadline = Instant::now() + SYNC_WAIT;
    loop {
        if let Some(sig) = interrupt::signal() {
            return Err(Error {
                failure: Failure::Interrupted(sig),
                message: format!("interrupted while waiting for {what}"),
            });
        }
        if ready(node) {
            return Ok(());
        }
        if !node.alive() {
            node.keep_folder();
            return Err(Error::usage(format!(
                "{what}: the node exited; log {}: {}",
                node.root.join("server.log").display(),
                super::log_tail(&node.root.join("server.log"))
            )));
        }
        if Instant::now() > deadline {
            return Err(Error::usage(format!(
                "{what}: not after {} s; log {}: {}",
                SYNC_WAIT.as_secs(),
                node.root.join("server.log").display(),
                super::log_tail(&node.root.join("server.log"))
            )));
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A MariaDB status variable of the node behind `url`.
fn mysql_status(url: &str, name: &str) -> Option<String> {
    query_row(url, &format!("SHOW STATUS LIKE '{name}'"))
        .ok()
        .flatten()?
        .get(1)?
        .clone()
}

/// The admin URL of a node (its system database over its socket).
fn admin_url(sv: &Server) -> String {
    match sv.kind {
        Kind::Mariadb => sv
            .url
            .replacen(&format!("/{}?", super::DATABASE), "/mysql?", 1),
        Kind::Postgres => sv
            .url
            .replacen(&format!("/{}?", super::DATABASE), "/postgres?", 1),
    }
}

impl Cluster {
    /// Start what `spec` names: one server, or every node of a cluster (each waited for until
    /// it is in sync), in the order their URL names them.
    pub fn start(spec: &ServerSpec) -> Result<Cluster> {
        if spec.topology.is_single() {
            let sv = Server::start(spec)?;
            return Ok(Cluster {
                kind: sv.kind,
                topology: Topology::Single,
                profile: sv.profile.clone(),
                url: sv.url.clone(),
                root: sv.root.clone(),
                keep: spec.keep_datadir,
                stopped: false,
                nodes: vec![sv],
            });
        }
        if spec.bind.is_some() {
            return Err(Error::usage(
                "--bind: a cluster's nodes listen on 127.0.0.1 only (start the nodes one by one with `server start` to open them)",
            ));
        }
        let (root, keep) = match &spec.datadir {
            Some(d) => {
                std::fs::create_dir_all(d).map_err(|e| {
                    Error::usage(format!("--datadir: cannot create {}: {e}", d.display()))
                })?;
                let d = d
                    .canonicalize()
                    .map_err(|e| Error::usage(format!("--datadir: {e}")))?;
                (d, spec.keep_datadir)
            }
            None => (tempdir("eb-cluster-")?, spec.keep_datadir),
        };
        let mut c = Cluster {
            kind: spec.kind,
            topology: spec.topology,
            profile: spec.profile.clone(),
            nodes: Vec::new(),
            url: String::new(),
            root,
            keep,
            stopped: false,
        };
        // The cluster's folder may be shared by several kinds of user (Galera nodes run as
        // user mysql, PostgreSQL as postgres when we are root): they must reach their folders.
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&c.root, std::fs::Permissions::from_mode(0o755));
        }
        // On any error below, Drop stops the nodes started so far.
        match spec.topology {
            Topology::Galera { nodes } => c.start_galera(spec, nodes)?,
            Topology::Replicas { replicas } => c.start_replicas(spec, replicas)?,
            Topology::Spider { backends } => c.start_spider(spec, backends)?,
            Topology::Single => unreachable!("handled above"),
        }
        c.url = c.cluster_url();
        c.write_state()?;
        Ok(c)
    }

    /// The target URL naming every node: Galera's and the replicas' as a multi-host URL, a
    /// Spider head's (over its socket) with `?spider=` naming the backends' sockets.
    fn cluster_url(&self) -> String {
        if let Topology::Spider { .. } = self.topology {
            let socks: Vec<&str> = self.nodes[1..]
                .iter()
                .map(|n| n.url.split_once("socket=").map_or("", |(_, s)| s))
                .collect();
            return format!("{}&spider={}", self.nodes[0].url, socks.join(","));
        }
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        match self.kind {
            Kind::Mariadb => format!("mysql://root@{}/{}", hosts.join(","), super::DATABASE),
            // Only the primary takes writes: read-only operations go to the replicas, the
            // rest to the primary.
            Kind::Postgres => format!(
                "postgres://postgres@{}/{}?read=replicas",
                hosts.join(","),
                super::DATABASE
            ),
        }
    }

    /// Start node `i` (1-based) of `total`; a failure names the node.
    fn start_node(&mut self, spec: &ServerSpec, i: usize, total: usize, role: Role) -> Result<()> {
        let what = self.node_name(i, total);
        eprintln!("starting {what}");
        let sv = Server::start(&node_spec(spec, &self.root, i, role)).map_err(|e| Error {
            failure: e.failure,
            message: format!("{what} did not start: {}", e.message),
        })?;
        self.nodes.push(sv);
        Ok(())
    }

    fn node_name(&self, i: usize, total: usize) -> String {
        match self.topology {
            Topology::Replicas { .. } if i == 1 => "the PostgreSQL primary".to_string(),
            Topology::Replicas { .. } => format!("PostgreSQL replica {} of {}", i - 1, total - 1),
            Topology::Spider { .. } if i == 1 => "the Spider head".to_string(),
            Topology::Spider { .. } => format!("Spider backend {} of {}", i - 1, total - 1),
            _ => format!("Galera node {i} of {total}"),
        }
    }

    /// Bootstrap node 1, then join the others one at a time (a state transfer each: two at
    /// once would both ask node 1 to donate), each waited for until Synced.
    fn start_galera(&mut self, spec: &ServerSpec, n: usize) -> Result<()> {
        let ports = free_ports(3 * n)?;
        let peers: Vec<String> = (0..n)
            .map(|i| format!("127.0.0.1:{}", ports[3 * i]))
            .collect();
        let cluster_name = format!("enginebench-{}", std::process::id());
        for i in 1..=n {
            let role = Role::Galera {
                cluster_name: cluster_name.clone(),
                peers: peers.join(","),
                gcomm_port: ports[3 * (i - 1)],
                ist_port: ports[3 * (i - 1) + 1],
                sst_port: ports[3 * (i - 1) + 2],
                bootstrap: i == 1,
            };
            self.start_node(spec, i, n, role)?;
            let what = format!("{} to be Synced", self.node_name(i, n));
            let node = self.nodes.last_mut().expect("just started");
            let url = admin_url(node);
            wait_until(node, &what, |_| {
                mysql_status(&url, "wsrep_local_state_comment").as_deref() == Some("Synced")
                    && mysql_status(&url, "wsrep_ready").as_deref() == Some("ON")
            })?;
            if i == 1 {
                node.sql(
                    &url,
                    &[&format!(
                        "CREATE DATABASE IF NOT EXISTS {}",
                        super::DATABASE
                    )],
                )?;
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let size = mysql_status(&admin_url(node), "wsrep_cluster_size");
            if size.as_deref() != Some(&n.to_string()) {
                return Err(Error::usage(format!(
                    "Galera node {} sees a cluster of {} node(s), not {n}; log {}",
                    i + 1,
                    size.unwrap_or_else(|| "?".into()),
                    node.root.join("server.log").display()
                )));
            }
        }
        eprintln!("Galera: {n} nodes synced");
        Ok(())
    }

    /// Start the primary, then each replica from a base backup of it, each waited for until
    /// the primary sees it streaming.
    fn start_replicas(&mut self, spec: &ServerSpec, n: usize) -> Result<()> {
        self.start_node(spec, 1, n + 1, Role::PgPrimary { replicas: n })?;
        let primary_port = self.nodes[0].port;
        let primary = admin_url(&self.nodes[0]);
        for i in 2..=n + 1 {
            self.start_node(spec, i, n + 1, Role::PgReplica { primary_port })?;
            let what = format!("{} to stream from the primary", self.node_name(i, n + 1));
            let want = i - 1;
            let node = self.nodes.last_mut().expect("just started");
            wait_until(node, &what, |_| {
                query_row(
                    &primary,
                    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
                )
                .ok()
                .flatten()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|v| v.parse::<usize>().ok())
                .is_some_and(|c| c >= want)
            })?;
        }
        eprintln!("PostgreSQL: a primary and {n} streaming replica(s)");
        Ok(())
    }

    /// Start the head (the Spider engine loaded), then each backend (plain servers: the head
    /// reaches them over their sockets, the tables on them are created by `prepare`).
    fn start_spider(&mut self, spec: &ServerSpec, n: usize) -> Result<()> {
        if !Path::new(SPIDER_PLUGIN).exists() {
            return Err(Error::usage(format!(
                "--server mariadb-spider:{n}: the Spider engine is not installed ({SPIDER_PLUGIN} missing): install the Debian package mariadb-plugin-spider"
            )));
        }
        self.start_node(spec, 1, n + 1, Role::SpiderHead { backends: n })?;
        for i in 2..=n + 1 {
            self.start_node(spec, i, n + 1, Role::Alone)?;
        }
        eprintln!("Spider: a head and {n} backend(s)");
        Ok(())
    }

    fn write_state(&self) -> Result<()> {
        let st = ClusterState {
            kind: self.kind,
            server: self.topology.name(self.kind),
            url: self.url.clone(),
            nodes: self.nodes.iter().map(|n| n.root.clone()).collect(),
        };
        let p = self.root.join("cluster.json");
        std::fs::write(
            &p,
            serde_json::to_string_pretty(&st).expect("state serializes"),
        )
        .map_err(|e| Error::usage(format!("{}: {e}", p.display())))
    }

    /// The first node: the server whose pid, settings and options the result records (the
    /// Galera node 1, the PostgreSQL primary, the Spider head).
    pub fn first(&self) -> Option<&Server> {
        self.nodes.first()
    }

    /// The `--server` word and profile, e.g. `mariadb-galera:3:galera`.
    pub fn label(&self) -> String {
        format!("{}:{}", self.topology.name(self.kind), self.profile)
    }

    /// The nodes that ended on their own (1-based numbers).
    pub fn dead_nodes(&self) -> Vec<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.pid != 0 && !n.alive())
            .map(|(i, _)| i + 1)
            .collect()
    }

    /// Keep every folder (a node died: its log says why).
    pub fn keep_folder(&mut self) {
        self.keep = true;
        for n in &mut self.nodes {
            n.keep_folder();
        }
    }

    /// Leave every node running after this process exits (`server start`).
    pub fn detach(mut self) {
        self.stopped = true;
        for n in std::mem::take(&mut self.nodes) {
            n.detach();
        }
    }

    /// Stop every node, the last one first (a Galera cluster's first node then leaves last,
    /// and may bootstrap the cluster again from its folder); then remove the folders unless
    /// kept. The first error is returned after every node was stopped.
    pub fn stop(&mut self) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let mut first_err = None;
        while let Some(mut n) = self.nodes.pop() {
            if let Err(e) = n.stop() {
                first_err.get_or_insert(e);
            }
        }
        if !self.topology.is_single() {
            if self.keep {
                let _ = std::fs::remove_file(self.root.join("cluster.json"));
            } else {
                let _ = std::fs::remove_dir_all(&self.root);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("enginebench: {}", e.message);
        }
    }
}

/// The cluster started by `server start` in `root`, if it is one.
pub fn read_state(root: &Path) -> Option<ClusterState> {
    let s = std::fs::read_to_string(root.join("cluster.json")).ok()?;
    serde_json::from_str(&s).ok()
}

/// `server status` of a cluster: each node's state (None: not running).
pub fn status(st: &ClusterState) -> Vec<(PathBuf, Option<super::State>)> {
    st.nodes
        .iter()
        .map(|n| (n.clone(), super::status(n).ok().flatten()))
        .collect()
}

/// `server stop` of a cluster: every node, the last one first.
pub fn stop_in(st: &ClusterState) -> Result<Vec<super::State>> {
    let mut stopped = Vec::new();
    let mut first_err = None;
    for n in st.nodes.iter().rev() {
        if super::read_state(n).is_ok() {
            match super::stop_in(n) {
                Ok(Some(s)) => stopped.push(s),
                Ok(None) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
    }
    // cluster.json stays: `server status` then says that no node runs (exit 1).
    first_err.map_or(Ok(stopped), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_cluster_servers() {
        let s = ServerSpec::parse("mariadb-galera:3", &[], None, false).unwrap();
        assert_eq!(s.topology, Topology::Galera { nodes: 3 });
        assert_eq!((s.kind, s.profile.as_str()), (Kind::Mariadb, "galera"));
        let s = ServerSpec::parse("postgres-replicas:2:small", &[], None, false).unwrap();
        assert_eq!(s.topology, Topology::Replicas { replicas: 2 });
        assert_eq!((s.kind, s.profile.as_str()), (Kind::Postgres, "small"));
        assert_eq!(s.topology.servers(), 3);
        let s = ServerSpec::parse("mariadb-spider:2", &[], None, false).unwrap();
        assert_eq!(s.topology, Topology::Spider { backends: 2 });
        assert_eq!((s.kind, s.profile.as_str()), (Kind::Mariadb, "default"));
        assert_eq!(s.topology.servers(), 3);
        assert_eq!(s.topology.name(s.kind), "mariadb-spider:2");
        assert!(node_settings(&Role::SpiderHead { backends: 2 })
            .contains("plugin_load_add = ha_spider"));
        for bad in [
            "mariadb-galera:2",
            "mariadb-galera",
            "mariadb-galera:x",
            "postgres-replicas:0",
            "mariadb-spider:0",
            "mariadb-spider:x",
            "mariadb-spider",
            "postgres-replicas:",
            "mariadb:galera",
        ] {
            let e = ServerSpec::parse(bad, &[], None, false).unwrap_err();
            assert!(matches!(e.failure, Failure::Usage), "{bad}");
            assert!(!e.message.contains('\n'), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn galera_node_settings_name_the_tool_chosen_addresses() {
        let t = node_settings(&Role::Galera {
            cluster_name: "c".into(),
            peers: "127.0.0.1:1,127.0.0.1:4".into(),
            gcomm_port: 4,
            ist_port: 5,
            sst_port: 6,
            bootstrap: false,
        });
        assert!(t.contains("wsrep_cluster_address = gcomm://127.0.0.1:1,127.0.0.1:4"));
        assert!(t.contains("gmcast.listen_addr=tcp://127.0.0.1:4;ist.recv_addr=127.0.0.1:5"));
        assert!(t.contains("wsrep_sst_receive_address = 127.0.0.1:6"));
    }
}
