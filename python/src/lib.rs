//! rangeid's Python package: the extension module `rangeid._rangeid`.
//!
//! It only marshals between Python and [`rangeid_client`]: every decision
//! (sizes, retries, what an answer means, which options are valid, which
//! error a failure is) is the Rust client's and core's. Calls that may
//! wait on the network release the GIL (`Python::detach`) while they wait;
//! `next_id` takes its ID without waiting, so it keeps the GIL (releasing
//! it would cost more than the call). Refills run in the background on one
//! tokio runtime shared by every generator of the process (the one the
//! asyncio variant awaits on, from `pyo3-async-runtimes`).

use std::sync::Arc;
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyConnectionError, PyException};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyMapping};
use rangeid_client::{BoxError, ErrorKind, LeaseStats, Options, Phase};

create_exception!(
    rangeid,
    RangeIdError,
    PyException,
    "Every rangeid failure; `code` is the stable code the HTTP API, the npm package and the Rust client use."
);
create_exception!(
    rangeid,
    UnavailableError,
    RangeIdError,
    "No ID is ready: none came within the deadline (`unavailable`). Not final."
);
create_exception!(
    rangeid,
    FrozenError,
    RangeIdError,
    "The namespace is frozen (`frozen`); the generator keeps asking. Not final."
);
create_exception!(
    rangeid,
    BlockedError,
    RangeIdError,
    "Range requests are refused by something other than the authority, or the token even fresh; the generator asks again by itself. Not final."
);
create_exception!(
    rangeid,
    ExhaustedError,
    RangeIdError,
    "The namespace has no IDs left (`exhausted`). Final."
);
create_exception!(
    rangeid,
    TooFewError,
    ExhaustedError,
    "A batch larger than the namespace has left (`exhausted`, with `remaining` and `available`); nothing was taken. Not final."
);
create_exception!(
    rangeid,
    RefusedError,
    RangeIdError,
    "The authority refused this generator for good (`forbidden`, `namespace_not_found`, ...). Final."
);
create_exception!(
    rangeid,
    InvalidRequestError,
    RangeIdError,
    "A batch of 0 IDs, or more than one call may ask for (`invalid_request`, with `limit`). Nothing was taken."
);
create_exception!(
    rangeid,
    ClosedError,
    RangeIdError,
    "The generator was closed (`closed`). Final."
);
create_exception!(
    rangeid,
    InvalidConfigError,
    RangeIdError,
    "The options are not valid (`invalid_config`); nothing was started."
);

/// A batch's size as the client takes it: any Python int that fits a
/// `u64` (the client refuses 0 and sizes past `MAX_BATCH` itself); another
/// int, such as a negative one, is `InvalidRequestError`, and a value that
/// is no int `TypeError`, as Python's own calls do.
fn batch_size(n: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(n) = n.extract::<u64>() {
        return Ok(n);
    }
    if n.is_instance_of::<pyo3::types::PyInt>() {
        return Err(to_py(rangeid_client::Error::invalid_request(format!(
            "a batch asks for 1 to {} IDs, not {n}",
            rangeid_client::MAX_BATCH
        ))));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "a batch's size is an int, not {}",
        n.get_type().name()?
    )))
}

