//! The figures a benchmark's table gives of its runs' wall times.

use std::time::Duration;

/// The middle run (the upper one of an even count).
pub fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

pub fn min(times: &[Duration]) -> Duration {
    times.iter().min().copied().unwrap_or_default()
}

pub fn max(times: &[Duration]) -> Duration {
    times.iter().max().copied().unwrap_or_default()
}

/// A time in milliseconds, to a tenth.
pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
