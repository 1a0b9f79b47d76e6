//! Every error type of core is a `core::error::Error` with a message, and a
//! wrapped cause is its source.

use core::error::Error;

use rangeid_core::lease::{ConfigError as LeaseConfigError, LeaseOptions, OptionValue};
use rangeid_core::names::NameError;

fn described<E: Error>(e: E) -> String {
    let text = e.to_string();
    assert!(!text.is_empty(), "{e:?} has no message");
    text
}

#[test]
fn every_error_type_is_an_error() {
    use rangeid_core::authority::{FloorError, Refusal, StateError};
    use rangeid_core::decimal::DecimalError;
    use rangeid_core::ledger::{LimitsError, SpanError};
    use rangeid_core::range::RangeError;
    described(RangeError::Empty);
    described(rangeid_core::lease::IssueError::Unavailable);
    described(LeaseConfigError::MissingNamespace);
    described(SpanError::Empty);
    described(LimitsError::GrantRate);
    described(DecimalError::Empty);
    described(StateError::NextOutOfBounds);
    described(FloorError::AboveMax { max: 1 });
    described(Refusal::Frozen);
    described(NameError::Empty);
    described(rangeid_core::NamespaceConfig::new(Some(0), None, None).unwrap_err());
    let _: rangeid_core::authority::NamespaceConfigError =
        rangeid_core::NamespaceConfig::new(Some(0), None, None).unwrap_err();
}

#[test]
fn a_bad_namespace_names_its_cause() {
    let mut o = LeaseOptions::default();
    let e = o
        .set("namespace", OptionValue::Text("no spaces allowed"))
        .and_then(|_| o.config().map(|_| ()))
        .unwrap_err();
    let source = e.source().expect("the name's own error is the source");
    assert!(source.downcast_ref::<NameError>().is_some(), "{source:?}");
    assert!(described(LeaseConfigError::MissingNamespace).contains("namespace"));
    assert!(LeaseConfigError::MissingNamespace.source().is_none());
}
