//! `holon-test call INPUT`: one call by hand, as the MCP Inspector makes one, judged as the
//! gateway would judge it (`holon_harness::command::CallSpec`). Which server answers is what a
//! run would start: `--server-cmd`, `--url`, a Rust package's own (through its test target,
//! where its function is too), or `[server] command` in `holon-test.toml`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::Value;

use holon_core::manifest::folder_of;
use holon_harness::command::{self, CallSpec, CommandLine, Header};
use holon_harness::exit::{FAILED, OK, REFUSED, USAGE};

/// How the call is said.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Said {
    /// Lines for a person.
    Human,
    /// One JSON document on stdout, in the receipt's words.
    Json,
}

/// The arguments of `call`.
#[derive(Args, Debug)]
pub(crate) struct Call {
    /// The input: JSON (`'{"text": "hi"}'`), or `@file.json`.
    #[arg(
        value_name = "INPUT",
        required_unless_present = "example",
        conflicts_with = "example"
    )]
    input: Option<String>,
    /// Call with the input of the example named NAME.
    #[arg(long, value_name = "NAME")]
    example: Option<String>,
    /// How the call is said: lines for a person, or one JSON document on stdout (`status`,
    /// `billed`, `ms`, `output` or `error`, `upstream`).
    #[arg(long, value_enum, default_value_t = Said::Human)]
    format: Said,
    /// Append the call to `holon.yaml` as an example named NAME, its answer as the example's
    /// `output` or `error`, the file's layout and comments kept (not for a transient code, nor
    /// a name already there).
    #[arg(long, value_name = "NAME")]
    save: Option<String>,
    /// Call the agent function rather than the MCP server (a Rust agent's, through its test
    /// target).
    #[arg(long, conflicts_with_all = ["server_cmd", "url"])]
    function: bool,
    /// The manifest (default: the nearest holon.yaml from the current folder upward).
    #[arg(long, value_name = "PATH")]
    pub(crate) manifest: Option<PathBuf>,
    /// Call the server this command starts (run in the manifest's folder with `PORT` set).
    #[arg(long, value_name = "CMD")]
    server_cmd: Option<String>,
    /// Call the server already running at this URL.
    #[arg(long, value_name = "URL", value_parser = command::parse_url, conflicts_with = "server_cmd")]
    url: Option<String>,
    #[command(flatten)]
    reach: Reach,
    /// Where the upstreams answer from: `replay` the recordings (an example's, or explore's
    /// for any other input), or `live` the real services [default: replay, or
    /// `HOLON_UPSTREAM`].
    #[arg(long, value_name = "MODE", value_parser = command::parse_mode)]
    upstream: Option<command::UpstreamMode>,
    /// Seconds the server may take to answer its first `initialize` [default: 30].
    #[arg(long, value_name = "SECONDS", value_parser = command::parse_seconds)]
    startup_timeout: Option<f64>,
    /// The MCP protocol era to call the server in [default: the newest it speaks].
    #[arg(long, value_name = "2026-07-28|2025-11-25", value_parser = command::parse_protocol)]
    protocol: Option<command::Protocol>,
}

