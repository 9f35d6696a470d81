//! `ctx.download`: each way a link can be wrong gives its own error, only the link the call
//! gave is fetched, and nothing outside `files/` is read; `check` refuses handles with no file
//! or that leave the folder.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::util::seam::sha256_hex;
use holon_kit::Ctx;
use holon_kit::DownloadError;
use serde_json::{Value, json};

/// A loopback HTTP server that answers every request with `body`, and records the paths asked.
fn serve(body: Vec<u8>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut request = [0u8; 4096];
            let n = stream.read(&mut request).unwrap_or(0);
            let text = String::from_utf8_lossy(&request[..n]).to_string();
            if let Some(path) = text.split_whitespace().nth(1) {
                seen.lock().expect("lock").push(path.to_string());
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    (base, asked)
}

fn later() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
        + 900
}

/// A signed link as the gateway writes it in `_meta["holon/files"]`.
fn link(url: String, bytes: &[u8]) -> Value {
    json!({
        "url": url,
        "size": bytes.len() as u64,
        "sha256": sha256_hex(bytes),
        "expires_at": later(),
    })
}

/// The context the server builds for a call carrying this one link.
fn ctx(handle: &str, link: Value) -> Ctx {
    crate::util::seam::ctx_from_meta(&json!({ handle: link }))
}

const H: &str = "holon://files/data.csv";

#[tokio::test]
async fn an_intact_file_comes_back_whole() {
    let body = b"a,b\n1,2\n".to_vec();
    let (base, asked) = serve(body.clone());
    let got = ctx(H, link(format!("{base}/signed/data"), &body))
        .download(H)
        .await;
    assert_eq!(got, Ok(body));
    assert_eq!(*asked.lock().expect("lock"), ["/signed/data"]);
}

#[tokio::test]
async fn a_tampered_size_then_a_tampered_hash_each_fail_on_their_own() {
    let body = b"a,b\n1,2\n".to_vec();
    let (base, _) = serve(b"a,b\n1,2\n3".to_vec());
    let got = ctx(H, link(format!("{base}/x"), &body)).download(H).await;
    assert_eq!(
        got,
        Err(DownloadError::WrongSize {
            handle: H.into(),
            expected: 8,
            got: 9
        })
    );

    let (base, _) = serve(b"a,b\n1,3\n".to_vec());
    let got = ctx(H, link(format!("{base}/x"), &body)).download(H).await;
    assert_eq!(got, Err(DownloadError::WrongHash { handle: H.into() }));
}

#[tokio::test]
async fn a_server_sending_more_than_size_is_cut_one_byte_past_it() {
    let announced = b"0123456789".to_vec();
    let (base, _) = serve(vec![b'x'; 5 * 1024 * 1024]);
    let got = ctx(H, link(format!("{base}/x"), &announced))
        .download(H)
        .await;
    assert_eq!(
        got,
        Err(DownloadError::WrongSize {
            handle: H.into(),
            expected: 10,
            got: 11
        })
    );
}

#[tokio::test]
async fn an_expired_link_is_not_fetched() {
    let body = b"a\n".to_vec();
    let (base, asked) = serve(body.clone());
    let mut old = link(format!("{base}/x"), &body);
    old["expires_at"] = json!(1);
    let got = ctx(H, old).download(H).await;
    assert_eq!(
        got,
        Err(DownloadError::Expired {
            handle: H.into(),
            expires_at: 1
        })
    );
    assert!(asked.lock().expect("lock").is_empty(), "nothing is fetched");
}

#[tokio::test]
async fn a_link_for_another_handle_is_never_used() {
    let body = b"a\n".to_vec();
    let (base, asked) = serve(body.clone());
    let got = ctx("holon://files/other.csv", link(format!("{base}/x"), &body))
        .download(H)
        .await;
    assert_eq!(got, Err(DownloadError::NoLink(H.into())));
    assert_eq!(
        Ctx::new().download(H).await,
        Err(DownloadError::NoLink(H.into()))
    );
    assert_eq!(
        Ctx::new().download("/etc/passwd").await,
        Err(DownloadError::NotAHandle("/etc/passwd".into()))
    );
    assert!(asked.lock().expect("lock").is_empty(), "nothing is fetched");
}

#[tokio::test]
async fn an_http_error_and_a_non_http_link_are_their_own_errors() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        if let Some(Ok(mut s)) = listener.incoming().next() {
            let _ = s.read(&mut [0u8; 1024]);
            let _ = s.write_all(
                b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    let got = ctx(H, link(format!("{base}/x"), b"a")).download(H).await;
    assert_eq!(
        got,
        Err(DownloadError::Http {
            handle: H.into(),
            status: 403
        })
    );
    let got = ctx(H, link("file:///etc/passwd".into(), b"a"))
        .download(H)
        .await;
    assert!(
        matches!(got, Err(DownloadError::Unreachable { .. })),
        "{got:?}"
    );
}

#[tokio::test]
async fn test_files_come_only_from_the_files_folder() {
    let root = tempfile::tempdir().expect("tempdir");
    let files = root.path().join("files");
    std::fs::create_dir(&files).expect("mkdir");
    std::fs::write(files.join("data.csv"), "a\n").expect("write");
    std::fs::write(root.path().join("secret"), "no").expect("write");
    std::os::unix::fs::symlink(root.path().join("secret"), files.join("link")).expect("symlink");
    let ctx = Ctx::with_files_dir(&files);
    assert_eq!(ctx.download(H).await, Ok(b"a\n".to_vec()));
    for bad in [
        "holon://files/../secret",
        "holon://files/link",
        "holon://files/missing.csv",
        "holon://files//etc/passwd",
    ] {
        let got = ctx.download(bad).await;
        assert!(
            matches!(got, Err(DownloadError::NoTestFile { .. })),
            "{bad}: {got:?}"
        );
    }
}

#[test]
fn check_refuses_a_handle_with_no_file_and_one_that_leaves_the_folder() {
    use crate::util::{BIN, OutputWithin, RUN_LIMIT};

    let root = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(crate::util::root().join("examples/csv-profile/holon.yaml"))
        .expect("read");
    let text = text
        .replace("holon://files/people.csv", "holon://files/nowhere.csv")
        .replace("holon://files/prices.csv", "holon://files/../holon.yaml");
    std::fs::write(root.path().join("holon.yaml"), text).expect("write");
    std::fs::create_dir(root.path().join("files")).expect("mkdir");
    for f in ["empty.csv", "ragged.csv"] {
        std::fs::write(root.path().join("files").join(f), "").expect("write");
    }
    let out = std::process::Command::new(BIN)
        .args(["check", "--format", "json"])
        .arg(root.path())
        .output_within(RUN_LIMIT);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let found: Vec<(&str, &str)> = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["check"].as_str().unwrap_or(""),
                d["pointer"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("file-handle-missing", "/examples/0/input/file"),
            ("file-handle-escape", "/examples/1/input/file")
        ]
    );
}
