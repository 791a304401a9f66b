//! The named schemas of the OpenAPI document's tagged unions (moves, log entries) and of seats.
//!
//! utoipa derives `Move` and `Event`
//! as `oneOf`s of anonymous objects, which generated clients name `MoveType0`, ...; here each
//! variant becomes a component named after its `type` (`RevealMove`, `CardDrawnEntry` with its
//! `CardDrawnData`, ...), and `Move` and `LogEntry` become `oneOf`s of those with a
//! `discriminator` on `type`. The variants are taken from the derived schemas, so the document
//! follows the Rust types: a new move or event gets its named schema without an edit here.
//! The seat number, which utoipa names after its primitive (`u8`), is named `Seat`.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ArrayItems, Discriminator, Object, ObjectBuilder,
    OneOfBuilder, Schema, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{KnownFormat, OpenApi, Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::engine::{Event, Move};

/// The name of the union of moves: the move request body and the items of `legal_moves`.
pub const MOVE: &str = "Move";
/// The name of the union of log entries, as `/events`, `/export` and `/stream` give them.
pub const LOG_ENTRY: &str = "LogEntry";
/// The name of a seat number's schema.
pub const SEAT: &str = "Seat";
/// The property whose value tells the variants apart, in moves and in log entries.
pub const DISCRIMINATOR: &str = "type";

/// Fields of log entries' data left out when they have no value (`player_joined`'s `account`,
/// `game_created`'s `rated` when false).
const OMITTED_WHEN_ABSENT: [&str; 2] = ["account", "rated"];

/// An example of each move, by its `type`.
fn move_example(kind: &str) -> Value {
    match kind {
        "reveal" => json!({"type": "reveal", "positions": [0, 4]}),
        "draw" => json!({"type": "draw", "source": "stock"}),
        "swap" => json!({"type": "swap", "position": 2}),
        "flip" => json!({"type": "flip", "position": 5}),
        other => json!({ "type": other }),
    }
}

/// `card_drawn` -> `CardDrawn`.
fn camel_case(kind: &str) -> String {
    kind.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

/// The variants of a derived tagged enum: each one's `type` and its object schema.
fn variants(union: RefOr<Schema>) -> Vec<(String, Object)> {
    let RefOr::T(Schema::OneOf(union)) = union else {
        panic!("a tagged enum derives a oneOf");
    };
    union
        .items
        .into_iter()
        .map(|variant| {
            let RefOr::T(Schema::Object(object)) = variant else {
                panic!("a variant of a tagged enum derives an object");
            };
            (tag_of(&object), object)
        })
        .collect()
}

/// The one value of a variant's `type` property.
fn tag_of(object: &Object) -> String {
    let Some(RefOr::T(Schema::Object(tag))) = object.properties.get(DISCRIMINATOR) else {
        panic!("a variant of a tagged enum has a `type` property");
    };
    match tag.enum_values.as_deref() {
        Some([Value::String(kind)]) => kind.clone(),
        _ => panic!("a variant's `type` is an enum of one string"),
    }
}

/// Sets the description of `object`'s `property`, an inline schema.
fn describe(object: &mut Object, property: &str, description: String) {
    if let Some(RefOr::T(Schema::Object(inner))) = object.properties.get_mut(property) {
        inner.description = Some(description);
    }
}

/// Moves the description of a nullable property (`oneOf` a `$ref` and `null`, which utoipa
/// describes on the `$ref`) up to the property, where documentation tools look for it.
fn describe_nullable(schemas: &mut BTreeMap<String, RefOr<Schema>>) {
    for schema in schemas.values_mut() {
        let RefOr::T(Schema::Object(object)) = schema else {
            continue;
        };
        for property in object.properties.values_mut() {
            let RefOr::T(Schema::OneOf(union)) = property else {
                continue;
            };
            if union.description.is_some() {
                continue;
            }
            let described = union.items.iter_mut().find_map(|item| match item {
                RefOr::Ref(reference) if !reference.description.is_empty() => {
                    Some(std::mem::take(&mut reference.description))
                }
                _ => None,
            });
            union.description = described;
        }
    }
}

/// A `oneOf` of the named schemas, `(type, name)`, discriminated by `type`.
fn discriminated(description: &str, named: &[(String, String)], example: Value) -> Schema {
    let reference = |name: &str| Ref::from_schema_name(name).ref_location;
    let mapping = named
        .iter()
        .map(|(kind, name)| (kind.clone(), reference(name)));
    let mut union = OneOfBuilder::new()
        .description(Some(description))
        .discriminator(Some(Discriminator::with_mapping(DISCRIMINATOR, mapping)))
        .examples([example]);
    for (_, name) in named {
        union = union.item(Ref::from_schema_name(name.as_str()));
    }
    union.build().into()
}

/// Replaces the derived `Move` with a discriminated union of `RevealMove`, `DrawMove`, ...
fn name_moves(schemas: &mut BTreeMap<String, RefOr<Schema>>) {
    let mut named = Vec::new();
    for (kind, mut object) in variants(Move::schema()) {
        let name = format!("{}Move", camel_case(&kind));
        object.examples = vec![move_example(&kind)];
        // `MoveRequest` refuses unknown fields: so does the schema.
        object.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
        describe(
            &mut object,
            DISCRIMINATOR,
            format!("Which move: always `{kind}`"),
        );
        schemas.insert(name.clone(), RefOr::T(Schema::Object(object)));
        named.push((kind, name));
    }
    let union = discriminated(
        "A move: the body of `POST /v1/games/{id}/moves`, and the type of the items of a view's \
         `legal_moves`, so a legal move can be sent back as it is. `type` says which move it is. \
         Positions are 0 to 5, row-major: top row 0 1 2, bottom row 3 4 5; a position out of \
         range is refused with 422 `position_out_of_range`.",
        &named,
        move_example("draw"),
    );
    schemas.insert(MOVE.to_owned(), RefOr::T(union));
}

/// A lowercase hex string, `null` too when `nullable`.
fn hex(description: &str, nullable: bool) -> ObjectBuilder {
    let kind = if nullable {
        SchemaType::from_iter([Type::String, Type::Null])
    } else {
        SchemaType::new(Type::String)
    };
    ObjectBuilder::new()
        .schema_type(kind)
        .pattern(Some("^[0-9a-f]+$"))
        .description(Some(description))
}

/// The `...Entry` schema of one event: the entry's fields around the event's `data`, all required.
fn entry(tag: RefOr<Schema>, data: &str, description: Option<String>) -> Schema {
    let fields: [(&str, RefOr<Schema>); 6] = [
        ("seq", seq().into()),
        ("at", timestamp().into()),
        (DISCRIMINATOR, tag),
        ("data", event_data(data).into()),
        (
            "salt",
            hex(
                "The entry's salt (16 bytes): null while a field of `data` is hidden from the \
                 caller, which makes the hidden card impossible to guess from `hash`",
                true,
            )
            .into(),
        ),
        (
            "hash",
            hex(
                "The hash chain up to this entry (SHA-256): it covers the complete entry, \
                 hidden fields included, so it verifies once the game is finished",
                false,
            )
            .into(),
        ),
    ];
    fields
        .into_iter()
        .fold(
            ObjectBuilder::new().description(description),
            |entry, (name, field)| entry.property(name, field).required(name),
        )
        .build()
        .into()
}

/// An entry's `seq`.
fn seq() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .minimum(Some(1))
        .description(Some("The entry's place in the log, from 1, without gaps"))
}

/// An entry's `at`.
fn timestamp() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .description(Some(
            "When it happened: RFC 3339 UTC with six fractional digits, hashed verbatim",
        ))
}

