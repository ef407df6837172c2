//! Errors that reach the user, and the exit code each one maps to.
//!
//! Exit codes (documented in the README): 0 ok; 1 a run failed after it started
//! (for example every connection was lost); 2 bad usage, bad config, or a target
//! that cannot be reached or used; 130 / 143 interrupted by SIGINT / SIGTERM.

use std::fmt;

/// What kind of failure ended the command; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// Bad input, or a target that cannot be reached or used: exit 2.
    Usage,
    /// The benchmark started but could not finish: exit 1.
    Run,
    /// Interrupted by a signal: exit 128 + signal number.
    Interrupted(i32),
}

/// An error with the exit code it should produce. The message is one line.
#[derive(Debug)]
pub struct Error {
    pub failure: Failure,
    pub message: String,
}

impl Error {
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            failure: Failure::Usage,
            message: message.into(),
        }
    }
    pub fn run(message: impl Into<String>) -> Self {
        Self {
            failure: Failure::Run,
            message: message.into(),
        }
    }
    pub fn exit_code(&self) -> u8 {
        match self.failure {
            Failure::Usage => 2,
            Failure::Run => 1,
            Failure::Interrupted(sig) => (128 + sig) as u8,
        }
    }
    /// Prefix the message with context, keeping the failure kind.
    pub fn context(self, ctx: impl fmt::Display) -> Self {
        Self {
            failure: self.failure,
            message: format!("{ctx}: {}", self.message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Add context to any error, turning it into a usage error unless it already has a kind.
pub trait Context<T> {
    fn ctx(self, ctx: impl fmt::Display) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn ctx(self, ctx: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error::usage(format!("{ctx}: {}", one_line(&e.to_string()))))
    }
}

/// Fold a multi-line message (driver errors often have several) into one line. Other control
/// characters (from echoed user input: a URL or plan value with `\x1b[...`) are shown escaped,
/// so that an error can neither break the line nor drive the terminal.
pub fn one_line(s: &str) -> String {
    let folded = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if !folded.chars().any(char::is_control) {
        return folded;
    }
    folded
        .chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Why a statement failed, counted per class during runs (never fatal on its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    ConnectionLost,
    Deadlock,
    LockWaitTimeout,
    SerializationFailure,
    DuplicateKey,
    Busy,
    QueryTimeout,
    TooManyConnections,
    AccessDenied,
    Other,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 10] = [
        ErrorClass::ConnectionLost,
        ErrorClass::Deadlock,
        ErrorClass::LockWaitTimeout,
        ErrorClass::SerializationFailure,
        ErrorClass::DuplicateKey,
        ErrorClass::Busy,
        ErrorClass::QueryTimeout,
        ErrorClass::TooManyConnections,
        ErrorClass::AccessDenied,
        ErrorClass::Other,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    /// Transient conflicts after which the same transaction input is run again (TPC-C,
    /// LinkBench and iiBench retry on these).
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorClass::Deadlock
                | ErrorClass::LockWaitTimeout
                | ErrorClass::SerializationFailure
                | ErrorClass::Busy
        )
    }
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::ConnectionLost => "connection_lost",
            ErrorClass::Deadlock => "deadlock",
            ErrorClass::LockWaitTimeout => "lock_wait_timeout",
            ErrorClass::SerializationFailure => "serialization_failure",
            ErrorClass::DuplicateKey => "duplicate_key",
            ErrorClass::Busy => "busy",
            ErrorClass::QueryTimeout => "query_timeout",
            ErrorClass::TooManyConnections => "too_many_connections",
            ErrorClass::AccessDenied => "access_denied",
            ErrorClass::Other => "other",
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_folds_and_escapes() {
        assert_eq!(super::one_line(" a\n b\r\n\tc "), "a b c");
        assert_eq!(super::one_line("x\u{1b}[2Jy\u{16}"), "x\\u{1b}[2Jy\\u{16}");
        assert_eq!(super::one_line("plain é 日本"), "plain é 日本");
    }
}
