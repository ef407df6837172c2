//! The graph: node ids 1..maxid1 (exclusive, LinkBench's startid1 = 1), each with an
//! out-degree from the measured distribution (see `dist::OUT_DEGREE_CDF`) split evenly over
//! the link types; link k of type t from id1 goes to id2 = id1 + k (LinkBench's load rule
//! without randomid2max). Everything is computed from (seed, id) alone, so the loader's
//! connections can fill any range and the request phase knows how many links an id1 was
//! loaded with.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::dist::{self, Shuffle};
use super::props::{Motif, Props};
use crate::db::Value;
use crate::load::RowSource;
use crate::rng::Rng;

/// LinkBench's constants (LinkStore.java).
pub const LINK_TYPE_BASE: i64 = 123_456_789;
pub const NODE_TYPE: i64 = 2048;
pub const VISIBILITY_HIDDEN: i64 = 0;
pub const VISIBILITY_DEFAULT: i64 = 1;
/// Log-normal sigma of payload sizes (Config.LINK_DATASIZE_SIGMA, NODE_DATASIZE_SIGMA).
pub const SIZE_SIGMA: f64 = 1.0;
pub const MAX_LINK_DATA: u64 = 255;
pub const MAX_NODE_DATA: u64 = 1 << 20;

pub const TABLES: [&str; 3] = ["nodetable", "linktable", "counttable"];

// Generator streams.
pub const S_DEGREE: u64 = 101;
pub const S_LINK: u64 = 102;
pub const S_NODE: u64 = 103;
pub const S_MOTIF_LINK_ADD: u64 = 104;
pub const S_MOTIF_LINK_UP: u64 = 105;
pub const S_MOTIF_NODE_ADD: u64 = 106;
pub const S_MOTIF_NODE_UP: u64 = 107;

/// LinkBench's MotifDataGenerator: chunks of up to 128 bytes, each either fresh random bytes
/// (probability `uniqueness`) or a copy from a shared buffer of motifs. Bytes above 126 are
/// folded into the printable range (see `byte_range`), so payloads are ASCII text.
#[derive(Debug, Clone)]
pub struct MotifGen {
    lo: u8,
    span: u64,
    uniqueness: f64,
    motifs: Arc<Vec<u8>>,
}

/// The byte range of a generator as enginebench draws it: LinkBench's [start, end], with end
/// capped at 126 ('~') so that every payload is 7-bit text every DBMS and loader path carries
/// unchanged (LinkBench's node range 50..220 becomes 50..126: see docs/linkbench.md).
pub fn byte_range(m: &Motif) -> (u8, u8) {
    let lo = m.start_byte.clamp(32, 125);
    (lo, m.end_byte.clamp(lo + 1, 126))
}

impl MotifGen {
    pub fn new(m: &Motif, seed: u64, stream: u64) -> MotifGen {
        let (lo, hi) = byte_range(m);
        let span = (hi - lo) as u64 + 1;
        let mut r = Rng::keyed(seed, stream, 0);
        let motifs = (0..m.motif_length)
            .map(|_| lo + r.range(0, span - 1) as u8)
            .collect();
        MotifGen {
            lo,
            span,
            uniqueness: m.uniqueness,
            motifs: Arc::new(motifs),
        }
    }

    /// `len` bytes of payload into `out` (cleared first).
    pub fn fill(&self, r: &mut Rng, len: usize, out: &mut String) {
        out.clear();
        let chunk = self.motifs.len().min(128);
        let mut i = 0;
        while i < len {
            let this = chunk.min(len - i);
            if dist::unit(r) < self.uniqueness {
                for _ in 0..this {
                    out.push((self.lo + r.range(0, self.span - 1) as u8) as char);
                }
            } else {
                let k = r.range(0, (self.motifs.len() - this) as u64) as usize;
                for &b in &self.motifs[k..k + this] {
                    out.push(b as char);
                }
            }
            i += this;
        }
    }
}

/// Block size of the cumulative link-count index.
const BLOCK: u64 = 64;

static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The last link row a loader thread produced: (graph id, id1, first row of id1 - 1,
    /// out-degree of id1). Rows come in order within a chunk, so the next is almost always
    /// in the same or the next id1.
    static CURSOR: Cell<(u64, u64, u64, u64)> = const { Cell::new((0, 0, 0, 0)) };
}

