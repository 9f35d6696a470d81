//! The agent function behind one erased interface, so the server and the harness call it alike.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Ctx, Failure, failure::FailureKind};

/// A boxed future that returns the output as JSON or the failure.
pub type AgentFuture = Pin<Box<dyn Future<Output = Result<Value, Failure>> + Send>>;

/// An agent function with its input and output types erased to JSON.
pub trait Agent: Send + Sync + 'static {
    /// Runs the function on JSON arguments.
    fn call(&self, input: Value, ctx: Ctx) -> AgentFuture;
}

/// Wraps `async fn run(input: I, ctx: Ctx) -> Result<O, Failure>` as an [`Agent`]. `I` and
/// `O` may be your own serde types or `serde_json::Value`.
pub fn agent<F, I, O, Fut>(run: F) -> Arc<dyn Agent>
where
    F: Fn(I, Ctx) -> Fut + Send + Sync + 'static,
    I: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
    Fut: Future<Output = Result<O, Failure>> + Send + 'static,
{
    Arc::new(FnAgent {
        run,
        _types: std::marker::PhantomData::<fn(I) -> O>,
    })
}

struct FnAgent<F, I, O> {
    run: F,
    _types: std::marker::PhantomData<fn(I) -> O>,
}

impl<F, I, O, Fut> Agent for FnAgent<F, I, O>
where
    F: Fn(I, Ctx) -> Fut + Send + Sync + 'static,
    I: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
    Fut: Future<Output = Result<O, Failure>> + Send + 'static,
{
    fn call(&self, input: Value, ctx: Ctx) -> AgentFuture {
        let input: I = match serde_json::from_value(input) {
            Ok(i) => i,
            Err(e) => {
                let failure = Failure {
                    kind: FailureKind::InputType {
                        message: format!("the arguments do not fit the function's input type: {e}"),
                    },
                };
                return Box::pin(async move { Err(failure) });
            }
        };
        let fut = (self.run)(input, ctx);
        Box::pin(async move {
            let output = fut.await?;
            serde_json::to_value(output).map_err(|e| {
                Failure::undeclared(format!("the output does not serialize to JSON: {e}"))
            })
        })
    }
}
