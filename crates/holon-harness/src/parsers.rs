//! The parsers of the settings the harness itself types (text to a number of calls, a rate, a
//! path), each with the one wording of its error; explore, the upstreams and the eras keep
//! their own. The table of settings (`defs`) names one per setting.

use std::path::{Path, PathBuf};

use crate::error::SettingError;
use holon_config::partition::Partition;

/// The most calls of one example a run may ask for.
pub const MAX_REPEAT: u32 = 10_000;

/// `N` for `--repeat N` or `HOLON_REPEAT`: a whole number of calls, 1 to 10,000.
pub fn parse_repeat(text: &str) -> Result<u32, SettingError> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=MAX_REPEAT).contains(&n) => Ok(n),
        _ => Err(SettingError::Repeat {
            text: text.to_string(),
            max: MAX_REPEAT,
        }),
    }
}

/// `R` for `--min-success-rate R`: a fraction from 0 to 1.
pub fn parse_rate(text: &str) -> Result<f64, SettingError> {
    match text.trim().parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(SettingError::Rate(text.to_string())),
    }
}

/// `count:K/N` or `hash:K/N` for `--partition`, nextest's syntax.
pub fn parse_partition(text: &str) -> Result<Partition, SettingError> {
    Partition::parse(text).map_err(SettingError::Partition)
}

/// `N` for `--max-calls N`: a whole number of calls, at least 1.
pub fn parse_max_calls(text: &str) -> Result<u64, SettingError> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(SettingError::MaxCalls(text.to_string())),
    }
}

/// Calls in flight at once when nothing else is said.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// The most calls in flight a run may ask for.
pub const MAX_CONCURRENCY: usize = 1024;

/// `N` for `--concurrency N` or `HOLON_CONCURRENCY`: a whole number of calls, 1 to 1024.
pub fn parse_concurrency(text: &str) -> Result<usize, SettingError> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_CONCURRENCY).contains(&n) => Ok(n),
        _ => Err(SettingError::Concurrency {
            text: text.to_string(),
            max: MAX_CONCURRENCY,
        }),
    }
}

/// `on` or `off` (`1` or `0`).
pub fn parse_switch(text: &str) -> Result<bool, SettingError> {
    match text.trim() {
        "on" | "1" => Ok(true),
        "off" | "0" => Ok(false),
        other => Err(SettingError::Switch(other.to_string())),
    }
}

/// A flag's variable (`HOLON_BLESS`, `HOLON_FORCE`): set to `1`, on; set to anything else, off.
pub(crate) fn parse_one(text: &str) -> Result<bool, SettingError> {
    Ok(text == "1")
}

/// Seconds above 0, fractions allowed.
pub fn parse_seconds(text: &str) -> Result<f64, SettingError> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err(SettingError::Seconds(text.to_string())),
    }
}

/// A path, under `base` when relative; an empty one says nothing where it could be written
/// to, so it is refused rather than taken as the folder.
pub(crate) fn parse_path(text: &str, base: &Path) -> Result<PathBuf, SettingError> {
    match text.is_empty() {
        true => Err(SettingError::EmptyPath),
        false => Ok(base.join(text)),
    }
}
