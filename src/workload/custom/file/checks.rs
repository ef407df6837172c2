//! The checks of a workload file's sections, each turned into what a run uses: the tables
//! (columns, keys, indexes), the transactions (parameters, statements, retries) and the
//! phases. Errors name the file, the line and the key path (`Loc::err`).

use super::*;

/// `[tables.*]`, in the file's order (a generator may name a table defined before its own).
pub(super) fn tables(
    def: &FileDef,
    loc: &Loc,
    vars: &BTreeMap<String, i64>,
    seed: u64,
) -> Result<Vec<Table>, String> {
    let mut tables: Vec<Table> = Vec::new();
    for (tname, tdef) in &def.tables.0 {
        let t = table(tname, tdef, &tables, loc, vars, seed)?;
        tables.push(t);
    }
    Ok(tables)
}

/// One table, after the ones defined before it.
fn table(
    tname: &str,
    tdef: &Spanned<TableDef>,
    tables: &[Table],
    loc: &Loc,
    vars: &BTreeMap<String, i64>,
    seed: u64,
) -> Result<Table, String> {
    let tpath = format!("tables.{tname}");
    let span = tdef.span();
    let t = tdef.get_ref();
    if !is_ident(tname) {
        return Err(loc.err(&span, &tpath, "not a table name (letters, digits, _)"));
    }
    if tables.iter().any(|x| x.name == tname) {
        return Err(loc.err(&span, &tpath, "defined twice"));
    }
    let rows_src = &t.rows.get_ref().0;
    let rows = super::super::expr::eval(rows_src, vars)
        .map_err(|e| loc.err(&t.rows.span(), &format!("{tpath}.rows"), e))?;
    if rows < 0 {
        return Err(loc.err(
            &t.rows.span(),
            &format!("{tpath}.rows"),
            format!("{rows} rows: must not be negative"),
        ));
    }
    if t.columns.0.is_empty() {
        return Err(loc.err(
            &span,
            &format!("{tpath}.columns"),
            "a table needs at least one column",
        ));
    }
    let ddl = match &t.ddl {
        Some(d) => {
            let dd = d.get_ref();
            Ddl::Raw {
                mysql: dd.mysql.clone(),
                postgres: dd.postgres.clone(),
                sqlite: dd.sqlite.clone(),
            }
        }
        None => Ddl::Portable,
    };
    let cx = Ctx {
        loc,
        vars,
        tables,
        own_rows: Some(rows as u64),
        seed,
    };
    let mut columns = Vec::new();
    for (cname, cdef) in &t.columns.0 {
        let c = column(cname, cdef, &tpath, &ddl, &columns, &cx)?;
        columns.push(c);
    }
    for k in &t.primary_key {
        if !columns.iter().any(|c| &c.name == k) {
            return Err(loc.err(
                &span,
                &format!("{tpath}.primary_key"),
                format!("unknown column `{k}`"),
            ));
        }
    }
    let mut indexes = Vec::new();
    for (i, ix) in t.indexes.iter().enumerate() {
        let cols: Vec<String> = ix
            .get_ref()
            .split(',')
            .map(|s| s.trim().to_string())
            .collect();
        if let Some(c) = cols.iter().find(|c| !columns.iter().any(|x| &x.name == *c)) {
            return Err(loc.err(
                &ix.span(),
                &format!("{tpath}.indexes[{i}]"),
                format!("unknown column `{c}`"),
            ));
        }
        indexes.push(cols);
    }
    let key_start = columns.iter().find_map(|c| match (&c.gen, &c.fmt) {
        (Gen::Sequence { start }, _) => Some(*start),
        _ => None,
    });
    Ok(Table {
        name: tname.to_string(),
        rows: rows as u64,
        col_names: columns.iter().map(|c| leak(&c.name)).collect(),
        columns,
        primary_key: t.primary_key.clone(),
        indexes,
        ddl,
        key_start,
    })
}

/// One column of table `tpath` (`columns`: the ones before it).
fn column(
    cname: &str,
    cdef: &Spanned<GenDef>,
    tpath: &str,
    ddl: &Ddl,
    columns: &[Column],
    cx: &Ctx,
) -> Result<Column, String> {
    let loc = cx.loc;
    let cpath = format!("{tpath}.columns.{cname}");
    if !is_ident(cname) {
        return Err(loc.err(
            &cdef.span(),
            &cpath,
            "not a column name (letters, digits, _)",
        ));
    }
    if columns.iter().any(|c: &Column| c.name == cname) {
        return Err(loc.err(&cdef.span(), &cpath, "defined twice"));
    }
    let ty = cdef.get_ref().ty.clone();
    match (&ty, ddl) {
        (None, Ddl::Portable) => {
            return Err(loc.err(
                &cdef.span(),
                &cpath,
                format!("missing `type` ({PORTABLE_TYPES}), or give the table's DDL under [{tpath}.ddl]"),
            ))
        }
        (Some(ty), Ddl::Portable) if sql_type(ty, Dbms::Sqlite).is_none() => {
            return Err(loc.err(
                &cdef.span(),
                &cpath,
                format!("unknown type `{ty}` (portable types: {PORTABLE_TYPES}; for others give the table's DDL under [{tpath}.ddl])"),
            ))
        }
        _ => {}
    }
    if cdef.get_ref().kind.is_none() && ty.is_some() {
        return Err(loc.err(
            &cdef.span(),
            &cpath,
            "missing `kind`: how the column is filled (sequence, uniform, string, ...)",
        ));
    }
    let (gen, fmt, _) = resolve_gen(cdef, &cpath, cx)?;
    Ok(Column {
        name: cname.to_string(),
        ty,
        gen,
        fmt,
    })
}