/// The Python exception for a client error: its class by the error's kind,
/// with every field the Rust error carries as an attribute.
fn to_py(e: rangeid_client::Error) -> PyErr {
    Python::attach(|py| {
        let err = match e.kind() {
            ErrorKind::Unavailable => UnavailableError::new_err(e.to_string()),
            ErrorKind::Frozen => FrozenError::new_err(e.to_string()),
            ErrorKind::Blocked => BlockedError::new_err(e.to_string()),
            ErrorKind::Exhausted => ExhaustedError::new_err(e.to_string()),
            ErrorKind::TooFew => TooFewError::new_err(e.to_string()),
            ErrorKind::Refused => RefusedError::new_err(e.to_string()),
            ErrorKind::InvalidRequest => InvalidRequestError::new_err(e.to_string()),
            ErrorKind::Closed => ClosedError::new_err(e.to_string()),
            ErrorKind::InvalidConfig => InvalidConfigError::new_err(e.to_string()),
            _ => RangeIdError::new_err(e.to_string()),
        };
        let fields = || -> PyResult<()> {
            let v = err.value(py);
            v.setattr("code", e.code())?;
            v.setattr("message", e.message())?;
            v.setattr("is_final", e.is_final())?;
            v.setattr("status", e.status())?;
            v.setattr("authority_code", e.authority_code())?;
            v.setattr("authority_message", e.authority_message())?;
            v.setattr("excerpt", e.excerpt())?;
            v.setattr("remaining", e.remaining())?;
            v.setattr("available", e.available())?;
            v.setattr("limit", e.limit())?;
            v.setattr("retry_after", e.retry_after().map(|d| d.as_secs_f64()))?;
            Ok(())
        };
        if let Err(failed) = fields() {
            return failed;
        }
        if let Some(source) = std::error::Error::source(&e) {
            // The network error, as a ConnectionError chained below.
            err.set_cause(py, Some(PyConnectionError::new_err(source.to_string())));
        }
        err
    })
}

/// An `invalid_config` error made here: an option value that is not an
/// integer core could read.
fn invalid_config(message: String) -> PyErr {
    Python::attach(|py| {
        let err = InvalidConfigError::new_err(format!("invalid_config: {message}"));
        let v = err.value(py);
        let set = || -> PyResult<()> {
            v.setattr("code", "invalid_config")?;
            v.setattr("message", message.as_str())?;
            v.setattr("is_final", true)?;
            for name in [
                "status",
                "authority_code",
                "authority_message",
                "excerpt",
                "remaining",
                "available",
                "limit",
                "retry_after",
            ] {
                v.setattr(name, py.None())?;
            }
            Ok(())
        };
        match set() {
            Ok(()) => err,
            Err(failed) => failed,
        }
    })
}

/// The runtime every generator's background task runs on: the one the
/// asyncio variant's awaitables are driven by.
fn runtime() -> tokio::runtime::Handle {
    pyo3_async_runtimes::tokio::get_runtime().handle().clone()
}