impl Call {
    /// Makes the call on `manifest` (found from `--manifest`, or why not); the exit code.
    pub(crate) fn run(&self, program: &str, manifest: Result<PathBuf, String>) -> u8 {
        let manifest = match manifest {
            Ok(manifest) => manifest,
            Err(message) => {
                eprintln!("error: {message}");
                return REFUSED;
            }
        };
        if self.upstream == Some(command::UpstreamMode::Record) {
            eprintln!(
                "error: `call` records nothing: record an example with a run (`--upstream record`), or call the real upstream with `--upstream live`"
            );
            return USAGE;
        }
        let input = match (self.input.as_deref())
            .map(|given| read_input(given, &manifest))
            .transpose()
        {
            Ok(input) => input,
            Err(why) => {
                eprintln!("error: {why}");
                return USAGE;
            }
        };
        let spec = CallSpec {
            input,
            example: self.example.clone(),
            save: self.save.clone(),
            json: self.format == Said::Json,
            function: self.function,
        };
        let given = CommandLine {
            startup: self.startup_timeout.map(std::time::Duration::from_secs_f64),
            upstream: self.upstream,
            protocol: self.protocol,
            ..CommandLine::default()
        };
        if let Some(url) = &self.url {
            let remote = match self.reach.read() {
                Ok(remote) => remote,
                Err(code) => return code,
            };
            return command::call_url(&manifest, url.clone(), remote, given, program.into(), &spec);
        }
        if let Some(server) = &self.server_cmd {
            return command::call_server_command(
                &manifest,
                (server.clone(), None),
                given,
                program.into(),
                &spec,
            );
        }
        let folder = folder_of(&manifest);
        if folder.join("Cargo.toml").is_file() {
            return self.through_test_target(&manifest, &spec);
        }
        // Named as the author would type it: `holon-test.toml` in the folder they are in.
        let settings_file = folder.join(holon_config::FILE);
        let settings_file = settings_file.strip_prefix(".").unwrap_or(&settings_file);
        match holon_config::read(&folder, holon_harness::command::file_keys()) {
            Ok(Some(config)) if config.server.is_some() => {
                let server = config.server.map(|s| (s.command, s.function));
                let server = server.unwrap_or_default();
                if self.function && server.1.is_none() {
                    eprintln!(
                        "error: `--function` calls the agent function, and `{}` names none: add `function = \"CMD\"` under `[server]` (the adapter's function mode), or call the server, without `--function`",
                        settings_file.display()
                    );
                    return USAGE;
                }
                command::call_server_command(&manifest, server, given, program.into(), &spec)
            }
            Ok(_) => {
                eprintln!(
                    "error: no server to call: `{}` is not in a Cargo package and names no `[server] command` in `{}` (or pass `--server-cmd \"CMD\"`, or `--url URL`)",
                    manifest.display(),
                    settings_file.display()
                );
                REFUSED
            }
            Err(report) => {
                eprint!(
                    "{}",
                    holon_core::check::render::human(
                        &report,
                        holon_harness::exit::color(None),
                        program
                    )
                );
                REFUSED
            }
        }
    }

    /// A Rust package: its test target makes the call (`HOLON_CALL`), through the server binary
    /// or the function its `Harness` names, after cargo builds it.
    fn through_test_target(&self, manifest: &Path, spec: &CallSpec) -> u8 {
        let file = std::env::temp_dir().join(format!(
            "holon-call-{}-{}.json",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        let text = serde_json::to_string(spec).unwrap_or_default();
        if let Err(e) = std::fs::write(&file, text) {
            eprintln!(
                "error: cannot write the call for the test target to `{}`: {e}",
                file.display()
            );
            return REFUSED;
        }
        let base = |c: &mut std::process::Command| {
            c.arg("test")
                .arg("--manifest-path")
                .arg(folder_of(manifest).join("Cargo.toml"))
                .arg("--test")
                .arg("holon");
        };
        // Built first, so that a build that fails (cargo's 101) is not taken for the call's.
        let mut build = crate::invocation::cargo();
        base(&mut build);
        build.arg("--no-run");
        match command::supervised_status(&mut build) {
            Ok(s) if s.success() => {}
            Ok(_) => {
                let _ = std::fs::remove_file(&file);
                eprintln!(
                    "error: the agent's tests did not build (`call` makes the call through `tests/holon.rs`, its `Harness`)"
                );
                return REFUSED;
            }
            Err(e) => {
                let _ = std::fs::remove_file(&file);
                eprintln!("error: cannot run cargo: {e}");
                return REFUSED;
            }
        }
        let mut test = crate::invocation::cargo();
        base(&mut test);
        // Built already: cargo's own lines would only come between the author and the call.
        test.arg("--quiet")
            .env(command::CALL_VAR, &file)
            .env(command::CHECKS_SHOWN, "1");
        if let Some(mode) = self.upstream {
            test.env(command::UPSTREAM_VAR, mode.name());
        }
        if let Some(seconds) = self.startup_timeout {
            test.env(command::STARTUP_VAR, seconds.to_string());
        }
        if let Some(protocol) = self.protocol {
            test.env(command::PROTOCOL_VAR, protocol.name());
        }
        let status = command::supervised_status(&mut test);
        let _ = std::fs::remove_file(&file);
        match status {
            // The target's own codes pass through; a crash or a signal is a refusal.
            Ok(s) => match s.code().and_then(|c| u8::try_from(c).ok()) {
                Some(code @ (OK | FAILED | USAGE | REFUSED)) => code,
                _ => REFUSED,
            },
            Err(e) => {
                eprintln!("error: cannot run cargo: {e}");
                REFUSED
            }
        }
    }
}

/// The input INPUT names: its JSON, or with `@` the JSON of that file; a text that is not
/// JSON is refused with an input of `manifest`'s own to copy.
fn read_input(given: &str, manifest: &Path) -> Result<Value, String> {
    let (text, from) = match given.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the input `{path}`: {e}"))?,
            format!("`{path}`"),
        ),
        None => (given.to_string(), "INPUT".to_string()),
    };
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "{from} is not JSON: {e} (hint: an input is a JSON object, quoted for the shell: `call '{}'`, or `call @input.json`)",
            an_input(manifest)
        )
    })
}

