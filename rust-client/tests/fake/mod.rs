//! A fake authority on a tokio listener that grants ranges as the real one
//! does (a replay returns the committed range) and injects faults from a
//! script: lost replies, statuses, slow answers, refused connections.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rangeid_core::protocol::{Capacity, Grant, GrantReply, GrantRequest};
use rangeid_core::Range;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the fake does with one request.
#[derive(Clone, Debug)]
#[allow(dead_code)]
pub enum Fault {
    /// Commit the grant, then close the connection without answering.
    LoseReply,
    /// Answer this status, body and Retry-After (seconds), committing nothing.
    Answer(u16, &'static str, Option<u32>),
    /// Commit, wait, then answer.
    Slow(Duration),
    /// Close the connection at once, committing nothing.
    Refuse,
    /// Commit the grant and answer with this status and body instead (a
    /// WAF that replaces a committed grant).
    CommitThenAnswer(u16, &'static str),
}

#[derive(Default)]
pub struct State {
    next: u64,
    grants: HashMap<(String, String), Range>,
    pub script: VecDeque<Fault>,
    /// Tokens accepted; empty: any.
    pub tokens: Vec<String>,
    /// Every request seen: its token and body.
    pub seen: Vec<(String, GrantRequest)>,
    /// Every range committed.
    pub committed: Vec<Range>,
    /// IDs the namespace holds in all (None: no limit).
    pub capacity: Option<u64>,
}

pub struct Fake {
    pub url: String,
    pub state: Arc<Mutex<State>>,
}

impl Fake {
    pub async fn start() -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State {
            next: 1,
            ..State::default()
        }));
        let s = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(serve(conn, Arc::clone(&s)));
            }
        });
        Fake {
            url: format!("http://{addr}"),
            state,
        }
    }

    pub fn script(&self, faults: impl IntoIterator<Item = Fault>) {
        self.state.lock().unwrap().script.extend(faults);
    }

    pub fn seen(&self) -> usize {
        self.state.lock().unwrap().seen.len()
    }
}

async fn serve(mut conn: TcpStream, state: Arc<Mutex<State>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_end, content_length) = loop {
        let Ok(n) = conn.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..at]).to_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (at + 4, len);
        }
    };
    while buf.len() < head_end + content_length {
        let Ok(n) = conn.read(&mut chunk).await else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let token = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.eq_ignore_ascii_case("authorization"))
                .then(|| v.trim().trim_start_matches("Bearer ").to_owned())
        })
        .unwrap_or_default();
    let body = &buf[head_end..head_end + content_length];
    let Ok(request) = serde_json::from_slice::<GrantRequest>(body) else {
        return respond(
            &mut conn,
            400,
            r#"{"error":{"code":"invalid_request","message":"bad body"}}"#,
            None,
        )
        .await;
    };
    let (fault, allowed) = {
        let mut st = state.lock().unwrap();
        st.seen.push((token.clone(), request));
        let allowed = st.tokens.is_empty() || st.tokens.contains(&token);
        (st.script.pop_front(), allowed)
    };
    if !allowed {
        return respond(
            &mut conn,
            401,
            r#"{"error":{"code":"unauthenticated","message":"token refused"}}"#,
            None,
        )
        .await;
    }
    match fault {
        Some(Fault::Refuse) => {}
        Some(Fault::Answer(status, body, retry)) => respond(&mut conn, status, body, retry).await,
        Some(Fault::LoseReply) => {
            let _ = commit(&state, &request);
        }
        Some(Fault::CommitThenAnswer(status, body)) => {
            let _ = commit(&state, &request);
            respond(&mut conn, status, body, None).await;
        }
        Some(Fault::Slow(d)) => {
            let answer = commit(&state, &request);
            tokio::time::sleep(d).await;
            respond(&mut conn, answer.0, &answer.1, None).await;
        }
        None => {
            let answer = commit(&state, &request);
            respond(&mut conn, answer.0, &answer.1, None).await;
        }
    }
}

/// Grants the request (or replays its grant): the status and body.
fn commit(state: &Mutex<State>, r: &GrantRequest) -> (u16, String) {
    let mut st = state.lock().unwrap();
    let key = (
        r.incarnation.as_str().to_owned(),
        r.request_id.as_str().to_owned(),
    );
    let (range, replayed) = match st.grants.get(&key) {
        Some(range) => (*range, true),
        None => {
            let left = st.capacity.map(|c| c + 1 - st.next);
            if left.is_some_and(|l| l < r.count) {
                let l = left.unwrap_or(0);
                return (
                    409,
                    format!(
                        r#"{{"error":{{"code":"namespace_exhausted","message":"only {l} left","remaining":"{l}"}}}}"#
                    ),
                );
            }
            let range = Range::with_count(st.next, r.count).unwrap();
            st.next += r.count;
            st.grants.insert(key, range);
            st.committed.push(range);
            (range, false)
        }
    };
    let reply = GrantReply {
        grant: Grant {
            namespace: r.namespace,
            incarnation: r.incarnation,
            request_id: r.request_id,
            range,
        },
        replayed,
        capacity: Capacity {
            max_count: None,
            remaining: st.capacity.map(|c| c + 1 - st.next),
        },
    };
    (
        200,
        String::from_utf8(rangeid_core::wire::to_json(&reply)).unwrap(),
    )
}

async fn respond(conn: &mut TcpStream, status: u16, body: &str, retry_after: Option<u32>) {
    let retry = retry_after
        .map(|s| format!("retry-after: {s}\r\n"))
        .unwrap_or_default();
    let kind = if body.starts_with('{') {
        "application/json"
    } else {
        "text/html"
    };
    let text = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n{retry}connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = conn.write_all(text.as_bytes()).await;
    let _ = conn.shutdown().await;
}
