//! The word statistics agent from the guides: characters, words, frequent words and reading
//! time of a text; fails with the declared `empty_text` on an empty text.

use std::collections::HashMap;

use holon_kit::{Ctx, Failure};
use serde::{Deserialize, Serialize};

/// The call's arguments, as `interface.input` describes them.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The text to measure.
    pub text: String,
    /// How many frequent words to return.
    #[serde(default = "default_top")]
    pub top: usize,
    /// Reading speed used for the reading time.
    #[serde(default = "default_wpm")]
    pub words_per_minute: u32,
}

fn default_top() -> usize {
    10
}

fn default_wpm() -> u32 {
    230
}

/// The answer, as `interface.output` describes it.
#[derive(Debug, Serialize, PartialEq)]
pub struct Output {
    /// Characters in the text.
    pub characters: usize,
    /// Words in the text.
    pub words: usize,
    /// The most frequent words, most frequent first, ties in alphabetical order.
    pub top_words: Vec<WordCount>,
    /// Reading time in whole seconds, rounded up.
    pub reading_time_s: u64,
}

/// One frequent word.
#[derive(Debug, Serialize, PartialEq)]
pub struct WordCount {
    /// The word, lowercased.
    pub word: String,
    /// How often it occurs.
    pub count: usize,
}

/// The agent function.
pub async fn run(input: Input, ctx: Ctx) -> Result<Output, Failure> {
    if input.text.trim().is_empty() {
        return Err(ctx.fail("empty_text", "the text is empty or only whitespace"));
    }
    let words: Vec<String> = input
        .text
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for w in &words {
        *counts.entry(w).or_default() += 1;
    }
    let mut top: Vec<(&str, usize)> = counts.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    top.truncate(input.top);
    let wpm = u64::from(input.words_per_minute.max(1));
    Ok(Output {
        characters: input.text.chars().count(),
        words: words.len(),
        top_words: top
            .into_iter()
            .map(|(word, count)| WordCount {
                word: word.to_string(),
                count,
            })
            .collect(),
        reading_time_s: (words.len() as u64 * 60).div_ceil(wpm),
    })
}