/// An entry's `data`: a reference to the `...Data` schema named `data`.
fn event_data(data: &str) -> Ref {
    let mut data = Ref::from_schema_name(data);
    data.description = "The event's fields: hidden cards are null while the game runs".into();
    data
}

/// Adds `LogEntry`, a discriminated union of `GameCreatedEntry`, ... with their `...Data`.
fn name_log_entries(schemas: &mut BTreeMap<String, RefOr<Schema>>) {
    // The schemas events refer to (`PlayerName`, ...): no operation names `Event` to collect them.
    let mut referred = Vec::new();
    Event::schemas(&mut referred);
    for (name, schema) in referred {
        schemas.entry(name).or_insert(schema);
    }
    let named: Vec<_> = variants(Event::schema())
        .into_iter()
        .map(|(kind, object)| name_log_entry(schemas, kind, object))
        .collect();
    let example = json!({
        "seq": 7,
        "at": "2026-05-01T12:00:03.000000Z",
        "type": "card_drawn",
        "data": {"seat": 0, "source": "stock", "card": null},
        "salt": null,
        "hash": "9f2c4f0b5e1d8a7c6b3e2f1a0d9c8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170",
    });
    let union = discriminated(
        "One entry of a game's log, as `/events`, `/export` (one a line) and `/stream` give it. \
         `type` says which event it is and so the shape of `data`. While the game runs, the \
         cards a caller may not see are null in `data` (and `salt` is null); once it is \
         finished, every entry is complete.",
        &named,
        example,
    );
    schemas.insert(LOG_ENTRY.to_owned(), RefOr::T(union));
}

