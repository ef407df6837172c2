//! One worker: a connection and its driver, running the phases the session commands, and
//! the small helpers it needs (counter growth, SCHED_BATCH, an interruptible sleep).

use super::*;

#[allow(clippy::too_many_arguments)]
pub(super) async fn run_worker<D: Driver>(
    (w, node): (usize, Option<usize>),
    workers: usize,
    pacing: Pacing,
    faults: Faults,
    target: Arc<TargetSpec>,
    mut driver: D,
    mut cmd: watch::Receiver<Command>,
    tx: mpsc::Sender<Msg>,
    (rec, slot): (Rc<RefCell<LoopRecorder>>, Slot),
    window: Arc<tokio::sync::Semaphore>,
) {
    let mut retries = 0;
    let first = connect::open(w, &target, &mut driver, &faults, &window, &mut retries).await;
    drop(window);
    // None while a lost connection waits to be re-established (--reconnect).
    let mut conn = match first {
        Ok(c) => Some(c),
        Err(error) => {
            rec.borrow_mut().set_gone(slot);
            let _ = tx.send(Msg::ConnectFailed {
                worker: w,
                error,
                retries,
            });
            return;
        }
    };
    let _ = tx.send(Msg::Ready { retries });
    let mut seen_phase = 0;
    // When the connection was lost (--reconnect), for the message when it is back.
    let mut lost_at: Option<Instant> = None;
    loop {
        let command = cmd.borrow_and_update().clone();
        let (start, deadline, interval, budget) = match command {
            Command::Stop => return,
            Command::Phase {
                id,
                start,
                deadline,
                interval,
                budget,
            } if id > seen_phase => {
                seen_phase = id;
                (start, deadline, interval, budget)
            }
            _ => {
                if cmd.changed().await.is_err() {
                    return;
                }
                continue;
            }
        };
        rec.borrow_mut().start_phase(seen_phase);
        // The phase id seeds the arrivals, so that warm-up and runs differ.
        let mut schedule = Schedule::new(&pacing, w, workers, start, seen_phase);
        let mut sched = ScheduleStats::default();
        let interval_ns = interval.as_nanos().max(1);
        let mut stats_errors = ErrorCounts::default();
        let (mut ops, mut rows, mut statements, mut iops, mut ierr) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        let (mut reconnects, mut reconnect_failures) = (0u64, 0u64);
        let mut cur_idx = 0u32;
        let mut samples: Vec<String> = Vec::new();
        let mut lost: Option<DbError> = None;
        let mut end = start;
        let mut by_kind: Vec<KindTick> = Vec::new();
        let mut kind_errors: Vec<u64> = Vec::new();
        let mut ikinds: Vec<KindTick> = Vec::new();
        let mut iclasses = ErrorCounts::default();
        let counters0 = driver.counters();
        // Ended before the deadline (--events reached, or a signal): the schedule's backlog
        // then counts up to now, not up to a deadline that may be far away (--time 0).
        let mut ended_early = false;
        loop {
            if conn.is_none() {
                match faults::reconnect(
                    &target,
                    &mut driver,
                    &faults,
                    deadline,
                    &mut reconnect_failures,
                )
                .await
                {
                    Some(r) => {
                        conn = Some(r.conn);
                        reconnects += 1;
                        let down = lost_at.take().map(|t| t.elapsed()).unwrap_or_default();
                        eprintln!(
                            "connection {}: re-established after {:.1} s ({} attempt(s))",
                            w + 1,
                            down.as_secs_f64(),
                            r.attempts
                        );
                    }
                    None => {
                        // Tried until the deadline: the run's time includes the outage.
                        end = end.max(Instant::now().min(deadline));
                        break;
                    }
                }
            }
            let intended = match &schedule {
                Some(s) => {
                    let due = s.due();
                    if due >= deadline || !sleep_until(due).await {
                        break;
                    }
                    Some(due)
                }
                None => {
                    if let Some(wait) = driver.pause() {
                        let until = Instant::now() + wait;
                        if until >= deadline {
                            // The user is still thinking when the phase ends: the worker was
                            // part of the whole phase.
                            sleep_until(deadline).await;
                            end = end.max(deadline);
                            break;
                        }
                        if !sleep_until(until).await {
                            ended_early = true;
                            break;
                        }
                    }
                    None
                }
            };
            let t0 = Instant::now();
            // The latency's origin: the operation's start, or when its user began to wait for
            // this connection (several users per connection), within this phase.
            let from = match (&schedule, driver.waiting_since()) {
                (None, Some(w)) => w.max(start).min(t0),
                _ => t0,
            };
            // An operation due before the deadline may start in the timer's last tick after it
            // (else the tick's lateness would show as backlog); one behind by more does not.
            let stop_at = match intended {
                Some(_) => deadline + LATE,
                None => deadline,
            };
            if t0 >= stop_at {
                break;
            }
            if interrupt::signal().is_some() || driver.finished() {
                ended_early = true;
                break;
            }
            // --events: every worker takes a ticket before each operation; none left, done.
            if let Some(b) = &budget {
                if b.fetch_sub(1, Ordering::Relaxed) <= 0 {
                    ended_early = true;
                    break;
                }
            }
            if let (Some(s), Some(due)) = (schedule.as_mut(), intended) {
                s.advance();
                sched.intended += 1;
                let lag = t0.saturating_duration_since(due);
                sched.max_lag = sched.max_lag.max(lag);
                if lag > LATE {
                    sched.late += 1;
                }
            }
            let c = conn.as_mut().expect("connected above");
            let r = faults.timed(driver.step(c)).await;
            let t1 = Instant::now();
            end = t1;
            let idx = (t1.duration_since(start).as_nanos() / interval_ns) as u32;
            if idx != cur_idx {
                let hists = rec.borrow_mut().move_to(slot, idx);
                let _ = tx.send(Msg::Interval {
                    worker: w,
                    idx: cur_idx,
                    ops: iops,
                    errors: ierr,
                    error_classes: std::mem::take(&mut iclasses),
                    hists,
                    kinds: std::mem::take(&mut ikinds),
                });
                (iops, ierr, cur_idx) = (0, 0, idx);
            }
            match r {
                Ok(step) => {
                    let us = t1.duration_since(from).as_micros() as u64;
                    let response_us = intended.map(|due| t1.duration_since(due).as_micros() as u64);
                    rec.borrow_mut()
                        .record(idx, step.kind, node, us, response_us);
                    ops += 1;
                    iops += 1;
                    rows += step.rows;
                    statements += step.statements;
                    let i = step.kind as usize;
                    for v in [&mut by_kind, &mut ikinds] {
                        if v.len() <= i {
                            v.resize(i + 1, KindTick::default());
                        }
                        v[i].ops += 1;
                        v[i].rolled_back += step.rolled_back as u64;
                    }
                }
                Err(e) => {
                    stats_errors.add(e.class);
                    let i = e.kind as usize;
                    if kind_errors.len() <= i {
                        kind_errors.resize(i + 1, 0);
                    }
                    kind_errors[i] += 1;
                    ierr += 1;
                    iclasses.add(e.class);
                    let message = target.scrub(&e.message);
                    if samples.len() < ERROR_SAMPLES
                        && !samples.iter().any(|s| s.ends_with(&message))
                    {
                        samples.push(format!("{}: {message}", e.class.name()));
                    }
                    if faults::breaks_connection(&e) {
                        // Dropping the connection closes it (a timed-out one mid-reply too).
                        conn = None;
                        if !faults.reconnect {
                            lost = Some(e);
                            break;
                        }
                        lost_at = Some(Instant::now());
                        eprintln!(
                            "connection {}: {}: {message}; re-connecting with back-off (--reconnect)",
                            w + 1,
                            e.class.name()
                        );
                    }
                }
            }
        }
        // Finished: every interval the loop's other workers have also left goes with this.
        let hists = rec.borrow_mut().move_to(slot, u32::MAX);
        let _ = tx.send(Msg::Interval {
            worker: w,
            idx: cur_idx,
            ops: iops,
            errors: ierr,
            error_classes: std::mem::take(&mut iclasses),
            hists,
            kinds: std::mem::take(&mut ikinds),
        });
        if let Some(s) = schedule.as_mut() {
            // What was due before the deadline but never started: the backlog.
            let until = if ended_early || interrupt::signal().is_some() {
                Instant::now().min(deadline)
            } else {
                deadline
            };
            sched.backlog = s.pending_before(until);
            sched.intended += sched.backlog;
        }
        let stats = WorkerStats {
            ops,
            rows,
            statements,
            errors: stats_errors,
            hists: rec.borrow_mut().finish(slot, lost.is_some()),
            schedule: sched,
            end,
            error_samples: samples,
            lost: lost.map(|e| DbError::new(e.class, target.scrub(&e.message))),
            by_kind,
            kind_errors,
            counters: counter_growth(&counters0, driver.counters()),
            reconnects,
            reconnect_failures,
            node,
        };
        let was_lost = stats.lost.is_some();
        let _ = tx.send(Msg::PhaseDone {
            worker: w,
            stats: Box::new(stats),
        });
        if was_lost {
            return;
        }
    }
}

