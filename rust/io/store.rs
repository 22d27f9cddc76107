//! Object stores built from FileIO properties (PyIceberg's names), one per storage root and
//! property set, cached per process.
//!
//! Properties are registered for a location prefix (a catalog's warehouse, a table's
//! location with its vended credentials); a location uses the properties of the longest
//! registered prefix it starts with, else none (the provider's standard chain: `AWS_*`,
//! `GOOGLE_*`, `AZURE_*` environment variables, instance metadata). Secret values live only
//! in the registry and in the stores; `Debug` output and errors never show them.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::stream::{BoxStream, StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientOptions, CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload,
    ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutMultipartOptions, PutOptions, PutPayload, PutResult,
    RenameOptions, RetryConfig,
};

use super::location::{Location, Scheme};
use crate::error::{validation, Error, ErrorKind, Result};

/// Property names whose values are secrets (never printed).
const SECRET_KEYS: &[&str] = &[
    "s3.secret-access-key",
    "s3.session-token",
    "gcs.oauth2.token",
    "gcs.service-account-key",
    "adls.account-key",
    "adls.sas-token",
    "adls.client-secret",
    "token",
    "credential",
];

/// True for a property whose value must never be shown.
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    SECRET_KEYS.contains(&k.as_str())
        || k.contains("secret")
        || k.contains("password")
        || k.contains("token")
        || k.ends_with(".key")
        || (k.ends_with("-key") && !k.ends_with("access-key-id"))
}

/// Properties with secret values replaced by `***` (for logs and reprs).
pub fn redacted(props: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    props.iter().map(|(k, v)| (k.clone(), if is_secret(k) { "***".into() } else { v.clone() })).collect()
}

type Props = Arc<BTreeMap<String, String>>;

#[derive(Default)]
struct Registry {
    pid: u32,
    /// (prefix, properties), any order; the longest matching prefix wins.
    prefixes: Vec<(String, Props)>,
    /// (root, properties) -> store.
    stores: HashMap<(String, Props), Arc<dyn ObjectStore>>,
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(Registry { pid: std::process::id(), ..Default::default() }))
}

/// In-memory stores by name (`memory://<name>/...`), shared by the whole process.
fn memory_store(name: &str) -> Arc<dyn ObjectStore> {
    static MEMORY: OnceLock<Mutex<HashMap<String, Arc<InMemory>>>> = OnceLock::new();
    let mut m = MEMORY.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    m.entry(name.to_string()).or_insert_with(|| Arc::new(InMemory::new())).clone()
}

/// Registers FileIO properties for every location under `prefix` (replacing earlier ones for
/// the same prefix). Cheap when nothing changed.
pub fn register(prefix: &str, props: BTreeMap<String, String>) -> Result<()> {
    // Check the prefix now, so a typo fails here rather than on the first read.
    let loc = Location::parse(prefix)?;
    if loc.scheme.is_local() {
        return Ok(());
    }
    let prefix = match_key(prefix).trim_end_matches('/').to_string();
    let mut r = lock();
    match r.prefixes.iter_mut().find(|(p, _)| *p == prefix) {
        Some((_, old)) if **old == props => {}
        Some((_, old)) => *old = Arc::new(props),
        None => r.prefixes.push((prefix, Arc::new(props))),
    }
    Ok(())
}

/// The properties registered for a location (longest prefix), redacted.
pub fn registered_properties(location: &str) -> BTreeMap<String, String> {
    redacted(&properties_for(&lock(), location))
}

fn lock() -> std::sync::MutexGuard<'static, Registry> {
    let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
    // A forked child inherits stores whose connection pools belong to the parent's runtime.
    let pid = std::process::id();
    if r.pid != pid {
        r.pid = pid;
        r.stores.clear();
    }
    r
}

