//! The two statistics a measurement needs, in a few lines rather than a crate: the Wilson score
//! interval of a rate (sound at the small counts a run of tens of calls gives, and at 0% and
//! 100%, where the normal approximation collapses to a point) and nearest-rank percentiles.

use std::time::Duration;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95% Wilson score interval of `successes` out of `n`, as fractions from 0 to 1; `None`
/// when `n` is 0.
pub(crate) fn wilson(successes: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = (successes as f64 / n).clamp(0.0, 1.0);
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// The `p`-th percentile (0 to 100) of `sorted` by nearest rank: the smallest value that at
/// least `p`% of the values do not exceed; `None` for no values.
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    #[test]
    fn the_wilson_interval_matches_published_values() {
        // Newcombe (1998), table I: 81 of 263 gives 0.2553 to 0.3662; 15 of 148 gives
        // 0.0624 to 0.1605; 0 of 20 gives 0 to 0.1611; 1 of 29 gives 0.0061 to 0.1718.
        for (k, n, low, high) in [
            (81, 263, 0.2553, 0.3662),
            (15, 148, 0.0624, 0.1605),
            (0, 20, 0.0, 0.1611),
            (1, 29, 0.0061, 0.1718),
        ] {
            let (l, h) = wilson(k, n).expect("an interval");
            assert!(close(l, low) && close(h, high), "{k}/{n}: {l} {h}");
        }
        let (l, h) = wilson(20, 20).expect("an interval");
        assert!(close(l, 0.8389) && h == 1.0, "{l} {h}");
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let ms =
            |v: &[u64]| -> Vec<Duration> { v.iter().map(|m| Duration::from_millis(*m)).collect() };
        let values = ms(&[15, 20, 35, 40, 50]);
        assert_eq!(percentile(&values, 5.0), Some(Duration::from_millis(15)));
        assert_eq!(percentile(&values, 30.0), Some(Duration::from_millis(20)));
        assert_eq!(percentile(&values, 50.0), Some(Duration::from_millis(35)));
        assert_eq!(percentile(&values, 100.0), Some(Duration::from_millis(50)));
        let hundred: Vec<Duration> = ms(&(1..=100).collect::<Vec<u64>>());
        assert_eq!(percentile(&hundred, 95.0), Some(Duration::from_millis(95)));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
