//! How long `cargo-holon-test check` takes, as a user waits for it: the whole process, start to
//! exit, on the largest manifest the checks are built for (1,000 examples, and one example whose
//! input holds 200,000 values), beside the same process on word-stats (the floor: start-up and
//! a small manifest); then on the worst cases at the file limit (32 MiB, as many nodes as the
//! reader takes): one mapping of keys whose last is a duplicate, and a schema of properties
//! with no description, each of which is a warning.
//!
//! Then `check --against`: the large manifest (its `version` bumped) against itself with one
//! example changed, alternating run by run with `check` of the same manifest alone, its peer.
//!
//! `cargo bench --bench check [-- RUNS]` (default 30 runs each, after 2 warm-up runs; a third
//! of that at the limit); `cargo bench --bench check -- --write FILE` only writes the large
//! manifest, to profile (`--write-limit DIR` writes the two at the limit);
//! `cargo bench --bench check -- identity [RUNS]` times the manifest's identity in-process;
//! `cargo bench --bench check -- against [RUNS]` times `--against` and its peer only;
//! `cargo bench --bench check -- pyyaml [RUNS]` times `check` of the large manifest against the
//! tools a Python author has (`benches/peers/check.py`: PyYAML's C loader and `jsonschema`),
//! alternating run by run.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a test or a benchmark that panics is one that fails, which is what it is for"
)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../tests/it/util/paths.rs"]
mod paths;

use paths::{BIN, root};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `-- --write FILE` writes the large manifest and stops, for a profiler to run on.
    if let Some(at) = args.iter().position(|a| a == "--write") {
        let path = args.get(at + 1).expect("--write FILE");
        std::fs::write(path, large_manifest()).expect("writing the manifest");
        return;
    }
    if let Some(at) = args.iter().position(|a| a == "--write-limit") {
        let dir = Path::new(args.get(at + 1).expect("--write-limit DIR"));
        std::fs::write(dir.join("duplicate.yaml"), duplicate_at_the_limit()).expect("writing");
        std::fs::write(dir.join("properties.yaml"), properties_at_the_limit()).expect("writing");
        return;
    }
    let runs: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(30);
    if args.iter().any(|a| a == "identity") {
        identity(runs);
        return;
    }
    if args.iter().any(|a| a == "against") {
        against(runs);
        return;
    }
    if args.iter().any(|a| a == "pyyaml") {
        pyyaml(args.iter().find_map(|a| a.parse().ok()).unwrap_or(10));
        return;
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let large = dir.path().join("holon.yaml");
    std::fs::write(&large, large_manifest()).expect("writing the manifest");
    let small = root().join("examples/word-stats/holon.yaml");

    println!("binary: {BIN}");
    println!("runs: {runs} each, after 2 warm-up runs");
    let bytes = std::fs::metadata(&large).map(|m| m.len()).unwrap_or(0);
    let (large_times, large_cpu) = measure(&large, runs, true);
    let (small_times, small_cpu) = measure(&small, runs, true);
    report(
        &format!(
            "1,000 examples + 200,000 values ({:.2} MB)",
            bytes as f64 / 1e6
        ),
        &large_times,
        large_cpu,
    );
    report("word-stats (the process floor)", &small_times, small_cpu);
    println!(
        "ratio of medians: {:.1}x",
        median(&large_times).as_secs_f64() / median(&small_times).as_secs_f64()
    );
    // At the limit: fewer runs, each a few seconds.
    let limit_runs = (runs / 3).max(3);
    let duplicate = dir.path().join("duplicate.yaml");
    std::fs::write(&duplicate, duplicate_at_the_limit()).expect("writing the manifest");
    let properties = dir.path().join("properties.yaml");
    std::fs::write(&properties, properties_at_the_limit()).expect("writing the manifest");
    println!("at the limit: {limit_runs} runs each, after 2 warm-up runs");
    for (what, path, accepted) in [
        (
            "one mapping of keys, the last a duplicate",
            &duplicate,
            false,
        ),
        (
            "a schema of properties with no description",
            &properties,
            true,
        ),
    ] {
        let (times, cpu) = measure(path, limit_runs, accepted);
        let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        report(
            &format!("{what} ({:.2} MiB)", bytes as f64 / (1024.0 * 1024.0)),
            &times,
            cpu,
        );
        println!(
            "ratio of medians to the large manifest: {:.1}x",
            median(&times).as_secs_f64() / median(&large_times).as_secs_f64()
        );
    }
    against(runs);
    print_load();
}

fn print_load() {
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!(
            "load average (1, 5, 15 min): {}",
            load.split(' ').take(3).collect::<Vec<_>>().join(" ")
        );
    }
}