/// The form in which locations are matched against registered prefixes: one spelling per
/// storage, so `s3a://b/k` and `s3n://b/k` find what was registered for `s3://b` (the same
/// objects, as Java's S3FileIO serves all three), and `gcs://` what was registered for `gs://`.
fn match_key(location: &str) -> String {
    match Location::parse(location) {
        Ok(loc) => {
            let scheme = match loc.scheme {
                Scheme::S3 => "s3".to_string(),
                Scheme::Gcs => "gs".to_string(),
                _ => loc.raw_scheme.to_ascii_lowercase(),
            };
            format!("{scheme}://{}/{}", loc.authority, loc.key)
        }
        Err(_) => location.to_string(),
    }
}

fn properties_for(r: &Registry, location: &str) -> Props {
    let location = match_key(location);
    let location = location.trim_end_matches('/');
    r.prefixes
        .iter()
        .filter(|(p, _)| {
            location.starts_with(p.as_str())
                && (location.len() == p.len() || location.as_bytes().get(p.len()) == Some(&b'/'))
        })
        .max_by_key(|(p, _)| p.len())
        .map(|(_, props)| props.clone())
        .unwrap_or_default()
}

/// The object store holding `loc` (not local).
pub fn store_for(location: &str, loc: &Location<'_>) -> Result<Arc<dyn ObjectStore>> {
    if loc.scheme == Scheme::Memory {
        return Ok(memory_store(loc.authority));
    }
    let mut r = lock();
    let props = properties_for(&r, location);
    let key = (loc.root(), props.clone());
    if let Some(s) = r.stores.get(&key) {
        return Ok(s.clone());
    }
    let store = build(loc, &props).map_err(|e| e.with_context("location", loc.root()))?;
    r.stores.insert(key, store.clone());
    Ok(store)
}

fn flag(props: &BTreeMap<String, String>, key: &str) -> Option<bool> {
    props.get(key).map(|v| v.eq_ignore_ascii_case("true"))
}

fn client_options(props: &BTreeMap<String, String>, prefix: &str) -> Result<ClientOptions> {
    let mut opts = ClientOptions::new();
    let secs = |key: &str| -> Result<Option<Duration>> {
        match props.get(&format!("{prefix}.{key}")) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0 && s.is_finite())
                .map(|s| Some(Duration::from_secs_f64(s)))
                .ok_or_else(|| {
                    validation(format!("{prefix}.{key} must be a positive number of seconds, found '{v}'"))
                }),
        }
    };
    if let Some(t) = secs("connect-timeout")? {
        opts = opts.with_connect_timeout(t);
    }
    if let Some(t) = secs("request-timeout")? {
        opts = opts.with_timeout(t);
    }
    Ok(opts)
}

/// Request retries: object_store retries 5xx, throttling (429/503 SlowDown) and connection
/// errors with exponential backoff and jitter; a request that still fails reports its path.
/// Iceberg Java's S3FileIO names tune it: `<prefix>.retry.num-retries` (default 8),
/// `<prefix>.retry.min-wait-ms` (100) and `<prefix>.retry.max-wait-ms` (15000).
fn retry_config(props: &BTreeMap<String, String>, prefix: &str) -> Result<RetryConfig> {
    let num = |key: &str, default: u64| -> Result<u64> {
        match props.get(&format!("{prefix}.retry.{key}")) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<u64>()
                .map_err(|_| validation(format!("{prefix}.retry.{key} must be a whole number, found '{v}'"))),
        }
    };
    let min_wait = Duration::from_millis(num("min-wait-ms", 100)?.max(1));
    let max_wait = Duration::from_millis(num("max-wait-ms", 15_000)?).max(min_wait);
    Ok(RetryConfig {
        max_retries: usize::try_from(num("num-retries", 8)?).unwrap_or(usize::MAX),
        retry_timeout: Duration::from_secs(120),
        backoff: BackoffConfig { init_backoff: min_wait, max_backoff: max_wait, base: 2.0 },
    })
}

