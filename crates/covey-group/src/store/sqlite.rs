//! The embedded SQLite store: one file, every change one transaction.

use super::{EntityRecord, RecordState, Store, StoreError, StoredState};
use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use std::net::Ipv6Addr;
use std::path::{Path, PathBuf};

/// The schema version this code writes.
const SCHEMA_VERSION: i64 = 1;

/// How a member context's reservation is named in the meta table.
const SEQUENCE_KEY: &str = "oscore_sequence ";

/// Entities in an SQLite database file.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Where `covey gateway` keeps its entities unless told otherwise:
    /// `$XDG_DATA_HOME/covey/entities.db`, else `$HOME/.local/share/covey/entities.db`, else
    /// `./covey-entities.db`.
    pub fn default_path() -> PathBuf {
        let data = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/share"))
            });
        match data {
            Some(d) => d.join("covey").join("entities.db"),
            None => PathBuf::from("covey-entities.db"),
        }
    }

    /// Opens (creating if needed) the database at `path`, checks that it is a healthy
    /// SQLite file with this schema, and that it can be written.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref().to_path_buf();
        let conn = Connection::open(&path).map_err(|e| error(&path, e))?;
        // Entities may carry their members' OSCORE secrets: the file is the owner's alone
        // (SQLite gives its -wal and -shm files the same mode). Best effort: a database the
        // process does not own keeps its mode.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        let store = SqliteStore { conn, path };
        store.prepare()?;
        Ok(store)
    }

    /// Opens the database at `path` like [`SqliteStore::open`], first creating its folder.
    pub fn create_at(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Unusable {
                path: path.display().to_string(),
                message: format!("cannot create {}: {e}", dir.display()),
            })?;
        }
        SqliteStore::open(path)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        error(&self.path, e)
    }

    fn prepare(&self) -> Result<(), StoreError> {
        let c = &self.conn;
        c.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| self.err(e))?;
        let check: String = c
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if check != "ok" {
            return Err(StoreError::Corrupt {
                path: self.path.display().to_string(),
                message: check,
            });
        }
        c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .map_err(|e| self.err(e))?;
        c.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(|e| self.err(e))?;
        let version: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::Unusable {
                path: self.path.display().to_string(),
                message: format!(
                    "schema version {version} is newer than this EM understands ({SCHEMA_VERSION})"
                ),
            });
        }
        // Creating the schema (or touching the meta table) proves the file is writable.
        c.execute_batch(
            "BEGIN IMMEDIATE;
             CREATE TABLE IF NOT EXISTS entities(
                 name TEXT PRIMARY KEY NOT NULL,
                 state TEXT NOT NULL CHECK(state IN ('pending','active')),
                 profile TEXT NOT NULL,
                 mcast TEXT,
                 nested TEXT NOT NULL DEFAULT '[]');
             CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
             INSERT INTO meta(key, value) VALUES('opened', '1')
                 ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1;
             PRAGMA user_version = 1;
             COMMIT;",
        )
        .map_err(|e| {
            let _ = c.execute_batch("ROLLBACK");
            self.err(e)
        })?;
        Ok(())
    }

    fn row(
        &self,
        row: &rusqlite::Row<'_>,
    ) -> rusqlite::Result<(String, String, String, Option<String>, String)> {
        Ok((
            row.get(0)?,
            row.get(1)?,
            row.get(2)?,
            row.get(3)?,
            row.get(4)?,
        ))
    }

    fn corrupt(&self, message: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.display().to_string(),
            message,
        }
    }
}

/// Maps an SQLite error: "not a database" and "corrupt" are corruption, the rest unusable.
fn error(path: &Path, e: rusqlite::Error) -> StoreError {
    let path = path.display().to_string();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path,
            message: e.to_string(),
        },
        _ => StoreError::Unusable {
            path,
            message: e.to_string(),
        },
    }
}

fn nested_json(nested: &[String]) -> String {
    serde_json::to_string(nested).unwrap_or_else(|_| "[]".into())
}

