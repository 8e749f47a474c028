//! Our own per-field check of a cron expression, run before croner sees it.
//!
//! croner's messages ("Number out of bounds.") do not say which field or which value is wrong;
//! operators need "minute must be 0–59, got 61". The check also rewrites the expression into one
//! plain numeric six-field form, so croner (and any scheduler fed with [`super::CronExpr::six_fields`])
//! reads exactly what was validated, without croner's whole-string name replacement.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
/// Longest month lengths, February counted in leap years.
const MONTH_DAYS: [u32; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

impl Field {
    pub(super) const WITH_SECONDS: [Field; 6] = [
        Field::Second,
        Field::Minute,
        Field::Hour,
        Field::DayOfMonth,
        Field::Month,
        Field::DayOfWeek,
    ];

    fn name(self) -> &'static str {
        match self {
            Field::Second => "seconds",
            Field::Minute => "minute",
            Field::Hour => "hour",
            Field::DayOfMonth => "day of month",
            Field::Month => "month",
            Field::DayOfWeek => "day of week",
        }
    }

    fn bounds(self) -> (u32, u32) {
        match self {
            Field::Second | Field::Minute => (0, 59),
            Field::Hour => (0, 23),
            Field::DayOfMonth => (1, 31),
            Field::Month => (1, 12),
            Field::DayOfWeek => (0, 7),
        }
    }

    fn rule(self) -> String {
        let (min, max) = self.bounds();
        match self {
            Field::Month => format!("{min}–{max} or JAN–DEC"),
            Field::DayOfWeek => format!("{min}–{max} or SUN–SAT"),
            _ => format!("{min}–{max}"),
        }
    }

    /// Names accepted for the field, with the number of the first one.
    fn names(self) -> Option<(&'static [&'static str], u32)> {
        match self {
            Field::Month => Some((&MONTHS, 1)),
            Field::DayOfWeek => Some((&WEEKDAYS, 0)),
            _ => None,
        }
    }
}

/// A field after checking: its numeric form and, for the never-fires check, the plain days or
/// months it lists (`None` when it is `*` or uses L, W or #).
pub(super) struct CheckedField {
    pub(super) text: String,
    pub(super) plain_values: Option<Vec<u32>>,
}

impl CheckedField {
    pub(super) fn is_wildcard(&self) -> bool {
        self.text == "*"
    }
}

/// Checks one field; the error says what is wrong without repeating the whole expression.
pub(super) fn check_field(field: Field, text: &str) -> Result<CheckedField, String> {
    let upper = text.to_ascii_uppercase();
    if upper == "*" || (upper == "?" && matches!(field, Field::DayOfMonth | Field::DayOfWeek)) {
        return Ok(CheckedField {
            text: "*".into(),
            plain_values: None,
        });
    }
    let mut items = Vec::new();
    let mut plain = Some(Vec::new());
    for item in upper.split(',') {
        if item.is_empty() {
            return Err(format!(
                "{} has an empty list item in `{text}`",
                field.name()
            ));
        }
        let (normalized, values) = check_item(field, item)?;
        items.push(normalized);
        match (values, plain.as_mut()) {
            (Some(v), Some(all)) => all.extend(v),
            _ => plain = None,
        }
    }
    Ok(CheckedField {
        text: items.join(","),
        plain_values: plain,
    })
}

fn check_item(field: Field, item: &str) -> Result<(String, Option<Vec<u32>>), String> {
    let (base, step) = match item.split_once('/') {
        Some((base, step)) => (base, Some(check_step(field, step)?)),
        None => (item, None),
    };
    if base == "?" {
        return Err(format!(
            "`?` is only allowed in day of month and day of week, and alone, not in `{item}`"
        ));
    }
    let (min, max) = field.bounds();
    let step_suffix = step.map(|s| format!("/{s}")).unwrap_or_default();
    let stepped = |from: u32, to: u32| -> Vec<u32> {
        (from..=to)
            .step_by(usize::try_from(step.unwrap_or(1)).unwrap_or(1))
            .collect()
    };

    if base == "*" {
        return Ok((format!("*{step_suffix}"), Some(stepped(min, max))));
    }
    if field == Field::DayOfMonth && step.is_none() {
        if base == "L" {
            return Ok(("L".into(), None));
        }
        if let Some(day) = base.strip_suffix('W') {
            let day = value(field, day)?;
            return Ok((format!("{day}W"), Some(vec![day])));
        }
    }
    if field == Field::DayOfWeek && step.is_none() {
        if let Some((day, nth)) = base.split_once('#') {
            let day = value(field, day)?;
            return match nth.parse::<u32>() {
                Ok(n @ 1..=5) => Ok((format!("{day}#{n}"), None)),
                _ => Err(format!(
                    "day of week `{base}`: the occurrence after '#' must be 1–5, got {nth}"
                )),
            };
        }
        if let Some(day) = base.strip_suffix('L').filter(|d| !d.is_empty()) {
            let day = value(field, day)?;
            return Ok((format!("{day}L"), None));
        }
    }
    if let Some((from, to)) = base.split_once('-') {
        let from = value(field, from)?;
        // `MON-SUN` ends on Sunday as 7, not 0.
        let to = if field == Field::DayOfWeek && to == "SUN" {
            7
        } else {
            value(field, to)?
        };
        if from > to {
            return Err(format!(
                "{} range `{base}` goes backwards; write the smaller value first",
                field.name()
            ));
        }
        return Ok((format!("{from}-{to}{step_suffix}"), Some(stepped(from, to))));
    }
    let v = value(field, base)?;
    match step {
        // `5/15` means from 5 to the end of the range, every 15.
        Some(_) => Ok((format!("{v}{step_suffix}"), Some(stepped(v, max)))),
        None => Ok((v.to_string(), Some(vec![v]))),
    }
}

