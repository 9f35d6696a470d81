//! The report page (`--report PATH.html`, `holon-test report RECEIPTS --out PATH.html`),
//! rendered in headless Chromium (`util::browser`): what must be on it is in the DOM the browser
//! built, the console has no error, no request leaves the page, and a screenshot of each is kept
//! in `target/tmp/report-shots/`. Also the receipts read back: several files as one run, a file
//! cut short, a file of another manifest, 100,000 receipts, and names that are markup.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::browser::{self, Seen};
use crate::util::py_agent::PyAgent;
use crate::util::{OutputWithin, RUN_LIMIT, root, stderr, stdout, text};

/// Opens `page` in the browser, keeps its screenshot as `name`, and holds it to what every page
/// must be: a PNG screenshot, no error in the console, no request but the page's own.
fn looked_at(page: &Path, name: &str) -> Seen {
    let seen = browser::open(page);
    assert!(
        seen.screenshot.starts_with(b"\x89PNG"),
        "the screenshot is not a PNG"
    );
    let shots = root().join("target/tmp/report-shots");
    std::fs::create_dir_all(&shots).expect("the screenshots' folder");
    std::fs::write(shots.join(format!("{name}.png")), &seen.screenshot).expect("a screenshot");
    assert_eq!(seen.errors, Vec::<String>::new(), "the console of `{name}`");
    assert_eq!(
        seen.left(page),
        Vec::<String>::new(),
        "requests of `{name}`"
    );
    assert!(
        seen.requests.len() == 1,
        "the page itself was requested once: {:?}",
        seen.requests
    );
    seen
}

/// The part of a DOM between `<section id="ID"` and its end.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!(r#"<section id="{id}""#))
        .unwrap_or_else(|| panic!("no section `{id}` in the page:\n{dom}"));
    let end = dom[start..].find("</section>").expect("the section ends") + start;
    &dom[start..end]
}

#[test]
fn a_failing_run_s_page_shows_each_failure_with_its_diff() {
    let agent = PyAgent::new("number-as-string");
    let run = agent
        .command(&["--report", "out/page.html"])
        .output_within(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(101), "{}", text(&run));
    // Where the page went is said, as given, for the author to open.
    assert!(
        stderr(&run).contains("report: wrote `out/page.html`"),
        "{}",
        text(&run)
    );
    let page = agent.dir().join("out/page.html");
    let seen = looked_at(&page, "failing");
    let trials = section(&seen.dom, "trials");
    for said in [
        "mcp::a short article",
        "the output differs from the example at `/words`",
        "gateway status: invalid_output",
        "1 failed",
        "2 passed",
    ] {
        assert!(
            trials.contains(said),
            "`{said}` is not on the page:\n{trials}"
        );
    }
    assert!(
        seen.text
            .contains("test result: FAILED. 2 passed; 1 failed"),
        "{}",
        seen.text
    );
}

/// Trials that fail for one cause: on the page as in the terminal, the first in full and the
/// others in one line each, as the run's note says.
#[test]
fn a_cause_many_trials_share_is_in_full_once_on_the_page() {
    let agent = PyAgent::new("die-at-start");
    let run = agent
        .command(&["--report", "page.html", "--explore-cases", "0"])
        .output_within(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(101), "{}", text(&run));
    assert!(
        text(&run).contains("is reported in full, the others in one line each"),
        "{}",
        text(&run)
    );
    let seen = looked_at(&agent.dir().join("page.html"), "one-cause");
    let trials = section(&seen.dom, "trials");
    // Whichever trial ended first of the cause is in full; the two others name it. Which one
    // that is depends on the threads, so the test reads it from the page.
    let named: Vec<&str> = trials
        .split("the same cause as `")
        .skip(1)
        .filter_map(|rest| rest.split_once("`, reported in full").map(|(name, _)| name))
        .collect();
    assert_eq!(named.len(), 2, "{trials}");
    assert_eq!(named[0], named[1], "{trials}");
    assert!(named[0].starts_with("mcp::"), "{trials}");
    assert_eq!(trials.matches("--- server output").count(), 1, "{trials}");
}

