//! The namespace listing and the metrics scrape, as state machines the
//! front driver pumps (it only sends the requests and hands back the
//! answers).
//!
//! A listing page reads the registry once: each namespace's summary as its
//! object last pushed it there. A namespace whose object never pushed one
//! is asked for its summary directly, [`LIST_BATCH`] objects at a time; a
//! namespace that answers 404 (it does not exist any more, the registry's
//! entry outlived it) is left out, and any other failure fails the page.
//! The summaries keep the registry's order, whatever order the objects
//! answer in. A metrics scrape ([`Scrape`]) reads every page, in order.

use rangeid_core::Namespace;

use crate::api;
use crate::object::registry::{RegistryPage, RegistryRequest};
use crate::shared::response::{ApiError, HttpReply};

/// How many namespace objects a listing asks for their summary at once.
pub const LIST_BATCH: usize = 32;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Slot {
    /// The summary's JSON text.
    Summary(String),
    /// Its object must be asked.
    Missing(Namespace),
    /// Its object was asked.
    Asked(Namespace),
    /// Its object answered 404: left out.
    Gone,
}

/// One page of the namespace listing being read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    slots: Vec<Slot>,
    next_after: Option<Namespace>,
}

impl Listing {
    /// The page as the registry answered it.
    pub fn new(page: RegistryPage) -> Listing {
        let slots = page
            .namespaces
            .into_iter()
            .map(|l| match l.summary {
                Some(s) => Slot::Summary(s),
                None => Slot::Missing(l.namespace),
            })
            .collect();
        Listing {
            slots,
            next_after: page.next_after,
        }
    }

    /// The next namespaces whose objects to ask for their summary (at most
    /// [`LIST_BATCH`]), once every one asked before has answered; empty
    /// when none is left to ask (or answers are still awaited).
    pub fn next_batch(&mut self) -> Vec<Namespace> {
        if self.slots.iter().any(|s| matches!(s, Slot::Asked(_))) {
            return Vec::new();
        }
        let mut batch = Vec::new();
        for slot in &mut self.slots {
            if batch.len() == LIST_BATCH {
                break;
            }
            if let Slot::Missing(ns) = *slot {
                batch.push(ns);
                *slot = Slot::Asked(ns);
            }
        }
        batch
    }

    /// The object of `ns` answered `reply` to a summary request: `200` is
    /// its summary, `404` leaves it out, anything else is the page's
    /// answer (`Err`). An answer for a namespace not asked changes nothing.
    pub fn handle_summary(&mut self, ns: &Namespace, reply: HttpReply) -> Result<(), HttpReply> {
        let Some(slot) = self
            .slots
            .iter_mut()
            .find(|s| matches!(s, Slot::Asked(n) if n == ns))
        else {
            return Ok(());
        };
        match reply.status {
            200 => *slot = Slot::Summary(reply.body),
            404 => *slot = Slot::Gone,
            _ => return Err(reply),
        }
        Ok(())
    }

    /// The page: its summaries in the registry's order, and the next
    /// page's `after`. `503` while a summary is still unread.
    pub fn finish(self) -> Result<(Vec<String>, Option<Namespace>), HttpReply> {
        let mut summaries = Vec::with_capacity(self.slots.len());
        for slot in self.slots {
            match slot {
                Slot::Summary(s) => summaries.push(s),
                Slot::Gone => {}
                Slot::Missing(ns) | Slot::Asked(ns) => {
                    return Err(ApiError::unavailable(format!(
                        "the listing did not read {ns}'s summary"
                    ))
                    .reply())
                }
            }
        }
        Ok((summaries, self.next_after))
    }
}

/// A metrics scrape: every page of the listing (within the token's scope,
/// `only`), [`api::MAX_LIMIT`] namespaces a page, in name order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scrape {
    only: Option<Vec<Namespace>>,
    after: Option<Namespace>,
    done: bool,
    summaries: Vec<String>,
}

impl Scrape {
    /// A scrape of the namespaces in `only`, or of all.
    pub fn new(only: Option<Vec<Namespace>>) -> Scrape {
        Scrape {
            only,
            after: None,
            done: false,
            summaries: Vec::new(),
        }
    }

    /// The registry request for the next page; `None` once every page was
    /// read.
    pub fn next_page(&self) -> Option<RegistryRequest> {
        (!self.done).then(|| RegistryRequest::List {
            limit: api::MAX_LIMIT,
            after: self.after,
            only: self.only.clone(),
        })
    }

    /// The page read ([`Listing::finish`]). A next page that would not start
    /// past this one's (a registry that does not move on) ends the scrape
    /// with `503` rather than reading it forever.
    pub fn handle_page(
        &mut self,
        (summaries, next_after): (Vec<String>, Option<Namespace>),
    ) -> Result<(), HttpReply> {
        self.summaries.extend(summaries);
        match next_after {
            None => self.done = true,
            Some(next) if self.after.is_some_and(|after| next <= after) => {
                self.done = true;
                return Err(ApiError::unavailable(format!(
                    "the registry's next page after {next} does not move on"
                ))
                .reply());
            }
            Some(next) => self.after = Some(next),
        }
        Ok(())
    }

