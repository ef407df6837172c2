//! OrderStatus (TPC-C 2.6): read-only; 60 % of customers by last name; the customer's last
//! order through idx_orders (ORDER BY o_id DESC LIMIT 1; tpcc-mysql uses a MAX subquery).

use super::payment::Customer;
use super::{begin, commit, ints, prep, Ctx};
use crate::contract::Step;
use crate::db::{Conn, DbResult, StmtId, Value};
use crate::rng::Rng;
use crate::workload::tpcc::data::CConst;

pub(super) const CUSTOMER: &str = "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?";
pub(super) const LAST_ORDER: &str = "SELECT o_id, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1";
pub(super) const ORDER_LINES: &str = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?";

pub struct Stmts {
    customers_by_name: StmtId,
    customer: StmtId,
    last_order: StmtId,
    order_lines: StmtId,
}

impl Stmts {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Self> {
        Ok(Stmts {
            customers_by_name: prep(conn, super::payment::CUSTOMERS_BY_NAME).await?,
            customer: prep(conn, CUSTOMER).await?,
            last_order: prep(conn, LAST_ORDER).await?,
            order_lines: prep(conn, ORDER_LINES).await?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Input {
    pub w: i64,
    pub d: i64,
    pub customer: Customer,
}

pub fn input(r: &mut Rng, w: i64, c: &CConst) -> Input {
    Input {
        w,
        d: r.range(1, 10) as i64,
        customer: Customer::pick(r, c),
    }
}

pub async fn run(st: &Stmts, cx: &mut Ctx, conn: &mut Conn, inp: &Input) -> DbResult<Step> {
    use Value::Int as I;
    let (w, d) = (inp.w, inp.d);
    begin(cx, conn, false).await?;
    let c = inp
        .customer
        .resolve(cx, conn, st.customers_by_name, w, d)
        .await?;
    cx.exec(conn, st.customer, &[I(w), I(d), I(c)]).await?;
    if ints(cx, conn, st.last_order, &[I(w), I(d), I(c)]).await? == 1 {
        let o = cx.int(0);
        cx.exec(conn, st.order_lines, &[I(w), I(d), I(o)]).await?;
    }
    commit(cx, conn).await?;
    Ok(cx.step())
}
