//! How many calls a run makes, decided before the first: the measured pass (the MCP server,
//! which the gateway calls, unless its trials do not run) calls each example `--repeat` times,
//! the other pass once; with `--max-calls`, the calls are dealt out under the budget, the other
//! pass's first (one each), then the measured pass's a round at a time (so every example gets
//! its share), then explore's cases; what does not fit is not run, and said.

use crate::settings::Settings;
use holon_config::partition::Partition;
use holon_core::gateway::Pass;
use holon_upstream::{Mode, Upstreams};

/// The calls a run makes, per pass and example, and what the budget left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// The pass measured (`None` when no example trial runs).
    pub measured: Option<Pass>,
    /// The runs (from 1) each example is called on the function pass, by the example's place.
    function: Vec<Vec<u32>>,
    /// The runs each example is called on the MCP pass, by the example's place.
    mcp: Vec<Vec<u32>>,
    /// The shard of the run this is (`--partition`), each example's name, to deal by, and
    /// the runs the measured pass makes of each (`--repeat`).
    partition: Option<Partition>,
    names: Vec<String>,
    repeat: u32,
    /// Cases for each explore trial, once the budget is dealt.
    pub explore_cases: u32,
    /// How many explore trials run.
    pub explore_trials: u32,
    /// What the budget left out, a line each.
    pub left_out: Vec<String>,
}

/// What a plan is made from.
pub(crate) struct Asked<'a> {
    /// The examples' names.
    pub names: &'a [String],
    /// The examples whose `function::` trial runs (`None`: no function pass).
    pub function: Option<&'a [usize]>,
    /// The examples whose `mcp::` trial runs (`None`: no MCP pass).
    pub mcp: Option<&'a [usize]>,
    /// How many times the measured pass calls each example (`--repeat`).
    pub repeat: u32,
    /// The most calls the run may make to the agent (`--max-calls`).
    pub max_calls: Option<u64>,
    /// Explore's cases per trial, and how many explore trials run.
    pub explore: (u32, u32),
    /// The shard this run is (`--partition`): only its share of the calls is made.
    pub partition: Option<Partition>,
}

impl Plan {
    /// The note a live or record run (`mode`) starts with when explore runs: each of its calls
    /// may call the real upstreams, which are paid for.
    pub(crate) fn explore_spends(&self, mode: Mode) -> Option<String> {
        let (cases, trials) = (self.explore_cases, self.explore_trials);
        if mode == Mode::Replay || cases == 0 || trials == 0 {
            return None;
        }
        let calls = u64::from(cases) * u64::from(trials);
        let each = if trials == 1 {
            String::new()
        } else {
            format!(" ({cases} cases on each of {trials} passes)")
        };
        Some(format!(
            "note: explore makes {calls} calls to the agent{each}, each of which may call the real upstreams (`--upstream {}`), which are paid for: `--explore-cases N` sets how many a pass makes (0: none), `--max-calls N` bounds the whole run",
            mode.name()
        ))
    }

