//! Cron schedules of schedule groups: parsing with clear errors, and fire times in a time zone.
//!
//! Expressions are Quartz-like: five fields (minute, hour, day of month, month, day of week) or
//! six with leading seconds; `?`, `L`, `W`, `#`, month and weekday names, and the `@daily`-style
//! shortcuts are accepted. Parsing is croner's (the parser tokio-cron-scheduler uses), after our
//! own per-field check that names the field and the value in every error.
//!
//! Fire times are computed here rather than by croner's iterator because that iterator goes back
//! in time when clocks fall back (it yields 02:15 CEST after 02:00 CET). The rules across daylight
//! saving changes are:
//! - a wall-clock time that happens twice (clocks fall back) fires once for a fixed-time schedule
//!   (single second, minute and hour, e.g. `30 2 * * *`), at the first occurrence, and at both
//!   occurrences for an interval schedule (e.g. `*/15 * * * *`);
//! - a wall-clock time that does not exist (clocks spring forward) fires at the end of the gap for
//!   a fixed-time schedule and not at all for an interval schedule.

mod fields;
#[cfg(test)]
mod tests;
mod words;

pub use words::in_words;

use crate::ValidationErrors;
use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, Offset, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};
use fields::{Field, check_field, never_fires};
use std::{fmt, str::FromStr};

/// A checked cron expression.
#[derive(Debug, Clone)]
pub struct CronExpr {
    source: String,
    six_fields: String,
    cron: croner::Cron,
    fixed_time: bool,
}

impl CronExpr {
    /// The expression as written (trimmed).
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The same schedule with explicit seconds and only numbers (`MON` → `1`, `?` → `*`),
    /// the form tokio-cron-scheduler requires (it parses with seconds required).
    pub fn six_fields(&self) -> &str {
        &self.six_fields
    }

    /// The parsed croner pattern.
    pub fn croner(&self) -> &croner::Cron {
        &self.cron
    }

    /// Whether second, minute and hour are single values, which decides the daylight-saving rules.
    pub fn is_fixed_time(&self) -> bool {
        self.fixed_time
    }

    /// The first wall-clock time strictly after `cursor` that the expression matches.
    fn next_naive(&self, cursor: NaiveDateTime) -> Option<NaiveDateTime> {
        // Treating wall-clock time as UTC gives croner a clock without daylight saving changes.
        self.cron
            .find_next_occurrence(&cursor.and_utc(), false)
            .ok()
            .map(|d| d.naive_utc())
    }
}

impl PartialEq for CronExpr {
    fn eq(&self, other: &Self) -> bool {
        self.six_fields == other.six_fields
    }
}

impl Eq for CronExpr {}

impl fmt::Display for CronExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for CronExpr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_cron(s)
    }
}

const EXAMPLE: &str = "e.g. `0 2 * * *` for 02:00 every day";

/// Parses a cron expression. Errors quote the expression and name the broken field:
/// "`61 0 * * *`: minute must be 0–59, got 61".
pub fn parse_cron(expr: &str) -> Result<CronExpr, String> {
    let source = expr.trim();
    if source.is_empty() {
        return Err(format!("a cron expression is required, {EXAMPLE}"));
    }
    let quoted = |problem: String| format!("`{source}`: {problem}");
    let expanded = expand_shortcut(source).map_err(quoted)?;
    let parts: Vec<&str> = expanded.split_whitespace().collect();
    let parts: Vec<&str> = match parts.len() {
        5 => std::iter::once("0").chain(parts).collect(),
        6 => parts,
        n => {
            return Err(quoted(format!(
                "expected 5 or 6 fields, found {n} ([seconds] minute hour day-of-month month day-of-week)"
            )));
        }
    };

    let mut checked = Vec::with_capacity(6);
    let mut problems = Vec::new();
    for (field, text) in Field::WITH_SECONDS.into_iter().zip(parts) {
        match check_field(field, text) {
            Ok(c) => checked.push(c),
            Err(e) => problems.push(e),
        }
    }
    if !problems.is_empty() {
        return Err(quoted(problems.join("; ")));
    }
    let [_, _, _, dom, month, dow] = checked.as_slice() else {
        return Err(quoted("expected 6 fields".into()));
    };
    // Engines disagree on what both mean together (croner: either; tokio-cron-scheduler: both),
    // so, as Quartz does, one of them must be left open.
    if !dom.is_wildcard() && !dow.is_wildcard() {
        return Err(quoted(
            "day of month and day of week cannot both be restricted; set one of them to `?` \
             (for \"the first Monday\" write `? * MON#1`)"
                .into(),
        ));
    }
    if let Some(problem) = never_fires(dom, month) {
        return Err(quoted(problem));
    }

    let six_fields = checked
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let parser = CronParser::builder()
        .seconds(Seconds::Required)
        .year(Year::Disallowed)
        .build();
    let cron = parser
        .parse(&six_fields)
        .map_err(|e| quoted(e.to_string()))?;
    let fixed_time = cron.determine_job_type() == croner::JobType::FixedTime;
    Ok(CronExpr {
        source: source.to_owned(),
        six_fields,
        cron,
        fixed_time,
    })
}

