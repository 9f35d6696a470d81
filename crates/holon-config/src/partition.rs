//! A run dealt among shards, as `--partition` asks, in nextest's words: `count:K/N` deals the
//! work round-robin by its place in a fixed order, `hash:K/N` by a hash of its name, so that N
//! shards (CI machines, each running its own server) together make the whole run and no part
//! of it runs twice. What is dealt is each caller's own unit (an example's call, an explore
//! case, a fault trial); here only the rule.

use sha2::{Digest, Sha256};

/// How the work is dealt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deal {
    /// Round-robin by place: the unit at place `p` (from 0) goes to shard `p % N + 1`.
    Count,
    /// By a hash of the unit's name: the same name goes to the same shard on every machine.
    Hash,
}

/// One shard of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// How the work is dealt.
    pub deal: Deal,
    /// This shard, from 1.
    pub shard: u64,
    /// How many shards.
    pub of: u64,
}

/// Why a partition is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a partition: `count:K/N` or `hash:K/N`, with 1 <= K <= N (nextest's syntax), such as `count:1/3`"
)]
pub struct NotAPartition(pub String);

impl Partition {
    /// `count:K/N` or `hash:K/N`.
    pub fn parse(text: &str) -> Result<Partition, NotAPartition> {
        let wrong = || NotAPartition(text.to_string());
        let (kind, shard) = text.trim().split_once(':').ok_or_else(wrong)?;
        let deal = match kind {
            "count" => Deal::Count,
            "hash" => Deal::Hash,
            _ => return Err(wrong()),
        };
        let (k, n) = shard.split_once('/').ok_or_else(wrong)?;
        let (shard, of) = (k.parse::<u64>(), n.parse::<u64>());
        match (shard, of) {
            (Ok(shard), Ok(of)) if shard >= 1 && shard <= of => Ok(Partition { deal, shard, of }),
            _ => Err(wrong()),
        }
    }

    /// Whether this shard takes the unit at `place` (in the order every shard draws the same),
    /// named `name` (the same on every machine).
    pub fn takes(&self, place: u64, name: &str) -> bool {
        let at = match self.deal {
            Deal::Count => place,
            Deal::Hash => {
                let digest = Sha256::digest(name.as_bytes());
                let mut first = [0u8; 8];
                first.copy_from_slice(digest.get(..8).unwrap_or(&[0; 8]));
                u64::from_be_bytes(first)
            }
        };
        at % self.of == self.shard - 1
    }

    /// How the command line says it: `count:1/3`.
    pub fn name(&self) -> String {
        let deal = match self.deal {
            Deal::Count => "count",
            Deal::Hash => "hash",
        };
        format!("{deal}:{}/{}", self.shard, self.of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextest_s_syntax_is_read_and_anything_else_refused() {
        assert_eq!(
            Partition::parse("count:1/3"),
            Ok(Partition {
                deal: Deal::Count,
                shard: 1,
                of: 3
            })
        );
        assert_eq!(
            Partition::parse("hash:3/3").map(|p| p.name()),
            Ok("hash:3/3".into())
        );
        for wrong in [
            "4/3",
            "count:4/3",
            "count:0/3",
            "count:1/0",
            "slice:1/3",
            "count:1",
            "count:a/b",
            "",
        ] {
            assert!(Partition::parse(wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn the_shards_are_disjoint_and_together_the_whole() {
        for deal in ["count", "hash"] {
            let shards: Vec<Partition> = (1..=3)
                .map(|k| Partition::parse(&format!("{deal}:{k}/3")).expect("a partition"))
                .collect();
            for place in 0..100u64 {
                let name = format!("example {place}");
                let takers = shards.iter().filter(|p| p.takes(place, &name)).count();
                assert_eq!(takers, 1, "{deal}: unit {place}");
            }
        }
    }
}