/// An input to show: the first example's of `manifest` when it fits a line, else `{}`.
fn an_input(manifest: &Path) -> String {
    let first = std::fs::read_to_string(manifest)
        .ok()
        .and_then(|text| holon_core::manifest::yaml::parse(&text).ok())
        .map(|node| node.to_json())
        .and_then(|m| m.pointer("/examples/0/input").cloned());
    match first.map(|input| input.to_string()) {
        Some(shown) if shown.chars().count() <= 100 && !shown.contains('\'') => shown,
        _ => "{}".to_string(),
    }
}

/// How a server at `--url` is reached, for a run and for a call alike.
#[derive(clap::Args, Debug)]
pub(crate) struct Reach {
    /// A header sent with every request to `--url`, `NAME: VALUE`; `${VAR}` in the value is
    /// read from the environment, and the value is never printed. Repeatable.
    // Read as text and parsed in `read`: clap would repeat a refused value, and a header's
    // value is never printed.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    headers: Vec<String>,
    /// PEM certificates to trust for an `https` `--url`, beside the platform's roots (a
    /// private CA, a self-signed server).
    #[arg(long, value_name = "PATH", requires = "url")]
    ca_cert: Option<PathBuf>,
}

impl Reach {
    /// The headers, each `${VAR}` read from the environment (an unset one named, before any
    /// call), and the certificates' path; the exit code of the first header that cannot be read.
    pub(crate) fn read(&self) -> Result<(Vec<Header>, Option<PathBuf>), u8> {
        Ok((headers(&self.headers)?, self.ca_cert.clone()))
    }
}

/// Each `--header`'s `NAME: VALUE` read, its `${VAR}`s from the environment (an unset one
/// named, before any call); the exit code of the first that cannot be.
fn headers(texts: &[String]) -> Result<Vec<Header>, u8> {
    let mut headers = Vec::new();
    for text in texts {
        let header = match command::parse_header(text) {
            Ok(header) => header,
            Err(e) => {
                eprintln!("error: invalid value for '--header <NAME: VALUE>': {e}");
                return Err(USAGE);
            }
        };
        match header.expand(|name| std::env::var(name).ok()) {
            Ok(header) => headers.push(header),
            Err(e) => {
                eprintln!("error: {e}");
                return Err(REFUSED);
            }
        }
    }
    Ok(headers)
}
