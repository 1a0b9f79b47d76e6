"""Schemathesis hooks for tests/authority/fuzz.test.mjs: a refused request
changes nothing, and valid data is refused only for documented reasons.

Around every request Schemathesis sends, these hooks keep a digest of the
authority's state, read with an admin token: for each namespace the test
created, its summary's next, state, rangesGranted, idsGranted, maxCount and
fence mark and how many audit entries it has, and the set of names the
listing shows (names only: the listing's summaries may lag by seconds).
The check `refused_request_changes_nothing` fails a request answered with a
status of 400 or more whose digest after differs from the one before.

The digest before a request is the one taken after the previous refused
request, or a fresh one when the previous request succeeded (it may have
changed something). Schemathesis runs one request at a time (workers = 1).

Environment: RANGEID_FUZZ_BASE (the authority's URL), RANGEID_FUZZ_ADMIN
(an admin token for every namespace), RANGEID_FUZZ_NAMESPACES (the created
namespaces, comma-separated).
"""

from __future__ import annotations

import json
import os
import re

import requests
import schemathesis

BASE = os.environ["RANGEID_FUZZ_BASE"].rstrip("/")
ADMIN = os.environ["RANGEID_FUZZ_ADMIN"]
NAMESPACES = [n for n in os.environ["RANGEID_FUZZ_NAMESPACES"].split(",") if n]

_session = requests.Session()
_session.headers["Authorization"] = f"Bearer {ADMIN}"

# The digest known to hold now (None: take a fresh one before the next request).
_last: dict | None = None
# Per response object (kept alive here until its check reads it): (before, after).
_pending: dict[int, tuple[object, dict, dict]] = {}


def _get(path: str, **params: object) -> dict:
    r = _session.get(f"{BASE}{path}", params=params, timeout=30)
    if r.status_code != 200:
        raise RuntimeError(f"state digest: GET {path} answered {r.status_code}: {r.text[:300]}")
    return r.json()


def _summary(ns: str) -> dict:
    s = _get(f"/v1/namespaces/{ns}")
    return {
        "next": s["next"],
        "state": s["state"],
        "rangesGranted": s["rangesGranted"],
        "idsGranted": s["idsGranted"],
        "maxCount": s["maxCount"],
        "fence.mark": s["fence"]["mark"],
    }


def _audit_entries(ns: str) -> int:
    count, before = 0, None
    while True:
        page = _get(f"/v1/namespaces/{ns}/audit", limit=1000, **({"before": before} if before else {}))
        count += len(page["audit"])
        before = page["nextBefore"]
        if not before:
            return count


def _listed_names() -> list[str]:
    names: list[str] = []
    after = None
    while True:
        page = _get("/v1/namespaces", limit=1000, **({"after": after} if after else {}))
        names.extend(n["namespace"] for n in page["namespaces"])
        after = page["nextAfter"]
        if not after:
            return sorted(names)


def _digest() -> dict:
    state: dict = {ns: {**_summary(ns), "audit entries": _audit_entries(ns)} for ns in NAMESPACES}
    state["listed names"] = _listed_names()
    return state


@schemathesis.hook
def before_call(context, case, kwargs):
    global _last
    if _last is None:
        _last = _digest()


@schemathesis.hook
def after_call(context, case, response):
    global _last
    before = _last
    if response.status_code >= 400 and before is not None:
        after = _digest()
        if len(_pending) > 1000:
            _pending.clear()
        _pending[id(response)] = (response, before, after)
        _last = after
    else:
        _last = None


@schemathesis.hook
def after_network_error(context, case, request):
    # The request may have reached the authority: take a fresh digest next.
    global _last
    _last = None


def _diff(before: dict, after: dict) -> list[str]:
    out = []
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        if b == a:
            continue
        if key == "listed names":
            added = sorted(set(a or []) - set(b or []))
            removed = sorted(set(b or []) - set(a or []))
            out.append(f"listed names: added {added}, removed {removed}")
        elif isinstance(b, dict) and isinstance(a, dict):
            for field in sorted(set(b) | set(a)):
                if b.get(field) != a.get(field):
                    out.append(f"{key}: {field} {json.dumps(b.get(field))} -> {json.dumps(a.get(field))}")
        else:
            out.append(f"{key}: {json.dumps(b)} -> {json.dumps(a)}")
    return out


@schemathesis.check
def refused_request_changes_nothing(ctx, response, case):
    """A request answered with 400 or more leaves the authority's state as it was."""
    entry = _pending.pop(id(response), None)
    if entry is None or entry[0] is not response:
        return None
    _, before, after = entry
    changes = _diff(before, after)
    if changes:
        raise AssertionError(
            f"{case.method} {case.formatted_path} was refused with {response.status_code} "
            f"but changed the authority's state: " + "; ".join(changes)
        )
    return True


# Refusals of requests the document's schemas allow: the rules no JSON
# Schema can state, because they relate two fields or the namespace's
# settings. A 400 for schema-valid data must carry one of these messages.
_CROSS_FIELD_RULES = [
    re.compile(r"^first must not be greater than max$"),
    re.compile(r"^count must be between 1 and \d+$"),
    re.compile(r"^floor \d+ is above max \d+$"),
    re.compile(r"^subLedgerRows must not be above ledgerRows$"),
]
# Codes whose 400 is a rule between fields the schema cannot state: an
# export document's check over its other fields and core's invariants
# among its marks, and its namespace against the path's.
_CROSS_FIELD_CODES = {"export_invalid", "export_namespace_mismatch"}
# Statuses that refuse valid data for reasons the data does not show:
# credentials, scope, existence, state (conflict, exhausted, frozen),
# load, and the server's own failures (which other checks catch).
_ACCEPTABLE = {401, 403, 404, 409, 423, 429}


@schemathesis.check
def valid_data_accepted(ctx, response, case):
    """Schema-valid data is accepted, or refused for a documented reason:
    a 400 only with a cross-field rule's message (schemathesis's own
    positive_data_acceptance check, without that exception, is off)."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    status = response.status_code
    if status < 400 or status >= 500 or status in _ACCEPTABLE:
        return True
    if status == 400:
        try:
            error = response.json()["error"]
            message, code = error["message"], error["code"]
        except (ValueError, KeyError, TypeError):
            message, code = "", ""
        if any(rule.match(message) for rule in _CROSS_FIELD_RULES) or code in _CROSS_FIELD_CODES:
            return True
    raise AssertionError(
        f"valid data refused: {case.method} {case.formatted_path} answered {status}: {response.text[:300]}"
    )
