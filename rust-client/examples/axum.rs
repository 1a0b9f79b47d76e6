//! An axum service that takes one ID per request.
//!
//! ```sh
//! RANGEID_URL=http://127.0.0.1:8787 RANGEID_TOKEN=... RANGEID_NAMESPACE=orders \
//!   cargo run -p rangeid-client --example axum
//! curl -X POST http://127.0.0.1:3000/orders   # {"id":"1001"}
//! ```

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use rangeid_client::{Generator, Options};

/// Takes an ID for the new order; waits for a range only when none is on
/// hand (up to the generator's deadline), else answers 503 with the reason.
async fn create_order(State(ids): State<Generator>) -> Result<String, (StatusCode, String)> {
    let id = ids
        .next_id_async()
        .await
        .map_err(|e| (StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    // IDs cross JSON as decimal strings: exact in every language.
    Ok(format!("{{\"id\":\"{id}\"}}"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let env = |k: &str| std::env::var(k).map_err(|_| format!("set {k}"));
    let ids = Generator::connect(Options::new(
        env("RANGEID_URL")?,
        env("RANGEID_NAMESPACE")?,
        env("RANGEID_TOKEN")?,
    ))
    .await?;
    let app = Router::new()
        .route("/orders", post(create_order))
        .with_state(ids.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    let closed = ids.close();
    eprintln!("closed; {} unused IDs abandoned", closed.abandoned);
    Ok(())
}
