//! The seed's capacity workload: many generators consuming IDs in batches
//! per simulated tick against one namespace, through a warm-up, a steady
//! phase, a burst and a rolling restart, under three sizing policies:
//!
//! - [`Policy::RangeId`]: core's `Lease`, driven as production drives it
//!   (answers encoded with `HttpAnswer`, read with `Reply::from_http`);
//! - [`Policy::Fixed`]: ranges of a fixed size, the next asked for at half;
//! - [`Policy::Leaf`]: Meituan Leaf's segment mode: a double buffer that
//!   loads the next segment once 10 % of the current one is used, with a
//!   step that doubles when a segment lasted under 15 minutes (up to
//!   1,000,000) and halves past 30.
//!
//! It answers an operator's first question: how many grants per second will
//! my namespace see, and what do starts cost?

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rangeid_core::authority::{decide, Decision, NamespaceConfig, NamespaceState};
use rangeid_core::lease::{Lease, LeaseConfig};
use rangeid_core::ledger::LedgerView;
use rangeid_core::protocol::{Capacity, GrantReply, GrantRequest};
use rangeid_core::time::Instant;
use rangeid_core::wire::{ErrorReply, HttpAnswer};
use rangeid_core::{Action, ErrorCode, Incarnation, Namespace, Reply, RequestId, Ticket};

use crate::rng::Rng;

/// How a generator sizes its ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// rangeid's engine with default options.
    RangeId,
    /// A fixed range size, the next asked for when half is used.
    Fixed(u64),
    /// Leaf's segment mode, starting from this step.
    Leaf(u64),
}

impl Policy {
    /// A short name for tables.
    pub fn name(&self) -> String {
        match self {
            Policy::RangeId => "rangeid".into(),
            Policy::Fixed(n) => format!("fixed {n}"),
            Policy::Leaf(s) => format!("Leaf (step {s}, x2 / /2)"),
        }
    }
}

/// The workload.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// Generators running at once.
    pub generators: usize,
    /// IDs per second each consumes in the steady phase.
    pub rate: u64,
    /// The simulated tick, in ms; consumption comes in one batch per tick.
    pub tick_ms: u64,
    /// A grant's round trip, in ms.
    pub rtt_ms: u64,
    /// Simulated seconds in all.
    pub seconds: u64,
    /// The burst: from, to (s) and the rate multiplier.
    pub burst: (u64, u64, u64),
    /// The rolling restart of every generator: from, to (s).
    pub deploy: (u64, u64),
    /// The seed.
    pub seed: u64,
}

