//! What the server accepts, said in the OpenAPI document where utoipa's attributes cannot say
//! it: the card codes (the jokers included), a deck as the game's distinct cards, a reveal's
//! distinct positions, names and client seeds as patterns built from the very characters that [`crate::engine::PlayerName`] and
//! [`crate::engine::ClientSeed`] refuse, the format of `If-Match`, and header parameters that
//! are strings, never `null`. Generated clients trust the document: a value it calls valid is
//! one the server takes.
//!
//! The patterns are read the same way by ECMA-262 (which JSON Schema names) and by Python's
//! `re`: only `\uXXXX` escapes of characters of the Basic Multilingual Plane, classes and
//! groups. `$` is not used: in Python it also matches before a final newline, so the end is
//! `(?![\s\S])`, "no character follows".

use std::ops::RangeInclusive;

use serde_json::Value;
use utoipa::ToSchema;
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{
    Array, ArrayBuilder, Object, ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type,
};
use utoipa::openapi::{OpenApi, Ref, RefOr};

use crate::engine::inputs::{DECEPTIVE, MAX_CLIENT_SEED_CHARS, MAX_NAME_CHARS};
use crate::engine::rules::HOLES;
use crate::engine::{Card, all_cards};

/// The control characters (Unicode category Cc), as [`char::is_control`] tells them.
const CONTROL: &[RangeInclusive<char>] = &['\u{0000}'..='\u{001F}', '\u{007F}'..='\u{009F}'];

/// The white space that [`str::trim`] removes ([`char::is_whitespace`]) and that is not a
/// control character: a name needs a character other than these.
const SPACE: &[RangeInclusive<char>] = &[
    ' '..=' ',
    '\u{00A0}'..='\u{00A0}',
    '\u{1680}'..='\u{1680}',
    '\u{2000}'..='\u{200A}',
    '\u{2028}'..='\u{2029}',
    '\u{202F}'..='\u{202F}',
    '\u{205F}'..='\u{205F}',
    '\u{3000}'..='\u{3000}',
];

/// The end of the text in both dialects (see the module's documentation).
const END: &str = r"(?![\s\S])";

/// One member of an `If-Match` list: an entity-tag, weak or strong, or a bare version number.
const IF_MATCH_MEMBER: &str = r#"(W/)?"[!#-~]*"|[0-9]+"#;

/// `\uXXXX` or `\uXXXX-\uXXXX` for each range, to go inside a class.
fn class(ranges: &[&[RangeInclusive<char>]]) -> String {
    let escape = |c: char| {
        assert!(
            u32::from(c) <= 0xFFFF,
            "a pattern names characters of the BMP only"
        );
        format!("\\u{:04x}", u32::from(c))
    };
    let mut class = String::new();
    for range in ranges.iter().copied().flatten() {
        class.push_str(&escape(*range.start()));
        if range.start() != range.end() {
            class.push('-');
            class.push_str(&escape(*range.end()));
        }
    }
    class
}

/// A name as a player may choose it: no control character, none of the deceptive ones, and a
/// character that is neither of those nor white space (it is not empty once trimmed).
pub fn name_pattern() -> String {
    let refused = class(&[CONTROL, DECEPTIVE]);
    let blank = class(&[CONTROL, DECEPTIVE, SPACE]);
    format!("^[^{refused}]*[^{blank}][^{refused}]*{END}")
}

/// A client seed: no control character and none of the deceptive ones.
pub fn client_seed_pattern() -> String {
    format!("^[^{}]*{END}", class(&[CONTROL, DECEPTIVE]))
}

/// `If-Match`: `*`, or a list of entity-tags (RFC 9110) or bare version numbers, with at least
/// one member; white space around members and empty members are allowed.
pub fn if_match_pattern() -> String {
    let member = IF_MATCH_MEMBER;
    format!(r"^(\*|([ \t]*,)*[ \t]*({member})([ \t]*,([ \t]*({member}))?)*[ \t]*){END}")
}

/// `JoinBody.name`.
pub fn player_name() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(MAX_NAME_CHARS))
        .pattern(Some(name_pattern()))
        .description(Some(
            "1 to 40 characters as sent, at least one of them not white space; no control \
             character, and none of the invisible or direction-changing ones that let a name \
             pass for another (U+00AD, U+034F, U+061C, U+115F, U+1160, U+180E, U+200B to \
             U+200F, U+202A to U+202E, U+2060 to U+2064, U+2066 to U+2069, U+3164, U+FEFF, \
             U+FFA0). White space at both ends is trimmed when it is stored.",
        ))
        .build()
}

