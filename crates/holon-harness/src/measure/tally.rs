//! What the measured calls came to, as the gateway counts them: per example and in total, the
//! calls, the successes, the declared failures by code (counted apart), every reserved status;
//! the success rate with its 95% interval; latency against `timeout_s`; the price per success
//! and what the author is paid after the platform's fee; the upstreams' tokens and spend, and
//! the margin. Also the gate of `--min-success-rate`.

use std::collections::BTreeMap;
use std::time::Duration;

use super::ended::{CallEnd, billed};
use super::stats::{percentile, wilson};
use holon_config::TokenPrice;
use holon_core::gateway::Status;
use holon_core::manifest::{ChargeOn, Manifest};
use holon_upstream::{Count, Purpose, Spend};

/// The platform's share of what a billed call pays.
pub(crate) const FEE: f64 = 0.10;

/// The reserved statuses a call can end in that count against the author, in the order the
/// report lists them.
const AGAINST: [Status; 5] = [
    Status::InvalidOutput,
    Status::AgentCrashed,
    Status::AgentError,
    Status::Timeout,
    Status::RuntimeUnavailable,
];

/// One measured call, as counted.
#[derive(Debug, Clone)]
pub(super) struct Seen {
    /// `None`: nothing to judge (its upstream requests went wrong on the harness's side).
    pub(super) status: Option<Status>,
    /// Why there was nothing to judge, in a line.
    pub(super) not_judged: Option<String>,
    pub(super) took: Duration,
    pub(super) billed: bool,
}

/// The measured calls, by example.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    examples: Vec<Vec<Seen>>,
}

/// What a report needs beside the calls.
pub(crate) struct Context<'a> {
    /// The manifest measured.
    pub manifest: &'a Manifest,
    /// Each upstream declared, with its price when one is.
    pub prices: &'a [(String, Option<TokenPrice>)],
    /// What each upstream's requests came to, late answers included; `None` with no upstream.
    pub spend: Option<&'a BTreeMap<String, Spend>>,
    /// What the measured calls' requests were made for.
    pub purpose: Purpose,
}

/// The figures of some calls.
#[derive(Debug, Default)]
pub(super) struct Figures {
    pub(super) calls: u64,
    pub(super) not_judged: BTreeMap<String, u64>,
    pub(super) success: u64,
    pub(super) declared: BTreeMap<String, u64>,
    /// Every other status, by code.
    pub(super) against: BTreeMap<String, u64>,
    pub(super) billed: u64,
    /// How long each judged call took, shortest first.
    pub(super) took: Vec<Duration>,
}