impl Workload {
    /// The seed's workload: 500 generators at 20,000 IDs/s each (10M IDs/s
    /// in all), 10 ms ticks, 20 ms round trips, 240 s: a steady phase, a
    /// 2x burst from 60 to 90 s, a rolling restart of every generator from
    /// 150 to 180 s.
    pub fn seed() -> Workload {
        Workload {
            generators: 500,
            rate: 20_000,
            tick_ms: 10,
            rtt_ms: 20,
            seconds: 240,
            burst: (60, 90, 2),
            deploy: (150, 180),
            seed: 1,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Grants in each simulated second.
    pub grants_per_second: Vec<u64>,
    /// IDs issued.
    pub issued: u128,
    /// IDs granted.
    pub granted: u128,
    /// IDs granted and never issued: abandoned by restarts, or held at
    /// the end.
    pub abandoned: u128,
    /// Ticks on which a generator got fewer IDs than it wanted (it waited).
    pub waits: u64,
    /// Generator starts (the first ones and every restart).
    pub starts: u64,
}

impl Outcome {
    /// Mean grants per second over seconds `from..to`.
    pub fn mean_grants(&self, from: u64, to: u64) -> f64 {
        let s = &self.grants_per_second[from as usize..to as usize];
        s.iter().sum::<u64>() as f64 / s.len() as f64
    }

    /// The most grants in any one second.
    pub fn peak_grants(&self) -> u64 {
        self.grants_per_second.iter().copied().max().unwrap_or(0)
    }
}

/// A generator under one policy.
enum Client {
    RangeId(Box<Lease>),
    Simple(Simple),
}

/// Fixed and Leaf: a current range, one more on its way or waiting.
struct Simple {
    incarnation: Incarnation,
    current: Option<(u64, u64)>,
    next: Option<(u64, u64)>,
    in_flight: bool,
    requests: u64,
    step: u64,
    leaf: bool,
    last_fetch_ms: u64,
}

impl Simple {
    fn take(&mut self, want: u64) -> u64 {
        let mut got = 0;
        while got < want {
            if self.current.map_or(true, |c| c.1 == 0) {
                match self.next.take() {
                    Some(n) => self.current = Some(n),
                    None => break,
                }
            }
            let Some((start, left)) = self.current.as_mut() else {
                break;
            };
            let k = (want - got).min(*left);
            *start += k;
            *left -= k;
            got += k;
        }
        got
    }

    /// The size of the next request, if one is due.
    fn due(&mut self, now: u64) -> Option<u64> {
        if self.in_flight || self.next.is_some() {
            return None;
        }
        let left = self.current.map_or(0, |c| c.1);
        let threshold = if self.leaf {
            self.step * 9 / 10
        } else {
            self.step / 2
        };
        if left > threshold {
            return None;
        }
        if self.leaf && self.requests > 0 {
            let lasted = now.saturating_sub(self.last_fetch_ms);
            if lasted < 15 * 60_000 {
                self.step = (self.step * 2).min(1_000_000);
            } else if lasted >= 30 * 60_000 {
                self.step = (self.step / 2).max(1);
            }
        }
        self.last_fetch_ms = now;
        self.in_flight = true;
        self.requests += 1;
        Some(self.step)
    }
}

enum Event {
    /// A request reaches the authority.
    Arrive {
        slot: usize,
        start: u64,
        ticket: Ticket,
        request: GrantRequest,
    },
    /// Its answer reaches the generator.
    Answer {
        slot: usize,
        start: u64,
        ticket: Ticket,
        answer: HttpAnswer,
    },
}

/// Runs `workload` under `policy`.
pub fn run(workload: &Workload, policy: Policy) -> Outcome {
    let ns = Namespace::new("capacity").unwrap_or_else(|_| unreachable!());
    let space = NamespaceConfig::new(None, Some(u64::MAX), Some(NamespaceConfig::MAX_COUNT_LIMIT))
        .unwrap_or_else(|e| panic!("capacity namespace: {e}"));
    // No witness here: the fence is measured by the authority benchmark.
    let mut state = NamespaceState::create(ns, space).unfenced();
    let mut rng = Rng::new(workload.seed);
    let mut out = Outcome {
        grants_per_second: vec![0; workload.seconds as usize],
        ..Outcome::default()
    };
    let mut starts = vec![0u64; workload.generators];
    let start_client = |rng: &mut Rng, now: u64| match policy {
        Policy::RangeId => {
            let lease = Lease::new(LeaseConfig::new(ns), rng.bytes16(), Instant::from_ms(now))
                .unwrap_or_else(|e| panic!("default config: {e}"));
            Client::RangeId(Box::new(lease))
        }
        Policy::Fixed(step) | Policy::Leaf(step) => Client::Simple(Simple {
            incarnation: Incarnation::from_random(rng.bytes16()),
            current: None,
            next: None,
            in_flight: false,
            requests: 0,
            step,
            leaf: matches!(policy, Policy::Leaf(_)),
            last_fetch_ms: now,
        }),
    };
    let mut clients: Vec<Client> = (0..workload.generators)
        .map(|_| start_client(&mut rng, 0))
        .collect();
    out.starts = workload.generators as u64;
    // Restart times for the rolling deploy, one per generator.
    let (d0, d1) = workload.deploy;
    let restart_at: Vec<u64> = (0..workload.generators)
        .map(|_| rng.between(d0 * 1000, d1 * 1000))
        .collect();
    let mut restarted = vec![false; workload.generators];
    let mut queue: BinaryHeap<Reverse<(u64, u64, usize)>> = BinaryHeap::new();
    let mut events: Vec<Option<Event>> = Vec::new();
    let mut seq = 0u64;
    let mut schedule =
        |queue: &mut BinaryHeap<_>, events: &mut Vec<Option<Event>>, at: u64, e: Event| {
            seq += 1;
            events.push(Some(e));
            queue.push(Reverse((at, seq, events.len() - 1)));
        };
    let half = workload.rtt_ms / 2;
    let owner = rangeid_core::authority::Owner::new("capacity");
    let end = workload.seconds * 1000;
    let mut now = 0;
    while now < end {
        // Network and authority.
        while let Some(&Reverse((at, _, i))) = queue.peek() {
            if at > now {
                break;
            }
            queue.pop();
            let Some(event) = events[i].take() else {
                continue;
            };
            match event {
                Event::Arrive {
                    slot,
                    start,
                    ticket,
                    request,
                } => {
                    let answer =
                        match decide(&state, &LedgerView::EMPTY, &request, &owner, now as i64) {
                            Ok(Decision::New {
                                grant, state: next, ..
                            }) => {
                                state = next;
                                out.granted += u128::from(grant.range.count());
                                out.grants_per_second[(now / 1000) as usize] += 1;
                                HttpAnswer::grant(&GrantReply {
                                    grant,
                                    replayed: false,
                                    capacity: Capacity {
                                        max_count: Some(next.config().max_count()),
                                        remaining: Some(next.remaining()),
                                    },
                                })
                            }
                            Err(r) => HttpAnswer::refusal(&r),
                            Ok(Decision::Replay(_) | Decision::RaiseFence { .. }) => {
                                unreachable!("every request is new; no fence")
                            }
                            // A decision this model does not know: answered
                            // as an authority that cannot carry it out.
                            Ok(_) => HttpAnswer::error(&ErrorReply::new(
                                ErrorCode::Unavailable,
                                "the authority cannot carry out this decision",
                            )),
                        };
                    schedule(
                        &mut queue,
                        &mut events,
                        now + half,
                        Event::Answer {
                            slot,
                            start,
                            ticket,
                            answer,
                        },
                    );
                }
                Event::Answer {
                    slot,
                    start,
                    ticket,
                    answer,
                } => {
                    if starts[slot] != start {
                        continue; // for a generator that restarted since
                    }
                    match &mut clients[slot] {
                        Client::RangeId(lease) => {
                            let reply = Reply::from_http(answer.status, &answer.body, None);
                            lease.handle_reply(ticket, &reply, Instant::from_ms(now));
                        }
                        Client::Simple(s) => {
                            s.in_flight = false;
                            if let Reply::Grant(g) =
                                Reply::from_http(answer.status, &answer.body, None)
                            {
                                s.next = Some((g.grant.range.start(), g.grant.range.count()));
                            }
                        }
                    }
                }
            }
        }
        let (b0, b1, factor) = workload.burst;
        let rate = if (b0 * 1000..b1 * 1000).contains(&now) {
            workload.rate * factor
        } else {
            workload.rate
        };
        let want = rate * workload.tick_ms / 1000;
        for slot in 0..workload.generators {
            if !restarted[slot] && now >= restart_at[slot] {
                restarted[slot] = true;
                clients[slot] = start_client(&mut rng, now);
                starts[slot] = now;
                out.starts += 1;
            }
            let got = match &mut clients[slot] {
                Client::RangeId(lease) => {
                    let mut got = 0;
                    while got < want {
                        match lease.take(want - got) {
                            Ok(r) => got += r.count(),
                            Err(_) => break,
                        }
                    }
                    got
                }
                Client::Simple(s) => s.take(want),
            };
            out.issued += u128::from(got);
            if got < want {
                out.waits += 1;
            }
            // Ask for what the policy wants now.
            let start = starts[slot];
            match &mut clients[slot] {
                Client::RangeId(lease) => {
                    while let Some(action) = lease.poll(Instant::from_ms(now)) {
                        if let Action::Send(o) = action {
                            schedule(
                                &mut queue,
                                &mut events,
                                now + half,
                                Event::Arrive {
                                    slot,
                                    start,
                                    ticket: o.ticket,
                                    request: o.request,
                                },
                            );
                        }
                    }
                }
                Client::Simple(s) => {
                    if let Some(count) = s.due(now) {
                        let request = GrantRequest {
                            namespace: ns,
                            incarnation: s.incarnation,
                            request_id: RequestId::numbered(s.requests),
                            count,
                        };
                        let ticket = Ticket::from_parts(s.requests, 0);
                        schedule(
                            &mut queue,
                            &mut events,
                            now + half,
                            Event::Arrive {
                                slot,
                                start,
                                ticket,
                                request,
                            },
                        );
                    }
                }
            }
        }
        now += workload.tick_ms;
    }
    // Every ID granted and not issued is abandoned: by restarts, or held
    // at the end.
    out.abandoned = out.granted - out.issued;
    out
}