/// `JoinBody.client_seed`.
pub fn client_seed() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .max_length(Some(MAX_CLIENT_SEED_CHARS))
        .pattern(Some(client_seed_pattern()))
        .description(Some(
            "Up to 64 characters of the player's own entropy for the deals (public), kept as \
             given; no control character, and none of the characters a name may not have.",
        ))
        .build()
}

/// `Deck`: a deal order of 52 cards, or of 54 with the jokers (a deck of 53 is no deck).
fn deck() -> Schema {
    let of_size = |cards: usize| {
        ArrayBuilder::new()
            .items(Ref::from_schema_name(Card::name()))
            .min_items(Some(cards))
            .max_items(Some(cards))
            .unique_items(true)
    };
    let deck = OneOfBuilder::new()
        .item(of_size(52))
        .item(of_size(54))
        .description(Some(
            "A deal order: the game's cards (the 52, then JR and JB in a game with jokers), each \
             once, the first dealt first",
        ));
    Schema::OneOf(deck.build())
}

/// `CreateGameBody.decks`: at most one [`deck`] a hole.
pub fn decks() -> Array {
    let deck = Ref::from_schema_name("Deck");
    let most = usize::try_from(*HOLES.end()).expect("a small number of holes");
    ArrayBuilder::new()
        .schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
        .items(deck)
        .max_items(Some(most))
        .description(Some(
            "Explicit deal orders for holes 1, 2, ...: at most one a hole (more decks than \
             `holes` is 422 `invalid_game_options`); the game is then marked `stacked`.",
        ))
        .build()
}

/// Adds what utoipa cannot derive (see the module's documentation) to `spec`.
pub fn constrain(spec: &mut OpenApi) {
    let schemas = &mut spec.components.get_or_insert_with(Default::default).schemas;
    schemas.insert("Deck".to_owned(), RefOr::T(deck()));
    if let Some(RefOr::T(Schema::Object(card))) = schemas.get_mut(Card::name().as_ref()) {
        card.enum_values = Some(all_cards().map(|card| Value::from(card.code())).collect());
    }
    // A reveal of one position twice is 422 `duplicate_positions`.
    if let Some(RefOr::T(Schema::Object(reveal))) = schemas.get_mut("RevealMove")
        && let Some(RefOr::T(Schema::Array(positions))) = reveal.properties.get_mut("positions")
    {
        positions.unique_items = true;
    }
    for item in spec.paths.paths.values_mut() {
        for operation in [&mut item.get, &mut item.post, &mut item.delete]
            .into_iter()
            .flatten()
        {
            constrain_headers(operation);
        }
    }
}

/// A header parameter is a string or absent, never `null` (which utoipa derives from
/// `Option`); `If-Match` gets its format.
fn constrain_headers(operation: &mut Operation) {
    for parameter in operation.parameters.iter_mut().flatten() {
        let RefOr::T(parameter) = parameter else {
            continue;
        };
        let Some(RefOr::T(Schema::Object(schema))) = &mut parameter.schema else {
            continue;
        };
        if !matches!(parameter.parameter_in, ParameterIn::Header) {
            continue;
        }
        if let SchemaType::Array(types) = &schema.schema_type
            && let [only] = types
                .iter()
                .filter(|t| **t != Type::Null)
                .collect::<Vec<_>>()[..]
        {
            schema.schema_type = SchemaType::new(only.clone());
        }
        if parameter.name == "If-Match" {
            schema.pattern = Some(if_match_pattern());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::inputs::is_deceptive;

    fn within(ranges: &[RangeInclusive<char>], c: char) -> bool {
        ranges.iter().any(|range| range.contains(&c))
    }

    #[test]
    fn the_classes_name_exactly_the_characters_the_engine_tells_apart() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            assert_eq!(within(CONTROL, c), c.is_control(), "{c:?}");
            let space = c.is_whitespace() && !c.is_control();
            assert_eq!(within(SPACE, c), space, "{c:?}");
            assert_eq!(within(DECEPTIVE, c), is_deceptive(c), "{c:?}");
        }
    }

    #[test]
    fn patterns_spell_their_classes_with_bmp_escapes() {
        assert_eq!(
            client_seed_pattern(),
            format!(
                "^[^\\u0000-\\u001f\\u007f-\\u009f{}]*(?![\\s\\S])",
                class(&[DECEPTIVE])
            )
        );
        assert!(name_pattern().contains("\\u2000-\\u200a\\u2028-\\u2029"));
    }
}