    /// The plan of a run asked `asked`.
    pub(crate) fn new(asked: &Asked<'_>) -> Plan {
        let n = asked.names.len();
        let measured = match (
            asked.mcp.filter(|s| !s.is_empty()),
            asked.function.filter(|s| !s.is_empty()),
        ) {
            (Some(_), _) => Some(Pass::Mcp),
            (None, Some(_)) => Some(Pass::Function),
            (None, None) => None,
        };
        let mut plan = Plan {
            measured,
            function: vec![Vec::new(); n],
            mcp: vec![Vec::new(); n],
            partition: asked.partition,
            names: asked.names.to_vec(),
            repeat: asked.repeat,
            explore_cases: asked.explore.0,
            explore_trials: asked.explore.1,
            left_out: Vec::new(),
        };
        let mut budget = Budget {
            left: asked.max_calls.unwrap_or(u64::MAX),
            planned: 0,
            made: 0,
        };
        // The pass that is not measured calls each example once, first; then the measured
        // pass, a round of every example at a time.
        let order = [Pass::Function, Pass::Mcp]
            .into_iter()
            .filter(|p| Some(*p) != measured);
        for pass in order.chain(measured) {
            let rounds = if Some(pass) == measured {
                asked.repeat
            } else {
                1
            };
            for run in 1..=rounds {
                for &index in asked.selected(pass) {
                    if !plan.takes(index, run, rounds) {
                        continue;
                    }
                    if let Some(calls) = plan.runs_mut(pass).get_mut(index) {
                        budget.take(calls, run);
                    }
                }
            }
        }
        if asked.max_calls.is_none() {
            return plan;
        }
        if budget.made < budget.planned {
            plan.note_examples(asked, budget.made, budget.planned);
        }
        let (cases, trials) = asked.explore;
        if trials > 0 && cases > 0 {
            let each = (budget.left / u64::from(trials)).min(u64::from(cases)) as u32;
            plan.explore_cases = each;
            if each < cases {
                plan.left_out.push(match each {
                    0 => format!("explore: off, no call left for its {cases} cases a trial"),
                    _ => format!("explore: {each} cases a trial instead of {cases}"),
                });
            }
        }
        plan
    }

    /// Whether this shard makes run `run` (of `rounds`) of example `index`: dealt by its place
    /// example after example (`count`: the runs of one example go round the shards), or by a
    /// hash of the example's name and the run (`hash`). Every call without a partition.
    pub(crate) fn takes(&self, index: usize, run: u32, rounds: u32) -> bool {
        let Some(partition) = &self.partition else {
            return true;
        };
        let name = self.names.get(index).map_or("", String::as_str);
        let place = index as u64 * u64::from(rounds) + u64::from(run.saturating_sub(1));
        partition.takes(place, &format!("{name}#{run}"))
    }

    /// Whether this shard makes any call of example `index` on `pass`, whatever libtest's
    /// filters say: the example's trial on that pass is this shard's.
    pub(crate) fn in_shard(&self, pass: Pass, index: usize) -> bool {
        let rounds = if Some(pass) == self.measured {
            self.repeat
        } else {
            1
        };
        (1..=rounds).any(|run| self.takes(index, run, rounds))
    }

    /// The line a shard (`--partition`) starts with: its share of the examples (and of the
    /// measured calls, under `--repeat`), or that none falls to it (it passes all the same);
    /// and of explore's cases and the fault trials, when the run has them (`faults`: the fault
    /// trials run).
    pub(crate) fn shard_note(&self, faults: bool) -> Option<String> {
        let partition = self.partition?;
        let examples = (0..self.names.len())
            .filter(|i| {
                [Pass::Function, Pass::Mcp]
                    .iter()
                    .any(|p| self.runs(*p, *i) > 0)
            })
            .count();
        let explore = self.explore_cases > 0 && self.explore_trials > 0;
        let name = partition.name();
        Some(match examples {
            // An example's fault trials go with its calls: none fall to this shard either.
            0 if explore => format!(
                "note: `--partition {name}`: no example's call falls to this shard (the others make them); it runs its share of explore's cases only"
            ),
            0 => format!(
                "note: `--partition {name}`: no example's call falls to this shard (the others make them): no trial of its own, and it passes"
            ),
            _ => format!(
                "note: `--partition {name}`: this shard {} {examples} of the {} examples{}",
                match self.repeat {
                    1 => "runs".to_string(),
                    repeat => format!(
                        "makes {} of the measured calls (`--repeat {repeat}`), of",
                        self.share().0
                    ),
                },
                self.names.len(),
                match (explore, faults) {
                    (true, true) => ", and its share of explore's cases and of the fault trials",
                    (true, false) => ", and its share of explore's cases",
                    (false, true) => ", and its share of the fault trials",
                    (false, false) => "",
                }
            ),
        })
    }

    /// What each receipt says of the run: the calls planned on the measured pass, and the
    /// shard this is.
    pub(crate) fn share(&self) -> (usize, Option<Partition>) {
        let planned = self.measured.map_or(0, |pass| {
            (0..self.names.len())
                .map(|i| self.runs(pass, i) as usize)
                .sum()
        });
        (planned, self.partition)
    }