impl Figures {
    pub(super) fn of<'a>(seen: impl Iterator<Item = &'a Seen>) -> Figures {
        let mut f = Figures::default();
        for s in seen {
            f.calls += 1;
            let Some(status) = &s.status else {
                let why = s.not_judged.clone().unwrap_or_default();
                *f.not_judged.entry(why).or_default() += 1;
                continue;
            };
            f.took.push(s.took);
            f.billed += u64::from(s.billed);
            match status {
                Status::Success => f.success += 1,
                Status::Declared(code) => *f.declared.entry(code.clone()).or_default() += 1,
                other => *f.against.entry(other.code().to_string()).or_default() += 1,
            }
        }
        f.took.sort();
        f
    }

    pub(super) fn judged(&self) -> u64 {
        self.calls - self.not_judged.values().sum::<u64>()
    }

    /// The calls the success rate is measured on: judged, and not declared failures.
    pub(super) fn counted(&self) -> u64 {
        self.judged() - self.declared.values().sum::<u64>()
    }

    /// Successes over the counted calls; `None` when none counts.
    pub(super) fn rate(&self) -> Option<f64> {
        (self.counted() > 0).then(|| self.success as f64 / self.counted() as f64)
    }

    /// The declared failures that come and go: by code, for an example whose input ended in
    /// more than one way (these figures being one example's calls: a success and a declared
    /// code, or two declared codes), since an input that ends otherwise on other calls cannot
    /// be all that the failure is the doing of.
    fn wavering(&self) -> BTreeMap<String, u64> {
        let ways = usize::from(self.success > 0) + self.against.len() + self.declared.len();
        if ways < 2 {
            return BTreeMap::new();
        }
        self.declared.clone()
    }

    /// `success 18, timeout 1, upstream_unavailable 1 (declared)`.
    fn outcomes(&self) -> String {
        let mut parts = Vec::new();
        if self.success > 0 {
            parts.push(format!("success {}", self.success));
        }
        for (code, n) in &self.against {
            parts.push(format!("{code} {n}"));
        }
        for (code, n) in &self.declared {
            parts.push(format!("{code} {n} (declared)"));
        }
        for (why, n) in &self.not_judged {
            parts.push(format!("{n} not judged ({why})"));
        }
        parts.join(", ")
    }

    /// `success rate 94.7% (75.4% to 99.1%)`, or why there is none.
    fn rate_words(&self, long: bool) -> String {
        match (self.rate(), wilson(self.success, self.counted())) {
            (Some(rate), Some((low, high))) => format!(
                "success rate {} ({}{} to {})",
                percent(rate),
                if long { "95% interval " } else { "" },
                percent(low),
                percent(high)
            ),
            _ => "no call counts toward the success rate (each ended in a declared failure, or was not judged)".into(),
        }
    }

    /// `p50 412 ms, p95 10.95 s, max 11.02 s`.
    fn latency(&self) -> Option<String> {
        let (p50, p95) = (percentile(&self.took, 50.0)?, percentile(&self.took, 95.0)?);
        let max = self.took.last()?;
        Some(format!(
            "p50 {}, p95 {}, max {}",
            seconds(p50),
            seconds(p95),
            seconds(*max)
        ))
    }
}

impl Tally {
    /// A tally of `examples` examples, each with no call yet.
    pub(crate) fn new(examples: usize) -> Tally {
        Tally {
            examples: vec![Vec::new(); examples],
        }
    }

    /// Counts `end`, a call of example `index`.
    pub(crate) fn add(&mut self, manifest: &Manifest, index: usize, end: &CallEnd) {
        let status = end.status(manifest.gateway());
        let seen = Seen {
            billed: status.as_ref().is_some_and(|s| billed(manifest, s)),
            not_judged: end.answer.as_ref().err().map(|why| {
                let why = why.to_string();
                why.lines().next().unwrap_or_default().to_string()
            }),
            status,
            // In whole milliseconds, as its receipt says it: the figures read back from the
            // receipts are then the run's own.
            took: Duration::from_millis(end.took.as_millis() as u64),
        };
        self.add_seen(index, seen);
    }

    /// Counts a call of example `index` as it was seen (read back from its receipt).
    pub(super) fn add_seen(&mut self, index: usize, seen: Seen) {
        if let Some(calls) = self.examples.get_mut(index) {
            calls.push(seen);
        }
    }

    /// Each example's calls, in the manifest's order.
    pub(super) fn examples(&self) -> &[Vec<Seen>] {
        &self.examples
    }

    /// How many calls were counted.
    pub(crate) fn calls(&self) -> usize {
        self.examples.iter().map(Vec::len).sum()
    }