/// The client's options from the Python arguments: `token` a string or a
/// callable `(refresh: bool) -> str`, `options` the engine's by their npm
/// names (`rangeSize`, `deadlineMs`, ...), each checked by core; `region`
/// the relay region that serves it (checked by core when it starts).
fn options(
    url: String,
    token: &Bound<'_, PyAny>,
    namespace: String,
    engine: Option<&Bound<'_, PyMapping>>,
    allow_insecure_http: bool,
    region: Option<String>,
) -> PyResult<Options> {
    let mut o = if let Ok(text) = token.extract::<String>() {
        Options::new(url, namespace, text)
    } else if token.is_callable() {
        let provider = Arc::new(token.clone().unbind());
        Options::new(url, namespace, "").token_provider(move |refresh: bool| {
            let provider = Arc::clone(&provider);
            async move {
                // A thread that may take the GIL, not the runtime's worker.
                tokio::task::spawn_blocking(move || {
                    Python::attach(|py| -> Result<String, BoxError> {
                        let got = provider
                            .call1(py, (refresh,))
                            .map_err(|e| format!("the token provider failed: {e}"))?;
                        got.extract::<String>(py)
                            .map_err(|_| "the token provider did not return a str".into())
                    })
                })
                .await
                .map_err(|e| -> BoxError { format!("the token provider: {e}").into() })?
            }
        })
    } else {
        return Err(invalid_config(
            "token must be a non-empty str or a callable (refresh: bool) -> str".into(),
        ));
    };
    if let Some(engine) = engine {
        for item in engine.items()?.iter() {
            let (name, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let name: String = name
                .extract()
                .map_err(|_| invalid_config("option names must be str".into()))?;
            let value: u64 = value.extract().map_err(|_| {
                invalid_config(format!(
                    "{name} must be an int from 0 to 2**64 - 1, not {value}"
                ))
            })?;
            o = o.option(&name, value);
        }
    }
    if let Some(region) = region {
        o = o.region(region);
    }
    Ok(o.allow_insecure_http(allow_insecure_http)
        .runtime(runtime()))
}

/// A generator: IDs for one namespace, issued in-process from ranges the
/// authority committed to it. Every method may be called from any thread.
#[pyclass(module = "rangeid", frozen)]
struct Generator {
    inner: rangeid_client::Generator,
}

#[pymethods]
impl Generator {
    /// Starts a generator and waits (up to `deadlineMs`, 5 s by default)
    /// for its first range, with the GIL released.
    #[new]
    #[pyo3(signature = (url, token, namespace, *, options=None, allow_insecure_http=false, region=None))]
    fn new(
        py: Python<'_>,
        url: String,
        token: &Bound<'_, PyAny>,
        namespace: String,
        options: Option<&Bound<'_, PyMapping>>,
        allow_insecure_http: bool,
        region: Option<String>,
    ) -> PyResult<Generator> {
        let o = self::options(url, token, namespace, options, allow_insecure_http, region)?;
        let inner = py
            .detach(|| rangeid_client::Generator::connect_blocking(o))
            .map_err(to_py)?;
        Ok(Generator { inner })
    }

    /// Starts a generator without blocking the event loop: an awaitable
    /// of the generator, once its first range is installed.
    #[staticmethod]
    #[pyo3(signature = (url, token, namespace, *, options=None, allow_insecure_http=false, region=None))]
    fn connect_async<'py>(
        py: Python<'py>,
        url: String,
        token: &Bound<'py, PyAny>,
        namespace: String,
        options: Option<&Bound<'py, PyMapping>>,
        allow_insecure_http: bool,
        region: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let o = self::options(url, token, namespace, options, allow_insecure_http, region)?;
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let inner = rangeid_client::Generator::connect(o).await.map_err(to_py)?;
            Ok(Generator { inner })
        })
    }

    /// The next ID: from the block on hand at once (lock-free), or, when
    /// none is, waiting for a range up to `deadlineMs` with the GIL
    /// released.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        match self.inner.next_id() {
            Ok(id) => Ok(id),
            Err(_) => py.detach(|| self.inner.next_id_blocking()).map_err(to_py),
        }
    }

    /// The next ID only if one is on hand now: never waits; raises
    /// `UnavailableError` (or why not) otherwise.
    fn try_next_id(&self) -> PyResult<u64> {
        self.inner.next_id().map_err(to_py)
    }

    /// Exactly `n` IDs (1 to 2**32 - 1), not necessarily contiguous;
    /// waits like `next_id`, with the GIL released. All or nothing.
    fn next_ids<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = batch_size(n)?;
        let ids = py
            .detach(|| self.inner.next_ids_blocking(n))
            .map_err(to_py)?;
        PyList::new(py, ids)
    }

    /// `next_id` as an awaitable (for the asyncio variant).
    fn next_id_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let g = self.inner.clone();
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            g.next_id_async().await.map_err(to_py)
        })
    }

    /// `next_ids` as an awaitable (for the asyncio variant).
    fn next_ids_async<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let n = batch_size(n)?;
        let g = self.inner.clone();
        pyo3_async_runtimes::tokio::future_into_py(
            py,
            async move { g.next_ids(n).await.map_err(to_py) },
        )
    }

    /// The counters, as a dict (see `rangeid.Stats`).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = py.detach(|| self.inner.stats());
        let d = PyDict::new(py);
        d.set_item("incarnation", s.incarnation)?;
        let (phase, failure) = match s.phase {
            Phase::Running => ("running", None),
            Phase::Blocked => ("blocked", None),
            Phase::Exhausted => ("exhausted", None),
            Phase::Failed(code) => ("failed", Some(code)),
            Phase::Closed => ("closed", None),
            _ => ("unknown", None),
        };
        d.set_item("phase", phase)?;
        d.set_item("failure", failure)?;
        d.set_item("rate_per_second", s.rate_per_second)?;
        d.set_item("in_flight", s.in_flight)?;
        d.set_item("misses", s.misses)?;
        d.set_item("lost", s.lost)?;
        d.set_item("lease", lease_stats(py, &s.lease)?)?;
        Ok(d)
    }

    /// Stops: abandons the unused IDs, aborts requests in flight, fails
    /// waiting calls with `ClosedError`. Says what was given up.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = py.detach(|| self.inner.close());
        let d = PyDict::new(py);
        d.set_item("abandoned", c.abandoned)?;
        d.set_item("requests_abandoned", c.requests_abandoned)?;
        Ok(d)
    }

    /// The incarnation: 32 hex digits, fresh for each generator.
    #[getter]
    fn incarnation(&self) -> &str {
        self.inner.incarnation()
    }

    /// The namespace it issues for.
    #[getter]
    fn namespace(&self) -> &str {
        self.inner.namespace()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        py.detach(|| self.inner.close());
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "<rangeid.Generator namespace={:?} incarnation={}>",
            self.inner.namespace(),
            self.inner.incarnation()
        )
    }
}

