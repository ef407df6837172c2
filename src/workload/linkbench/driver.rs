//! One LinkBench requester per connection: draws a request type from the mix (a shuffled
//! deck with LinkBench's shares), its ids from the access distributions, and runs it (`ops.rs`).

use std::collections::HashSet;

use super::data::{self, Graph, MotifGen, LINK_TYPE_BASE};
use super::dist::{self, Geometric, Shuffle, Zipf};
use super::input::{now_ms, Input};
use super::ops::{self, Stmts};
use super::props::*;
use super::Spec;
use crate::contract::{Driver, Step};
use crate::db::{Conn, DbResult, ErrorClass};
use crate::rng::Rng;

// Streams of the request phase.
const S_REQUEST: u64 = 201;
const S_READ_UNCORR: u64 = 202;
const S_WRITE_UNCORR: u64 = 203;
const S_NODE_READ: u64 = 204;
const S_NODE_UPDATE: u64 = 205;

/// ID2Chooser's target chances that a chosen (id1, type, id2) already exists.
const P_GET_EXIST: f64 = 0.5;
const P_UPDATE_EXIST: f64 = 0.9;
const P_DELETE_EXIST: f64 = 0.9;
const P_ADD_EXIST: f64 = 0.05;

/// LinkBench keeps at most this many truncated lists to page back into.
const HISTORY_LIMIT: usize = 2048;

/// An access distribution: Zipf over ranks, mapped to ids by a shuffle of the id space.
#[derive(Debug, Clone)]
pub struct Access {
    pub zipf: Zipf,
    map: Mapping,
}

#[derive(Debug, Clone)]
enum Mapping {
    /// Rank r is the node with the r-th most links (LinkBench's correlated distributions).
    ByDegree,
    Shuffled(Shuffle),
}

impl Access {
    #[inline]
    pub fn id(&self, r: &mut Rng, g: &Graph) -> u64 {
        let rank = self.zipf.rank(r);
        match &self.map {
            Mapping::ByDegree => g.id_of_degree_rank(rank),
            Mapping::Shuffled(s) => s.invert(rank) + 1,
        }
    }
}

/// Everything a requester draws from, built once per run.
#[derive(Debug, Clone)]
pub struct Dists {
    pub graph: Graph,
    pub read: Access,
    pub read_uncorr: Access,
    pub write: Access,
    pub write_uncorr: Access,
    pub node_read: Access,
    pub node_update: Access,
    pub multiget: Geometric,
    /// The mix as a deck of `DECK` cards (request types), shuffled per pass by each requester.
    pub deck: std::sync::Arc<Vec<u8>>,
    pub read_blend: f64,
    pub write_blend: f64,
    /// Per getlinklist: the chance of paging back into a truncated list.
    pub history: f64,
    pub range_limit: i64,
    /// link add, link update, node add, node update.
    pub gens: [MotifGen; 4],
    pub link_median: f64,
    pub node_median: f64,
    /// A fleet's shard: the block of node ids (inclusive) its requests keep to.
    pub ids: Option<(u64, u64)>,
}

impl Dists {
    pub fn new(p: &Props, nodes: u64, seed: u64) -> Dists {
        let graph = Graph::new(nodes, p.link_type_count, seed);
        let zipf_cache: std::cell::RefCell<Vec<Zipf>> = Default::default();
        let zipf = |shape: f64| {
            let mut c = zipf_cache.borrow_mut();
            if let Some(z) = c.iter().find(|z| z.shape() == shape) {
                return z.clone();
            }
            let z = Zipf::new(nodes, shape);
            c.push(z.clone());
            z
        };
        let shuffled = |shape: f64, stream: u64| Access {
            zipf: zipf(shape),
            map: Mapping::Shuffled(Shuffle::new(nodes, seed, stream)),
        };
        Dists {
            read: Access {
                zipf: zipf(p.read_shape),
                map: Mapping::ByDegree,
            },
            read_uncorr: shuffled(p.read_uncorr_shape, S_READ_UNCORR),
            write: Access {
                zipf: zipf(p.write_shape),
                map: Mapping::ByDegree,
            },
            write_uncorr: shuffled(p.write_uncorr_shape, S_WRITE_UNCORR),
            node_read: shuffled(p.node_read_shape, S_NODE_READ),
            node_update: shuffled(p.node_update_shape, S_NODE_UPDATE),
            multiget: Geometric {
                min: p.multiget_min,
                max: p.multiget_max,
                p: p.multiget_prob,
            },
            deck: std::sync::Arc::new(deck(&p.mix)),
            read_blend: p.read_uncorr_blend / 100.0,
            write_blend: p.write_uncorr_blend / 100.0,
            history: p.getlinklist_history / 100.0,
            range_limit: p.range_limit as i64,
            gens: data::gens(p, seed),
            link_median: p.link_datasize,
            node_median: p.node_datasize,
            ids: None,
            graph,
        }
    }

