//! Hostile input through the real binary: the fuzzing findings (docs/fuzzing.md) and their
//! neighbours are refused with exit 2 and one line on stderr, with no control characters
//! (an echoed `\x1b[...` must not drive the terminal), no panic and no password.

use crate::common::*;

fn refused(args: &[&str]) {
    let dir = tempdir();
    let out = eb(dir.path(), args);
    assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
    let text = out.stderr.trim_end();
    assert_eq!(text.lines().count(), 1, "{args:?}: {text:?}");
    assert!(!text.chars().any(char::is_control), "{args:?}: {text:?}");
    assert!(
        !text.contains("panicked") && !text.contains("internal error"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn fuzz_findings_are_one_line_usage_errors() {
    for target in [
        "?po%00stgres://pg:hunter2@127.0.0.1/db&ssl-ca=/a",
        "mysive\u{16}=x://root:hunter2@127.0.0.1:3306/db",
        "mysql://root:hunter2@h/db?password=hunter2",
        "mysql://root:hunter2@h/db?ssl-mode=\u{1b}[2J",
    ] {
        refused(&["run", "micro-read", "--target", target]);
    }
    refused(&["run", "micro-read", "--duration", "3\u{1b}[2Jm"]);
    refused(&["run", "micro-read", "--threads", "1,\u{1b}[31m4"]);
    refused(&["run", "micro-read", "--table-size", "1\u{1b}M"]);
    let dir = tempdir();
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        "name = \"t\"\nworkload = \"micro-read\"\nthreads = [1]\n[[servers]]\nserver = \"ma\\riadb\\u001b[2J:small\"\n",
    )
    .unwrap();
    refused(&["suite", plan.to_str().unwrap()]);
}
