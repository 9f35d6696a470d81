//! The runtime packages, `holon-kit` on npm and on PyPI, installed from the files `.ci/dist`
//! built: the CSV agent of each language (examples/csv-profile-typescript and -python) passes
//! its `function::` and `mcp::` trials; `ctx.download` called as the gateway calls it takes the
//! right bytes and refuses, each in its own words, a wrong hash, a long body (not read to its
//! end), a short one, a redirect (not followed), an expired link (not fetched), a handle with no
//! link, a local path and a link that is not http; 100 downloads in flight; a link that never
//! answers ends at `timeout_s`; SIGTERM with a download in flight lets it answer, then exits
//! within `timeout_s` + 5 s; `--url` names the manifest the server was built from.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::scaffold::start_server;
use crate::util::runtime_packages::{Installed, installed, link_node_modules, pythonpath};
use crate::util::seam::sha256_hex;
use crate::util::{OutputWithin, PLAIN_BIN, RUN_LIMIT, root, text};

const LANGS: [&str; 2] = ["typescript", "python"];

/// The CSV file the good links serve.
const PEOPLE: &[u8] =
    b"name,age,city\nAda,36,London\nGrace,,New York\nLinus,54,\n,41,Helsinki\nMargaret,, \n";

/// The example of `lang` in a folder of its own, ready to run offline: the runtime package from
/// the built files, Node 22 first on the PATH.
struct Example {
    home: tempfile::TempDir,
    dir: PathBuf,
    packages: Installed,
    lang: &'static str,
}

impl Example {
    fn new(lang: &'static str) -> Example {
        let packages = installed();
        let home = tempfile::tempdir().expect("a folder");
        let dir = home.path().join("agent");
        let copied = Command::new("cp")
            .arg("-R")
            .arg(root().join(format!("examples/csv-profile-{lang}")))
            .arg(&dir)
            .output_within(RUN_LIMIT);
        assert!(copied.status.success(), "{}", text(&copied));
        if lang == "typescript" {
            link_node_modules(&packages, &dir);
        }
        let bin = home.path().join("bin");
        std::fs::create_dir(&bin).expect("a folder");
        std::os::unix::fs::symlink(crate::util::paths::node22(), bin.join("node")).expect("a link");
        Example {
            home,
            dir,
            packages,
            lang,
        }
    }

    fn path(&self) -> std::ffi::OsString {
        std::env::join_paths(std::iter::once(self.home.path().join("bin")).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("a PATH")
    }

    /// `holon-test ARGS` in the example's folder.
    fn holon_test(&self, args: &[&str]) -> Output {
        Command::new(PLAIN_BIN)
            .args(args)
            .current_dir(&self.dir)
            .env("PATH", self.path())
            .env("PYTHONPATH", pythonpath(&self.packages))
            .env("NO_COLOR", "1")
            .env_remove("HOLON_PROTOCOL")
            .env_remove("HOLON_EXPLORE_CASES")
            .output_within(RUN_LIMIT)
    }

    /// Its server on a free port, with `envs`.
    fn serve(&self, envs: &[(&str, &std::ffi::OsStr)]) -> (crate::util::Running, u16) {
        let node = crate::util::paths::node22();
        let site = pythonpath(&self.packages);
        let mut all = vec![("PYTHONPATH", site.as_os_str())];
        all.extend_from_slice(envs);
        match self.lang {
            "typescript" => start_server(
                &self.dir,
                node.to_str().expect("UTF-8"),
                &["agent.ts"],
                &all,
            ),
            _ => start_server(&self.dir, "python3", &["agent.py"], &all),
        }
    }
}

/// Each trial's line: `ok` or `FAILED`, by name.
fn outcomes(out: &Output) -> std::collections::BTreeMap<String, bool> {
    (String::from_utf8_lossy(&out.stdout).lines())
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| {
            let (name, end) = l.rsplit_once(" ... ")?;
            Some((name.trim().to_string(), end == "ok"))
        })
        .collect()
}

