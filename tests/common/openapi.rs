//! Reading the generated OpenAPI document: its schemas by name, and a validator of JSON values
//! against them for the keywords the document uses.

use serde_json::{Value, json};

pub fn spec() -> Value {
    serde_json::from_str(&golf_server::api::openapi_json()).unwrap()
}

pub fn schema<'a>(spec: &'a Value, name: &str) -> &'a Value {
    spec["components"]["schemas"]
        .get(name)
        .unwrap_or_else(|| panic!("the spec has no schema {name}"))
}

/// What `$ref` points to (only component references: the spec has no others).
pub fn resolve<'a>(spec: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(target) => {
            let name = target.strip_prefix("#/components/schemas/").unwrap();
            resolve(spec, self::schema(spec, name))
        }
        None => schema,
    }
}

/// Validates `value` against `schema`, for the keywords the spec uses; panics on any other
/// keyword that constrains values, so that a schema this cannot judge never passes unseen.
pub fn validate(spec: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let schema = resolve(spec, schema);
    let fail = |why: String| Err(format!("{at}: {why} in {value}"));
    for (keyword, rule) in schema.as_object().expect("a schema is an object") {
        match keyword.as_str() {
            "type" => {
                let allowed: Vec<&str> = match rule {
                    Value::String(one) => vec![one.as_str()],
                    other => other
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t.as_str().unwrap())
                        .collect(),
                };
                let actual = match value {
                    Value::Null => "null",
                    Value::Bool(_) => "boolean",
                    // JSON Schema counts a number of integral value (`4.0`) as an integer.
                    Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
                    Value::Number(_) => "number",
                    Value::String(_) => "string",
                    Value::Array(_) => "array",
                    Value::Object(_) => "object",
                };
                let fits = allowed.contains(&actual)
                    || (actual == "integer" && allowed.contains(&"number"));
                if !fits {
                    return fail(format!("a {actual} where {allowed:?} goes"));
                }
            }
            "enum" if !rule.as_array().unwrap().contains(value) => {
                return fail(format!("not one of {rule}"));
            }
            "required" => {
                for field in rule.as_array().unwrap() {
                    if value.get(field.as_str().unwrap()).is_none() {
                        return fail(format!("no {field}"));
                    }
                }
            }
            "properties" => {
                if let Some(object) = value.as_object() {
                    for (field, inner) in object {
                        if let Some(field_schema) = rule.get(field) {
                            validate(spec, field_schema, inner, &format!("{at}.{field}"))?;
                        }
                    }
                }
            }
            "additionalProperties" if rule == &Value::Bool(false) => {
                let known = schema["properties"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default();
                if let Some(extra) = value
                    .as_object()
                    .and_then(|o| o.keys().find(|k| !known.contains_key(*k)))
                {
                    return fail(format!("unknown field {extra}"));
                }
            }
            "items" => {
                for (n, item) in value.as_array().into_iter().flatten().enumerate() {
                    validate(spec, rule, item, &format!("{at}[{n}]"))?;
                }
            }
            "minimum" if value.as_f64().is_some_and(|v| v < rule.as_f64().unwrap()) => {
                return fail(format!("below {rule}"));
            }
            "maximum" if value.as_f64().is_some_and(|v| v > rule.as_f64().unwrap()) => {
                return fail(format!("above {rule}"));
            }
            "minItems" | "maxItems" => {
                let len = value.as_array().map_or(0, Vec::len) as u64;
                let bound = rule.as_u64().unwrap();
                if value.is_array()
                    && ((keyword == "minItems" && len < bound)
                        || (keyword == "maxItems" && len > bound))
                {
                    return fail(format!("{keyword} {bound}"));
                }
            }
            "pattern" => {
                if let Some(text) = value.as_str()
                    && !matches_pattern(rule.as_str().unwrap(), text, at)
                {
                    return fail(format!("not matched by {rule}"));
                }
            }
            "maxLength"
                if value.as_str().is_some_and(|text| {
                    text.chars().count() > usize::try_from(rule.as_u64().unwrap()).unwrap()
                }) =>
            {
                return fail(format!("longer than {rule}"));
            }
            "uniqueItems" if rule == &Value::Bool(true) => {
                let items = value.as_array().cloned().unwrap_or_default();
                if items
                    .iter()
                    .enumerate()
                    .any(|(n, item)| items[..n].contains(item))
                {
                    return fail("an item twice".to_owned());
                }
            }
            "oneOf" => {
                let matching = rule
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|alternative| validate(spec, alternative, value, at).is_ok())
                    .count();
                if matching != 1 {
                    return fail(format!("{matching} alternatives of a oneOf match"));
                }
                if let Some(discriminator) = schema.get("discriminator") {
                    let property = discriminator["propertyName"].as_str().unwrap();
                    let target = &discriminator["mapping"][value[property].as_str().unwrap_or("")];
                    let Some(target) = target.as_str() else {
                        return fail(format!("a {property} the discriminator does not map"));
                    };
                    validate(spec, &json!({ "$ref": target }), value, at)?;
                }
            }
            "allOf" => {
                for part in rule.as_array().unwrap() {
                    validate(spec, part, value, at)?;
                }
            }
            "enum"
            | "maxLength"
            | "uniqueItems"
            | "additionalProperties"
            | "minimum"
            | "maximum"
            | "description"
            | "example"
            | "examples"
            | "format"
            | "title"
            | "discriminator"
            | "default" => {}
            other => panic!("{at}: keyword {other} is not judged by this test"),
        }
    }
    Ok(())
}

/// The pattern of `CreateAccountBody.username` (src/api/accounts.rs).
const USERNAME_PATTERN: &str = r"^(?![Bb][Oo][Tt]-)[A-Za-z][A-Za-z0-9_-]{2,23}(?![\s\S])";

/// Whether `text` matches `pattern`, one of the spec's patterns: lowercase hex, or the name and
/// client seed patterns, judged by the rules they stand for (`constraints` checks that they say
/// those rules).
fn matches_pattern(pattern: &str, text: &str, at: &str) -> bool {
    use golf_server::api::constraints::{client_seed_pattern, name_pattern};
    use golf_server::engine::{ClientSeed, PlayerName};
    if pattern == "^[0-9a-f]+$" {
        !text.is_empty() && text.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
    } else if pattern == name_pattern() {
        // Within maxLength, which the schema checks apart.
        PlayerName::choose(text).is_ok() || text.chars().count() > 40
    } else if pattern == client_seed_pattern() {
        ClientSeed::choose(text).is_ok() || text.chars().count() > 64
    } else if pattern == USERNAME_PATTERN {
        (3..=24).contains(&text.len())
            && text.starts_with(|c: char| c.is_ascii_alphabetic())
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
            && !text.to_ascii_lowercase().starts_with("bot-")
    } else {
        panic!("{at}: a pattern this test cannot judge: {pattern}")
    }
}

pub fn valid(spec: &Value, name: &str, value: &Value) -> bool {
    validate(spec, schema(spec, name), value, name).is_ok()
}

/// Asserts `value` is a valid `name`.
pub fn assert_valid(spec: &Value, name: &str, value: &Value) {
    if let Err(why) = validate(spec, schema(spec, name), value, name) {
        panic!("{why}");
    }
}
