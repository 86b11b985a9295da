//! Sessions: conversations kept under an id, continued by another runtime, paused runs resumed by
//! id, and two writers to one session, in memory and in a redb file on disk.

use std::sync::Arc;

use agent_core::{Permission, PermissionGate, Registry, SkillError, ToolCall, skill};
use agent_llm::{MockProvider, MockReply};
use agent_runtime::{
    AgentError, AgentRuntime, Decision, FinishReason, MemorySessionStore, RedbSessionStore,
    SessionRecord, SessionStore, StoreError,
};
use serde_json::json;

/// Drop a table.
///
/// # Arguments
/// * `name` - The table's name.
#[skill(destructive, register = false)]
async fn drop_table(name: String) -> Result<String, SkillError> {
    Ok(format!("dropped {name}"))
}

fn gated() -> Registry {
    let mut registry = Registry::new();
    registry.add(DropTableSkill);
    registry.with_hook(PermissionGate::with(|_, m| {
        if m.is_destructive {
            Permission::Ask("drops data".into())
        } else {
            Permission::Allow
        }
    }));
    registry
}

async fn a_conversation_continues_in_a_new_runtime(store: &dyn SessionStore) {
    let first = AgentRuntime::new(
        MockProvider::new([MockReply::text("Noted: 42.")]),
        Registry::new(),
    );
    first
        .run("Remember 42.")
        .in_session(store, "s1")
        .await
        .unwrap();
    drop(first);
    let mock = MockProvider::new([MockReply::text("It was 42.")]);
    let second = AgentRuntime::new(mock.clone(), Registry::new());
    let outcome = second
        .run("What was it?")
        .in_session(store, "s1")
        .await
        .unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("It was 42."));
    let sent: Vec<String> = mock.requests()[0]
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect();
    assert_eq!(sent, ["Remember 42.", "Noted: 42.", "What was it?"]);
}

async fn a_paused_session_is_resumed_by_id(store: &dyn SessionStore) {
    let pausing = AgentRuntime::new(
        MockProvider::new([MockReply::tool_calls([ToolCall::new(
            "d1",
            "drop_table",
            json!({"name": "users"}),
        )])]),
        gated(),
    );
    let outcome = pausing
        .run("Drop users.")
        .in_session(store, "ops")
        .await
        .unwrap();
    assert!(matches!(
        outcome.finish,
        FinishReason::AwaitingApproval { .. }
    ));
    // Asking more before deciding is refused, naming what waits.
    let error = pausing
        .run("And more?")
        .in_session(store, "ops")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("`d1` (drop_table)"), "{error}");
    let resuming = AgentRuntime::new(MockProvider::new([MockReply::text("Dropped.")]), gated());
    let done = resuming
        .decide([("d1", Decision::Approve)])
        .in_session(store, "ops")
        .await
        .unwrap();
    assert_eq!(done.final_text.as_deref(), Some("Dropped."));
    let kept = store.load("ops").await.unwrap().unwrap().data;
    assert!(kept.paused.is_none());
    assert!(kept.transcript.iter().any(|m| m.content == "dropped users"));
    // Nothing waits any more.
    let error = resuming
        .decide([("d1", Decision::Approve)])
        .in_session(store, "ops")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("no run waiting"), "{error}");
}

