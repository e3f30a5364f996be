//! Where attachments' bytes are kept: the local disk under `$DATA_DIR/files`, or an
//! S3-compatible bucket, through `object_store`. A file is two objects,
//! `<user>/<id>` and `<user>/<id>.thumb`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use tokio::sync::Notify;

use crate::config::{is_set, Settings};
use crate::db::files::FileRow;

/// The longest one call to the S3 store may take, retries included.
const STORE_PATIENCE: Duration = Duration::from_secs(15);

pub struct FileStore {
    store: Arc<dyn ObjectStore>,
    description: String,
    sweep: Notify,
}

impl FileStore {
    /// The bucket of `[files]` when one is set, else the local disk.
    pub fn from_settings(settings: &Settings) -> anyhow::Result<FileStore> {
        use anyhow::Context;
        let files = &settings.files;
        let (store, description): (Arc<dyn ObjectStore>, String) = if files.s3_bucket.is_empty() {
            let dir = settings.files_dir();
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let local = object_store::local::LocalFileSystem::new_with_prefix(&dir)?;
            (Arc::new(local), format!("local ({})", dir.display()))
        } else {
            use secrecy::ExposeSecret;
            // A store that does not answer fails an upload in seconds, not minutes (the
            // crate's default retries for up to three).
            let retry = object_store::RetryConfig {
                max_retries: 2,
                retry_timeout: STORE_PATIENCE,
                ..Default::default()
            };
            let client = object_store::ClientOptions::new()
                .with_connect_timeout(Duration::from_secs(5))
                .with_timeout(STORE_PATIENCE)
                .with_allow_http(files.s3_endpoint.starts_with("http://"));
            // From the AWS_* environment first (instance credentials when none are set).
            let mut s3 = object_store::aws::AmazonS3Builder::from_env()
                .with_bucket_name(&files.s3_bucket)
                .with_region(&files.s3_region)
                .with_retry(retry)
                .with_client_options(client);
            if !files.s3_endpoint.is_empty() {
                s3 = s3.with_endpoint(&files.s3_endpoint);
            }
            if !files.s3_access_key_id.is_empty() && is_set(&files.s3_secret_access_key) {
                s3 = s3
                    .with_access_key_id(&files.s3_access_key_id)
                    .with_secret_access_key(files.s3_secret_access_key.expose_secret());
            }
            let s3 = s3.build().context("configuring the S3 file store")?;
            (Arc::new(s3), format!("s3 (bucket {})", files.s3_bucket))
        };
        Ok(FileStore {
            store,
            description,
            sweep: Notify::new(),
        })
    }

    pub fn describe(&self) -> &str {
        &self.description
    }

    fn key(file: &FileRow, thumbnail: bool) -> ObjectPath {
        let suffix = if thumbnail { ".thumb" } else { "" };
        ObjectPath::from(format!("{}/{}{suffix}", file.user_id, file.id))
    }

    pub async fn put(&self, file: &FileRow, thumbnail: bool, bytes: Vec<u8>) -> anyhow::Result<()> {
        let key = Self::key(file, thumbnail);
        self.store.put(&key, PutPayload::from(bytes)).await?;
        Ok(())
    }

    /// A file's bytes (or its thumbnail's); `None` when the store has no such object.
    pub async fn get(&self, file: &FileRow, thumbnail: bool) -> anyhow::Result<Option<Bytes>> {
        match self.store.get(&Self::key(file, thumbnail)).await {
            Ok(got) => Ok(Some(got.bytes().await?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn delete_objects(&self, file: &FileRow) -> anyhow::Result<()> {
        for thumbnail in [false, true] {
            match self.store.delete(&Self::key(file, thumbnail)).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Runs the sweep now (a conversation, a file or an account was just deleted).
    pub fn sweep_soon(&self) {
        self.sweep.notify_one();
    }

    /// Waits until [`FileStore::sweep_soon`] is called, or `at_most`.
    pub async fn sweep_asked(&self, at_most: Duration) {
        let _ = tokio::time::timeout(at_most, self.sweep.notified()).await;
    }
}
