//! Recordings that lose nothing and leak nothing, end to end, for the Rust ticket-triage agent
//! (what `new --model` scaffolds) and the same agent in Python on the official `openai` SDK
//! (through `--server-cmd`), against the fake model on loopback: a record run without the key,
//! with a key the model refuses or with one too short to scrub leaves `recordings/` byte for
//! byte; recording the same answers again changes no file; a stale prompt is one report per
//! example, naming the whole command; a new required output field is blessed into every
//! example; a model that echoes the key in pieces of 7 characters, and an agent that answers
//! with its own key, leave it in no file of the agent's folder and in no output (the terminal,
//! the JUnit report, the GitHub annotations); and a record run's bad input (a recording edited
//! into invalid JSON, Ctrl-C in the middle) loses nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::scaffold::cargo;
use super::upstream::{KEY, files, python_agent, rust_agent};
use crate::util::fake_model::{Behaviour, FakeModel};
use crate::util::{BIN, CARGO_LIMIT, OutputWithin, RUN_LIMIT, Running, root, text};

/// A key the fake model refuses (401): long enough to be a key.
const WRONG_KEY: &str = "sk-holon-test-wrong-0000";

/// The fake model: the same answer for the same question (its ids, `created` and
/// `system_fingerprint` new every call, as a real service's), streamed in pieces of `piece`
/// bytes (0: three), the key in its summary when `echo_key`.
fn model(piece: usize, echo_key: bool, delay: Duration) -> FakeModel {
    FakeModel::start(Behaviour {
        delay,
        piece,
        echo_key,
        ..Behaviour::keyed(KEY)
    })
}

/// The agent under test, and how the harness is run on it.
enum Agent {
    /// A copy of `examples/ticket-triage`, through `cargo holon-test`.
    Rust(PathBuf),
    /// The Python agent through `--server-cmd`, in its `MODE`.
    Python(PathBuf, &'static str),
}

impl Agent {
    fn dir(&self) -> &Path {
        match self {
            Agent::Rust(dir) | Agent::Python(dir, _) => dir,
        }
    }

    /// The run's command, the model's variables removed, then `env` applied (`None` removes).
    fn command(&self, args: &[&str], env: &[(&str, Option<&str>)]) -> Command {
        let mut command = match self {
            Agent::Rust(dir) => {
                let mut c = cargo(dir);
                c.arg("holon-test").args(args);
                c
            }
            Agent::Python(dir, mode) => {
                let mut c = Command::new(BIN);
                c.current_dir(dir)
                    .args([
                        "--manifest",
                        "holon.yaml",
                        "--server-cmd",
                        "python3 agent.py",
                    ])
                    .args(args)
                    .env("PYTHONPATH", root().join("target/interop/python"))
                    .env("MODE", mode);
                c
            }
        };
        command
            .env("NO_COLOR", "1")
            .env_remove("HOLON_UPSTREAM")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY");
        for (name, value) in env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        command
    }

    fn run(&self, args: &[&str], env: &[(&str, Option<&str>)]) -> Output {
        let limit = match self {
            Agent::Rust(_) => CARGO_LIMIT,
            Agent::Python(..) => RUN_LIMIT,
        };
        self.command(args, env).output_within(limit)
    }

    /// The line that runs the tests again, as the reports print it.
    fn line(&self) -> &'static str {
        match self {
            Agent::Rust(_) => "cargo holon-test",
            Agent::Python(..) => {
                "cargo holon-test --manifest holon.yaml --server-cmd 'python3 agent.py'"
            }
        }
    }

    fn manifest(&self) -> String {
        read(&self.dir().join("holon.yaml"))
    }

    /// Every file of `recordings/`, with its bytes.
    fn recordings(&self) -> BTreeMap<String, Vec<u8>> {
        (std::fs::read_dir(self.dir().join("recordings")).into_iter())
            .flatten()
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).expect("a recording"))
            })
            .collect()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("read")
}

fn edit(path: &Path, from: &str, to: &str) {
    let old = read(path);
    assert!(old.contains(from), "`{from}` not in {}", path.display());
    std::fs::write(path, old.replacen(from, to, 1)).expect("write");
}

/// The model's variables: its address, and `key` (`None`: unset).
fn reach<'a>(model: &'a FakeModel, key: Option<&'a str>) -> [(&'a str, Option<&'a str>); 2] {
    [
        ("OPENAI_BASE_URL", Some(model.url.as_str())),
        ("OPENAI_API_KEY", key),
    ]
}

/// A third success example, whose output the first record run blesses.
fn third_example(agent: &Agent) {
    let manifest = agent.dir().join("holon.yaml");
    let text = read(&manifest);
    std::fs::write(
        &manifest,
        format!(
            "{text}  - name: a refund\n    input: {{ ticket: \"I was charged twice for my subscription this month.\" }}\n    output: {{ priority: low, summary: \"to be blessed\" }}\n"
        ),
    )
    .expect("write holon.yaml");
}

