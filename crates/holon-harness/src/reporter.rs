//! The one place the harness writes what a run says: the passes, the fault trials, explore,
//! bless, the upstreams and the measurement emit [`Event`]s, and the run's [`Reporter`] scrubs
//! each of the run's secrets once and writes it to the terminal. The files a run writes (the
//! trials' records that JUnit, the annotations and the `--report` page are made of, the
//! receipts) take their text through [`Reporter::clean`], the same scrub, so no output of the
//! kit holds a secret's value whatever path it took. A tidy test holds that nothing else in the
//! harness, nor in the crates below it, prints.
//!
//! A reporter is the run's (two runs in one process keep their secrets apart); before a run
//! knows its secrets (the checks, a usage error), [`Reporter::default`] has none to scrub.

use std::borrow::Cow;
use std::io::Write;
use std::sync::Arc;

use holon_config::secrets::Secrets;

/// What happened, as the author is told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// A run, a call or a file refused: `error: ...` on a line of its own.
    Error(String),
    /// Something the author should look at that fails nothing: `warning: ...`.
    Warning(String),
    /// A fact of the run: `note: ...`.
    Note(String),
    /// A sentence already worded with its own prefix (a shard's note, the function mode's
    /// version), on a line of its own.
    Line(String),
    /// After the trials, set apart by a blank line: what the server said of itself, its output,
    /// the notes on calls tried again alone, a shared cause, what bless wrote.
    Paragraph(String),
    /// Text laid out by its maker (the checks' report, the measurement, the spend), written as
    /// it is.
    Text(String),
    /// For the caller's program rather than the author's eyes, on standard output: the answer
    /// of `call`, `report`'s lines, GitHub's workflow commands.
    Output(String),
}

/// The run's sink: its secrets, and where each event goes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reporter {
    secrets: Arc<Secrets>,
}

impl Reporter {
    /// A reporter that scrubs `secrets` from everything it writes.
    pub(crate) fn new(secrets: Secrets) -> Reporter {
        Reporter {
            secrets: Arc::new(secrets),
        }
    }

    /// The run's secrets, for what must decide on them (bless never writes an answer that
    /// holds one).
    pub(crate) fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// `text` with every secret's value replaced by its marker: the one scrub of the harness,
    /// for the terminal and for every file a run writes.
    pub(crate) fn clean<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.secrets.scrub(text)
    }

    /// Writes `event` (scrubbed) where it goes. A reader that went away (`| head`) is not an
    /// error of the run's.
    pub(crate) fn emit(&self, event: Event) {
        let (text, out) = match &event {
            Event::Error(text) => (format!("error: {}\n", self.clean(text)), false),
            Event::Warning(text) => (format!("warning: {}\n", self.clean(text)), false),
            Event::Note(text) => (format!("note: {}\n", self.clean(text)), false),
            Event::Line(text) => (format!("{}\n", self.clean(text)), false),
            Event::Paragraph(text) => (format!("\n{}\n", self.clean(text)), false),
            Event::Text(text) => (self.clean(text).into_owned(), false),
            Event::Output(text) => (self.clean(text).into_owned(), true),
        };
        if out {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush());
        } else {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }

    /// [`Reporter::emit`] for each event, in order.
    pub(crate) fn emit_all(&self, events: impl IntoIterator<Item = Event>) {
        for event in events {
            self.emit(event);
        }
    }
}

/// Writes `event` with no secret to scrub: before a run knows its secrets, or for what holds
/// none (a usage error, the checks of a manifest).
pub(crate) fn say(event: Event) {
    Reporter::default().emit(event);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_is_scrubbed_once_whatever_its_kind() {
        let reporter = Reporter::new(Secrets::given([("KEY", "sk-a-long-key")]));
        assert_eq!(reporter.clean("a sk-a-long-key b"), "a <secret:KEY> b");
        assert!(matches!(reporter.clean("nothing"), Cow::Borrowed(_)));
        assert_eq!(Reporter::default().clean("sk-a-long-key"), "sk-a-long-key");
    }
}
