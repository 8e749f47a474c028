//! What the services benchmarks share: their settings from the environment and percentiles.

/// The setting `name` from the environment, or `default` when unset or not a number.
pub fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The value at fraction `p` (0.5 the median) of `sorted`, 0 when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(0.0)
}