    /// Each example's one call, where the run calls each once outside the plan's passes (a
    /// server's second protocol era): its run 1, when this shard makes it.
    pub(crate) fn once(&self) -> Vec<Vec<u32>> {
        (0..self.names.len())
            .map(|i| match self.takes(i, 1, 1) {
                true => vec![1],
                false => Vec::new(),
            })
            .collect()
    }

    fn runs_mut(&mut self, pass: Pass) -> &mut Vec<Vec<u32>> {
        match pass {
            Pass::Function => &mut self.function,
            Pass::Mcp => &mut self.mcp,
        }
    }

    /// How many times `pass` calls example `index`.
    pub(crate) fn runs(&self, pass: Pass, index: usize) -> u32 {
        let runs = match pass {
            Pass::Function => &self.function,
            Pass::Mcp => &self.mcp,
        };
        runs.get(index).map_or(0, |r| r.len() as u32)
    }

    /// The runs each example is called on `pass` (from 1; not every run of `--repeat` in a
    /// shard), by place.
    pub(crate) fn all_runs(&self, pass: Pass) -> Vec<Vec<u32>> {
        match pass {
            Pass::Function => self.function.clone(),
            Pass::Mcp => self.mcp.clone(),
        }
    }

    /// The measurement report's first line: which pass, how many calls, where the upstreams
    /// answer from, how many calls at once.
    pub(crate) fn head(
        &self,
        pass: Pass,
        settings: &Settings,
        upstreams: Option<&Upstreams>,
    ) -> String {
        let runs = self.all_runs(pass);
        let examples = runs.iter().filter(|r| !r.is_empty()).count();
        let calls: usize = runs.iter().map(Vec::len).sum();
        let upstream = match upstreams.map(Upstreams::mode) {
            Some(Mode::Live) => "upstreams live",
            Some(Mode::Replay) => "upstreams replayed",
            Some(Mode::Record) => "upstreams recorded",
            None => "no upstream declared",
        };
        let at_once = match upstreams.is_some_and(Upstreams::serial) {
            true => 1,
            false => settings.concurrency,
        };
        format!(
            "the `{}` pass, {examples} example{}, {calls} call{} (`--repeat {}`), {upstream}, up to {at_once} in flight",
            pass.name(),
            if examples == 1 { "" } else { "s" },
            if calls == 1 { "" } else { "s" },
            settings.repeat.unwrap_or(1)
        )
    }

    /// The line on the example calls the budget left out.
    fn note_examples(&mut self, asked: &Asked<'_>, made: u64, planned: u64) {
        let mut short = Vec::new();
        for pass in [Pass::Function, Pass::Mcp] {
            let want = if Some(pass) == self.measured {
                asked.repeat
            } else {
                1
            };
            for &index in asked.selected(pass) {
                let got = self.runs(pass, index);
                let want = (1..=want).filter(|r| self.takes(index, *r, want)).count() as u32;
                if got < want {
                    let name = asked.names.get(index).map_or("", String::as_str);
                    short.push(format!("`{}::{name}` {got} of {want}", pass.name()));
                }
            }
        }
        self.left_out.push(format!(
            "{made} of the {planned} example calls planned are made: {}",
            short.join(", ")
        ));
    }
}

impl Asked<'_> {
    /// The examples whose trial of `pass` runs.
    fn selected(&self, pass: Pass) -> &[usize] {
        match pass {
            Pass::Function => self.function,
            Pass::Mcp => self.mcp,
        }
        .unwrap_or_default()
    }
}

/// `--max-calls` as the plan deals it out.
struct Budget {
    left: u64,
    planned: u64,
    made: u64,
}