/// Core's counters as a dict; every field, named as in Rust (a new field
/// fails to compile here until it is added).
fn lease_stats<'py>(py: Python<'py>, s: &LeaseStats) -> PyResult<Bound<'py, PyDict>> {
    let LeaseStats {
        issued,
        available,
        reserved_ahead,
        reserved,
        outstanding,
        ranges_installed,
        replays_installed,
        duplicates_ignored,
        grants_refused,
        stale_ignored,
        requests,
        retries,
        requests_expired,
        starved,
        blocks,
        unblocks,
        abandoned,
        grant_ms,
    } = *s;
    let d = PyDict::new(py);
    for (k, v) in [
        ("issued", issued),
        ("available", available),
        ("reserved_ahead", reserved_ahead),
        ("reserved", reserved),
        ("outstanding", outstanding),
        ("ranges_installed", ranges_installed),
        ("replays_installed", replays_installed),
        ("duplicates_ignored", duplicates_ignored),
        ("grants_refused", grants_refused),
        ("stale_ignored", stale_ignored),
        ("requests", requests),
        ("retries", retries),
        ("requests_expired", requests_expired),
        ("starved", starved),
        ("blocks", blocks),
        ("unblocks", unblocks),
        ("abandoned", abandoned),
    ] {
        d.set_item(k, v)?;
    }
    let g = PyDict::new(py);
    g.set_item("count", grant_ms.count)?;
    g.set_item("p50", grant_ms.p50)?;
    g.set_item("p99", grant_ms.p99)?;
    g.set_item("max", grant_ms.max)?;
    d.set_item("grant_ms", g)?;
    Ok(d)
}

/// The extension module.
#[pymodule]
fn _rangeid(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // One worker thread runs every generator's refills: they are brief
    // engine calls between network waits.
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(1)
        .thread_name("rangeid")
        .enable_all()
        .thread_keep_alive(Duration::from_secs(10));
    pyo3_async_runtimes::tokio::init(builder);
    let py = m.py();
    m.add_class::<Generator>()?;
    m.add("RangeIdError", py.get_type::<RangeIdError>())?;
    m.add("UnavailableError", py.get_type::<UnavailableError>())?;
    m.add("FrozenError", py.get_type::<FrozenError>())?;
    m.add("BlockedError", py.get_type::<BlockedError>())?;
    m.add("ExhaustedError", py.get_type::<ExhaustedError>())?;
    m.add("TooFewError", py.get_type::<TooFewError>())?;
    m.add("RefusedError", py.get_type::<RefusedError>())?;
    m.add("InvalidRequestError", py.get_type::<InvalidRequestError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    m.add("InvalidConfigError", py.get_type::<InvalidConfigError>())?;
    m.add("MAX_BATCH", rangeid_client::MAX_BATCH)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
