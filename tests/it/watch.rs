//! `holon-test --watch`, through the binary, on the Python-SDK word-stats agent its
//! `[server] command` starts: a rerun after a change to the manifest and to the source, a save
//! made fifty times in a burst, the manifest deleted then restored, a server that ignores
//! SIGTERM, `q` and Ctrl-C; no server is left after any of them. Every wait is for output or a
//! file, under a deadline.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Marker;
use crate::util::py_agent::PyAgent;
use crate::util::{RUN_LIMIT, Running, wait_until};

/// A watch on `agent`, its output read as it comes; `env` for the runs and their servers.
struct Watching {
    running: Running,
    stdin: std::process::ChildStdin,
    marker: Marker,
}

impl Watching {
    fn start(agent: &PyAgent, env: &[(&str, String)]) -> Watching {
        let marker = Marker::new();
        let mut command: Command = agent.command(&["--watch"]);
        marker
            .mark(&mut command)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut running = Running::spawn(&mut command);
        let stdin = running.stdin();
        Watching {
            running,
            stdin,
            marker,
        }
    }

    /// Waits until `said` is in stderr `times` times.
    fn said(&mut self, said: &str, times: usize) {
        self.running
            .wait_for(&format!("{times} × `{said}`"), RUN_LIMIT, |r| {
                r.stderr().matches(said).count() >= times
            });
    }

    /// Waits until libtest's `test result: ok` is on stdout `times` times.
    fn passed(&mut self, times: usize) {
        self.running
            .wait_for(&format!("{times} passing runs"), RUN_LIMIT, |r| {
                r.stdout().matches("test result: ok.").count() >= times
            });
    }

    /// Ends the watch with `q` and checks it ended well and left nothing running.
    fn quit(mut self) -> crate::util::Finished {
        self.stdin.write_all(b"q\n").expect("write q");
        let marker = self.marker;
        let finished = self.running.finish(RUN_LIMIT);
        assert_eq!(finished.status.code(), Some(0), "{finished}");
        assert!(finished.stderr.ends_with("watch: stopped\n"), "{finished}");
        marker.assert_none_left();
        finished
    }
}

/// Appends a line to `file`, a save as an editor makes one.
fn save(file: &std::path::Path, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .expect("the file");
    writeln!(f, "{line}").expect("a save");
}

#[test]
fn a_manifest_edit_and_a_source_edit_each_run_again_and_ctrl_c_leaves_no_server() {
    let agent = PyAgent::new("ok");
    let mut watch = Watching::start(&agent, &[]);
    watch.passed(1);
    watch.said("watch: run 1 passed; waiting for a change", 1);
    save(&agent.manifest(), "# an edit");
    watch.said("── run 2: `holon.yaml` changed ", 1);
    watch.passed(2);
    save(&agent.dir().join("server.py"), "# an edit");
    watch.said("── run 3: `server.py` changed ", 1);
    watch.passed(3);
    // What the runs write, and a folder of builds, are no changes.
    std::fs::create_dir_all(agent.dir().join("node_modules/x")).expect("mkdir");
    std::fs::write(agent.dir().join("node_modules/x/a.js"), "x").expect("write");
    std::fs::write(agent.dir().join(".hidden"), "x").expect("write");
    watch.said("watch: run 3 passed; waiting for a change", 1);
    let marker = watch.marker;
    watch.running.signal(libc::SIGINT);
    let finished = watch.running.finish(RUN_LIMIT);
    assert_eq!(finished.status.code(), Some(130), "{finished}");
    assert!(!finished.stderr.contains("run 4"), "{finished}");
    // Each run is set apart, and ends with its `test result:` line.
    assert_eq!(
        finished.stdout.matches("test result: ok.").count(),
        3,
        "{finished}"
    );
    marker.assert_none_left();
}

/// A save through a scratch file renamed onto the file (`sed -i`, many editors) names the file
/// saved, never the scratch file.
#[test]
fn a_save_through_a_scratch_file_names_the_file_saved() {
    let agent = PyAgent::new("ok");
    let mut watch = Watching::start(&agent, &[]);
    watch.passed(1);
    let edited = Command::new("sed")
        .args(["-i", "s/^# yaml/# yaml/", "holon.yaml"])
        .current_dir(agent.dir())
        .status()
        .expect("sed");
    assert!(edited.success());
    watch.said("── run 2: `holon.yaml` changed ", 1);
    let finished = watch.quit();
    assert!(!finished.stderr.contains("`sed"), "{finished}");
}

