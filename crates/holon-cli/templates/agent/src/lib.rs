//! The {{name}} agent: counts the words of a text and finds the longest.

use holon_kit::{Ctx, Failure};
use serde::{Deserialize, Serialize};

/// The call's arguments, as `interface.input` in holon.yaml describes them.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The text to read.
    pub text: String,
    /// Words shorter than this are not counted.
    #[serde(default = "default_min_length")]
    pub min_length: usize,
}

fn default_min_length() -> usize {
    1
}

/// The answer, as `interface.output` describes it.
#[derive(Debug, Serialize)]
pub struct Output {
    /// How many words of at least `min_length` characters.
    pub words: usize,
    /// The longest such word, the first one on a tie.
    pub longest: String,
}

/// The agent function: the same code runs in the tests and behind the MCP server.
pub async fn run(input: Input, ctx: Ctx) -> Result<Output, Failure> {
    if input.text.trim().is_empty() {
        return Err(ctx.fail("empty_text", "the text is empty"));
    }
    let words: Vec<&str> = input
        .text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= input.min_length)
        .collect();
    let mut longest = "";
    for word in &words {
        if word.chars().count() > longest.chars().count() {
            longest = word;
        }
    }
    if words.is_empty() {
        return Err(ctx.fail("no_words", format!("no word has {} characters or more", input.min_length)));
    }
    Ok(Output { words: words.len(), longest: longest.to_string() })
}