fn build(loc: &Location<'_>, props: &BTreeMap<String, String>) -> Result<Arc<dyn ObjectStore>> {
    let prefix = match loc.scheme {
        Scheme::Gcs => "gcs",
        Scheme::Azure => "adls",
        _ => "s3",
    };
    let retry = retry_config(props, prefix)?;
    let built: object_store::Result<Arc<dyn ObjectStore>> = match loc.scheme {
        Scheme::S3 => {
            let mut b = AmazonS3Builder::from_env().with_bucket_name(loc.authority).with_retry(retry.clone());
            let mut opts = client_options(props, "s3")?;
            if let Some(v) = props.get("s3.endpoint") {
                b = b.with_endpoint(v);
                opts = opts.with_allow_http(v.starts_with("http://"));
            }
            if let Some(v) = props.get("s3.region").or_else(|| props.get("client.region")) {
                b = b.with_region(v);
            }
            if let Some(v) = props.get("s3.access-key-id") {
                b = b.with_access_key_id(v);
            }
            if let Some(v) = props.get("s3.secret-access-key") {
                b = b.with_secret_access_key(v);
            }
            if let Some(v) = props.get("s3.session-token") {
                b = b.with_token(v);
            }
            if let Some(path_style) = flag(props, "s3.path-style-access") {
                b = b.with_virtual_hosted_style_request(!path_style);
            }
            if let Some(v) = flag(props, "s3.force-virtual-addressing") {
                b = b.with_virtual_hosted_style_request(v);
            }
            if flag(props, "s3.anonymous") == Some(true) {
                b = b.with_skip_signature(true);
            }
            if let Some(v) = props.get("s3.proxy-uri") {
                b = b.with_proxy_url(v);
            }
            b.with_client_options(opts).build().map(|s| Arc::new(s) as _)
        }
        Scheme::Gcs => {
            let mut b = GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(loc.authority)
                .with_retry(retry.clone());
            let mut opts = client_options(props, "gcs")?;
            if let Some(v) = props.get("gcs.service.host") {
                b = b.with_base_url(v);
                opts = opts.with_allow_http(v.starts_with("http://"));
            }
            if let Some(v) = props.get("gcs.oauth2.token") {
                b = b.with_bearer_token(v);
            }
            if let Some(v) = props.get("gcs.service-account-key") {
                b = b.with_service_account_key(v);
            }
            if let Some(v) = props.get("gcs.service-account-path") {
                b = b.with_service_account_path(v);
            }
            if flag(props, "gcs.anonymous") == Some(true) {
                b = b.with_skip_signature(true);
            }
            b.with_client_options(opts).build().map(|s| Arc::new(s) as _)
        }
        Scheme::Azure => {
            // abfss://<container>@<account>.dfs.core.windows.net/... or az://<container>/...
            let (container, host) = loc.authority.split_once('@').unwrap_or((loc.authority, ""));
            let account = host.split('.').next().filter(|a| !a.is_empty());
            let mut b =
                MicrosoftAzureBuilder::from_env().with_container_name(container).with_retry(retry.clone());
            if let Some(a) = account.or(props.get("adls.account-name").map(String::as_str)) {
                b = b.with_account(a);
            }
            if let Some(v) = props.get("adls.account-key") {
                b = b.with_access_key(v);
            }
            if let Some(v) = props.get("adls.sas-token") {
                let pairs: Vec<(String, String)> =
                    url::form_urlencoded::parse(v.trim_start_matches('?').as_bytes()).into_owned().collect();
                b = b.with_sas_authorization(pairs);
            }
            if let (Some(t), Some(c), Some(s)) =
                (props.get("adls.tenant-id"), props.get("adls.client-id"), props.get("adls.client-secret"))
            {
                b = b.with_client_secret_authorization(c, s, t);
            }
            let mut opts = client_options(props, "adls")?;
            if let Some(v) = props.get("adls.account-host").or_else(|| props.get("adls.endpoint")) {
                b = b.with_endpoint(v.clone());
                opts = opts.with_allow_http(v.starts_with("http://"));
            }
            b.with_client_options(opts).build().map(|s| Arc::new(s) as _)
        }
        Scheme::Memory | Scheme::Local => {
            return Err(Error::new(ErrorKind::Internal, "local and memory locations have no object store"))
        }
    };
    // object_store's configuration errors name keys, never values.
    let store = built
        .map_err(|e| Error::new(ErrorKind::Validation, "cannot configure the object store").with_source(e))?;
    Ok(Arc::new(Resilient { inner: store, wait: retry.backoff.init_backoff }))
}