#[test]
fn a_measured_run_s_page_draws_the_rate_and_report_draws_it_again_from_the_receipts() {
    let agent = PyAgent::new("ok");
    let run = agent
        .command(&[
            "--repeat",
            "4",
            "--receipts",
            "receipts.jsonl",
            "--report",
            "run.html",
        ])
        .output_within(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let drawn = agent
        .command(&["report", "receipts.jsonl", "--out", "again.html"])
        .output_within(RUN_LIMIT);
    assert_eq!(drawn.status.code(), Some(0), "{}", text(&drawn));
    assert!(
        stderr(&drawn).contains("report: wrote `again.html`"),
        "{}",
        text(&drawn)
    );
    let from_run = looked_at(&agent.dir().join("run.html"), "measured");
    let from_receipts = looked_at(&agent.dir().join("again.html"), "measured-from-receipts");
    // An example's trial takes its calls' time, though they were made ahead of it.
    let trials = section(&from_run.dom, "trials");
    assert!(trials.contains("mcp::a short article"), "{trials}");
    assert!(
        !trials.contains(r#"<span class="ms">0 ms</span>"#),
        "{trials}"
    );
    let measured = section(&from_run.dom, "measure");
    for said in [
        r#"id="rate""#,
        "success rate <strong>100.0%</strong> (95% interval 51.0% to 100.0%)",
        r#"class="rates""#,
        r#"class="latency""#,
        r#"class="statuses""#,
        "timeout_s 30.00 s",
        "a short article",
        "empty_text 4",
    ] {
        assert!(
            measured.contains(said),
            "`{said}` is not drawn:\n{measured}"
        );
    }
    // The same figures and charts, whichever way the page was drawn: only the first line,
    // where the calls came from, differs.
    let first_line = |s: &str| {
        let start = s.find(r#"<pre id="lines">"#).expect("the lines");
        let end = s[start..].find('\n').expect("a line") + start;
        s.replace(&s[start..end], "")
    };
    assert_eq!(
        first_line(measured),
        first_line(section(&from_receipts.dom, "measure"))
    );
    // The text of `report` without `--out` is the run's `measure:` lines.
    let printed = agent
        .command(&["report", "receipts.jsonl"])
        .output_within(RUN_LIMIT);
    assert_eq!(printed.status.code(), Some(0), "{}", text(&printed));
    let lines = |s: &str| -> Vec<String> {
        (s.lines())
            .filter(|l| l.starts_with("measure:"))
            .skip(1)
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        lines(&stdout(&printed)),
        lines(&stderr(&run)),
        "{}",
        text(&printed)
    );
    assert!(
        stdout(&printed).starts_with(
            "measure: the `mcp` pass, 2 examples, 8 calls, read from `receipts.jsonl`\n"
        ),
        "{}",
        text(&printed)
    );
}

/// The receipts a measured run of `agent` writes to `name`, `repeat` calls of each example.
fn receipts(agent: &PyAgent, name: &str, repeat: &str) -> PathBuf {
    let run = agent
        .command(&["--repeat", repeat, "--receipts", name])
        .output_within(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    agent.dir().join(name)
}

#[test]
fn shards_read_as_one_run_and_a_file_cut_short_is_read_up_to_its_cut() {
    let agent = PyAgent::new("ok");
    let a = receipts(&agent, "a.jsonl", "3");
    let b = receipts(&agent, "b.jsonl", "2");
    let both = agent
        .command(&["report", "a.jsonl", "b.jsonl"])
        .output_within(RUN_LIMIT);
    assert_eq!(both.status.code(), Some(0), "{}", text(&both));
    assert!(
        stdout(&both).contains("measure:   `a short article`: 5 calls: success 5"),
        "{}",
        text(&both)
    );
    assert!(stdout(&both).contains("10 calls, read from `a.jsonl`, `b.jsonl`"));

    // A file given twice counts each receipt once, and says so; a line of late answers whose
    // call no receipt holds is said, and not counted.
    let mut lines = std::fs::read_to_string(&a).expect("a");
    lines.push_str(r#"{"late":true,"example":"a short article","run":99,"upstream":[{"name":"model","status":200,"input_tokens":5,"output_tokens":1}],"pass":"mcp","run_id":"1-1"}"#);
    lines.push('\n');
    std::fs::write(agent.dir().join("late.jsonl"), lines).expect("write");
    let twice = agent
        .command(&["report", "late.jsonl", "late.jsonl"])
        .output_within(RUN_LIMIT);
    assert_eq!(twice.status.code(), Some(0), "{}", text(&twice));
    assert!(
        stdout(&twice).contains("6 calls, read from `late.jsonl`, `late.jsonl`"),
        "{}",
        text(&twice)
    );
    for said in [
        "warning: `late.jsonl` repeats 6 receipts already read (the same run's lines, from this file or another): each is counted once",
        "warning: `late.jsonl` holds 1 line of late answers whose call no receipt before it holds: not counted",
    ] {
        assert!(
            stderr(&twice).contains(said),
            "`{said}` in:\n{}",
            text(&twice)
        );
    }

    // The last line of `b.jsonl` cut in the middle: the line before it is read, and the cut
    // said, with where.
    let bytes = std::fs::read(&b).expect("b");
    std::fs::write(&b, &bytes[..bytes.len() - 20]).expect("cut");
    let cut = agent
        .command(&["report", "a.jsonl", "b.jsonl"])
        .output_within(RUN_LIMIT);
    assert_eq!(cut.status.code(), Some(0), "{}", text(&cut));
    assert!(
        stderr(&cut).contains(
            "warning: `b.jsonl`:4: the line is cut short (the file ends in the middle of it): read the 3 receipts before it, and nothing after it"
        ),
        "{}",
        text(&cut)
    );
    assert!(
        stdout(&cut).contains("9 calls, read from"),
        "{}",
        text(&cut)
    );

    // A file of another version of the manifest is refused by name, and so is a file that is
    // not there.
    let other = PyAgent::with_manifest(
        &std::fs::read_to_string(agent.manifest())
            .expect("the manifest")
            .replace("version: 1.0.0", "version: 1.1.0"),
        "ok",
    );
    std::fs::copy(&a, other.dir().join("a.jsonl")).expect("copy");
    let refused = other
        .command(&["report", "a.jsonl"])
        .output_within(RUN_LIMIT);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        stderr(&refused).contains("error: `a.jsonl` holds receipts of `word-stats 1.0.0` (sha256 ")
            && stderr(&refused).contains("not of `holon.yaml` (`word-stats 1.1.0` (sha256 "),
        "{}",
        text(&refused)
    );
    let missing = agent
        .command(&["report", "nowhere.jsonl"])
        .output_within(RUN_LIMIT);
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing));
    assert!(
        stderr(&missing).starts_with("error: cannot read the receipts `nowhere.jsonl`: "),
        "{}",
        text(&missing)
    );
}

#[test]
fn a_hundred_thousand_receipts_make_a_small_page() {
    let agent = PyAgent::new("ok");
    let one = receipts(&agent, "one.jsonl", "1");
    let lines: Vec<Value> = std::fs::read_to_string(&one)
        .expect("the receipts")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a receipt"))
        .collect();
    let mut big = String::new();
    for i in 0..100_000u64 {
        let mut line = lines[(i % 2) as usize].clone();
        line["run"] = (i / 2 + 1).into();
        line["ms"] = (10 + i % 97).into();
        big.push_str(&line.to_string());
        big.push('\n');
    }
    std::fs::write(agent.dir().join("big.jsonl"), big).expect("the receipts");
    let drawn = agent
        .command(&["report", "big.jsonl", "--out", "big.html"])
        .output_within(RUN_LIMIT);
    assert_eq!(drawn.status.code(), Some(0), "{}", text(&drawn));
    let page = agent.dir().join("big.html");
    let size = std::fs::metadata(&page).expect("the page").len();
    assert!(size < 5_000_000, "the page is {size} bytes");
    let seen = looked_at(&page, "hundred-thousand");
    assert!(
        seen.text.contains("of 100000 calls"),
        "{}",
        &seen.text[..seen.text.len().min(2000)]
    );
}

#[test]
fn names_that_are_markup_are_shown_never_run() {
    let hostile = "<script>document.title='owned'</script><img src=x onerror=alert(1)>";
    let manifest = std::fs::read_to_string(root().join("tests/fixtures/harness/word-stats.yaml"))
        .expect("the manifest")
        .replace("name: a short article", &format!("name: \"{hostile}\""));
    let agent = PyAgent::with_manifest(&manifest, "number-as-string");
    let run = agent
        .command(&["--report", "page.html", "--repeat", "2"])
        .output_within(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(101), "{}", text(&run));
    let seen = looked_at(&agent.dir().join("page.html"), "markup");
    assert!(seen.text.contains(hostile), "{}", seen.text);
    assert!(
        !seen.dom.contains("<script>"),
        "a script element:\n{}",
        seen.dom
    );
    assert!(
        !seen.dom.contains("<img"),
        "an image element:\n{}",
        seen.dom
    );
}

#[test]
fn the_browser_sees_an_error_and_a_request_that_leaves_a_page() {
    // What the tests above hold every page to would catch a page that broke it.
    let dir = tempfile::tempdir().expect("a folder");
    let page = dir.path().join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><p>bad</p><img src=\"http://127.0.0.1:9/x.png\"><script>console.error('broken')</script></body></html>",
    )
    .expect("the page");
    let seen = browser::open(&page);
    assert!(
        seen.errors.iter().any(|e| e.contains("broken")),
        "{:?}",
        seen.errors
    );
    assert_eq!(
        seen.left(&page),
        vec!["http://127.0.0.1:9/x.png".to_string()]
    );
}

#[test]
fn explore_s_cases_by_status_and_its_shrunk_failure_are_on_the_page() {
    // A latent defect: every example passes, and a text with a line break crashes the server.
    let agent = PyAgent::new("line-break");
    let run = agent
        .command(&["--explore-cases", "60", "--report", "explore.html"])
        .output_within(RUN_LIMIT);
    assert_eq!(run.status.code(), Some(101), "{}", text(&run));
    let seen = looked_at(&agent.dir().join("explore.html"), "explore");
    let explore = section(&seen.dom, "explore");
    for said in [
        "explore::mcp: ",
        "cases (",
        r#"class="bar""#,
        "explore found an input the gateway admits that a paying caller would get `agent_error` for",
        "the input, as an example to paste into `examples`",
    ] {
        assert!(
            explore.contains(said),
            "`{said}` is not on the page:\n{explore}"
        );
    }
}

#[test]
fn the_fault_trials_are_on_the_page() {
    // The Python triage agent, recorded against a fake model that is gone afterwards.
    let dir = tempfile::tempdir().expect("a folder");
    let agent = super::faults::recorded_python(dir.path());
    let run = super::upstream::run_python(
        &agent,
        &["--report", "page.html", "--explore-cases", "0"],
        None,
        "ok",
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let seen = looked_at(&agent.join("page.html"), "faults");
    let faults = section(&seen.dom, "faults");
    for said in [
        "faults::mcp",
        "0 failed",
        "Each success example replayed with one recorded upstream exchange failing",
    ] {
        assert!(
            faults.contains(said),
            "`{said}` is not on the page:\n{faults}"
        );
    }
}
