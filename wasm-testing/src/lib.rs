//! rangeid-wasm-testing: the in-process test authority behind the npm
//! package's `rangeid/testing`, a separate wasm module so the client's
//! engine keeps its size budget.
//!
//! Every decision is core's: a range request is read with the wire types
//! (as strictly as the authority reads it), decided by
//! [`rangeid_core::decide`] against each namespace's [`NamespaceState`] and
//! stored grants, and answered with the authority's encoder
//! ([`rangeid_core::wire::HttpAnswer`]). JS keeps what a test controls:
//! routing, tokens, and the faults it injects (unavailable, slow, lost
//! replies, a proxy's page).

use std::collections::BTreeMap;

use js_sys::Array;
use rangeid_core::authority::{
    decide, Decision, NamespaceConfig, NamespaceState, NamespaceStatus, Owner,
};
use rangeid_core::decimal::{parse_u64, Decimal};
use rangeid_core::ledger::{span_for, LedgerView, Limits, Span, SpanKey, Usage};
use rangeid_core::protocol::{Capacity, GrantReply};
use rangeid_core::wire::{ErrorReply, HttpAnswer};
use rangeid_core::{ErrorCode, GrantRequest, Incarnation, Namespace, RequestId};
use wasm_bindgen::prelude::*;

/// A span's key, as the authority's index orders it: owner (the token's
/// `sub`), incarnation, the first request id's number (ids that are not
/// numbered first), the first request id.
type SpanKeyRow = (String, Incarnation, Option<u64>, RequestId);

/// One namespace: its committed state and its ledger, kept as the
/// authority keeps it (core's spans, each caller's usage, the row count).
struct Space {
    state: NamespaceState,
    spans: BTreeMap<SpanKeyRow, Span>,
    usage: BTreeMap<String, Usage>,
    rows: u64,
}

impl Space {
    fn new(state: NamespaceState) -> Space {
        Space {
            state,
            spans: BTreeMap::new(),
            usage: BTreeMap::new(),
            rows: 0,
        }
    }

    /// What the ledger holds for `request` from `owner`, as the
    /// authority's queries find it: only the caller's own spans.
    fn view(&self, request: &GrantRequest, owner: &str) -> LedgerView {
        let o = owner.to_owned();
        let i = request.incarnation;
        let span = match span_for(&request.request_id) {
            SpanKey::Exact(id) => self.spans.get(&(o.clone(), i, None, id)).copied(),
            SpanKey::AtOrBelow(m) => {
                let lo = (o.clone(), i, Some(0), RequestId::numbered(0));
                let hi = (o.clone(), i, Some(m), RequestId::numbered(m));
                self.spans.range(lo..=hi).next_back().map(|(_, s)| *s)
            }
        };
        LedgerView {
            span,
            caller: self.usage.get(&o).copied().unwrap_or(Usage::NEW),
            rows: self.rows,
            limits: Limits::DEFAULT,
        }
    }
}

/// An in-process authority for tests. See the module documentation.
#[wasm_bindgen]
pub struct TestAuthority {
    // The configuration of namespaces made on first use; `None` when only
    // namespaces added by name exist.
    defaults: Option<NamespaceConfig>,
    // What a change to every namespace leaves for those made later.
    later_frozen: bool,
    later_exhausted: bool,
    spaces: BTreeMap<Namespace, Space>,
}

fn invalid(e: impl core::fmt::Display) -> JsError {
    JsError::new(&format!("invalid_config: {e}"))
}

fn number(name: &str, text: Option<String>) -> Result<Option<u64>, JsError> {
    text.map(|t| parse_u64(&t).map_err(|e| invalid(format!("{name}: {e}"))))
        .transpose()
}

fn config(
    first: Option<String>,
    max: Option<String>,
    max_count: Option<f64>,
) -> Result<NamespaceConfig, JsError> {
    let max_count = match max_count {
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => Some(n as u64),
        Some(_) => return Err(invalid("maxCount must be a whole number")),
        None => None,
    };
    NamespaceConfig::new(number("first", first)?, number("max", max)?, max_count).map_err(invalid)
}