fn exit(out: &Output) -> Option<i32> {
    out.status.code()
}

/// The steps every agent goes through, on one copy: recorded, recorded again, refused without
/// a key, with a refused key and with a key too short to scrub, then a stale prompt.
fn loses_nothing(agent: &Agent, stale: impl FnOnce(), fresh: impl FnOnce()) {
    third_example(agent);
    let model = model(0, false, Duration::ZERO);
    let recorded = agent.run(
        &["--upstream", "record", "--bless"],
        &reach(&model, Some(KEY)),
    );
    assert_eq!(exit(&recorded), Some(0), "{}", text(&recorded));
    let first = agent.recordings();
    let manifest = agent.manifest();
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        [
            "a-question.json",
            "a-refund.json",
            "an-outage.json",
            "explore.json"
        ]
    );
    assert!(!manifest.contains("to be blessed"), "{manifest}");
    // A streamed answer reads whole beside its events, one event a line.
    let outage = String::from_utf8_lossy(&first["an-outage.json"]).into_owned();
    assert!(
        outage.contains("\"assembled\": {\n          \"/choices/0/delta/content\": \"{\\\"priority\\\":\\\"high\\\",\\\"summary\\\":\\\"The customer reports The dashboard is down"),
        "{outage}"
    );

    // The same answers again, with new ids and timestamps: no file changes.
    let asked = model.requests();
    let again = agent.run(
        &["--upstream", "record", "--bless"],
        &reach(&model, Some(KEY)),
    );
    let all = text(&again);
    assert_eq!(exit(&again), Some(0), "{all}");
    assert!(model.requests() > asked, "the model was not asked again");
    assert!(
        all.contains("upstream: recorded 0 exchanges in 0 files in")
            && all.contains("4 files left as they were (the same answers)"),
        "{all}"
    );
    assert!(agent.recordings() == first, "a recording changed:\n{all}");
    assert_eq!(agent.manifest(), manifest);

    // No key: refused before any call, naming the variable.
    let asked = model.requests();
    let keyless = agent.run(&["--upstream", "record", "--bless"], &reach(&model, None));
    let all = text(&keyless);
    assert_eq!(exit(&keyless), Some(1), "{all}");
    for needle in [
        "error[secret-unset]: `OPENAI_API_KEY` is unset or empty: `--upstream record` calls upstream `model` with it, and records nothing without it",
        "holon-test.toml:8:12",
        "set it for the run: `OPENAI_API_KEY=... cargo holon-test --upstream record --bless",
        "no call was made, and nothing was written",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    assert_eq!(model.requests(), asked, "a call was made without the key");
    assert!(agent.recordings() == first, "a recording changed:\n{all}");

    // A key too short to scrub: refused too.
    let short = agent.run(&["--upstream", "record"], &reach(&model, Some("k")));
    let all = text(&short);
    assert_eq!(exit(&short), Some(1), "{all}");
    assert!(
        all.contains(
            "the value of `OPENAI_API_KEY` is 1 character long: too short to scrub safely"
        ),
        "{all}"
    );
    assert_eq!(model.requests(), asked, "a call was made with a short key");

    // A key the model refuses: every call answered 401, none recorded over an answer.
    let refused = agent.run(
        &["--upstream", "record", "--bless"],
        &reach(&model, Some(WRONG_KEY)),
    );
    let all = text(&refused);
    assert_eq!(exit(&refused), Some(101), "{all}");
    for needle in [
        "upstream `model` answered HTTP 401 while recording (POST /chat/completions): a refusal of the credentials is never recorded",
        "so `recordings/an-outage.json` is kept as it is",
        "upstream: kept `recordings/a-question.json`, `recordings/a-refund.json`, `recordings/an-outage.json`",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    assert!(model.requests() > asked);
    assert!(agent.recordings() == first, "a recording changed:\n{all}");
    assert_eq!(agent.manifest(), manifest);
    assert!(!all.contains(WRONG_KEY), "{all}");

    // A prompt changed and not recorded again: one report per example, the whole command.
    stale();
    let changed = agent.run(&[], &[]);
    let all = text(&changed);
    assert_eq!(exit(&changed), Some(101), "{all}");
    let refresh = format!(
        "refresh the recordings: OPENAI_API_KEY=... {}",
        agent.line().replacen(
            "cargo holon-test",
            "cargo holon-test --upstream record --bless",
            1
        )
    );
    assert_eq!(all.matches(&refresh).count(), 3, "`{refresh}` in:\n{all}");
    assert_eq!(
        all.matches("the closest recorded request").count(),
        3,
        "{all}"
    );
    assert!(
        all.contains(&format!(
            "  (this example alone: OPENAI_API_KEY=... {} -- 'an outage')",
            agent.line().replacen(
                "cargo holon-test",
                "cargo holon-test --upstream record --bless",
                1
            )
        )),
        "{all}"
    );
    assert!(
        all.contains("waits for a recording: the agent's requests for example `an outage` are not the recorded ones any more"),
        "{all}"
    );
    assert!(!all.contains("never made the request"), "{all}");
    assert!(
        all.lines().count() < 200,
        "{} lines:\n{all}",
        all.lines().count()
    );
    fresh();
}

/// A new required output field, and the code that fills it: `--bless` writes it into every
/// success example, and the next replay passes.
fn blesses_a_new_field(agent: &Agent, fill: impl FnOnce()) {
    let manifest = agent.dir().join("holon.yaml");
    edit(
        &manifest,
        "required: [priority, summary]",
        "required: [priority, summary, words]",
    );
    edit(
        &manifest,
        "      summary:\n",
        "      words:\n        type: integer\n        minimum: 0\n        description: Words in the ticket.\n      summary:\n",
    );
    fill();
    let check = Command::new(BIN)
        .current_dir(agent.dir())
        .arg("check")
        .env("NO_COLOR", "1")
        .output_within(RUN_LIMIT);
    assert_eq!(
        exit(&check),
        Some(1),
        "check alone still refuses: {}",
        text(&check)
    );
    assert!(text(&check).contains("error[example-output-invalid]"));
    let blessed = agent.run(&["--bless"], &[]);
    let all = text(&blessed);
    assert_eq!(exit(&blessed), Some(0), "{all}");
    assert!(all.contains("warning[example-output-invalid]"), "{all}");
    let text_now = read(&manifest);
    assert_eq!(text_now.matches("words: ").count(), 3, "{text_now}");
    let replay = agent.run(&[], &[]);
    assert_eq!(exit(&replay), Some(0), "{}", text(&replay));
}

#[test]
fn a_python_agent_loses_no_recording_and_reports_a_stale_one_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = Agent::Python(python_agent(dir.path()), "ok");
    let code = agent.dir().join("agent.py");
    loses_nothing(
        &agent,
        || edit(&code, "You triage support tickets.", "You sort tickets."),
        || edit(&code, "You sort tickets.", "You triage support tickets."),
    );
    blesses_a_new_field(&agent, || {
        edit(
            &code,
            "output = {\"priority\": priority, \"summary\": summary}",
            "output = {\"priority\": priority, \"summary\": summary, \"words\": len(ticket.split())}",
        );
    });
}