#[test]
fn the_csv_agent_of_each_language_passes_its_function_and_mcp_trials_through_the_packages() {
    for lang in LANGS {
        let example = Example::new(lang);
        let out = example.holon_test(&["--explore-cases", "4"]);
        let printed = text(&out);
        assert!(out.status.success(), "{lang}: {printed}");
        let ended = outcomes(&out);
        for trial in [
            "function::people with gaps",
            "function::semicolons",
            "function::an empty file",
            "function::ragged rows",
            "mcp::tools/list",
            "mcp::people with gaps",
            "mcp::semicolons",
            "mcp::an empty file",
            "mcp::ragged rows",
            "explore::function",
            "explore::mcp",
        ] {
            assert_eq!(ended.get(trial), Some(&true), "{lang} {trial}: {printed}");
        }
        // The function mode is the package's, at the binary's version: no note of either.
        assert!(
            !printed.contains("is an adapter of this agent's own"),
            "{printed}"
        );
        assert!(!printed.contains("note: the agent runs on"), "{printed}");
    }
}

#[test]
fn the_function_mode_reads_files_inside_the_folder_only_symlinks_included() {
    for lang in LANGS {
        let example = Example::new(lang);
        // A link inside `files/` that leads out of it, and a name that climbs out.
        let outside = example.home.path().join("secret.csv");
        std::fs::write(&outside, PEOPLE).expect("write");
        std::os::unix::fs::symlink(&outside, example.dir.join("files/leak.csv")).expect("a link");
        for (file, said) in [
            (
                "holon://files/leak.csv",
                "the file leaves the `files/` folder",
            ),
            (
                "holon://files/../secret.csv",
                "the name leaves the `files/` folder",
            ),
            ("holon://files/missing.csv", "`files/missing.csv`"),
        ] {
            let input = json!({ "file": file }).to_string();
            let out = example.holon_test(&["call", &input, "--function", "--format", "json"]);
            let got: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|_| panic!("{lang} {file}: {}", text(&out)));
            assert_eq!(got["status"], "file_unreadable", "{lang} {file}: {got}");
            let message = got.to_string();
            assert!(message.contains(said), "{lang} {file}: {said} in {got}");
            assert!(
                !message.contains("Ada"),
                "{lang}: read outside files/: {got}"
            );
        }
    }
}

/// What the file server saw: each request's path, and how the long body went.
#[derive(Default)]
struct Seen {
    paths: Mutex<Vec<String>>,
    /// Bytes of the long body written before the reader stopped.
    long_written: AtomicU64,
    long_finished: AtomicBool,
}

impl Seen {
    fn asked(&self, path: &str) -> bool {
        self.paths.lock().expect("lock").iter().any(|p| p == path)
    }
}

/// The long body: 256 MB, where its link says 1,000 bytes.
const LONG: u64 = 256 * 1024 * 1024;

/// A loopback file server: `/good` the CSV, `/short` less of it, `/long` 256 MB, `/redirect` a
/// 302 to `/good?redirected`, `/slow` the CSV after 1.5 s, `/never` no answer at all.
fn file_server() -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Seen::default());
    let shared = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            let seen = shared.clone();
            std::thread::spawn(move || answer(stream, &seen));
        }
    });
    (base, seen)
}

