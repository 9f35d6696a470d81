//! Why a server or function-mode command did not start, when the cause is the version of the
//! runtime it runs on: Node below what `package.json`'s `engines.node` asks for (the
//! TypeScript template runs `.ts` files, which Node 22.18 and later strip of their types), or
//! Python below what `pyproject.toml`'s `requires-python` says. One line, naming both.

use std::path::Path;
use std::process::{Command, Stdio};

/// The runtime of `command` run in `dir` is older than the project asks: which one was found,
/// and which is needed, in one line. `None` when it is not, or cannot be told.
pub(crate) fn too_old(command: &str, dir: &Path) -> Option<String> {
    let program = program_of(command)?;
    let name = Path::new(program).file_name()?.to_str()?;
    let (language, file, field, need) = if name.starts_with("node") {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let package: serde_json::Value = serde_json::from_str(&text).ok()?;
        let need = package.pointer("/engines/node")?.as_str()?.to_string();
        ("Node", "package.json", "engines.node", need)
    } else if name.starts_with("python") {
        let text = std::fs::read_to_string(dir.join("pyproject.toml")).ok()?;
        let need = (text.lines())
            .find_map(|l| l.trim().strip_prefix("requires-python"))?
            .trim_start_matches([' ', '='])
            .trim()
            .trim_matches('"')
            .to_string();
        ("Python", "pyproject.toml", "requires-python", need)
    } else {
        return None;
    };
    let least = numbers(need.split(">=").nth(1)?)?;
    let out = Command::new(program)
        .arg("--version")
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    let found = said.split_whitespace().find_map(|w| {
        let w = w.trim_start_matches('v');
        numbers(w).map(|n| (w.to_string(), n))
    })?;
    if found.1 >= least {
        return None;
    }
    let wanted: Vec<String> = least.iter().map(u64::to_string).collect();
    Some(format!(
        "`{program}` is {language} {}, and {file}'s `{field}` asks for {need}: install {language} {} or later, or put it first on PATH",
        found.0,
        wanted.join(".")
    ))
}

/// The program a command line runs: its first word past `uv run`, `exec` and variables set
/// before it.
fn program_of(command: &str) -> Option<&str> {
    let mut words = command.split_whitespace().peekable();
    while let Some(word) = words.next() {
        match word {
            "exec" | "env" => continue,
            "uv" if words.peek() == Some(&"run") => {
                words.next();
            }
            w if w.contains('=') && !w.starts_with('-') => continue,
            w => return Some(w),
        }
    }
    None
}

/// `22.18.0` as `[22, 18, 0]`, padded to three; `None` when it does not start with a number.
fn numbers(text: &str) -> Option<Vec<u64>> {
    let mut parts: Vec<u64> = (text.trim().split('.'))
        .map_while(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    parts.resize(3, 0);
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_programs_are_read_as_they_are_written() {
        assert_eq!(numbers("22.18"), Some(vec![22, 18, 0]));
        assert_eq!(numbers("20.11.1"), Some(vec![20, 11, 1]));
        assert_eq!(numbers("3.11.9rc1"), Some(vec![3, 11, 9]));
        assert_eq!(numbers("node"), None);
        assert_eq!(program_of("node agent.ts --function"), Some("node"));
        assert_eq!(program_of("uv run python holon.py"), Some("python"));
        assert_eq!(program_of("FOO=1 exec python3 x.py"), Some("python3"));
    }
}