/// `check --against` on the large manifest: the manifest, `version` bumped to 1.0.1, against the
/// published 1.0.0 in which one example's output differs (a patch, which 1.0.1 allows, so both
/// runs accept it), alternating run by run with `check` of the same manifest alone.
fn against(runs: usize) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let manifest = dir.path().join("holon.yaml");
    let published = dir.path().join("published.yaml");
    let text = large_manifest();
    let example = "number 500. Agents pay per call.\", top: 2 }\n    output:\n      characters: 65\n      words: 11\n";
    assert_eq!(text.matches(example).count(), 1, "the example to change");
    std::fs::write(
        &published,
        text.replace(example, &example.replace("words: 11", "words: 12")),
    )
    .expect("writing the published manifest");
    std::fs::write(
        &manifest,
        text.replacen("version: 1.0.0", "version: 1.0.1", 1),
    )
    .expect("writing the manifest");
    let alone = ["check".as_ref(), manifest.as_os_str()];
    let compared = [
        "check".as_ref(),
        manifest.as_os_str(),
        "--against".as_ref(),
        published.as_os_str(),
    ];
    let (mut times, mut peer) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let (mut cpu, mut peer_cpu) = (Duration::ZERO, Duration::ZERO);
    for i in 0..runs + 2 {
        for (args, into, cpu) in [
            (&alone[..], &mut peer, &mut peer_cpu),
            (&compared[..], &mut times, &mut cpu),
        ] {
            let before = children_cpu();
            let start = Instant::now();
            let output = Command::new(BIN)
                .args(args)
                .env("NO_COLOR", "1")
                .output()
                .expect("running the binary");
            let took = start.elapsed();
            assert_eq!(
                output.status.code(),
                Some(0),
                "{args:?} did not accept the manifest:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            if args.len() > 2 {
                let said = String::from_utf8_lossy(&output.stderr);
                assert!(
                    said.contains("1 change, which needs a patch version"),
                    "{said}"
                );
            }
            if i >= 2 {
                into.push(took);
                if let (Some(b), Some(a)) = (before, children_cpu()) {
                    *cpu += a - b;
                }
            }
        }
    }
    times.sort();
    peer.sort();
    let per_run = |d: Duration| (d > Duration::ZERO).then(|| d / runs as u32);
    println!(
        "against: 1,000 examples + 200,000 values, {runs} runs each, alternating, after 2 warm-up runs"
    );
    report(
        "check --against (one example changed)",
        &times,
        per_run(cpu),
    );
    report("check alone (the peer)", &peer, per_run(peer_cpu));
    println!(
        "ratio of medians: {:.2}x",
        median(&times).as_secs_f64() / median(&peer).as_secs_f64()
    );
    if let (Some(a), Some(b)) = (per_run(cpu), per_run(peer_cpu)) {
        println!("ratio of CPU: {:.2}x", a.as_secs_f64() / b.as_secs_f64());
    }
    print_load();
}

/// `-- pyyaml [RUNS]`: `check` of the large manifest against its peer in Python, PyYAML's C
/// loader and `jsonschema`'s Draft 2020-12 validator on the same manifest (the two schemas
/// checked, every example's input and output validated), alternating run by run, after 2
/// warm-up runs of each: each process's wall time and CPU time.
fn pyyaml(runs: usize) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let manifest = dir.path().join("holon.yaml");
    std::fs::write(&manifest, large_manifest()).expect("writing the manifest");
    let peer = root().join("benches/peers/check.py");
    let check = || {
        let mut c = Command::new(BIN);
        c.arg("check").arg(&manifest).env("NO_COLOR", "1");
        c
    };
    let python = || {
        let mut c = Command::new("python3");
        c.arg(&peer).arg(&manifest);
        c
    };
    let mut figures: [(Vec<Duration>, Duration); 2] = Default::default();
    for i in 0..runs + 2 {
        for (which, mut command) in [(0, check()), (1, python())] {
            let before = children_cpu();
            let start = Instant::now();
            let output = command.output().expect("running the command");
            let took = start.elapsed();
            assert!(
                output.status.success(),
                "{command:?} failed (the peer needs PyYAML with libyaml and jsonschema):\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            if which == 1 {
                assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "2001");
            }
            if i >= 2 {
                figures[which].0.push(took);
                if let (Some(b), Some(a)) = (before, children_cpu()) {
                    figures[which].1 += a - b;
                }
            }
        }
    }
    let [(mut ours, our_cpu), (mut theirs, their_cpu)] = figures;
    ours.sort();
    theirs.sort();
    let per_run = |d: Duration| (d > Duration::ZERO).then(|| d / runs as u32);
    println!(
        "pyyaml: 1,000 examples + 200,000 values, {runs} runs each, alternating, after 2 warm-up runs"
    );
    report("check", &ours, per_run(our_cpu));
    report(
        "PyYAML (CLoader) + jsonschema (peer)",
        &theirs,
        per_run(their_cpu),
    );
    println!(
        "ratio of medians, check / peer: {:.3}",
        median(&ours).as_secs_f64() / median(&theirs).as_secs_f64()
    );
    if let (Some(a), Some(b)) = (per_run(our_cpu), per_run(their_cpu)) {
        println!("ratio of CPU: {:.3}", a.as_secs_f64() / b.as_secs_f64());
    }
    print_load();
}

