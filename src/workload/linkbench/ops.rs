//! The ten request types as SQL: LinkStoreMysql's queries, prepared, with `?` placeholders.
//! Link writes run in one transaction with their counttable update (as LinkBench does).

use super::data::{NODE_TYPE, VISIBILITY_DEFAULT, VISIBILITY_HIDDEN};
use super::input::{begin_sql, now_ms, Input};
use crate::contract::Step;
use crate::db::{Conn, DbResult, Dbms, StmtId, Value};

const LINK_VISIBILITY: &str =
    "SELECT visibility FROM linktable WHERE link_type = ? AND id1 = ? AND id2 = ?{for_update}";
const LINK_INSERT: &str = "INSERT INTO linktable (id1, id2, link_type, visibility, data, time, version) VALUES (?, ?, ?, ?, ?, ?, ?)";
const LINK_UPDATE: &str = "UPDATE linktable SET visibility = ?, data = ?, time = ?, version = ? WHERE link_type = ? AND id1 = ? AND id2 = ?";
const LINK_HIDE: &str =
    "UPDATE linktable SET visibility = ? WHERE link_type = ? AND id1 = ? AND id2 = ?";
/// counttable + 1 (a link became visible), inserting the row when missing.
const COUNT_ADD_MYSQL: &str =
    "INSERT INTO counttable (id, link_type, count, time, version) VALUES (?, ?, 1, ?, 0) \
ON DUPLICATE KEY UPDATE count = count + 1, version = version + 1, time = VALUES(time)";
const COUNT_ADD_STD: &str = "INSERT INTO counttable (id, link_type, count, time, version) VALUES (?, ?, 1, ?, 0) \
ON CONFLICT (id, link_type) DO UPDATE SET count = counttable.count + 1, version = counttable.version + 1, time = excluded.time";
/// counttable - 1, never below 0 (LinkStoreMysql's IF (count = 0, 0, count - 1)).
const COUNT_SUB_MYSQL: &str = "INSERT INTO counttable (id, link_type, count, time, version) VALUES (?, ?, 0, ?, 0) \
ON DUPLICATE KEY UPDATE count = CASE WHEN count = 0 THEN 0 ELSE count - 1 END, version = version + 1, time = VALUES(time)";
const COUNT_SUB_STD: &str = "INSERT INTO counttable (id, link_type, count, time, version) VALUES (?, ?, 0, ?, 0) \
ON CONFLICT (id, link_type) DO UPDATE SET count = CASE WHEN counttable.count = 0 THEN 0 ELSE counttable.count - 1 END, version = counttable.version + 1, time = excluded.time";
const COUNT: &str = "SELECT count FROM counttable WHERE id = ? AND link_type = ?";
const LINK_COLUMNS: &str = "id1, id2, link_type, visibility, data, time, version";
const LIST: &str = "SELECT id1, id2, link_type, visibility, data, time, version FROM linktable{force_index} \
WHERE id1 = ? AND link_type = ? AND time >= ? AND time <= ? AND visibility = ? ORDER BY time DESC LIMIT ? OFFSET ?";
/// The time of a full list's last row (to page back from it later).
const LIST_LAST_TIME: &str = "SELECT time FROM linktable{force_index} \
WHERE id1 = ? AND link_type = ? AND time >= ? AND time <= ? AND visibility = ? ORDER BY time DESC LIMIT 1 OFFSET ?";
const NODE_GET: &str = "SELECT id, type, version, time, data FROM nodetable WHERE id = ?";
const NODE_ADD: &str = "INSERT INTO nodetable (type, version, time, data) VALUES (?, ?, ?, ?)";
const NODE_UPDATE: &str =
    "UPDATE nodetable SET version = ?, time = ?, data = ? WHERE id = ? AND type = ?";
const NODE_DELETE: &str = "DELETE FROM nodetable WHERE id = ? AND type = ?";

/// Multiget statements prepared up front; larger IN lists are prepared on first use.
const MULTIGET_PREPARED: usize = 8;

fn sql(dbms: Dbms, template: &str) -> String {
    let (fu, fi) = match dbms {
        Dbms::Mysql => (" FOR UPDATE", " FORCE INDEX (id1_type)"),
        Dbms::Postgres => (" FOR UPDATE", ""),
        Dbms::Sqlite => ("", ""),
    };
    template
        .replace("{for_update}", fu)
        .replace("{force_index}", fi)
}

fn multiget_sql(n: usize) -> String {
    let marks = vec!["?"; n].join(", ");
    format!(
        "SELECT {LINK_COLUMNS} FROM linktable WHERE id1 = ? AND link_type = ? AND id2 IN ({marks})"
    )
}

