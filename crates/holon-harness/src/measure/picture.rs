//! What the report page draws of a measured run: each example's figures and the whole run's, as
//! numbers, from the same tally and the same functions the `measure:` lines are written from,
//! so the page and the lines cannot disagree.

use std::time::Duration;

use super::stats::{percentile, wilson};
use super::tally::{Context, Figures, Tally, paid};

/// How a status counts, which is how the page colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A success: billed.
    Success,
    /// A reserved status that counts against the agent (`invalid_output`, `timeout`, ...).
    Against,
    /// A declared failure: counted apart.
    Declared,
    /// Nothing to judge.
    NotJudged,
}

/// The figures of one example's calls, or of all of them.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// The example's name (`total` for the whole run).
    pub name: String,
    /// Calls counted.
    pub calls: u64,
    /// Of which successes.
    pub success: u64,
    /// The calls the success rate is measured on.
    pub counted: u64,
    /// Successes over the counted calls.
    pub rate: Option<f64>,
    /// The rate's 95% Wilson interval.
    pub interval: Option<(f64, f64)>,
    /// Latency: the median, the 95th percentile and the longest.
    pub latency: Option<(Duration, Duration, Duration)>,
    /// The calls by status, in the order the report says them.
    pub statuses: Vec<(String, u64, Kind)>,
}

impl Row {
    fn of(name: &str, f: &Figures) -> Row {
        let latency = match (percentile(&f.took, 50.0), percentile(&f.took, 95.0)) {
            (Some(p50), Some(p95)) => f.took.last().map(|max| (p50, p95, *max)),
            _ => None,
        };
        let mut statuses = Vec::new();
        if f.success > 0 {
            statuses.push(("success".to_string(), f.success, Kind::Success));
        }
        statuses.extend((f.against.iter()).map(|(c, n)| (c.clone(), *n, Kind::Against)));
        statuses.extend((f.declared.iter()).map(|(c, n)| (c.clone(), *n, Kind::Declared)));
        statuses.extend(
            (f.not_judged.iter())
                .map(|(why, n)| (format!("not judged ({why})"), *n, Kind::NotJudged)),
        );
        Row {
            name: name.to_string(),
            calls: f.calls,
            success: f.success,
            counted: f.counted(),
            rate: f.rate(),
            interval: wilson(f.success, f.counted()),
            latency,
            statuses,
        }
    }
}

/// What the page draws of a measured run.
#[derive(Debug, Clone)]
pub(crate) struct Picture {
    /// The `measure:` lines, as the run prints them.
    pub lines: String,
    /// Each example with calls, in the manifest's order.
    pub examples: Vec<Row>,
    /// The whole run.
    pub total: Row,
    /// Every judged call's latency, shortest first.
    pub latencies: Vec<Duration>,
    /// `runtime.limits.timeout_s`.
    pub timeout: Duration,
    /// The manifest's currency.
    pub currency: String,
    /// The price of a billed call.
    pub price: f64,
    /// What the author is paid a success, after the platform's fee.
    pub paid_per_success: Option<f64>,
    /// What the upstreams cost a success, when every answer's tokens are known and priced.
    pub spent_per_success: Option<f64>,
}

impl Tally {
    /// The picture of the calls counted; `lines` is the report the run prints of them.
    pub(crate) fn picture(&self, cx: &Context<'_>, lines: String) -> Picture {
        let m = cx.manifest;
        let examples = (m.examples.iter().zip(self.examples()))
            .filter(|(_, seen)| !seen.is_empty())
            .map(|(e, seen)| Row::of(&e.name, &Figures::of(seen.iter())))
            .collect();
        let all = Figures::of(self.examples().iter().flatten());
        let (lines_spent, spent) = self.upstream_spend(cx);
        let per_success = |x: f64| (all.success > 0).then(|| x / all.success as f64);
        Picture {
            lines,
            examples,
            total: Row::of("total", &all),
            latencies: all.took.clone(),
            timeout: m.runtime.limits.timeout(),
            currency: m.pricing.currency.clone(),
            price: m.pricing.price,
            paid_per_success: per_success(paid(m, &all)),
            spent_per_success: spent
                .filter(|_| !lines_spent.is_empty())
                .and_then(per_success),
        }
    }
}
