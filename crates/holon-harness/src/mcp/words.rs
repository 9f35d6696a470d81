//! The MCP client's errors in words: an HTTP error status read back as the server's answer (its
//! status, reason phrase and a line of its body), a page quoted by its first line, and every other
//! failure said without rmcp's Rust type names.

use rmcp::service::ServiceError;

use holon_core::gateway::Answer;

/// The answer of a call the server answered with an HTTP error status (413, 429, 5xx...), with
/// the status's reason phrase and the start of its body. rmcp keeps the status of a 429 and a
/// 5xx (no body) as `HttpStatusError`; any other error status it reports only in words,
/// `HTTP 413 Payload Too Large: <body>`, which is read back here.
pub(crate) fn http_status(error: &ServiceError) -> Option<Answer> {
    use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpError};
    let with_status = |status: u16| Answer::HttpStatus {
        status,
        reason: reason_of(status),
        body: String::new(),
    };
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = source {
        match current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::HttpStatus(e)) => return Some(with_status(e.status)),
            Some(StreamableHttpError::UnexpectedServerResponse(text)) => {
                if let Some(answer) = http_answer(text) {
                    return Some(answer);
                }
            }
            _ => {}
        }
        if let Some(e) = current.downcast_ref::<HttpStatusError>() {
            return Some(with_status(e.status));
        }
        source = current.source();
    }
    None
}

/// `HTTP 413 Payload Too Large: <body>`, as rmcp words an error status it kept no type for.
fn http_answer(text: &str) -> Option<Answer> {
    let rest = text.strip_prefix("HTTP ")?;
    let digits = rest
        .get(..3)
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
    let status: u16 = digits.parse().ok()?;
    let after = rest.get(3..).unwrap_or_default();
    let (phrase, body) = after.split_once(": ").unwrap_or((after, ""));
    let phrase = phrase.trim();
    let reason = if phrase.is_empty() || phrase.starts_with('<') {
        reason_of(status)
    } else {
        phrase.to_string()
    };
    Some(Answer::HttpStatus {
        status,
        reason,
        body: excerpt(body),
    })
}

/// The reason phrase HTTP gives a status (`Too Many Requests`), or nothing for one it names not.
pub(crate) fn reason_of(status: u16) -> String {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or_default()
        .to_string()
}

/// Longest body excerpt kept in an answer.
const EXCERPT: usize = 120;

/// The first line of text of a body, an HTML page's included (its tags and head dropped, a few
/// entities decoded), cut at [`EXCERPT`] characters: what a report can quote of an error page.
pub(crate) fn excerpt(body: &str) -> String {
    let body = match (body.find("<head"), body.find("</head>")) {
        (Some(from), Some(to)) if from < to => {
            format!(
                "{}{}",
                body.get(..from).unwrap_or_default(),
                body.get(to..).unwrap_or_default()
            )
        }
        _ => body.to_string(),
    };
    let mut text = String::with_capacity(body.len());
    let mut rest = body.as_str();
    while let Some(open) = rest.find('<') {
        text.push_str(rest.get(..open).unwrap_or_default());
        let tag = rest.get(open..).unwrap_or_default();
        let close = tag.find('>').map_or(tag.len(), |c| c + 1);
        let name = tag
            .get(1..close)
            .unwrap_or_default()
            .trim_start_matches('/');
        let block = [
            "br", "p", "div", "pre", "h1", "h2", "h3", "li", "tr", "title", "body",
        ];
        if block
            .iter()
            .any(|b| name.to_ascii_lowercase().starts_with(b))
        {
            text.push('\n');
        }
        rest = tag.get(close..).unwrap_or_default();
    }
    text.push_str(rest);
    let text = [
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text, |t, (entity, c)| t.replace(entity, c));
    let line = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    if line.chars().count() > EXCERPT {
        let cut: String = line.chars().take(EXCERPT - 3).collect();
        format!("{cut}...")
    } else {
        line
    }
}