/// Times `runs` whole runs of `check PATH`, each of which must accept the manifest (or refuse
/// it, when `accepted` is false): the wall time of each, sorted, and the CPU time (user +
/// system) of one run on average.
fn measure(path: &Path, runs: usize, accepted: bool) -> (Vec<Duration>, Option<Duration>) {
    let mut times = Vec::with_capacity(runs);
    let mut cpu_before = None;
    for i in 0..runs + 2 {
        if i == 2 {
            cpu_before = children_cpu();
        }
        let start = Instant::now();
        let output = Command::new(BIN)
            .arg("check")
            .arg(path)
            .env("NO_COLOR", "1")
            .output()
            .expect("running the binary");
        let took = start.elapsed();
        assert_eq!(
            output.status.code(),
            Some(if accepted { 0 } else { 1 }),
            "`check {}` did not {} the manifest:\n{}",
            path.display(),
            if accepted { "accept" } else { "refuse" },
            String::from_utf8_lossy(&output.stderr)
        );
        if i >= 2 {
            times.push(took);
        }
    }
    let cpu = cpu_before
        .zip(children_cpu())
        .map(|(before, after)| (after - before) / runs as u32);
    times.sort();
    (times, cpu)
}

/// CPU time used by the children this process has waited for, from `/proc/self/stat` (Linux;
/// `None` elsewhere). On a shared machine the wall time also counts the time a run waits for a
/// core; this does not.
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name in parentheses, `cutime` and `cstime` are the 14th and 15th fields,
    // in clock ticks of 1/100 s (USER_HZ, fixed for /proc).
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let ticks: u64 = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// `-- identity [RUNS]`: in this process, on the large manifest, what a served agent and
/// every trial process against a running server (`HOLON_SERVER_URL`) pay for the manifest and
/// its identity: the checks alone (the report `check` prints), the checks and the manifest
/// with its identity (computed from the tree the checks read), and, as the peer, the text
/// parsed again for the identity (`Identity::of_text`, which they paid for before). The three
/// alternate, run by run.
fn identity(runs: usize) {
    use holon_core::check::{check_file, into_manifest};
    use holon_core::manifest::identity::Identity;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("holon.yaml");
    let text = large_manifest();
    std::fs::write(&path, &text).expect("writing the manifest");
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    let (mut checks, mut manifest, mut parse) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs + 2 {
        let c = time(&|| assert!(check_file(&path).accepted()));
        let m = time(&|| {
            let m = into_manifest(check_file(&path)).expect("accepted");
            assert!(m.identity().is_some());
        });
        let p = time(&|| assert!(Identity::of_text(&text).is_some()));
        if i >= 2 {
            checks.push(c);
            manifest.push(m);
            parse.push(p);
        }
    }
    for v in [&mut checks, &mut manifest, &mut parse] {
        v.sort();
    }
    println!("identity: 1,000 examples + 200,000 values, {runs} runs each, after 2 warm-up runs");
    report("the checks alone", &checks, None);
    report(
        "the checks, then the manifest and its identity",
        &manifest,
        None,
    );
    report(
        "the text parsed again for the identity (the peer)",
        &parse,
        None,
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "the identity adds {:.1} ms to the checks; parsing the text again took {:.1} ms ({:.1}x)",
        ms(median(&manifest).saturating_sub(median(&checks))),
        ms(median(&parse)),
        median(&parse).as_secs_f64()
            / median(&manifest)
                .saturating_sub(median(&checks))
                .as_secs_f64()
                .max(1e-9)
    );
}

fn median(sorted: &[Duration]) -> Duration {
    sorted[sorted.len() / 2]
}

fn report(what: &str, sorted: &[Duration], cpu: Option<Duration>) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let cpu = cpu.map_or_else(String::new, |c| format!("; CPU {:.0} ms a run", ms(c)));
    println!(
        "{what}: wall median {:.1} ms, min {:.1} ms, max {:.1} ms{cpu}",
        ms(median(sorted)),
        ms(sorted[0]),
        ms(sorted[sorted.len() - 1])
    );
}

