//! One LinkBench request as the requester drew it (`driver`) and as the statements run it
//! (`ops`), and the two small things both need: how a write transaction begins and the clock.

use super::props::*;
use crate::db::Dbms;

/// One drawn request, kept whole so that a retry runs the same input.
#[derive(Debug, Clone)]
pub enum Input {
    /// addlink and updatelink (LinkBench runs both as addLink).
    WriteLink {
        kind: u8,
        id1: i64,
        link_type: i64,
        id2: i64,
        data: String,
        time: i64,
    },
    DeleteLink {
        id1: i64,
        link_type: i64,
        id2: i64,
    },
    CountLink {
        id1: i64,
        link_type: i64,
    },
    GetLink {
        id1: i64,
        link_type: i64,
        id2s: Vec<i64>,
    },
    GetLinkList {
        id1: i64,
        link_type: i64,
        max_time: i64,
        offset: i64,
        /// Paging back into history slot n.
        history: Option<usize>,
    },
    AddNode {
        data: String,
        time: i64,
    },
    UpdateNode {
        id: i64,
        data: String,
        time: i64,
    },
    DeleteNode {
        id: i64,
    },
    GetNode {
        id: i64,
    },
}

impl Input {
    pub fn kind(&self) -> u8 {
        match self {
            Input::WriteLink { kind, .. } => *kind,
            Input::DeleteLink { .. } => DELETE_LINK,
            Input::CountLink { .. } => COUNT_LINK,
            Input::GetLink { .. } => GET_LINK,
            Input::GetLinkList { .. } => GET_LINK_LIST,
            Input::AddNode { .. } => ADD_NODE,
            Input::UpdateNode { .. } => UPDATE_NODE,
            Input::DeleteNode { .. } => DELETE_NODE,
            Input::GetNode { .. } => GET_NODE,
        }
    }
}

/// Start a write transaction (SQLite: take the write lock at once).
pub fn begin_sql(dbms: Dbms) -> &'static str {
    match dbms {
        Dbms::Sqlite => "BEGIN IMMEDIATE",
        Dbms::Mysql => "START TRANSACTION",
        Dbms::Postgres => "BEGIN",
    }
}

/// Milliseconds since the Unix epoch (LinkBench's `time` columns).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