/// How much each counter grew from `before` to `after` (a counter new since `before` counts
/// from 0).
pub(super) fn counter_growth(
    before: &[(&'static str, u64)],
    after: Vec<(&'static str, u64)>,
) -> Vec<(&'static str, u64)> {
    after
        .into_iter()
        .map(|(name, v)| {
            let v0 = before.iter().find(|(n, _)| *n == name).map_or(0, |c| c.1);
            (name, v.saturating_sub(v0))
        })
        .collect()
}

/// SCHED_BATCH for the calling thread: the kernel stops preempting it in favour of the server
/// thread it just woke, which halves context switches per query (client-efficiency notes).
pub(super) fn set_sched_batch() {
    // SAFETY: sched_setscheduler on the calling thread (pid 0) with a zeroed, valid param.
    unsafe {
        let param: libc::sched_param = std::mem::zeroed();
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
    }
}

/// Wait until `t` in steps of at most 100 ms, so that Ctrl-C is seen even at low rates.
/// Returns false when interrupted. Tokio's timer has 1 ms ticks: a wake-up can be up to about
/// 1 ms late, and that delay counts in the response time (it is the client's, honestly kept).
pub(super) async fn sleep_until(t: Instant) -> bool {
    loop {
        if interrupt::signal().is_some() {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        let step = (t - now).min(Duration::from_millis(100));
        tokio::time::sleep_until(tokio::time::Instant::from_std(now + step)).await;
    }
}