// ---- what object_store's retries leave to the caller ----

/// Attempts a request gets beyond object_store's own retries when it failed in transit.
const EXTRA_ATTEMPTS: u32 = 4;
/// A request that failed only after this long already went through object_store's retries
/// (a server that stays down): it is not repeated.
const QUICK_FAILURE: Duration = Duration::from_secs(10);

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
type StoreResult<T> = object_store::Result<T>;

/// The store every remote location gets: object_store's, plus what its retries leave out
/// (object_store 0.14):
/// - A list response cut mid-body is not retried: a listing resumes after the last key it
///   returned.
/// - A delete (S3 `DeleteObjects`, a POST) whose response is lost is not retried: deleting
///   again is harmless, so it is (abort and clean-up must not leave objects behind).
/// - A conditional create (`If-None-Match: *`, the commit of a filesystem catalog) that took
///   effect but lost its answer (a 500 after the fact, a connection cut before the answer)
///   is retried by object_store itself and then meets its own object: `412`, which the
///   committer takes for a lost race, deleting the files of a commit that stands and
///   committing them again on top of it. So a create that finds the object reads it back:
///   when it holds exactly the bytes being written, the object is this create's own and
///   the create succeeded. A create still failing in transit is repeated (safe by the same
///   check).
struct Resilient {
    inner: Arc<dyn ObjectStore>,
    /// The first wait between attempts (doubling).
    wait: Duration,
}

impl std::fmt::Debug for Resilient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The inner store's Debug would show its configuration; its Display names the bucket.
        write!(f, "Resilient({})", self.inner)
    }
}

impl std::fmt::Display for Resilient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.inner, f)
    }
}

/// An error of a request that may not have reached the server or whose answer was lost (a
/// transport error: connection refused, reset or closed, a body cut short, a timeout), as
/// opposed to an answer (403, 404, 412, a 5xx object_store already retried).
fn in_transit(e: &object_store::Error) -> bool {
    if !matches!(e, object_store::Error::Generic { .. }) {
        return false;
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if s.downcast_ref::<object_store::client::HttpError>().is_some() {
            return true;
        }
        source = s.source();
    }
    false
}

fn backoff(wait: Duration, attempt: u32) -> Duration {
    wait.saturating_mul(1 << attempt.min(10)).min(Duration::from_secs(5))
}

/// Runs `op` again (up to [`EXTRA_ATTEMPTS`] times, with backoff) while it fails quickly in
/// transit. Only for requests that are safe to repeat.
async fn retrying<T, F, Fut>(wait: Duration, mut op: F) -> StoreResult<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = StoreResult<T>>,
{
    let mut attempt = 0;
    loop {
        let started = Instant::now();
        match op().await {
            Err(e) if attempt < EXTRA_ATTEMPTS && in_transit(&e) && started.elapsed() < QUICK_FAILURE => {
                attempt += 1;
                tokio::time::sleep(backoff(wait, attempt)).await;
            }
            r => return r,
        }
    }
}

fn same_bytes(payload: &PutPayload, got: &Bytes) -> bool {
    if payload.content_length() != got.len() {
        return false;
    }
    let mut at = 0;
    payload.iter().all(|chunk| {
        let same = got[at..at + chunk.len()] == chunk[..];
        at += chunk.len();
        same
    })
}

