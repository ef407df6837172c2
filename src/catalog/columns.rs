//! The catalog's columns, in one place: the row `history` reads (one per measured point, with
//! its result's indexed columns) in the order of its CSV and JSON, each column with the SQL that
//! selects it; the figures a point stores; and the headline figures the workloads declare
//! (`SectionOwner::headline_figures`), which the catalog keeps by name without knowing whose
//! they are.

use serde::Serialize;

use super::store::{Store, Val};
use super::Sameness;
use crate::report::Owners;

/// A value of a history row: how it is read from the store and written in a CSV cell.
trait Cell: Sized {
    fn read(v: &Val) -> Self;
    fn cell(&self) -> String;
}

impl Cell for i64 {
    fn read(v: &Val) -> i64 {
        v.int().unwrap_or(0)
    }
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Cell for String {
    fn read(v: &Val) -> String {
        v.text()
    }
    fn cell(&self) -> String {
        self.clone()
    }
}

impl Cell for Option<String> {
    fn read(v: &Val) -> Option<String> {
        v.opt_text()
    }
    fn cell(&self) -> String {
        self.clone().unwrap_or_default()
    }
}

impl Cell for Option<f64> {
    fn read(v: &Val) -> Option<f64> {
        v.real()
    }
    fn cell(&self) -> String {
        self.map(|x| x.to_string()).unwrap_or_default()
    }
}

impl Cell for bool {
    fn read(v: &Val) -> bool {
        v.int().unwrap_or(0) != 0
    }
    fn cell(&self) -> String {
        self.to_string()
    }
}

impl Cell for Sameness {
    fn read(v: &Val) -> Sameness {
        Sameness::from_json(&v.text())
    }
    fn cell(&self) -> String {
        self.to_json()
    }
}

/// Headline figures by name (the declared ones, in the owners' order), each the mean over the
/// runs of a point; written as plain keys of the row's JSON.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures(pub Vec<(String, Option<f64>)>);

impl Figures {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v)
    }
}

impl Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// What a missing cell reads as.
static NULL: Val = Val::Null;