/// What went wrong with a request, in words: rmcp's own texts name its Rust types (`Transport
/// [rmcp::transport::worker::WorkerTransport<...>] error`), which a report must not show.
pub(crate) fn service_error(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(e) => format!("a JSON-RPC error ({}: {})", e.code.0, e.message),
        ServiceError::TransportSend(e) => chain(&*e.error),
        ServiceError::TransportClosed => "the connection to the server is closed".to_string(),
        ServiceError::UnexpectedResponse => {
            "the server answered with something other than the request's result".to_string()
        }
        other => chain(other),
    }
}

/// An error and its sources, in one line, each said once and in words: the HTTP client's
/// error is followed to its cause (a refused connection), and an rmcp text that names a Rust
/// type is left out for its source.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(error);
    while let Some(e) = current {
        current = e.source();
        let text = match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            // Its own text is only the client's, whose sources it does not give.
            Some(StreamableHttpError::Client(client)) => {
                current = Some(client);
                continue;
            }
            Some(StreamableHttpError::UnexpectedContentType(kind)) => format!(
                "the server answered with content type `{}`, neither JSON nor an event stream",
                kind.as_deref().unwrap_or("none")
            ),
            _ => e.to_string(),
        };
        if text.contains("rmcp::") || parts.last().is_some_and(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    match parts.join(": ") {
        joined if joined.is_empty() => "the MCP client failed".to_string(),
        joined => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::DynamicTransportError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;

    /// A send error as rmcp's worker reports it, named by the worker's Rust type.
    fn sent(error: StreamableHttpError<reqwest::Error>) -> ServiceError {
        ServiceError::TransportSend(DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>",
            std::any::TypeId::of::<()>(),
            Box::new(error),
        ))
    }

    #[test]
    fn an_error_status_in_words_is_read_back_with_a_line_of_its_page() {
        // express's page for a body past its limit, as rmcp words the status it kept no type for.
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>PayloadTooLargeError: request entity too large<br> &nbsp; &nbsp;at readStream (/app/node_modules/raw-body/index.js:163:17)</pre>\n</body>\n</html>\n";
        let error = sent(StreamableHttpError::UnexpectedServerResponse(
            format!("HTTP 413 Payload Too Large: {page}").into(),
        ));
        let Some(Answer::HttpStatus {
            status,
            reason,
            body,
        }) = http_status(&error)
        else {
            panic!("not read as an HTTP status")
        };
        assert_eq!((status, reason.as_str()), (413, "Payload Too Large"));
        assert_eq!(body, "PayloadTooLargeError: request entity too large");
        // A status HTTP has no phrase for, a body that is plain text, and a long one.
        let Some(Answer::HttpStatus { reason, body, .. }) =
            http_answer("HTTP 499 <unknown status code>: upstream went away")
        else {
            panic!("not read as an HTTP status")
        };
        assert_eq!((reason.as_str(), body.as_str()), ("", "upstream went away"));
        let long = excerpt(&"x".repeat(500));
        assert_eq!(long.chars().count(), EXCERPT);
        assert!(long.ends_with("..."));
        // Not a status at all.
        assert!(http_answer("unexpected end of stream").is_none());
        assert!(http_answer("HTTP 4xx: no").is_none());
    }

    #[test]
    fn a_transport_error_is_said_without_rust_type_names() {
        let ended = sent(StreamableHttpError::UnexpectedEndOfStream);
        // rmcp's own words name the worker's type.
        assert!(ended.to_string().contains("WorkerTransport<"), "{ended}");
        for (error, said) in [
            (ended, "unexpected end of stream"),
            (
                sent(StreamableHttpError::UnexpectedContentType(Some(
                    "text/html".into(),
                ))),
                "the server answered with content type `text/html`, neither JSON nor an event stream",
            ),
            (
                ServiceError::TransportClosed,
                "the connection to the server is closed",
            ),
        ] {
            assert_eq!(service_error(&error), said);
        }
    }
}
