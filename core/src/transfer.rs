//! Moving a namespace from one authority to another (self-hosted workerd to
//! Cloudflare, or back): what the source hands over, and where the
//! destination starts.
//!
//! The source freezes the namespace in the same commit that writes the
//! handover, after reading its witness's mark, so it grants nothing after
//! the handover was taken. The handover holds the configuration, the
//! source's `next`, its recorded fence and the witness's mark. The
//! destination creates the namespace already at [`Handover::start`], the
//! highest of the three, in one commit: there is never a moment it could
//! grant below anything the source may have granted, even from a source
//! whose own storage had gone back without its noticing (the witness's mark
//! covers every grant the source ever made, see [`crate::fence`]).
//!
//! Before the source answers the handover it raises its witness to
//! [`Handover::retire_mark`], past the namespace's last ID. The namespace
//! is then retired there for good: a copy of the source's storage from
//! before the export, put back later, starts against that mark with
//! nothing left to grant, so it can never grant what the destination
//! grants. A move is undone by importing the document, never by
//! unfreezing the source.

use crate::authority::{
    NamespaceConfig, NamespaceConfigError, NamespaceState, NamespaceStatus, StateError,
};
use crate::code::ErrorCode;
use crate::names::Namespace;

/// A namespace's state as its source authority handed it over.
///
/// Guaranteed: `config` is valid, `first <= next <= max + 1`,
/// `first <= fence <= max + 1` and `witness <= 2^64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handover {
    state: NamespaceState,
    witness: u128,
}

impl Handover {
    /// What a source whose committed state is `state` hands over, having
    /// just read `witness` from its witness: the state as it is frozen by
    /// the same commit.
    pub fn export(state: &NamespaceState, witness: u128) -> Handover {
        Handover {
            state: state.with_status(NamespaceStatus::Frozen),
            witness: witness.min(1 << 64),
        }
    }

    /// A handover read back from its parts (a document from the source),
    /// checked against core's invariants.
    pub fn from_parts(
        name: Namespace,
        config: NamespaceConfig,
        next: u128,
        fence: u128,
        witness: u128,
    ) -> Result<Handover, HandoverError> {
        if witness > 1 << 64 {
            return Err(HandoverError::WitnessOutOfBounds);
        }
        let state = NamespaceState::load(name, config, next, NamespaceStatus::Frozen, fence)
            .map_err(HandoverError::State)?;
        Ok(Handover { state, witness })
    }

    /// The namespace's name.
    pub const fn name(&self) -> &Namespace {
        self.state.name()
    }

    /// Its fixed bounds.
    pub const fn config(&self) -> &NamespaceConfig {
        self.state.config()
    }

    /// The source's `next`.
    pub const fn next(&self) -> u128 {
        self.state.next()
    }

    /// The fence the source recorded (the witness's last acknowledged mark
    /// it knew of).
    pub const fn fence(&self) -> u128 {
        self.state.fence()
    }

    /// The mark the source's witness held when the source read it, just
    /// before the handover was committed (0 when it never held one).
    pub const fn witness(&self) -> u128 {
        self.witness
    }

    /// Where the destination's first grant starts: the highest of the
    /// source's `next`, its fence and its witness's mark, capped at
    /// `max + 1` (then the namespace arrives exhausted). The source never
    /// granted an ID at or above this: every grant ended at or below both
    /// `next` and the fence, and the witness's mark is at or above every
    /// fence the source ever recorded.
    pub fn start(&self) -> u128 {
        let end = u128::from(self.config().max()) + 1;
        self.next().max(self.fence()).max(self.witness).min(end)
    }

    /// The mark the source raises its witness to before it answers the
    /// handover: `max + 1`, past every ID, so the source, and any restored
    /// copy of it, starts with nothing to grant.
    pub fn retire_mark(&self) -> u128 {
        u128::from(self.config().max()) + 1
    }

    /// The destination's new namespace: active, `next` at [`Self::start`],
    /// its fence at `first` (its own witness has acknowledged nothing yet,
    /// so its first grant raises it, from `start` on).
    pub fn import(&self) -> NamespaceState {
        NamespaceState::create(*self.name(), *self.config()).skip_to(self.start())
    }
}

