"""The catalog's S3 storage settings as Hadoop S3A options, for the half of `icefloe.spark.read`
that Spark's own Parquet source reads.

A table's files on `s3://` or `s3a://` are read by Spark's Parquet source when Spark has an
S3A connector (hadoop-aws and its AWS SDK) on its classpath. Spark then reads them with the
table's storage settings (`s3.endpoint`, `s3.access-key-id`, ...), the same the Rust reader
uses, not with whatever the session's Hadoop configuration holds for S3:

- The settings become per-bucket S3A keys (`fs.s3a.bucket.<bucket>.endpoint`, ...) passed as
  options of that one read. Spark copies a file source's options into the Hadoop
  configuration of that relation only (its file index on the driver, its tasks on the
  executors), so nothing is set on the session: another read, another table or the user's own
  S3A settings are untouched, and a per-bucket key wins over a session-wide `fs.s3a.*` key the
  user may have set for AWS. Per-bucket keys, not plain ones, because S3A reads a bucket's keys
  over the general ones whatever else is configured, and a scan may span buckets.
- `s3://` paths are handed to Spark as `s3a://` (the same object): Hadoop has no `s3` file
  system of its own (on EMR `s3` is EMRFS, which knows nothing of the catalog's settings), and
  a rewritten path needs no session-wide `fs.s3.impl`.
- Hadoop keeps one S3A file system per bucket in each JVM, configured by the first use. So in
  one Spark application a bucket is read by Spark's reader with one set of settings: a later
  scan that needs other settings for a bucket Spark already opened (two catalogs, two
  endpoints, one bucket name) takes the Rust reader, which keeps a client per prefix.

Only settings Spark's reader needs to read what the Rust reader reads are mapped; a setting
that would change what S3A can read and has no S3A key keeps the files on the Rust reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["S3A_SCHEMES", "bucket_of", "s3a_options", "s3a_path"]

S3A_SCHEMES = ("s3", "s3a")
_SIMPLE = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
_TEMPORARY = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
_ANONYMOUS = "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"


def _flag(props: Mapping[str, str], key: str) -> bool | None:
    v = props.get(key)
    return None if v is None else str(v).strip().lower() == "true"


def bucket_of(path: str) -> str:
    """The bucket of an `s3://` or `s3a://` path."""
    return urlsplit(path).netloc


def s3a_path(path: str) -> str:
    """`path` as Spark's S3A file system names it (`s3://b/k` -> `s3a://b/k`)."""
    scheme, sep, rest = path.partition("://")
    return f"s3a://{rest}" if sep and scheme.lower() in S3A_SCHEMES else path


def s3a_options(props: Mapping[str, str], bucket: str) -> dict[str, str] | str:
    """The S3A options (`fs.s3a.bucket.<bucket>.*`) that read `bucket` with the storage
    settings `props` (FileIO properties, PyIceberg's names), or why they cannot."""
    key = f"fs.s3a.bucket.{bucket}."
    out: dict[str, str] = {}
    endpoint = props.get("s3.endpoint")
    if endpoint:
        out[key + "endpoint"] = endpoint
        out[key + "connection.ssl.enabled"] = "false" if endpoint.startswith("http://") else "true"
    region = props.get("s3.region") or props.get("client.region")
    if region:
        out[key + "endpoint.region"] = region
    path_style = _flag(props, "s3.path-style-access")
    virtual = _flag(props, "s3.force-virtual-addressing")
    if virtual is not None:
        path_style = not virtual
    if path_style is not None:
        out[key + "path.style.access"] = "true" if path_style else "false"
    access, secret = props.get("s3.access-key-id"), props.get("s3.secret-access-key")
    token = props.get("s3.session-token")
    if _flag(props, "s3.anonymous"):
        out[key + "aws.credentials.provider"] = _ANONYMOUS
    elif access or secret:
        if not (access and secret):
            return "the storage settings name only one of s3.access-key-id and s3.secret-access-key"
        out[key + "access.key"] = access
        out[key + "secret.key"] = secret
        if token:
            out[key + "session.token"] = token
        out[key + "aws.credentials.provider"] = _TEMPORARY if token else _SIMPLE
    elif token:
        return "the storage settings have s3.session-token without access keys"
    proxy = props.get("s3.proxy-uri")
    if proxy:
        p = urlsplit(proxy)
        if p.username or p.password or not p.hostname:
            return "s3.proxy-uri has credentials or no host (S3A takes a host and port)"
        out[key + "proxy.host"] = p.hostname
        if p.port:
            out[key + "proxy.port"] = str(p.port)
        if p.scheme == "https":
            out[key + "proxy.secured"] = "true"
    return out
