//! StockLevel (TPC-C 2.8): read-only; the terminal's fixed district; distinct items of the
//! district's last 20 orders whose stock is below a threshold in 10..20.

use super::{begin, commit, ints, prep, Ctx};
use crate::contract::Step;
use crate::db::{Conn, DbResult, StmtId, Value};
use crate::rng::Rng;

pub(super) const DISTRICT_NEXT: &str =
    "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?";
pub(super) const LOW_STOCK: &str = "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?";

pub struct Stmts {
    district_next: StmtId,
    low_stock: StmtId,
}

impl Stmts {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Self> {
        Ok(Stmts {
            district_next: prep(conn, DISTRICT_NEXT).await?,
            low_stock: prep(conn, LOW_STOCK).await?,
        })
    }
}

#[derive(Debug, Clone)]
pub struct Input {
    pub w: i64,
    pub d: i64,
    pub threshold: i64,
}

pub fn input(r: &mut Rng, w: i64, d: i64) -> Input {
    Input {
        w,
        d,
        threshold: r.range(10, 20) as i64,
    }
}

pub async fn run(st: &Stmts, cx: &mut Ctx, conn: &mut Conn, inp: &Input) -> DbResult<Step> {
    use Value::Int as I;
    let (w, d) = (inp.w, inp.d);
    begin(cx, conn, false).await?;
    ints(cx, conn, st.district_next, &[I(w), I(d)]).await?;
    let next = cx.int(0);
    ints(
        cx,
        conn,
        st.low_stock,
        &[I(w), I(d), I(next), I(next - 20), I(w), I(inp.threshold)],
    )
    .await?;
    std::hint::black_box(cx.int(0));
    commit(cx, conn).await?;
    Ok(cx.step())
}
