//! Statements that are not prepared on the server (`--statements text|extended`): the SQL is
//! kept here and sent with every execution. Text: one simple Query message with the parameters
//! written into the SQL as literals (`db::text`), as pgbench `-M simple`. Extended: Parse of the
//! unnamed statement, Bind (parameters in text format, types left to the server as at a named
//! Parse), Execute and Sync, as pgbench `-M extended`. Either way the rows come back in the
//! text format, as the prepared path reads them.

use super::*;
use crate::db::text::{Quoting, TextStmt};
use crate::db::Dbms;

impl PgWireConn {
    /// Keep statement `sql` for text or extended executions; returns its index.
    pub(super) fn keep_unprepared(&mut self, sql: &str) -> usize {
        let st = TextStmt::new(sql, Dbms::Postgres);
        if self.mode == StatementMode::Extended {
            self.unnamed.push(st.numbered());
        }
        self.texts.push(st);
        self.texts.len() - 1
    }

    /// Append the messages of one execution of statement `idx` to `w` (`with_sync`: the
    /// extended form ends with its Sync; a text Query needs none).
    fn unprepared_messages(
        mode: StatementMode,
        texts: &[TextStmt],
        unnamed: &[String],
        w: &mut Vec<u8>,
        idx: usize,
        params: &[Value],
    ) -> DbResult<()> {
        let Some(st) = texts.get(idx) else {
            return Err(DbError::new(ErrorClass::Other, "unknown statement"));
        };
        if mode == StatementMode::Text {
            let mark = w.len();
            let at = msg::begin(w, b'Q');
            if let Err(e) = st.render(w, Quoting::Postgres, params) {
                w.truncate(mark);
                return Err(e);
            }
            w.push(0);
            msg::finish(w, at);
            return Ok(());
        }
        st.check_params(params)?;
        msg::parse(w, "", &unnamed[idx]);
        msg::bind(w, "", params);
        msg::execute(w);
        Ok(())
    }

    /// One execution of statement `idx` in `wbuf` (Query, or Parse + Bind + Execute + Sync).
    pub(super) fn write_unprepared(&mut self, idx: usize, params: &[Value]) -> DbResult<()> {
        Self::unprepared_messages(
            self.mode,
            &self.texts,
            &self.unnamed,
            &mut self.wbuf,
            idx,
            params,
        )?;
        if self.mode == StatementMode::Extended {
            msg::sync(&mut self.wbuf);
        }
        Ok(())
    }

    /// `defer_exec` without a prepared statement: a text Query is queued like a deferred
    /// BEGIN (its own reply); an extended execution joins the open pipeline under its Sync.
    pub(super) fn defer_unprepared(&mut self, idx: usize, params: &[Value]) -> DbResult<()> {
        if self.mode == StatementMode::Text {
            self.close_pipe();
        }
        Self::unprepared_messages(
            self.mode,
            &self.texts,
            &self.unnamed,
            &mut self.deferred,
            idx,
            params,
        )?;
        if self.mode == StatementMode::Text {
            self.owed += 1;
        } else {
            self.pipe_open = true;
        }
        Ok(())
    }

    /// `begin_in_pipe` without prepared utility statements: text mode queues BEGIN as a Query
    /// (`defer`); extended mode parses it as the unnamed statement at the head of the pipeline
    /// (and `commit_pipelined` then parses COMMIT the same way).
    pub(super) fn begin_unprepared(&mut self, sql: &str) {
        if self.mode == StatementMode::Text {
            self.defer(sql);
            return;
        }
        let d = &mut self.deferred;
        msg::parse(d, "", sql);
        msg::bind(d, "", &[]);
        msg::execute(d);
        self.pipe_open = true;
        // As in `defer`: the loop holds no reply from the write of this BEGIN on.
        self.sock.in_transaction(true);
    }
}
