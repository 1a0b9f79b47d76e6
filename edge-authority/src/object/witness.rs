//! The fence object: the witness of one namespace's restore fence. It keeps
//! one high-water mark, durably, in its own storage (another Durable
//! Object, so a rollback of the namespace object leaves it as it was). The
//! mark only rises ([`rangeid_core::fence::witness_raise`]); an answer
//! leaves only once the write is durable (the output gate).

use rangeid_core::fence::{witness_raise, Witnessed};
use rangeid_core::wire::DecBound;
use serde::{Deserialize, Serialize};

use super::unavailable;
use crate::object::store::{pad, text, unpad, Sql, StoreError};
use crate::shared::response::HttpReply;

/// One request to a fence object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum FenceRequest {
    /// Read the mark.
    Get,
    /// Raise the mark to at least `to`.
    Raise {
        /// The mark asked for.
        to: DecBound,
    },
}

/// The fence object's answer: `{"mark":"...","was":"..."}`, the mark now
/// stored (0 when none was ever raised) and the mark stored before this
/// request, so the namespace object can tell that its witness had gone back
/// even from a raise's answer. A witness of an older build sends no `was`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FenceMark {
    /// The stored mark.
    pub mark: DecBound,
    /// The mark stored before this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<DecBound>,
}

impl FenceMark {
    /// What the namespace object's fence makes of this answer.
    pub fn witnessed(&self) -> Witnessed {
        Witnessed {
            mark: self.mark.0,
            was: self.was.map(|w| w.0),
        }
    }
}

fn stored(sql: &impl Sql) -> Result<u128, StoreError> {
    let rows = sql.exec("SELECT mark FROM fence WHERE id = 1", &[])?;
    rows.first().map_or(Ok(0), |r| unpad(text(r, 0)?))
}

/// Handles one request for a fence object.
pub fn handle(sql: &impl Sql, request: &FenceRequest) -> HttpReply {
    let result = match request {
        FenceRequest::Get => stored(sql).map(|mark| (mark, mark)),
        FenceRequest::Raise { to } => stored(sql).and_then(|was| {
            let raised = witness_raise(was, to.0).min(1 << 64);
            if raised != was {
                sql.exec(
                    "INSERT INTO fence (id, mark) VALUES (1, ?) \
                     ON CONFLICT (id) DO UPDATE SET mark = excluded.mark",
                    &[pad(raised).into()],
                )?;
            }
            Ok((raised, was))
        }),
    };
    match result {
        Ok((mark, was)) => HttpReply::json(
            200,
            &FenceMark {
                mark: DecBound(mark),
                was: Some(DecBound(was)),
            },
        ),
        Err(e) => unavailable(e).reply(),
    }
}
