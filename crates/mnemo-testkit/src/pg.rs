//! Throwaway schemas on a real PostgreSQL server for tests and benchmarks. The server is named
//! by `MNEMO_TEST_POSTGRES_URL` (`.ci/run` starts one and sets it). Tests that need it are
//! `#[ignore]`d, so a plain `cargo test` reports them as ignored; `.ci/run` runs them with
//! `--ignored`, and they fail, never skip, when the server is not there.

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the test server.
pub const URL_VAR: &str = "MNEMO_TEST_POSTGRES_URL";

/// The test server's URL.
///
/// # Panics
/// When `MNEMO_TEST_POSTGRES_URL` is not set: a test that needs the server fails without it.
pub fn server_url() -> String {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "{URL_VAR} is not set: run `.ci/postgres.sh` to start a local PostgreSQL with \
             pgvector and set it to the URL it prints"
        ),
    }
}

/// A schema of its own on the test server, dropped with everything in it when this is
/// dropped.
#[derive(Debug)]
pub struct Scratch {
    base: String,
    schema: String,
}

impl Scratch {
    /// Creates a fresh, empty schema on the server at `base`.
    pub fn create(base: &str) -> Result<Self, postgres::Error> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let schema =
            format!("t{}_{}_{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let mut client = postgres::Client::connect(base, postgres::NoTls)?;
        client.batch_execute(&format!(
            "CREATE EXTENSION IF NOT EXISTS vector; CREATE SCHEMA {schema}"
        ))?;
        Ok(Self { base: base.to_owned(), schema })
    }

    /// A URL whose connections use this schema (and `public`, where pgvector's type lives).
    pub fn url(&self) -> String {
        let joiner = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{joiner}options=-csearch_path%3D{}%2Cpublic", self.base, self.schema)
    }

    /// The schema's name.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// Every byte of the files holding this schema's tables, indexes and TOAST data, read
    /// after `VACUUM FULL` (which rewrites each table without its dead tuples) and a
    /// checkpoint (which flushes them from shared buffers). The server must run on this
    /// machine, with its data directory readable by this process.
    pub fn raw_bytes(&self) -> Result<Vec<u8>, String> {
        let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
        let mut client = postgres::Client::connect(&self.url(), postgres::NoTls)
            .map_err(|e| fail("connect", &e))?;
        let tables: Vec<String> = client
            .query("SELECT tablename FROM pg_tables WHERE schemaname = $1", &[&self.schema])
            .map_err(|e| fail("list tables", &e))?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(|e| fail("table name", &e))?;
        // VACUUM FULL keeps a deleted row while any transaction that began before the
        // deletion committed might still see it (other tests run in parallel on the same
        // server): wait until every such transaction has ended.
        let started: std::time::SystemTime = client
            .query_one("SELECT clock_timestamp()", &[])
            .map_err(|e| fail("clock", &e))?
            .try_get(0)
            .map_err(|e| fail("clock", &e))?;
        for _ in 0..500 {
            let older: i64 = client
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity
                      WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
                        AND xact_start < $1",
                    &[&started],
                )
                .map_err(|e| fail("activity", &e))?
                .try_get(0)
                .map_err(|e| fail("activity", &e))?;
            if older == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for table in &tables {
            client
                .batch_execute(&format!("VACUUM FULL {}.{table}", self.schema))
                .map_err(|e| fail("vacuum", &e))?;
        }
        client.batch_execute("CHECKPOINT").map_err(|e| fail("checkpoint", &e))?;
        let data_dir: String = client
            .query_one("SELECT current_setting('data_directory')", &[])
            .map_err(|e| fail("data directory", &e))?
            .try_get(0)
            .map_err(|e| fail("data directory", &e))?;
        // The schema's relations, their TOAST tables, and the indexes of both.
        let files: Vec<String> = client
            .query(
                "WITH tables AS (
                     SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = $1
                     UNION
                     SELECT c.reltoastrelid FROM pg_class c
                       JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE n.nspname = $1 AND c.reltoastrelid <> 0
                 )
                 SELECT pg_relation_filepath(oid) FROM tables
                 UNION
                 SELECT pg_relation_filepath(i.indexrelid) FROM pg_index i
                  WHERE i.indrelid IN (SELECT oid FROM tables)",
                &[&self.schema],
            )
            .map_err(|e| fail("list files", &e))?
            .iter()
            .map(|r| r.try_get::<_, Option<String>>(0))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail("file path", &e))?
            .into_iter()
            .flatten()
            .collect();
        let mut bytes = Vec::new();
        for file in files {
            let path = std::path::Path::new(&data_dir).join(&file);
            bytes.extend(std::fs::read(&path).map_err(|e| fail(&path.display().to_string(), &e))?);
            // A relation over 1 GiB continues in `path.1`, `path.2`, ...
            for segment in 1.. {
                match std::fs::read(format!("{}.{segment}", path.display())) {
                    Ok(more) => bytes.extend(more),
                    Err(_) => break,
                }
            }
        }
        Ok(bytes)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.base, postgres::NoTls) {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        }
    }
}
