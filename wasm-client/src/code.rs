//! The JS error codes: one per way a call can fail, stable, mapped
//! one-to-one from core's `IssueError` and the authority's `ErrorCode`.

use rangeid_core::lease::IssueError;
use rangeid_core::ErrorCode;

/// The JS code for an authority error code.
pub fn from_authority(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::NamespaceExhausted => "exhausted",
        ErrorCode::NamespaceFrozen => "frozen",
        ErrorCode::Unavailable => "unavailable",
        other => other.as_str(),
    }
}

/// The JS code for a failed issue.
pub fn from_issue(e: IssueError) -> &'static str {
    match e {
        IssueError::Unavailable => "unavailable",
        IssueError::Frozen => "frozen",
        IssueError::Exhausted => "exhausted",
        IssueError::Failed(code) => from_authority(code),
        IssueError::Closed => "closed",
        IssueError::EmptyBatch => "invalid_request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_documented_ones() {
        assert_eq!(
            from_issue(IssueError::Failed(ErrorCode::Unauthenticated)),
            "unauthenticated"
        );
        assert_eq!(
            from_issue(IssueError::Failed(ErrorCode::Forbidden)),
            "forbidden"
        );
        assert_eq!(
            from_issue(IssueError::Failed(ErrorCode::NamespaceNotFound)),
            "namespace_not_found"
        );
        assert_eq!(
            from_issue(IssueError::Failed(ErrorCode::RequestConflict)),
            "request_conflict"
        );
        assert_eq!(from_issue(IssueError::Exhausted), "exhausted");
        assert_eq!(from_issue(IssueError::Frozen), "frozen");
        assert_eq!(from_issue(IssueError::Closed), "closed");
        assert_eq!(from_issue(IssueError::Unavailable), "unavailable");
    }
}
