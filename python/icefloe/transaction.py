"""The commit loop's old path: `icefloe.commit.retry` (kept for a release)."""

from icefloe.commit.retry import BuildFn, RetryPolicy, commit_with_retry

__all__ = ["BuildFn", "RetryPolicy", "commit_with_retry"]
