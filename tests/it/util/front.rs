//! A server in front of an agent, as a deployment puts one there: on a free loopback port, plain
//! or TLS (with a self-signed certificate made here), it answers every request itself (a page,
//! a status) or passes it to the agent, only when it carries the token it requires.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// What the front server does with a request.
#[derive(Clone)]
pub enum Behaviour {
    /// Passes it to the agent at this URL when its `Authorization` is this, else answers 401.
    Require {
        /// The agent's `/mcp` URL.
        upstream: String,
        /// The whole `Authorization` value required, e.g. `Bearer T`.
        authorization: String,
    },
    /// Passes every request to the agent at this URL.
    Pass(String),
    /// Answers every request with this status, content type and body.
    Answer(u16, &'static str, &'static str),
}

/// A front server running on the test's runtime until dropped.
pub struct Front {
    /// Its `/mcp` URL (`https://localhost:PORT/mcp` with TLS).
    pub url: String,
    /// With TLS, the self-signed certificate, in PEM, for `--ca-cert`.
    pub certificate: Option<String>,
    /// Requests it refused for a missing or wrong token.
    pub refused: Arc<AtomicUsize>,
    /// Requests it received, whatever it did with them.
    pub requests: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Front {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Front {
    /// Starts one, plain HTTP, on a free port.
    pub async fn start(behaviour: Behaviour) -> Front {
        Front::serve(behaviour, false).await
    }

    /// Starts one over TLS, its certificate self-signed for `localhost` and `127.0.0.1`.
    pub async fn start_tls(behaviour: Behaviour) -> Front {
        Front::serve(behaviour, true).await
    }

    async fn serve(behaviour: Behaviour, tls: bool) -> Front {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let port = listener.local_addr().unwrap().port();
        let (acceptor, certificate) = if tls {
            let (acceptor, pem) = tls_acceptor();
            (Some(acceptor), Some(pem))
        } else {
            (None, None)
        };
        let (refused, requests) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        super::agent::tls_provider();
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let state = (behaviour, client, refused.clone(), requests.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (state, acceptor) = (state.clone(), acceptor.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let state = state.clone();
                        async move { Ok::<_, std::convert::Infallible>(answer(&state, request).await) }
                    });
                    let http = hyper::server::conn::http1::Builder::new();
                    match acceptor {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                let _ = http.serve_connection(TokioIo::new(stream), service).await;
                            }
                        }
                        None => {
                            let _ = http.serve_connection(TokioIo::new(stream), service).await;
                        }
                    }
                });
            }
        });
        let host = if tls { "localhost" } else { "127.0.0.1" };
        let scheme = if tls { "https" } else { "http" };
        Front {
            url: format!("{scheme}://{host}:{port}/mcp"),
            certificate,
            refused,
            requests,
            task,
        }
    }
}

type State = (
    Behaviour,
    reqwest::Client,
    Arc<AtomicUsize>,
    Arc<AtomicUsize>,
);

async fn answer(state: &State, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let (behaviour, client, refused, requests) = state;
    requests.fetch_add(1, Ordering::SeqCst);
    let upstream = match behaviour {
        Behaviour::Answer(status, kind, body) => return respond(*status, kind, body.as_bytes()),
        Behaviour::Pass(upstream) => upstream,
        Behaviour::Require {
            upstream,
            authorization,
        } => {
            let given = request.headers().get("authorization");
            if given.and_then(|v| v.to_str().ok()) != Some(authorization.as_str()) {
                refused.fetch_add(1, Ordering::SeqCst);
                return respond(401, "text/plain", b"unauthorized");
            }
            upstream
        }
    };
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut forward = client.request(parts.method, upstream.as_str()).body(body);
    for (name, value) in &parts.headers {
        if name != "host" && name != "authorization" {
            forward = forward.header(name, value);
        }
    }
    match forward.send().await {
        Ok(reply) => {
            let status = reply.status().as_u16();
            let kind = reply
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/json")
                .to_string();
            let bytes = reply.bytes().await.unwrap_or_default();
            let mut response = respond(status, "application/json", &bytes);
            response
                .headers_mut()
                .insert("content-type", kind.parse().unwrap());
            response
        }
        Err(e) => respond(502, "text/plain", e.to_string().as_bytes()),
    }
}

fn respond(status: u16, kind: &str, body: &[u8]) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", kind)
        .body(Full::new(Bytes::copy_from_slice(body)))
        .unwrap()
}

/// A TLS acceptor with a certificate self-signed here for `localhost` and `127.0.0.1`, and
/// that certificate in PEM.
fn tls_acceptor() -> (tokio_rustls::TlsAcceptor, String) {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(names).expect("a self-signed certificate");
    let key = tokio_rustls::rustls::pki_types::PrivateKeyDer::try_from(signing_key.serialize_der())
        .expect("the key in DER");
    // ring, as the kit's clients use (rustls deprecates it for lacking post-quantum key
    // exchange; a loopback test server needs none).
    #[allow(deprecated)]
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .expect("a server configuration");
    (
        tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        cert.pem(),
    )
}
