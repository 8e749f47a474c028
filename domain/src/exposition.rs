//! The Prometheus text format (0.0.4), for the manager's `/metrics` and a node's: what they
//! serve is read at each scrape from atomics and, on the manager, from the database, so a
//! registry crate would only hold a second copy of every value. Each family is written with
//! `# HELP` and `# TYPE` (`promtool check metrics` reads the manager's page clean; the test
//! command runs it).

use std::fmt::Write;

/// The type of a metric family, as `# TYPE` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// A page of metric families in the text format.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    /// Starts a family: its help (lines joined, escaped) and type.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) {
        let help = help
            .split('\n')
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
            .replace('\\', "\\\\");
        let _ = writeln!(
            self.out,
            "# HELP {name} {help}\n# TYPE {name} {}",
            kind.as_str()
        );
    }

    /// One sample of the family started last.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl Into<Value>) {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"{}\"", escape(v));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", value.into());
    }

    /// A family of one unlabelled sample.
    pub fn single(&mut self, name: &str, kind: Kind, help: &str, value: impl Into<Value>) {
        self.family(name, kind, help);
        self.sample(name, &[], value);
    }

    pub fn into_text(self) -> String {
        self.out
    }
}

/// A sample's value: integers as they are, floats as the format spells them (`+Inf`, `NaN`).
#[derive(Debug, Clone, Copy)]
pub enum Value {
    Int(u64),
    Float(f64),
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(v)
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(u64::from(v))
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        u64::try_from(v).map_or(Value::Float(v as f64), Value::Int)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) if v.is_nan() => f.write_str("NaN"),
            Value::Float(v) if v == f64::INFINITY => f.write_str("+Inf"),
            Value::Float(v) if v == f64::NEG_INFINITY => f.write_str("-Inf"),
            Value::Float(v) => write!(f, "{v}"),
        }
    }
}

/// A label value: backslash, quote and line break escaped.
pub fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_carry_help_and_type_and_labels_are_escaped() {
        let mut e = Exposition::default();
        e.family(
            "am_x_total",
            Kind::Counter,
            "\n Things done, per\n replica (a \\ b).",
        );
        e.sample(
            "am_x_total",
            &[("agent", "a\"b\\c\nd"), ("result", "ok")],
            3u64,
        );
        e.single("am_lag_seconds", Kind::Gauge, "lag", 0.25);
        assert_eq!(
            e.into_text(),
            "# HELP am_x_total Things done, per replica (a \\\\ b).\n# TYPE am_x_total counter\n\
             am_x_total{agent=\"a\\\"b\\\\c\\nd\",result=\"ok\"} 3\n\
             # HELP am_lag_seconds lag\n# TYPE am_lag_seconds gauge\nam_lag_seconds 0.25\n"
        );
    }

    #[test]
    fn floats_are_spelled_as_the_format_wants() {
        assert_eq!(Value::from(f64::INFINITY).to_string(), "+Inf");
        assert_eq!(Value::from(f64::NAN).to_string(), "NaN");
        assert_eq!(Value::from(1e-3).to_string(), "0.001");
        assert_eq!(Value::from(7u64).to_string(), "7");
    }
}
