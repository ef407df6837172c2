//! The run's side of tpcc: the deck of the mix, the emulated terminals (their inputs, keying
//! and think times, retries and back-off) and the per-connection driver that runs one
//! terminal's transaction per step.

use super::{
    delivery, new_order, order_status, payment, procedures, stock_level, think_time, CConst, Ctx,
    Spec, DELIVERY, KEYING_S, NEW_ORDER, ORDER_STATUS, PAYMENT, STOCK_LEVEL, THINK_MEAN_S,
};
use crate::contract::{Driver, Step};
use crate::db::{Conn, DbResult, Dbms, ErrorClass};
use crate::rng::Rng;
use std::time::{Duration, Instant};

/// The mix: a deck with `weights[k]` cards of kind k, reshuffled when used up, so that
/// every full deck has the configured shares exactly (like tpcc-mysql's card deck).
#[derive(Debug, Clone)]
pub struct Deck {
    cards: Vec<u8>,
    next: usize,
}

impl Deck {
    pub fn new(weights: &[u32; 5]) -> Self {
        let mut cards = Vec::new();
        for (k, w) in weights.iter().enumerate() {
            cards.extend(std::iter::repeat_n(k as u8, *w as usize));
        }
        let next = cards.len();
        Deck { cards, next }
    }

    pub fn draw(&mut self, r: &mut Rng) -> u8 {
        if self.next >= self.cards.len() {
            // Fisher-Yates.
            for i in (1..self.cards.len()).rev() {
                let j = r.range(0, i as u64) as usize;
                self.cards.swap(i, j);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

#[derive(Debug, Clone)]
enum Input {
    NewOrder(new_order::Input),
    Payment(payment::Input),
    OrderStatus(order_status::Input),
    Delivery(delivery::Input),
    StockLevel(stock_level::Input),
}

impl Input {
    fn kind(&self) -> u8 {
        match self {
            Input::NewOrder(_) => NEW_ORDER,
            Input::Payment(_) => PAYMENT,
            Input::OrderStatus(_) => ORDER_STATUS,
            Input::Delivery(_) => DELIVERY,
            Input::StockLevel(_) => STOCK_LEVEL,
        }
    }
}

struct Stmts {
    new_order: new_order::Stmts,
    payment: payment::Stmts,
    order_status: order_status::Stmts,
    delivery: delivery::Stmts,
    stock_level: stock_level::Stmts,
}

/// One emulated terminal: its home warehouse and StockLevel district, its random stream and
/// deck, and (spec timing) its own keying/think cycle.
struct Terminal {
    home_w: i64,
    stock_d: i64,
    rng: Rng,
    deck: Deck,
    /// The input of a transaction that failed with a retryable error: run again next.
    pending: Option<Input>,
    /// Failed attempts in a row of the pending input (sets the back-off).
    attempts: u32,
    /// Spec timing: the input drawn with the keying time (which depends on it), run next.
    next: Option<Input>,
    /// Spec timing: the kind of the last finished transaction, whose think time comes next.
    last_kind: Option<u8>,
    /// Spec timing: when its think and keying times end and its next transaction is due.
    due: Option<Instant>,
}

impl Terminal {
    /// Terminal `k` of `terminals` in this process.
    fn new(spec: &Spec, k: usize, terminals: usize) -> Self {
        let (first, last) = spec.homes();
        let w = (last - first + 1) as usize;
        // A shard's terminals draw their own random streams (keyed by their fleet-wide number).
        let key = spec.shard.map_or(k, |s| s.worker(k, terminals).0);
        Terminal {
            home_w: (k % w) as i64 + first as i64,
            stock_d: ((k / w) % 10) as i64 + 1,
            rng: Rng::keyed(spec.seed, 5000, key as u64),
            deck: Deck::new(&spec.weights),
            pending: None,
            attempts: 0,
            next: None,
            last_kind: None,
            due: None,
        }
    }

    fn next_input(&mut self, warehouses: u32, c: &CConst) -> Input {
        let r = &mut self.rng;
        let w = self.home_w;
        let ws = warehouses as i64;
        match self.deck.draw(r) {
            NEW_ORDER => Input::NewOrder(new_order::input(r, w, ws, c)),
            PAYMENT => Input::Payment(payment::input(r, w, ws, c)),
            ORDER_STATUS => Input::OrderStatus(order_status::input(r, w, c)),
            DELIVERY => Input::Delivery(delivery::input(r, w)),
            _ => Input::StockLevel(stock_level::input(r, w, self.stock_d)),
        }
    }

    /// Spec timing: the think time of the last transaction, then the keying time of the next
    /// (drawn here). A retry follows its failure without either.
    fn cycle(&mut self, warehouses: u32, c: &CConst) -> Duration {
        if self.pending.is_some() {
            return Duration::ZERO;
        }
        let think = match self.last_kind.take() {
            Some(k) => think_time(&mut self.rng, THINK_MEAN_S[k as usize]),
            None => Duration::ZERO,
        };
        let next = self.next_input(warehouses, c);
        let keying = Duration::from_secs_f64(KEYING_S[next.kind() as usize]);
        self.next = Some(next);
        think + keying
    }
}

/// One connection's driver: one terminal (the default), or several terminals sharing the
/// connection like the terminals of a TP monitor (`--terminals N` over `--threads M`). With
/// several, the connection runs the transaction of whichever terminal has been due longest;
/// a terminal that became due while the connection was busy waits, and its transaction's
/// latency counts from when it was due (`Driver::waiting_since`): its response time.
pub struct TpccDriver {
    spec: Spec,
    c: CConst,
    terms: Vec<Terminal>,
    /// The terminal whose transaction runs next (chosen by `pause`).
    cur: usize,
    /// A transaction ran since the last `pause`: false only at the start of a phase.
    ran: bool,
    /// The chosen terminal has been due since then, waiting for the connection.
    waiting: Option<Instant>,
    stmts: Option<Stmts>,
    /// `--procedures`: the prepared CALLs, instead of `stmts`.
    calls: Option<procedures::Calls>,
    cx: Ctx,
    pub retries: u64,
    pub delivery_skipped: u64,
    /// Transactions whose terminal waited for the connection (several terminals only).
    pub connection_waits: u64,
}

impl TpccDriver {
    /// Terminal `worker` of `threads` in this process, alone on its connection.
    pub fn new(spec: &Spec, worker: usize, threads: usize) -> Self {
        Self::shared(spec, [worker], threads)
    }

    /// The terminals `ks` (of `terminals` in this process) sharing one connection.
    pub fn shared(spec: &Spec, ks: impl IntoIterator<Item = usize>, terminals: usize) -> Self {
        let terms: Vec<Terminal> = ks
            .into_iter()
            .map(|k| Terminal::new(spec, k, terminals))
            .collect();
        assert!(
            !terms.is_empty(),
            "a connection serves at least one terminal"
        );
        TpccDriver {
            c: spec.c(),
            spec: spec.clone(),
            terms,
            cur: 0,
            ran: false,
            waiting: None,
            stmts: None,
            calls: None,
            cx: Ctx {
                dbms: Dbms::Sqlite,
                ints: Vec::with_capacity(16),
                texts: Vec::with_capacity(64),
                counts: Vec::with_capacity(16),
                rows: 0,
                statements: 0,
            },
            retries: 0,
            delivery_skipped: 0,
            connection_waits: 0,
        }
    }
}

impl Driver for TpccDriver {
    /// Spec timing: the terminal that just ran starts its think and keying times (at the start
    /// of a phase every terminal starts over with a keying time); the wait is until the
    /// earliest terminal is due, none if one already is. Without spec timing the terminals
    /// take turns (a retry stays on its terminal).
    fn pause(&mut self) -> Option<Duration> {
        self.waiting = None;
        let ran = std::mem::take(&mut self.ran);
        if !self.spec.spec_timing {
            if ran && self.terms[self.cur].pending.is_none() {
                self.cur = (self.cur + 1) % self.terms.len();
            }
            return None;
        }
        let now = Instant::now();
        let (ws, c) = (self.spec.warehouses, &self.c);
        if ran {
            let t = &mut self.terms[self.cur];
            t.due = Some(now + t.cycle(ws, c));
        } else {
            for t in &mut self.terms {
                t.due = Some(now + t.cycle(ws, c));
            }
        }
        let (i, due) = self
            .terms
            .iter()
            .enumerate()
            .map(|(i, t)| (i, t.due.unwrap_or(now)))
            .min_by_key(|(_, due)| *due)
            .expect("at least one terminal");
        self.cur = i;
        if due > now {
            return Some(due - now);
        }
        if due < now {
            self.waiting = Some(due);
            self.connection_waits += 1;
        }
        None
    }

    fn waiting_since(&self) -> Option<Instant> {
        self.waiting
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![
            ("retries", self.retries),
            ("delivery_skipped_districts", self.delivery_skipped),
        ];
        if self.spec.terminals.is_some() {
            v.push(("connection_waits", self.connection_waits));
        }
        v
    }

    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.cx.dbms = conn.dbms();
        if conn.dbms() == Dbms::Mysql {
            // Every transaction here begins and commits explicitly. With autocommit off, the
            // statements sent ahead of a failed one (`Ctx::pipe`) run in a transaction the
            // rollback undoes, also after a deadlock ended the first one: MySQL's lean client
            // sends statements ahead only then (`Conn::exec_pipelined`).
            conn.execute("SET SESSION autocommit = 0").await?;
        }
        if let Some(i) = self.spec.isolation {
            match conn.dbms() {
                Dbms::Mysql => {
                    conn.execute(&format!(
                        "SET SESSION TRANSACTION ISOLATION LEVEL {}",
                        i.sql()
                    ))
                    .await?
                }
                Dbms::Postgres => {
                    conn.execute(&format!(
                        "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}",
                        i.sql()
                    ))
                    .await?
                }
                Dbms::Sqlite => {}
            }
        }
        if self.spec.procedures {
            self.calls = Some(procedures::Calls::prepare(conn).await?);
            return Ok(());
        }
        self.stmts = Some(Stmts {
            new_order: new_order::Stmts::prepare(conn).await?,
            payment: payment::Stmts::prepare(conn).await?,
            order_status: order_status::Stmts::prepare(conn).await?,
            delivery: delivery::Stmts::prepare(conn).await?,
            stock_level: stock_level::Stmts::prepare(conn).await?,
        });
        Ok(())
    }

    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        self.ran = true;
        let t = &mut self.terms[self.cur];
        let input = match t.pending.take() {
            Some(i) => {
                self.retries += 1;
                i
            }
            None => match t.next.take() {
                Some(i) => i,
                None => t.next_input(self.spec.warehouses, &self.c),
            },
        };
        let kind = input.kind();
        self.cx.rows = 0;
        self.cx.statements = 0;
        let cx = &mut self.cx;
        let skipped = &mut self.delivery_skipped;
        let r = match (&self.calls, &self.stmts) {
            (Some(p), _) => match &input {
                Input::NewOrder(i) => procedures::new_order(p, cx, conn, i).await,
                Input::Payment(i) => procedures::payment(p, cx, conn, i).await,
                Input::OrderStatus(i) => procedures::order_status(p, cx, conn, i).await,
                Input::Delivery(i) => procedures::delivery(p, cx, conn, i, skipped).await,
                Input::StockLevel(i) => procedures::stock_level(p, cx, conn, i).await,
            },
            (None, st) => {
                let st = st.as_ref().expect("setup ran");
                match &input {
                    Input::NewOrder(i) => new_order::run(&st.new_order, cx, conn, i).await,
                    Input::Payment(i) => payment::run(&st.payment, cx, conn, i).await,
                    Input::OrderStatus(i) => order_status::run(&st.order_status, cx, conn, i).await,
                    Input::Delivery(i) => delivery::run(&st.delivery, cx, conn, i, skipped).await,
                    Input::StockLevel(i) => stock_level::run(&st.stock_level, cx, conn, i).await,
                }
            }
        };
        match r {
            Ok(step) => {
                t.attempts = 0;
                t.last_kind = Some(kind);
                Ok(Step { kind, ..step })
            }
            Err(mut e) => {
                if e.class != ErrorClass::ConnectionLost {
                    // Whatever the server still holds of the transaction goes.
                    let _ = conn.execute("ROLLBACK").await;
                    conn.take_pipelined_rows();
                }
                if e.class.retryable() {
                    t.pending = Some(input);
                    t.attempts += 1;
                    // Back off before the retry, so that conflicting terminals do not collide
                    // again at once. The wait belongs to the failed attempt: it is in the
                    // run's wall time, not in any success latency.
                    let wait = backoff(t.attempts, &mut t.rng);
                    tokio::time::sleep(wait).await;
                } else {
                    t.attempts = 0;
                    t.last_kind = Some(kind);
                }
                e.kind = kind;
                Err(e)
            }
        }
    }
}

/// Exponential back-off with jitter: 0.5–1 ms after the first failure, doubling up to
/// 32–64 ms.
fn backoff(attempts: u32, rng: &mut Rng) -> std::time::Duration {
    let cap_us = 1000u64 << attempts.saturating_sub(1).min(6);
    std::time::Duration::from_micros(rng.range(cap_us / 2, cap_us))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::tpcc::{DEFAULT_WEIGHTS, KINDS};

    #[test]
    fn deck_shares_are_exact_per_deck_and_within_1pp_over_10000() {
        let w = DEFAULT_WEIGHTS;
        let mut deck = Deck::new(&w);
        let mut r = Rng::new(7);
        let n = 10_050; // not a whole number of decks on purpose
        let mut counts = [0u64; 5];
        for _ in 0..n {
            counts[deck.draw(&mut r) as usize] += 1;
        }
        let total: u32 = w.iter().sum();
        for k in 0..5 {
            let got = counts[k] as f64 / n as f64 * 100.0;
            let want = w[k] as f64 / total as f64 * 100.0;
            assert!(
                (got - want).abs() < 1.0,
                "{}: {got:.2} % vs {want} %",
                KINDS[k]
            );
        }
    }

    #[test]
    fn terminals_home_warehouse_and_district() {
        let spec = Spec {
            warehouses: 3,
            seed: 1,
            weights: DEFAULT_WEIGHTS,
            isolation: None,
            spec_timing: false,
            shard: None,
            terminals: None,
            load_tables: Default::default(),
            procedures: false,
        };
        let homes: Vec<i64> = (0..7)
            .map(|k| TpccDriver::new(&spec, k, 7).terms[0].home_w)
            .collect();
        assert_eq!(homes, vec![1, 2, 3, 1, 2, 3, 1]);
        assert_eq!(TpccDriver::new(&spec, 4, 7).terms[0].stock_d, 2);
        // Shard 1 of 2 of 5 warehouses: homes 3..5 only.
        let spec = Spec {
            warehouses: 5,
            shard: Some(crate::model::Shard { index: 1, count: 2 }),
            ..spec
        };
        let homes: Vec<i64> = (0..4)
            .map(|k| TpccDriver::new(&spec, k, 4).terms[0].home_w)
            .collect();
        assert_eq!(homes, vec![3, 4, 5, 3]);
    }

    /// Several terminals on one connection: each keeps the home of its own number; the
    /// connection runs the terminal due longest, and says since when it has waited.
    #[test]
    fn shared_connection_picks_the_longest_waiting_terminal() {
        let spec = Spec {
            warehouses: 3,
            seed: 1,
            weights: DEFAULT_WEIGHTS,
            isolation: None,
            spec_timing: true,
            shard: None,
            terminals: Some(7),
            load_tables: Default::default(),
            procedures: false,
        };
        // Connection 1 of 3 serves terminals 1, 4 and 7 of 9.
        let mut d = TpccDriver::shared(&spec, (1..9).step_by(3), 9);
        let homes: Vec<i64> = d.terms.iter().map(|t| t.home_w).collect();
        assert_eq!(homes, vec![2, 2, 2]);
        let stock: Vec<i64> = d.terms.iter().map(|t| t.stock_d).collect();
        assert_eq!(stock, vec![1, 2, 3]);
        // The start of a phase: every terminal keys (at least 2 s), none is waiting.
        let wait = d.pause().expect("a keying time");
        assert!(wait >= Duration::from_secs(2), "{wait:?}");
        assert!(d.terms.iter().all(|t| t.due.is_some() && t.next.is_some()));
        assert_eq!(d.waiting_since(), None);
        // Terminal 0 just ran; terminals 1 and 2 became due while it did, 2 first.
        let now = Instant::now();
        let (t1, t2) = (
            now - Duration::from_millis(5),
            now - Duration::from_millis(9),
        );
        d.terms[1].due = Some(t1);
        d.terms[2].due = Some(t2);
        d.cur = 0;
        d.ran = true;
        assert_eq!(d.pause(), None, "a terminal is already due");
        assert_eq!(d.cur, 2);
        assert_eq!(d.waiting_since(), Some(t2));
        assert!(d.terms[0].due.unwrap() >= now + Duration::from_secs(2));
        assert_eq!(d.connection_waits, 1);
        // Terminal 2 ran: terminal 1 is next, still waiting since t1.
        d.ran = true;
        assert_eq!(d.pause(), None);
        assert_eq!((d.cur, d.waiting_since()), (1, Some(t1)));
        assert_eq!(d.counters().last(), Some(&("connection_waits", 2)));
        // Without spec timing the terminals take turns.
        let spec = Spec {
            spec_timing: false,
            ..spec
        };
        let mut d = TpccDriver::shared(&spec, [0, 3, 6], 9);
        let mut order = Vec::new();
        for _ in 0..4 {
            assert_eq!(d.pause(), None);
            order.push(d.cur);
            d.ran = true;
        }
        assert_eq!(order, vec![0, 1, 2, 0]);
    }
}
