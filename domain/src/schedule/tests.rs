use super::*;
use chrono::Timelike;
use proptest::prelude::*;

fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    match Utc.with_ymd_and_hms(y, mo, d, h, mi, s) {
        LocalResult::Single(t) => t,
        _ => panic!("bad test date"),
    }
}

fn fires(cron: &str, tz: &str, after: DateTime<Utc>, count: usize) -> Vec<String> {
    next_fire_times(cron, tz, after, count)
        .expect("valid schedule")
        .into_iter()
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .collect()
}

fn cron_err(expr: &str) -> String {
    parse_cron(expr).expect_err("invalid cron")
}

#[test]
fn five_and_six_field_forms() {
    let after = utc(2025, 1, 6, 10, 0, 30);
    assert_eq!(
        fires("0 2 * * *", "UTC", after, 2),
        ["2025-01-07T02:00:00Z", "2025-01-08T02:00:00Z"]
    );
    assert_eq!(
        fires("*/20 * * * * *", "UTC", after, 3),
        [
            "2025-01-06T10:00:40Z",
            "2025-01-06T10:01:00Z",
            "2025-01-06T10:01:20Z"
        ]
    );
    let six = parse_cron("0 2 * * *").expect("valid");
    assert_eq!(six.six_fields(), "0 0 2 * * *");
    assert_eq!(six.as_str(), "0 2 * * *");
}

#[test]
fn quartz_features() {
    let after = utc(2025, 1, 1, 0, 0, 0);
    // Last day of month, nearest weekday, nth weekday, names and `?`.
    assert_eq!(
        fires("0 0 12 L * ?", "UTC", after, 2),
        ["2025-01-31T12:00:00Z", "2025-02-28T12:00:00Z"]
    );
    assert_eq!(
        fires("0 9 15W * ?", "UTC", utc(2025, 3, 1, 0, 0, 0), 1),
        ["2025-03-14T09:00:00Z"]
    );
    assert_eq!(
        fires("0 9 ? * MON#1", "UTC", after, 2),
        ["2025-01-06T09:00:00Z", "2025-02-03T09:00:00Z"]
    );
    assert_eq!(
        fires("0 9 ? * 5L", "UTC", after, 1),
        ["2025-01-31T09:00:00Z"]
    );
    assert_eq!(
        fires("30 8 * JAN-FEB mon-fri", "UTC", after, 1),
        ["2025-01-01T08:30:00Z"]
    );
    assert_eq!(
        fires("0 0 * * SUN", "UTC", after, 1),
        fires("0 0 * * 7", "UTC", after, 1)
    );
    assert_eq!(fires("@daily", "UTC", after, 1), ["2025-01-02T00:00:00Z"]);
    assert_eq!(fires("@hourly", "UTC", after, 1), ["2025-01-01T01:00:00Z"]);
}