    /// An id from `draw`; a fleet's shard redraws until it is in its block (the
    /// distribution restricted to the block), and after many misses takes one uniformly.
    fn within(&self, r: &mut Rng, draw: impl Fn(&Self, &mut Rng) -> u64) -> u64 {
        let Some((lo, hi)) = self.ids else {
            return draw(self, r);
        };
        for _ in 0..10_000 {
            let id = draw(self, r);
            if (lo..=hi).contains(&id) {
                return id;
            }
        }
        r.range(lo, hi)
    }

    fn link_read_id(&self, r: &mut Rng) -> u64 {
        self.within(r, |d, r| {
            if dist::unit(r) < d.read_blend {
                d.read_uncorr.id(r, &d.graph)
            } else {
                d.read.id(r, &d.graph)
            }
        })
    }

    fn link_write_id(&self, r: &mut Rng) -> u64 {
        self.within(r, |d, r| {
            if dist::unit(r) < d.write_blend {
                d.write_uncorr.id(r, &d.graph)
            } else {
                d.write.id(r, &d.graph)
            }
        })
    }

    fn node_update_id(&self, r: &mut Rng) -> u64 {
        self.within(r, |d, r| d.node_update.id(r, &d.graph))
    }

    fn node_read_id(&self, r: &mut Rng) -> u64 {
        self.within(r, |d, r| d.node_read.id(r, &d.graph))
    }

    /// LinkBench's deletenode: uniform over the loaded ids (the shard's).
    fn node_delete_id(&self, r: &mut Rng) -> u64 {
        let (lo, hi) = self.ids.unwrap_or((1, self.graph.nodes));
        r.range(lo, hi)
    }

    fn link_type(&self, r: &mut Rng) -> u64 {
        r.range(0, self.graph.link_types - 1)
    }

    /// ID2Chooser: id2 in id1 .. id1 + ceil(links / p_exist), so that about p_exist of the
    /// choices are links that were loaded.
    fn id2_range(&self, id1: u64, t: u64, p_exist: f64) -> u64 {
        let n = self.graph.type_degree(id1, t);
        ((n as f64 / p_exist).ceil() as u64).max(1)
    }

    fn id2(&self, r: &mut Rng, id1: u64, t: u64, p_exist: f64) -> u64 {
        id1 + r.range(0, self.id2_range(id1, t, p_exist) - 1)
    }

    fn id2s(&self, r: &mut Rng, id1: u64, t: u64, n: usize, out: &mut Vec<i64>) {
        out.clear();
        let range = self.id2_range(id1, t, P_GET_EXIST);
        if range <= n as u64 {
            out.extend((0..n as u64).map(|i| (id1 + i) as i64));
            return;
        }
        for _ in 0..n {
            let mut id2 = self.id2(r, id1, t, P_GET_EXIST) as i64;
            for _ in 0..100 {
                if !out.contains(&id2) {
                    break;
                }
                id2 = self.id2(r, id1, t, P_GET_EXIST) as i64;
            }
            out.push(id2);
        }
    }
}

/// Cards per deck: every pass over a requester's deck has the configured shares to 1/DECK.
pub const DECK: usize = 100_000;

