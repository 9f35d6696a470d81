//! The page's HTML: a head that lets nothing be fetched, the verdict, then a section each for
//! the trials, explore, the fault trials and the measurement, in the order a run prints them.

use std::fmt::Write as _;

use super::escape::{cut, esc, plain};
use super::model::{LISTED, Page, Source, Trial};
use super::svg;
use crate::measure::{Row, percent, seconds};

/// The most bytes of one failure's message the page shows.
const MESSAGE: usize = 64 * 1024;
/// The most examples a chart draws (the lowest rates first when there are more).
const CHARTED: usize = 60;

/// The style sheet: the system's own fonts, nothing fetched.
const STYLE: &str = r#"
:root{--ok:#2e7d32;--bad:#c62828;--muted:#5f6368;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
body{margin:0 auto;max-width:1100px;padding:1.5rem;color:#1a1a1a;background:#fff;line-height:1.45}
h1{margin:0 0 .3rem;font-size:1.6rem}h1 .version{color:var(--muted);font-weight:400}
h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.3rem}h3{margin-bottom:.3rem}
.verdict{font-weight:600;padding:.35rem .7rem;border-radius:4px;display:inline-block}
.verdict.ok{background:#e8f5e9;color:var(--ok)}.verdict.failed{background:#ffebee;color:var(--bad)}.verdict.read{background:#e3f2fd;color:#0d47a1}
.meta{color:var(--muted);font-size:.9rem;margin:.2rem 0}code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
nav a{margin-right:1.2rem}
details{margin:.35rem 0}summary{cursor:pointer}
details.fail>summary{color:var(--bad);font-weight:600}
pre{background:#f6f8fa;border:1px solid #eaecef;border-radius:4px;padding:.75rem;overflow-x:auto;font-size:.82rem;white-space:pre-wrap;word-break:break-word;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;font-size:.88rem;margin:.5rem 0}th,td{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:left;vertical-align:top}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ms{color:var(--muted);font-weight:400;font-size:.85em}.pass{color:var(--ok)}.failed{color:var(--bad)}
ul.passed{columns:2;font-size:.88rem;padding-left:1.2rem}
svg{max-width:100%;height:auto;display:block;margin:.6rem 0}svg text{font-size:11px;fill:#333}svg .tick{fill:#777;font-size:10px}svg .mark{font-size:11px;font-weight:600}
.rate{font-size:1.3rem}.rate strong{font-size:1.8rem}
.legend{font-size:.85rem}.legend span{display:inline-block;margin-right:1rem}.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:middle;border-radius:2px}
.note{color:#8a6d3b;background:#fcf8e3;padding:.4rem .7rem;border-radius:4px}
"#;

/// The whole page.
pub(super) fn render(page: &Page) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = format!("{} {}", page.agent, page.version);
    let _ = write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="holon-test {}">
<title>holon-test: {}</title><style>{STYLE}</style></head><body>
"#,
        env!("CARGO_PKG_VERSION"),
        esc(&title)
    );
    header(&mut out, page);
    let (explore, rest): (Vec<&Trial>, Vec<&Trial>) =
        (page.trials.iter()).partition(|t| t.name.starts_with("explore::"));
    let (faults, trials): (Vec<&Trial>, Vec<&Trial>) = rest
        .into_iter()
        .partition(|t| t.name.starts_with("faults::"));
    if !matches!(page.source, Source::Receipts(_)) {
        out.push_str(r#"<section id="trials"><h2>Trials</h2>"#);
        listed(&mut out, &trials, "trial");
        out.push_str("</section>\n");
    }
    if !explore.is_empty() || !page.explored.is_empty() {
        explored(&mut out, page, &explore);
    }
    if !faults.is_empty() {
        out.push_str(r#"<section id="faults"><h2>Fault trials</h2><p class="meta">Each success example replayed with one recorded upstream exchange failing (429, 500, 503, a reset, a cut body, a body that is not JSON, no answer in time): the agent must end in a success or a declared code.</p>"#);
        listed(&mut out, &faults, "fault trial");
        out.push_str("</section>\n");
    }
    if let Some(picture) = &page.picture {
        measured(&mut out, picture);
    }
    if !page.notes.is_empty() {
        out.push_str(r#"<section id="notes"><h2>Notes</h2>"#);
        for note in &page.notes {
            let _ = write!(out, r#"<p class="note">{}</p>"#, esc(note));
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body></html>\n");
    out
}

fn header(out: &mut String, page: &Page) {
    let _ = write!(
        out,
        r#"<header><h1>{} <span class="version">{}</span></h1>"#,
        esc(&page.agent),
        esc(&page.version)
    );
    match &page.source {
        Source::Run {
            counts: (passed, failed, ignored, filtered),
            code,
        } => {
            let (class, word) = match code {
                0 => ("ok", "ok"),
                101 => ("failed", "FAILED"),
                _ => ("failed", "could not finish"),
            };
            let _ = write!(
                out,
                r#"<p><span id="verdict" class="verdict {class}">test result: {word}. {passed} passed; {failed} failed; {ignored} ignored; {filtered} filtered out</span></p>"#
            );
        }
        Source::Receipts(files) => {
            let named: Vec<String> = files
                .iter()
                .map(|f| format!("<code>{}</code>", esc(&f.display().to_string())))
                .collect();
            let _ = write!(
                out,
                r#"<p><span id="verdict" class="verdict read">receipts read back</span> from {}</p>"#,
                named.join(", ")
            );
        }
    }
    let _ = write!(
        out,
        r#"<p class="meta">manifest <code>{}</code>"#,
        esc(&page.manifest)
    );
    if let Some(command) = &page.command {
        let _ = write!(out, r#" · run again with <code>{}</code>"#, esc(command));
    }
    out.push_str("</p><nav>");
    if !matches!(page.source, Source::Receipts(_)) {
        out.push_str(r##"<a href="#trials">Trials</a>"##);
    }
    if page.trials.iter().any(|t| t.name.starts_with("explore::")) {
        out.push_str(r##"<a href="#explore">Explore</a>"##);
    }
    if page.trials.iter().any(|t| t.name.starts_with("faults::")) {
        out.push_str(r##"<a href="#faults">Fault trials</a>"##);
    }
    if page.picture.is_some() {
        out.push_str(r##"<a href="#measure">Measurement</a>"##);
    }
    out.push_str("</nav></header>\n");
}

/// The trials that failed, each with its message in full, then those that passed, by name.
fn listed(out: &mut String, trials: &[&Trial], what: &str) {
    let (failed, passed): (Vec<&&Trial>, Vec<&&Trial>) =
        trials.iter().partition(|t| t.failure.is_some());
    let _ = write!(
        out,
        r#"<p><span class="failed">{} failed</span> · <span class="pass">{} passed</span></p>"#,
        failed.len(),
        passed.len()
    );
    for (i, trial) in failed.iter().enumerate() {
        if i == LISTED {
            let _ = write!(
                out,
                "<p>and {} more failed {what}s, not shown: run them again with a filter to see them</p>",
                failed.len() - LISTED
            );
            break;
        }
        let message = trial.failure.as_deref().unwrap_or_default();
        let _ = write!(
            out,
            r#"<details class="fail" open><summary>{} <span class="ms">{} ms</span></summary><pre>{}</pre></details>"#,
            esc(&trial.name),
            trial.ms,
            esc(&cut(&plain(message), MESSAGE))
        );
    }
    if !passed.is_empty() {
        let _ = write!(
            out,
            r#"<details><summary>{} passed</summary><ul class="passed">"#,
            passed.len()
        );
        for trial in passed.iter().take(LISTED) {
            let _ = write!(
                out,
                r#"<li>{} <span class="ms">{} ms</span></li>"#,
                esc(&trial.name),
                trial.ms
            );
        }
        out.push_str("</ul>");
        if passed.len() > LISTED {
            let _ = write!(out, "<p>and {} more</p>", passed.len() - LISTED);
        }
        out.push_str("</details>");
    }
}

fn explored(out: &mut String, page: &Page, trials: &[&Trial]) {
    out.push_str(r#"<section id="explore"><h2>Explore</h2><p class="meta">Inputs generated from <code>interface.input</code> between the examples (edge cases first, then random ones), each admitted by the gate, each answer settled as the gateway would; the first defect shrunk to a paste-ready example.</p>"#);
    for (explored, kinds) in &page.explored {
        let _ = write!(
            out,
            r#"<h3>{}</h3><p>{}</p>"#,
            esc(&explored.trial),
            esc(&explored.line)
        );
        out.push_str(&svg::bar(kinds, "the cases by status"));
        legend(out, kinds);
        let shrunk = trials.iter().find(|t| t.name == explored.trial);
        if let Some(failure) = shrunk.and_then(|t| t.failure.as_deref()) {
            let _ = write!(
                out,
                r#"<details class="fail" open><summary>{} failed</summary><pre>{}</pre></details>"#,
                esc(&explored.trial),
                esc(&cut(&plain(failure), MESSAGE))
            );
        }
    }
    // A trial that stopped before it said what its cases reached.
    for trial in trials {
        if !page.explored.iter().any(|(e, _)| e.trial == trial.name) {
            listed(out, &[*trial], "explore trial");
        }
    }
    out.push_str("</section>\n");
}

/// The statuses' colours, named, with their counts.
fn legend(out: &mut String, kinds: &[(String, u64, crate::measure::Kind)]) {
    out.push_str(r#"<p class="legend">"#);
    for (code, n, kind) in kinds {
        let _ = write!(
            out,
            r#"<span><i class="swatch" style="background:{}"></i>{} {n}</span>"#,
            svg::colour(code, *kind),
            esc(code)
        );
    }
    out.push_str("</p>");
}

fn measured(out: &mut String, picture: &crate::measure::Picture) {
    out.push_str(r#"<section id="measure"><h2>Measurement</h2>"#);
    let total = &picture.total;
    match (total.rate, total.interval) {
        (Some(rate), Some((low, high))) => {
            let _ = write!(
                out,
                r#"<p class="rate" id="rate" data-rate="{rate:.4}">success rate <strong>{}</strong> (95% interval {} to {}): {} of the {} calls that were not declared failures, of {} calls</p>"#,
                percent(rate),
                percent(low),
                percent(high),
                total.success,
                total.counted,
                total.calls
            );
        }
        _ => {
            let _ = write!(
                out,
                r#"<p class="rate" id="rate">no call counts toward the success rate (each of the {} ended in a declared failure, or was not judged)</p>"#,
                total.calls
            );
        }
    }
    out.push_str("<h3>The calls by status</h3>");
    out.push_str(&svg::bar(&total.statuses, "all calls by status"));
    legend(out, &total.statuses);
    let mut rows: Vec<&Row> = picture.examples.iter().collect();
    let many = rows.len() > CHARTED;
    if many {
        // The examples that need looking at first.
        rows.sort_by(|a, b| {
            let rate = |r: &Row| r.rate.unwrap_or(2.0);
            rate(a).total_cmp(&rate(b))
        });
    }
    let charted: Vec<&Row> = rows.iter().take(CHARTED).copied().collect();
    let shown = |out: &mut String| {
        if many {
            let _ = write!(
                out,
                r#"<p class="meta">the {CHARTED} examples with the lowest rates, of {}</p>"#,
                rows.len()
            );
        }
    };
    out.push_str("<h3>Each example's success rate, with its 95% interval</h3>");
    shown(out);
    out.push_str(&svg::rates(&charted));
    out.push_str("<h3>Each example's calls by status</h3>");
    shown(out);
    out.push_str(&svg::statuses(&charted));
    out.push_str("<h3>Latency against <code>timeout_s</code></h3>");
    let p50_p95 = total.latency.map(|(p50, p95, _)| (p50, p95));
    out.push_str(&svg::latency(&picture.latencies, picture.timeout, p50_p95));
    if let Some(chart) = svg::margin(picture) {
        out.push_str("<h3>Upstream spend and margin, a success</h3>");
        out.push_str(&chart);
    }
    out.push_str(r#"<h3>Each example</h3><table id="examples"><thead><tr><th>example</th><th class="n">calls</th><th class="n">success rate</th><th class="n">95% interval</th><th class="n">p50</th><th class="n">p95</th><th class="n">max</th><th>statuses</th></tr></thead><tbody>"#);
    for row in rows.iter().take(LISTED) {
        example_row(out, row);
    }
    out.push_str("</tbody></table>");
    if rows.len() > LISTED {
        let _ = write!(
            out,
            "<p>and {} more examples, at higher rates, not listed</p>",
            rows.len() - LISTED
        );
    }
    let _ = write!(
        out,
        r#"<h3>As the run printed it</h3><pre id="lines">{}</pre></section>"#,
        esc(&picture.lines)
    );
    out.push('\n');
}

fn example_row(out: &mut String, row: &Row) {
    let rate = row.rate.map_or_else(|| "–".to_string(), percent);
    let interval = row.interval.map_or_else(
        || "–".to_string(),
        |(l, h)| format!("{} to {}", percent(l), percent(h)),
    );
    let (p50, p95, max) = match row.latency {
        Some((a, b, c)) => (seconds(a), seconds(b), seconds(c)),
        None => ("–".into(), "–".into(), "–".into()),
    };
    let statuses: Vec<String> = (row.statuses.iter())
        .map(|(code, n, _)| format!("{} {n}", esc(code)))
        .collect();
    let _ = write!(
        out,
        r#"<tr><td>{}</td><td class="n">{}</td><td class="n">{rate}</td><td class="n">{interval}</td><td class="n">{p50}</td><td class="n">{p95}</td><td class="n">{max}</td><td>{}</td></tr>"#,
        esc(&row.name),
        row.calls,
        statuses.join(", ")
    );
}