#[test]
fn errors_name_the_field() {
    assert_eq!(
        cron_err("61 0 * * *"),
        "`61 0 * * *`: minute must be 0–59, got 61"
    );
    // Five fields start with the minute, so the second one is the hour.
    assert_eq!(
        cron_err("0 61 * * *"),
        "`0 61 * * *`: hour must be 0–23, got 61"
    );
    assert_eq!(
        cron_err("* * *"),
        "`* * *`: expected 5 or 6 fields, found 3 ([seconds] minute hour day-of-month month day-of-week)"
    );
    assert!(cron_err("0 0 0 0 0 0 0").contains("found 7"));
    assert_eq!(
        cron_err("60 * * * * *"),
        "`60 * * * * *`: seconds must be 0–59, got 60"
    );
    assert_eq!(
        cron_err("0 24 * * *"),
        "`0 24 * * *`: hour must be 0–23, got 24"
    );
    assert_eq!(
        cron_err("0 0 32 * *"),
        "`0 0 32 * *`: day of month must be 1–31, got 32"
    );
    assert_eq!(
        cron_err("0 0 * 13 *"),
        "`0 0 * 13 *`: month must be 1–12 or JAN–DEC, got 13"
    );
    assert_eq!(
        cron_err("0 0 * * 8"),
        "`0 0 * * 8`: day of week must be 0–7 or SUN–SAT, got 8"
    );
    assert_eq!(
        cron_err("0 0 * * FUN"),
        "`0 0 * * FUN`: day of week must be 0–7 or SUN–SAT, got FUN"
    );
    assert_eq!(
        cron_err("99 99 * * *"),
        "`99 99 * * *`: minute must be 0–59, got 99; hour must be 0–23, got 99"
    );
    assert!(cron_err("0 0 1 * MON").contains("cannot both be restricted"));
    assert_eq!(
        cron_err("0 0 30 2 *"),
        "`0 0 30 2 *`: never fires: FEB has no day 30"
    );
    assert!(cron_err("@sometimes").contains("unknown shortcut"));
    assert!(cron_err("   ").contains("required"));
    assert!(
        cron_err("0 0 LW * *").contains("`0 0 LW * *`"),
        "falls back to croner with the expression"
    );
}

#[test]
fn time_zones() {
    assert_eq!(
        parse_time_zone("Europe/Paris"),
        Ok(chrono_tz::Europe::Paris)
    );
    assert_eq!(parse_time_zone("UTC"), Ok(chrono_tz::UTC));
    assert_eq!(
        parse_time_zone("Mars/Base"),
        Err("unknown time zone 'Mars/Base'; use an IANA name such as Europe/Paris".into())
    );
    assert_eq!(
        parse_time_zone("europe/paris"),
        Err("unknown time zone 'europe/paris'; did you mean Europe/Paris?".into())
    );
    assert!(parse_time_zone("").is_err());
}

#[test]
fn errors_are_reported_under_their_field() {
    let errs = next_fire_times("61 0 * * *", "Mars/Base", utc(2025, 1, 1, 0, 0, 0), 3)
        .expect_err("both bad");
    let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["cron", "time_zone"]);
    assert_eq!(
        errs.0[0].to_string(),
        "cron: `61 0 * * *`: minute must be 0–59, got 61"
    );
}

#[test]
fn local_time_follows_daylight_saving() {
    // 08:00 Paris is 07:00 UTC in winter and 06:00 UTC in summer.
    assert_eq!(
        fires("0 8 * * *", "Europe/Paris", utc(2025, 3, 29, 12, 0, 0), 2),
        ["2025-03-30T06:00:00Z", "2025-03-31T06:00:00Z"]
    );
    assert_eq!(
        fires("0 8 * * *", "Europe/Paris", utc(2025, 10, 25, 12, 0, 0), 2),
        ["2025-10-26T07:00:00Z", "2025-10-27T07:00:00Z"]
    );
}

#[test]
fn spring_forward_gap() {
    // 02:30 does not exist in Paris on 2025-03-30: a fixed-time schedule fires at 03:00 CEST.
    assert_eq!(
        fires("30 2 * * *", "Europe/Paris", utc(2025, 3, 29, 12, 0, 0), 2),
        ["2025-03-30T01:00:00Z", "2025-03-31T00:30:00Z"]
    );
    // An interval schedule skips the missing hour.
    assert_eq!(
        fires(
            "*/30 * * * *",
            "Europe/Paris",
            utc(2025, 3, 29, 23, 59, 0),
            4
        ),
        [
            "2025-03-30T00:00:00Z",
            "2025-03-30T00:30:00Z",
            "2025-03-30T01:00:00Z",
            "2025-03-30T01:30:00Z"
        ]
    );
}

