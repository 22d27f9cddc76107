"""Times as maintenance takes them: a `datetime` with a time zone, or epoch milliseconds."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from icefloe.exceptions import ValidationError

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def epoch_ms(value: datetime | int, name: str) -> int:
    """`value` as milliseconds since the epoch (a datetime's microseconds floored, as Java's
    `DateTimeUtil.microsToMillis` does); a naive datetime is refused (its zone would be a
    guess)."""
    if isinstance(value, bool) or not isinstance(value, (datetime, int)):
        raise ValidationError(
            f"{name} must be a datetime with a time zone or epoch milliseconds, found {value!r}"
        )
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidationError(
                f"{name} must be a datetime with a time zone (e.g. tzinfo=timezone.utc), found {value!r}"
            )
        return ((value - _EPOCH) // timedelta(microseconds=1)) // 1000
    return int(value)
