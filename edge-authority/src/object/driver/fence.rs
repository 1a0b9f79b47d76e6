//! The fence object's driver (wasm32 only): the witness of one
//! namespace's fence, one mark that only rises ([`object::witness`]
//! decides). In the test build, the switches that make it misbehave.

#[cfg(feature = "test-switches")]
use std::cell::Cell;

#[cfg(feature = "test-switches")]
use rangeid_core::wire::DecBound;
use worker::{durable_object, DurableObject, Env, Request, Response, State};

use crate::object::store::{self, StoreError};
use crate::object::witness::{self, FenceRequest};
use crate::shared::response::ApiError;
#[cfg(feature = "test-switches")]
use crate::shared::runtime::env_text;
use crate::shared::runtime::{object_body, reply_or_unavailable, to_response, DoSql};

/// The witness of one namespace's fence: one mark that only rises.
#[durable_object(fetch)]
pub struct Fence {
    sql: DoSql,
    schema: Result<(), StoreError>,
    /// How this witness misbehaves on purpose (test build only).
    #[cfg(feature = "test-switches")]
    switches: crate::shared::test_switches::Witness,
    /// How many more raises this instance acknowledges (test build only).
    #[cfg(feature = "test-switches")]
    raises_left: Cell<Option<u64>>,
}

impl DurableObject for Fence {
    fn new(state: State, _env: Env) -> Self {
        let sql = DoSql::new(&state);
        let schema = store::migrate(&sql, store::FENCE_MIGRATIONS);
        #[cfg(feature = "test-switches")]
        let switches =
            crate::shared::test_switches::Witness::from_env(|name| env_text(&_env, name));
        Self {
            sql,
            schema,
            #[cfg(feature = "test-switches")]
            switches,
            #[cfg(feature = "test-switches")]
            raises_left: Cell::new(switches.raises_left),
        }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        #[cfg(feature = "test-switches")]
        if self.switches.down {
            return Err(worker::Error::RustError(
                "witness down (test switch)".into(),
            ));
        }
        let reply = match (&self.schema, object_body(&mut req).await) {
            (Err(e), _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(reply)) => reply,
            (Ok(()), Ok(bytes)) => match serde_json::from_slice::<FenceRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad fence request: {e}")).reply(),
                Ok(request) => {
                    #[cfg(feature = "test-switches")]
                    let request = match self.test_switched(request) {
                        Some(r) => r,
                        None => {
                            return Err(worker::Error::RustError(
                                "witness down after its raises (test switch)".into(),
                            ))
                        }
                    };
                    witness::handle(&self.sql, &request)
                }
            },
        };
        reply_or_unavailable(to_response(reply))
    }
}

#[cfg(feature = "test-switches")]
impl Fence {
    /// `request` as the test switches change it, or `None` when this
    /// witness has acknowledged all the raises it was allowed.
    fn test_switched(&self, mut request: FenceRequest) -> Option<FenceRequest> {
        if !matches!(request, FenceRequest::Raise { .. }) {
            return Some(request);
        }
        if self.switches.marks_all {
            request = FenceRequest::Raise {
                to: DecBound(1 << 64),
            };
        }
        match self.raises_left.get() {
            Some(0) => return None,
            Some(n) => self.raises_left.set(Some(n - 1)),
            None => {}
        }
        Some(request)
    }
}