pub struct Stmts {
    dbms: Dbms,
    link_visibility: StmtId,
    link_insert: StmtId,
    link_update: StmtId,
    link_hide: StmtId,
    count_add: StmtId,
    count_sub: StmtId,
    count: StmtId,
    list: StmtId,
    list_last_time: StmtId,
    node_get: StmtId,
    node_add: StmtId,
    node_update: StmtId,
    node_delete: StmtId,
    /// multiget[n - 1]: an IN list of n ids.
    multiget: Vec<Option<StmtId>>,
    ints: Vec<Option<i64>>,
    params: Vec<Value>,
}

impl Stmts {
    pub async fn prepare(conn: &mut Conn) -> DbResult<Stmts> {
        let dbms = conn.dbms();
        let std = dbms != Dbms::Mysql;
        let mut st = Stmts {
            dbms,
            link_visibility: conn.prepare(&sql(dbms, LINK_VISIBILITY)).await?,
            link_insert: conn.prepare(LINK_INSERT).await?,
            link_update: conn.prepare(LINK_UPDATE).await?,
            link_hide: conn.prepare(LINK_HIDE).await?,
            count_add: conn
                .prepare(if std { COUNT_ADD_STD } else { COUNT_ADD_MYSQL })
                .await?,
            count_sub: conn
                .prepare(if std { COUNT_SUB_STD } else { COUNT_SUB_MYSQL })
                .await?,
            count: conn.prepare(COUNT).await?,
            list: conn.prepare(&sql(dbms, LIST)).await?,
            list_last_time: conn.prepare(&sql(dbms, LIST_LAST_TIME)).await?,
            node_get: conn.prepare(NODE_GET).await?,
            node_add: conn.prepare(NODE_ADD).await?,
            node_update: conn.prepare(NODE_UPDATE).await?,
            node_delete: conn.prepare(NODE_DELETE).await?,
            multiget: Vec::new(),
            ints: Vec::with_capacity(4),
            params: Vec::with_capacity(16),
        };
        for n in 1..=MULTIGET_PREPARED {
            let id = conn.prepare(&multiget_sql(n)).await?;
            st.multiget.push(Some(id));
        }
        Ok(st)
    }

    async fn multiget(&mut self, conn: &mut Conn, n: usize) -> DbResult<StmtId> {
        if self.multiget.len() < n {
            self.multiget.resize(n, None);
        }
        if let Some(id) = self.multiget[n - 1] {
            return Ok(id);
        }
        let id = conn.prepare(&multiget_sql(n)).await?;
        self.multiget[n - 1] = Some(id);
        Ok(id)
    }
}

/// What one request did so far, and the buffer its last [`Tally::ints`] read filled.
struct Tally {
    rows: u64,
    statements: u64,
    ints: Vec<Option<i64>>,
}

impl Tally {
    async fn rows(&mut self, conn: &mut Conn, id: StmtId, params: &[Value]) -> DbResult<u64> {
        self.statements += 1;
        let n = conn.exec_rows(id, params).await?;
        self.rows += n;
        Ok(n)
    }

    /// Run `id` and keep the first column of its rows in `self.ints`.
    async fn ints(&mut self, conn: &mut Conn, id: StmtId, params: &[Value]) -> DbResult<u64> {
        self.statements += 1;
        self.ints.clear();
        let n = conn.exec_ints(id, params, &mut self.ints).await?;
        self.rows += n;
        Ok(n)
    }

    /// The first column of the first row the last `ints` read.
    fn first_int(&self) -> Option<i64> {
        self.ints.first().copied().flatten()
    }

    async fn text(&mut self, conn: &mut Conn, sql: &str) -> DbResult<()> {
        self.statements += 1;
        conn.execute(sql).await
    }

    async fn begin(&mut self, conn: &mut Conn, sql: &str) -> DbResult<()> {
        self.statements += 1;
        conn.begin(sql).await
    }
}

/// addlink and updatelink, as LinkStoreMysql.addLinkImpl: insert or overwrite the link;
/// counttable + 1 when the link was not visible before (updatelink runs the same way).
/// `(id1, link_type, id2)` names the link.
async fn write_link(
    t: &mut Tally,
    conn: &mut Conn,
    st: &Stmts,
    params: &mut Vec<Value>,
    (id1, link_type, id2): (i64, i64, i64),
    data: &str,
    time: i64,
) -> DbResult<()> {
    use Value::Int as I;
    t.begin(conn, begin_sql(st.dbms)).await?;
    let key = [I(link_type), I(id1), I(id2)];
    let found = t.ints(conn, st.link_visibility, &key).await? > 0;
    let was_visible = found && t.first_int() == Some(VISIBILITY_DEFAULT);
    let text = Value::Text(data.to_string());
    params.clear();
    if found {
        params.extend([I(VISIBILITY_DEFAULT), text, I(time), I(0)]);
        params.extend(key);
        t.rows(conn, st.link_update, params).await?;
    } else {
        params.extend([
            I(id1),
            I(id2),
            I(link_type),
            I(VISIBILITY_DEFAULT),
            text,
            I(time),
            I(0),
        ]);
        t.rows(conn, st.link_insert, params).await?;
    }
    if !was_visible {
        t.rows(conn, st.count_add, &[I(id1), I(link_type), I(time)])
            .await?;
    }
    t.text(conn, "COMMIT").await
}

