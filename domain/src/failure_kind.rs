//! What a failure report says happened, as the dashboard counts and charts it. Only
//! [`FAILED`] is a failure an operator has to look at; the other two are
//! the system doing its job (a retry that may well succeed, a document not there yet).

/// Given up on: the activation failed, or its message was dead-lettered or parked.
pub const FAILED: &str = "failed";
/// The attempt failed and the message was sent to be tried again.
pub const RETRIED: &str = "retried";
/// The agent answered "temporarily unavailable": redelivered later, never counted.
pub const UNAVAILABLE: &str = "unavailable";

/// The kind of a report: `temporary` answers are [`UNAVAILABLE`], a message sent to be
/// tried again (disposition [`crate::wire::disposition::RETRY`]) is [`RETRIED`], anything
/// else [`FAILED`]. The SQL of the counts says the same (services, `dashboard.rs`).
pub fn of(temporary: bool, disposition: Option<&str>) -> &'static str {
    if temporary {
        UNAVAILABLE
    } else if disposition == Some(crate::wire::disposition::RETRY) {
        RETRIED
    } else {
        FAILED
    }
}

/// Every kind, the real failures first.
pub const ALL: [&str; 3] = [FAILED, RETRIED, UNAVAILABLE];

/// The filter word for reports of every kind (lists filter on [`FAILED`] unless told).
pub const ANY: &str = "any";

/// The kind named `word` ([`ALL`]), as a `&'static str`.
pub fn named(word: &str) -> Option<&'static str> {
    ALL.into_iter().find(|k| *k == word)
}