/// word-stats' interface with an optional `weights` field (arrays of small integers) so one input
/// can hold 200,000 values within the bounds; 1,000 ordinary examples; the big one last.
fn large_manifest() -> String {
    let mut text = String::from(
        "name: word-stats
version: 1.0.0
description: Counts characters, words and frequent words in a text, and estimates its reading time.
capability: text.statistics
interface:
  input:
    type: object
    additionalProperties: false
    required: [text]
    properties:
      text: { type: string, maxLength: 1000000, description: The text to measure. }
      top: { type: integer, minimum: 0, maximum: 50, default: 10, description: How many frequent words to return. }
      weights:
        type: array
        maxItems: 20
        default: []
        description: Weights per word class.
        items:
          type: array
          maxItems: 10000
          items: { type: integer, minimum: 0, maximum: 9 }
  output:
    type: object
    additionalProperties: false
    required: [characters, words, top_words, reading_time_s]
    properties:
      characters: { type: integer, minimum: 0, description: Characters in the text. }
      words: { type: integer, minimum: 0, description: Words in the text. }
      top_words:
        type: array
        maxItems: 50
        description: The most frequent words, most frequent first.
        items:
          type: object
          additionalProperties: false
          required: [word, count]
          properties:
            word: { type: string, description: \"The word, lowercased.\" }
            count: { type: integer, minimum: 1, description: How often it occurs. }
      reading_time_s: { type: integer, minimum: 0, description: Reading time in whole seconds. }
  errors:
    - { code: empty_text, description: The text is empty or only whitespace. }
runtime:
  tool: word_stats
  limits: { timeout_s: 30, max_input_bytes: 1000000 }
pricing: { price: 0.004, currency: EUR, charge_on: success }
examples:
  - name: an empty document
    input: { text: \"   \" }
    error: empty_text
",
    );
    for i in 1..1000 {
        let _ = write!(
            text,
            "  - name: article {i}
    input: {{ text: \"Holon is a registry of agents, number {i}. Agents pay per call.\", top: 2 }}
    output:
      characters: {}
      words: 11
      top_words:
        - {{ word: agents, count: 2 }}
        - {{ word: a, count: 1 }}
      reading_time_s: 3
",
            62 + i.to_string().len()
        );
    }
    // The input object, `text`, `weights`, the inner arrays and their items: 200,000 values.
    let mut left = 200_000 - 3;
    let mut arrays = Vec::new();
    while left > 0 {
        let items = (left - 1).min(10_000);
        arrays.push(format!("[{}]", vec!["7"; items].join(",")));
        left -= items + 1;
    }
    let _ = write!(
        text,
        "  - name: a heavy input
    input: {{ text: heavy, weights: [{}] }}
    output: {{ characters: 5, words: 1, top_words: [{{ word: heavy, count: 1 }}], reading_time_s: 1 }}
",
        arrays.join(",")
    );
    text
}

/// Mapping entries that fill the reader's node budget (a key and its value are two nodes), less
/// room for the rest of the document.
fn entries_at_the_limit() -> usize {
    holon_core::manifest::yaml::MAX_YAML_NODES / 2 - 1000
}

/// Digits a key needs for `entries` lines of `overhead` bytes besides it to fill the file limit.
fn key_digits(entries: usize, overhead: usize) -> usize {
    (holon_core::check::MAX_FILE_BYTES as usize - 64 * 1024) / entries - overhead
}

/// The worst case of the issue that found the quadratic duplicate search: one mapping of as
/// many keys as the reader takes, in a file at the size limit, the last key a duplicate of the
/// first. Refused (`yaml-duplicate-key`).
fn duplicate_at_the_limit() -> String {
    let entries = entries_at_the_limit();
    let digits = key_digits(entries, "  k: 0\n".len());
    let mut text = String::with_capacity(holon_core::check::MAX_FILE_BYTES as usize);
    text.push_str("big:\n");
    for i in 0..entries - 1 {
        let _ = writeln!(text, "  k{i:0digits$}: 0");
    }
    let _ = writeln!(text, "  k{:0digits$}: 0", 0);
    text
}

/// The slowest accepted manifest at the limit found while probing: `interface.input` with as
/// many properties as the reader takes, none described and none with a default, so each is two
/// warnings (listed up to 1,000 of each, the rest counted), and the schema compiled whole.
fn properties_at_the_limit() -> String {
    let entries = entries_at_the_limit();
    let digits = key_digits(entries, "      p: {}\n".len());
    let base = std::fs::read_to_string(root().join("tests/fixtures/check/accepted.yaml"))
        .expect("the accepted fixture");
    let word = "      word: { type: string, maxLength: 100, description: The word to echo. }\n";
    let (head, tail) = base.split_once(word).expect("the fixture's input property");
    let mut text = String::with_capacity(holon_core::check::MAX_FILE_BYTES as usize);
    text.push_str(head);
    for i in 0..entries {
        let _ = writeln!(text, "      p{i:0digits$}: {{}}");
    }
    text.push_str(word);
    text.push_str(tail);
    text
}
