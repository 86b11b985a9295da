//! [`Threads`]: the server's own [`SessionStore`], in memory and bounded. An AG-UI thread is a
//! session: its conversation and, when its last run paused, the paused run's state, which never
//! leaves the server (a client sends decisions, never state).
//!
//! At most `max` threads are kept. Saving a new thread when that many are kept forgets the one
//! saved least recently among those not waiting for a decision, or, when all wait, the one saved
//! least recently.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;

use agent_runtime::{LoadedSession, SessionRecord, SessionStore, StoreError};

/// Threads kept in memory, at most a given number. See the [module docs](self).
#[derive(Debug)]
pub struct Threads {
    max: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// By thread id: version, record, when it was saved (a counter).
    threads: HashMap<String, (u64, SessionRecord, u64)>,
    clock: u64,
}

impl Threads {
    /// A store keeping at most `max` threads (at least one).
    pub fn new(max: usize) -> Self {
        Threads {
            max: max.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// How many threads are kept.
    pub fn len(&self) -> usize {
        self.lock().threads.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl SessionStore for Threads {
    async fn load(&self, id: &str) -> Result<Option<LoadedSession>, StoreError> {
        Ok(self
            .lock()
            .threads
            .get(id)
            .map(|(version, data, _)| LoadedSession {
                data: data.clone(),
                version: *version,
            }))
    }

    async fn save(
        &self,
        id: &str,
        data: &SessionRecord,
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let mut inner = self.lock();
        let found = inner.threads.get(id).map(|(version, ..)| *version);
        if found != expected {
            return Err(StoreError::Conflict {
                id: id.to_owned(),
                expected,
                found: found.unwrap_or(0),
            });
        }
        if found.is_none() && inner.threads.len() >= self.max {
            let oldest = |waiting: bool| {
                inner
                    .threads
                    .iter()
                    .filter(|(_, (_, record, _))| record.paused.is_some() == waiting)
                    .min_by_key(|(_, (.., at))| *at)
                    .map(|(id, _)| id.clone())
            };
            if let Some(forget) = oldest(false).or_else(|| oldest(true)) {
                inner.threads.remove(&forget);
            }
        }
        inner.clock += 1;
        let (version, at) = (found.map_or(1, |v| v + 1), inner.clock);
        inner
            .threads
            .insert(id.to_owned(), (version, data.clone(), at));
        Ok(version)
    }
}
