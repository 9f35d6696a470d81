//! A model-backed agent: triages a support ticket (a priority and a one-line summary) by asking
//! an OpenAI-compatible chat model, streamed, through one `reqwest::Client` kept for the
//! process. The model's base URL comes from `OPENAI_BASE_URL` (default OpenAI's), its key from
//! `OPENAI_API_KEY`: under `cargo holon-test` the first points at the harness's recordings.
//!
//! The stream asks for its usage (`stream_options.include_usage`), so a measured run
//! (`cargo holon-test --upstream live --repeat 20`) knows the tokens each call spends and, with
//! the prices in `holon-test.toml`, what a success costs upstream against what it pays.

use std::sync::OnceLock;
use std::time::Duration;

use holon_kit::{Ctx, Failure};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The call's arguments, as `interface.input` describes them.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The ticket's text.
    pub ticket: String,
}

/// The answer, as `interface.output` describes it.
#[derive(Debug, Serialize, Deserialize)]
pub struct Output {
    /// `low`, `medium` or `high`.
    pub priority: String,
    /// The ticket in one line.
    pub summary: String,
}

/// What the model is asked to do.
const PROMPT: &str = "You triage support tickets. Answer with a JSON object and nothing else: \
{\"priority\": \"low\" | \"medium\" | \"high\", \"summary\": one line of at most 200 characters}.";

/// How long the model may stay silent (before its answer starts, or between two streamed
/// chunks) before the call gives up and answers `upstream_unavailable`: well inside
/// `timeout_s`, so a stalled model costs the caller a declared failure, never a `timeout`.
const STALL: Duration = Duration::from_secs(5);

/// The one client of the process: its connections are kept across calls.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        // TLS on ring, which builds in seconds. rustls deprecates ring's provider for its lack
        // of post-quantum key exchange: for that, use its `aws-lc-rs` feature and provider,
        // which compile C for minutes of a first build.
        #[allow(deprecated)]
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .connect_timeout(STALL)
            .read_timeout(STALL)
            .build()
            .unwrap_or_else(|_| reqwest::Client::new())
    })
}

/// The model's base URL: `OPENAI_BASE_URL`, or OpenAI's.
fn base_url() -> String {
    std::env::var("OPENAI_BASE_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| "https://api.openai.com/v1".to_string())
}

/// Triages one ticket.
pub async fn run(input: Input, ctx: Ctx) -> Result<Output, Failure> {
    if input.ticket.trim().is_empty() {
        return Err(ctx.fail("empty_ticket", "the ticket is empty"));
    }
    let request = json!({
        "model": "gpt-4o-mini",
        "stream": true,
        "stream_options": {"include_usage": true},
        "temperature": 0,
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": input.ticket},
        ],
    });
    let key = std::env::var("OPENAI_API_KEY").unwrap_or_default();
    let unavailable = |why: String| ctx.fail("upstream_unavailable", why);
    let response = client()
        .post(format!(
            "{}/chat/completions",
            base_url().trim_end_matches('/')
        ))
        .bearer_auth(key)
        .json(&request)
        .send()
        .await
        .map_err(|e| unavailable(format!("the model could not be reached: {e}")))?;
    let status = response.status();
    if !status.is_success() {
        return Err(unavailable(format!("the model answered HTTP {status}")));
    }
    let body = response
        .text()
        .await
        .map_err(|e| unavailable(format!("the model's answer was cut off: {e}")))?;
    let content = streamed_content(&body);
    let unreadable = || {
        ctx.fail(
            "model_answer_unreadable",
            format!(
                "the model answered `{}`",
                content.chars().take(200).collect::<String>()
            ),
        )
    };
    let answer: Output = serde_json::from_str(content.trim()).map_err(|_| unreadable())?;
    if !matches!(answer.priority.as_str(), "low" | "medium" | "high")
        || answer.summary.chars().count() > 400
    {
        return Err(unreadable());
    }
    Ok(answer)
}

/// The text of a streamed chat completion: every chunk's `choices[0].delta.content`, in order.
fn streamed_content(body: &str) -> String {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| *data != "[DONE]")
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter_map(|chunk| {
            chunk
                .pointer("/choices/0/delta/content")?
                .as_str()
                .map(str::to_string)
        })
        .collect()
}