impl Store for SqliteStore {
    fn load(&mut self) -> Result<StoredState, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name, state, profile, mcast, nested FROM entities ORDER BY name")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| self.row(r))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        drop(stmt);
        let mut entities = Vec::with_capacity(rows.len());
        for (name, state, profile, mcast, nested) in rows {
            let state = RecordState::from_name(&state)
                .ok_or_else(|| self.corrupt(format!("entity \"{name}\" has state \"{state}\"")))?;
            let group = match mcast {
                Some(text) => Some(text.parse::<Ipv6Addr>().map_err(|_| {
                    self.corrupt(format!("entity \"{name}\" has group address \"{text}\""))
                })?),
                None => None,
            };
            let nested: Vec<String> = serde_json::from_str(&nested)
                .map_err(|e| self.corrupt(format!("entity \"{name}\": nested members: {e}")))?;
            entities.push(EntityRecord {
                name,
                state,
                profile,
                group,
                nested,
            });
        }
        let pool_cursor = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'pool_cursor'",
                [],
                |r| r.get::<_, String>(0),
            )
            .optional()
            .map_err(|e| self.err(e))?
            .and_then(|v| v.parse().ok());
        let mut stmt = self
            .conn
            .prepare("SELECT key, value FROM meta WHERE key LIKE 'oscore_sequence %'")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        drop(stmt);
        let mut sequences = std::collections::BTreeMap::new();
        for (key, value) in rows {
            let limit = value
                .parse()
                .map_err(|_| self.corrupt(format!("{key} is \"{value}\"")))?;
            sequences.insert(key[SEQUENCE_KEY.len()..].to_string(), limit);
        }
        Ok(StoredState {
            entities,
            pool_cursor,
            sequences,
        })
    }

    fn insert(
        &mut self,
        record: &EntityRecord,
        pool_cursor: Option<u32>,
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| error(&path, e))?;
        let inserted = tx.execute(
            "INSERT INTO entities(name, state, profile, mcast, nested) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                record.name,
                record.state.name(),
                record.profile,
                record.group.map(|g| g.to_string()),
                nested_json(&record.nested),
            ],
        );
        if let Err(e) = inserted {
            return Err(match e.sqlite_error_code() {
                Some(ErrorCode::ConstraintViolation) => StoreError::Duplicate(record.name.clone()),
                _ => error(&path, e),
            });
        }
        if let Some(cursor) = pool_cursor {
            tx.execute(
                "INSERT INTO meta(key, value) VALUES('pool_cursor', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![cursor.to_string()],
            )
            .map_err(|e| error(&path, e))?;
        }
        tx.commit().map_err(|e| error(&path, e))
    }

    fn update(&mut self, record: &EntityRecord) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE entities SET state = ?2, profile = ?3, mcast = ?4, nested = ?5 WHERE name = ?1",
                params![
                    record.name,
                    record.state.name(),
                    record.profile,
                    record.group.map(|g| g.to_string()),
                    nested_json(&record.nested),
                ],
            )
            .map_err(|e| self.err(e))?;
        if changed == 0 {
            return Err(StoreError::Missing(record.name.clone()));
        }
        Ok(())
    }

    fn remove(&mut self, name: &str) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM entities WHERE name = ?1", params![name])
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn reserve_sequence(&mut self, key: &str, limit: u64) -> Result<(), StoreError> {
        // synchronous=FULL: the row is on disk when execute returns.
        self.conn
            .execute(
                "INSERT INTO meta(key, value) VALUES(?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![format!("{SEQUENCE_KEY}{key}"), limit.to_string()],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("covey-group-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("entities.db")
    }

    fn record(name: &str, state: RecordState) -> EntityRecord {
        EntityRecord {
            name: name.into(),
            state,
            profile: format!(r#"{{"name":"{name}","er":["coap://[::1]/s"]}}"#),
            group: Some("ff1e::89:1".parse().unwrap()),
            nested: vec!["coap://[::1]/e/x".into()],
        }
    }

    #[test]
    fn survives_reopening() {
        let path = temp("reopen");
        {
            let mut s = SqliteStore::open(&path).unwrap();
            s.insert(&record("a", RecordState::Pending), Some(2))
                .unwrap();
            s.insert(&record("b", RecordState::Active), None).unwrap();
            assert_eq!(
                s.insert(&record("a", RecordState::Active), None),
                Err(StoreError::Duplicate("a".into()))
            );
            s.update(&record("a", RecordState::Active)).unwrap();
            s.remove("b").unwrap();
            s.reserve_sequence("[::1]:5683 45 -", 1 << 20).unwrap();
            s.reserve_sequence("[::1]:5683 45 -", 2 << 20).unwrap();
            assert!(matches!(
                s.update(&record("zz", RecordState::Active)),
                Err(StoreError::Missing(_))
            ));
        }
        let mut s = SqliteStore::open(&path).unwrap();
        let state = s.load().unwrap();
        assert_eq!(state.entities, vec![record("a", RecordState::Active)]);
        assert_eq!(state.pool_cursor, Some(2));
        let reserved: Vec<_> = state.sequences.into_iter().collect();
        assert_eq!(reserved, [("[::1]:5683 45 -".to_string(), 2 << 20)]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(
                mode & 0o777,
                0o600,
                "only its owner reads the secrets it may hold"
            );
        }
    }

    #[test]
    fn corrupt_file_is_an_error() {
        let path = temp("corrupt");
        std::fs::write(&path, vec![0x5a; 8192]).unwrap();
        let err = SqliteStore::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("is corrupt"), "{err}");
        assert!(!err.to_string().contains('\n'));
    }

    #[test]
    fn unopenable_path_is_an_error() {
        let err = SqliteStore::open("/nonexistent-dir/covey/entities.db").unwrap_err();
        assert!(matches!(err, StoreError::Unusable { .. }), "{err}");
    }

    #[test]
    fn create_at_makes_the_folder() {
        let path = temp("create").with_file_name("new/sub/entities.db");
        SqliteStore::create_at(&path).unwrap();
        assert!(path.exists());
    }

    #[test]
    fn default_path_names_covey() {
        assert!(SqliteStore::default_path()
            .to_string_lossy()
            .contains("covey"));
    }
}
