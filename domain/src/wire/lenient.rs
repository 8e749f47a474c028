//! Reading the catalog's objects that travel inside messages (a launch's retry policy and
//! dead-letter settings, its filter, a publication's parameter specs and classifier values)
//! from a sender of a newer release: the fields this side does not know are dropped before the
//! object is read.
//!
//! The same types stay strict where operators write them (catalog documents and the API answer
//! an unknown field with an error naming it), so `deny_unknown_fields` stays on them and the
//! wire reads them through these functions instead (`#[serde(deserialize_with = ...)]`). The
//! fields a type knows are the ones its derived `Deserialize` names, so a field added to the
//! type is known here with no list to keep in step.

use serde::{
    Deserialize, Deserializer,
    de::{self, DeserializeOwned, Visitor},
    forward_to_deserialize_any,
};
use serde_json::Value;

/// The field names (and aliases) a struct's derived `Deserialize` accepts.
fn fields_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // The probe ends with an error once it has the names; whether the struct then reads
    // anything does not matter.
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

/// A deserializer that only records the field list a struct asks for.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("field names read"))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// `value` without the fields `T` does not know (when it is an object; anything else is left
/// for `T` to refuse).
fn known<T: DeserializeOwned>(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        let fields = fields_of::<T>();
        map.retain(|key, _| fields.contains(&key.as_str()));
    }
    value
}

/// Reads one object, ignoring the fields `T` does not know.
pub(crate) fn object<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<T, D::Error> {
    T::deserialize(known::<T>(Value::deserialize(d)?)).map_err(de::Error::custom)
}

/// Reads a list of objects, ignoring in each the fields `T` does not know.
pub(crate) fn objects<'de, D: Deserializer<'de>, T: DeserializeOwned>(
    d: D,
) -> Result<Vec<T>, D::Error> {
    Vec::<Value>::deserialize(d)?
        .into_iter()
        .map(|v| T::deserialize(known::<T>(v)).map_err(de::Error::custom))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::RetryPolicy;
    use serde_json::json;

    #[test]
    fn the_field_names_are_those_serde_reads() {
        assert_eq!(
            fields_of::<RetryPolicy>(),
            ["initial_delay", "multiplier", "max_delay", "max_deliveries"]
        );
        assert!(fields_of::<crate::params::ParamSpec>().contains(&"type"));
    }

    #[test]
    fn unknown_fields_are_dropped_and_known_ones_still_checked() {
        let strict: Result<RetryPolicy, _> =
            serde_json::from_value(json!({"multiplier": 3.0, "jitter": "10%"}));
        assert!(strict.is_err(), "the catalog's type stays strict");
        let read: RetryPolicy = object(json!({"multiplier": 3.0, "jitter": "10%"})).expect("read");
        assert!((read.multiplier - 3.0).abs() < f64::EPSILON);
        let bad: Result<RetryPolicy, _> = object(json!({"multiplier": "fast"}));
        assert!(
            bad.is_err(),
            "a known field of the wrong type is still an error"
        );
        let list: Vec<RetryPolicy> =
            objects(json!([{"max_deliveries": 2, "new": {}}, {}])).expect("read");
        assert_eq!(list[0].max_deliveries, 2);
    }
}
