//! What the open internet and a deploy do to a server, and what a hostile checkout does to
//! `check`: special files in place of `holon.yaml`; connection storms, half-sent requests and
//! idle connections; floats for integers; SIGTERM with calls in flight; every malformed JSON-RPC
//! shape; foreign and allowed `Origin`s. Each against the real binaries.

use std::os::unix::net::UnixListener;
use std::path::Path;

use crate::util::{check_arg, run};

// ---------------------------------------------------------------------------------------------
// `check` never blocks on a file and never reads past its limit.
// ---------------------------------------------------------------------------------------------

/// `check ARG` in `dir` refuses `file` (what ARG names) as `kind`, with exit code 1.
fn refused_as_not_regular(dir: &Path, arg: &str, file: &str, kind: &str) {
    check_arg(dir, arg)
        .refused()
        .error("file-not-regular", "", (0, 0))
        .message(&format!(
            "`{file}` is {kind}, not a regular file (a manifest is a file of YAML text)"
        ))
        .nothing_else();
    let output = run(dir, &["check", arg]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
}

#[test]
fn check_refuses_a_fifo_without_blocking_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("holon.yaml");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other memory effects.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    // No writer ever opens the FIFO: a blocking open would hang until the watchdog.
    refused_as_not_regular(dir.path(), "holon.yaml", "holon.yaml", "a FIFO");
}

#[test]
fn check_refuses_a_symlink_to_dev_zero_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("holon.yaml")).unwrap();
    refused_as_not_regular(dir.path(), "holon.yaml", "holon.yaml", "a character device");
}

#[test]
fn check_refuses_a_socket() {
    let dir = tempfile::tempdir().unwrap();
    let _listener = UnixListener::bind(dir.path().join("holon.yaml")).unwrap();
    refused_as_not_regular(dir.path(), "holon.yaml", "holon.yaml", "a socket");
}

#[test]
fn check_refuses_a_folder_named_holon_yaml() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("agent/holon.yaml")).unwrap();
    refused_as_not_regular(dir.path(), "agent", "agent/holon.yaml", "a folder");
}