impl Budget {
    /// One more call planned, run `run` of an example whose runs are `calls`: made while any
    /// is left.
    fn take(&mut self, calls: &mut Vec<u32>, run: u32) {
        self.planned += 1;
        if self.left > 0 {
            self.left -= 1;
            self.made += 1;
            calls.push(run);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many calls each example makes on `pass`.
    fn counts(plan: &Plan, pass: Pass) -> Vec<u32> {
        (plan.all_runs(pass).iter())
            .map(|r| r.len() as u32)
            .collect()
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("e{i}")).collect()
    }

    #[test]
    fn the_server_is_measured_and_the_function_calls_each_example_once() {
        let names = names(3);
        let all = [0, 1, 2];
        let plan = Plan::new(&Asked {
            names: &names,
            function: Some(&all),
            mcp: Some(&all),
            repeat: 20,
            max_calls: None,
            explore: (100, 2),
            partition: None,
        });
        assert_eq!(plan.measured, Some(Pass::Mcp));
        assert_eq!(counts(&plan, Pass::Mcp), [20, 20, 20]);
        assert_eq!(counts(&plan, Pass::Function), [1, 1, 1]);
        assert_eq!(plan.explore_cases, 100);
        assert!(plan.left_out.is_empty());
        // `-- function::`: the function is what runs, so it is measured.
        let plan = Plan::new(&Asked {
            names: &names,
            function: Some(&all),
            mcp: Some(&[]),
            repeat: 5,
            max_calls: None,
            explore: (0, 0),
            partition: None,
        });
        assert_eq!(plan.measured, Some(Pass::Function));
        assert_eq!(counts(&plan, Pass::Function), [5, 5, 5]);
        assert_eq!(counts(&plan, Pass::Mcp), [0, 0, 0]);
    }

    #[test]
    fn the_budget_goes_a_round_at_a_time_and_says_what_it_left_out() {
        let names = names(3);
        let all = [0, 1, 2];
        let plan = Plan::new(&Asked {
            names: &names,
            function: Some(&all),
            mcp: Some(&all),
            repeat: 20,
            max_calls: Some(50),
            explore: (100, 2),
            partition: None,
        });
        // 3 for the function pass, then 47 in rounds of 3: 16, 16, 15.
        assert_eq!(counts(&plan, Pass::Function), [1, 1, 1]);
        assert_eq!(counts(&plan, Pass::Mcp), [16, 16, 15]);
        assert_eq!(plan.explore_cases, 0);
        assert_eq!(
            plan.left_out,
            [
                "50 of the 63 example calls planned are made: `mcp::e0` 16 of 20, `mcp::e1` 16 of 20, `mcp::e2` 15 of 20",
                "explore: off, no call left for its 100 cases a trial",
            ]
        );
        // Room for every example call and some of explore's.
        let plan = Plan::new(&Asked {
            names: &names,
            function: None,
            mcp: Some(&all),
            repeat: 2,
            max_calls: Some(26),
            explore: (100, 1),
            partition: None,
        });
        assert_eq!(counts(&plan, Pass::Mcp), [2, 2, 2]);
        assert_eq!(plan.explore_cases, 20);
        assert_eq!(plan.left_out, ["explore: 20 cases a trial instead of 100"]);
    }

    #[test]
    fn the_shards_of_a_measured_run_make_every_call_once() {
        let names = names(30);
        let all: Vec<usize> = (0..30).collect();
        for deal in ["count", "hash"] {
            let mut made = std::collections::BTreeMap::new();
            for k in 1..=3 {
                let partition = Partition::parse(&format!("{deal}:{k}/3")).expect("a partition");
                let plan = Plan::new(&Asked {
                    names: &names,
                    function: None,
                    mcp: Some(&all),
                    repeat: 4,
                    max_calls: None,
                    explore: (0, 0),
                    partition: Some(partition),
                });
                let calls: usize = plan.all_runs(Pass::Mcp).iter().map(Vec::len).sum();
                if deal == "count" {
                    assert_eq!(calls, 40, "{deal}:{k}/3");
                }
                for (index, runs) in plan.all_runs(Pass::Mcp).iter().enumerate() {
                    for run in runs {
                        *made.entry((index, *run)).or_insert(0) += 1;
                    }
                }
            }
            assert_eq!(made.len(), 120, "{deal}");
            assert!(made.values().all(|n| *n == 1), "{deal}: {made:?}");
        }
    }
}
