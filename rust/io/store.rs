//! Object stores built from FileIO properties (PyIceberg's names), one per storage root and
//! property set, cached per process.
//!
//! Properties are registered for a location prefix (a catalog's warehouse, a table's
//! location with its vended credentials); a location uses the properties of the longest
//! registered prefix it starts with, else none (the provider's standard chain: `AWS_*`,
//! `GOOGLE_*`, `AZURE_*` environment variables, instance metadata). Secret values live only
//! in the registry and in the stores; `Debug` output and errors never show them.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::memory::InMemory;
use object_store::{ClientOptions, ObjectStore, RetryConfig};

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
    let prefix = prefix.trim_end_matches('/').to_string();
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

fn properties_for(r: &Registry, location: &str) -> Props {
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

fn retry_config() -> RetryConfig {
    // object_store retries 5xx, throttling (429/503 SlowDown) and connection errors with
    // exponential backoff and jitter; a request that still fails reports its path.
    RetryConfig { max_retries: 8, retry_timeout: Duration::from_secs(120), ..Default::default() }
}

fn build(loc: &Location<'_>, props: &BTreeMap<String, String>) -> Result<Arc<dyn ObjectStore>> {
    let built: object_store::Result<Arc<dyn ObjectStore>> = match loc.scheme {
        Scheme::S3 => {
            let mut b =
                AmazonS3Builder::from_env().with_bucket_name(loc.authority).with_retry(retry_config());
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
                .with_retry(retry_config());
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
                MicrosoftAzureBuilder::from_env().with_container_name(container).with_retry(retry_config());
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
    built.map_err(|e| Error::new(ErrorKind::Validation, "cannot configure the object store").with_source(e))
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
    fn longest_prefix_wins() {
        let p = |v: &str| BTreeMap::from([("s3.region".to_string(), v.to_string())]);
        register("s3://rbkt", p("a")).unwrap();
        register("s3://rbkt/wh/t1", p("b")).unwrap();
        assert_eq!(registered_properties("s3://rbkt/wh/t1/data/x")["s3.region"], "b");
        assert_eq!(registered_properties("s3://rbkt/wh/t10/x")["s3.region"], "a");
        assert!(registered_properties("s3://other/x").is_empty());
    }
}
