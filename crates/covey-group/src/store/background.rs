//! A store whose writes a thread of their own makes durable, so a slow disk (an fsync per
//! transaction) never stalls the driver the EM runs on. Loads and the checks a write makes
//! (a duplicate name, a missing entity) are answered at once from an in-memory view, so the
//! EM reads its own writes; the writes reach the inner store in the order they were made.

use super::{EntityRecord, MemoryStore, Store, StoreError, StoredState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Writes queued for the writer thread at most; beyond, a write waits for room (the bound
/// keeps memory bounded when the disk cannot keep up).
const QUEUE: usize = 1024;

/// One write for the inner store.
#[derive(Debug)]
enum Write {
    Insert(EntityRecord, Option<u32>),
    Update(EntityRecord),
    Remove(String),
    /// A sequence reservation, answered once durable.
    Reserve(String, u64, SyncSender<Result<(), StoreError>>),
}

/// What the writer thread reports back.
#[derive(Debug, Default)]
struct Progress {
    /// Writes made durable so far.
    durable: AtomicU64,
    /// The error that stopped the writer.
    failure: Mutex<Option<StoreError>>,
}

impl Progress {
    fn failure(&self) -> Option<StoreError> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// A [`Store`] that answers from memory and writes to an inner store on a thread.
#[derive(Debug)]
pub struct BackgroundStore {
    view: MemoryStore,
    jobs: Option<SyncSender<Write>>,
    progress: Arc<Progress>,
    accepted: u64,
    writer: Option<JoinHandle<()>>,
}

impl BackgroundStore {
    /// Loads `inner` and starts the thread that writes to it.
    pub fn spawn(mut inner: Box<dyn Store>) -> Result<BackgroundStore, StoreError> {
        let view = MemoryStore::with_state(inner.load()?);
        let (jobs, queue) = sync_channel(QUEUE);
        let progress = Arc::new(Progress::default());
        let report = progress.clone();
        let writer = std::thread::Builder::new()
            .name("covey-em-store".into())
            .spawn(move || write_all(inner, queue, &report))
            .map_err(|e| StoreError::Writer(format!("cannot start: {e}")))?;
        Ok(BackgroundStore {
            view,
            jobs: Some(jobs),
            progress,
            accepted: 0,
            writer: Some(writer),
        })
    }

    fn check(&self) -> Result<(), StoreError> {
        self.progress.failure().map_or(Ok(()), Err)
    }

    fn queue(&mut self, write: Write) -> Result<(), StoreError> {
        let sent = self.jobs.as_ref().map(|jobs| jobs.send(write));
        if !matches!(sent, Some(Ok(()))) {
            return Err(self
                .progress
                .failure()
                .unwrap_or_else(|| StoreError::Writer("stopped".into())));
        }
        self.accepted += 1;
        Ok(())
    }
}

/// The writer thread: applies the writes in order until the queue closes or one fails.
fn write_all(mut inner: Box<dyn Store>, queue: Receiver<Write>, progress: &Progress) {
    let mut durable = 0;
    for write in queue {
        let written = match &write {
            Write::Insert(record, cursor) => inner.insert(record, *cursor),
            Write::Update(record) => inner.update(record),
            Write::Remove(name) => inner.remove(name),
            Write::Reserve(key, limit, answer) => {
                // Not counted among the entity writes: its writer waits for this answer.
                let _ = answer.send(inner.reserve_sequence(key, *limit));
                continue;
            }
        };
        if let Err(e) = written {
            *progress.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            return;
        }
        durable += 1;
        progress.durable.store(durable, Ordering::Release);
    }
}

impl Store for BackgroundStore {
    fn load(&mut self) -> Result<StoredState, StoreError> {
        self.view.load()
    }

    fn insert(
        &mut self,
        record: &EntityRecord,
        pool_cursor: Option<u32>,
    ) -> Result<(), StoreError> {
        self.check()?;
        self.view.insert(record, pool_cursor)?;
        self.queue(Write::Insert(record.clone(), pool_cursor))
    }

    fn update(&mut self, record: &EntityRecord) -> Result<(), StoreError> {
        self.check()?;
        self.view.update(record)?;
        self.queue(Write::Update(record.clone()))
    }

    fn remove(&mut self, name: &str) -> Result<(), StoreError> {
        self.check()?;
        self.view.remove(name)?;
        self.queue(Write::Remove(name.to_string()))
    }

    fn reserve_sequence(&mut self, key: &str, limit: u64) -> Result<(), StoreError> {
        self.check()?;
        let (answer, answered) = sync_channel(1);
        let queued = self
            .jobs
            .as_ref()
            .map(|jobs| jobs.send(Write::Reserve(key.to_string(), limit, answer)));
        let stopped = || {
            self.progress
                .failure()
                .unwrap_or_else(|| StoreError::Writer("stopped".into()))
        };
        if !matches!(queued, Some(Ok(()))) {
            return Err(stopped());
        }
        answered.recv().unwrap_or_else(|_| Err(stopped()))?;
        self.view.reserve_sequence(key, limit)
    }

    fn accepted(&self) -> u64 {
        self.accepted
    }

    fn durable(&mut self) -> Result<u64, StoreError> {
        self.check()?;
        Ok(self.progress.durable.load(Ordering::Acquire))
    }
}

impl Drop for BackgroundStore {
    /// Writes still queued are made durable before the store goes.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RecordState;
    use std::time::{Duration, Instant};

    fn record(name: &str) -> EntityRecord {
        EntityRecord {
            name: name.into(),
            state: RecordState::Active,
            profile: format!(r#"{{"name":"{name}","er":["coap://[::1]/s"]}}"#),
            group: None,
            nested: vec![],
        }
    }

    /// The inner store, shared with the test; `fail_on` makes writes of that name fail.
    #[derive(Debug, Clone, Default)]
    struct Shared {
        store: Arc<Mutex<MemoryStore>>,
        fail_on: Option<&'static str>,
    }

    impl Store for Shared {
        fn load(&mut self) -> Result<StoredState, StoreError> {
            self.store.lock().unwrap().load()
        }
        fn insert(&mut self, r: &EntityRecord, c: Option<u32>) -> Result<(), StoreError> {
            if self.fail_on == Some(r.name.as_str()) {
                return Err(StoreError::Writer("disk full".into()));
            }
            self.store.lock().unwrap().insert(r, c)
        }
        fn update(&mut self, r: &EntityRecord) -> Result<(), StoreError> {
            self.store.lock().unwrap().update(r)
        }
        fn remove(&mut self, name: &str) -> Result<(), StoreError> {
            self.store.lock().unwrap().remove(name)
        }
        fn reserve_sequence(&mut self, key: &str, limit: u64) -> Result<(), StoreError> {
            if self.fail_on == Some(key) {
                return Err(StoreError::Writer("disk full".into()));
            }
            self.store.lock().unwrap().reserve_sequence(key, limit)
        }
    }

    /// A reservation is in the inner store when the call returns, after the entity
    /// writes queued before it, and is not counted among them.
    #[test]
    fn a_sequence_reservation_is_durable_when_it_returns() {
        let inner = Shared {
            fail_on: Some("bad"),
            ..Shared::default()
        };
        let mut s = BackgroundStore::spawn(Box::new(inner.clone())).unwrap();
        s.insert(&record("a"), None).unwrap();
        s.reserve_sequence("m", 1 << 20).unwrap();
        let stored = inner.store.lock().unwrap().load().unwrap();
        assert_eq!(stored.entities.len(), 1);
        assert_eq!(stored.sequences.get("m"), Some(&(1 << 20)));
        assert_eq!(s.load().unwrap().sequences.get("m"), Some(&(1 << 20)));
        assert_eq!(s.accepted(), 1);
        assert_eq!(wait_durable(&mut s), Ok(1));
        assert!(s.reserve_sequence("bad", 5).is_err());
        assert_eq!(s.load().unwrap().sequences.get("bad"), None);
    }

    fn wait_durable(s: &mut BackgroundStore) -> Result<u64, StoreError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let d = s.durable()?;
            if d == s.accepted() || Instant::now() > deadline {
                return Ok(d);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn reads_its_own_writes_and_makes_them_durable_in_order() {
        let inner = Shared::default();
        let mut s = BackgroundStore::spawn(Box::new(inner.clone())).unwrap();
        s.insert(&record("a"), Some(3)).unwrap();
        s.insert(&record("b"), None).unwrap();
        assert_eq!(
            s.insert(&record("a"), None),
            Err(StoreError::Duplicate("a".into()))
        );
        s.remove("b").unwrap();
        assert_eq!(s.update(&record("b")), Err(StoreError::Missing("b".into())));
        let names: Vec<_> = s
            .load()
            .unwrap()
            .entities
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(names, ["a"]);
        assert_eq!(s.accepted(), 3, "refused writes are not queued");
        assert_eq!(wait_durable(&mut s), Ok(3));
        let on_disk = inner.store.lock().unwrap().load().unwrap();
        assert_eq!(on_disk.entities, vec![record("a")]);
        assert_eq!(on_disk.pool_cursor, Some(3));
    }

    #[test]
    fn queued_writes_are_written_before_the_store_goes() {
        let inner = Shared::default();
        let mut s = BackgroundStore::spawn(Box::new(inner.clone())).unwrap();
        for i in 0..100 {
            s.insert(&record(&format!("e{i}")), None).unwrap();
        }
        drop(s);
        assert_eq!(
            inner.store.lock().unwrap().load().unwrap().entities.len(),
            100
        );
    }

    #[test]
    fn a_failed_write_fails_the_store() {
        let inner = Shared {
            fail_on: Some("bad"),
            ..Shared::default()
        };
        let mut s = BackgroundStore::spawn(Box::new(inner)).unwrap();
        s.insert(&record("ok"), None).unwrap();
        s.insert(&record("bad"), None).unwrap();
        let failure = StoreError::Writer("disk full".into());
        assert_eq!(wait_durable(&mut s), Err(failure.clone()));
        assert_eq!(s.insert(&record("later"), None), Err(failure));
    }
}
