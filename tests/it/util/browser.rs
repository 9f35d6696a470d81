//! A real browser for the report's tests: Debian's headless Chromium, driven over the DevTools
//! protocol on a pipe (`--remote-debugging-pipe`: JSON messages ended by a NUL on descriptors 3
//! and 4, as Puppeteer's `pipe: true` does), so no port and no WebSocket are needed. A page is
//! opened from `file://`; what the tests read: the DOM as the browser built it, a screenshot,
//! every console message and exception, and every request the page made.
//!
//! Chromium missing fails the test with what to install: a report test that skips would pass
//! on a machine that never looked at a page.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

/// How long one page may take to load and be read, on a busy machine.
const LIMIT: Duration = Duration::from_secs(60);

/// What the browser saw of one page.
pub struct Seen {
    /// The DOM as the browser built it (`document.documentElement.outerHTML`).
    pub dom: String,
    /// The page's visible text (`document.body.innerText`).
    pub text: String,
    /// A screenshot of the whole page, as PNG.
    pub screenshot: Vec<u8>,
    /// Console messages of level error or warning, exceptions, and the browser's own errors
    /// (a blocked request, a broken policy), each as a line.
    pub errors: Vec<String>,
    /// Every URL the page requested, its own included.
    pub requests: Vec<String>,
}

impl Seen {
    /// The requests that left the page: any but the page's own file.
    pub fn left(&self, page: &Path) -> Vec<String> {
        let own = format!("file://{}", page.display());
        (self.requests.iter())
            .filter(|url| **url != own)
            .cloned()
            .collect()
    }
}

/// Where macOS keeps Google Chrome, which GitHub's macOS runners carry.
const MAC_CHROME: &str = "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome";

/// Headless Chromium: `$CHROMIUM`, else found on `PATH`, else macOS's Google Chrome.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Some(found) = std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
        {
            return found;
        }
    }
    if Path::new(MAC_CHROME).is_file() {
        return PathBuf::from(MAC_CHROME);
    }
    panic!(
        "the report's tests render it in headless Chromium, which is not installed: install Debian's `chromium` (`apt-get install -y chromium`, as `.ci/run` does), or set `CHROMIUM` to a Chromium binary"
    );
}

/// Opens `page` (an HTML file) in a fresh headless Chromium `width` pixels wide and reads it.
pub fn open(page: &Path) -> Seen {
    let page = std::fs::canonicalize(page).expect("the page exists");
    let profile = tempfile::tempdir().expect("a profile folder");
    let mut browser = Browser::start(profile.path());
    let seen = browser.read(&page);
    browser.close();
    seen
}

/// A browser and its protocol pipe.
struct Browser {
    child: Child,
    to: std::fs::File,
    from: Receiver<Value>,
    next: u64,
    /// Events that arrived while a command's answer was awaited.
    events: VecDeque<Value>,
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        let (to_browser_r, to_browser_w) = pipe();
        let (from_browser_r, from_browser_w) = pipe();
        let (r, w) = (to_browser_r.as_raw_fd(), from_browser_w.as_raw_fd());
        let mut command = Command::new(chromium());
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--mute-audio",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group, so that every process it starts ends with it.
            .process_group(0);
        // SAFETY: dup2 between fork and exec touches no memory; 3 and 4 are what the pipe
        // protocol reads and writes.
        unsafe {
            command.pre_exec(move || {
                // Above 4 first, so that neither end is closed by the other's `dup2`.
                let (r, w) = (
                    libc::fcntl(r, libc::F_DUPFD, 10),
                    libc::fcntl(w, libc::F_DUPFD, 10),
                );
                if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().unwrap_or_else(|e| {
            panic!("cannot start Chromium ({e}): install Debian's `chromium` (`apt-get install -y chromium`)")
        });
        drop((to_browser_r, from_browser_w));
        let (tx, rx) = channel();
        let reader = std::fs::File::from(from_browser_r);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(reader);
            let mut message = Vec::new();
            while reader.read_until(0, &mut message).is_ok_and(|n| n > 0) {
                if message.last() == Some(&0) {
                    message.pop();
                }
                if let Ok(value) = serde_json::from_slice::<Value>(&message)
                    && tx.send(value).is_err()
                {
                    break;
                }
                message.clear();
            }
        });
        Browser {
            child,
            to: std::fs::File::from(to_browser_w),
            from: rx,
            next: 0,
            events: VecDeque::new(),
        }
    }