/// Adds the `...Data` and `...Entry` schemas of the event `kind`, whose derived schema is
/// `object`, and gives `(kind, the name of its entry)`.
fn name_log_entry(
    schemas: &mut BTreeMap<String, RefOr<Schema>>,
    kind: String,
    mut object: Object,
) -> (String, String) {
    let name = camel_case(&kind);
    let (entry_name, data_name) = (format!("{name}Entry"), format!("{name}Data"));
    let mut data = object
        .properties
        .remove("data")
        .expect("an event has `data`");
    if let RefOr::T(Schema::Object(data)) = &mut data {
        data.description = object.description.clone();
        // Every field is always sent, `null` when absent or hidden: required, not optional;
        // but those left out when absent, so that older logs stay as they were written.
        data.required = data
            .properties
            .keys()
            .filter(|field| !OMITTED_WHEN_ABSENT.contains(&field.as_str()))
            .cloned()
            .collect();
    }
    describe(
        &mut object,
        DISCRIMINATOR,
        format!("Which event: always `{kind}`"),
    );
    let tag = object
        .properties
        .remove(DISCRIMINATOR)
        .expect("an event has a `type`");
    schemas.insert(data_name.clone(), data);
    schemas.insert(
        entry_name.clone(),
        RefOr::T(entry(tag, &data_name, object.description)),
    );
    (kind, entry_name)
}

/// Types `EventsPage.events` as a list of `LogEntry` (the service keeps entries as JSON values).
fn type_events_page(schemas: &mut BTreeMap<String, RefOr<Schema>>) {
    let Some(RefOr::T(Schema::Object(page))) = schemas.get_mut("EventsPage") else {
        panic!("EventsPage is a component");
    };
    page.properties.insert(
        "events".to_owned(),
        ArrayBuilder::new()
            .items(Ref::from_schema_name(LOG_ENTRY))
            .description(Some(
                "Entries with `seq > after`, in order, redacted for the caller while the game runs",
            ))
            .into(),
    );
}

/// Names the unions of the document (see the module's documentation).
pub fn name_unions(spec: &mut OpenApi) {
    let schemas = &mut spec.components.get_or_insert_with(Default::default).schemas;
    name_moves(schemas);
    name_log_entries(schemas);
    type_events_page(schemas);
    describe_nullable(schemas);
    name_seat(schemas);
    name_account_events(schemas);
}

/// The schemas of an account's events, each with its `type`, as the union `AccountEvent`.
pub const ACCOUNT_EVENTS: [(&str, &str); 8] = [
    ("game_started", "GameStartedEvent"),
    ("your_turn", "YourTurnEvent"),
    ("game_ended", "GameEndedEvent"),
    ("challenge_received", "ChallengeReceivedEvent"),
    ("challenge_answered", "ChallengeAnsweredEvent"),
    ("seek_matched", "SeekMatchedEvent"),
    ("rating_changed", "RatingChangedEvent"),
    ("webhook_disabled", "WebhookDisabledEvent"),
];

/// `AccountEvent`: a `oneOf` of [`ACCOUNT_EVENTS`] with a `discriminator` on `type`.
fn name_account_events(schemas: &mut BTreeMap<String, RefOr<Schema>>) {
    let mut union = OneOfBuilder::new()
        .description(Some(
            "An event of an account (`GET /v1/account/events`, `/v1/account/stream`), by `type`",
        ))
        .discriminator(Some(Discriminator::with_mapping(
            DISCRIMINATOR,
            ACCOUNT_EVENTS.map(|(kind, name)| (kind, Ref::from_schema_name(name).ref_location)),
        )));
    for (_, name) in ACCOUNT_EVENTS {
        union = union.item(Ref::from_schema_name(name));
    }
    schemas.insert(
        "AccountEvent".to_owned(),
        RefOr::T(Schema::OneOf(union.build())),
    );
    if let Some(RefOr::T(Schema::Object(page))) = schemas.get_mut("AccountEventsPage") {
        page.properties.insert(
            "events".to_owned(),
            ArrayBuilder::new()
                .items(Ref::from_schema_name("AccountEvent"))
                .description(Some("Events with `id > after`, in id order"))
                .into(),
        );
    }
}

/// `Seat` for the schema utoipa derives from the seat alias under the name of its primitive.
fn name_seat(schemas: &mut BTreeMap<String, RefOr<Schema>>) {
    const DERIVED: &str = "u8";
    let Some(RefOr::T(Schema::Object(mut seat))) = schemas.remove(DERIVED) else {
        return;
    };
    seat.description = Some("A seat: 0 for the first player to join, up to `seats - 1`".into());
    schemas.insert(SEAT.to_owned(), seat.into());
    let (from, to) = (
        Ref::from_schema_name(DERIVED).ref_location,
        Ref::from_schema_name(SEAT).ref_location,
    );
    for schema in schemas.values_mut() {
        redirect(schema, &from, &to);
    }
}

/// Points every reference to `from` within `schema` at `to`.
fn redirect(schema: &mut RefOr<Schema>, from: &str, to: &str) {
    match schema {
        RefOr::Ref(reference) if reference.ref_location == from => {
            reference.ref_location = to.to_owned();
        }
        RefOr::Ref(_) => {}
        RefOr::T(Schema::Object(object)) => {
            for property in object.properties.values_mut() {
                redirect(property, from, to);
            }
        }
        RefOr::T(Schema::Array(array)) => {
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                redirect(items, from, to);
            }
        }
        RefOr::T(Schema::OneOf(union)) => {
            for item in &mut union.items {
                redirect(item, from, to);
            }
        }
        RefOr::T(_) => {}
    }
}