#[test]
fn a_rust_agent_from_the_template_loses_no_recording_leaks_no_key_and_reports_a_stale_one_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _turn) = rust_agent(dir.path());
    let agent = Agent::Rust(path);
    let code = agent.dir().join("src/lib.rs");
    loses_nothing(
        &agent,
        || edit(&code, "You triage support tickets.", "You triage tickets."),
        || edit(&code, "You triage tickets.", "You triage support tickets."),
    );
    blesses_a_new_field(&agent, || {
        edit(
            &code,
            "    pub summary: String,\n}",
            "    pub summary: String,\n    /// Words in the ticket.\n    #[serde(default)]\n    pub words: usize,\n}",
        );
        edit(
            &code,
            "    Ok(answer)\n}",
            "    let mut answer = answer;\n    answer.words = input.ticket.split_whitespace().count();\n    Ok(answer)\n}",
        );
    });
    // A model that echoes the key, in pieces of 7 characters.
    no_key_anywhere(&agent, &["--upstream", "record", "--bless"], 0);
    let outage = read(&agent.dir().join("recordings/an-outage.json"));
    assert!(outage.contains("<secret:OPENAI_API_KEY>"), "{outage}");
}

/// A run with the echoing model, its JUnit report in the agent's folder and GitHub's
/// annotations on, that ends with `code`: the key is in no file of the folder and no output.
fn no_key_anywhere(agent: &Agent, args: &[&str], code: i32) -> String {
    let model = model(7, true, Duration::ZERO);
    let junit = agent.dir().join("junit.xml");
    let mut args = args.to_vec();
    let path = junit.display().to_string();
    args.extend(["--junit", &path]);
    let mut env = reach(&model, Some(KEY)).to_vec();
    env.push(("GITHUB_ACTIONS", Some("true")));
    let out = agent.run(&args, &env);
    let all = text(&out);
    assert_eq!(exit(&out), Some(code), "{all}");
    assert!(!all.contains(KEY), "the key is in the output:\n{all}");
    assert!(junit.is_file(), "no JUnit report:\n{all}");
    for (path, text) in files(agent.dir()) {
        assert!(!text.contains(KEY), "the key is in {}", path.display());
    }
    all
}

