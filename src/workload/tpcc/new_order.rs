//! NewOrder (TPC-C 2.4); 1 % of orders name an unused item and roll back (a user rollback,
//! counted apart from commits, not an error). The order's items are read by one statement, its
//! home-warehouse stock rows with the district's s_dist_XX by one (locked), and its lines
//! inserted by one multi-row VALUES, as go-tpc batches them; each stock row is updated by its
//! own statement. The writes nothing later reads (the district's next order id, the order, the
//! new order, the stock updates and the lines) go with the next statement instead of waiting
//! for their replies (`Ctx::pipe`): an order of n lines takes about n + 9 statements in about
//! 6 round trips, where one statement per round trip took n + 9.
//!
//! Prepared per connection: one items and one stock statement whose IN list always has 15
//! placeholders (an order's shorter list is padded by repeating its first item: the same rows
//! are read and locked), and the order-line INSERT for each line count of 2.4.1.3 (5 to 15):
//! 20 statements, where one variant per list length made 52. Each prepared statement costs the
//! server memory per connection (about 32 KB in MariaDB 10.11, docs/tpcc.md).

use super::{begin, commit, ints, prep, texts, Ctx};
use crate::contract::Step;
use crate::db::{Conn, DbError, DbResult, ErrorClass, StmtId, Value};
use crate::rng::Rng;
use crate::workload::tpcc::data::{nurand, CConst, ITEMS};

pub(super) const CUSTOMER_WAREHOUSE: &str = "SELECT CAST(ROUND(c_discount * 10000) AS {int}), CASE WHEN c_credit = 'BC' THEN 1 ELSE 0 END, CAST(ROUND(w_tax * 10000) AS {int}) FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?";
pub(super) const DISTRICT: &str = "SELECT d_next_o_id, CAST(ROUND(d_tax * 10000) AS {int}) FROM district WHERE d_id = ? AND d_w_id = ?{for_update}";
pub(super) const DISTRICT_UPDATE: &str =
    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_id = ? AND d_w_id = ?";
pub(super) const ORDER_INSERT: &str = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)";
pub(super) const NEW_ORDER_INSERT: &str =
    "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
/// Price in cents, and whether i_data holds "ORIGINAL" (the brand-generic flag of 2.4.2.2), of
/// the order's distinct items in one statement (`{in}`: one placeholder per item).
pub(super) const ITEMS_IN: &str = "SELECT i_id, CAST(ROUND(i_price * 100) AS {int}), CASE WHEN i_data LIKE '%ORIGINAL%' THEN 1 ELSE 0 END FROM item WHERE i_id IN ({in})";
/// s_dist_XX of the district given as the first parameter (copied into ol_dist_info).
pub(super) const DIST: &str = "CASE CAST(? AS {int}) WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 \
WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END";
/// The stock rows of the order's distinct home-warehouse items, locked, in one statement, with
/// the district's s_dist_XX (`{dist}`).
pub(super) const STOCK_IN: &str = "SELECT s_i_id, s_quantity, CASE WHEN s_data LIKE '%ORIGINAL%' THEN 1 ELSE 0 END, {dist} FROM stock WHERE s_w_id = ? AND s_i_id IN ({in}){for_update}";
/// One stock row (a line supplied by another warehouse: about 1 % of lines).
pub(super) const STOCK: &str = "SELECT s_quantity, CASE WHEN s_data LIKE '%ORIGINAL%' THEN 1 ELSE 0 END, {dist} FROM stock WHERE s_i_id = ? AND s_w_id = ?{for_update}";
pub(super) const STOCK_UPDATE: &str = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + CAST(? AS {int}), s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?";
/// The order's lines in one statement: ORDER_LINE_ROW once per line, ol_dist_info as read with
/// the stock row.
pub(super) const ORDER_LINE_INSERT: &str = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES ";
pub(super) const ORDER_LINE_ROW: &str = "(CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}), CAST(? AS {int}) / 100.0, CAST(? AS {text}))";

/// Fewest and most lines of an order (TPC-C 2.4.1.3: 5 to 15).
pub const MIN_LINES: usize = 5;
pub const MAX_LINES: usize = 15;

pub struct Stmts {
    customer_warehouse: StmtId,
    district: StmtId,
    district_update: StmtId,
    order_insert: StmtId,
    new_order_insert: StmtId,
    /// ITEMS_IN and STOCK_IN with MAX_LINES placeholders (padded by `padded`).
    items_in: StmtId,
    stock_in: StmtId,
    stock: StmtId,
    stock_update: StmtId,
    /// `order_lines[n - MIN_LINES]`: the INSERT of an order of n lines.
    order_lines: Vec<StmtId>,
}

