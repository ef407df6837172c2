//! The runner's ways to end a phase early: a `StopHandle` from another thread, and a driver
//! that says it has no work left (`Driver::finished`).

use std::time::{Duration, Instant};

use crate::common::*;
use enginebench::contract::{Driver, Session, SessionConfig, Step};
use enginebench::db::{Conn, DbResult, StmtId};
use enginebench::model::{Faults, Pacing};
use enginebench::runner;

struct Select {
    stmt: StmtId,
    /// Operations this driver may still do (None: unbounded).
    left: Option<u64>,
}

impl Driver for Select {
    async fn setup(&mut self, conn: &mut Conn) -> DbResult<()> {
        self.stmt = conn.prepare("SELECT 1").await?;
        Ok(())
    }
    async fn step(&mut self, conn: &mut Conn) -> DbResult<Step> {
        if let Some(n) = self.left.as_mut() {
            *n -= 1;
        }
        conn.exec_rows(self.stmt, &[]).await.map(Step::query)
    }
    fn finished(&self) -> bool {
        self.left == Some(0)
    }
}

fn session(dir: &std::path::Path, threads: usize, left: Option<u64>) -> Box<dyn Session> {
    let target = spec(&format!("sqlite://{}/stop.db", dir.display()));
    // The database exists before the workers open it together (as after a prepare): two
    // first connections at once may find it locked while one sets it up.
    block(async { Conn::connect(&target).await.map(drop) }).unwrap();
    let cfg = SessionConfig {
        threads,
        client_threads: 1,
        sched_batch: false,
        pacing: Pacing::ClosedLoop,
        faults: Faults::default(),
        access: Default::default(),
        first_worker: 0,
    };
    runner::start(&target, &cfg, move |_| Select {
        stmt: StmtId(0),
        left,
    })
    .unwrap()
}

#[test]
fn a_stop_handle_ends_a_long_phase_from_another_thread() {
    let dir = tempdir();
    let mut s = session(dir.path(), 2, None);
    let stop = s.stop_handle();
    let t = Instant::now();
    let res = std::thread::scope(|sc| {
        let j = sc.spawn(|| {
            s.phase(
                Duration::from_secs(60),
                None,
                Duration::from_secs(1),
                |_| {},
            )
        });
        std::thread::sleep(Duration::from_millis(300));
        stop.stop();
        j.join().unwrap().unwrap()
    });
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(res.ops > 0);
    assert_eq!(res.errors.total(), 0);
    // Stopped between phases: the next phase ends at once; the one after runs again.
    stop.stop();
    let res = s
        .phase(
            Duration::from_secs(60),
            None,
            Duration::from_secs(1),
            |_| {},
        )
        .unwrap();
    assert_eq!(res.ops, 0);
    let res = s
        .phase(
            Duration::from_millis(200),
            None,
            Duration::from_secs(1),
            |_| {},
        )
        .unwrap();
    assert!(res.ops > 0);
}

#[test]
fn a_finished_driver_ends_its_phase() {
    let dir = tempdir();
    let mut s = session(dir.path(), 2, Some(5));
    let t = Instant::now();
    let res = s
        .phase(
            Duration::from_secs(60),
            None,
            Duration::from_secs(1),
            |_| {},
        )
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_eq!(res.ops, 10);
}