#[test]
fn a_key_in_an_answer_is_never_written_or_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = Agent::Python(python_agent(dir.path()), "ok");
    let manifest = agent.manifest();
    // Recorded: the answers scrubbed across the stream's pieces, as the agent was given them.
    let all = no_key_anywhere(&agent, &["--upstream", "record", "--bless"], 0);
    assert!(all.contains("now say what the agent does"), "{all}");
    let outage = read(&agent.dir().join("recordings/an-outage.json"));
    assert!(outage.contains("(key <secret:OPENAI_API_KEY>)"), "{outage}");
    // Live: the agent answers with the key; bless refuses it, naming the variable (the trials
    // pass: live judges a success as a paying caller gets it).
    std::fs::write(agent.dir().join("holon.yaml"), &manifest).expect("write");
    let all = no_key_anywhere(
        &agent,
        &["--upstream", "live", "--bless", "--explore-cases", "0"],
        0,
    );
    assert!(
        all.contains("`an outage`: the answer holds the value of `OPENAI_API_KEY`, a secret: it is never written into the manifest"),
        "{all}"
    );
    assert_eq!(agent.manifest(), manifest);
    // An agent that answers with its own key, replayed with the key set: the trials' reports,
    // the JUnit report and the annotations say `<secret:OPENAI_API_KEY>`.
    let echo = Agent::Python(agent.dir().to_path_buf(), "echo-key");
    let all = no_key_anywhere(
        &echo,
        &["--bless", "--faults", "off", "--explore-cases", "0"],
        101,
    );
    assert!(all.contains("<secret:OPENAI_API_KEY>"), "{all}");
    assert!(all.contains("::error file="), "{all}");
    let junit = read(&agent.dir().join("junit.xml"));
    assert!(junit.contains("&lt;secret:OPENAI_API_KEY&gt;"), "{junit}");
    assert_eq!(agent.manifest(), manifest);
}

#[test]
fn a_record_run_over_a_broken_recording_needs_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = Agent::Python(python_agent(dir.path()), "ok");
    std::fs::create_dir_all(agent.dir().join("recordings")).expect("mkdir");
    let broken =
        "{\n  \"example\": \"an outage\",\n  \"exchanges\": [\n    {\"upstream\": \"model\",\n";
    let file = agent.dir().join("recordings/an-outage.json");
    std::fs::write(&file, broken).expect("write");
    let model = model(0, false, Duration::ZERO);
    let refused = agent.run(&["--upstream", "record"], &reach(&model, Some(KEY)));
    let all = text(&refused);
    assert_eq!(exit(&refused), Some(1), "{all}");
    for needle in [
        "error[recording-syntax]: the recording is not JSON",
        "recordings/an-outage.json:5:",
        "the recordings were not read, and nothing was written (fix them, or record over them: `--force` with `--upstream record`)",
    ] {
        assert!(all.contains(needle), "`{needle}` in:\n{all}");
    }
    assert_eq!(model.requests(), 0);
    assert_eq!(read(&file), broken);
    let forced = agent.run(
        &["--upstream", "record", "--bless", "--force"],
        &reach(&model, Some(KEY)),
    );
    let all = text(&forced);
    assert_eq!(exit(&forced), Some(0), "{all}");
    assert!(
        all.contains("recordings/an-outage.json` does not read; `--force` recorded over it"),
        "{all}"
    );
    assert!(read(&file).contains("\"example\": \"an outage\""));
    let replay = agent.run(&["--faults", "off"], &[]);
    assert_eq!(exit(&replay), Some(0), "{}", text(&replay));
}

#[test]
fn ctrl_c_in_the_middle_of_a_record_run_leaves_the_recordings_as_they_were() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = Agent::Python(python_agent(dir.path()), "ok");
    let fast = model(0, false, Duration::ZERO);
    let recorded = agent.run(
        &["--upstream", "record", "--bless"],
        &reach(&fast, Some(KEY)),
    );
    assert_eq!(exit(&recorded), Some(0), "{}", text(&recorded));
    let before = agent.recordings();
    // Another wording would be recorded, but the run is stopped while the model thinks.
    let slow = FakeModel::start(Behaviour {
        delay: Duration::from_secs(30),
        vary: true,
        ..Behaviour::keyed(KEY)
    });
    let mut running = Running::spawn(
        agent
            .command(&["--upstream", "record"], &reach(&slow, Some(KEY)))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    );
    running.wait_for("a call to the model", RUN_LIMIT, |_| slow.requests() > 0);
    running.signal(libc::SIGINT);
    let stopped = Instant::now();
    let run = running.finish(RUN_LIMIT);
    assert!(!run.status.success(), "{run}");
    assert!(stopped.elapsed() < Duration::from_secs(25), "{run}");
    assert!(agent.recordings() == before, "a recording changed:\n{run}");
}