    /// The report, a line each, every line starting `measure:`; `head` is its first line's
    /// own words (which pass, how many calls, the mode).
    pub(crate) fn report(&self, cx: &Context<'_>, head: &str) -> String {
        let m = cx.manifest;
        let mut out = format!("measure: {head}\n");
        for (example, seen) in m.examples.iter().zip(&self.examples) {
            if seen.is_empty() {
                continue;
            }
            let f = Figures::of(seen.iter());
            let mut line = format!(
                "measure:   `{}`: {} call{}: {}",
                example.name,
                f.calls,
                plural(f.calls),
                f.outcomes()
            );
            if f.judged() > 0 {
                line.push_str(&format!("; {}", f.rate_words(false)));
            }
            if let Some(latency) = f.latency() {
                line.push_str(&format!("; {latency}"));
            }
            out.push_str(&line);
            out.push('\n');
        }
        let all = Figures::of(self.examples.iter().flatten());
        out.push_str(&format!(
            "measure: total: {} call{}, {}",
            all.calls,
            plural(all.calls),
            all.rate_words(true)
        ));
        let strict = self.strict(cx);
        if all.counted() > 0 {
            out.push_str(&format!(
                ": {} of the {} calls that were not declared failures",
                all.success,
                all.counted()
            ));
        }
        out.push('\n');
        out.push_str(&format!("measure: {}\n", totals(&all)));
        if let Some(strict) = &strict {
            out.push_str(&strict.lines());
        }
        if let Some(latency) = all.latency() {
            let limit = m.runtime.limits.timeout();
            let past = all.took.iter().filter(|t| **t > limit).count();
            out.push_str(&format!(
                "measure: latency {latency}; `timeout_s` {}, {past} call{} past it\n",
                seconds(limit),
                plural(past as u64)
            ));
        }
        out.push_str(&money_lines(cx, &all, &self.upstream_spend(cx)));
        out
    }

    /// Each upstream's line, and the total spend when every answer's tokens are known and
    /// priced: the measured calls' requests, as the ledger counted them (an answer that came
    /// after its call ended included: it is paid for all the same).
    pub(super) fn upstream_spend(&self, cx: &Context<'_>) -> (Vec<String>, Option<f64>) {
        let currency = &cx.manifest.pricing.currency;
        let mut lines = Vec::new();
        let mut total = Some(0.0);
        for (name, price) in cx.prices {
            let count = (cx.spend.and_then(|s| s.get(name)))
                .and_then(|s| s.by.get(&cx.purpose))
                .copied()
                .unwrap_or_default();
            let (line, cost) = spend_line(name, &count, *price, currency);
            total = match cost {
                Some(cost) => total.map(|t| t + cost),
                None => None,
            };
            lines.push(format!("measure: {line}"));
        }
        (lines, total)
    }

    /// The declared failures that come and go for one input, with the rate that counts them
    /// as failures; `None` when there are none.
    fn strict(&self, cx: &Context<'_>) -> Option<Strict> {
        let mut wavering = Vec::new();
        let (mut success, mut counted) = (0, 0);
        for (example, seen) in cx.manifest.examples.iter().zip(&self.examples) {
            let f = Figures::of(seen.iter());
            success += f.success;
            counted += f.counted();
            for (code, n) in f.wavering() {
                counted += n;
                wavering.push(format!(
                    "`{}` {code} {n} of {} call{}, success {}",
                    example.name,
                    f.judged(),
                    plural(f.judged()),
                    f.success
                ));
            }
        }
        (!wavering.is_empty()).then_some(Strict {
            wavering,
            success,
            counted,
        })
    }

    /// The strict success rate (the declared failures that come and go for one input counted
    /// as failures), when it differs from the gateway's; `None` when no declared failure comes
    /// and goes, or no call counts.
    pub(crate) fn strict_rate(&self, cx: &Context<'_>) -> Option<f64> {
        let strict = self.strict(cx)?;
        (strict.counted > 0).then(|| strict.success as f64 / strict.counted as f64)
    }