/// Why a handover is refused: its marks break core's invariants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandoverError {
    /// `next` or the fence lies outside the configuration's bounds.
    State(StateError),
    /// The witness's mark is above 2^64.
    WitnessOutOfBounds,
}

impl core::fmt::Display for HandoverError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            HandoverError::State(StateError::NextOutOfBounds) => {
                "next must lie from first to max + 1"
            }
            HandoverError::State(StateError::FenceOutOfBounds) => {
                "fence must lie from first to max + 1"
            }
            HandoverError::WitnessOutOfBounds => "witness must be at most 2^64",
        })
    }
}

impl core::error::Error for HandoverError {}

/// What already holds the namespace's name on the destination, as an import
/// must know it to decide ([`ExportDocument::import`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Existing<'a> {
    /// Nothing: the namespace can be created.
    Nothing,
    /// A namespace created by an import; `check` is its document's check.
    Imported {
        /// The check of the document it was imported from.
        check: &'a str,
    },
    /// A namespace created here (or in any other way than an import).
    Created,
}

/// Why an export document is refused by an import. Nothing is written on
/// any refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportError {
    /// The bytes are not a JSON object of an export's fields (cut, not
    /// JSON, a field missing, unknown or of the wrong type).
    Malformed,
    /// The document is not a rangeid namespace export at all (its `format`
    /// is not [`FORMAT_PREFIX`] and a version).
    Foreign,
    /// A rangeid export of a format version this authority does not read.
    Version {
        /// The version the document names.
        found: u32,
    },
    /// Its `check` does not match its contents: edited, or mixed up.
    CheckMismatch,
    /// A text field (`source`, `exportedAt`, `exportedBy`, `reason`) is too
    /// long or holds control characters.
    Text {
        /// The field's name on the wire.
        field: &'static str,
    },
    /// Its configuration is invalid.
    Config(NamespaceConfigError),
    /// Its settings' limits are invalid, or its settings do not match its
    /// version (version 2 carries them, version 1 does not).
    Settings(Option<crate::ledger::LimitsError>),
    /// Its marks break core's invariants.
    Handover(HandoverError),
    /// Its `start` is not the one its marks decide ([`Handover::start`]).
    StartMismatch {
        /// The document's start.
        found: u128,
        /// The start its marks decide.
        expected: u128,
    },
    /// The document is another namespace's than the one it was sent for.
    OtherNamespace {
        /// The namespace it holds (not the one it was sent for).
        found: Namespace,
    },
    /// This very document was imported here already.
    AlreadyImported,
    /// The namespace exists here already; an import never writes over one.
    Exists,
}

impl ImportError {
    /// The stable code for this refusal.
    pub const fn code(&self) -> ErrorCode {
        match self {
            ImportError::Foreign | ImportError::Version { .. } => ErrorCode::ExportUnsupported,
            ImportError::OtherNamespace { .. } => ErrorCode::ExportNamespaceMismatch,
            ImportError::AlreadyImported => ErrorCode::AlreadyImported,
            ImportError::Exists => ErrorCode::NamespaceExists,
            ImportError::Malformed
            | ImportError::CheckMismatch
            | ImportError::Text { .. }
            | ImportError::Config(_)
            | ImportError::Settings(_)
            | ImportError::Handover(_)
            | ImportError::StartMismatch { .. } => ErrorCode::ExportInvalid,
        }
    }
}

impl core::fmt::Display for ImportError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ImportError::Malformed => f.write_str(
                "not an export document: expected the JSON object that \
                 `POST .../export` answers, unchanged",
            ),
            ImportError::Foreign => write!(
                f,
                "not a rangeid namespace export: format must be {FORMAT:?}"
            ),
            ImportError::Version { found } => write!(
                f,
                "a rangeid export of format version {found}; this authority reads versions \
                 {OLDEST_VERSION} to {VERSION}: upgrade this authority, or export again from \
                 one of its release"
            ),
            ImportError::CheckMismatch => f.write_str(
                "the document's check does not match its contents (edited, cut or mixed up \
                 with another): export it again",
            ),
            ImportError::Text { field } => write!(
                f,
                "the document's {field} must be at most {MAX_TEXT} bytes of printable text"
            ),
            ImportError::Config(e) => write!(f, "the document's configuration: {e}"),
            ImportError::Settings(Some(e)) => write!(f, "the document's settings: {e}"),
            ImportError::Settings(None) => write!(
                f,
                "the document's settings do not match its format (version 2 carries \
                 `settings`, version 1 does not)"
            ),
            ImportError::Handover(e) => write!(f, "the document's marks: {e}"),
            ImportError::StartMismatch { found, expected } => write!(
                f,
                "the document's start {found} is not where its marks start ({expected})"
            ),
            ImportError::OtherNamespace { found } => write!(
                f,
                "the document is namespace {:?}'s, not the one it was sent for; import it \
                 as {:?}",
                found.as_str(),
                found.as_str()
            ),
            ImportError::AlreadyImported => f.write_str(
                "this export was imported here already; nothing changed (the namespace is \
                 live here: use it)",
            ),
            ImportError::Exists => f.write_str(
                "the namespace exists here already; an import never writes over a namespace",
            ),
        }
    }
}

