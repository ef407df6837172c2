//! Where an error in a workload file points: its line, and the key path at a byte offset
//! (for serde's errors, which carry a span but no path).

use super::*;

/// Where errors point: the file's name and text.
pub(super) struct Loc<'a> {
    pub(super) label: &'a str,
    pub(super) text: &'a str,
}

impl Loc<'_> {
    pub(super) fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    pub(super) fn err(
        &self,
        span: &Range<usize>,
        path: &str,
        msg: impl std::fmt::Display,
    ) -> String {
        format!("{}:{}: {path}: {msg}", self.label, self.line(span.start))
    }
}

/// The key path at a byte offset of a TOML document (the innermost key or array element whose
/// span holds it), for serde errors that carry a span but no path.
pub(super) fn path_at(text: &str, offset: usize) -> Option<String> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut best: Option<(usize, String)> = None;
    walk_table(doc.as_table(), "", offset, &mut best);
    best.map(|(_, p)| p)
}

pub(super) fn consider(
    span: Option<Range<usize>>,
    path: &str,
    off: usize,
    best: &mut Option<(usize, String)>,
) {
    if let Some(s) = span {
        if s.start <= off && off < s.end.max(s.start + 1) {
            let len = s.end - s.start;
            if best.as_ref().is_none_or(|(l, _)| len <= *l) {
                *best = Some((len, path.to_string()));
            }
        }
    }
}

pub(super) fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

pub(super) fn walk_table(
    t: &toml_edit::Table,
    prefix: &str,
    off: usize,
    best: &mut Option<(usize, String)>,
) {
    for (k, item) in t.iter() {
        let path = join(prefix, k);
        let key_span = t.key(k).and_then(|k| k.span());
        consider(key_span.clone(), &path, off, best);
        walk_item(item, &path, key_span, off, best);
    }
}

pub(super) fn walk_item(
    item: &toml_edit::Item,
    path: &str,
    key_span: Option<Range<usize>>,
    off: usize,
    best: &mut Option<(usize, String)>,
) {
    match item {
        toml_edit::Item::Table(t) => {
            consider(t.span(), path, off, best);
            walk_table(t, path, off, best);
        }
        toml_edit::Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                let p = format!("{path}[{i}]");
                consider(t.span(), &p, off, best);
                walk_table(t, &p, off, best);
            }
        }
        toml_edit::Item::Value(v) => {
            // key = value: the whole assignment belongs to the key.
            if let (Some(k), Some(vs)) = (key_span, v.span()) {
                consider(Some(k.start..vs.end), path, off, best);
            }
            walk_value(v, path, off, best);
        }
        toml_edit::Item::None => {}
    }
}

pub(super) fn walk_value(
    v: &toml_edit::Value,
    path: &str,
    off: usize,
    best: &mut Option<(usize, String)>,
) {
    consider(v.span(), path, off, best);
    match v {
        toml_edit::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk_value(x, &format!("{path}[{i}]"), off, best);
            }
        }
        toml_edit::Value::InlineTable(t) => {
            for (k, x) in t.iter() {
                let p = join(path, k);
                let ks = t.key(k).and_then(|k| k.span());
                if let (Some(ks), Some(xs)) = (ks, x.span()) {
                    consider(Some(ks.start..xs.end), &p, off, best);
                }
                walk_value(x, &p, off, best);
            }
        }
        _ => {}
    }
}

/// Turn a serde/TOML error into `file:line: path: message`.
pub(super) fn toml_error(label: &str, text: &str, e: &toml::de::Error) -> String {
    let loc = Loc { label, text };
    let msg = e.message().trim().to_string();
    match e.span() {
        Some(span) => match path_at(text, span.start) {
            Some(p) => loc.err(&span, &p, msg),
            None => format!("{label}:{}: {msg}", loc.line(span.start)),
        },
        None => format!("{label}: {msg}"),
    }
}
