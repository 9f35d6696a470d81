//! How a run explores: the case count, the seed (given, or drawn from the manifest's bytes), the
//! differential, the replay command; and the parsers the command line and the variables share.

use std::path::Path;

use crate::error::SettingError;

/// Cases per trial unless told otherwise.
pub const DEFAULT_CASES: u32 = 100;

/// The most cases a trial may ask for: each is an input drawn and kept before the first call,
/// and a call, so a count past this is a typo rather than a plan (100,000 cases of word-stats
/// take about 6 s in the function pass, far longer through a server).
pub const MAX_CASES: u32 = 100_000;

/// How a run explores, once its settings are resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Cases per trial; 0 turns explore off.
    pub cases: u32,
    /// The seed: the same seed draws the same inputs.
    pub seed: u64,
    /// Whether the seed came from the manifest's bytes (rather than being given).
    pub seed_from_manifest: bool,
    /// Compare the server's answers with the function's.
    pub differential: bool,
    /// The command that replays a trial, with `{trial}` for its name.
    pub replay: String,
    /// The command that runs these tests, as the author typed it (`cargo holon-test`, `npx
    /// holon-test`), which the hints that name a command begin with.
    pub command: String,
    /// The shard of the run this is (`--partition`): it sends its share of the cases, dealt
    /// by their place in the plan (`count`) or a hash of their input (`hash`).
    pub partition: Option<holon_config::partition::Partition>,
}

/// A case count: a whole number from 0 (off) to 100,000 (`MAX_CASES`).
pub fn parse_cases(text: &str) -> Result<u32, SettingError> {
    match text.parse::<u32>() {
        Ok(cases) => check_cases(cases),
        Err(_) => Err(SettingError::Cases { max: MAX_CASES }),
    }
}

/// `cases`, when it is at most `MAX_CASES`.
pub fn check_cases(cases: u32) -> Result<u32, SettingError> {
    if cases <= MAX_CASES {
        Ok(cases)
    } else {
        Err(SettingError::Cases { max: MAX_CASES })
    }
}

/// A seed: a whole number, decimal or `0x` hexadecimal.
pub fn parse_seed(text: &str) -> Result<u64, SettingError> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse::<u64>(),
    };
    parsed.map_err(|_| SettingError::Seed)
}

/// The seed a manifest's bytes give: the same on every machine and in CI, and a new one when
/// the manifest changes.
pub fn manifest_seed(path: &Path) -> Result<u64, SettingError> {
    use sha2::Digest;
    let bytes = std::fs::read(path).map_err(|source| SettingError::Unreadable {
        path: path.to_path_buf(),
        source: std::sync::Arc::new(source),
    })?;
    let digest = sha2::Sha256::digest(&bytes);
    let mut first = [0u8; 8];
    for (to, from) in first.iter_mut().zip(digest.iter()) {
        *to = *from;
    }
    Ok(u64::from_le_bytes(first))
}