impl core::error::Error for ImportError {}

/// The first part of every export's `format`; the version follows.
pub const FORMAT_PREFIX: &str = "rangeid-namespace-export/";
/// The format version this release writes: 2 carries the namespace's
/// settings ([`Settings`]).
pub const VERSION: u32 = 2;
/// The oldest format version this release still reads (1: no settings).
pub const OLDEST_VERSION: u32 = 1;
/// The `format` this release writes.
pub const FORMAT: &str = "rangeid-namespace-export/2";
/// The longest text field (`source`, `exportedAt`, `exportedBy`,
/// `reason`) a document may hold, in bytes.
pub const MAX_TEXT: usize = 512;

/// Whether `format` names a document this release reads: its version
/// ([`OLDEST_VERSION`] to [`VERSION`]), [`ImportError::Version`] for
/// another version, [`ImportError::Foreign`] for anything else. A driver
/// asks this before it reads the rest, so an old or foreign document gets
/// its own answer.
pub fn check_format(format: &str) -> Result<u32, ImportError> {
    let version = format
        .strip_prefix(FORMAT_PREFIX)
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .ok_or(ImportError::Foreign)?;
    match version.parse::<u32>() {
        Ok(v) if (OLDEST_VERSION..=VERSION).contains(&v) => Ok(v),
        Ok(found) => Err(ImportError::Version { found }),
        Err(_) => Err(ImportError::Foreign),
    }
}

/// A namespace's settings as an export carries them (format version 2):
/// whether its relays were on, and the limits an admin set (`None`: the
/// default). An import applies the limits in its commit; relays start off
/// at the destination (turning them on is an admin act of its own there,
/// which raises that authority's witness first), and the import's audit
/// entry and the CLI say they were on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "transfer", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "transfer",
    serde(deny_unknown_fields, rename_all = "camelCase")
)]
pub struct Settings {
    /// Whether the namespace's relays were on at the source.
    pub relays: bool,
    /// The grant rate per caller an admin set.
    pub grants_per_second: Option<u64>,
    /// The namespace's ledger row budget an admin set.
    pub ledger_rows: Option<u64>,
    /// A caller's ledger row budget an admin set.
    pub sub_ledger_rows: Option<u64>,
}

impl Settings {
    /// The limits these settings make, checked by core
    /// ([`crate::ledger::Limits::new`]).
    pub fn limits(&self) -> Result<crate::ledger::Limits, crate::ledger::LimitsError> {
        crate::ledger::Limits::new(
            self.grants_per_second,
            self.ledger_rows,
            self.sub_ledger_rows,
        )
    }
}

#[cfg(feature = "transfer")]
pub use document::ExportDocument;

#[cfg(feature = "transfer")]
mod document {
    use alloc::string::String;
    use core::fmt::Write;

    use serde::{Deserialize, Serialize};
    use sha2::{Digest, Sha256};

    use super::*;
    use crate::authority::NamespaceConfig;
    use crate::wire::{DecBound, DecU64};

