//! A resume sent again gets the outcome the first one had (the AG-UI interrupt rules' fifth,
//! idempotency: a resume with the same thread, interrupt ids, statuses and payloads must be safe
//! to replay). A client whose connection broke while its decisions were being applied cannot
//! know whether they were; it sends them again and is answered `RUN_STARTED`, a `CUSTOM`
//! `eugene.replayed` event naming the run that applied them, and that run's last event
//! (`RUN_FINISHED` or `RUN_ERROR`, its `runId` the new request's, its interrupts without the
//! `subagentRunId`s of a stream the client did not get). Nothing runs again. Since an
//! interrupt's id names its pause ([`crate::interrupt`]), the same answer is the same pause's:
//! answers to a later pause, even on the same call, are other answers.
//!
//! The server keeps, per thread, the last answer it took (as a digest of its canonical JSON, its
//! entries sorted) and its run's last event, for the `max_threads` threads answered last, the
//! others forgotten. An answer the pause refused, or that could not run (`RUN_ERROR`
//! `eugene.resume`, `eugene.conflict`: it changed nothing), is not kept in its place. The same
//! answer sent again while the first is still being applied is answered `RUN_ERROR`
//! `eugene.applying` (send it again to get the outcome). An answer forgotten — the server
//! restarted, the thread is among the oldest — is taken as a new one, which the thread refuses
//! when its pause was already answered (`RUN_ERROR` `eugene.resume`, nothing runs). A new
//! message to the thread does not forget it.
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

/// What the server answered, by thread.
pub(crate) struct Answered {
    max: usize,
    threads: Mutex<Remembered>,
    tickets: AtomicU64,
}

#[derive(Default)]
struct Remembered {
    /// Threads, answered longest ago first.
    order: VecDeque<String>,
    last: HashMap<String, Last>,
}

/// A thread's last answer.
struct Last {
    key: String,
    /// Which taking of it this is.
    ticket: u64,
    /// Its run's last event, `None` while the run goes on.
    ended: Option<Value>,
    run_id: String,
    /// The one before, while this one's run goes on: remembered again if this one is refused.
    before: Option<Box<Last>>,
}

/// What an answer is to the server.
pub(crate) enum Seen {
    /// One it has not taken: run it, and give its last event to [`Answered::ended`] with this
    /// ticket.
    New(u64),
    /// The thread's last answer again, whose run ended in this event (in the run `run_id`).
    Again { ended: Value, run_id: String },
    /// The thread's last answer again, its run still going on.
    Applying,
}

impl Answered {
    /// Remembering at most `max` threads' last answer.
    pub(crate) fn new(max: usize) -> Self {
        Answered {
            max: max.max(1),
            threads: Mutex::new(Remembered::default()),
            tickets: AtomicU64::new(0),
        }
    }

    /// Whether the answer `key` in `thread`, by the run `run_id`, was taken; a new one is
    /// remembered as the thread's last, its run going on.
    pub(crate) fn take(&self, thread: &str, key: &str, run_id: &str) -> Seen {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(last) = threads.last.get(thread).filter(|l| l.key == key) {
            return match &last.ended {
                Some(ended) => Seen::Again {
                    ended: ended.clone(),
                    run_id: last.run_id.clone(),
                },
                None => Seen::Applying,
            };
        }
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed);
        let before = threads.last.remove(thread).map(|mut before| {
            before.before = None;
            Box::new(before)
        });
        let last = Last {
            key: key.to_owned(),
            ticket,
            ended: None,
            run_id: run_id.to_owned(),
            before,
        };
        threads.last.insert(thread.to_owned(), last);
        threads.order.retain(|t| t != thread);
        threads.order.push_back(thread.to_owned());
        while threads.order.len() > self.max {
            if let Some(oldest) = threads.order.pop_front() {
                threads.last.remove(&oldest);
            }
        }
        Seen::New(ticket)
    }

    /// The run of the answer taken with `ticket` in `thread` ended with `event`. An answer that
    /// changed nothing (refused, or not run) is forgotten, and the one before it remembered
    /// again.
    pub(crate) fn ended(&self, thread: &str, ticket: u64, event: &Value) {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        let Some(last) = threads.last.get_mut(thread) else {
            return;
        };
        let nothing = changed_nothing(event);
        if last.ticket == ticket {
            if !nothing {
                last.ended = Some(event.clone());
                last.before = None;
            } else if let Some(before) = last.before.take() {
                *last = *before;
            } else {
                threads.last.remove(thread);
                threads.order.retain(|t| t != thread);
            }
        } else if last.before.as_ref().is_some_and(|b| b.ticket == ticket) {
            match (nothing, last.before.as_mut()) {
                (false, Some(before)) => before.ended = Some(event.clone()),
                _ => last.before = None,
            }
        }
    }
}

