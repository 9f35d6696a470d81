//! An npm registry on loopback that holds the packages `.ci/dist` built and sends npm to the
//! public registry for everything else (an HTTP redirect: npm fetches those itself). With
//! `npm_config_registry` pointing at it, `npx holon-test` and an agent's `npm install` resolve
//! `holon-test` as they will once it is published, from the built files. It runs on a runtime
//! of its own and stops when dropped.

use std::collections::HashMap;
use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::Digest;

/// Where everything else is.
const PUBLIC: &str = "https://registry.npmjs.org";

/// A running registry.
pub struct Registry {
    /// Its URL, for `npm_config_registry`.
    pub url: String,
    runtime: Option<tokio::runtime::Runtime>,
}

/// What the registry answers for a path.
enum Entry {
    Json(Value),
    Tarball(Bytes),
}

impl Registry {
    /// Serves these npm tarballs, each under the name and version of its `package.json`.
    pub fn start(tarballs: &[&Path]) -> Registry {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime for the registry");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let mut entries = HashMap::new();
        for tarball in tarballs {
            let manifest = super::dist::tarball_json(tarball, "package.json");
            let name = manifest["name"].as_str().expect("a name").to_string();
            let version = manifest["version"].as_str().expect("a version").to_string();
            let bytes = std::fs::read(tarball).expect("the tarball");
            let file = format!("/-/{}-{version}.tgz", name.replace('/', "-"));
            let integrity = format!(
                "sha512-{}",
                base64::engine::general_purpose::STANDARD.encode(sha2::Sha512::digest(&bytes))
            );
            let mut published = manifest.clone();
            published["dist"] =
                json!({ "tarball": format!("{url}{file}"), "integrity": integrity });
            let packument = json!({
                "name": name,
                "dist-tags": { "latest": version },
                "versions": { version: published },
            });
            // npm asks for a scoped name with its slash escaped.
            entries.insert(
                format!("/{}", name.replace('/', "%2f")),
                Entry::Json(packument),
            );
            entries.insert(file, Entry::Tarball(Bytes::from(bytes)));
        }
        let entries = Arc::new(entries);
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let entries = entries.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| {
                        let entries = entries.clone();
                        async move { Ok::<_, Infallible>(answer(&req, &entries)) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Registry {
            url,
            runtime: Some(runtime),
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn answer(req: &Request<Incoming>, entries: &HashMap<String, Entry>) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    let response = Response::builder();
    let built = match entries.get(&path.to_ascii_lowercase()) {
        Some(Entry::Json(value)) => response
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(value.to_string()))),
        Some(Entry::Tarball(bytes)) => response
            .header("content-type", "application/octet-stream")
            .body(Full::new(bytes.clone())),
        // The other platforms' packages exist only once published: an optional dependency
        // npm cannot find is skipped.
        None if path.starts_with("/@holon-kit%2f") || path.starts_with("/@holon-kit%2F") => {
            response
                .status(StatusCode::NOT_FOUND)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(r#"{"error":"Not found"}"#)))
        }
        None => {
            let query = req
                .uri()
                .query()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            response
                .status(StatusCode::FOUND)
                .header("location", format!("{PUBLIC}{path}{query}"))
                .body(Full::new(Bytes::new()))
        }
    };
    built.unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}
