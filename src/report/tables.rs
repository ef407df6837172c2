//! Tables of the report that are written both as HTML and as CSV from the same rows, so the two
//! cannot drift: a section builds a [`Table`] from the result model once, and
//! `report --format csv --table NAME` prints that same table (`csv::table`).

use std::fmt::Write;

use super::svg::escape;
pub use crate::model::{Cell, Table};

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    pub fn opt(v: Option<f64>, decimals: usize) -> Cell {
        v.map_or(Cell::Empty, |x| Cell::Num(x, decimals))
    }

    fn html(&self) -> String {
        match self {
            Cell::Text(s) => escape(s),
            Cell::Num(v, d) => format!("{v:.d$}"),
            Cell::Int(v) => v.to_string(),
            Cell::Empty => "-".into(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Text(s) => csv_field(s),
            Cell::Num(v, _) => v.to_string(),
            Cell::Int(v) => v.to_string(),
            Cell::Empty => String::new(),
        }
    }

    fn is_text(&self) -> bool {
        matches!(self, Cell::Text(_))
    }
}

/// RFC 4180 quoting where a field needs it.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Table {
    pub fn new(name: &'static str, cols: &[(&str, &str)]) -> Table {
        Table {
            name,
            columns: cols.iter().map(|c| c.0.to_string()).collect(),
            headers: cols.iter().map(|c| c.1.to_string()).collect(),
            rows: Vec::new(),
            footer: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn to_html(&self) -> String {
        let mut h = format!("<table data-table=\"{}\"><tr>", self.name);
        // Columns of text only are left-aligned; numbers (with a few marks like "n/s") right.
        let left: Vec<bool> = (0..self.columns.len())
            .map(|i| {
                let mut cells = self
                    .rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .filter(|c| !matches!(c, Cell::Empty))
                    .peekable();
                cells.peek().is_some() && cells.all(Cell::is_text)
            })
            .collect();
        for (i, hd) in self.headers.iter().enumerate() {
            let _ = write!(
                h,
                "<th{}>{}</th>",
                if left[i] { " class=l" } else { "" },
                escape(hd)
            );
        }
        h.push_str("</tr>");
        for (rows, bold) in [(&self.rows, false), (&self.footer, true)] {
            for row in rows {
                h.push_str("<tr>");
                for (i, c) in row.iter().enumerate() {
                    let cls = if left.get(i).copied().unwrap_or(false) {
                        " class=l"
                    } else {
                        ""
                    };
                    if bold {
                        let _ = write!(h, "<th{cls}>{}</th>", c.html());
                    } else {
                        let _ = write!(h, "<td{cls}>{}</td>", c.html());
                    }
                }
                h.push_str("</tr>");
            }
        }
        h.push_str("</table>");
        h
    }

    pub fn to_csv(&self) -> String {
        let mut out = self.columns.join(",");
        out.push('\n');
        for row in self.rows.iter().chain(&self.footer) {
            let cells: Vec<String> = row.iter().map(Cell::csv).collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_and_csv_from_the_same_rows() {
        let mut t = Table::new("x", &[("format", "format"), ("size_bytes", "size B")]);
        t.rows.push(vec![Cell::text("a,b"), Cell::Num(1.23456, 1)]);
        t.footer.push(vec![Cell::text("total"), Cell::Empty]);
        assert_eq!(t.to_csv(), "format,size_bytes\n\"a,b\",1.23456\ntotal,\n");
        let h = t.to_html();
        assert!(h.contains("<td class=l>a,b</td><td>1.2</td>"), "{h}");
        assert!(h.contains("<th class=l>total</th><th>-</th>"), "{h}");
    }
}