/// `[transactions.*]`: at least one and at most 200, not all of weight 0.
pub(super) fn transactions(def: &FileDef, label: &str, cx: &Ctx) -> Result<Vec<Txn>, String> {
    if def.transactions.0.is_empty() {
        return Err(format!(
            "{label}:1: transactions: a workload needs at least one transaction ([transactions.NAME] with statements)"
        ));
    }
    if def.transactions.0.len() > 200 {
        return Err(format!("{label}:1: transactions: at most 200 transactions"));
    }
    let mut txns = Vec::new();
    for (xname, xdef) in &def.transactions.0 {
        txns.push(transaction(xname, xdef, cx)?);
    }
    if txns.iter().all(|t| t.weight == 0) {
        return Err(format!("{label}:1: transactions: every `weight` is 0"));
    }
    Ok(txns)
}

/// One transaction: its parameters, statements and retries.
fn transaction(xname: &str, xdef: &Spanned<TxnDef>, cx: &Ctx) -> Result<Txn, String> {
    let loc = cx.loc;
    let xpath = format!("transactions.{xname}");
    let x = xdef.get_ref();
    if !is_ident(xname) {
        return Err(loc.err(
            &xdef.span(),
            &xpath,
            "not a transaction name (letters, digits, _)",
        ));
    }
    let mut params = Vec::new();
    for (pname, pdef) in &x.params.0 {
        let ppath = format!("{xpath}.params.{pname}");
        if !is_ident(pname) {
            return Err(loc.err(
                &pdef.span(),
                &ppath,
                "not a parameter name (letters, digits, _)",
            ));
        }
        if pdef.get_ref().ty.is_some() {
            return Err(loc.err(
                &pdef.span(),
                &ppath,
                "`type` applies to table columns, not parameters",
            ));
        }
        let (gen, fmt, inline) = resolve_gen(pdef, &ppath, cx)?;
        params.push(Param {
            name: pname.clone(),
            gen,
            fmt,
            inline,
        });
    }
    if x.statements.is_empty() {
        return Err(loc.err(
            &xdef.span(),
            &format!("{xpath}.statements"),
            "a transaction needs at least one statement",
        ));
    }
    let (statements, slots, writes) = statements_of(x, &xpath, &params, loc)?;
    let (retry_on, retry_max) = retry(x, &xpath, loc)?;
    Ok(Txn {
        name: xname.to_string(),
        weight: x.weight.unwrap_or(1),
        params,
        transaction: x.transaction.unwrap_or(statements.len() > 1),
        pipeline: x.pipeline.unwrap_or(false),
        statements,
        writes,
        retry_on,
        retry_max,
        slots: slots.len(),
    })
}

/// A transaction's statements, its slots (the parameters, then each captured value) and
/// whether one of them writes.
fn statements_of(
    x: &TxnDef,
    xpath: &str,
    params: &[Param],
    loc: &Loc,
) -> Result<(Vec<Stmt>, Vec<String>, bool), String> {
    // Slots: the parameters, then each captured value.
    let mut slots: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    let mut statements = Vec::new();
    let mut writes = false;
    for (i, sdef) in x.statements.iter().enumerate() {
        let spath = format!("{xpath}.statements[{i}]");
        let s = sdef.get_ref();
        let sql = s.sql.get_ref();
        let sspan = s.sql.span();
        if sql.trim().is_empty() {
            return Err(loc.err(&sspan, &spath, "empty `sql`"));
        }
        let (body, names) = placeholders(sql);
        let mut binds = Vec::new();
        let mut inline: Option<usize> = None;
        for n in &names {
            let later = x.statements[i..]
                .iter()
                .any(|st| st.get_ref().capture.contains(n));
            let slot = slots.iter().position(|s| s == n).ok_or_else(|| {
                if later {
                    loc.err(&sspan, &spath, format!("parameter `{n}` is captured by this or a later statement, so it has no value yet"))
                } else {
                    loc.err(&sspan, &spath, format!("unknown parameter `{n}` (parameters: {})", if slots.is_empty() { "none".to_string() } else { slots.join(", ") }))
                }
            })?;
            if slot < params.len() && params[slot].inline.is_some() {
                if inline.is_some_and(|p| p != slot) {
                    return Err(loc.err(
                        &sspan,
                        &spath,
                        "a statement may use one inline parameter only",
                    ));
                }
                inline = Some(slot);
                binds.push(usize::MAX);
            } else {
                binds.push(slot);
            }
        }
        // The SQL per inline value (or one), with `?` for the bound parameters.
        let variants: Vec<String> = match inline {
            Some(p) => params[p]
                .inline
                .as_ref()
                .expect("inline parameter")
                .iter()
                .map(|v| fill(&body, &binds, v))
                .collect(),
            None => vec![fill(&body, &binds, "")],
        };
        binds.retain(|b| *b != usize::MAX);
        let mut capture = Vec::new();
        for c in &s.capture {
            if !is_ident(c) {
                return Err(loc.err(
                    &sdef.span(),
                    &format!("{spath}.capture"),
                    format!("`{c}` is not a name (letters, digits, _)"),
                ));
            }
            if slots.contains(c) {
                return Err(loc.err(
                    &sdef.span(),
                    &format!("{spath}.capture"),
                    format!("`{c}` is already a parameter or captured"),
                ));
            }
            slots.push(c.clone());
            capture.push(slots.len() - 1);
        }
        let first = sql
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        if !matches!(first.as_str(), "SELECT" | "WITH" | "SHOW" | "VALUES") {
            writes = true;
        }
        statements.push(Stmt {
            variants,
            inline,
            binds,
            capture,
        });
    }
    Ok((statements, slots, writes))
}

