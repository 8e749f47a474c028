//! A schedule in words, for lists: `every day at 02:00 Europe/Paris`, `Monday to Friday at
//! 06:30 UTC`, `every 15 minutes`. Only the shapes people write most are put in words; any other
//! expression is shown as written, which is never wrong.

use super::CronExpr;

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

fn number(field: &str) -> Option<u32> {
    field.parse().ok()
}

/// `*/n`.
fn every(field: &str) -> Option<u32> {
    field.strip_prefix("*/").and_then(number)
}

fn day(n: u32) -> Option<&'static str> {
    DAYS.get(usize::try_from(n % 7).ok()?).copied()
}

/// A day-of-week field: `Monday`, `Monday to Friday`, `Monday, Wednesday and Friday`.
fn days(field: &str) -> Option<String> {
    if let Some((from, to)) = field.split_once('-') {
        return Some(format!("{} to {}", day(number(from)?)?, day(number(to)?)?));
    }
    let names: Vec<&str> = field
        .split(',')
        .map(|d| number(d).and_then(day))
        .collect::<Option<_>>()?;
    Some(match names.as_slice() {
        [one] => format!("every {one}"),
        [init @ .., last] => format!("on {} and {last}", init.join(", ")),
        [] => return None,
    })
}

/// `cron` in words, with its time zone where a time of day is named; `None` for shapes this
/// does not know (show the expression instead).
pub fn in_words(cron: &CronExpr, time_zone: &str) -> Option<String> {
    let fields: Vec<&str> = cron.six_fields().split_whitespace().collect();
    let [second, minute, hour, dom, month, dow] = fields.as_slice() else {
        return None;
    };
    if *second != "0" || *month != "*" {
        return None;
    }
    let at = |h: u32, m: u32| format!("at {h:02}:{m:02} {time_zone}");
    match (number(minute), number(hour), *dom, *dow) {
        (Some(m), Some(h), "*", "*") => Some(format!("every day {}", at(h, m))),
        (Some(m), Some(h), "*", dow) => Some(format!("{} {}", days(dow)?, at(h, m))),
        (Some(m), Some(h), dom, "*") => Some(format!(
            "on day {} of every month {}",
            number(dom)?,
            at(h, m)
        )),
        (Some(m), None, "*", "*") if *hour == "*" => Some(format!("every hour at :{m:02}")),
        (Some(m), None, "*", "*") => Some(format!("every {} hours at :{m:02}", every(hour)?)),
        (None, None, "*", "*") if *hour == "*" => match *minute {
            "*" => Some("every minute".to_owned()),
            m => Some(format!("every {} minutes", every(m)?)),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::parse_cron;

    fn words(cron: &str, tz: &str) -> Option<String> {
        in_words(&parse_cron(cron).expect("valid"), tz)
    }

    #[test]
    fn common_shapes_read_as_words() {
        assert_eq!(
            words("0 2 * * *", "Europe/Paris").as_deref(),
            Some("every day at 02:00 Europe/Paris")
        );
        assert_eq!(
            words("30 6 * * MON-FRI", "UTC").as_deref(),
            Some("Monday to Friday at 06:30 UTC")
        );
        assert_eq!(
            words("0 9 * * 1", "UTC").as_deref(),
            Some("every Monday at 09:00 UTC")
        );
        assert_eq!(
            words("0 9 * * 1,3,5", "UTC").as_deref(),
            Some("on Monday, Wednesday and Friday at 09:00 UTC")
        );
        assert_eq!(
            words("15 4 1 * *", "UTC").as_deref(),
            Some("on day 1 of every month at 04:15 UTC")
        );
        assert_eq!(
            words("5 * * * *", "UTC").as_deref(),
            Some("every hour at :05")
        );
        assert_eq!(
            words("0 */6 * * *", "UTC").as_deref(),
            Some("every 6 hours at :00")
        );
        assert_eq!(
            words("*/15 * * * *", "UTC").as_deref(),
            Some("every 15 minutes")
        );
        assert_eq!(words("* * * * *", "UTC").as_deref(), Some("every minute"));
        assert_eq!(
            words("@daily", "UTC").as_deref(),
            Some("every day at 00:00 UTC")
        );
    }

    #[test]
    fn other_shapes_are_left_as_written() {
        assert_eq!(words("30 0 2 * * *", "UTC"), None, "seconds");
        assert_eq!(words("0 2 * 1 *", "UTC"), None, "one month");
        assert_eq!(words("0 8-18 * * *", "UTC"), None, "an hour range");
    }
}
