//! What every HTTP request body and query string must be before its fields are read, checked
//! once for all routes: the same rules the OpenAPI document states, so that a request the
//! document allows is one the server takes, and one it forbids is refused with one line.

use mnemo_core::error::InvalidInput;
use mnemo_core::scope::validate_key;
use serde_json::{Number, Value};

/// Request fields that name a user, agent, run or session: identifiers are trimmed,
/// non-empty, at most 256 bytes and without control characters, wherever they appear (a
/// body, mem0's `filters`, a query string).
pub const IDENTIFIER_FIELDS: [&str; 4] = ["user_id", "agent_id", "run_id", "session_id"];

/// Request fields that hold a nested record (or null).
const OBJECT_FIELDS: [&str; 4] = ["filters", "source", "settings", "metadata"];

/// Request fields that hold a list of records.
const OBJECT_LISTS: [&str; 2] = ["messages", "memories"];

/// Query parameters that name something, checked as identifiers.
pub const IDENTIFIER_PARAMETERS: [&str; 5] =
    ["user_id", "agent_id", "run_id", "session_id", "space"];

/// Prepares a parsed JSON body for typed reading: it must be an object; a number written
/// with a zero fraction (`10.0`) is the integer it equals, as JSON Schema counts it; every
/// identifier field, at the top and in mem0's `filters`, must be a usable identifier.
pub fn prepare_body(value: &mut Value) -> Result<(), InvalidInput> {
    let Value::Object(fields) = value else {
        return Err(InvalidInput::new("body", "must be a JSON object"));
    };
    check_identifiers(fields, "")?;
    // serde would read an array as a struct, field by field: a nested record is an object.
    for name in OBJECT_FIELDS {
        if fields.get(name).is_some_and(|v| !v.is_object() && !v.is_null()) {
            return Err(InvalidInput::new(name, "must be a JSON object"));
        }
    }
    for name in OBJECT_LISTS {
        if let Some(Value::Array(items)) = fields.get(name)
            && let Some(at) = items.iter().position(|item| !item.is_object())
        {
            return Err(InvalidInput::new(format!("{name}[{at}]"), "must be a JSON object"));
        }
    }
    if let Some(Value::Object(filters)) = fields.get("filters") {
        check_identifiers(filters, "filters.")?;
    }
    integral_numbers(value);
    Ok(())
}

/// Checks the query string's identifier parameters (`a=1&b=2`, still percent-encoded).
pub fn check_query(pairs: &[(String, String)]) -> Result<(), InvalidInput> {
    for (name, value) in pairs {
        if IDENTIFIER_PARAMETERS.contains(&name.as_str()) {
            validate_key(value, name)?;
        }
    }
    Ok(())
}

fn check_identifiers(
    fields: &serde_json::Map<String, Value>,
    prefix: &str,
) -> Result<(), InvalidInput> {
    for name in IDENTIFIER_FIELDS {
        if let Some(Value::String(value)) = fields.get(name) {
            validate_key(value, &format!("{prefix}{name}"))?;
        }
    }
    Ok(())
}

/// Rewrites every number with a zero fraction that fits an integer as that integer.
fn integral_numbers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            if let Some(float) = number.as_f64().filter(|_| number.is_f64())
                && float.fract() == 0.0
            {
                // Casts are exact: the range checks keep them inside the target type.
                if (0.0..1.8e19).contains(&float) {
                    *number = Number::from(float as u64);
                } else if (-9.2e18..0.0).contains(&float) {
                    *number = Number::from(float as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(fields) => fields.values_mut().for_each(integral_numbers),
        Value::String(_) | Value::Bool(_) | Value::Null => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_body_is_an_object_with_usable_identifiers() {
        assert!(prepare_body(&mut json!([])).unwrap_err().to_string().contains("body"));
        assert!(prepare_body(&mut json!("text")).is_err());
        let err = prepare_body(&mut json!({"agent_id": "a\u{9b}"})).unwrap_err();
        assert_eq!(err.to_string(), "agent_id: contains control characters");
        let err = prepare_body(&mut json!({"filters": {"run_id": " "}})).unwrap_err();
        assert_eq!(err.to_string(), "filters.run_id: must not be empty");
        assert!(prepare_body(&mut json!({"user_id": null, "query": "x"})).is_ok());
        let err = prepare_body(&mut json!({"filters": [null, null]})).unwrap_err();
        assert_eq!(err.to_string(), "filters: must be a JSON object");
        let err = prepare_body(&mut json!({"messages": [{"role": "user"}, ["user", "hi"]]}));
        assert_eq!(err.unwrap_err().to_string(), "messages[1]: must be a JSON object");
    }

    #[test]
    fn integral_floats_become_integers_and_others_stay() {
        let mut body = json!({"k": 10.0, "n": -3.0, "x": 0.5, "deep": [{"v": 2.0}], "big": 1e300});
        prepare_body(&mut body).unwrap();
        assert_eq!(body, json!({"k": 10, "n": -3, "x": 0.5, "deep": [{"v": 2}], "big": 1e300}));
        assert!(body["k"].is_u64());
    }

    #[test]
    fn query_identifiers_are_checked_by_name() {
        let pairs = |name: &str, value: &str| vec![(name.to_owned(), value.to_owned())];
        assert!(check_query(&pairs("user_id", "")).is_err());
        assert!(check_query(&pairs("space", "a\u{7}")).is_err());
        assert!(check_query(&pairs("kind", "")).is_ok());
        assert!(check_query(&pairs("run_id", "r1")).is_ok());
    }
}