    /// The examples whose own rate is below `min`, lowest first, with what pulled each down;
    /// and the total rate (`None` when no call counted).
    pub(crate) fn below(&self, cx: &Context<'_>, min: f64) -> (Option<f64>, Vec<String>) {
        let all = Figures::of(self.examples.iter().flatten());
        let mut low: Vec<(f64, String)> = Vec::new();
        for (example, seen) in cx.manifest.examples.iter().zip(&self.examples) {
            let f = Figures::of(seen.iter());
            let Some(rate) = f.rate() else {
                continue;
            };
            if rate < min {
                let against: Vec<String> =
                    f.against.iter().map(|(c, n)| format!("{c} {n}")).collect();
                low.push((
                    rate,
                    format!(
                        "`{}` {} ({} of {} counted call{})",
                        example.name,
                        percent(rate),
                        against.join(", "),
                        f.counted(),
                        plural(f.counted())
                    ),
                ));
            }
        }
        low.sort_by(|a, b| a.0.total_cmp(&b.0));
        (all.rate(), low.into_iter().map(|(_, l)| l).collect())
    }
}

/// Declared failures that come and go for one input: the gateway counts them apart from the
/// success rate, as the input's doing, but an input that also succeeds cannot be what they are
/// the doing of; and the rate that counts them as failures.
struct Strict {
    /// Each example's, in words.
    wavering: Vec<String>,
    success: u64,
    /// The calls the strict rate is measured on: those the gateway's is, and the wavering ones.
    counted: u64,
}

impl Strict {
    fn lines(&self) -> String {
        let rate = self.success as f64 / self.counted.max(1) as f64;
        let interval = wilson(self.success, self.counted)
            .map(|(low, high)| format!(" ({} to {})", percent(low), percent(high)))
            .unwrap_or_default();
        format!(
            "measure: declared failures that come and go for one input (it ended otherwise on other calls, so they are not the input's doing, though the gateway counts them apart): {}\nmeasure: strict success rate, counting them as failures: {}{interval}: {} of {} calls; gate on it with `--min-strict-success-rate R`\n",
            self.wavering.join("; "),
            percent(rate),
            self.success,
            self.counted
        )
    }
}

/// One upstream's requests in words: how many, answered (late ones counted), the tokens and
/// what they cost at `price`; the cost, when every answer's tokens are known and priced.
fn spend_line(
    name: &str,
    count: &Count,
    price: Option<TokenPrice>,
    currency: &str,
) -> (String, Option<f64>) {
    let mut line = format!(
        "upstream `{name}`: {} request{}, {} answered",
        count.requests,
        plural(count.requests as u64),
        count.answered
    );
    if count.late > 0 {
        line.push_str(&format!(
            " ({} after its call ended, paid all the same)",
            count.late
        ));
    }
    let known = count.answered - count.unknown;
    if known > 0 {
        line.push_str(&format!(
            ", {} input and {} output tokens",
            thousands(count.input),
            thousands(count.output)
        ));
    }
    let cost = match price {
        Some(p) => {
            let cost = p.cost(count.input, count.output);
            line.push_str(&format!(
                " at {} and {} {currency} a million: {}{} {currency}",
                money(p.input_per_million),
                money(p.output_per_million),
                if count.unknown > 0 { "at least " } else { "" },
                money(cost)
            ));
            (count.unknown == 0).then_some(cost)
        }
        None => {
            line.push_str(&format!(
                " (no `[upstreams.{name}.price]` in `holon-test.toml`: not priced)"
            ));
            None
        }
    };
    if count.unknown > 0 {
        line.push_str(&format!(
            "; tokens unknown for {} answer{} (a stream without usage: ask for it, e.g. `\"stream_options\": {{\"include_usage\": true}}` in an OpenAI chat completion)",
            count.unknown,
            plural(count.unknown as u64)
        ));
    }
    let unanswered = count.requests - count.answered;
    if unanswered > 0 {
        line.push_str(&format!("; {unanswered} never answered"));
    }
    (line, cost)
}