#[test]
fn fall_back_fold() {
    // 02:30 happens twice in Paris on 2025-10-26: a fixed-time schedule fires once, at the first.
    assert_eq!(
        fires("30 2 * * *", "Europe/Paris", utc(2025, 10, 25, 12, 0, 0), 2),
        ["2025-10-26T00:30:00Z", "2025-10-27T01:30:00Z"]
    );
    // An interval schedule fires at every real instant, in order.
    assert_eq!(
        fires(
            "*/30 * * * *",
            "Europe/Paris",
            utc(2025, 10, 25, 23, 50, 0),
            6
        ),
        [
            "2025-10-26T00:00:00Z",
            "2025-10-26T00:30:00Z",
            "2025-10-26T01:00:00Z",
            "2025-10-26T01:30:00Z",
            "2025-10-26T02:00:00Z",
            "2025-10-26T02:30:00Z"
        ]
    );
}

#[test]
fn every_second_stays_every_second_across_the_fold() {
    let from = utc(2025, 10, 26, 0, 30, 0);
    let schedule = Schedule::parse("* * * * * *", "Europe/Paris").expect("valid");
    let got: Vec<_> = schedule.fire_times_after(from).take(2 * 3600).collect();
    let expected: Vec<_> = (1..=2 * 3600)
        .map(|s| from + Duration::seconds(s))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn extreme_instants_do_not_panic() {
    let schedule = Schedule::parse("* * * * *", "Pacific/Kiritimati").expect("valid");
    assert_eq!(schedule.next_after(DateTime::<Utc>::MAX_UTC), None);
    let first = schedule
        .next_after(DateTime::<Utc>::MIN_UTC)
        .expect("fires in year 1");
    assert!(first > DateTime::<Utc>::MIN_UTC);
    let leap_only = Schedule::parse("0 0 29 2 *", "UTC").expect("valid");
    assert_eq!(
        leap_only
            .fire_times_after(utc(2025, 1, 1, 0, 0, 0))
            .take(3)
            .count(),
        3
    );
}

/// Every whole minute from `from` for `minutes` minutes whose wall-clock time matches `cron`.
fn brute_force(cron: &CronExpr, tz: Tz, from: DateTime<Utc>, minutes: i64) -> Vec<DateTime<Utc>> {
    (1..=minutes)
        .map(|m| from + Duration::minutes(m))
        .filter(|t| {
            cron.croner()
                .is_time_matching(&t.with_timezone(&tz))
                .unwrap_or(false)
        })
        .collect()
}

#[test]
fn interval_schedules_fire_at_every_matching_instant_across_transitions() {
    let cases = [
        ("Europe/Paris", utc(2025, 10, 25, 22, 0, 0)),
        ("Europe/Paris", utc(2025, 3, 29, 22, 0, 0)),
        ("America/New_York", utc(2025, 11, 2, 3, 0, 0)),
        ("Australia/Lord_Howe", utc(2025, 4, 5, 12, 0, 0)),
        ("Australia/Lord_Howe", utc(2025, 10, 4, 13, 0, 0)),
    ];
    for (zone, from) in cases {
        for expr in ["*/7 * * * *", "0,10 1-3 * * *", "*/30 * * * *"] {
            let schedule = Schedule::parse(expr, zone).expect("valid");
            let expected = brute_force(schedule.cron(), schedule.time_zone(), from, 6 * 60);
            let end = from + Duration::minutes(6 * 60);
            let got: Vec<_> = schedule
                .fire_times_after(from)
                .take_while(|t| *t <= end)
                .collect();
            assert_eq!(got, expected, "{expr} in {zone} from {from}");
        }
    }
}

fn field_strategy(
    min: u32,
    max: u32,
    names: &'static [&'static str],
    name_base: u32,
) -> BoxedStrategy<String> {
    let value = move |v: u32| -> BoxedStrategy<String> {
        let name = v
            .checked_sub(name_base)
            .and_then(|i| names.get(usize::try_from(i).ok()?));
        match name {
            Some(name) => prop_oneof![Just(v.to_string()), Just((*name).to_string())].boxed(),
            _ => Just(v.to_string()).boxed(),
        }
    };
    prop_oneof![
        Just("*".to_string()),
        (min..=max).prop_flat_map(value),
        (min..=max, min..=max).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        (1..=max).prop_map(|s| format!("*/{s}")),
        (min..=max, 1..=max).prop_map(|(a, s)| format!("{a}/{s}")),
        prop::collection::vec(min..=max, 1..4).prop_map(|vs| vs
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")),
    ]
    .boxed()
}

const MONTH_NAMES: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAY_NAMES: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

fn cron_strategy() -> impl Strategy<Value = String> {
    let days = prop_oneof![
        // Day 29-31 would make some month combinations never fire; 1-28 always exists.
        field_strategy(1, 28, &[], 99).prop_map(|dom| format!("{dom} * ?")),
        field_strategy(1, 12, &MONTH_NAMES, 1).prop_map(|m| format!("? {m} *")),
        field_strategy(0, 7, &DAY_NAMES, 0).prop_map(|dow| format!("? * {dow}")),
        Just("L * ?".to_string()),
        (1u32..=28).prop_map(|d| format!("{d}W * ?")),
        (0u32..=6, 1u32..=4).prop_map(|(d, n)| format!("? * {d}#{n}")),
    ];
    (
        prop::option::of(field_strategy(0, 59, &[], 99)),
        field_strategy(0, 59, &[], 99),
        field_strategy(0, 23, &[], 99),
        days,
    )
        .prop_map(|(sec, min, hour, days)| match sec {
            Some(sec) => format!("{sec} {min} {hour} {days}"),
            None => format!("{min} {hour} {days}"),
        })
}

const ZONES: [&str; 8] = [
    "UTC",
    "Europe/Paris",
    "America/New_York",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "America/Santiago",
    "Pacific/Chatham",
    "Europe/London",
];

proptest! {
    #[test]
    fn valid_expressions_fire_in_increasing_order(
        expr in cron_strategy(),
        zone in prop::sample::select(&ZONES[..]),
        secs in 631_152_000i64..4_102_444_800, // 1990..2100
    ) {
        let after = DateTime::from_timestamp(secs, 0).unwrap_or_default();
        let schedule = Schedule::parse(&expr, zone).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let times: Vec<_> = schedule.fire_times_after(after).take(6).collect();
        prop_assert!(!times.is_empty(), "{expr} never fires");
        prop_assert!(times[0] > after);
        prop_assert!(times.windows(2).all(|w| w[0] < w[1]), "{expr}: {times:?}");
        for t in &times {
            let local = t.with_timezone(&schedule.time_zone());
            let matches = schedule.cron().croner().is_time_matching(&local).unwrap_or(false);
            // The only non-matching fire is a fixed-time one moved to the end of a gap.
            let after_gap = schedule.cron().is_fixed_time()
                && (*t - Duration::seconds(1)).with_timezone(&schedule.time_zone()).offset() != local.offset();
            prop_assert!(matches || after_gap, "{expr}: {local} does not match");
            prop_assert_eq!(t.nanosecond(), 0);
        }
    }

    #[test]
    fn out_of_range_minutes_are_rejected(minute in 60u32..100_000, hour in 0u32..24) {
        let expr = format!("{minute} {hour} * * *");
        let err = parse_cron(&expr).expect_err("out of range");
        prop_assert!(err.contains("minute"), "{err}");
        prop_assert!(err.contains(&minute.to_string()), "{err}");
    }

    #[test]
    fn fractional_after_never_skips_a_fire(secs in 631_152_000i64..4_102_444_800, nanos in 1u32..1_000_000_000) {
        let whole = DateTime::from_timestamp(secs, 0).unwrap_or_default();
        let frac = DateTime::from_timestamp(secs, nanos).unwrap_or_default();
        let schedule = Schedule::parse("* * * * * *", "UTC").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(schedule.next_after(frac), Some(whole + Duration::seconds(1)));
    }
}
