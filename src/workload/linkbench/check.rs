//! `enginebench check linkbench`: counttable holds, for every (id1, link_type), the number of
//! visible links in linktable (LinkStoreMysql's testCount, for the whole graph at once).

use crate::db::Conn;
use crate::error::{Error, Result};

/// Pairs whose visible links and count disagree: visible pairs with a wrong or missing count,
/// then counts > 0 with no visible link.
const MISMATCHED: &str = "SELECT v.id1, v.link_type, v.n, c.count FROM \
(SELECT id1, link_type, COUNT(*) AS n FROM linktable WHERE visibility = 1 GROUP BY id1, link_type) v \
LEFT JOIN counttable c ON c.id = v.id1 AND c.link_type = v.link_type \
WHERE c.count IS NULL OR c.count <> v.n \
UNION ALL \
SELECT c.id, c.link_type, 0, c.count FROM counttable c WHERE c.count <> 0 AND NOT EXISTS \
(SELECT 1 FROM linktable l WHERE l.id1 = c.id AND l.link_type = c.link_type AND l.visibility = 1)";

const PAIRS: &str = "SELECT COUNT(*) FROM (SELECT id1, link_type FROM linktable WHERE visibility = 1 GROUP BY id1, link_type) p";
const VISIBLE: &str = "SELECT COUNT(*) FROM linktable WHERE visibility = 1";

pub struct Report {
    /// (id1, link_type) pairs with visible links.
    pub pairs: u64,
    pub visible_links: u64,
    /// (id1, link_type, visible links, count) of every pair that disagrees.
    pub mismatches: Vec<(String, String, String, String)>,
}

fn n(v: Option<String>) -> u64 {
    v.and_then(|s| s.trim().parse::<u64>().ok()).unwrap_or(0)
}

pub async fn run(conn: &mut Conn) -> Result<Report> {
    let db = |e: crate::db::DbError| Error::run(format!("checking counttable: {}", e.message));
    for t in super::data::TABLES {
        if !conn.table_exists(t).await.map_err(db)? {
            return Err(Error::usage(format!(
                "table {t} is missing: prepare the linkbench workload first (enginebench prepare linkbench)"
            )));
        }
    }
    let rows = conn.query(MISMATCHED).await.map_err(db)?;
    let s = |v: &Option<String>| v.clone().unwrap_or_else(|| "NULL".into());
    Ok(Report {
        pairs: n(conn.query_one(PAIRS).await.map_err(db)?),
        visible_links: n(conn.query_one(VISIBLE).await.map_err(db)?),
        mismatches: rows
            .iter()
            .map(|r| (s(&r[0]), s(&r[1]), s(&r[2]), s(&r[3])))
            .collect(),
    })
}