/// What the whole run's requests to the real services came to, an upstream a line, each with
/// what the requests were for (nothing when none was made): a live or record run pays for
/// them, explore's and the fault trials' beside the examples'.
pub(crate) fn run_spend(
    spend: &BTreeMap<String, Spend>,
    prices: &[(String, Option<TokenPrice>)],
    currency: &str,
) -> String {
    let mut out = String::new();
    for (name, price) in prices {
        let Some(upstream) = spend.get(name).filter(|s| s.total.requests > 0) else {
            continue;
        };
        if out.is_empty() {
            out.push_str("\nspend: every request the run made to the real upstreams\n");
        }
        let (line, _) = spend_line(name, &upstream.total, *price, currency);
        let by: Vec<String> = (upstream.by.iter())
            .map(|(purpose, count)| format!("{} {}", purpose.describe(), count.requests))
            .collect();
        out.push_str(&format!(
            "spend:   {line}; by what they were for: {}\n",
            by.join(", ")
        ));
    }
    out
}

/// `success 38; declared failures 21 (empty_ticket 20, ...); invalid_output 0, ...`.
fn totals(all: &Figures) -> String {
    let declared: u64 = all.declared.values().sum();
    let mut line = format!("success {}; declared failures {declared}", all.success);
    if !all.declared.is_empty() {
        let codes: Vec<String> = all
            .declared
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        line.push_str(&format!(" ({})", codes.join(", ")));
    }
    let mut against: Vec<String> = AGAINST
        .iter()
        .map(|s| format!("{} {}", s.code(), all.against.get(s.code()).unwrap_or(&0)))
        .collect();
    // A status outside the usual five (the agent refusing an input the gateway admits).
    for (code, n) in &all.against {
        if !AGAINST.iter().any(|s| s.code() == code) {
            against.push(format!("{code} {n}"));
        }
    }
    line.push_str(&format!("; {}", against.join(", ")));
    for (why, n) in &all.not_judged {
        line.push_str(&format!("; {n} not judged ({why})"));
    }
    line
}

/// What the author is paid for the billed calls among `all`, after the platform's fee.
pub(super) fn paid(manifest: &Manifest, all: &Figures) -> f64 {
    all.billed as f64 * manifest.pricing.price * (1.0 - FEE)
}

