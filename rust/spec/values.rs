//! Iceberg single values (partition values, bounds, literals) and the spec's
//! single-value binary serialization (Appendix D).

use serde::{Deserialize, Serialize};

/// One Iceberg value of a primitive type. Temporal values are in the spec's units:
/// date = days since epoch, time/timestamp/timestamptz = microseconds,
/// timestamp_ns/timestamptz_ns = nanoseconds; decimals are the unscaled value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Decimal(i128),
    Date(i32),
    Time(i64),
    Timestamp(i64),
    Timestamptz(i64),
    TimestampNs(i64),
    TimestamptzNs(i64),
    String(String),
    Uuid(u128),
    Fixed(Vec<u8>),
    Binary(Vec<u8>),
}

/// A struct of optional values, e.g. a data file's partition tuple (one per partition field).
pub type StructValue = Vec<Option<Literal>>;