fn expand_shortcut(expr: &str) -> Result<String, String> {
    if !expr.starts_with('@') {
        return Ok(expr.to_owned());
    }
    Ok(match expr.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => {
            return Err(
                "unknown shortcut; use @yearly, @monthly, @weekly, @daily or @hourly".into(),
            );
        }
    }
    .to_owned())
}

/// Parses an IANA time zone name such as `Europe/Paris`.
pub fn parse_time_zone(name: &str) -> Result<Tz, String> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err("a time zone is required; use an IANA name such as Europe/Paris".into());
    }
    if let Ok(tz) = trimmed.parse::<Tz>() {
        return Ok(tz);
    }
    let hint = chrono_tz::TZ_VARIANTS
        .iter()
        .find(|tz| tz.name().eq_ignore_ascii_case(trimmed))
        .map(|tz| format!("; did you mean {}?", tz.name()))
        .unwrap_or_else(|| "; use an IANA name such as Europe/Paris".into());
    Err(format!("unknown time zone '{trimmed}'{hint}"))
}

/// A cron expression in a time zone: what a schedule group fires on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    cron: CronExpr,
    time_zone: Tz,
}

/// Bounds the searches below; real schedules need a handful of steps.
const MAX_STEPS: usize = 100_000;

impl Schedule {
    pub fn new(cron: CronExpr, time_zone: Tz) -> Self {
        Self { cron, time_zone }
    }