fn placeholders(k: usize) -> String {
    vec!["?"; k].join(", ")
}

/// `params` followed by `ids` padded to MAX_LINES by repeating the first (an IN list of
/// fixed length: one prepared statement for every order).
pub(super) fn padded(params: &mut Vec<Value>, ids: &[i64]) {
    let first = ids[0];
    params.extend(ids.iter().map(|&i| Value::Int(i)));
    params.extend(std::iter::repeat_n(
        Value::Int(first),
        MAX_LINES - ids.len(),
    ));
}

impl Stmts {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Self> {
        let mut order_lines = Vec::with_capacity(MAX_LINES - MIN_LINES + 1);
        for n in MIN_LINES..=MAX_LINES {
            let rows = vec![ORDER_LINE_ROW; n].join(", ");
            order_lines.push(prep(conn, &format!("{ORDER_LINE_INSERT}{rows}")).await?);
        }
        Ok(Stmts {
            customer_warehouse: prep(conn, CUSTOMER_WAREHOUSE).await?,
            district: prep(conn, DISTRICT).await?,
            district_update: prep(conn, DISTRICT_UPDATE).await?,
            order_insert: prep(conn, ORDER_INSERT).await?,
            new_order_insert: prep(conn, NEW_ORDER_INSERT).await?,
            items_in: prep(conn, &ITEMS_IN.replace("{in}", &placeholders(MAX_LINES))).await?,
            stock_in: prep(
                conn,
                &STOCK_IN
                    .replace("{dist}", DIST)
                    .replace("{in}", &placeholders(MAX_LINES)),
            )
            .await?,
            stock: prep(conn, &STOCK.replace("{dist}", DIST)).await?,
            stock_update: prep(conn, STOCK_UPDATE).await?,
            order_lines,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Line {
    pub i_id: i64,
    pub supply_w: i64,
    pub quantity: i64,
}

#[derive(Debug, Clone)]
pub struct Input {
    pub w: i64,
    pub d: i64,
    pub c: i64,
    pub lines: Vec<Line>,
}

impl Input {
    /// The distinct items the order names, in ascending order.
    pub fn items(&self) -> Vec<i64> {
        distinct(self.lines.iter().map(|l| l.i_id))
    }

    /// The distinct items supplied by the home warehouse, in ascending order.
    pub fn home_items(&self) -> Vec<i64> {
        distinct(
            self.lines
                .iter()
                .filter(|l| l.supply_w == self.w)
                .map(|l| l.i_id),
        )
    }
}

fn distinct(ids: impl Iterator<Item = i64>) -> Vec<i64> {
    let mut v: Vec<i64> = ids.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The input of 2.4.1 for home warehouse `w` of `warehouses`.
pub fn input(r: &mut Rng, w: i64, warehouses: i64, c: &CConst) -> Input {
    let d = r.range(1, 10) as i64;
    let cid = nurand(r, 1023, 1, 3000, c.c_id) as i64;
    let n = r.range(5, 15) as usize;
    // TPC-C 2.4.1.4: 1 % of NewOrders name an unused item as their last line.
    let rollback = r.range(1, 100) == 1;
    let mut lines = Vec::with_capacity(n);
    for k in 0..n {
        let i_id = if rollback && k == n - 1 {
            ITEMS as i64 + 1
        } else {
            nurand(r, 8191, 1, ITEMS, c.c_ol_i_id) as i64
        };
        // TPC-C 2.4.1.5: 1 % of lines are supplied by another warehouse (when there is one).
        let supply_w = if warehouses > 1 && r.range(1, 100) == 1 {
            let o = r.range(1, warehouses as u64 - 1) as i64;
            if o >= w {
                o + 1
            } else {
                o
            }
        } else {
            w
        };
        lines.push(Line {
            i_id,
            supply_w,
            quantity: r.range(1, 10) as i64,
        });
    }
    Input {
        w,
        d,
        c: cid,
        lines,
    }
}

pub async fn run(st: &Stmts, cx: &mut Ctx, conn: &mut Conn, inp: &Input) -> DbResult<Step> {
    use Value::Int as I;
    let (w, d) = (inp.w, inp.d);
    begin(cx, conn, true).await?;
    ints(cx, conn, st.customer_warehouse, &[I(w), I(d), I(inp.c)]).await?;
    let (discount, w_tax) = (cx.int(0), cx.int(2));
    if ints(cx, conn, st.district, &[I(d), I(w)]).await? != 1 {
        return Err(DbError::new(ErrorClass::Other, "district row not found"));
    }
    let (o_id, d_tax) = (cx.int(0), cx.int(1));
    // Sent ahead with the items' read: nothing below reads what they write.
    cx.pipe(conn, st.district_update, &[I(d), I(w)]).await?;
    let all_local = inp.lines.iter().all(|l| l.supply_w == w) as i64;
    cx.pipe(
        conn,
        st.order_insert,
        &[
            I(o_id),
            I(d),
            I(w),
            I(inp.c),
            I(inp.lines.len() as i64),
            I(all_local),
        ],
    )
    .await?;
    cx.pipe(conn, st.new_order_insert, &[I(o_id), I(d), I(w)])
        .await?;
    // The order's distinct items, and its distinct home-warehouse items: each set is read
    // by one statement (as go-tpc does), not one statement per line.
    let items = inp.items();
    let mut params: Vec<Value> = Vec::with_capacity(11 * MAX_LINES);
    padded(&mut params, &items);
    if ints(cx, conn, st.items_in, &params).await? < items.len() as u64 {
        // The unused item (2.4.1.4): the spec's rollback, not an error.
        cx.statements += 1;
        conn.execute("ROLLBACK").await?;
        return Ok(Step {
            rolled_back: true,
            ..cx.step()
        });
    }
    // (i_id, price in cents) of each distinct item.
    let prices: Vec<(i64, i64)> = cx
        .ints
        .chunks(3)
        .map(|r| (r[0].unwrap_or(0), r[1].unwrap_or(0)))
        .collect();
    let home = inp.home_items();
    // (i_id, supply warehouse, current s_quantity, s_dist_XX) of every stock row the order
    // touches; a line naming an item again sees the quantity the earlier line left.
    let mut stock: Vec<(i64, i64, i64, String)> = Vec::with_capacity(MAX_LINES);
    if !home.is_empty() {
        params.clear();
        params.extend([I(d), I(w)]);
        padded(&mut params, &home);
        if texts(cx, conn, st.stock_in, &params).await? != home.len() as u64 {
            return Err(DbError::new(ErrorClass::Other, "stock row not found"));
        }
        for k in 0..home.len() {
            let dist = cx.texts[4 * k + 3].take().unwrap_or_default();
            stock.push((cx.text_int(4 * k), w, cx.text_int(4 * k + 1), dist));
        }
    }
    // The lines supplied by other warehouses (about 1 %): one locked read each.
    for l in &inp.lines {
        if l.supply_w != w && !stock.iter().any(|s| s.0 == l.i_id && s.1 == l.supply_w) {
            if texts(cx, conn, st.stock, &[I(d), I(l.i_id), I(l.supply_w)]).await? != 1 {
                return Err(DbError::new(ErrorClass::Other, "stock row not found"));
            }
            let dist = cx.texts[2].take().unwrap_or_default();
            stock.push((l.i_id, l.supply_w, cx.text_int(0), dist));
        }
    }
    let mut total_cents = 0i64;
    params.clear();
    for (k, l) in inp.lines.iter().enumerate() {
        let price = prices.iter().find(|p| p.0 == l.i_id).map_or(0, |p| p.1);
        let at = stock
            .iter()
            .position(|s| s.0 == l.i_id && s.1 == l.supply_w)
            .expect("every line's stock row was read above");
        let s_q = stock[at].2;
        // TPC-C 2.4.2.2: restock by 91 when fewer than 10 would remain.
        let new_q = if s_q >= l.quantity + 10 {
            s_q - l.quantity
        } else {
            s_q - l.quantity + 91
        };
        stock[at].2 = new_q;
        let remote = (l.supply_w != w) as i64;
        cx.pipe(
            conn,
            st.stock_update,
            &[I(new_q), I(l.quantity), I(remote), I(l.i_id), I(l.supply_w)],
        )
        .await?;
        let amount = l.quantity * price;
        total_cents += amount;
        params.extend([
            I(o_id),
            I(d),
            I(w),
            I(k as i64 + 1),
            I(l.i_id),
            I(l.supply_w),
            I(l.quantity),
            I(amount),
            Value::Text(stock[at].3.clone()),
        ]);
    }
    // Every order line in one INSERT.
    cx.pipe(conn, st.order_lines[inp.lines.len() - MIN_LINES], &params)
        .await?;
    // The total of 2.4.2.2 (shown to the terminal user; computed, not stored).
    std::hint::black_box(
        total_cents * (10_000 - discount) / 10_000 * (10_000 + w_tax + d_tax) / 10_000,
    );
    commit(cx, conn).await?;
    Ok(cx.step())
}