impl Resilient {
    /// A conditional create (see the type's documentation).
    async fn create(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> StoreResult<PutResult> {
        let mut attempt = 0;
        loop {
            let started = Instant::now();
            match self.inner.put_opts(location, payload.clone(), opts.clone()).await {
                Err(
                    taken @ (object_store::Error::AlreadyExists { .. }
                    | object_store::Error::Precondition { .. }),
                ) => return self.own_object(location, &payload, taken).await,
                Err(e) if attempt < EXTRA_ATTEMPTS && in_transit(&e) && started.elapsed() < QUICK_FAILURE => {
                    attempt += 1;
                    tokio::time::sleep(backoff(self.wait, attempt)).await;
                }
                r => return r,
            }
        }
    }

    /// After a create found `location` taken: success when it holds `payload` (this create's
    /// own object, from an attempt whose answer was lost), else the `taken` error.
    async fn own_object(
        &self,
        location: &Path,
        payload: &PutPayload,
        taken: object_store::Error,
    ) -> StoreResult<PutResult> {
        let read = retrying(self.wait, || async {
            let got = self.inner.get(location).await?;
            let meta = got.meta.clone();
            Ok((meta, got.bytes().await?))
        })
        .await;
        match read {
            Ok((meta, bytes)) if same_bytes(payload, &bytes) => {
                Ok(PutResult { e_tag: meta.e_tag, version: meta.version, extensions: Default::default() })
            }
            Ok(_) | Err(object_store::Error::NotFound { .. }) => Err(taken),
            Err(e) => Err(object_store::Error::Generic {
                store: "icefloe",
                source: format!(
                    "{location} exists, and reading it to tell whether this create made it failed: {e}"
                )
                .into(),
            }),
        }
    }
}

/// A listing that resumes after the last key it returned when a page fails in transit
/// (S3, GCS and Azure list in key order).
fn resumable_list(
    inner: Arc<dyn ObjectStore>,
    wait: Duration,
    prefix: Option<Path>,
    offset: Option<Path>,
) -> BoxStream<'static, StoreResult<ObjectMeta>> {
    fn open(
        inner: &Arc<dyn ObjectStore>,
        prefix: &Option<Path>,
        offset: &Option<Path>,
    ) -> BoxStream<'static, StoreResult<ObjectMeta>> {
        match offset {
            Some(o) => inner.list_with_offset(prefix.as_ref(), o),
            None => inner.list(prefix.as_ref()),
        }
    }
    struct State {
        inner: Arc<dyn ObjectStore>,
        wait: Duration,
        prefix: Option<Path>,
        offset: Option<Path>,
        pages: BoxStream<'static, StoreResult<ObjectMeta>>,
        attempt: u32,
        since: Instant,
        done: bool,
    }
    let pages = open(&inner, &prefix, &offset);
    let state = State { inner, wait, prefix, offset, pages, attempt: 0, since: Instant::now(), done: false };
    futures_util::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        loop {
            match st.pages.next().await {
                None => return None,
                Some(Ok(meta)) => {
                    st.offset = Some(meta.location.clone());
                    st.since = Instant::now();
                    return Some((Ok(meta), st));
                }
                Some(Err(e))
                    if st.attempt < EXTRA_ATTEMPTS
                        && in_transit(&e)
                        && st.since.elapsed() < QUICK_FAILURE =>
                {
                    st.attempt += 1;
                    tokio::time::sleep(backoff(st.wait, st.attempt)).await;
                    st.pages = open(&st.inner, &st.prefix, &st.offset);
                    st.since = Instant::now();
                }
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
            }
        }
    })
    .boxed()
}