/// Whether a run's last event says it changed nothing: its answer refused, or not run.
fn changed_nothing(event: &Value) -> bool {
    event["type"] == "RUN_ERROR"
        && matches!(
            event["code"].as_str(),
            Some("eugene.resume" | "eugene.conflict")
        )
}

/// The `RUN_ERROR` for an answer that cannot run now: another run of its thread is going on.
pub(crate) fn busy() -> Value {
    crate::run::run_error(
        "another run of this thread is going on (another answer to its pause, say): send these \
         answers again when it has ended",
        "eugene.conflict",
    )
}

/// The events after `RUN_STARTED` that answer an answer sent again (`seen` is not
/// [`Seen::New`]), for the request `run_id`.
pub(crate) fn replay(thread: &str, run_id: &str, seen: Seen) -> Vec<Value> {
    match seen {
        Seen::Again {
            mut ended,
            run_id: first,
        } => {
            if ended["type"] == "RUN_FINISHED" {
                ended["runId"] = json!(run_id);
                ended["threadId"] = json!(thread);
                let interrupts = ended["outcome"]["interrupts"].as_array_mut();
                for interrupt in interrupts.into_iter().flatten() {
                    if let Some(interrupt) = interrupt.as_object_mut() {
                        interrupt.remove("subagentRunId");
                    }
                }
            }
            let replayed =
                json!({"type": "CUSTOM", "name": "eugene.replayed", "value": {"runId": first}});
            vec![replayed, ended]
        }
        Seen::Applying | Seen::New(_) => vec![crate::run::run_error(
            "these answers are being applied by another request: send them again to get the \
             outcome",
            "eugene.applying",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(result: &str) -> Value {
        json!({"type": "RUN_FINISHED", "runId": "r1", "result": result})
    }

    fn refused(code: &str) -> Value {
        json!({"type": "RUN_ERROR", "code": code, "message": "no"})
    }

    fn new(seen: Seen) -> u64 {
        match seen {
            Seen::New(ticket) => ticket,
            _ => panic!("not taken as new"),
        }
    }

    #[test]
    fn an_answer_again_while_it_runs_is_applying_then_gets_its_outcome() {
        let answered = Answered::new(8);
        let ticket = new(answered.take("t", "k", "r1"));
        assert!(matches!(answered.take("t", "k", "r2"), Seen::Applying));
        answered.ended("t", ticket, &finished("done"));
        let Seen::Again { ended, run_id } = answered.take("t", "k", "r3") else {
            panic!("not remembered")
        };
        assert_eq!(
            (ended["result"].as_str(), run_id.as_str()),
            (Some("done"), "r1")
        );
        let events = replay("t", "r3", Seen::Again { ended, run_id });
        assert_eq!(events[1]["runId"], "r3");
        // The same key in another thread is another answer.
        assert!(matches!(answered.take("u", "k", "r4"), Seen::New(_)));
    }

    #[test]
    fn an_answer_that_changed_nothing_gives_the_one_before_its_place_back() {
        let answered = Answered::new(8);
        let first = new(answered.take("t", "approve", "r1"));
        answered.ended("t", first, &finished("done"));
        let second = new(answered.take("t", "deny", "r2"));
        answered.ended("t", second, &refused("eugene.resume"));
        assert!(matches!(
            answered.take("t", "approve", "r3"),
            Seen::Again { .. }
        ));
        // A refused first answer leaves nothing behind.
        let only = new(answered.take("u", "x", "r4"));
        answered.ended("u", only, &refused("eugene.conflict"));
        assert!(matches!(answered.take("u", "x", "r5"), Seen::New(_)));
    }

    #[test]
    fn two_answers_at_once_end_in_either_order_and_the_one_applied_is_kept() {
        for a_first in [true, false] {
            let answered = Answered::new(8);
            let a = new(answered.take("t", "a", "r1"));
            let b = new(answered.take("t", "b", "r2"));
            // `a` claimed the pause; `b` could not run.
            if a_first {
                answered.ended("t", a, &finished("a ran"));
                answered.ended("t", b, &refused("eugene.conflict"));
            } else {
                answered.ended("t", b, &refused("eugene.conflict"));
                answered.ended("t", a, &finished("a ran"));
            }
            let Seen::Again { ended, .. } = answered.take("t", "a", "r3") else {
                panic!("the answer applied was lost (a first: {a_first})")
            };
            assert_eq!(ended["result"], "a ran");
        }
    }

    #[test]
    fn at_most_max_threads_are_remembered_those_answered_longest_ago_forgotten() {
        let answered = Answered::new(2);
        for (thread, key) in [("a", "1"), ("b", "1"), ("a", "2"), ("c", "1")] {
            let ticket = new(answered.take(thread, key, "r"));
            answered.ended(thread, ticket, &finished(thread));
        }
        let threads = answered.threads.lock().unwrap();
        assert_eq!(threads.order, ["a", "c"]);
        assert_eq!(threads.last.len(), 2);
    }
}
