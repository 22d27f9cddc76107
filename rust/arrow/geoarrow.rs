//! Geospatial columns in Arrow: GeoArrow's `geoarrow.wkb` extension on a binary column, whose
//! metadata names the CRS and, for a geography, the edge algorithm.
//!
//! icefloe writes the Iceberg CRS string as GeoArrow's `crs` (an `srid:N` CRS as `crs_type`
//! `srid`), and reads back any string CRS; a PROJJSON object has no Iceberg type string and is
//! refused with the field's name.

use std::collections::HashMap;

use arrow_schema::Metadata;
use serde_json::{json, Map, Value};

use crate::error::{invalid_data, not_supported, Result};
use crate::spec::{EdgeAlgorithm, PrimitiveType, DEFAULT_CRS};

// Arrow's field metadata keys naming an extension type and holding its parameters.
use arrow_schema::extension::{
    EXTENSION_TYPE_METADATA_KEY as EXTENSION_METADATA_KEY, EXTENSION_TYPE_NAME_KEY as EXTENSION_NAME_KEY,
};
/// GeoArrow's extension type of WKB values.
pub const WKB_EXTENSION: &str = "geoarrow.wkb";

const SRID_PREFIX: &str = "srid:";

/// The extension metadata of a geospatial type (nothing for other types).
pub fn extension_metadata(p: &PrimitiveType) -> Option<HashMap<String, String>> {
    let (crs, edges) = match p {
        PrimitiveType::Geometry { crs } => (crs, None),
        PrimitiveType::Geography { crs, algorithm } => (crs, Some(algorithm.name())),
        _ => return None,
    };
    let mut meta = Map::new();
    match crs.strip_prefix(SRID_PREFIX) {
        Some(code) => {
            meta.insert("crs".into(), json!(code));
            meta.insert("crs_type".into(), json!("srid"));
        }
        None => {
            meta.insert("crs".into(), json!(crs.as_str()));
        }
    }
    if let Some(edges) = edges {
        meta.insert("edges".into(), json!(edges));
    }
    Some(HashMap::from([
        (EXTENSION_NAME_KEY.to_string(), WKB_EXTENSION.to_string()),
        (EXTENSION_METADATA_KEY.to_string(), Value::Object(meta).to_string()),
    ]))
}

/// The geospatial type of an Arrow binary field tagged `geoarrow.wkb`, `None` when untagged.
/// Planar edges (or none named) make a `geometry`, any other edges a `geography`.
pub fn type_from_extension(meta: &Metadata, path: &str) -> Option<Result<PrimitiveType>> {
    if meta.get(EXTENSION_NAME_KEY).map(String::as_str) != Some(WKB_EXTENSION) {
        return None;
    }
    Some(parse_metadata(meta.get(EXTENSION_METADATA_KEY).map(String::as_str), path))
}

fn parse_metadata(text: Option<&str>, path: &str) -> Result<PrimitiveType> {
    let obj = match text.map(str::trim).filter(|t| !t.is_empty()) {
        None => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(o)) => o,
            _ => {
                return Err(invalid_data(format!(
                "expected a JSON object as the {WKB_EXTENSION} metadata of Arrow field '{path}', found {t}"
            )))
            }
        },
    };
    let crs = match (obj.get("crs"), obj.get("crs_type").and_then(Value::as_str)) {
        (None | Some(Value::Null), _) => DEFAULT_CRS.to_string(),
        (Some(Value::String(code)), Some("srid")) => format!("{SRID_PREFIX}{code}"),
        (Some(Value::Number(code)), Some("srid")) => format!("{SRID_PREFIX}{code}"),
        (Some(Value::String(c)), _) if !c.trim().is_empty() => c.trim().to_string(),
        (Some(other), _) => {
            return Err(not_supported(format!(
            "Arrow field '{path}': expected a {WKB_EXTENSION} CRS given as a string (an Iceberg CRS such as \
                 'OGC:CRS84' or 'srid:4326'), found {other}"
        )))
        }
    };
    match obj.get("edges").and_then(Value::as_str) {
        None | Some("planar") => Ok(PrimitiveType::Geometry { crs: crs.into() }),
        Some(edges) => {
            Ok(PrimitiveType::Geography { crs: crs.into(), algorithm: EdgeAlgorithm::parse(edges)? })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_round_trip_through_extension_metadata() {
        let types = [
            PrimitiveType::Geometry { crs: DEFAULT_CRS.into() },
            PrimitiveType::Geometry { crs: "srid:3857".into() },
            PrimitiveType::Geography { crs: "EPSG:4326".into(), algorithm: EdgeAlgorithm::Karney },
        ];
        for t in types {
            let meta = extension_metadata(&t).expect("geospatial");
            assert_eq!(type_from_extension(&meta.into(), "g").expect("tagged").expect("parses"), t);
        }
        assert!(extension_metadata(&PrimitiveType::Binary).is_none());
    }

    #[test]
    fn reads_other_writers_metadata_and_refuses_projjson() {
        let tagged = |m: &str| -> Metadata {
            Metadata::from([
                (EXTENSION_NAME_KEY.to_string(), WKB_EXTENSION.to_string()),
                (EXTENSION_METADATA_KEY.to_string(), m.to_string()),
            ])
        };
        let parse = |m: &str| type_from_extension(&tagged(m), "g").expect("tagged");
        assert_eq!(parse("").expect("empty"), PrimitiveType::Geometry { crs: DEFAULT_CRS.into() });
        assert_eq!(
            parse(r#"{"edges": "spherical"}"#).expect("edges"),
            PrimitiveType::Geography { crs: DEFAULT_CRS.into(), algorithm: EdgeAlgorithm::Spherical }
        );
        assert_eq!(
            parse(r#"{"crs": 4326, "crs_type": "srid"}"#).expect("srid"),
            PrimitiveType::Geometry { crs: "srid:4326".into() }
        );
        let err = parse(r#"{"crs": {"type": "GeographicCRS"}}"#).expect_err("projjson").to_string();
        assert!(err.contains("Arrow field 'g'") && err.contains("GeographicCRS"), "{err}");
        assert!(parse("[1]").is_err());
        assert!(type_from_extension(&Metadata::default(), "g").is_none());
    }
}