/// The mix as cards: round(share x DECK) of each type, the largest remainders filling up.
fn deck(mix: &[f64; 10]) -> Vec<u8> {
    let total: f64 = mix.iter().sum();
    let exact: Vec<f64> = mix.iter().map(|m| m / total * DECK as f64).collect();
    let mut n: Vec<usize> = exact.iter().map(|e| e.floor() as usize).collect();
    let mut order: Vec<usize> = (0..mix.len()).collect();
    order.sort_by(|a, b| (exact[*b] - n[*b] as f64).total_cmp(&(exact[*a] - n[*a] as f64)));
    let short = DECK - n.iter().sum::<usize>();
    for k in order.into_iter().take(short) {
        n[k] += 1;
    }
    n.iter()
        .enumerate()
        .flat_map(|(k, c)| std::iter::repeat_n(k as u8, *c))
        .collect()
}

/// A truncated list seen by getlinklist: (id1, type, time of its last row).
#[derive(Debug, Clone, Copy)]
pub struct Tail {
    pub id1: i64,
    pub link_type: i64,
    pub time: i64,
}

/// Draws requests (no database): the part of a requester the mix tests exercise.
pub struct Requests {
    pub d: Dists,
    pub rng: Rng,
    pub history: Vec<Tail>,
    history_keys: HashSet<(i64, i64)>,
    buf: String,
    cards: Vec<u8>,
    next_card: usize,
}

impl Requests {
    /// Requester `worker` of `threads` on client `client_index` of `clients`: every
    /// requester of every client has its own request stream.
    pub fn new(spec: &Spec, worker: usize, threads: usize) -> Requests {
        let p = &spec.props;
        // A fleet's requesters are numbered across its shards.
        let (w, all) = spec
            .shard
            .map_or((worker, threads), |s| s.worker(worker, threads));
        let global = p.client_index * all as u64 + w as u64;
        Requests {
            d: spec.dists.clone(),
            rng: Rng::keyed(spec.seed, S_REQUEST, global),
            history: Vec::new(),
            history_keys: HashSet::new(),
            buf: String::new(),
            cards: spec.dists.deck.to_vec(),
            next_card: 0,
        }
    }

    fn payload(&mut self, gen: usize, median: f64, max: u64) -> String {
        let len = dist::lognormal_size(&mut self.rng, median, data::SIZE_SIGMA, max);
        self.d.gens[gen].fill(&mut self.rng, len, &mut self.buf);
        self.buf.clone()
    }

    /// The next request type: the next card of this requester's shuffled deck (LinkBench
    /// draws each type independently; a deck keeps the shares exact per pass, and the order
    /// within a pass is still random).
    fn kind(&mut self) -> u8 {
        // Fisher-Yates one card at a time: each pass is a uniform random order, with no
        // pause to shuffle the whole deck.
        if self.next_card >= self.cards.len() {
            self.next_card = 0;
        }
        let i = self.next_card;
        let j = self.rng.range(i as u64, self.cards.len() as u64 - 1) as usize;
        self.cards.swap(i, j);
        self.next_card += 1;
        self.cards[i]
    }