fn answer(mut stream: TcpStream, seen: &Seen) {
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&request).to_string();
    let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
    seen.paths.lock().expect("lock").push(path.clone());
    let ok = |body: &[u8]| {
        let mut out = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body);
        out
    };
    match path.as_str() {
        "/good" | "/good?redirected" => {
            let _ = stream.write_all(&ok(PEOPLE));
        }
        "/short" => {
            let _ = stream.write_all(&ok(&PEOPLE[..PEOPLE.len() - 10]));
        }
        "/slow" => {
            std::thread::sleep(Duration::from_millis(1500));
            let _ = stream.write_all(&ok(PEOPLE));
        }
        "/redirect" => {
            let _ = stream.write_all(
                b"HTTP/1.1 302 Found\r\nlocation: /good?redirected\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
        "/long" => {
            let head =
                format!("HTTP/1.1 200 OK\r\ncontent-length: {LONG}\r\nconnection: close\r\n\r\n");
            if stream.write_all(head.as_bytes()).is_err() {
                return;
            }
            let chunk = vec![b'a'; 64 * 1024];
            let mut written = 0;
            while written < LONG {
                if stream.write_all(&chunk).is_err() {
                    return;
                }
                written += chunk.len() as u64;
                seen.long_written.store(written, Ordering::SeqCst);
            }
            seen.long_finished.store(true, Ordering::SeqCst);
        }
        "/never" => {
            // Hold the connection, answer nothing.
            std::thread::sleep(Duration::from_secs(120));
        }
        _ => {
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n");
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A signed link as the gateway writes it.
fn link(url: &str, size: usize, sha256: &str, expires_at: u64) -> Value {
    json!({"url": url, "size": size, "sha256": sha256, "expires_at": expires_at})
}

/// `tools/call` of the CSV agent for `file`, with `links` as `_meta["holon/files"]`.
fn call(file: &str, links: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "csv_profile", "arguments": {"file": file},
        "_meta": {"holon/files": links}}})
}

/// The call's end: `Ok(output)` or `Err((code, message))`.
fn ended(answer: &Value) -> Result<Value, (String, String)> {
    let result = &answer["result"];
    if result["isError"] == true {
        let error = &result["structuredContent"]["error"];
        return Err((
            error["code"].as_str().unwrap_or("").to_string(),
            error["message"].as_str().unwrap_or("").to_string(),
        ));
    }
    Ok(result["structuredContent"].clone())
}

#[test]
fn called_as_the_gateway_calls_it_ctx_download_takes_the_right_bytes_and_refuses_each_wrong_link() {
    let (base, seen) = file_server();
    let good = sha256_hex(PEOPLE);
    let later = now() + 900;
    let handle = "holon://files/people.csv";
    for lang in LANGS {
        let example = Example::new(lang);
        let (server, port) = example.serve(&[]);
        let send = |file: &str, links: Value| {
            let (status, answer) = rpc(port, &call(file, links));
            assert_eq!(status, 200, "{lang}: {answer}");
            ended(&answer)
        };

        // The right bytes.
        let right = send(
            handle,
            json!({ handle: link(&format!("{base}/good"), PEOPLE.len(), &good, later) }),
        );
        assert_eq!(
            right.as_ref().map(|o| o["rows"].clone()),
            Ok(json!(5)),
            "{lang}: {right:?}"
        );

        // Each wrong link, a failure the agent maps to its declared code, in words of its own.
        let expired_url = format!("{base}/expired-{lang}");
        let cases = [
            (
                "a wrong hash",
                handle,
                json!({ handle: link(&format!("{base}/good"), PEOPLE.len(), &sha256_hex(b"other"), later) }),
                "does not match its SHA-256".to_string(),
            ),
            (
                "a long body",
                handle,
                json!({ handle: link(&format!("{base}/long"), 1000, &good, later) }),
                "should be 1000 bytes, got more than 1000".to_string(),
            ),
            (
                "a short body",
                handle,
                json!({ handle: link(&format!("{base}/short"), PEOPLE.len(), &good, later) }),
                format!(
                    "should be {} bytes, got {}",
                    PEOPLE.len(),
                    PEOPLE.len() - 10
                ),
            ),
            (
                "a redirect",
                handle,
                json!({ handle: link(&format!("{base}/redirect"), PEOPLE.len(), &good, later) }),
                "failed with HTTP 302 (a redirect, not followed)".to_string(),
            ),
            (
                "an expired link",
                handle,
                json!({ handle: link(&expired_url, PEOPLE.len(), &good, now() - 1) }),
                "expired at".to_string(),
            ),
            (
                "a handle with no link",
                handle,
                json!({ "holon://files/other.csv": link(&format!("{base}/good"), PEOPLE.len(), &good, later) }),
                "the call carries no link for `holon://files/people.csv`".to_string(),
            ),
            (
                "a local path",
                "/etc/passwd",
                json!({ "/etc/passwd": link("file:///etc/passwd", 10, &good, later) }),
                "is not a file handle".to_string(),
            ),
            (
                "a handle that climbs out, with a file link",
                "holon://files/../../etc/passwd",
                json!({ "holon://files/../../etc/passwd": link("file:///etc/passwd", 10, &good, later) }),
                "`file` links are not fetched".to_string(),
            ),
        ];
        for (what, file, links, said) in cases {
            let got = send(file, links);
            let Err((code, message)) = &got else {
                panic!("{lang} {what}: {got:?}");
            };
            assert_eq!(code, "file_unreadable", "{lang} {what}: {message}");
            assert!(
                message.contains(&said),
                "{lang} {what}: `{said}` in {message}"
            );
        }
        // Not followed, not fetched, not read to its end.
        assert!(
            !seen.asked("/good?redirected"),
            "{lang}: the redirect was followed"
        );
        assert!(
            !seen.asked(&format!("/expired-{lang}")),
            "{lang}: the expired link was fetched"
        );
        let written = seen.long_written.load(Ordering::SeqCst);
        assert!(
            !seen.long_finished.load(Ordering::SeqCst) && written < LONG / 4,
            "{lang}: the long body was read past its size: {written} bytes written"
        );

        // 100 downloads in flight, each answered.
        let calls: Vec<_> = (0..100)
            .map(|_| {
                let links =
                    json!({ handle: link(&format!("{base}/good"), PEOPLE.len(), &good, later) });
                std::thread::spawn(move || rpc(port, &call(handle, links)))
            })
            .collect();
        for call in calls {
            let (status, answer) = call.join().expect("a call");
            assert_eq!(status, 200, "{lang}: {answer}");
            assert_eq!(
                ended(&answer).map(|o| o["rows"].clone()),
                Ok(json!(5)),
                "{lang}"
            );
        }
        drop(server);
    }
}

#[test]
fn a_download_that_never_answers_ends_at_timeout_s_and_the_server_goes_on() {
    let (base, _seen) = file_server();
    let good = sha256_hex(PEOPLE);
    let handle = "holon://files/people.csv";
    for lang in LANGS {
        let example = Example::new(lang);
        let manifest = std::fs::read_to_string(example.dir.join("holon.yaml")).expect("manifest");
        let quick = example.dir.join("quick.yaml");
        std::fs::write(&quick, manifest.replace("timeout_s: 30", "timeout_s: 2")).expect("write");
        let (_server, port) = example.serve(&[("HOLON_MANIFEST", quick.as_os_str())]);
        let start = Instant::now();
        let links =
            json!({ handle: link(&format!("{base}/never"), PEOPLE.len(), &good, now() + 900) });
        let (_, answer) = rpc(port, &call(handle, links));
        let took = start.elapsed();
        assert_eq!(
            ended(&answer).map_err(|(code, _)| code),
            Err("timeout".to_string()),
            "{lang}: {answer}"
        );
        assert!(took < Duration::from_secs(10), "{lang}: {took:?}");
        let links =
            json!({ handle: link(&format!("{base}/good"), PEOPLE.len(), &good, now() + 900) });
        let (_, answer) = rpc(port, &call(handle, links));
        assert_eq!(
            ended(&answer).map(|o| o["rows"].clone()),
            Ok(json!(5)),
            "{lang}"
        );
    }
}

#[test]
fn sigterm_with_a_download_in_flight_lets_it_answer_then_the_server_exits_in_time() {
    let (base, seen) = file_server();
    let good = sha256_hex(PEOPLE);
    let handle = "holon://files/people.csv";
    for lang in LANGS {
        let example = Example::new(lang);
        let (mut server, port) = example.serve(&[]);
        let links =
            json!({ handle: link(&format!("{base}/slow"), PEOPLE.len(), &good, now() + 900) });
        let before = seen.paths.lock().expect("lock").len();
        let slow = std::thread::spawn(move || rpc(port, &call(handle, links)));
        server.wait_for("the download", RUN_LIMIT, |_| {
            seen.paths.lock().expect("lock").len() > before
        });
        let signalled = Instant::now();
        server.signal(libc::SIGTERM);
        let (status, answer) = slow.join().expect("the call");
        assert_eq!(status, 200, "{lang}: {answer}");
        assert_eq!(
            ended(&answer).map(|o| o["rows"].clone()),
            Ok(json!(5)),
            "{lang}: {answer}"
        );
        let finished = server.finish(RUN_LIMIT);
        // `timeout_s` is 30: the drain may take it and 5 s more, never longer.
        let took = signalled.elapsed();
        assert!(
            took < Duration::from_secs(35),
            "{lang}: {took:?} {finished}"
        );
    }
}

#[test]
fn url_against_each_package_server_names_the_manifest_it_was_built_from() {
    for lang in LANGS {
        let example = Example::new(lang);
        let (_server, port) = example.serve(&[]);
        let url = format!("http://127.0.0.1:{port}/mcp");
        let same = example.holon_test(&["--url", &url, "--explore-cases", "0"]);
        let printed = text(&same);
        assert!(same.status.success(), "{lang}: {printed}");
        assert!(
            !printed.contains("announces no `holon/manifest`"),
            "{lang}: {printed}"
        );
        // The manifest under test changed: the server's is another, named.
        let manifest = example.dir.join("holon.yaml");
        let text_of = std::fs::read_to_string(&manifest).expect("manifest");
        std::fs::write(&manifest, text_of.replace("timeout_s: 30", "timeout_s: 31"))
            .expect("write");
        let other = example.holon_test(&["--url", &url, "--explore-cases", "0"]);
        let printed = text(&other);
        assert!(!other.status.success(), "{lang}: {printed}");
        assert!(
            printed.contains(&format!(
                "the server at `{url}` serves another manifest: it announces `csv-profile 1.0.0` (sha256 "
            )),
            "{lang}: {printed}"
        );
    }
}

/// The example's manifest is the Rust one's, so the three agents answer for one contract.
#[test]
fn the_examples_in_three_languages_share_one_manifest_and_its_files() {
    let rust = root().join("examples/csv-profile");
    for lang in LANGS {
        let dir = root().join(format!("examples/csv-profile-{lang}"));
        for file in [
            "holon.yaml",
            "files/people.csv",
            "files/prices.csv",
            "files/empty.csv",
            "files/ragged.csv",
        ] {
            assert_eq!(
                std::fs::read(dir.join(file)).expect("a file"),
                std::fs::read(rust.join(file)).expect("a file"),
                "{lang}: {file}"
            );
        }
        assert!(
            dir.join(Path::new(match lang {
                "typescript" => "holon.types.ts",
                _ => "holon_types.py",
            }))
            .is_file()
        );
    }
}

/// The hardening probes that apply to a server of the package: broken JSON-RPC is answered as
/// an error, never a crash; a body past the limit `max_input_bytes` sets is 413 before it is
/// read; a browser's foreign Origin is 403; the server answers a good call after each.
#[test]
fn each_package_server_survives_broken_json_rpc_a_body_too_large_and_a_foreign_origin() {
    let (base, _seen) = file_server();
    let good = sha256_hex(PEOPLE);
    let handle = "holon://files/people.csv";
    for lang in LANGS {
        let example = Example::new(lang);
        let (server, port) = example.serve(&[]);
        let still_answers = |after: &str| {
            let links =
                json!({ handle: link(&format!("{base}/good"), PEOPLE.len(), &good, now() + 900) });
            let (status, answer) = rpc(port, &call(handle, links));
            assert_eq!(status, 200, "{lang}, after {after}: {answer}");
            assert_eq!(
                ended(&answer).map(|o| o["rows"].clone()),
                Ok(json!(5)),
                "{lang}: {after}"
            );
        };
        for (what, body) in [
            ("not JSON", r#"{"jsonrpc":"2.0","id":1,"#),
            ("a bare string", r#""tools/list""#),
            ("no jsonrpc", r#"{"id":1,"method":"tools/list"}"#),
            (
                "a method that is not a string",
                r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            ),
            (
                "arguments as a string",
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"csv_profile","arguments":"x"}}"#,
            ),
            (
                "an unknown tool",
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"csv","arguments":{}}}"#,
            ),
        ] {
            let (status, answer) = raw_post(port, &[], body.as_bytes());
            assert!(
                (200..500).contains(&status),
                "{lang} {what}: {status} {answer}"
            );
            // The JSON in the body, however it is framed (an event, a chunk).
            let json = match (answer.find('{'), answer.rfind('}')) {
                (Some(start), Some(end)) if start < end => &answer[start..=end],
                _ => "null",
            };
            let parsed: Value = serde_json::from_str(json).unwrap_or(Value::Null);
            assert!(
                parsed["error"].is_object() || parsed["result"]["isError"] == true || status >= 400,
                "{lang} {what}: {status} {answer}"
            );
            still_answers(what);
        }
        let large = vec![b' '; 5 * 1024 * 1024];
        let (status, _) = raw_post(port, &[], &large);
        assert_eq!(status, 413, "{lang}: a body past the limit");
        still_answers("a body past the limit");
        let (status, _) = raw_post(
            port,
            &[("origin", "https://elsewhere.example")],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        assert_eq!(status, 403, "{lang}: a foreign origin");
        still_answers("a foreign origin");
        drop(server);
    }
}

/// One JSON-RPC request to `/mcp` in the 2025-11-25 era: the status and the message answered
/// (a JSON body, or the last `data:` of an event stream).
fn rpc(port: u16, body: &Value) -> (u16, Value) {
    let (status, answer) = raw_post(port, &[], body.to_string().as_bytes());
    let message = (answer.lines())
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .map(str::to_string)
        .or_else(|| {
            let (start, end) = (answer.find('{')?, answer.rfind('}')?);
            (start < end).then(|| answer[start..=end].to_string())
        })
        .unwrap_or_default();
    (
        status,
        serde_json::from_str(&message).unwrap_or(Value::Null),
    )
}

/// Whether `answer` holds a whole HTTP response: its head, and its body as `content-length`
/// or the last chunk says.
fn answered_whole(answer: &[u8]) -> bool {
    let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
    let body = &answer[end + 4..];
    if let Some(length) = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return body.len() >= length;
    }
    head.contains("transfer-encoding: chunked") && body.ends_with(b"0\r\n\r\n")
}

/// One POST to `/mcp` of `body` as it is, in the 2025-11-25 era: the status and the body.
fn raw_post(port: u16, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(RUN_LIMIT)).expect("a timeout");
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).expect("the head");
    // A server that refuses a body answers before it is all sent, and may never read the rest:
    // the body goes from a thread of its own, and the answer is read as far as it says it goes.
    let mut writer = stream.try_clone().expect("a clone");
    let body = body.to_vec();
    std::thread::spawn(move || {
        let _ = writer.write_all(&body);
    });
    let mut answer = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
        }
        if answered_whole(&answer) {
            break;
        }
    }
    let answer = String::from_utf8_lossy(&answer).to_string();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"));
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}
