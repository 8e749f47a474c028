//! Labelled metric families of one process: counters and histograms keyed by a fixed set of
//! label names. Labels are bounded by the catalog (application, agent, result, route): no
//! family here is keyed by a launch setting or an activation, which a catalog holds by the
//! ten thousand.

use am_domain::exposition::{Exposition, Kind};
use std::{
    collections::BTreeMap,
    sync::{Mutex, MutexGuard, PoisonError},
};

/// What a family is called and which labels key it.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub name: &'static str,
    pub help: &'static str,
    pub labels: &'static [&'static str],
}

impl Family {
    fn pairs<'a>(&self, values: &'a [String]) -> Vec<(&'static str, &'a str)> {
        self.labels
            .iter()
            .copied()
            .zip(values.iter().map(String::as_str))
            .collect()
    }
}

/// A family's series; a panic while one was held cannot have left a count half-written.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn key(labels: &[&str]) -> Vec<String> {
    labels.iter().map(|l| (*l).to_owned()).collect()
}

/// A counter per combination of label values.
#[derive(Debug)]
pub struct Counters {
    family: Family,
    series: Mutex<BTreeMap<Vec<String>, u64>>,
}

impl Counters {
    pub const fn new(family: Family) -> Self {
        Self {
            family,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    /// Counts one, `labels` in the order of the family's label names.
    pub fn inc(&self, labels: &[&str]) {
        debug_assert_eq!(labels.len(), self.family.labels.len());
        let mut series = lock(&self.series);
        *series.entry(key(labels)).or_default() += 1;
    }

    /// Adds the counts of `other` (work counted apart, since committed).
    pub fn absorb(&self, other: &Counters) {
        let theirs = lock(&other.series).clone();
        let mut series = lock(&self.series);
        for (k, n) in theirs {
            *series.entry(k).or_default() += n;
        }
    }

    pub fn get(&self, labels: &[&str]) -> u64 {
        let series = lock(&self.series);
        series.get(&key(labels)).copied().unwrap_or(0)
    }

    pub fn render(&self, e: &mut Exposition) {
        let f = self.family;
        e.family(f.name, Kind::Counter, f.help);
        let series = lock(&self.series);
        for (values, n) in series.iter() {
            e.sample(f.name, &f.pairs(values), *n);
        }
    }
}

#[derive(Debug, Clone)]
struct Buckets {
    /// Observations at or below each bound (not yet cumulative).
    counts: Vec<u64>,
    count: u64,
    sum: f64,
}

/// A histogram per combination of label values, with fixed bucket bounds.
#[derive(Debug)]
pub struct Histograms {
    family: Family,
    bounds: &'static [f64],
    series: Mutex<BTreeMap<Vec<String>, Buckets>>,
}

impl Histograms {
    /// `bounds` ascending; `+Inf` is added when written.
    pub const fn new(family: Family, bounds: &'static [f64]) -> Self {
        Self {
            family,
            bounds,
            series: Mutex::new(BTreeMap::new()),
        }
    }

    /// Observes `value` (negative values, e.g. from clocks apart, count as zero).
    pub fn observe(&self, labels: &[&str], value: f64) {
        debug_assert_eq!(labels.len(), self.family.labels.len());
        let value = if value.is_finite() {
            value.max(0.0)
        } else {
            0.0
        };
        let mut series = lock(&self.series);
        let b = series.entry(key(labels)).or_insert_with(|| Buckets {
            counts: vec![0; self.bounds.len()],
            count: 0,
            sum: 0.0,
        });
        if let Some(i) = self.bounds.iter().position(|bound| value <= *bound) {
            b.counts[i] += 1;
        }
        b.count += 1;
        b.sum += value;
    }

    /// Adds the observations of `other` (same bounds; work counted apart, since committed).
    pub fn absorb(&self, other: &Histograms) {
        let theirs = lock(&other.series).clone();
        let mut series = lock(&self.series);
        for (k, b) in theirs {
            match series.get_mut(&k) {
                Some(mine) => {
                    for (m, t) in mine.counts.iter_mut().zip(&b.counts) {
                        *m += t;
                    }
                    mine.count += b.count;
                    mine.sum += b.sum;
                }
                None => {
                    series.insert(k, b);
                }
            }
        }
    }

    /// Observations of one series so far.
    pub fn count(&self, labels: &[&str]) -> u64 {
        let series = lock(&self.series);
        series.get(&key(labels)).map_or(0, |b| b.count)
    }

    pub fn render(&self, e: &mut Exposition) {
        let f = self.family;
        e.family(f.name, Kind::Histogram, f.help);
        let bucket = format!("{}_bucket", f.name);
        let sum = format!("{}_sum", f.name);
        let count = format!("{}_count", f.name);
        let series = lock(&self.series);
        for (values, b) in series.iter() {
            let labels = f.pairs(values);
            let mut cumulative = 0;
            for (bound, n) in self.bounds.iter().zip(&b.counts) {
                cumulative += n;
                let le = bound.to_string();
                e.sample(&bucket, &with_le(&labels, &le), cumulative);
            }
            e.sample(&bucket, &with_le(&labels, "+Inf"), b.count);
            e.sample(&sum, &labels, b.sum);
            e.sample(&count, &labels, b.count);
        }
    }
}

fn with_le<'a>(labels: &[(&'static str, &'a str)], le: &'a str) -> Vec<(&'static str, &'a str)> {
    let mut l = labels.to_vec();
    l.push(("le", le));
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUNS: Family = Family {
        name: "am_run_duration_seconds",
        help: "run time",
        labels: &["agent", "result"],
    };

    #[test]
    fn a_histogram_writes_cumulative_buckets_sum_and_count_per_series() {
        let h = Histograms::new(RUNS, &[1.0, 10.0]);
        h.observe(&["a", "succeeded"], 0.5);
        h.observe(&["a", "succeeded"], 5.0);
        h.observe(&["a", "succeeded"], 50.0);
        h.observe(&["b", "failed"], -2.0);
        let mut e = Exposition::default();
        h.render(&mut e);
        let text = e.into_text();
        for line in [
            "# TYPE am_run_duration_seconds histogram",
            "am_run_duration_seconds_bucket{agent=\"a\",result=\"succeeded\",le=\"1\"} 1",
            "am_run_duration_seconds_bucket{agent=\"a\",result=\"succeeded\",le=\"10\"} 2",
            "am_run_duration_seconds_bucket{agent=\"a\",result=\"succeeded\",le=\"+Inf\"} 3",
            "am_run_duration_seconds_sum{agent=\"a\",result=\"succeeded\"} 55.5",
            "am_run_duration_seconds_count{agent=\"a\",result=\"succeeded\"} 3",
            "am_run_duration_seconds_bucket{agent=\"b\",result=\"failed\",le=\"1\"} 1",
            "am_run_duration_seconds_sum{agent=\"b\",result=\"failed\"} 0",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
        }
        assert_eq!(h.count(&["a", "succeeded"]), 3);
        assert_eq!(h.count(&["c", "failed"]), 0);
        let other = Histograms::new(RUNS, &[1.0, 10.0]);
        other.observe(&["a", "succeeded"], 0.5);
        other.observe(&["c", "failed"], 2.0);
        h.absorb(&other);
        assert_eq!(
            (h.count(&["a", "succeeded"]), h.count(&["c", "failed"])),
            (4, 1)
        );
    }

    #[test]
    fn counters_count_per_combination_of_labels() {
        let c = Counters::new(Family {
            name: "am_x_total",
            help: "x",
            labels: &["agent"],
        });
        c.inc(&["a"]);
        c.inc(&["a"]);
        c.inc(&["b"]);
        assert_eq!((c.get(&["a"]), c.get(&["b"]), c.get(&["z"])), (2, 1, 0));
        let other = Counters::new(c.family);
        other.inc(&["b"]);
        c.absorb(&other);
        assert_eq!(c.get(&["b"]), 2);
        let mut e = Exposition::default();
        c.render(&mut e);
        assert!(
            e.into_text()
                .ends_with("am_x_total{agent=\"a\"} 2\nam_x_total{agent=\"b\"} 2\n")
        );
    }
}