    pub fn draw(&mut self) -> Input {
        let kind = self.kind();
        let r = &mut self.rng;
        match kind {
            ADD_LINK | UPDATE_LINK => {
                let id1 = self.d.link_write_id(r);
                let t = self.d.link_type(r);
                let p = if kind == ADD_LINK {
                    P_ADD_EXIST
                } else {
                    P_UPDATE_EXIST
                };
                let id2 = self.d.id2(r, id1, t, p);
                let gen = if kind == ADD_LINK { 0 } else { 1 };
                let data = self.payload(gen, self.d.link_median, data::MAX_LINK_DATA);
                Input::WriteLink {
                    kind,
                    id1: id1 as i64,
                    link_type: LINK_TYPE_BASE + t as i64,
                    id2: id2 as i64,
                    data,
                    time: now_ms(),
                }
            }
            DELETE_LINK => {
                let id1 = self.d.link_write_id(r);
                let t = self.d.link_type(r);
                let id2 = self.d.id2(r, id1, t, P_DELETE_EXIST);
                Input::DeleteLink {
                    id1: id1 as i64,
                    link_type: LINK_TYPE_BASE + t as i64,
                    id2: id2 as i64,
                }
            }
            COUNT_LINK => {
                let id1 = self.d.link_read_id(r);
                let t = self.d.link_type(r);
                Input::CountLink {
                    id1: id1 as i64,
                    link_type: LINK_TYPE_BASE + t as i64,
                }
            }
            GET_LINK => {
                let id1 = self.d.link_read_id(r);
                let t = self.d.link_type(r);
                let n = self.d.multiget.draw(r) as usize;
                let mut id2s = Vec::with_capacity(n);
                self.d.id2s(r, id1, t, n, &mut id2s);
                Input::GetLink {
                    id1: id1 as i64,
                    link_type: LINK_TYPE_BASE + t as i64,
                    id2s,
                }
            }
            GET_LINK_LIST => {
                if dist::unit(r) < self.d.history && !self.history.is_empty() {
                    let slot = r.range(0, self.history.len() as u64 - 1) as usize;
                    let h = self.history[slot];
                    return Input::GetLinkList {
                        id1: h.id1,
                        link_type: h.link_type,
                        max_time: h.time,
                        offset: 1,
                        history: Some(slot),
                    };
                }
                let id1 = self.d.link_read_id(r);
                let t = self.d.link_type(r);
                Input::GetLinkList {
                    id1: id1 as i64,
                    link_type: LINK_TYPE_BASE + t as i64,
                    max_time: i64::MAX,
                    offset: 0,
                    history: None,
                }
            }
            ADD_NODE => {
                let data = self.payload(2, self.d.node_median, data::MAX_NODE_DATA);
                Input::AddNode {
                    data,
                    time: now_ms() / 1000,
                }
            }
            UPDATE_NODE => {
                let id = self.d.node_update_id(r) as i64;
                let data = self.payload(3, self.d.node_median, data::MAX_NODE_DATA);
                Input::UpdateNode {
                    id,
                    data,
                    time: now_ms() / 1000,
                }
            }
            DELETE_NODE => Input::DeleteNode {
                // LinkBench: uniform over the loaded ids.
                id: self.d.node_delete_id(r) as i64,
            },
            _ => Input::GetNode {
                id: self.d.node_read_id(r) as i64,
            },
        }
    }

    /// A getlinklist came back full (`rows` = range limit) with `last_time` as its oldest
    /// row: remember it (or move the slot it came from further back); else forget the slot.
    pub fn after_list(&mut self, input: &Input, full: Option<i64>) {
        let Input::GetLinkList {
            id1,
            link_type,
            history,
            ..
        } = input
        else {
            return;
        };
        match (history, full) {
            (Some(slot), Some(time)) => {
                if let Some(h) = self.history.get_mut(*slot) {
                    h.time = time;
                }
            }
            (Some(slot), None) => {
                if *slot < self.history.len() {
                    let h = self.history.swap_remove(*slot);
                    self.history_keys.remove(&(h.id1, h.link_type));
                }
            }
            (None, Some(time)) => {
                if self.history_keys.insert((*id1, *link_type)) {
                    let tail = Tail {
                        id1: *id1,
                        link_type: *link_type,
                        time,
                    };
                    if self.history.len() < HISTORY_LIMIT {
                        self.history.push(tail);
                    } else {
                        let slot = self.rng.range(0, self.history.len() as u64 - 1) as usize;
                        let old = std::mem::replace(&mut self.history[slot], tail);
                        self.history_keys.remove(&(old.id1, old.link_type));
                    }
                }
            }
            (None, None) => {}
        }
    }
}

/// The errors after which the same request is run again: the transient conflicts, and a
/// duplicate key (two requesters adding the same link at once).
fn retryable(class: ErrorClass) -> bool {
    class.retryable() || class == ErrorClass::DuplicateKey
}

/// One requester on one connection.
pub struct LinkbenchDriver {
    req: Requests,
    stmts: Option<Stmts>,
    pending: Option<Input>,
    pub retries: u64,
}

impl LinkbenchDriver {
    pub fn new(spec: &Spec, worker: usize, threads: usize) -> Self {
        LinkbenchDriver {
            req: Requests::new(spec, worker, threads),
            stmts: None,
            pending: None,
            retries: 0,
        }
    }
}

