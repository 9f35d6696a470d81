//! The CSV profile agent: takes a CSV file as a `holon://files/` handle and returns its row
//! count, its columns and the missing values in each.

use holon_kit::{Ctx, Failure};
use serde::{Deserialize, Serialize};

/// The call's arguments.
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The handle of the uploaded file.
    pub file: String,
    /// The field separator.
    #[serde(default = "default_delimiter")]
    pub delimiter: String,
}

fn default_delimiter() -> String {
    ",".to_string()
}

/// The answer.
#[derive(Debug, Serialize)]
pub struct Output {
    /// Data rows, the header not counted.
    pub rows: usize,
    /// The columns in header order.
    pub columns: Vec<Column>,
}

/// One column.
#[derive(Debug, Serialize)]
pub struct Column {
    /// Its header.
    pub name: String,
    /// Rows whose cell is empty or only whitespace.
    pub missing: usize,
}

/// The agent function.
pub async fn run(input: Input, ctx: Ctx) -> Result<Output, Failure> {
    let bytes = ctx
        .download(&input.file)
        .await
        .map_err(|e| ctx.fail("file_unreadable", e.to_string()))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ctx.fail("empty_csv", "the file is empty"));
    }
    let delimiter = input.delimiter.as_bytes().first().copied().unwrap_or(b',');
    let not_csv = |e: csv::Error| ctx.fail("not_csv", e.to_string());
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_reader(bytes.as_slice());
    let mut columns: Vec<Column> = reader
        .headers()
        .map_err(not_csv)?
        .iter()
        .map(|name| Column {
            name: name.to_string(),
            missing: 0,
        })
        .collect();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.map_err(not_csv)?;
        rows += 1;
        for (column, cell) in columns.iter_mut().zip(record.iter()) {
            if cell.trim().is_empty() {
                column.missing += 1;
            }
        }
    }
    Ok(Output { rows, columns })
}