/// Out-degrees of the loaded graph.
#[derive(Debug, Clone)]
pub struct Graph {
    /// Nodes: ids 1..=nodes (LinkBench's maxid1 - startid1).
    pub nodes: u64,
    pub link_types: u64,
    shuffle: Shuffle,
    /// Links before id1 = 1 + BLOCK * i.
    index: Arc<Vec<u64>>,
    pub links: u64,
    id: u64,
}

impl Graph {
    pub fn new(nodes: u64, link_types: u64, seed: u64) -> Graph {
        let shuffle = Shuffle::new(nodes, seed, S_DEGREE);
        let mut g = Graph {
            nodes,
            link_types,
            shuffle,
            index: Arc::new(Vec::new()),
            links: 0,
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
        };
        let mut index = Vec::with_capacity((nodes / BLOCK + 2) as usize);
        let mut acc = 0u64;
        for id1 in 1..=nodes {
            if (id1 - 1) % BLOCK == 0 {
                index.push(acc);
            }
            acc += g.degree(id1);
        }
        g.index = Arc::new(index);
        g.links = acc;
        g
    }

    /// The degree rank of id1 (0 = most links): LinkBench's nlinks shuffle.
    #[inline]
    pub fn degree_rank(&self, id1: u64) -> u64 {
        self.shuffle.permute(id1 - 1)
    }

    /// The node whose degree rank is `rank`.
    #[inline]
    pub fn id_of_degree_rank(&self, rank: u64) -> u64 {
        self.shuffle.invert(rank) + 1
    }

    /// Links id1 was loaded with, over all types.
    #[inline]
    pub fn degree(&self, id1: u64) -> u64 {
        if id1 == 0 || id1 > self.nodes {
            return 0;
        }
        dist::degree_of_rank(self.degree_rank(id1), self.nodes)
    }

    /// Links of type number `t` (0-based): the degree split evenly, the first types taking
    /// the remainder.
    #[inline]
    pub fn type_degree(&self, id1: u64, t: u64) -> u64 {
        let d = self.degree(id1);
        d / self.link_types + u64::from(t < d % self.link_types)
    }

    /// The link of row `seq` (1-based): (id1, type number, index k within the type).
    pub fn link_at(&self, seq: u64) -> (u64, u64, u64) {
        let s = seq - 1;
        let (gid, mut id1, mut first, mut deg) = CURSOR.get();
        if gid != self.id || s < first || id1 == 0 {
            // Binary search of the block, then walk.
            let b = self.index.partition_point(|&c| c <= s) - 1;
            id1 = b as u64 * BLOCK + 1;
            first = self.index[b];
            deg = self.degree(id1);
        }
        while s >= first + deg {
            first += deg;
            id1 += 1;
            deg = self.degree(id1);
        }
        CURSOR.set((self.id, id1, first, deg));
        let j = s - first;
        // Types take consecutive runs: type 0 its share first.
        let (base, extra) = (deg / self.link_types, deg % self.link_types);
        let mut t = 0;
        let mut start = 0;
        loop {
            let n = base + u64::from(t < extra);
            if j < start + n {
                return (id1, t, j - start);
            }
            start += n;
            t += 1;
        }
    }
}

/// nodetable: ids 1..=nodes, type 2048, version 1, time = load time (seconds).
pub struct Nodes {
    pub seed: u64,
    pub gen: MotifGen,
    pub median: f64,
    pub now_s: i64,
}

impl RowSource for Nodes {
    fn table(&self) -> &str {
        "nodetable"
    }
    fn columns(&self) -> &[&'static str] {
        &["id", "type", "version", "time", "data"]
    }
    fn row(&self, id: u64, out: &mut Vec<Value>) {
        let mut r = Rng::keyed(self.seed, S_NODE, id);
        let len = dist::lognormal_size(&mut r, self.median, SIZE_SIGMA, MAX_NODE_DATA);
        let mut data = String::with_capacity(len);
        self.gen.fill(&mut r, len, &mut data);
        out.extend([
            Value::Int(id as i64),
            Value::Int(NODE_TYPE),
            Value::Int(1),
            Value::Int(self.now_s),
            Value::Text(data),
        ]);
    }
}