    /// Parses both parts, reporting each bad one under `cron` or `time_zone`.
    pub fn parse(cron: &str, time_zone: &str) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let cron = parse_cron(cron).map_err(|e| errors.push("cron", e)).ok();
        let tz = parse_time_zone(time_zone)
            .map_err(|e| errors.push("time_zone", e))
            .ok();
        match (cron, tz) {
            (Some(cron), Some(tz)) => Ok(Self::new(cron, tz)),
            _ => Err(errors),
        }
    }

    pub fn cron(&self) -> &CronExpr {
        &self.cron
    }

    pub fn time_zone(&self) -> Tz {
        self.time_zone
    }

    /// The first fire time strictly after `after`, or `None` if there is none before year 5000.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        // croner searches years 1 to 5000 only; outside them local time may not even be
        // representable, and searching up from year -200000 would take ages.
        let (first, last) = (
            Utc.with_ymd_and_hms(1, 1, 2, 0, 0, 0).single()?,
            Utc.with_ymd_and_hms(4999, 12, 31, 0, 0, 0).single()?,
        );
        if after >= last {
            return None;
        }
        let after = after.max(first);
        // Fire times are whole seconds: the cursor drops the fraction so none is skipped.
        let local = after.with_timezone(&self.time_zone).naive_local();
        let local = local.with_nanosecond(0).unwrap_or(local);
        let forward = self.next_from_wall_clock(after, local);
        let second_pass = if self.cron.fixed_time {
            None
        } else {
            self.next_in_fold(after, local)
        };
        match (forward, second_pass) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fire times after `after`, in increasing order.
    pub fn fire_times_after(
        &self,
        after: DateTime<Utc>,
    ) -> impl Iterator<Item = DateTime<Utc>> + '_ {
        std::iter::successors(self.next_after(after), move |t| self.next_after(*t))
    }

    /// Walks wall-clock matches after `local` and returns the first real instant after `after`.
    fn next_from_wall_clock(
        &self,
        after: DateTime<Utc>,
        local: NaiveDateTime,
    ) -> Option<DateTime<Utc>> {
        let tz = self.time_zone;
        let mut cursor = local;
        for _ in 0..MAX_STEPS {
            let n = self.cron.next_naive(cursor)?;
            cursor = n;
            match tz.from_local_datetime(&n) {
                LocalResult::Single(t) => {
                    let t = t.with_timezone(&Utc);
                    if t > after {
                        return Some(t);
                    }
                }
                LocalResult::Ambiguous(first, second) => {
                    let (first, second) = (first.with_timezone(&Utc), second.with_timezone(&Utc));
                    if first > after {
                        return Some(first);
                    }
                    if !self.cron.fixed_time && second > after {
                        return Some(second);
                    }
                }
                LocalResult::None => {
                    let end = gap_end(tz, n)?;
                    if self.cron.fixed_time {
                        if end > after {
                            return Some(end);
                        }
                    } else {
                        // Nothing inside the gap exists; resume at its end.
                        cursor = end
                            .with_timezone(&tz)
                            .naive_local()
                            .checked_sub_signed(Duration::seconds(1))?;
                    }
                }
            }
        }
        None
    }

    /// When the clocks fall back soon after `after`, wall-clock times up to `local` come again:
    /// returns the first such second occurrence after `after`.
    fn next_in_fold(&self, after: DateTime<Utc>, local: NaiveDateTime) -> Option<DateTime<Utc>> {
        let tz = self.time_zone;
        let offset_at = |t: DateTime<Utc>| {
            i64::from(
                tz.offset_from_utc_datetime(&t.naive_utc())
                    .fix()
                    .local_minus_utc(),
            )
        };
        let now_offset = offset_at(after);
        // The first half-hour step at which the clocks have fallen back, if any within 6 h.
        let (step_after, lowest) = (1..=12)
            .filter_map(|k| after.checked_add_signed(Duration::minutes(30 * k)))
            .map(|t| (t, offset_at(t)))
            .find(|(_, offset)| *offset < now_offset)?;
        let fall_back = now_offset - lowest;
        // Binary search for the instant the clocks fall back; the repeated wall-clock times
        // start there, and nothing before them can come again.
        let (mut lo, mut hi) = (after.timestamp(), step_after.timestamp());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            let t = DateTime::from_timestamp(mid, 0)?;
            if offset_at(t) < now_offset {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let fold_start = DateTime::from_timestamp(hi, 0)?
            .with_timezone(&tz)
            .naive_local();
        // A second occurrence at wall-clock `m` is after `after` exactly when `m > local - fall_back`.
        let earliest = local.checked_sub_signed(Duration::seconds(fall_back))?;
        let mut cursor = earliest.max(fold_start.checked_sub_signed(Duration::seconds(1))?);
        for _ in 0..MAX_STEPS {
            let m = self.cron.next_naive(cursor)?;
            if m > local {
                return None;
            }
            if let LocalResult::Ambiguous(_, second) = tz.from_local_datetime(&m) {
                let second = second.with_timezone(&Utc);
                if second > after {
                    return Some(second);
                }
            }
            cursor = m;
        }
        None
    }
}

/// The first instant after the daylight-saving gap that swallows wall-clock time `n`.
fn gap_end(tz: Tz, n: NaiveDateTime) -> Option<DateTime<Utc>> {
    // UTC offsets stay within ±14 h, so local time is before `n` 27 h earlier and after it 27 h later.
    let base = n.and_utc().timestamp();
    let (mut lo, mut hi) = (base - 27 * 3600, base + 27 * 3600);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let t = DateTime::from_timestamp(mid, 0)?;
        if t.with_timezone(&tz).naive_local() > n {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    DateTime::from_timestamp(hi, 0)
}

/// The next `count` fire times of `cron` in `time_zone` strictly after `after` (fewer if the
/// schedule ends before year 5000). Errors are reported under `cron` and `time_zone`.
pub fn next_fire_times(
    cron: &str,
    time_zone: &str,
    after: DateTime<Utc>,
    count: usize,
) -> Result<Vec<DateTime<Utc>>, ValidationErrors> {
    let schedule = Schedule::parse(cron, time_zone)?;
    Ok(schedule.fire_times_after(after).take(count).collect())
}