/// The error classes a transaction is retried on, and how many times.
fn retry(x: &TxnDef, xpath: &str, loc: &Loc) -> Result<(Vec<ErrorClass>, u32), String> {
    Ok(match &x.retry {
        None => (default_retry(), 10),
        Some(r) => {
            let rr = r.get_ref();
            let on = match &rr.on {
                None => default_retry(),
                Some(list) => list
                    .iter()
                    .map(|n| {
                        ErrorClass::ALL
                            .iter()
                            .copied()
                            .find(|c| c.name() == n)
                            .ok_or_else(|| {
                                loc.err(
                                    &r.span(),
                                    &format!("{xpath}.retry.on"),
                                    format!(
                                        "unknown error class `{n}` ({})",
                                        ErrorClass::ALL
                                            .iter()
                                            .map(|c| c.name())
                                            .collect::<Vec<_>>()
                                            .join(", ")
                                    ),
                                )
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            };
            (on, rr.max.unwrap_or(10))
        }
    })
}

/// `[[phases]]`: names unique, lengths of at least 100 ms, rates positive, weights naming
/// transactions.
pub(super) fn phases(def: &FileDef, txns: &[Txn], loc: &Loc) -> Result<Vec<Phase>, String> {
    let mut phases = Vec::new();
    for (i, p) in def.phases.iter().enumerate() {
        let ppath = format!("phases[{i}]");
        let pd = p.get_ref();
        let name = pd
            .name
            .as_ref()
            .map(|n| n.get_ref().clone())
            .unwrap_or_else(|| format!("phase{}", i + 1));
        let name_span = pd.name.as_ref().map_or(p.span(), |n| n.span());
        if phases.iter().any(|x: &Phase| x.name == name) {
            return Err(loc.err(
                &name_span,
                &format!("{ppath}.name"),
                format!("`{name}` is used by an earlier phase"),
            ));
        }
        let duration = match &pd.duration {
            Some(d) => {
                let v = crate::units::duration(d.get_ref())
                    .map_err(|e| loc.err(&d.span(), &format!("{ppath}.duration"), e))?;
                if v < std::time::Duration::from_millis(100) {
                    return Err(loc.err(
                        &d.span(),
                        &format!("{ppath}.duration"),
                        "a phase must last at least 100ms",
                    ));
                }
                Some(v)
            }
            None => None,
        };
        if let Some(r) = &pd.rate {
            let v = *r.get_ref();
            if !(v > 0.0 && v.is_finite()) {
                return Err(loc.err(
                    &r.span(),
                    &format!("{ppath}.rate"),
                    "must be a positive number of transactions per second",
                ));
            }
        }
        let weights = match &pd.weights {
            None => txns.iter().map(|t| t.weight).collect(),
            Some(w) => {
                let mut v = vec![0u32; txns.len()];
                for (k, x) in &w.get_ref().0 {
                    let j = txns.iter().position(|t| &t.name == k).ok_or_else(|| {
                        loc.err(
                            &w.span(),
                            &format!("{ppath}.weights.{k}"),
                            format!("unknown transaction `{k}`"),
                        )
                    })?;
                    v[j] = *x;
                }
                if v.iter().all(|x| *x == 0) {
                    return Err(loc.err(
                        &w.span(),
                        &format!("{ppath}.weights"),
                        "every weight is 0",
                    ));
                }
                v
            }
        };
        phases.push(Phase {
            name,
            duration,
            rate: pd.rate.as_ref().map(|r| *r.get_ref()),
            weights,
        });
    }
    Ok(phases)
}