/// `[status, retryAfterSeconds or -1, body]`: an answer as JS sends it.
fn answer(a: &HttpAnswer) -> Array {
    Array::of3(
        &JsValue::from_f64(f64::from(a.status)),
        &JsValue::from_f64(a.retry_after_secs.map_or(-1.0, f64::from)),
        &JsValue::from_str(core::str::from_utf8(&a.body).unwrap_or("{}")),
    )
}

#[wasm_bindgen]
impl TestAuthority {
    /// An authority whose namespaces are made on first use with `first`,
    /// `max` (decimal strings) and `maxCount`, each optional (the
    /// authority's defaults), or none when `onDemand` is false (add them
    /// with `addNamespace`). Throws `invalid_config: ...`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        first: Option<String>,
        max: Option<String>,
        max_count: Option<f64>,
        on_demand: bool,
    ) -> Result<TestAuthority, JsError> {
        let defaults = config(first, max, max_count)?;
        Ok(TestAuthority {
            defaults: on_demand.then_some(defaults),
            later_frozen: false,
            later_exhausted: false,
            spaces: BTreeMap::new(),
        })
    }

    /// Adds namespace `name` with its own bounds (as `new`).
    #[wasm_bindgen(js_name = addNamespace)]
    pub fn add_namespace(
        &mut self,
        name: &str,
        first: Option<String>,
        max: Option<String>,
        max_count: Option<f64>,
    ) -> Result<(), JsError> {
        let ns = Namespace::new(name).map_err(|e| invalid(format!("namespace {name:?}: {e}")))?;
        let c = config(first, max, max_count)?;
        self.spaces.insert(
            ns,
            // No witness in tests: no restore to fence against.
            Space::new(NamespaceState::create(ns, c).unfenced()),
        );
        Ok(())
    }

    /// Answers a range request's body from `owner` (the token's `sub`) at
    /// `now` (ms since the Unix epoch), as the authority does: `[status, retryAfterSeconds or -1, body,
    /// committed]`, `committed` true when a new grant was stored.
    #[wasm_bindgen(js_name = rangeRequest)]
    pub fn range_request(&mut self, body: &str, owner: &str, now: f64) -> Array {
        let out = |a: HttpAnswer, committed: bool| {
            let r = answer(&a);
            r.push(&JsValue::from_bool(committed));
            r
        };
        let request: GrantRequest = match serde_json::from_str(body) {
            Ok(r) => r,
            Err(e) => {
                let bad = ErrorReply::new(ErrorCode::InvalidRequest, format!("invalid body: {e}"));
                return out(HttpAnswer::error(&bad), false);
            }
        };
        if !self.spaces.contains_key(&request.namespace) {
            match self.defaults {
                Some(c) => {
                    let ns = request.namespace;
                    let mut state = NamespaceState::create(ns, c).unfenced();
                    if self.later_frozen {
                        state = state.with_status(NamespaceStatus::Frozen);
                    }
                    if self.later_exhausted {
                        state = state.skip_to(u128::from(c.max()) + 1);
                    }
                    self.spaces.insert(ns, Space::new(state));
                }
                None => {
                    let missing = ErrorReply::new(
                        ErrorCode::NamespaceNotFound,
                        format!("namespace {} does not exist", request.namespace.as_str()),
                    );
                    return out(HttpAnswer::error(&missing), false);
                }
            }
        }
        let Some(space) = self.spaces.get_mut(&request.namespace) else {
            return out(
                HttpAnswer::error(&ErrorReply::new(ErrorCode::Unavailable, "")),
                false,
            );
        };
        let view = space.view(&request, owner);
        let sub = owner;
        let owner = Owner::new(owner);
        let reply = |space: &Space, grant, replayed| GrantReply {
            grant,
            replayed,
            capacity: Capacity {
                max_count: Some(space.state.config().max_count()),
                remaining: Some(space.state.remaining()),
            },
        };
        match decide(&space.state, &view, &request, &owner, now as i64) {
            Ok(Decision::New {
                grant,
                state,
                record,
            }) => {
                space.state = state;
                let span = record.span;
                let key = (
                    sub.to_owned(),
                    *span.incarnation(),
                    span.first().number(),
                    *span.first(),
                );
                space.spans.insert(key, span);
                space.usage.insert(sub.to_owned(), record.caller);
                space.rows = record.rows;
                out(HttpAnswer::grant(&reply(space, grant, false)), true)
            }
            Ok(Decision::Replay(grant)) => {
                out(HttpAnswer::grant(&reply(space, grant, true)), false)
            }
            Err(refusal) => out(HttpAnswer::refusal(&refusal), false),
            // Unfenced: a range never passes the fence.
            Ok(_) => out(
                HttpAnswer::error(&ErrorReply::new(ErrorCode::Unavailable, "")),
                false,
            ),
        }
    }

    /// The authority's answer for an error `code` (its wire text) with
    /// `message`: `[status, retryAfterSeconds or -1, body]`. Throws for a
    /// code that is not one.
    pub fn error(code: &str, message: &str) -> Result<Array, JsError> {
        let code =
            ErrorCode::parse(code).ok_or_else(|| invalid(format!("no error code {code:?}")))?;
        Ok(answer(&HttpAnswer::error(&ErrorReply::new(code, message))))
    }

    /// Freezes (`true`) or thaws (`false`) namespace `name`, or every
    /// namespace when it is `None` (those made later too).
    #[wasm_bindgen(js_name = setFrozen)]
    pub fn set_frozen(&mut self, name: Option<String>, frozen: bool) -> Result<(), JsError> {
        if name.is_none() {
            self.later_frozen = frozen;
        }
        let status = if frozen {
            NamespaceStatus::Frozen
        } else {
            NamespaceStatus::Active
        };
        self.each(name, |s| s.with_status(status))
    }

    /// Leaves namespace `name` (or every one, those made later too) with no
    /// IDs to grant.
    pub fn exhaust(&mut self, name: Option<String>) -> Result<(), JsError> {
        if name.is_none() {
            self.later_exhausted = true;
        }
        self.each(name, |s| s.skip_to(u128::from(s.config().max()) + 1))
    }

    /// Raises namespace `name`'s next ID to `to` (a decimal string), as an
    /// operator's floor does. Throws `floor_below_next: ...` below it.
    pub fn floor(&mut self, name: &str, to: &str) -> Result<(), JsError> {
        let to = parse_u64(to).map_err(|e| invalid(format!("floor: {e}")))?;
        let space = self.space(name)?;
        space.state = space
            .state
            .raise_floor(to)
            .map_err(|e| JsError::new(&format!("{}: {e:?}", e.code().as_str())))?;
        Ok(())
    }

    /// What namespace `name` has left to grant, as a decimal string.
    pub fn remaining(&mut self, name: &str) -> Result<String, JsError> {
        Ok(Decimal::new(self.space(name)?.state.remaining())
            .as_str()
            .to_owned())
    }

    /// Every grant, by namespace, owner, incarnation and request id:
    /// `[namespace, incarnation, requestId, start, end, owner]`, IDs as
    /// decimal strings.
    pub fn grants(&self) -> Array {
        let all = Array::new();
        for (ns, space) in &self.spaces {
            for ((sub, ..), span) in &space.spans {
                for g in (0..span.grants()).filter_map(|i| span.grant(*ns, i)) {
                    let row = Array::new();
                    row.push(&ns.as_str().into());
                    row.push(&g.incarnation.as_str().into());
                    row.push(&g.request_id.as_str().into());
                    row.push(&Decimal::new(g.range.start()).as_str().into());
                    row.push(&Decimal::new(g.range.end()).as_str().into());
                    row.push(&sub.as_str().into());
                    all.push(&row);
                }
            }
        }
        all
    }
}

impl TestAuthority {
    fn space(&mut self, name: &str) -> Result<&mut Space, JsError> {
        let ns = Namespace::new(name).map_err(|e| invalid(format!("namespace {name:?}: {e}")))?;
        self.spaces
            .get_mut(&ns)
            .ok_or_else(|| JsError::new(&format!("namespace_not_found: no namespace {name:?} yet")))
    }

    fn each(
        &mut self,
        name: Option<String>,
        change: impl Fn(&NamespaceState) -> NamespaceState,
    ) -> Result<(), JsError> {
        match name {
            Some(n) => {
                let space = self.space(&n)?;
                space.state = change(&space.state);
            }
            None => {
                for space in self.spaces.values_mut() {
                    space.state = change(&space.state);
                }
            }
        }
        Ok(())
    }
}
