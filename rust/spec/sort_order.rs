//! Sort orders: `{"order-id", "fields": [{"transform", "source-id", "direction", "null-order"}]}`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::schema::Schema;
use super::transform::Transform;
use crate::error::{invalid_data, validation, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SortDirection {
    #[serde(rename = "asc")]
    Ascending,
    #[serde(rename = "desc")]
    Descending,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NullOrder {
    #[serde(rename = "nulls-first")]
    NullsFirst,
    #[serde(rename = "nulls-last")]
    NullsLast,
}

/// One sort key: a transform of a source column, a direction and a null order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SortField {
    pub transform: Transform,
    #[serde(rename = "source-id")]
    pub source_id: i32,
    pub direction: SortDirection,
    #[serde(rename = "null-order")]
    pub null_order: NullOrder,
}

impl SortField {
    pub fn new(
        source_id: i32,
        transform: Transform,
        direction: SortDirection,
        null_order: NullOrder,
    ) -> Self {
        Self { transform, source_id, direction, null_order }
    }

    /// Ascending with nulls first (Java's default for `asc`).
    pub fn asc(source_id: i32) -> Self {
        Self::new(source_id, Transform::Identity, SortDirection::Ascending, NullOrder::NullsFirst)
    }

    /// Descending with nulls last (Java's default for `desc`).
    pub fn desc(source_id: i32) -> Self {
        Self::new(source_id, Transform::Identity, SortDirection::Descending, NullOrder::NullsLast)
    }
}

impl fmt::Display for SortField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = match self.direction {
            SortDirection::Ascending => "ASC",
            SortDirection::Descending => "DESC",
        };
        let nulls = match self.null_order {
            NullOrder::NullsFirst => "NULLS FIRST",
            NullOrder::NullsLast => "NULLS LAST",
        };
        write!(f, "{}({}) {dir} {nulls}", self.transform, self.source_id)
    }
}

/// A table sort order. Order id 0 is reserved for the unsorted order (no fields).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SortOrder {
    #[serde(rename = "order-id")]
    pub order_id: i32,
    pub fields: Vec<SortField>,
}

impl Default for SortOrder {
    fn default() -> Self {
        Self::unsorted()
    }
}

impl SortOrder {
    pub const UNSORTED_ORDER_ID: i32 = 0;

    pub fn new(order_id: i32, fields: Vec<SortField>) -> Self {
        Self { order_id, fields }
    }

    /// Order 0 with no fields.
    pub fn unsorted() -> Self {
        Self { order_id: Self::UNSORTED_ORDER_ID, fields: Vec::new() }
    }

    pub fn is_unsorted(&self) -> bool {
        self.fields.is_empty()
    }

    /// Same fields, ignoring the order id.
    pub fn same_order(&self, other: &SortOrder) -> bool {
        self.fields == other.fields
    }

    /// Checks source columns exist, are primitive and the transforms apply to them; a
    /// sorted order must not use id 0 and the unsorted order must use it.
    pub fn validate(&self, schema: &Schema) -> Result<()> {
        if self.fields.is_empty() != (self.order_id == Self::UNSORTED_ORDER_ID) {
            return Err(validation(format!(
                "sort order {} has {} field(s): order id 0 is reserved for the unsorted order",
                self.order_id,
                self.fields.len()
            )));
        }
        for f in &self.fields {
            let src = schema.field_by_id(f.source_id).ok_or_else(|| {
                validation(format!(
                    "sort order {} references source column id {} which is not in the schema",
                    self.order_id, f.source_id
                ))
            })?;
            let ty = src.field_type.as_primitive().ok_or_else(|| {
                validation(format!(
                    "sort order {}: cannot sort by non-primitive column '{}'",
                    self.order_id, src.name
                ))
            })?;
            if !matches!(f.transform, Transform::Unknown(_)) && !f.transform.can_transform(ty) {
                return Err(validation(format!(
                    "sort order {}: transform {} cannot be applied to column '{}' of type {ty}",
                    self.order_id, f.transform, src.name
                )));
            }
        }
        Ok(())
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    pub fn from_json(v: &serde_json::Value) -> Result<Self> {
        SortOrder::deserialize(v).map_err(|e| invalid_data(format!("invalid sort order {v}")).with_source(e))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::spec::types::{NestedField, PrimitiveType};

    #[test]
    fn json_round_trip() {
        let j = json!({"order-id": 1, "fields": [
            {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
            {"transform": "day", "source-id": 7, "direction": "desc", "null-order": "nulls-last"}]});
        let o = SortOrder::from_json(&j).unwrap();
        assert_eq!(
            o.fields[1],
            SortField::new(7, Transform::Day, SortDirection::Descending, NullOrder::NullsLast)
        );
        assert_eq!(o.to_json(), j);
        assert_eq!(SortOrder::unsorted().to_json(), json!({"order-id": 0, "fields": []}));
        assert!(SortOrder::from_json(&json!({"order-id": 1, "fields": [{"transform": "identity"}]})).is_err());
        assert_eq!(o.fields[0].to_string(), "identity(2) ASC NULLS FIRST");
    }

    #[test]
    fn validate() {
        let s =
            Schema::new(0, vec![NestedField::required(1, "d", PrimitiveType::Date.into())], vec![]).unwrap();
        assert!(SortOrder::new(1, vec![SortField::asc(1)]).validate(&s).is_ok());
        assert!(SortOrder::new(1, vec![SortField::asc(9)]).validate(&s).is_err());
        assert!(SortOrder::new(0, vec![SortField::asc(1)]).validate(&s).is_err());
        let hour = SortField::new(1, Transform::Hour, SortDirection::Ascending, NullOrder::NullsFirst);
        assert!(SortOrder::new(1, vec![hour]).validate(&s).is_err());
    }
}