    /// Sends a command (on `session`, when given) and waits for its answer.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).expect("JSON");
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .unwrap_or_else(|e| panic!("Chromium stopped reading its pipe ({e}) at `{method}`"));
        let deadline = Instant::now() + LIMIT;
        loop {
            let message = self.receive(deadline, method);
            if message["id"] == json!(id) {
                if let Some(error) = message.get("error") {
                    panic!("Chromium refused `{method}`: {error}");
                }
                return message["result"].clone();
            }
            self.events.push_back(message);
        }
    }

    fn receive(&mut self, deadline: Instant, waiting_for: &str) -> Value {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.from.recv_timeout(left) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => {
                panic!("Chromium did not answer `{waiting_for}` within {LIMIT:?}")
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("Chromium ended before it answered `{waiting_for}`")
            }
        }
    }

    /// Waits for an event named `method` on `session`, keeping the others.
    fn wait_for(&mut self, session: &str, method: &str) {
        let matches = |m: &Value| m["method"] == json!(method) && m["sessionId"] == json!(session);
        if let Some(at) = self.events.iter().position(matches) {
            self.events.remove(at);
            return;
        }
        let deadline = Instant::now() + LIMIT;
        loop {
            let message = self.receive(deadline, method);
            if matches(&message) {
                return;
            }
            self.events.push_back(message);
        }
    }

    fn read(&mut self, page: &Path) -> Seen {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target = target["targetId"].as_str().expect("a target").to_string();
        let attached = self.call(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        let session = attached["sessionId"]
            .as_str()
            .expect("a session")
            .to_string();
        let s = Some(session.as_str());
        for domain in ["Page", "Runtime", "Log", "Network"] {
            self.call(s, &format!("{domain}.enable"), json!({}));
        }
        self.call(
            s,
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
        let url = format!("file://{}", page.display());
        self.call(s, "Page.navigate", json!({"url": url}));
        self.wait_for(&session, "Page.loadEventFired");
        let evaluate = |browser: &mut Browser, expression: &str| -> String {
            let got = browser.call(
                s,
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            );
            got["result"]["value"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let dom = evaluate(self, "document.documentElement.outerHTML");
        let text = evaluate(self, "document.body.innerText");
        let shot = self.call(
            s,
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let screenshot = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("a screenshot"))
            .expect("the screenshot is base64");
        // Whatever the page did is in by now: the events came before the answers above.
        let mut errors = Vec::new();
        let mut requests = Vec::new();
        for event in self.events.drain(..) {
            let params = &event["params"];
            match event["method"].as_str().unwrap_or_default() {
                "Network.requestWillBeSent" => {
                    requests.push(params["request"]["url"].as_str().unwrap_or_default().into())
                }
                "Runtime.consoleAPICalled"
                    if matches!(
                        params["type"].as_str(),
                        Some("error" | "warning" | "assert")
                    ) =>
                {
                    errors.push(format!("console.{}: {}", params["type"], params["args"]))
                }
                "Runtime.exceptionThrown" => {
                    errors.push(format!("exception: {}", params["exceptionDetails"]))
                }
                "Log.entryAdded"
                    if matches!(params["entry"]["level"].as_str(), Some("error" | "warning")) =>
                {
                    errors.push(format!("log: {}", params["entry"]))
                }
                _ => {}
            }
        }
        Seen {
            dom,
            text,
            screenshot,
            errors,
            requests,
        }
    }

    fn close(&mut self) {
        let mut bytes =
            serde_json::to_vec(&json!({"id": 0, "method": "Browser.close"})).expect("JSON");
        bytes.push(0);
        let _ = self.to.write_all(&bytes);
        let mut waited = None;
        crate::util::wait_until(Instant::now() + Duration::from_secs(10), || {
            waited = self.child.try_wait().ok().flatten();
            waited.is_some()
        });
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the browser's own group.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pipe: its read end and its write end, closed on exec in this process (the browser gets
/// them as 3 and 4 through `dup2`, which clears that flag).
fn pipe() -> (OwnedFd, OwnedFd) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    (OwnedFd::from(reader), OwnedFd::from(writer))
}