    /// What an export answers and an import takes: a namespace's state as
    /// its source handed it over. Every ID-valued field is a decimal
    /// string. The `check` (`sha256:` and 64 hex digits) covers every other
    /// field, so a document that was cut, edited or mixed up with another is
    /// refused; it is a checksum, not a signature (an admin of the
    /// destination may create any namespace anyway).
    #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ExportDocument {
        /// [`FORMAT`].
        pub format: String,
        /// The namespace.
        pub namespace: Namespace,
        /// Its first ID.
        pub first: DecU64,
        /// Its last ID.
        pub max: DecU64,
        /// Its largest request.
        pub max_count: u64,
        /// The source's `next` when it froze.
        pub next: DecBound,
        /// The fence the source had recorded.
        pub fence: DecBound,
        /// The mark the source's witness held, read just before the freeze.
        pub witness: DecBound,
        /// Where the destination's first grant starts ([`Handover::start`]).
        pub start: DecBound,
        /// The exporting authority's origin.
        pub source: String,
        /// When the export was committed (RFC 3339, the driver's clock).
        pub exported_at: String,
        /// The `sub` of the admin token that exported.
        pub exported_by: String,
        /// Why, as the export's audit entry says.
        pub reason: String,
        /// The namespace's settings (format version 2; absent in 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub settings: Option<Settings>,
        /// `sha256:` and the hex digest of [`Self::canonical`].
        pub check: String,
    }

    /// Feeds formatted text to the hash without a buffer.
    struct Hashing(Sha256);

    impl Write for Hashing {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0.update(s.as_bytes());
            Ok(())
        }
    }

    /// At most [`MAX_TEXT`] bytes, with no control character.
    fn text(field: &'static str, value: &str) -> Result<(), ImportError> {
        if value.len() > MAX_TEXT || value.chars().any(char::is_control) {
            return Err(ImportError::Text { field });
        }
        Ok(())
    }

    /// `value` cut to at most [`MAX_TEXT`] bytes on a character boundary,
    /// control characters dropped.
    fn bounded(value: &str) -> String {
        let mut out = String::new();
        for c in value.chars().filter(|c| !c.is_control()) {
            if out.len() + c.len_utf8() > MAX_TEXT {
                break;
            }
            out.push(c);
        }
        out
    }

    impl ExportDocument {
        /// The document for `handover`, with its check. The text fields are
        /// kept within [`MAX_TEXT`] bytes of printable text.
        pub fn new(
            handover: &Handover,
            settings: Settings,
            source: &str,
            exported_at: &str,
            exported_by: &str,
            reason: &str,
        ) -> ExportDocument {
            let c = handover.config();
            let mut doc = ExportDocument {
                format: String::from(FORMAT),
                namespace: *handover.name(),
                first: DecU64(c.first()),
                max: DecU64(c.max()),
                max_count: c.max_count(),
                next: DecBound(handover.next()),
                fence: DecBound(handover.fence()),
                witness: DecBound(handover.witness()),
                start: DecBound(handover.start()),
                source: bounded(source),
                exported_at: bounded(exported_at),
                exported_by: bounded(exported_by),
                reason: bounded(reason),
                settings: Some(settings),
                check: String::new(),
            };
            doc.check = doc.digest();
            doc
        }

        /// The fields the check covers, each as `length:value` on a line
        /// of its own, in the order of the wire; the settings (version 2)
        /// last, a limit left at its default as `default`.
        pub fn canonical(&self, out: &mut impl Write) -> core::fmt::Result {
            let mut field = |v: &dyn core::fmt::Display| -> core::fmt::Result {
                let mut len = Counting(0);
                write!(len, "{v}")?;
                writeln!(out, "{}:{v}", len.0)
            };
            field(&self.format)?;
            field(&self.namespace.as_str())?;
            field(&self.first.0)?;
            field(&self.max.0)?;
            field(&self.max_count)?;
            field(&self.next.0)?;
            field(&self.fence.0)?;
            field(&self.witness.0)?;
            field(&self.start.0)?;
            field(&self.source)?;
            field(&self.exported_at)?;
            field(&self.exported_by)?;
            field(&self.reason)?;
            if let Some(s) = &self.settings {
                let limit = |v: Option<u64>| -> String {
                    v.map_or_else(|| String::from("default"), |v| alloc::format!("{v}"))
                };
                field(&s.relays)?;
                field(&limit(s.grants_per_second))?;
                field(&limit(s.ledger_rows))?;
                field(&limit(s.sub_ledger_rows))?;
            }
            Ok(())
        }

        pub(crate) fn digest(&self) -> String {
            let mut h = Hashing(Sha256::new());
            // Writing to the hash cannot fail.
            let _ = self.canonical(&mut h);
            let mut out = String::from("sha256:");
            for b in h.0.finalize() {
                let _ = write!(out, "{b:02x}");
            }
            out
        }

        /// The handover the document describes, for the namespace `expected`
        /// (the one it was sent for): its format, its check, its text
        /// fields, core's invariants, and that its `start` is the one core
        /// decides.
        pub fn handover(&self, expected: &Namespace) -> Result<Handover, ImportError> {
            let version = check_format(&self.format)?;
            if self.check != self.digest() {
                return Err(ImportError::CheckMismatch);
            }
            match (version, &self.settings) {
                (1, None) => {}
                (1, Some(_)) | (_, None) => return Err(ImportError::Settings(None)),
                (_, Some(s)) => {
                    s.limits().map_err(|e| ImportError::Settings(Some(e)))?;
                }
            }
            if self.namespace != *expected {
                return Err(ImportError::OtherNamespace {
                    found: self.namespace,
                });
            }
            text("source", &self.source)?;
            text("exportedAt", &self.exported_at)?;
            text("exportedBy", &self.exported_by)?;
            text("reason", &self.reason)?;
            let config =
                NamespaceConfig::new(Some(self.first.0), Some(self.max.0), Some(self.max_count))
                    .map_err(ImportError::Config)?;
            let handover = Handover::from_parts(
                self.namespace,
                config,
                self.next.0,
                self.fence.0,
                self.witness.0,
            )
            .map_err(ImportError::Handover)?;
            if handover.start() != self.start.0 {
                return Err(ImportError::StartMismatch {
                    found: self.start.0,
                    expected: handover.start(),
                });
            }
            Ok(handover)
        }

        /// The settings the document carries: a version 1 document's are
        /// the defaults, relays off.
        pub fn settings(&self) -> Settings {
            self.settings.unwrap_or_default()
        }

        /// The namespace an import creates from this document, sent for
        /// `expected`, where `existing` already holds that name: the
        /// document checked ([`Self::handover`]), then refused if anything
        /// exists ([`ImportError::AlreadyImported`] when it came from this
        /// very document), else [`Handover::import`].
        pub fn import(
            &self,
            expected: &Namespace,
            existing: Existing<'_>,
        ) -> Result<NamespaceState, ImportError> {
            let handover = self.handover(expected)?;
            match existing {
                Existing::Nothing => Ok(handover.import()),
                Existing::Imported { check } if check == self.check => {
                    Err(ImportError::AlreadyImported)
                }
                Existing::Imported { .. } | Existing::Created => Err(ImportError::Exists),
            }
        }
    }

    /// Counts the bytes written.
    struct Counting(usize);

    impl Write for Counting {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authority::{decide, Decision, Owner};
    use crate::names::{Incarnation, RequestId};
    use crate::protocol::GrantRequest;

    fn config(first: u64, max: u64) -> NamespaceConfig {
        NamespaceConfig::new(Some(first), Some(max), Some(1_000)).unwrap()
    }

    fn name() -> Namespace {
        Namespace::new("orders").unwrap()
    }

    fn source(next: u128, fence: u128) -> NamespaceState {
        NamespaceState::create(name(), config(1, 1_000_000))
            .with_fence(fence)
            .skip_to(next)
    }

    /// The start of the first range the destination grants.
    fn first_grant(state: &NamespaceState) -> u64 {
        let request = GrantRequest {
            namespace: name(),
            incarnation: Incarnation::new("a").unwrap(),
            request_id: RequestId::new("r").unwrap(),
            count: 10,
        };
        let owner = Owner::new("svc");
        let mut s = *state;
        loop {
            match decide(&s, &crate::ledger::LedgerView::EMPTY, &request, &owner, 0) {
                Ok(Decision::New { grant, .. }) => return grant.range.start(),
                Ok(Decision::RaiseFence { at_least }) => s = s.with_fence(at_least),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn the_destination_starts_at_the_highest_mark_the_source_knew() {
        // Each of the three can be the highest: next (nothing fenced yet
        // past it), the recorded fence (the usual case: a chunk ahead), and
        // the witness (a raise the source had not recorded, or a source
        // whose storage went back unnoticed).
        for (next, fence, witness, start) in [
            (5_000, 1, 0, 5_000),
            (5_000, 7_000, 7_000, 7_000),
            (5_000, 7_000, 9_000, 9_000),
            (5_000, 7_000, 6_000, 7_000),
        ] {
            let h = Handover::export(&source(next, fence), witness);
            assert_eq!(h.start(), start, "{next} {fence} {witness}");
            let imported = h.import();
            assert_eq!(imported.next(), start);
            assert_eq!(imported.status(), NamespaceStatus::Active);
            assert_eq!(imported.fence(), 1, "its own witness acknowledged nothing");
            assert!(
                u128::from(first_grant(&imported)) >= start.max(witness).max(next),
                "never below anything the source knew"
            );
        }
    }

    #[test]
    fn a_source_restored_after_the_retire_grants_nothing() {
        // The source's storage goes back to before the export (frozen or
        // not, fence below the document's start); it starts against its
        // retired witness: nothing left, so nothing the destination grants.
        let before = source(5_000, 7_000).with_status(NamespaceStatus::Active);
        let h = Handover::export(&before, 7_000);
        let mark = h.retire_mark();
        assert_eq!(mark, u128::from(before.config().max()) + 1);
        let restored = crate::fence::observe(
            &before,
            7_000,
            before.fence(),
            crate::fence::Witnessed::read(mark),
            crate::fence::Phase::Starting,
        );
        assert_eq!(restored.state.remaining(), 0);
        let request = GrantRequest {
            namespace: name(),
            incarnation: Incarnation::new("a").unwrap(),
            request_id: RequestId::new("r").unwrap(),
            count: 1,
        };
        assert!(matches!(
            decide(
                &restored.state,
                &crate::ledger::LedgerView::EMPTY,
                &request,
                &Owner::new("svc"),
                0
            ),
            Err(crate::authority::Refusal::Exhausted { remaining: 0 })
        ));
    }

    #[test]
    fn the_source_is_frozen_by_the_same_commit() {
        let h = Handover::export(&source(10, 20), 20);
        assert_eq!(h.state.status(), NamespaceStatus::Frozen);
    }

    #[test]
    fn an_exhausted_or_nearly_full_namespace_arrives_capped_at_its_end() {
        let c = config(1, 100);
        let full = NamespaceState::create(name(), c).skip_to(101);
        let h = Handover::export(&full, 0);
        assert_eq!(h.import().remaining(), 0);
        let near = NamespaceState::create(name(), c)
            .with_fence(101)
            .skip_to(90);
        let h = Handover::export(&near, 1 << 64);
        assert_eq!((h.witness(), h.start()), (1 << 64, 101));
        let top = NamespaceConfig::new(Some(u64::MAX - 1), Some(u64::MAX), None).unwrap();
        let h = Handover::export(&NamespaceState::create(name(), top), u128::MAX);
        assert_eq!(h.start(), 1 << 64);
    }

    #[test]
    fn parts_are_checked_as_stored_state_is() {
        let c = config(10, 100);
        assert!(Handover::from_parts(name(), c, 10, 10, 0).is_ok());
        assert_eq!(
            Handover::from_parts(name(), c, 9, 10, 0),
            Err(HandoverError::State(StateError::NextOutOfBounds))
        );
        assert_eq!(
            Handover::from_parts(name(), c, 10, 102, 0),
            Err(HandoverError::State(StateError::FenceOutOfBounds))
        );
        assert_eq!(
            Handover::from_parts(name(), c, 10, 10, (1 << 64) + 1),
            Err(HandoverError::WitnessOutOfBounds)
        );
        let back = Handover::from_parts(name(), c, 50, 60, 70).unwrap();
        assert_eq!(
            back,
            Handover::export(
                &NamespaceState::load(name(), c, 50, NamespaceStatus::Active, 60).unwrap(),
                70
            )
        );
    }

    #[test]
    fn formats_are_ours_of_this_version_older_newer_or_foreign() {
        assert_eq!(check_format(FORMAT), Ok(VERSION));
        assert_eq!(check_format("rangeid-namespace-export/1"), Ok(1));
        assert_eq!(
            check_format("rangeid-namespace-export/0"),
            Err(ImportError::Version { found: 0 })
        );
        assert_eq!(
            check_format("rangeid-namespace-export/3"),
            Err(ImportError::Version { found: 3 })
        );
        for foreign in [
            "",
            "rangeid-namespace-export/",
            "rangeid-namespace-export/1.0",
            "rangeid-namespace-export/99999999999",
            "snowflake-export/1",
        ] {
            assert_eq!(
                check_format(foreign),
                Err(ImportError::Foreign),
                "{foreign}"
            );
        }
        assert_eq!(
            ImportError::Version { found: 2 }.code(),
            ErrorCode::ExportUnsupported
        );
    }

    #[cfg(feature = "transfer")]
    mod document {
        use super::*;

        const SETTINGS: Settings = Settings {
            relays: true,
            grants_per_second: Some(50),
            ledger_rows: None,
            sub_ledger_rows: Some(1_000),
        };

        fn doc() -> ExportDocument {
            let h = Handover::export(&source(5_000, 7_000), 9_000);
            ExportDocument::new(
                &h,
                SETTINGS,
                "http://127.0.0.1:8787",
                "2027-01-15T08:00:00Z",
                "ops",
                "to B",
            )
        }

        fn code(r: Result<NamespaceState, ImportError>) -> ErrorCode {
            r.unwrap_err().code()
        }

        #[test]
        fn a_document_round_trips_and_imports_at_the_witness_mark() {
            let d = doc();
            assert!(d.check.starts_with("sha256:") && d.check.len() == 7 + 64);
            let json = serde_json::to_string(&d).unwrap();
            let back: ExportDocument = serde_json::from_str(&json).unwrap();
            assert_eq!(back, d);
            let state = back.import(&name(), Existing::Nothing).unwrap();
            assert_eq!(
                (state.next(), state.status()),
                (9_000, NamespaceStatus::Active)
            );
            assert!(u128::from(first_grant(&state)) >= 9_000);
        }

        #[test]
        fn an_edited_document_is_refused_whatever_field_was_edited() {
            let base = doc();
            let edits: [&dyn Fn(&mut ExportDocument); 12] = [
                &|d| {
                    d.settings = Some(Settings {
                        relays: false,
                        ..SETTINGS
                    })
                },
                &|d| {
                    d.settings = Some(Settings {
                        ledger_rows: Some(5),
                        ..SETTINGS
                    })
                },
                &|d| d.settings = None,
                &|d| d.witness.0 = 5_000,
                &|d| d.start.0 = 5_000,
                &|d| d.next.0 = 1,
                &|d| d.fence.0 = 1,
                &|d| d.max_count = 1,
                &|d| d.max.0 = 6_000,
                &|d| d.source.push('x'),
                &|d| d.reason.clear(),
                &|d| {
                    d.check
                        .replace_range(7..8, if d.check[7..8] == *"0" { "1" } else { "0" })
                },
            ];
            for (i, edit) in edits.iter().enumerate() {
                let mut d = base.clone();
                edit(&mut d);
                assert_eq!(
                    d.import(&name(), Existing::Nothing),
                    Err(ImportError::CheckMismatch),
                    "edit {i}"
                );
            }
        }

        #[test]
        fn even_a_consistent_forgery_must_keep_core_rules() {
            // An edit whose check was made again: the start must still be
            // the one the marks decide, and the marks must be in bounds.
            let mut d = doc();
            d.start.0 = d.next.0;
            d.check = d.digest();
            assert_eq!(
                d.import(&name(), Existing::Nothing),
                Err(ImportError::StartMismatch {
                    found: 5_000,
                    expected: 9_000
                })
            );
            let mut d = doc();
            d.next.0 = 2_000_000;
            d.check = d.digest();
            assert_eq!(
                code(d.import(&name(), Existing::Nothing)),
                ErrorCode::ExportInvalid
            );
            let mut d = doc();
            d.reason = "a\nb".into();
            d.check = d.digest();
            assert_eq!(
                d.import(&name(), Existing::Nothing),
                Err(ImportError::Text { field: "reason" })
            );
        }

        #[test]
        fn another_namespace_twice_and_existing_are_each_their_own_refusal() {
            let d = doc();
            let other = Namespace::new("payments").unwrap();
            assert_eq!(
                d.import(&other, Existing::Nothing),
                Err(ImportError::OtherNamespace { found: name() })
            );
            assert_eq!(
                code(d.import(&other, Existing::Nothing)),
                ErrorCode::ExportNamespaceMismatch
            );
            assert_eq!(
                d.import(&name(), Existing::Imported { check: &d.check }),
                Err(ImportError::AlreadyImported)
            );
            assert_eq!(
                d.import(&name(), Existing::Imported { check: "sha256:00" }),
                Err(ImportError::Exists)
            );
            assert_eq!(
                d.import(&name(), Existing::Created),
                Err(ImportError::Exists)
            );
            assert_eq!(
                code(d.import(&name(), Existing::Created)),
                ErrorCode::NamespaceExists
            );
            // A garbled document is refused before anything else is looked at.
            let mut old = d.clone();
            old.format = "rangeid-namespace-export/0".into();
            assert_eq!(
                old.import(&name(), Existing::Created),
                Err(ImportError::Version { found: 0 })
            );
        }

        #[test]
        fn settings_ride_in_version_2_and_a_version_1_document_still_imports() {
            let d = doc();
            assert_eq!(d.format, FORMAT);
            assert_eq!(d.settings(), SETTINGS);
            let json = serde_json::to_value(&d).unwrap();
            assert_eq!(json["settings"]["relays"], true);
            assert_eq!(json["settings"]["grantsPerSecond"], 50);
            assert!(json["settings"]["ledgerRows"].is_null());
            // What the previous release wrote: version 1, no settings.
            let mut v1 = d.clone();
            v1.format = "rangeid-namespace-export/1".into();
            v1.settings = None;
            v1.check = v1.digest();
            assert!(!serde_json::to_string(&v1).unwrap().contains("settings"));
            assert!(v1.import(&name(), Existing::Nothing).is_ok());
            assert_eq!(v1.settings(), Settings::default());
            // Settings must match the version, and keep core's limits.
            let mut mixed = v1.clone();
            mixed.settings = Some(SETTINGS);
            mixed.check = mixed.digest();
            assert_eq!(
                mixed.import(&name(), Existing::Nothing),
                Err(ImportError::Settings(None))
            );
            let mut bare = d.clone();
            bare.settings = None;
            bare.check = bare.digest();
            assert_eq!(
                bare.import(&name(), Existing::Nothing),
                Err(ImportError::Settings(None))
            );
            let mut bad = d.clone();
            bad.settings = Some(Settings {
                sub_ledger_rows: Some(u64::MAX),
                ..SETTINGS
            });
            bad.check = bad.digest();
            assert_eq!(
                code(bad.import(&name(), Existing::Nothing)),
                ErrorCode::ExportInvalid
            );
        }

        /// A document as the previous release wrote it (format 1), its
        /// check computed apart from this code (Python's hashlib over the
        /// canonical form the OpenAPI document describes).
        const VERSION_1: &str = r#"{"format":"rangeid-namespace-export/1","namespace":"orders","first":"1","max":"1000000","maxCount":1000,"next":"5000","fence":"7000","witness":"9000","start":"9000","source":"http://127.0.0.1:8787","exportedAt":"2026-11-30T08:00:00Z","exportedBy":"ops","reason":"to B","check":"sha256:67e501ec69f9512d99bfe1411595dde51cf64530d98439d061300d7b07b59a8d"}"#;

        #[test]
        fn a_document_the_previous_release_wrote_still_imports() {
            let d: ExportDocument = serde_json::from_str(VERSION_1).unwrap();
            let state = d.import(&name(), Existing::Nothing).unwrap();
            assert_eq!(state.next(), 9_000);
            assert_eq!(d.settings(), Settings::default());
        }

        #[test]
        fn text_fields_are_kept_printable_and_bounded_on_export() {
            let h = Handover::export(&source(10, 20), 20);
            let long = "é".repeat(MAX_TEXT);
            let d = ExportDocument::new(&h, Settings::default(), &long, "t", "ops\u{7}", "why");
            assert!(d.source.len() <= MAX_TEXT && d.source.chars().all(|c| c == 'é'));
            assert_eq!(d.exported_by, "ops");
            assert!(d.handover(&name()).is_ok());
        }
    }
}