async fn of_two_writers_one_wins_and_the_other_is_told(store: Arc<dyn SessionStore>) {
    let data = |text: &str| SessionRecord {
        transcript: vec![agent_llm::Message::user(text)],
        ..Default::default()
    };
    let v1 = store.save("race", &data("start"), None).await.unwrap();
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            let data = data(&format!("writer {i}"));
            tokio::spawn(async move { store.save("race", &data, Some(v1)).await })
        })
        .collect();
    let mut won = 0;
    for racer in racers {
        match racer.await.unwrap() {
            Ok(version) => {
                won += 1;
                assert_eq!(version, v1 + 1);
            }
            Err(StoreError::Conflict { found, .. }) => assert_eq!(found, v1 + 1),
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(won, 1);
    // A new session saved twice as new: the second is a conflict too.
    store.save("fresh", &data("a"), None).await.unwrap();
    assert!(matches!(
        store.save("fresh", &data("b"), None).await,
        Err(StoreError::Conflict {
            expected: None,
            found: 1,
            ..
        })
    ));
}

#[tokio::test]
async fn in_memory() {
    let store = Arc::new(MemorySessionStore::default());
    a_conversation_continues_in_a_new_runtime(&*store).await;
    a_paused_session_is_resumed_by_id(&*store).await;
    of_two_writers_one_wins_and_the_other_is_told(store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_redb_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("sessions.redb");
    let store = Arc::new(RedbSessionStore::open(&path));
    a_conversation_continues_in_a_new_runtime(&*store).await;
    a_paused_session_is_resumed_by_id(&*store).await;
    of_two_writers_one_wins_and_the_other_is_told(store).await;
    // Another handle on the same file sees the same sessions.
    let other = RedbSessionStore::open(&path);
    assert!(other.load("s1").await.unwrap().is_some());
    assert!(other.load("nobody").await.unwrap().is_none());
}

#[tokio::test]
async fn a_run_whose_session_changed_meanwhile_is_not_saved_over_it() {
    let store = MemorySessionStore::default();
    let mock = MockProvider::new([MockReply::text("first"), MockReply::text("second")]);
    let runtime = AgentRuntime::new(mock, Registry::new());
    runtime.run("one").in_session(&store, "x").await.unwrap();
    // A store that changes the session between this run's load and its save.
    struct Meddling<'a>(&'a MemorySessionStore);
    #[agent_core::async_trait]
    impl SessionStore for Meddling<'_> {
        async fn load(&self, id: &str) -> Result<Option<agent_runtime::LoadedSession>, StoreError> {
            let loaded = self.0.load(id).await?;
            if let Some(l) = &loaded {
                self.0.save(id, &l.data, Some(l.version)).await?;
            }
            Ok(loaded)
        }
        async fn save(
            &self,
            id: &str,
            data: &SessionRecord,
            expected: Option<u64>,
        ) -> Result<u64, StoreError> {
            self.0.save(id, data, expected).await
        }
    }
    let error = runtime
        .run("two")
        .in_session(&Meddling(&store), "x")
        .await
        .unwrap_err();
    assert!(
        matches!(error, AgentError::Session(StoreError::Conflict { .. })),
        "{error}"
    );
    let kept = store.load("x").await.unwrap().unwrap();
    assert_eq!(
        kept.data.transcript.len(),
        2,
        "the other writer's data stays"
    );
}

#[tokio::test]
async fn a_damaged_record_is_reported_not_misread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.redb");
    {
        let db = redb::Database::create(&path).unwrap();
        let write = db.begin_write().unwrap();
        {
            let table: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("sessions");
            let mut table = write.open_table(table).unwrap();
            table.insert("bad", b"{not json".as_slice()).unwrap();
        }
        write.commit().unwrap();
    }
    let store = RedbSessionStore::open(&path);
    assert!(matches!(
        store.load("bad").await,
        Err(StoreError::Corrupt { .. })
    ));
}

