//! `enginebench run sqlbench` inside the run harness: the selected operations on each engine
//! in turn, one fresh work connection per engine, the section saved after every group. The
//! harness starts and stops the server, writes the result's header and status, and prints the
//! table (the section owner's, `report.rs`).

use super::exec::{EngineRun, OpStatus, Runner, Section, Totals};
use super::{Planned, Spec, NAME};
use crate::contract::{connect, Harness};
use crate::db::{Conn, DbError, Dbms};
use crate::error::{Context, Error, Result};
use crate::interrupt;

/// (engine as the server names it, whether it has transactions) for the tables to create.
async fn engine_facts(conn: &mut Conn, wanted: Option<&str>) -> Result<(String, bool)> {
    match conn.dbms() {
        Dbms::Postgres => Ok(("heap".into(), true)),
        Dbms::Sqlite => Ok(("sqlite-btree".into(), true)),
        Dbms::Mysql => {
            let name = match wanted {
                Some(w) => crate::contract::resolve_engine(conn, w).await?,
                None => conn
                    .query_one("SELECT @@default_storage_engine")
                    .await
                    .ctx("reading the default storage engine")?
                    .unwrap_or_default(),
            };
            // information_schema.ENGINES says whether the engine supports transactions
            // (InnoDB, RocksDB: YES; MyISAM, Aria, MEMORY: NO).
            let trx = conn
                .query_one(&format!(
                    "SELECT TRANSACTIONS FROM information_schema.ENGINES WHERE ENGINE = '{name}'"
                ))
                .await
                .ctx("reading the engine's transaction support")?;
            Ok((name, trx.as_deref() == Some("YES")))
        }
    }
}

/// The suite on every engine (`--engines`, else `--engine`, else the server's default).
pub fn run(spec: &Spec, h: &mut dyn Harness) -> Result<()> {
    let (cfg, rt) = (h.settings(), h.rt());
    let plan = spec.plan();
    let wanted: Vec<Option<String>> = if spec.engines.is_empty() {
        vec![cfg.engine.clone()]
    } else {
        spec.engines.iter().cloned().map(Some).collect()
    };
    let mut engines = Vec::new();
    for w in &wanted {
        let admin = h.conn()?;
        engines.push(rt.block_on(engine_facts(admin, w.as_deref()))?);
    }
    let names: Vec<&str> = engines.iter().map(|e| e.0.as_str()).collect();
    h.doc().target.engine = names.join(",");
    h.doc().set_section(
        NAME,
        &Section {
            scale: spec.scale,
            engines: Vec::new(),
        },
    );
    h.save()?;
    eprintln!("sqlbench: engine(s) {}", names.join(", "));
    for (engine, transactional) in &engines {
        if interrupt::signal().is_some() {
            break;
        }
        eprintln!(
            "== {engine} ({}transactional)",
            if *transactional { "" } else { "not " }
        );
        let clause = match cfg.target.dbms {
            Dbms::Mysql => format!("ENGINE={engine}"),
            _ => String::new(),
        };
        rt.block_on(run_engine(spec, &plan, h, engine, *transactional, clause))?;
    }
    Ok(())
}

/// The suite on one engine; the result is saved after every group.
async fn run_engine(
    spec: &Spec,
    plan: &[Planned],
    h: &mut dyn Harness<'_>,
    engine: &str,
    transactional: bool,
    clause: String,
) -> Result<()> {
    let cfg = h.settings();
    let target = &cfg.target;
    let conn = connect(target).await?;
    // Counters are read on their own connection, so that reading them is not in the work
    // connection's session statistics. SQLite has none.
    let admin = match target.dbms {
        Dbms::Sqlite => None,
        _ => Some(connect(target).await?),
    };
    let mut r = Runner::new(
        conn,
        admin,
        spec,
        target,
        clause,
        transactional,
        h.server_pid(),
    )
    .profiled(cfg.profile_hz);
    let idx = h
        .doc()
        .section::<Section>(NAME)
        .map_or(0, |s| s.engines.len());
    let dbms = target.dbms.name().to_string();
    let publish = |h: &mut dyn Harness, r: &Runner<'_>| -> Result<()> {
        let mut s = h.doc().section::<Section>(NAME).unwrap_or(Section {
            scale: spec.scale,
            engines: Vec::new(),
        });
        let run = EngineRun {
            engine: engine.to_string(),
            dbms: dbms.clone(),
            transactions: transactional,
            ops: r.results.clone(),
            totals: Totals::of(&r.results),
        };
        if s.engines.len() > idx {
            s.engines[idx] = run;
        } else {
            s.engines.push(run);
        }
        h.doc().set_section(NAME, &s);
        h.save()
    };
    let mut failure: Option<DbError> = None;
    for group in super::GROUPS {
        if interrupt::signal().is_some() {
            break;
        }
        let res = match group {
            "alter" => super::misc::alter(&mut r).await,
            "atis" => super::atis::atis(&mut r).await,
            "big-tables" => super::misc::big_tables(&mut r).await,
            "connect" => super::misc::connect(&mut r).await,
            "create" => super::misc::create(&mut r).await,
            "insert" => super::insert::insert(&mut r).await,
            "select" => super::select::select(&mut r).await,
            "transactions" => super::trx::transactions(&mut r).await,
            _ => super::wisconsin::wisconsin(&mut r).await,
        };
        if let Err(e) = res {
            if e.class == crate::db::ErrorClass::ConnectionLost {
                failure = Some(e);
                break;
            }
            // The group's setup failed (a statement the engine refuses): its operations not
            // yet recorded fail with that message; the other groups still run.
            let msg = target.scrub(&e.message);
            eprintln!("sqlbench {group} on {engine}: {msg}");
            let _ = r.conn.execute("ROLLBACK").await;
            for p in plan.iter().filter(|p| p.group == group) {
                if !r.results.iter().any(|o| o.name == p.name) {
                    r.skip(&p.name, OpStatus::Failed, &msg);
                }
            }
        }
        publish(h, &r)?;
    }
    // Every selected operation has a row: those not reached say why.
    let why = match &failure {
        Some(e) => format!("not reached: {}", target.scrub(&e.message)),
        None => "not reached: interrupted".to_string(),
    };
    for p in plan {
        if !r.results.iter().any(|o| o.name == p.name) {
            r.skip(&p.name, OpStatus::NotRun, &why);
        }
    }
    // Keep the run order of the plan.
    let order: Vec<&str> = plan.iter().map(|p| p.name.as_str()).collect();
    r.results.sort_by_key(|o| {
        order
            .iter()
            .position(|n| *n == o.name)
            .unwrap_or(usize::MAX)
    });
    publish(h, &r)?;
    match failure {
        Some(e) => Err(Error::run(format!(
            "sqlbench on {engine}: {}",
            target.scrub(&e.message)
        ))),
        None => Ok(()),
    }
}