/// LinkStoreMysql.deleteLinkImpl (no expunge): hide a visible link and decrement its count;
/// commit whatever was found.
async fn delete_link(
    t: &mut Tally,
    conn: &mut Conn,
    st: &Stmts,
    params: &mut Vec<Value>,
    (id1, link_type, id2): (i64, i64, i64),
) -> DbResult<()> {
    use Value::Int as I;
    t.begin(conn, begin_sql(st.dbms)).await?;
    let key = [I(link_type), I(id1), I(id2)];
    let found = t.ints(conn, st.link_visibility, &key).await? > 0;
    let visible = found && t.first_int() != Some(VISIBILITY_HIDDEN);
    if visible {
        params.clear();
        params.push(I(VISIBILITY_HIDDEN));
        params.extend(key);
        t.rows(conn, st.link_hide, params).await?;
        let now = now_ms();
        t.rows(conn, st.count_sub, &[I(id1), I(link_type), I(now)])
            .await?;
    }
    t.text(conn, "COMMIT").await
}

/// Run one request. Returns its step and, for a getlinklist that came back full (range
/// limit rows), the time of its oldest row.
pub async fn run(
    st: &mut Stmts,
    conn: &mut Conn,
    input: &Input,
    range_limit: i64,
) -> DbResult<(Step, Option<i64>)> {
    use Value::Int as I;
    let mut t = Tally {
        rows: 0,
        statements: 0,
        ints: std::mem::take(&mut st.ints),
    };
    let mut full = None;
    let mut params = std::mem::take(&mut st.params);
    let r: DbResult<()> = async {
        match input {
            Input::WriteLink {
                id1,
                link_type,
                id2,
                data,
                time,
                ..
            } => {
                let link = (*id1, *link_type, *id2);
                write_link(&mut t, conn, st, &mut params, link, data, *time).await
            }
            Input::DeleteLink {
                id1,
                link_type,
                id2,
            } => delete_link(&mut t, conn, st, &mut params, (*id1, *link_type, *id2)).await,
            Input::CountLink { id1, link_type } => {
                t.rows(conn, st.count, &[I(*id1), I(*link_type)]).await?;
                Ok(())
            }
            Input::GetLink {
                id1,
                link_type,
                id2s,
            } => {
                let id = st.multiget(conn, id2s.len()).await?;
                params.clear();
                params.extend([I(*id1), I(*link_type)]);
                params.extend(id2s.iter().map(|v| I(*v)));
                t.rows(conn, id, &params).await?;
                Ok(())
            }
            Input::GetLinkList {
                id1,
                link_type,
                max_time,
                offset,
                ..
            } => {
                params.clear();
                params.extend([
                    I(*id1),
                    I(*link_type),
                    I(0),
                    I(*max_time),
                    I(VISIBILITY_DEFAULT),
                    I(range_limit),
                    I(*offset),
                ]);
                let n = t.rows(conn, st.list, &params).await?;
                if n as i64 >= range_limit {
                    // The list goes on: note where it stopped (one more statement, only for
                    // lists longer than the limit; LinkBench reads it from the rows).
                    params[5] = I(*offset + range_limit - 1);
                    params.truncate(6);
                    if t.ints(conn, st.list_last_time, &params).await? > 0 {
                        full = t.first_int();
                    }
                }
                Ok(())
            }
            Input::AddNode { data, time } => {
                t.rows(
                    conn,
                    st.node_add,
                    &[I(NODE_TYPE), I(1), I(*time), Value::Text(data.clone())],
                )
                .await?;
                Ok(())
            }
            Input::UpdateNode { id, data, time } => {
                t.rows(
                    conn,
                    st.node_update,
                    &[
                        I(2),
                        I(*time),
                        Value::Text(data.clone()),
                        I(*id),
                        I(NODE_TYPE),
                    ],
                )
                .await?;
                Ok(())
            }
            Input::DeleteNode { id } => {
                t.rows(conn, st.node_delete, &[I(*id), I(NODE_TYPE)])
                    .await?;
                Ok(())
            }
            Input::GetNode { id } => {
                t.rows(conn, st.node_get, &[I(*id)]).await?;
                Ok(())
            }
        }
    }
    .await;
    st.params = params;
    st.ints = t.ints;
    r?;
    Ok((
        Step {
            rows: t.rows,
            statements: t.statements,
            ..Step::default()
        },
        full,
    ))
}
