//! A resume sent again gets the outcome the first one had (the AG-UI interrupt rules' fifth,
//! idempotency: a resume with the same thread, interrupt ids, statuses and payloads must be safe
//! to replay). A client whose connection broke while its decisions were being applied cannot
//! know whether they were; it sends them again and is answered `RUN_STARTED`, a `CUSTOM`
//! `eugene.replayed` event naming the run that applied them, and that run's last event
//! (`RUN_FINISHED` or `RUN_ERROR`, its `runId` the new request's). Nothing runs again.
//!
//! The server keeps, per thread, the last resume it took (as a digest of its canonical JSON, its
//! entries sorted) and its run's last event, for at most `max_threads`
//! threads, the oldest forgotten first; a resume the pause refused (it changed nothing) is not
//! kept in its place. A resume sent again while the first is still being applied is answered
//! `RUN_ERROR` `eugene.resume` (send it again to get the outcome); one forgotten — another
//! resume of the thread was taken after it, the server restarted, the thread is among the
//! oldest — is taken as a new resume, which the thread's pause refuses when it was already
//! answered (`RUN_ERROR`, nothing runs). A new message to the thread does not forget it; but a
//! resume that answers the thread's pause as it is now is applied, never replayed, even when it
//! is the same as the last one (the model made the same call, with the same id and arguments,
//! again).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde_json::{Value, json};

/// What the server answered, by thread.
pub(crate) struct Answered {
    max: usize,
    threads: Mutex<Remembered>,
}

#[derive(Default)]
struct Remembered {
    /// Threads, oldest first.
    order: VecDeque<String>,
    last: HashMap<String, Last>,
}

/// A thread's last resume.
struct Last {
    key: String,
    /// Its run's last event, `None` while the run goes on.
    ended: Option<Value>,
    run_id: String,
    /// The one before, while this one's run goes on: remembered again if this one is refused.
    before: Option<Box<Last>>,
}

/// What a resume is to the server.
pub(crate) enum Seen {
    /// One it has not taken: run it, and [`Answered::ended`] its last event.
    New,
    /// The thread's last resume again, whose run ended in this event (in the run `run_id`).
    Again { ended: Value, run_id: String },
    /// The thread's last resume again, its run still going on.
    Applying,
}

impl Answered {
    /// Remembering at most `max` threads' last resume.
    pub(crate) fn new(max: usize) -> Self {
        Answered {
            max: max.max(1),
            threads: Mutex::new(Remembered::default()),
        }
    }

    /// Whether the resume `key` in `thread`, by the run `run_id`, was taken; a new one is
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
        self.remember(&mut threads, thread, key, run_id);
        Seen::New
    }

    /// Takes the resume `key` in `thread` as new although it was taken before: the thread is
    /// paused again on calls it answers as they are now (a model that made the same call, with
    /// the same id, again), so it answers this pause, not the one before.
    pub(crate) fn renew(&self, thread: &str, key: &str, run_id: &str) {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        self.remember(&mut threads, thread, key, run_id);
    }

    fn remember(&self, threads: &mut Remembered, thread: &str, key: &str, run_id: &str) {
        let before = threads.last.remove(thread).map(|mut before| {
            before.before = None;
            Box::new(before)
        });
        let known = before.is_some();
        let last = Last {
            key: key.to_owned(),
            ended: None,
            run_id: run_id.to_owned(),
            before,
        };
        threads.last.insert(thread.to_owned(), last);
        if !known {
            threads.order.push_back(thread.to_owned());
            while threads.order.len() > self.max {
                if let Some(oldest) = threads.order.pop_front() {
                    threads.last.remove(&oldest);
                }
            }
        }
    }

    /// The run of the resume `key` in `thread` ended with `event`. A resume the thread's pause
    /// refused (`RUN_ERROR` `eugene.resume`: it changed nothing) is forgotten, and the one before
    /// it remembered again.
    pub(crate) fn ended(&self, thread: &str, key: &str, event: &Value) {
        let mut threads = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        let Some(last) = threads.last.get_mut(thread).filter(|l| l.key == key) else {
            return;
        };
        if event["type"] == "RUN_ERROR" && event["code"] == "eugene.resume" {
            match last.before.take() {
                Some(before) => *last = *before,
                None => {
                    threads.last.remove(thread);
                    threads.order.retain(|t| t != thread);
                }
            }
            return;
        }
        last.ended = Some(event.clone());
        last.before = None;
    }
}

/// The events that answer a resume sent again (`seen` is not [`Seen::New`]), for the request
/// `run_id` in `thread`.
pub(crate) fn replay(thread: &str, run_id: &str, seen: Seen) -> Vec<Value> {
    let started = json!({"type": "RUN_STARTED", "threadId": thread, "runId": run_id});
    match seen {
        Seen::Again {
            mut ended,
            run_id: first,
        } => {
            if ended["type"] == "RUN_FINISHED" {
                ended["runId"] = json!(run_id);
            }
            let replayed =
                json!({"type": "CUSTOM", "name": "eugene.replayed", "value": {"runId": first}});
            vec![started, replayed, ended]
        }
        Seen::Applying | Seen::New => vec![
            started,
            crate::run::run_error(
                "these decisions are being applied by another request: send them again to get \
                 the outcome",
                "eugene.resume",
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(result: &str) -> Value {
        json!({"type": "RUN_FINISHED", "runId": "r1", "result": result})
    }

    #[test]
    fn a_resume_again_while_it_runs_is_applying_then_gets_its_outcome() {
        let answered = Answered::new(8);
        assert!(matches!(answered.take("t", "k", "r1"), Seen::New));
        assert!(matches!(answered.take("t", "k", "r2"), Seen::Applying));
        answered.ended("t", "k", &finished("done"));
        let Seen::Again { ended, run_id } = answered.take("t", "k", "r3") else {
            panic!("not remembered")
        };
        assert_eq!(
            (ended["result"].as_str(), run_id.as_str()),
            (Some("done"), "r1")
        );
        let events = replay("t", "r3", Seen::Again { ended, run_id });
        assert_eq!(events[2]["runId"], "r3");
        // The same key in another thread is another resume.
        assert!(matches!(answered.take("u", "k", "r4"), Seen::New));
    }

    #[test]
    fn a_refused_resume_gives_the_one_before_its_place_back() {
        let answered = Answered::new(8);
        answered.take("t", "approve", "r1");
        answered.ended("t", "approve", &finished("done"));
        assert!(matches!(answered.take("t", "deny", "r2"), Seen::New));
        let refused = json!({"type": "RUN_ERROR", "code": "eugene.resume", "message": "no"});
        answered.ended("t", "deny", &refused);
        assert!(matches!(
            answered.take("t", "approve", "r3"),
            Seen::Again { .. }
        ));
        // A refused first resume leaves nothing behind.
        answered.take("u", "x", "r4");
        answered.ended("u", "x", &refused);
        assert!(matches!(answered.take("u", "x", "r5"), Seen::New));
    }

    #[test]
    fn at_most_max_threads_are_remembered_the_oldest_forgotten() {
        let answered = Answered::new(2);
        for thread in ["a", "b", "c"] {
            answered.take(thread, "k", "r");
            answered.ended(thread, "k", &finished(thread));
        }
        let threads = answered.threads.lock().unwrap();
        assert_eq!(threads.order, ["b", "c"]);
        assert_eq!(threads.last.len(), 2);
    }
}