/// The price, what the author is paid, the upstream spend and the margin.
fn money_lines(cx: &Context<'_>, all: &Figures, spend: &(Vec<String>, Option<f64>)) -> String {
    let pricing = &cx.manifest.pricing;
    let currency = &pricing.currency;
    let mut out = String::new();
    let charge = match pricing.charge_on {
        ChargeOn::Success => "success",
        ChargeOn::Attempt => "attempt",
    };
    let paid = paid(cx.manifest, all);
    let mut line = format!(
        "measure: price {} {currency} a billed call (`charge_on: {charge}`), {} billed",
        money(pricing.price),
        all.billed
    );
    match all.rate() {
        Some(rate) if rate > 0.0 => line.push_str(&format!(
            "; cost per success {} {currency} (price / success rate)",
            money(pricing.price / rate)
        )),
        Some(_) => line.push_str("; no success, so no cost per success"),
        None => {}
    }
    if all.judged() > 0 {
        line.push_str(&format!(
            "; the author is paid {} {currency} a call",
            money(paid / all.judged() as f64)
        ));
        if all.success > 0 {
            line.push_str(&format!(
                " and {} {currency} a success",
                money(paid / all.success as f64)
            ));
        }
        line.push_str(&format!(", after the platform's {:.0}% fee", FEE * 100.0));
    }
    out.push_str(&line);
    out.push('\n');
    let (lines, total) = spend;
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    if let (Some(total), false) = (total, lines.is_empty())
        && all.judged() > 0
    {
        let mut line = format!(
            "measure: upstream spend {} {currency} a call",
            money(total / all.judged() as f64)
        );
        if all.success > 0 {
            let per_success = total / all.success as f64;
            line.push_str(&format!(
                ", {} {currency} a success; margin {} {currency} a success (paid {} less spent {})",
                money(per_success),
                money(paid / all.success as f64 - per_success),
                money(paid / all.success as f64),
                money(per_success)
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

pub(super) fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A rate as a percentage with one decimal.
pub(crate) fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

/// A time: `412 ms`, `10.95 s`.
pub(crate) fn seconds(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 1000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

/// An amount with four significant digits, in plain notation: `0.009`, `0.01026`, `3.24`.
pub(crate) fn money(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return "0".into();
    }
    let digits = (3 - x.abs().log10().floor() as i32).clamp(2, 12) as usize;
    let text = format!("{x:.digits$}");
    let trimmed = text.trim_end_matches('0');
    match trimmed.strip_suffix('.') {
        Some(whole) => whole.to_string(),
        None => trimmed.to_string(),
    }
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_keep_four_significant_digits() {
        assert_eq!(money(0.009), "0.009");
        assert_eq!(money(0.01 / 0.975), "0.01026");
        assert_eq!(money(3.24), "3.24");
        assert_eq!(money(0.004), "0.004");
        assert_eq!(money(1234.5), "1234.5");
        assert_eq!(money(0.0000054321), "0.000005432");
        assert_eq!(money(0.0), "0");
        assert_eq!(thousands(12345), "12,345");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(seconds(Duration::from_millis(412)), "412 ms");
        assert_eq!(seconds(Duration::from_millis(10_950)), "10.95 s");
        assert_eq!(percent(0.9787), "97.9%");
    }

    #[test]
    fn the_guides_worked_example_reads_back() {
        // 1,000 calls: 900 successes, 80 declared failures, 20 crashes. The success rate is
        // measured on the 920 that were not declared: 97.8%.
        let seen = |status: Status| Seen {
            billed: status == Status::Success,
            status: Some(status),
            not_judged: None,
            took: Duration::from_millis(100),
        };
        let mut calls = Vec::new();
        calls.extend(std::iter::repeat_n(seen(Status::Success), 900));
        calls.extend(std::iter::repeat_n(
            seen(Status::Declared("no_table_found".into())),
            80,
        ));
        calls.extend(std::iter::repeat_n(seen(Status::AgentCrashed), 20));
        let f = Figures::of(calls.iter());
        assert_eq!((f.calls, f.counted(), f.success), (1000, 920, 900));
        assert_eq!(percent(f.rate().expect("a rate")), "97.8%");
        assert_eq!(f.billed, 900);
        // The author is paid 900 x 0.0036 = 3.24 EUR at 0.004 EUR a call.
        assert_eq!(money(f.billed as f64 * 0.004 * (1.0 - FEE)), "3.24");
        assert!(totals(&f).contains("declared failures 80 (no_table_found 80)"));
        assert!(totals(&f).contains("agent_crashed 20"));
        assert!(totals(&f).contains("invalid_output 0"));
    }

    #[test]
    fn a_declared_failure_comes_and_goes_when_the_input_ends_in_more_than_one_way() {
        let seen = |status: Status| Seen {
            billed: status == Status::Success,
            status: Some(status),
            not_judged: None,
            took: Duration::from_millis(100),
        };
        let declared = |code: &str| seen(Status::Declared(code.into()));
        // Two declared codes, no success: 8 and 12, both wavering.
        let mut calls = vec![declared("file_unreadable"); 8];
        calls.extend(vec![declared("empty_file"); 12]);
        let f = Figures::of(calls.iter());
        let wavering: Vec<(String, u64)> = f.wavering().into_iter().collect();
        assert_eq!(
            wavering,
            [
                ("empty_file".to_string(), 12),
                ("file_unreadable".to_string(), 8)
            ]
        );
        // One code every time: the input's own doing.
        let f = Figures::of(vec![declared("empty_file"); 20].iter());
        assert!(f.wavering().is_empty());
        // A success beside it, as before.
        let calls = [seen(Status::Success), declared("empty_file")];
        assert_eq!(Figures::of(calls.iter()).wavering().len(), 1);
    }
}
