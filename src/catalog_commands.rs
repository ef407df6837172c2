//! The commands that read or fill the catalog: `history`, `history import`, `catalog path`,
//! `compare --baseline catalog:last=N` (its baseline), `compare --between-start catalog:last=N`
//! (a between-start spread from past results) and `report --trend`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::catalog::{self, Catalog, Filter, Recorded};
use crate::cli::{
    CatalogAction, CatalogCommandArgs, CompareArgs, FilterArgs, HistoryAction, HistoryArgs,
};
use crate::error::{Error, Result};
use crate::model::{Point, ResultDoc};
use crate::registry::Registry;
use crate::report::compare::BetweenStart;
use crate::report::{self, Owners};

/// `enginebench catalog path`.
pub fn catalog(a: &CatalogCommandArgs) -> Result<ExitCode> {
    match a.action {
        CatalogAction::Path => {
            println!("{}", a.catalog.location()?.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn open(loc: &catalog::Location, owners: Owners) -> Result<Catalog> {
    if *loc == catalog::Location::Off {
        return Err(Error::usage(
            "the catalog is off (--no-catalog or ENGINEBENCH_CATALOG=off): nothing to read",
        ));
    }
    Catalog::open(loc, owners)
}

/// The filter `a` asks for, its `--same-as` resolved to the configuration of the result it
/// names (a result file or folder, or a catalogued result's id).
fn filter_of(a: &FilterArgs, cat: &mut Catalog, owners: Owners) -> Result<Filter> {
    let mut f = a.filter()?;
    if let Some(r) = &a.same_as {
        let id = r.strip_prefix('#').unwrap_or(r);
        f.config = Some(match id.parse::<i64>() {
            Ok(id) if !Path::new(r).exists() => cat.config_of(id)?.ok_or_else(|| {
                Error::usage(format!("--same-as {r}: no result #{id} in the catalog"))
            })?,
            _ => {
                let doc = report::load(Path::new(r), owners)
                    .map_err(|e| Error::usage(format!("--same-as {r}: {}", e.message)))?;
                catalog::Sameness::of(&doc, owners).key()
            }
        });
    }
    Ok(f)
}

/// `enginebench history [import DIR...]`.
pub fn history(a: &HistoryArgs, reg: &Registry) -> Result<ExitCode> {
    let loc = a.catalog.location()?;
    if let Some(HistoryAction::Import { paths }) = &a.action {
        return import(&loc, paths, &reg.owners());
    }
    let owners = reg.owners();
    let mut cat = open(&loc, &owners)?;
    let filter = filter_of(&a.filter, &mut cat, &owners)?;
    let rows = cat.history(&filter)?;
    let text = match a.format {
        crate::cli::HistoryFormat::Table if a.wide => catalog::history_wide(&rows),
        crate::cli::HistoryFormat::Table => catalog::history_table(&rows),
        crate::cli::HistoryFormat::Csv => catalog::history_csv(&rows, cat.figures()),
        crate::cli::HistoryFormat::Json => {
            let mut t = serde_json::to_string_pretty(&rows).expect("rows serialize");
            t.push('\n');
            t
        }
    };
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// The result files under `path`: itself, its result.json, or those of the folders below it
/// (a suite's cells, a results folder), a few levels deep.
fn result_files(path: &Path, depth: usize, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let own = path.join("result.json");
    if own.is_file() {
        out.push(own);
        return Ok(());
    }
    if depth == 0 {
        return Ok(());
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    for s in subs {
        result_files(&s, depth - 1, out)?;
    }
    Ok(())
}

fn import(loc: &catalog::Location, paths: &[PathBuf], owners: Owners) -> Result<ExitCode> {
    let mut files = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(Error::usage(format!(
                "{}: no such file or folder",
                p.display()
            )));
        }
        result_files(p, 3, &mut files)
            .map_err(|e| Error::usage(format!("cannot read {}: {e}", p.display())))?;
    }
    if files.is_empty() {
        return Err(Error::usage(format!(
            "no result.json in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut cat = open(loc, owners)?;
    let (mut added, mut already, mut skipped) = (0, 0, 0);
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("skipped {}: {e}", f.display());
                skipped += 1;
                continue;
            }
        };
        // The full path, so that `history` can point back at the folder.
        let source = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        match cat.record(&text, &source.display().to_string(), owners) {
            Ok(Recorded::Added(_)) => added += 1,
            Ok(Recorded::Already(_)) => already += 1,
            // A file that is not a result (a suite's plan copy, a half-written file) is
            // skipped and named; the others still go in.
            Err(e)
                if e.failure == crate::error::Failure::Usage
                    && !e.message.starts_with("catalog ") =>
            {
                eprintln!("skipped {}", crate::error::one_line(&e.message));
                skipped += 1;
            }
            Err(e) => return Err(e),
        }
    }
    eprintln!(
        "imported {added} new result(s) into {}; {already} already there{}",
        loc.display(),
        if skipped > 0 {
            format!(", {skipped} skipped")
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// `compare NEW --baseline catalog:last=N`: the baseline (A) and the result (B). A is the N
/// catalogued results, each one server start and so one observation for the verdicts (the
/// spread of their means is the between-start spread, N − 1 degrees of freedom), each cut to
/// NEW's points in NEW's order; beside them one document of their pooled runs, which stands
/// for A where a single document is shown (labels, settings, profiled functions).
pub fn baseline(
    a: &CompareArgs,
    spec: &str,
    owners: Owners,
) -> Result<(ResultDoc, Vec<ResultDoc>, ResultDoc)> {
    let n: usize = spec
        .strip_prefix("catalog:last=")
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            Error::usage(format!(
                "--baseline {spec}: expected catalog:last=N (N at least 1), e.g. catalog:last=5"
            ))
        })?;
    if a.filter.last.is_some() {
        return Err(Error::usage(
            "--last does not go with --baseline: the count is in catalog:last=N",
        ));
    }
    let loc = a.catalog.location()?;
    let (file, new, identity) = with_identity(&a.a, owners)?;
    let mut cat = open(&loc, owners)?;
    let mut filter = filter_of(&a.filter, &mut cat, owners)?;
    let same = comparable(&mut filter, &new, owners);
    let ids = cat.baseline(&filter, &identity, &new.started_at, n)?;
    if ids.is_empty() {
        return Err(Error::usage(format!(
            "no comparable result in the catalog {} (the same configuration {same} as {}, started before it): record some first{}",
            loc.display(),
            file.display(),
            nearest(&mut cat, &filter, &identity, &new, owners)?
        )));
    }
    let docs = ids
        .iter()
        .map(|id| cat.doc(*id, owners))
        .collect::<Result<Vec<_>>>()?;
    let list: Vec<String> = ids.iter().map(|i| format!("#{i}")).collect();
    eprintln!(
        "baseline: {} catalogued result(s) pooled ({}; {} of the {n} asked for found of configuration {same}), from {}; each is one server start, one observation of the between-start spread{}",
        ids.len(),
        list.join(", "),
        ids.len(),
        loc.display(),
        if ids.len() < 2 {
            " (one result has no spread: significance unknown unless --between-start gives one)"
        } else {
            ""
        }
    );
    let results = docs.iter().map(|d| cut(d, &new)).collect();
    Ok((pooled(&docs, &new), results, new))
}

/// Why nothing was comparable, in words: how the newest earlier result of the same workload,
/// target kind, engine and host differs from `new` ("" when there is none).
fn nearest(
    cat: &mut Catalog,
    filter: &Filter,
    identity: &str,
    new: &ResultDoc,
    owners: Owners,
) -> Result<String> {
    let mut wider = filter.clone();
    wider.config = None;
    let Some(id) = cat
        .baseline(&wider, identity, &new.started_at, 1)?
        .first()
        .copied()
    else {
        return Ok(String::new());
    };
    let changes = cat
        .config_parts(id)?
        .changes_to(&catalog::Sameness::of(new, owners));
    let n = changes.len();
    let mut words: Vec<String> = changes.into_iter().take(4).collect();
    if n > 4 {
        words.push(format!("{} more", n - 4));
    }
    Ok(format!(
        "; the newest earlier result of this workload, #{id}, differs in: {}",
        words.join("; ")
    ))
}

/// The result at `path` (a result.json or its folder): its file, the document, and the
/// identity the catalog records it under (which a baseline leaves out).
fn with_identity(path: &Path, owners: Owners) -> Result<(PathBuf, ResultDoc, String)> {
    let file = if path.is_dir() {
        path.join("result.json")
    } else {
        path.to_path_buf()
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::usage(format!("cannot read {}: {e}", file.display())))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Error::usage(format!(
            "{} is not an enginebench result: {e}",
            file.display()
        ))
    })?;
    let doc = report::load(&file, owners)?;
    Ok((file, doc, catalog::identity(&value)))
}

/// `compare A B --between-start catalog:last=N`: the between-start spread of A's
/// configuration from the catalog — the newest N complete results like A (same workload,
/// target kind, engine and host, narrowed by the filters) started before both A and B, so
/// neither compared result is part of its own yardstick. Each is one server start.
pub fn between_start(a: &CompareArgs, spec: &str, owners: Owners) -> Result<BetweenStart> {
    let n: usize = spec
        .strip_prefix("catalog:last=")
        .and_then(|n| n.parse().ok())
        .filter(|n| *n >= 2)
        .ok_or_else(|| {
            Error::usage(format!(
                "--between-start {spec}: expected a calibration.json or catalog:last=N (N at least 2), e.g. catalog:last=8"
            ))
        })?;
    let Some(b) = &a.b else {
        return Err(Error::usage(
            "--between-start catalog:last=N compares two results: with --baseline the baseline's own results give the spread",
        ));
    };
    if a.filter.last.is_some() {
        return Err(Error::usage(
            "--last does not go with --between-start catalog:last=N: the count is in N",
        ));
    }
    let (_, da, identity) = with_identity(&a.a, owners)?;
    let db = report::load(b, owners)?;
    let before = std::cmp::min(&da.started_at, &db.started_at).clone();
    let loc = a.catalog.location()?;
    let mut cat = open(&loc, owners)?;
    let mut filter = filter_of(&a.filter, &mut cat, owners)?;
    let same = comparable(&mut filter, &da, owners);
    // A's identity excludes A itself; "started before" excludes B and anything later.
    let ids = cat.baseline(&filter, &identity, &before, n)?;
    let docs = ids
        .iter()
        .map(|id| cat.doc(*id, owners))
        .collect::<Result<Vec<_>>>()?;
    let points: Vec<(String, usize)> = da
        .points
        .iter()
        .map(|p| (p.operation.clone(), p.threads))
        .collect();
    let source = format!(
        "{spec} ({} of {n} found of configuration {same} in {})",
        ids.len(),
        loc.display()
    );
    let spread = BetweenStart::from_results(&docs, &points, &source).map_err(Error::usage)?;
    eprintln!(
        "between-start spread: sd of ln(B/A) {:.1} % ({} df) from {} catalogued result(s) ({}) started before A and B; each is one server start",
        spread.sd * 100.0,
        spread.df,
        ids.len(),
        ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", ")
    );
    Ok(spread)
}

/// `doc` with only the points `new` has, in `new`'s order.
fn cut(doc: &ResultDoc, new: &ResultDoc) -> ResultDoc {
    let mut out = doc.clone();
    out.points = new
        .points
        .iter()
        .filter_map(|np| {
            doc.points
                .iter()
                .find(|p| p.operation == np.operation && p.threads == np.threads)
                .cloned()
        })
        .collect();
    out
}

/// Results of the same configuration as `new` (catalog/same.rs: the same work, options,
/// server, settings, client path and host; a comparison across them would measure the
/// difference of setup), unless `--same-as` named another; returns the identity used.
fn comparable(f: &mut Filter, new: &ResultDoc, owners: Owners) -> String {
    let id = f
        .config
        .get_or_insert_with(|| catalog::Sameness::of(new, owners).key())
        .clone();
    if f.workload.is_none() {
        f.workload = new
            .config
            .get("workload")
            .and_then(|w| w.as_str())
            .map(str::to_string)
            .or_else(|| new.points.first().map(|p| p.workload.clone()));
    }
    if f.target.is_none() && !new.target.dbms.is_empty() {
        f.target = Some(new.target.dbms.clone());
    }
    if f.engine.is_none() && !new.target.engine.is_empty() {
        f.engine = Some(new.target.engine.clone());
    }
    if f.host.is_none() && !new.host.hostname.is_empty() {
        f.host = Some(new.host.hostname.clone());
    }
    id
}

/// One result whose every point of `new` holds the measured runs of that point in all of
/// `docs` (newest first): what the terminal shows as the baseline's document (its settings,
/// its profiled functions). The verdicts count the results, not these runs.
fn pooled(docs: &[ResultDoc], new: &ResultDoc) -> ResultDoc {
    let mut out = docs[0].clone();
    out.points = new
        .points
        .iter()
        .filter_map(|np| {
            let runs: Vec<_> = docs
                .iter()
                .flat_map(|d| {
                    d.points
                        .iter()
                        .filter(|p| p.operation == np.operation && p.threads == np.threads)
                        .flat_map(|p| p.runs.iter().cloned())
                })
                .collect();
            (!runs.is_empty()).then(|| Point {
                workload: np.workload.clone(),
                operation: np.operation.clone(),
                threads: np.threads,
                runs,
                ..Point::default()
            })
        })
        .collect();
    out.notes = vec![format!(
        "Baseline pooled from {} catalogued result(s) started {} to {}.",
        docs.len(),
        docs.last().map_or("", |d| d.started_at.as_str()),
        docs[0].started_at
    )];
    out
}

/// `report --trend`: the trend page of the catalogued results the filters select.
pub fn trend(a: &crate::cli::ReportArgs, reg: &Registry) -> Result<ExitCode> {
    if a.format != crate::cli::ReportFormat::Html {
        return Err(Error::usage(
            "--trend draws a page: leave out --format (or give html)",
        ));
    }
    let loc = a.catalog.location()?;
    let owners = reg.owners();
    let mut cat = open(&loc, &owners)?;
    let filter = filter_of(&a.filter, &mut cat, &owners)?;
    let rows = cat.history(&filter)?;
    if rows.is_empty() {
        return Err(Error::usage(format!(
            "no catalogued result passes the filters (catalog {})",
            loc.display()
        )));
    }
    let html = catalog::trend::page(&rows, &mut cat, &loc.display())?;
    report::json::write_report(&a.output_path(), &html)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{CatalogArgs, CompareFormat, FilterArgs};
    use crate::model::{RunRecord, Status};
    use crate::report::compare::{compare_sides, SpreadFrom, Verdict};

    /// A complete result of workload "w" started on `day`, its one point's three runs at
    /// `ops` ± 0.1 %.
    fn result(day: u32, ops: f64) -> ResultDoc {
        ResultDoc {
            schema_version: 2,
            status: Status::Complete,
            started_at: format!("2026-11-{day:02}T03:00:00Z"),
            config: serde_json::json!({"workload": "w"}),
            points: vec![Point {
                workload: "w".into(),
                operation: "op".into(),
                threads: 4,
                runs: [0.999, 1.0, 1.001]
                    .iter()
                    .map(|f| RunRecord {
                        ops_per_s: ops * f,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// `compare A` on the catalog `cat`, every other option at its default.
    fn compare_args(a: PathBuf, cat: &Path) -> CompareArgs {
        CompareArgs {
            a,
            b: None,
            baseline: None,
            filter: FilterArgs::default(),
            catalog: CatalogArgs {
                catalog: Some(cat.display().to_string()),
                no_catalog: false,
            },
            format: CompareFormat::Table,
            fail_on: None,
            between_start: None,
        }
    }

    /// Five nights whose means spread by 10 % (log scale) around 1000 ops/s.
    fn five_nights() -> Vec<f64> {
        [-1.6f64, -0.4, 0.0, 0.4, 1.6]
            .iter()
            .map(|z| 1000.0 * (0.1 * z.signum() * z.abs().sqrt()).exp())
            .collect()
    }

    /// The baseline from a real (SQLite) catalog, and the ops_per_s row of NEW against it.
    fn ops_row(dir: &Path, nights: &[f64], new: f64, last: usize) -> report::compare::Row {
        let cat = dir.join("catalog.db");
        let loc = catalog::Location::Sqlite(cat.clone());
        let mut c = Catalog::open(&loc, &[]).unwrap();
        for (i, ops) in nights.iter().enumerate() {
            let text = report::json::to_string(&result(1 + i as u32, *ops));
            c.record(&text, &format!("r{i}"), &[]).unwrap();
        }
        drop(c);
        let file = dir.join("new.json");
        std::fs::write(&file, report::json::to_string(&result(20, new))).unwrap();
        let args = CompareArgs {
            baseline: Some(format!("catalog:last={last}")),
            ..compare_args(file, &cat)
        };
        let (_, side_a, new) = baseline(&args, args.baseline.as_deref().unwrap(), &[]).unwrap();
        assert_eq!(side_a.len(), last.min(nights.len()));
        let rows = compare_sides(&side_a, std::slice::from_ref(&new), None);
        rows.into_iter().find(|r| r.metric == "ops_per_s").unwrap()
    }

    /// Five catalogued results whose means spread by 10 % (log scale), each with runs that
    /// agree to ±0.1 %: the results are the units, so a 5 % drop is within the spread of the
    /// recent past (prediction interval t(4) · 10 % · sqrt(1.2) = 30 %) and a 50 % drop is not.
    #[test]
    fn the_catalog_baseline_counts_results_not_runs() {
        let five = five_nights();
        let dir = tempfile::tempdir().unwrap();
        let r = ops_row(dir.path(), &five, 950.0, 5);
        assert_eq!(r.verdict, Verdict::WithinNoise, "{r:?}");
        assert_eq!(r.basis.starts, [5, 1]);
        let s = r.basis.spread.as_ref().unwrap();
        assert_eq!((s.from, s.df), (SpreadFrom::Results, 4.0));
        assert!((s.sd.unwrap() - 0.1).abs() < 1e-6, "{s:?}");
        let dir = tempfile::tempdir().unwrap();
        let r = ops_row(dir.path(), &five, 500.0, 5);
        assert_eq!(r.verdict, Verdict::Significant, "{r:?}");
        // One catalogued result is one start against one: no spread, significance unknown.
        let dir = tempfile::tempdir().unwrap();
        let r = ops_row(dir.path(), &five, 500.0, 1);
        assert_eq!(r.verdict, Verdict::Unknown, "{r:?}");
        assert_eq!(r.basis.starts, [1, 1]);
    }

    /// `compare A B --between-start catalog:last=N`: the spread comes from the catalogued
    /// results started before both A and B (never A or B themselves), one value per result,
    /// √2 times the spread of one start; a 5 % drop is then within noise and a 50 % drop is
    /// significant. Fewer than two earlier results is a usage error.
    #[test]
    fn a_catalog_between_start_spread_judges_two_single_starts() {
        let five = five_nights();
        let row = |nights: &[f64], a: f64, b: f64, last: usize| {
            let dir = tempfile::tempdir().unwrap();
            let cat = dir.path().join("catalog.db");
            let mut c = Catalog::open(&catalog::Location::Sqlite(cat.clone()), &[]).unwrap();
            for (i, ops) in nights.iter().enumerate() {
                let text = report::json::to_string(&result(1 + i as u32, *ops));
                c.record(&text, &format!("r{i}"), &[]).unwrap();
            }
            // A and B are catalogued too (as a run records them): still left out.
            let (fa, fb) = (dir.path().join("a.json"), dir.path().join("b.json"));
            for (f, ops, day) in [(&fa, a, 20), (&fb, b, 21)] {
                let text = report::json::to_string(&result(day, ops));
                c.record(&text, &format!("{day}"), &[]).unwrap();
                std::fs::write(f, text).unwrap();
            }
            drop(c);
            let spec = format!("catalog:last={last}");
            let args = CompareArgs {
                b: Some(fb),
                between_start: Some(spec.clone().into()),
                ..compare_args(fa, &cat)
            };
            let spread = between_start(&args, &spec, &[])?;
            let (da, db) = (
                report::load(&args.a, &[]).unwrap(),
                report::load(args.b.as_ref().unwrap(), &[]).unwrap(),
            );
            let rows = compare_sides(&[da], &[db], Some(&spread));
            Ok::<_, Error>((
                spread,
                rows.into_iter().find(|r| r.metric == "ops_per_s").unwrap(),
            ))
        };
        let (spread, r) = row(&five, 1000.0, 950.0, 5).unwrap();
        assert_eq!((spread.from, spread.df), (SpreadFrom::History, 4));
        assert!(
            (spread.sd - 0.1 * 2f64.sqrt()).abs() < 1e-6,
            "the five nights' sd (10 %) times sqrt 2: {spread:?}"
        );
        assert_eq!(r.verdict, Verdict::WithinNoise, "{r:?}");
        assert_eq!(r.basis.spread.as_ref().unwrap().from, SpreadFrom::History);
        let (_, r) = row(&five, 1000.0, 500.0, 5).unwrap();
        assert_eq!(r.verdict, Verdict::Significant, "{r:?}");
        // The newest two only: their spread, not the five's.
        let (spread, _) = row(&five, 1000.0, 950.0, 2).unwrap();
        assert_eq!(spread.df, 1);
        let e = row(&five[..1], 1000.0, 950.0, 5).unwrap_err().to_string();
        assert!(e.contains("fewer than two comparable results"), "{e}");
        let e = row(&five, 1000.0, 950.0, 1).unwrap_err().to_string();
        assert!(e.contains("N at least 2"), "{e}");
    }
}
