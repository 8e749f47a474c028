//! How every page writes times and counts: one absolute format (UTC, to the second), a
//! relative form beside it ("3 min ago"), and plurals that agree with their number. The pages
//! compute the relative form against the time the server read the figures, so the server's
//! rendering and the browser's agree.

use chrono::{DateTime, Utc};

/// The one absolute format of the pages: `2026-11-25 08:17:03 UTC`.
pub fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// A time that may be missing: [`time`], or `—`.
pub fn time_or_dash(t: Option<DateTime<Utc>>) -> String {
    t.map(time).unwrap_or_else(|| "—".to_owned())
}

/// The time of day to the millisecond, `08:17:03.250`: an activation's timeline, whose day is
/// the activation's.
pub fn clock(t: DateTime<Utc>) -> String {
    t.format("%H:%M:%S%.3f").to_string()
}

/// How long something took, in at most two units: `250 ms`, `42 s`, `3 min 5 s`, `2 h 10 min`
/// (a negative span reads as none).
pub fn duration(d: chrono::Duration) -> String {
    let s = d.num_seconds().max(0);
    match s {
        0 => format!("{} ms", d.num_milliseconds().max(0)),
        1..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// How long before `now` `t` was, in the largest unit that fits: `just now` (under 10 s),
/// `42 s ago`, `3 min ago`, `5 h ago`, `2 days ago`; a time after `now` reads `in 3 min`.
pub fn ago(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - t).num_seconds();
    if secs.abs() < 10 {
        return "just now".to_owned();
    }
    let span = span(secs.unsigned_abs());
    if secs > 0 {
        format!("{span} ago")
    } else {
        format!("in {span}")
    }
}

fn span(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s"),
        60..3_600 => format!("{} min", secs / 60),
        3_600..86_400 => format!("{} h", secs / 3_600),
        _ => plural(secs / 86_400, "day"),
    }
}

/// `n` and the noun, in the plural unless `n` is 1: `1 failure`, `0 failures`, `3 failures`.
/// Nouns of this product only take an `s`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2030, 5, 2, 10, 0, 0)
            .single()
            .expect("valid")
    }

    #[test]
    fn durations_take_at_most_two_units() {
        assert_eq!(duration(Duration::milliseconds(250)), "250 ms");
        assert_eq!(duration(Duration::milliseconds(-5)), "0 ms");
        assert_eq!(duration(Duration::seconds(42)), "42 s");
        assert_eq!(duration(Duration::seconds(185)), "3 min 5 s");
        assert_eq!(duration(Duration::seconds(7_800)), "2 h 10 min");
        assert_eq!(clock(now() + Duration::milliseconds(250)), "10:00:00.250");
        assert_eq!(time_or_dash(None), "—");
        assert_eq!(time_or_dash(Some(now())), "2030-05-02 10:00:00 UTC");
    }

    #[test]
    fn relative_times_take_the_largest_unit_that_fits() {
        let n = now();
        assert_eq!(ago(n, n), "just now");
        assert_eq!(ago(n - Duration::seconds(9), n), "just now");
        assert_eq!(ago(n - Duration::seconds(42), n), "42 s ago");
        assert_eq!(ago(n - Duration::seconds(59), n), "59 s ago");
        assert_eq!(ago(n - Duration::seconds(60), n), "1 min ago");
        assert_eq!(ago(n - Duration::seconds(3 * 60 + 59), n), "3 min ago");
        assert_eq!(ago(n - Duration::hours(5), n), "5 h ago");
        assert_eq!(ago(n - Duration::hours(24), n), "1 day ago");
        assert_eq!(ago(n - Duration::days(3), n), "3 days ago");
        assert_eq!(ago(n + Duration::minutes(3), n), "in 3 min");
    }

    #[test]
    fn plurals_agree_with_their_number() {
        assert_eq!(plural(0, "failure"), "0 failures");
        assert_eq!(plural(1, "failure"), "1 failure");
        assert_eq!(plural(2, "run"), "2 runs");
    }

    #[test]
    fn the_absolute_format_is_utc_to_the_second() {
        assert_eq!(time(now()), "2030-05-02 10:00:00 UTC");
    }
}
