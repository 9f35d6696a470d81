//! Reading the manifest file: a regular file only, never more than the size limit plus one
//! byte, and never opened in a way that blocks.

use std::io::Read;
use std::path::Path;

/// Largest manifest file read at all.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Why the manifest file could not be read.
pub enum ReadError {
    /// A folder, FIFO, socket or device where the manifest should be (`file-not-regular`).
    NotRegular(String),
    /// Missing, unreadable or too large (`file-unreadable`).
    Unreadable(String),
}

/// The bytes of the regular file at `path` (symlinks followed), at most `limit` of them.
///
/// The file's kind is checked before it is opened, and again on the open handle, since the
/// path can change in between; it is opened non-blocking, so a FIFO put in its place cannot
/// stall the open. Reading stops one byte past `limit`, whatever the metadata said (a file that
/// grows, or a special file that reports size 0, such as `/dev/zero`).
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let shown = path.display();
    let unreadable = |e: std::io::Error| {
        ReadError::Unreadable(format!(
            "cannot read `{shown}`: {}",
            e.to_string().to_lowercase()
        ))
    };
    let metadata = std::fs::metadata(path).map_err(unreadable)?;
    not_regular(path, &metadata)?;
    if metadata.len() > limit {
        return Err(too_large(metadata.len(), limit));
    }
    let file = open(path).map_err(unreadable)?;
    not_regular(path, &file.metadata().map_err(unreadable)?)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::Unreadable(format!(
            "the file is over {limit} bytes; a manifest is at most {limit} bytes"
        )));
    }
    Ok(bytes)
}

fn too_large(size: u64, limit: u64) -> ReadError {
    ReadError::Unreadable(format!(
        "the file is {size} bytes; a manifest is at most {limit} bytes"
    ))
}

#[cfg(unix)]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK makes opening a FIFO return at once; on a regular file it changes nothing.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

fn not_regular(path: &Path, metadata: &std::fs::Metadata) -> Result<(), ReadError> {
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a folder"
    } else {
        special_kind(&kind)
    };
    Err(ReadError::NotRegular(format!(
        "`{}` is {what}, not a regular file (a manifest is a file of YAML text)",
        path.display()
    )))
}

#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_kind: &std::fs::FileType) -> &'static str {
    "a special file"
}