// `async_trait`'s expansion of object_store's trait, written out (no proc-macro dependency).
impl ObjectStore for Resilient {
    fn put_opts<'a, 'b, 'f>(
        &'a self,
        location: &'b Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> BoxFuture<'f, StoreResult<PutResult>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(async move {
            if matches!(opts.mode, PutMode::Create) {
                self.create(location, payload, opts).await
            } else {
                self.inner.put_opts(location, payload, opts).await
            }
        })
    }

    fn put_multipart_opts<'a, 'b, 'f>(
        &'a self,
        location: &'b Path,
        opts: PutMultipartOptions,
    ) -> BoxFuture<'f, StoreResult<Box<dyn MultipartUpload>>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        self.inner.put_multipart_opts(location, opts)
    }

    fn get_opts<'a, 'b, 'f>(
        &'a self,
        location: &'b Path,
        options: GetOptions,
    ) -> BoxFuture<'f, StoreResult<GetResult>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        self.inner.get_opts(location, options)
    }

    fn get_ranges<'a, 'b, 'c, 'f>(
        &'a self,
        location: &'b Path,
        ranges: &'c [Range<u64>],
    ) -> BoxFuture<'f, StoreResult<Vec<Bytes>>>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        self.inner.get_ranges(location, ranges)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, StoreResult<Path>>,
    ) -> BoxStream<'static, StoreResult<Path>> {
        let inner = Arc::clone(&self.inner);
        let wait = self.wait;
        locations
            .try_chunks(1_000)
            .map(move |chunk| {
                let inner = Arc::clone(&inner);
                async move {
                    let chunk = chunk.map_err(|e| e.1)?;
                    let out = retrying(wait, || {
                        let paths = chunk.clone();
                        let inner = Arc::clone(&inner);
                        async move {
                            let paths = futures_util::stream::iter(paths.into_iter().map(Ok)).boxed();
                            let mut out: Vec<StoreResult<Path>> = inner.delete_stream(paths).collect().await;
                            // An answer lost in transit: the whole batch again (deleting twice is
                            // harmless); `?` returns that error to `retrying`.
                            if let Some(i) = out.iter().position(|r| matches!(r, Err(e) if in_transit(e))) {
                                out.swap_remove(i)?;
                            }
                            Ok(out)
                        }
                    })
                    .await?;
                    Ok::<_, object_store::Error>(futures_util::stream::iter(out))
                }
            })
            .buffered(20)
            .try_flatten()
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, StoreResult<ObjectMeta>> {
        resumable_list(Arc::clone(&self.inner), self.wait, prefix.cloned(), None)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&Path>,
        offset: &Path,
    ) -> BoxStream<'static, StoreResult<ObjectMeta>> {
        resumable_list(Arc::clone(&self.inner), self.wait, prefix.cloned(), Some(offset.clone()))
    }

    fn list_with_delimiter<'a, 'b, 'f>(
        &'a self,
        prefix: Option<&'b Path>,
    ) -> BoxFuture<'f, StoreResult<ListResult>>
    where
        'a: 'f,
        'b: 'f,
        Self: 'f,
    {
        Box::pin(retrying(self.wait, move || self.inner.list_with_delimiter(prefix)))
    }

    fn copy_opts<'a, 'b, 'c, 'f>(
        &'a self,
        from: &'b Path,
        to: &'c Path,
        options: CopyOptions,
    ) -> BoxFuture<'f, StoreResult<()>>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        self.inner.copy_opts(from, to, options)
    }

    fn rename_opts<'a, 'b, 'c, 'f>(
        &'a self,
        from: &'b Path,
        to: &'c Path,
        options: RenameOptions,
    ) -> BoxFuture<'f, StoreResult<()>>
    where
        'a: 'f,
        'b: 'f,
        'c: 'f,
        Self: 'f,
    {
        self.inner.rename_opts(from, to, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted() {
        let props: BTreeMap<String, String> = [
            ("s3.access-key-id", "AKIA"),
            ("s3.secret-access-key", "hunter2"),
            ("s3.session-token", "tok"),
            ("adls.account-key", "k"),
            ("s3.endpoint", "http://x"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let shown = format!("{:?}", redacted(&props));
        for s in ["hunter2", "\"tok\"", "\"k\""] {
            assert!(!shown.contains(s), "{shown}");
        }
        assert!(shown.contains("AKIA") && shown.contains("http://x"), "{shown}");
    }

    #[test]
    fn a_create_that_finds_its_own_bytes_succeeded() {
        let store = Resilient { inner: Arc::new(InMemory::new()), wait: Duration::from_millis(1) };
        let path = Path::from("t/metadata/v2.metadata.json");
        let create = PutOptions { mode: PutMode::Create, ..Default::default() };
        let put = |bytes: &'static [u8]| {
            super::super::runtime::block_on(store.put_opts(&path, PutPayload::from(bytes), create.clone()))
                .unwrap()
        };
        put(b"mine").unwrap();
        // Again with the same bytes: a retry meeting its own object (the answer was lost).
        put(b"mine").unwrap();
        // Other bytes: another writer's object.
        assert!(matches!(put(b"theirs"), Err(object_store::Error::AlreadyExists { .. })));
    }

    #[test]
    fn only_transport_errors_are_in_transit() {
        use object_store::client::{HttpError, HttpErrorKind};
        let cut = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "cut");
        let transit = object_store::Error::Generic {
            store: "S3",
            source: Box::new(HttpError::new(HttpErrorKind::Interrupted, cut)),
        };
        assert!(in_transit(&transit));
        let answer = object_store::Error::Generic { store: "S3", source: "503 SlowDown".into() };
        assert!(!in_transit(&answer));
        let missing = object_store::Error::NotFound { path: "x".into(), source: "404".into() };
        assert!(!in_transit(&missing));
        let payload = PutPayload::from_iter([Bytes::from_static(b"ab"), Bytes::from_static(b"c")]);
        assert!(same_bytes(&payload, &Bytes::from_static(b"abc")));
        assert!(!same_bytes(&payload, &Bytes::from_static(b"abd")));
        assert!(!same_bytes(&payload, &Bytes::from_static(b"ab")));
    }

    #[test]
    fn retries_follow_s3fileio_properties() {
        let props = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
            kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        let r = retry_config(&props(&[]), "s3").unwrap();
        assert_eq!((r.max_retries, r.backoff.init_backoff), (8, Duration::from_millis(100)));
        let r = retry_config(
            &props(&[
                ("s3.retry.num-retries", "2"),
                ("s3.retry.min-wait-ms", "10"),
                ("s3.retry.max-wait-ms", "50"),
            ]),
            "s3",
        )
        .unwrap();
        assert_eq!(r.max_retries, 2);
        assert_eq!(
            (r.backoff.init_backoff, r.backoff.max_backoff),
            (Duration::from_millis(10), Duration::from_millis(50))
        );
        let e = retry_config(&props(&[("s3.retry.num-retries", "many")]), "s3").unwrap_err();
        assert!(e.to_string().contains("s3.retry.num-retries"), "{e}");
    }

    #[test]
    fn longest_prefix_wins() {
        let p = |v: &str| BTreeMap::from([("s3.region".to_string(), v.to_string())]);
        register("s3://rbkt", p("a")).unwrap();
        register("s3://rbkt/wh/t1", p("b")).unwrap();
        assert_eq!(registered_properties("s3://rbkt/wh/t1/data/x")["s3.region"], "b");
        assert_eq!(registered_properties("s3://rbkt/wh/t10/x")["s3.region"], "a");
        assert!(registered_properties("s3://other/x").is_empty());
    }

    #[test]
    fn one_storage_matches_under_every_scheme_spelling() {
        let p = |v: &str| BTreeMap::from([("s3.region".to_string(), v.to_string())]);
        register("s3a://sbkt/wh/", p("a")).unwrap();
        register("gs://gbkt/wh", p("g")).unwrap();
        for loc in
            ["s3://sbkt/wh/t/f", "s3a://sbkt/wh/t/f", "s3n://sbkt/wh/t/f", "S3://sbkt/wh", "s3://sbkt//wh/x"]
        {
            assert_eq!(registered_properties(loc).get("s3.region").map(String::as_str), Some("a"), "{loc}");
        }
        assert_eq!(registered_properties("gcs://gbkt/wh/x")["s3.region"], "g");
        assert!(registered_properties("s3://sbkt/wh2/x").is_empty());
        assert!(registered_properties("s3://other/wh/x").is_empty());
    }
}