fn check_step(field: Field, step: &str) -> Result<u32, String> {
    let (_, max) = field.bounds();
    match step.parse::<u32>() {
        Ok(s) if (1..=max).contains(&s) => Ok(s),
        _ => Err(format!("{} step must be 1–{max}, got {step}", field.name())),
    }
}

fn value(field: Field, token: &str) -> Result<u32, String> {
    let (min, max) = field.bounds();
    let out_of_range = || format!("{} must be {}, got {token}", field.name(), field.rule());
    if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
        return match token.parse::<u32>() {
            Ok(v) if (min..=max).contains(&v) => Ok(v),
            _ => Err(out_of_range()),
        };
    }
    field
        .names()
        .and_then(|(names, first)| {
            let index = names.iter().position(|n| *n == token)?;
            u32::try_from(index).ok().map(|i| i + first)
        })
        .ok_or_else(out_of_range)
}

/// Says why a day-of-month / month combination can never happen (`31` in `2,4`), if it can't.
pub(super) fn never_fires(day_of_month: &CheckedField, month: &CheckedField) -> Option<String> {
    let days = day_of_month.plain_values.as_ref()?;
    let months = month.plain_values.as_ref()?;
    let first_day = days.iter().copied().min()?;
    let longest = months
        .iter()
        .filter_map(|m| MONTH_DAYS.get(usize::try_from(m.checked_sub(1)?).ok()?))
        .copied()
        .max()?;
    (first_day > longest).then(|| {
        let names: Vec<&str> = months
            .iter()
            .filter_map(|m| {
                MONTHS
                    .get(usize::try_from(m.checked_sub(1)?).ok()?)
                    .copied()
            })
            .collect();
        match names.as_slice() {
            [one] => format!("never fires: {one} has no day {first_day}"),
            many => format!(
                "never fires: none of {} has a day {first_day}",
                many.join(", ")
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(field: Field, text: &str) -> String {
        match check_field(field, text) {
            Ok(f) => f.text,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn err(field: Field, text: &str) -> String {
        match check_field(field, text) {
            Ok(f) => panic!("{text} accepted as {}", f.text),
            Err(e) => e,
        }
    }

    #[test]
    fn normalizes_names_and_question_marks() {
        assert_eq!(ok(Field::Month, "jan-mar,Dec"), "1-3,12");
        assert_eq!(ok(Field::DayOfWeek, "MON-FRI"), "1-5");
        assert_eq!(ok(Field::DayOfWeek, "mon-sun"), "1-7");
        assert_eq!(ok(Field::DayOfWeek, "fri#2"), "5#2");
        assert_eq!(ok(Field::DayOfWeek, "5L"), "5L");
        assert_eq!(ok(Field::DayOfMonth, "?"), "*");
        assert_eq!(ok(Field::DayOfMonth, "15w"), "15W");
        assert_eq!(ok(Field::DayOfMonth, "L"), "L");
        assert_eq!(ok(Field::Minute, "*/15"), "*/15");
        assert_eq!(ok(Field::Minute, "5/20"), "5/20");
        assert_eq!(ok(Field::Hour, "8-18/2"), "8-18/2");
    }

    #[test]
    fn names_the_field_and_the_value() {
        assert_eq!(err(Field::Minute, "61"), "minute must be 0–59, got 61");
        assert_eq!(err(Field::Hour, "1,24"), "hour must be 0–23, got 24");
        assert_eq!(
            err(Field::DayOfMonth, "0"),
            "day of month must be 1–31, got 0"
        );
        assert_eq!(
            err(Field::Month, "13"),
            "month must be 1–12 or JAN–DEC, got 13"
        );
        assert_eq!(
            err(Field::Month, "FOO"),
            "month must be 1–12 or JAN–DEC, got FOO"
        );
        assert_eq!(
            err(Field::DayOfWeek, "8"),
            "day of week must be 0–7 or SUN–SAT, got 8"
        );
        assert_eq!(err(Field::Second, "60"), "seconds must be 0–59, got 60");
        assert_eq!(err(Field::Minute, "*/0"), "minute step must be 1–59, got 0");
        assert!(err(Field::Minute, "?").contains("`?`"));
        assert!(err(Field::Hour, "18-8").contains("backwards"));
        assert!(err(Field::DayOfWeek, "1#6").contains("1–5"));
        assert!(err(Field::Minute, "1,,2").contains("empty"));
        assert_eq!(err(Field::Minute, "MON"), "minute must be 0–59, got MON");
    }

    #[test]
    fn detects_days_that_never_come() {
        let check = |dom: &str, month: &str| {
            let dom = check_field(Field::DayOfMonth, dom).expect("day");
            let month = check_field(Field::Month, month).expect("month");
            never_fires(&dom, &month)
        };
        assert_eq!(
            check("30", "2").as_deref(),
            Some("never fires: FEB has no day 30")
        );
        assert_eq!(
            check("31", "APR,JUN").as_deref(),
            Some("never fires: none of APR, JUN has a day 31")
        );
        assert_eq!(check("29", "2"), None);
        assert_eq!(check("30,1", "2"), None);
        assert_eq!(check("31", "*"), None);
        assert_eq!(check("L", "2"), None);
    }
}