    /// Every summary read, in name order.
    pub fn finish(self) -> Vec<String> {
        self.summaries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::registry::Listed;

    fn ns(s: &str) -> Namespace {
        Namespace::new(s).unwrap()
    }

    fn listed(name: &str, summary: Option<&str>) -> Listed {
        Listed {
            namespace: ns(name),
            summary: summary.map(str::to_owned),
            updated_at: None,
        }
    }

    fn answer(status: u16, body: &str) -> HttpReply {
        HttpReply {
            status,
            headers: Vec::new(),
            body: body.to_owned(),
        }
    }

    #[test]
    fn pushed_summaries_are_read_from_the_registry_only() {
        let page = RegistryPage {
            namespaces: vec![listed("a", Some("A")), listed("b", Some("B"))],
            next_after: Some(ns("b")),
        };
        let mut l = Listing::new(page);
        assert!(l.next_batch().is_empty(), "no object is asked");
        assert_eq!(
            l.finish().unwrap(),
            (vec!["A".to_owned(), "B".to_owned()], Some(ns("b")))
        );
    }

    #[test]
    fn missing_summaries_are_asked_in_batches_and_keep_the_registry_order() {
        let names: Vec<String> = (0..70).map(|i| format!("n{i:03}")).collect();
        let page = RegistryPage {
            namespaces: names
                .iter()
                .enumerate()
                .map(|(i, n)| listed(n, (i % 10 == 0).then_some("pushed")))
                .collect(),
            next_after: None,
        };
        let mut l = Listing::new(page);
        let mut batches = Vec::new();
        loop {
            let batch = l.next_batch();
            if batch.is_empty() {
                break;
            }
            assert!(l.next_batch().is_empty(), "one batch at a time");
            batches.push(batch.len());
            // The objects answer out of order.
            for n in batch.iter().rev() {
                l.handle_summary(n, answer(200, n.as_str())).unwrap();
            }
        }
        assert_eq!(batches, [LIST_BATCH, 63 - LIST_BATCH]);
        let (summaries, next) = l.finish().unwrap();
        let want: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i % 10 == 0 {
                    "pushed".into()
                } else {
                    n.clone()
                }
            })
            .collect();
        assert_eq!(summaries, want);
        assert_eq!(next, None);
    }

    #[test]
    fn a_namespace_gone_is_left_out_and_a_failure_fails_the_page() {
        let page = RegistryPage {
            namespaces: vec![listed("a", None), listed("b", None), listed("c", None)],
            next_after: None,
        };
        let mut l = Listing::new(page.clone());
        let batch = l.next_batch();
        l.handle_summary(&batch[0], answer(200, "A")).unwrap();
        l.handle_summary(&batch[1], answer(404, "")).unwrap();
        l.handle_summary(&batch[2], answer(200, "C")).unwrap();
        // An answer nobody asked for changes nothing.
        l.handle_summary(&ns("zz"), answer(500, "")).unwrap();
        assert_eq!(l.finish().unwrap().0, vec!["A".to_owned(), "C".to_owned()]);

        let mut l = Listing::new(page.clone());
        let batch = l.next_batch();
        let failed = l.handle_summary(&batch[1], answer(503, "down"));
        assert_eq!(failed.unwrap_err().status, 503);

        // A summary never read is not silently left out.
        let mut l = Listing::new(page);
        let batch = l.next_batch();
        l.handle_summary(&batch[0], answer(200, "A")).unwrap();
        assert_eq!(l.finish().unwrap_err().status, 503);
    }

    #[test]
    fn a_scrape_reads_every_page_in_order() {
        let mut s = Scrape::new(Some(vec![ns("a"), ns("b"), ns("c")]));
        let first = s.next_page().unwrap();
        assert_eq!(
            first,
            RegistryRequest::List {
                limit: api::MAX_LIMIT,
                after: None,
                only: Some(vec![ns("a"), ns("b"), ns("c")]),
            }
        );
        s.handle_page((vec!["A".into(), "B".into()], Some(ns("b"))))
            .unwrap();
        let Some(RegistryRequest::List { after, .. }) = s.next_page() else {
            panic!("a second page");
        };
        assert_eq!(after, Some(ns("b")));
        // A partial last page.
        s.handle_page((vec!["C".into()], None)).unwrap();
        assert_eq!(s.next_page(), None);
        assert_eq!(s.finish(), ["A", "B", "C"]);
    }

    #[test]
    fn a_registry_that_does_not_move_on_ends_the_scrape() {
        let mut s = Scrape::new(None);
        s.handle_page((vec!["A".into()], Some(ns("b")))).unwrap();
        let stuck = s.handle_page((vec![], Some(ns("b"))));
        assert_eq!(stuck.unwrap_err().status, 503);
        assert_eq!(s.next_page(), None);
    }
}