/// Counts the tables really dropped, per name (tests run in parallel).
static DROPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Drop a table, counting it.
///
/// # Arguments
/// * `name` - The table's name.
#[skill(destructive, register = false)]
async fn drop_counted(name: String) -> Result<String, SkillError> {
    DROPPED.lock().unwrap().push(name.clone());
    Ok(format!("dropped {name}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_approving_one_pause_run_the_call_once() {
    // Both resumers read the paused session before either writes: the store holds each load
    // until both have loaded.
    struct BothLoadFirst {
        inner: MemorySessionStore,
        barrier: tokio::sync::Barrier,
    }
    #[agent_core::async_trait]
    impl SessionStore for BothLoadFirst {
        async fn load(&self, id: &str) -> Result<Option<agent_runtime::LoadedSession>, StoreError> {
            let loaded = self.inner.load(id).await;
            self.barrier.wait().await;
            loaded
        }
        async fn save(
            &self,
            id: &str,
            data: &SessionRecord,
            expected: Option<u64>,
        ) -> Result<u64, StoreError> {
            self.inner.save(id, data, expected).await
        }
    }
    let registry = || {
        let mut registry = Registry::new();
        registry.add(DropCountedSkill);
        registry.with_hook(PermissionGate::with(|_, _| {
            Permission::Ask("drops data".into())
        }));
        Arc::new(registry)
    };
    let inner = MemorySessionStore::default();
    let pausing = AgentRuntime::from_shared(
        Arc::new(MockProvider::new([MockReply::tool_calls([ToolCall::new(
            "d1",
            "drop_counted",
            json!({"name": "orders"}),
        )])])),
        registry(),
    );
    pausing
        .run("Drop orders.")
        .in_session(&inner, "twice")
        .await
        .unwrap();
    let store = Arc::new(BothLoadFirst {
        inner,
        barrier: tokio::sync::Barrier::new(2),
    });
    let resumers: Vec<_> = (0..2)
        .map(|_| {
            let (store, registry) = (store.clone(), registry());
            tokio::spawn(async move {
                let runtime = AgentRuntime::from_shared(
                    Arc::new(MockProvider::new([MockReply::text("Dropped.")])),
                    registry,
                );
                runtime
                    .decide([("d1", Decision::Approve)])
                    .in_session(&*store, "twice")
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for resumer in resumers {
        outcomes.push(resumer.await.unwrap());
    }
    let conflicts = outcomes
        .iter()
        .filter(|o| matches!(o, Err(AgentError::Session(StoreError::Conflict { .. }))))
        .count();
    assert_eq!(conflicts, 1, "{outcomes:?}");
    assert!(outcomes.iter().any(|o| o.is_ok()));
    let dropped = DROPPED
        .lock()
        .unwrap()
        .iter()
        .filter(|n| *n == "orders")
        .count();
    assert_eq!(dropped, 1, "the approved call ran once");
}

/// The redb file's size is redb's fixed layout, not the sessions: a file holding one tiny session
/// is a few MB, and two hundred more sessions (each saved twice) add a small fraction of that.
#[tokio::test]
async fn a_redb_files_size_is_a_fixed_layout_plus_what_the_sessions_hold() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.redb");
    let store = RedbSessionStore::open(&path);
    let tiny = |text: &str| agent_runtime::SessionRecord {
        transcript: vec![agent_llm::Message::user(text)],
        ..Default::default()
    };
    store.save("first", &tiny("hello"), None).await.unwrap();
    let one = std::fs::metadata(&path).unwrap();
    let (one_len, one_disk) = (one.len(), one.blocks() * 512);
    for i in 0..200 {
        let id = format!("session-{i}");
        let version = store.save(&id, &tiny("hi"), None).await.unwrap();
        store
            .save(&id, &tiny("hi again"), Some(version))
            .await
            .unwrap();
    }
    let many = std::fs::metadata(&path).unwrap();
    let (many_len, many_disk) = (many.len(), many.blocks() * 512);
    eprintln!(
        "one session: {one_len} B ({one_disk} B on disk); 201: {many_len} B ({many_disk} B on disk)"
    );
    assert!(
        one_len < 8 << 20,
        "one tiny session made a {one_len} B file"
    );
    // 200 sessions of ~100 B of JSON each: the file grows by far less than its fixed part.
    assert!(
        many_len < one_len + (1 << 20),
        "{one_len} B for one session, {many_len} B for 201"
    );
    assert_eq!(store.load("session-199").await.unwrap().unwrap().version, 2);
}