/// Declares `HistoryRow` from its one list of columns (field, type, SQL), with the headline
/// figures where `@figures` stands: the struct, its select list, its reading and its CSV.
macro_rules! history_row {
    (
        $($(#[$a:meta])* $f:ident: $t:ty = $sql:literal,)*
        @figures,
        $($(#[$b:meta])* $g:ident: $u:ty = $sql2:literal,)*
    ) => {
        /// One measured point of a catalogued result, with the result's indexed columns.
        #[derive(Debug, Clone, Serialize)]
        pub struct HistoryRow {
            $($(#[$a])* pub $f: $t,)*
            /// The headline figures the workloads declare (means over the runs).
            #[serde(flatten)]
            pub figures: Figures,
            $($(#[$b])* pub $g: $u,)*
        }

        impl HistoryRow {
            /// The select list (results `r` joined with their points `p`).
            pub(super) fn select(figures: &[String]) -> String {
                let mut cols: Vec<String> = vec![$($sql.to_string()),*];
                cols.extend(figures.iter().map(|f| format!("p.{}", quoted(f))));
                cols.extend([$($sql2.to_string()),*]);
                cols.join(", ")
            }

            /// A row of the select list.
            pub(super) fn read(v: &[Val], figures: &[String]) -> HistoryRow {
                let mut v = v.iter();
                let mut next = || v.next().unwrap_or(&NULL);
                $(let $f = <$t as Cell>::read(next());)*
                let read: Vec<(String, Option<f64>)> =
                    figures.iter().map(|n| (n.clone(), next().real())).collect();
                $(let $g = <$u as Cell>::read(next());)*
                HistoryRow { $($f,)* figures: Figures(read), $($g,)* }
            }

            /// The CSV's header.
            pub(super) fn header(figures: &[String]) -> Vec<String> {
                let mut h: Vec<String> = vec![$(stringify!($f).to_string()),*];
                h.extend(figures.iter().cloned());
                h.extend([$(stringify!($g).to_string()),*]);
                h
            }

            /// The row's CSV cells, in the header's order.
            pub(super) fn cells(&self) -> Vec<String> {
                let mut c: Vec<String> = vec![$(self.$f.cell()),*];
                c.extend(self.figures.0.iter().map(|(_, v)| v.cell()));
                c.extend([$(self.$g.cell()),*]);
                c
            }
        }
    };
}

history_row! {
    id: i64 = "r.id",
    started_at: String = "r.started_at",
    status: String = "r.status",
    workload: String = "r.workload",
    operation: String = "p.operation",
    threads: i64 = "p.threads",
    dbms: String = "r.dbms",
    server_version: String = "r.server_version",
    engine: String = "r.engine",
    /// The workload's options (storage format, variant), as compact JSON; "" when none.
    options: String = "r.options",
    profile: Option<String> = "r.profile",
    settings_fingerprint: String = "r.settings_fingerprint",
    host: String = "r.host",
    tool_version: String = "r.tool_version",
    fleet: Option<String> = "r.fleet",
    runs: i64 = "p.runs",
    ops_per_s: Option<f64> = "p.ops_per_s",
    ops_per_s_sd: Option<f64> = "p.ops_per_s_sd",
    ops_per_s_min: Option<f64> = "p.ops_per_s_min",
    ops_per_s_max: Option<f64> = "p.ops_per_s_max",
    p99_us: Option<f64> = "p.p99_us",
    client_us_per_op: Option<f64> = "p.client_us_per_op",
    server_us_per_op: Option<f64> = "p.server_us_per_op",
    @figures,
    disturbed: bool = "p.disturbed",
    client_sleeps_per_op: Option<f64> = "p.client_sleeps_per_op",
    /// The result's configuration (catalog/same.rs): its identity, its work's, and its parts.
    config_id: String = "r.config_id",
    work_id: String = "r.work_id",
    #[serde(serialize_with = "parts_json")]
    config: Sameness = "r.config_parts",
}

fn parts_json<S: serde::Serializer>(v: &Sameness, s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(2))?;
    m.serialize_entry("work", &v.work)?;
    m.serialize_entry("setup", &v.setup)?;
    m.end()
}

/// A figure's column name, quoted for both stores (names are checked by [`headline`]).
fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

/// The headline figures `owners` declare, each once, in their order. A name must be a
/// lower-case word (letters, digits, `_`) that is not already a column of a point.
pub fn headline(owners: Owners) -> std::result::Result<Vec<String>, String> {
    let common = super::PointStats::default().columns();
    let taken = |n: &str| PLACE.contains(&n) || common.iter().any(|(c, _)| c == n);
    let mut names: Vec<String> = Vec::new();
    for o in owners {
        for &n in o.headline_figures() {
            let word = n.starts_with(|c: char| c.is_ascii_lowercase())
                && n.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !word || taken(n) {
                return Err(format!(
                    "{} declares the headline figure {n:?}: give a lower-case word (letters, digits, _) that is not a column of a point",
                    o.key()
                ));
            }
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    Ok(names)
}

/// The columns of `points` that place a point: its result, its place there, its operation,
/// threads and runs (`PointStats::columns` are the figures that follow).
const PLACE: [&str; 5] = ["result_id", "seq", "operation", "threads", "runs"];

/// Add a column to `points` for every headline figure it does not have yet; the names added.
/// Runs inside the migration's transaction (one writer at a time).
pub(super) fn add_figure_columns(
    store: &mut Store,
    figures: &[String],
) -> std::result::Result<Vec<String>, String> {
    let have = store.point_columns()?;
    let mut added = Vec::new();
    for f in figures.iter().filter(|f| !have.contains(f)) {
        let sql = store.ddl(&format!(
            "ALTER TABLE points ADD COLUMN {} {{REAL}}",
            quoted(f)
        ));
        store.exec(&sql, &[])?;
        added.push(f.clone());
    }
    Ok(added)
}

/// The statement that stores one point: its place (`PLACE`), then `columns` (those of
/// [`super::PointStats::columns`]).
pub(super) fn insert_point(columns: &[(String, Val)]) -> String {
    let names: Vec<String> = PLACE
        .iter()
        .map(|n| n.to_string())
        .chain(columns.iter().map(|(n, _)| quoted(n)))
        .collect();
    let marks = vec!["?"; names.len()].join(", ");
    format!("INSERT INTO points ({}) VALUES ({marks})", names.join(", "))
}

/// The statement that sets one figure of a stored point.
pub(super) fn update_figure(name: &str) -> String {
    format!(
        "UPDATE points SET {} = ? WHERE result_id = ? AND seq = ?",
        quoted(name)
    )
}

#[cfg(test)]
mod tests {
    use super::super::{Catalog, Filter, Location};
    use super::*;
    use crate::model::{Point, ResultDoc, RunRecord};
    use crate::report::SectionOwner;

    struct Declares(&'static [&'static str]);

    impl SectionOwner for Declares {
        fn key(&self) -> &'static str {
            "w"
        }
        fn headline_figures(&self) -> &'static [&'static str] {
            self.0
        }
    }

    fn doc(started_at: &str, figure: f64) -> String {
        let run = |x: f64| RunRecord {
            ops_per_s: 100.0,
            figures: [("x_per_s".to_string(), x)].into(),
            ..Default::default()
        };
        crate::report::json::to_string(&ResultDoc {
            schema_version: 2,
            started_at: started_at.into(),
            config: serde_json::json!({"workload": "w"}),
            points: vec![Point {
                operation: "op".into(),
                threads: 1,
                runs: vec![run(figure), run(figure + 2.0)],
                ..Default::default()
            }],
            ..Default::default()
        })
    }

    /// A headline figure declared after results were recorded gets its column, filled from
    /// the stored files as a new record fills it; the CSV and the JSON name it.
    #[test]
    fn a_figure_declared_later_is_filled_from_the_stored_files() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Location::Sqlite(dir.path().join("c.db"));
        let mut c = Catalog::open(&loc, &[]).unwrap();
        c.record(&doc("2026-11-27T10:00:00Z", 1.0), "a", &[])
            .unwrap();
        assert!(c.history(&Filter::default()).unwrap()[0]
            .figures
            .0
            .is_empty());
        drop(c);
        let owner = Declares(&["x_per_s"]);
        let owners: &[&dyn SectionOwner] = &[&owner];
        let mut c = Catalog::open(&loc, owners).unwrap();
        c.record(&doc("2026-11-27T11:00:00Z", 5.0), "b", owners)
            .unwrap();
        let rows = c.history(&Filter::default()).unwrap();
        let got: Vec<Option<f64>> = rows.iter().map(|r| r.figures.get("x_per_s")).collect();
        assert_eq!(got, [Some(2.0), Some(6.0)]);
        let csv = super::super::history_csv(&rows, c.figures());
        assert!(
            csv.contains(",server_us_per_op,x_per_s,disturbed,"),
            "{csv}"
        );
        let json = serde_json::to_value(&rows[1]).unwrap();
        assert_eq!(json["x_per_s"], 6.0);
    }

    #[test]
    fn a_figure_is_a_new_lower_case_word() {
        const BAD: [&[&str]; 5] = [&["ops_per_s"], &["X"], &["a b"], &["1x"], &["a\"b"]];
        for bad in BAD {
            let owner = Declares(bad);
            assert!(headline(&[&owner]).is_err(), "{bad:?}");
        }
        let (a, b) = (Declares(&["x", "y"]), Declares(&["y"]));
        assert_eq!(headline(&[&a, &b]).unwrap(), ["x", "y"]);
    }
}