impl Driver for LinkbenchDriver {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.stmts = Some(Stmts::prepare(conn).await?);
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        let input = match self.pending.take() {
            Some(i) => {
                self.retries += 1;
                i
            }
            None => self.req.draw(),
        };
        let kind = input.kind();
        let st = self.stmts.as_mut().expect("setup ran");
        let limit = self.req.d.range_limit;
        let r = ops::run(st, conn, &input, limit).await;
        match r {
            Ok((step, full)) => {
                if kind == GET_LINK_LIST {
                    self.req.after_list(&input, full);
                }
                Ok(Step { kind, ..step })
            }
            Err(mut e) => {
                if e.class != ErrorClass::ConnectionLost && input_writes(&input) {
                    let _ = conn.execute("ROLLBACK").await;
                }
                if retryable(e.class) {
                    self.pending = Some(input);
                }
                e.kind = kind;
                Err(e)
            }
        }
    }
}

/// Whether the request runs in an explicit transaction (link writes).
fn input_writes(i: &Input) -> bool {
    matches!(i, Input::WriteLink { .. } | Input::DeleteLink { .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(maxid1: u64) -> Spec {
        Spec::new(maxid1, 1, Props::default(), None).unwrap()
    }

    #[test]
    fn mix_shares_within_5_percent_relative_over_200000() {
        let s = spec(10_001);
        let mut r = Requests::new(&s, 0, 1);
        let n = 200_000;
        let mut counts = [0u64; 10];
        for _ in 0..n {
            counts[r.draw().kind() as usize] += 1;
        }
        for k in 0..10 {
            let got = counts[k] as f64 / n as f64 * 100.0;
            let want = DEFAULT_MIX[k];
            assert!(
                (got - want).abs() / want < 0.05,
                "{}: {got:.4} % vs {want} %",
                KINDS[k]
            );
        }
    }

    #[test]
    fn top_1_percent_of_nodes_get_the_zipf_share_of_getnode() {
        let nodes = 100_000u64;
        let s = spec(nodes + 1);
        let mut r = Requests::new(&s, 3, 8);
        let mut hits = vec![0u32; nodes as usize + 1];
        let n = 200_000;
        for _ in 0..n {
            let id = s.dists.node_read.id(&mut r.rng, &s.dists.graph);
            assert!((1..=nodes).contains(&id));
            hits[id as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = hits[..(nodes / 100) as usize]
            .iter()
            .map(|h| *h as u64)
            .sum();
        let got = top as f64 / n as f64;
        let want = s.dists.node_read.zipf.top_share(nodes / 100);
        eprintln!("top 1 % of node ids: {got:.4} of getnode draws, Zipf(0.625) predicts {want:.4}");
        assert!(
            (got - want).abs() / want < 0.20,
            "top 1 %: {got:.4} of getnode vs {want:.4} predicted by shape 0.625"
        );
    }

    #[test]
    fn requesters_of_different_clients_draw_different_streams() {
        let mut a = Spec::new(1001, 1, Props::default(), None).unwrap();
        let mut b = a.clone();
        a.props.clients = 2;
        b.props.clients = 2;
        b.props.client_index = 1;
        let mut x = Requests::new(&a, 0, 4);
        let mut y = Requests::new(&b, 0, 4);
        assert_ne!(x.rng.next_u64(), y.rng.next_u64());
        // Client 0's requester 4 would be client 1's requester 0 only with 4 threads each:
        // global ids differ for every (client, worker) pair.
        let z = Requests::new(&a, 3, 4);
        assert_ne!(
            z.rng.clone().next_u64(),
            Requests::new(&b, 0, 4).rng.next_u64()
        );
    }

    #[test]
    fn correlated_reads_favour_high_degree_nodes() {
        let s = spec(100_001);
        let mut r = Rng::new(9);
        let g = &s.dists.graph;
        let corr: u64 = (0..20_000)
            .map(|_| g.degree(s.dists.read.id(&mut r, g)))
            .sum();
        let unc: u64 = (0..20_000)
            .map(|_| g.degree(s.dists.read_uncorr.id(&mut r, g)))
            .sum();
        assert!(corr > 5 * unc, "correlated {corr} vs uncorrelated {unc}");
    }
}
