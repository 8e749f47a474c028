//! Filters of the operations console's lists as URLs and the API carry them: optional text
//! (an empty parameter is no filter) and points in time.

use crate::error::{ServiceError, ServiceResult};
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// The value of an optional text filter: `None` when absent or blank.
pub fn text(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// A point in time given as RFC 3339 (`2030-01-31T12:00:00Z`), as an HTML `datetime-local`
/// value (`2030-01-31T12:00`, UTC) or as a date (`2030-01-31`, midnight UTC). `field` names
/// the parameter in the error.
pub fn time(field: &str, value: &Option<String>) -> ServiceResult<Option<DateTime<Utc>>> {
    let Some(v) = text(value) else {
        return Ok(None);
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(&v) {
        return Ok(Some(t.with_timezone(&Utc)));
    }
    for format in [
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(&v, format) {
            return Ok(Some(t.and_utc()));
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(&v, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).map(|t| t.and_utc()));
    }
    Err(ServiceError::invalid(
        field,
        format!(
            "`{v}` is not a time; use e.g. 2030-01-31T12:00:00Z, 2030-01-31T12:00 (UTC) or 2030-01-31"
        ),
    ))
}

/// Start and end of a time range, each optional.
pub type Range = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// A time range `[from, to)`; `to` before `from` is a mistake worth naming.
pub fn range(from: &Option<String>, to: &Option<String>) -> ServiceResult<Range> {
    let from = time("from", from)?;
    let to = time("to", to)?;
    if let (Some(f), Some(t)) = (from, to)
        && t < f
    {
        return Err(ServiceError::invalid(
            "to",
            "the end of the time range is before its start",
        ));
    }
    Ok((from, to))
}

/// A page size between 1 and `max`, `default` when not given (or 0).
pub fn limit(value: Option<u64>, default: u64, max: u64) -> u64 {
    value.filter(|l| *l > 0).unwrap_or(default).min(max)
}

/// The deepest page an offset-paged list serves. Offsets are bound as the databases' signed
/// 64-bit integers, so an unchecked page number could overflow them; and a page a million
/// deep is a filter that is too wide, not a place anyone reads.
pub const MAX_PAGE_NUMBER: u64 = 1_000_000;

/// The one-based page asked for (the first when absent) and the offset of its first row for
/// pages of `limit` rows. A page outside `1..=MAX_PAGE_NUMBER` is refused at the path `page`.
pub fn page(value: Option<u64>, limit: u64) -> ServiceResult<(u64, u64)> {
    let page = value.unwrap_or(1);
    if !(1..=MAX_PAGE_NUMBER).contains(&page) {
        return Err(ServiceError::invalid(
            "page",
            format!(
                "page {page} does not exist: pages are numbered from 1 to {MAX_PAGE_NUMBER}; \
                 narrow the filter to reach older entries"
            ),
        ));
    }
    Ok((page, (page - 1).saturating_mul(limit)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn s(v: &str) -> Option<String> {
        Some(v.to_owned())
    }

    #[test]
    fn blank_text_is_no_filter() {
        assert_eq!(text(&s("  ")), None);
        assert_eq!(text(&None), None);
        assert_eq!(text(&s(" a ")).as_deref(), Some("a"));
    }

    #[test]
    fn times_in_every_accepted_shape() {
        let noon = Utc.with_ymd_and_hms(2030, 1, 31, 12, 0, 0).single();
        assert_eq!(
            time("from", &s("2030-01-31T12:00:00Z")).ok().flatten(),
            noon
        );
        assert_eq!(
            time("from", &s("2030-01-31T13:00:00+01:00")).ok().flatten(),
            noon
        );
        assert_eq!(time("from", &s("2030-01-31T12:00")).ok().flatten(), noon);
        assert_eq!(
            time("from", &s("2030-01-31")).ok().flatten(),
            Utc.with_ymd_and_hms(2030, 1, 31, 0, 0, 0).single()
        );
        assert_eq!(time("from", &s("")).ok().flatten(), None);
    }

    #[test]
    fn bad_times_name_their_field() {
        let Err(ServiceError::Invalid(e)) = time("to", &s("yesterday")) else {
            panic!("expected an invalid input");
        };
        assert_eq!(e.0[0].path, "to");
        let Err(ServiceError::Invalid(e)) = range(&s("2030-02-01"), &s("2030-01-01")) else {
            panic!("expected an invalid range");
        };
        assert_eq!(e.0[0].path, "to");
    }

    #[test]
    fn limits_are_bounded() {
        assert_eq!(limit(None, 20, 100), 20);
        assert_eq!(limit(Some(0), 20, 100), 20);
        assert_eq!(limit(Some(500), 20, 100), 100);
        assert_eq!(limit(Some(5), 20, 100), 5);
    }

    #[test]
    fn pages_are_range_checked() {
        assert_eq!(page(None, 50).expect("first"), (1, 0));
        assert_eq!(page(Some(3), 50).expect("third"), (3, 100));
        let last = page(Some(MAX_PAGE_NUMBER), 200).expect("deepest");
        assert!(i64::try_from(last.1).is_ok());
        for bad in [0, MAX_PAGE_NUMBER + 1, 9_223_372_036_854_775_808, u64::MAX] {
            let Err(ServiceError::Invalid(e)) = page(Some(bad), 100) else {
                panic!("page {bad} accepted");
            };
            assert_eq!(e.0[0].path, "page");
        }
    }
}