#[test]
fn fifty_saves_in_a_burst_are_one_run() {
    let agent = PyAgent::new("ok");
    let mut watch = Watching::start(&agent, &[]);
    watch.passed(1);
    let started = Instant::now();
    for i in 0..50 {
        save(&agent.manifest(), &format!("# save {i}"));
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "fifty saves took {:?}",
        started.elapsed()
    );
    watch.said("watch: run 2 passed", 1);
    let finished = watch.quit();
    assert!(!finished.stderr.contains("run 3"), "{finished}");
    assert!(!finished.stderr.contains("stopping run"), "{finished}");
}

#[test]
fn the_manifest_deleted_then_restored_is_said_and_run_again() {
    let agent = PyAgent::new("ok");
    let text = std::fs::read(agent.manifest()).expect("the manifest");
    let mut watch = Watching::start(&agent, &[]);
    watch.passed(1);
    std::fs::remove_file(agent.manifest()).expect("delete");
    watch.said("── run 2: `holon.yaml` changed ", 1);
    watch.said(
        "watch: run 2 could not run (said above): fix it and save",
        1,
    );
    assert!(
        watch
            .running
            .stderr()
            .contains("error: no `holon.yaml` in "),
        "{}",
        watch.running.stderr()
    );
    std::fs::write(agent.manifest(), text).expect("restore");
    watch.said("── run 3: `holon.yaml` changed ", 1);
    watch.passed(2);
    watch.said("watch: run 3 passed", 1);
    watch.quit();
}

/// A server that ignores SIGTERM: word-stats' Python server with uvicorn's own handlers off
/// and SIGTERM ignored.
const DEAF: &str = "import contextlib, runpy, signal\nimport uvicorn\nuvicorn.Server.capture_signals = lambda self: contextlib.nullcontext()\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nrunpy.run_path('server.py', run_name='__main__')\n";

#[test]
fn a_change_stops_a_run_whose_server_ignores_sigterm_and_q_leaves_no_server() {
    let agent = PyAgent::new("ok");
    std::fs::write(agent.dir().join("deaf.py"), DEAF).expect("deaf.py");
    std::fs::write(
        agent.dir().join("holon-test.toml"),
        "[server]\ncommand = \"python3 deaf.py\"\n",
    )
    .expect("holon-test.toml");
    let starts = agent.dir().join("target/starts");
    std::fs::create_dir_all(starts.parent().unwrap()).expect("mkdir");
    let started = |n: usize| {
        std::fs::read_to_string(&starts)
            .map(|s| s.lines().map(str::to_string).collect::<Vec<_>>())
            .unwrap_or_default()
            .len()
            >= n
    };
    // Every call takes long, so a run is going when the change comes.
    let env = [
        ("STARTS", starts.display().to_string()),
        ("CALL_SLEEP_S", "30".to_string()),
    ];
    let mut watch = Watching::start(&agent, &env);
    assert!(
        wait_until(Instant::now() + RUN_LIMIT, || started(1)),
        "the first server never started:\n{}",
        watch.running.stderr()
    );
    save(&agent.dir().join("server.py"), "# an edit");
    watch.said("watch: `server.py` changed: stopping run 1", 1);
    watch.said("── run 2: `server.py` changed ", 1);
    assert!(
        wait_until(Instant::now() + RUN_LIMIT, || started(2)),
        "the second server never started:\n{}",
        watch.running.stderr()
    );
    // The first run's server, deaf to SIGTERM, is gone.
    let first: u32 = std::fs::read_to_string(&starts)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        wait_until(Instant::now() + Duration::from_secs(10), || {
            !watch
                .marker
                .processes()
                .iter()
                .any(|(pid, _)| *pid == first)
        }),
        "the first run's server ({first}) outlived it"
    );
    let finished = watch.quit();
    assert!(!finished.stdout.contains("test result"), "{finished}");
}
