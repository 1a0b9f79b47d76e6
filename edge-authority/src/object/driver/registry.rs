//! The registry object's driver (wasm32 only): the list of namespaces and
//! their pushed summaries ([`registry`] decides).

use worker::{durable_object, DurableObject, Env, Request, Response, State};

use crate::object::registry::{self, RegistryRequest};
use crate::object::store::{self, StoreError};
use crate::shared::response::ApiError;
use crate::shared::runtime::{now_ms, object_body, reply_or_unavailable, to_response, DoSql};

/// The list of namespaces and their pushed summaries.
#[durable_object(fetch)]
pub struct Registry {
    sql: DoSql,
    schema: Result<(), StoreError>,
}

impl DurableObject for Registry {
    fn new(state: State, _env: Env) -> Self {
        let sql = DoSql::new(&state);
        let schema = store::migrate(&sql, store::REGISTRY_MIGRATIONS);
        Self { sql, schema }
    }

    async fn fetch(&self, mut req: Request) -> worker::Result<Response> {
        let reply = match (&self.schema, object_body(&mut req).await) {
            (Err(e), _) => ApiError::unavailable(format!("storage not ready: {e}")).reply(),
            (_, Err(reply)) => reply,
            (Ok(()), Ok(bytes)) => match serde_json::from_slice::<RegistryRequest>(&bytes) {
                Err(e) => ApiError::unavailable(format!("bad registry request: {e}")).reply(),
                Ok(request) => registry::handle(&self.sql, &request, now_ms()),
            },
        };
        reply_or_unavailable(to_response(reply))
    }
}