/// linktable: row `seq` is link k of type t of its id1 (rows in id1 order).
pub struct Links {
    pub seed: u64,
    pub graph: Graph,
    pub gen: MotifGen,
    pub median: f64,
    pub now_ms: i64,
}

impl RowSource for Links {
    fn table(&self) -> &str {
        "linktable"
    }
    fn columns(&self) -> &[&'static str] {
        &[
            "id1",
            "id2",
            "link_type",
            "visibility",
            "data",
            "time",
            "version",
        ]
    }
    fn row(&self, seq: u64, out: &mut Vec<Value>) {
        let (id1, t, k) = self.graph.link_at(seq);
        let mut r = Rng::keyed(self.seed, S_LINK, seq);
        let len = dist::lognormal_size(&mut r, self.median, SIZE_SIGMA, MAX_LINK_DATA);
        let mut data = String::with_capacity(len);
        self.gen.fill(&mut r, len, &mut data);
        // LinkBench: a time from about 50 days back (now - 2^31 ms + a signed 32-bit int).
        let time = self.now_ms - (1i64 << 31) + (r.next_u64() as u32 as i32) as i64;
        out.extend([
            Value::Int(id1 as i64),
            Value::Int((id1 + k) as i64),
            Value::Int(LINK_TYPE_BASE + t as i64),
            Value::Int(VISIBILITY_DEFAULT),
            Value::Text(data),
            Value::Int(time),
            Value::Int(0),
        ]);
    }
}

/// counttable: one row per (id1, type) with links; row r is id1 = (r-1) / types + 1.
pub struct Counts {
    pub graph: Graph,
    pub now_ms: i64,
}

impl RowSource for Counts {
    fn table(&self) -> &str {
        "counttable"
    }
    fn columns(&self) -> &[&'static str] {
        &["id", "link_type", "count", "time", "version"]
    }
    fn row(&self, r: u64, out: &mut Vec<Value>) {
        let types = self.graph.link_types;
        let (id1, t) = ((r - 1) / types + 1, (r - 1) % types);
        let n = self.graph.type_degree(id1, t);
        if n == 0 {
            return;
        }
        out.extend([
            Value::Int(id1 as i64),
            Value::Int(LINK_TYPE_BASE + t as i64),
            Value::Int(n as i64),
            Value::Int(self.now_ms),
            Value::Int(0),
        ]);
    }
}

/// Generators of one spec, shared by loader and requesters.
pub fn gens(p: &Props, seed: u64) -> [MotifGen; 4] {
    [
        MotifGen::new(&p.link_add, seed, S_MOTIF_LINK_ADD),
        MotifGen::new(&p.link_up, seed, S_MOTIF_LINK_UP),
        MotifGen::new(&p.node_add, seed, S_MOTIF_NODE_ADD),
        MotifGen::new(&p.node_up, seed, S_MOTIF_NODE_UP),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_rows_enumerate_every_link_once() {
        let g = Graph::new(5_000, 2, 9);
        let mut expect = Vec::new();
        for id1 in 1..=g.nodes {
            for t in 0..2 {
                for k in 0..g.type_degree(id1, t) {
                    expect.push((id1, t, k));
                }
            }
        }
        // Rows in order, then a jump back (another chunk) and forward again.
        assert_eq!(expect.len() as u64, g.links);
        for (i, e) in expect.iter().enumerate() {
            assert_eq!(g.link_at(i as u64 + 1), *e, "row {}", i + 1);
        }
        assert_eq!(g.link_at(1), expect[0]);
        let mid = expect.len() / 2;
        assert_eq!(g.link_at(mid as u64 + 1), expect[mid]);
    }

    #[test]
    fn motif_payloads_have_the_configured_bytes_and_lengths() {
        let p = Props::default();
        let g = MotifGen::new(&p.node_add, 1, 1);
        let mut r = Rng::new(2);
        let mut s = String::new();
        g.fill(&mut r, 1000, &mut s);
        assert_eq!(s.len(), 1000);
        assert!(s.bytes().all(|b| (50..=126).contains(&b)));
        let lg = MotifGen::new(&p.link_add, 1, 2);
        lg.fill(&mut r, 17, &mut s);
        assert_eq!(s.len(), 17);
        assert!(s.bytes().all(|b| (32..=100).contains(&b)));
    }
}
