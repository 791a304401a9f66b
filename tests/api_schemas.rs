//! The schemas of the OpenAPI document as generated clients see them: the names docs/API.md binds,
//! discriminated unions for moves and log entries, no anonymous unions, and real answers (views
//! with `legal_moves`, log pages redacted and complete) valid against the schemas.

mod common;

use std::collections::BTreeSet;

use common::contract::started;
use common::openapi::{assert_valid, schema, spec, valid, validate};
use common::{Backend, TestApp, pick_move, spawn_app};
use serde_json::{Map, Value, json};

const MOVES: [(&str, &str); 7] = [
    ("reveal", "RevealMove"),
    ("draw", "DrawMove"),
    ("swap", "SwapMove"),
    ("discard", "DiscardMove"),
    ("flip", "FlipMove"),
    ("pass", "PassMove"),
    ("knock", "KnockMove"),
];

const ENTRIES: [(&str, &str); 14] = [
    ("game_created", "GameCreated"),
    ("player_joined", "PlayerJoined"),
    ("hole_dealt", "HoleDealt"),
    ("cards_revealed", "CardsRevealed"),
    ("card_drawn", "CardDrawn"),
    ("card_swapped", "CardSwapped"),
    ("card_discarded", "CardDiscarded"),
    ("card_flipped", "CardFlipped"),
    ("flip_declined", "FlipDeclined"),
    ("knocked", "Knocked"),
    ("bot_took_seat", "BotTookSeat"),
    ("stock_reshuffled", "StockReshuffled"),
    ("hole_ended", "HoleEnded"),
    ("game_ended", "GameEnded"),
];

/// The `(type, target)` pairs of a union's discriminator on `type`.
fn mapping(spec: &Value, name: &str) -> Map<String, Value> {
    let union = schema(spec, name);
    assert_eq!(union["discriminator"]["propertyName"], "type", "{name}");
    union["discriminator"]["mapping"]
        .as_object()
        .unwrap()
        .clone()
}

#[test]
fn the_spec_names_its_schemas_as_api_md_does() {
    // Every schema name that docs/API.md's "Schema names" binds is a component of the spec.
    let spec = spec();
    let entries = ENTRIES
        .iter()
        .flat_map(|(_, name)| [format!("{name}Entry"), format!("{name}Data")]);
    let names = [
        "Move",
        "View",
        "PlayerView",
        "Rules",
        "Problem",
        "CreatedGame",
        "Joined",
        "LobbyPage",
        "EventsPage",
        "Audit",
        "LogEntry",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain(MOVES.iter().map(|(_, name)| (*name).to_owned()))
    .chain(entries);
    for name in names {
        schema(&spec, &name);
    }
    assert!(
        spec["components"]["schemas"].get("MoveRequest").is_none(),
        "the move body is a Move"
    );
}

#[test]
fn moves_and_log_entries_are_discriminated_by_type() {
    // Move and LogEntry map every type to the schema whose `type` is exactly that value, and
    // list exactly those schemas.
    let spec = spec();
    let expected = [
        (
            "Move",
            MOVES.map(|(kind, name)| (kind, name.to_owned())).to_vec(),
        ),
        (
            "LogEntry",
            ENTRIES
                .map(|(kind, name)| (kind, format!("{name}Entry")))
                .to_vec(),
        ),
    ];
    for (union, variants) in expected {
        let mapping = mapping(&spec, union);
        let listed: BTreeSet<&str> = schema(&spec, union)["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["$ref"].as_str().unwrap())
            .collect();
        assert_eq!(mapping.len(), variants.len(), "{union}: {mapping:?}");
        assert_eq!(listed.len(), variants.len(), "{union}: {listed:?}");
        for (kind, name) in variants {
            let target = format!("#/components/schemas/{name}");
            assert_eq!(mapping[kind], target, "{union} maps {kind}");
            assert!(listed.contains(target.as_str()), "{union} lists {name}");
            let variant = schema(&spec, &name);
            assert_eq!(
                variant["properties"]["type"]["enum"],
                json!([kind]),
                "{name}"
            );
            assert!(
                variant["required"]
                    .as_array()
                    .unwrap()
                    .contains(&json!("type"))
            );
        }
    }
    // Both places a move appears name the one Move.
    let body = &spec["paths"]["/v1/games/{id}/moves"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"];
    assert_eq!(body["$ref"], "#/components/schemas/Move");
    let legal = &schema(&spec, "View")["properties"]["legal_moves"];
    assert_eq!(
        legal["items"]["$ref"], "#/components/schemas/Move",
        "{legal}"
    );
    let events = &schema(&spec, "EventsPage")["properties"]["events"];
    assert_eq!(events["items"]["$ref"], "#/components/schemas/LogEntry");
}

/// Every union below the top of a component, with where it is: a generator must name those.
fn anonymous_unions(value: &Value, at: &str, top: bool, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for keyword in ["oneOf", "anyOf"] {
                if let Some(alternatives) = object.get(keyword).and_then(Value::as_array) {
                    // `X or null` is a nullable X to every generator, not a union to name.
                    let not_null = alternatives
                        .iter()
                        .filter(|a| a != &&json!({"type": "null"}))
                        .count();
                    if !top && not_null > 1 {
                        found.push(at.to_owned());
                    }
                }
            }
            for (key, inner) in object {
                anonymous_unions(inner, &format!("{at}/{key}"), false, found);
            }
        }
        Value::Array(items) => {
            for (n, item) in items.iter().enumerate() {
                anonymous_unions(item, &format!("{at}/{n}"), false, found);
            }
        }
        _ => {}
    }
}

#[test]
fn no_schema_needs_a_made_up_name() {
    // Unions are named components: none inline in a body, a property or an array's items, and
    // no inline object as the items of an array (a generator calls those `...Item`).
    let spec = spec();
    let mut found = Vec::new();
    for (name, schema) in spec["components"]["schemas"].as_object().unwrap() {
        anonymous_unions(
            schema,
            &format!("#/components/schemas/{name}"),
            true,
            &mut found,
        );
        assert!(
            !name.ends_with("Item") && !name.contains("Type0"),
            "{name} is a made-up name"
        );
        // A Rust type's name (`u8`, `i64`) says nothing to a client.
        assert!(
            name.starts_with(|c: char| c.is_ascii_uppercase()),
            "{name} is named after a Rust type"
        );
    }
    anonymous_unions(&spec["paths"], "#/paths", false, &mut found);
    assert!(found.is_empty(), "anonymous unions at {found:?}");
    let text = spec.to_string();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("\"items\":{") {
        let items = &rest[start + 9..];
        assert!(
            items.starts_with("\"$ref\"")
                || !items[..items.find('}').unwrap()].contains("\"properties\""),
            "an inline object as array items: {}",
            &items[..items.len().min(120)]
        );
        rest = items;
    }
}

#[test]
fn the_validator_of_these_tests_refuses_what_the_schemas_refuse() {
    // The checks below can fail: wrong moves and entries do not validate.
    let spec = spec();
    assert!(valid(
        &spec,
        "Move",
        &json!({"type": "swap", "position": 2})
    ));
    assert!(!valid(&spec, "Move", &json!({"type": "swap"})));
    assert!(!valid(
        &spec,
        "Move",
        &json!({"type": "draw", "source": "deck"})
    ));
    assert!(!valid(&spec, "Move", &json!({"type": "jump"})));
    assert!(!valid(
        &spec,
        "Move",
        &json!({"type": "flip", "position": 9})
    ));
    let drawn = json!({"seq": 3, "at": "2026-05-01T12:00:03.000000Z", "type": "card_drawn",
        "data": {"seat": 0, "source": "stock", "card": null}, "salt": null, "hash": "9f2c"});
    assert!(valid(&spec, "LogEntry", &drawn));
    let mut swapped = drawn.clone();
    swapped["type"] = json!("card_swapped");
    assert!(!valid(&spec, "LogEntry", &swapped), "data of another event");
    let mut unhashed = drawn;
    unhashed["hash"] = json!("not hex");
    assert!(!valid(&spec, "LogEntry", &unhashed));
    // What a client sends is described as the server takes it (the names of the refusals).
    for (schema, body) in [
        ("JoinBody", json!({"name": "   "})),
        ("JoinBody", json!({"name": "A\u{202E}da"})),
        ("JoinBody", json!({"name": format!(" {} ", "n".repeat(39))})),
        ("JoinBody", json!({"name": "Ada", "client_seed": "s\u{7}"})),
        ("CreateGameBody", json!({"seats": 2, "decks": [[""]]})),
        ("Move", json!({"type": "reveal", "positions": [1, 1]})),
        ("Move", json!({"type": "pass", "position": 1})),
    ] {
        assert!(!valid(&spec, schema, &body), "{schema} {body}");
    }
    assert!(valid(
        &spec,
        "JoinBody",
        &json!({"name": " Ada ", "client_seed": "🎲"})
    ));
    let deck: Vec<Value> = golf_server::engine::canonical_deck()
        .iter()
        .map(|card| json!(card.code()))
        .collect();
    assert!(valid(
        &spec,
        "CreateGameBody",
        &json!({"seats": 4.0, "decks": [deck]})
    ));
}

/// Every entry of the log as `token`'s holder sees it is a valid LogEntry; returns their types.
async fn check_log(app: &TestApp, spec: &Value, id: &str, token: Option<&str>) -> BTreeSet<String> {
    let path = format!("/v1/games/{id}/events?after=0&limit=1000");
    let mut request = app.client.get(app.url(&path));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let page: Value = request.send().await.unwrap().json().await.unwrap();
    assert_valid(spec, "EventsPage", &page);
    page["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["type"].as_str().unwrap().to_owned())
        .collect()
}

async fn real_moves_and_log_entries_are_valid(backend: Backend) {
    // A whole game: every view (with its legal_moves and turn_deadline), every move sent, the
    // answer to a leave, and the log, redacted while the game runs and complete once it is
    // finished, are valid against the spec.
    let spec = spec();
    let app = spawn_app(backend).await;
    let rules = json!({"flip_after_discard": "optional", "turn_timeout_s": 600});
    let body = json!({"seats": 2, "holes": 2, "rules": rules});
    let (id, _, seats) = started(&app, body).await;
    let mut turn = 0;
    let mut redacted_checked = false;
    'game: for _round in 0..10_000 {
        for seat in &seats {
            let view = app.view(&id, Some(&seat.token)).await;
            assert_valid(&spec, "View", &view);
            if view["status"] == "finished" {
                break 'game;
            }
            for legal in view["legal_moves"].as_array().unwrap() {
                assert_valid(&spec, "Move", legal);
            }
            let Some(mv) = pick_move(&view, turn) else {
                continue;
            };
            assert_valid(&spec, "Move", &mv);
            let response = app.play(&id, &seat.token, &mv).await;
            assert_eq!(response.status(), 200, "{mv}");
            turn += 1;
            if turn == 30 {
                // Mid-game: the other seat's stock draws are hidden, and still valid.
                check_log(&app, &spec, &id, Some(&seat.token)).await;
                check_log(&app, &spec, &id, None).await;
                let public = app.events(&id, None, 0).await;
                assert!(
                    public.iter().any(|e| e["salt"].is_null()),
                    "some entry is redacted"
                );
                redacted_checked = true;
            }
            if turn == 40 {
                // Seat 1 leaves: the bot plays it from now on.
                let path = format!("/v1/games/{id}/leave");
                let left = app
                    .send(reqwest::Method::POST, &path, None, Some(&seats[1].token))
                    .await;
                assert_eq!(left.status(), 200);
                assert_valid(&spec, "View", &left.json().await.unwrap());
            }
        }
    }
    assert!(redacted_checked, "the game lasted 30 moves");
    let kinds = check_log(&app, &spec, &id, None).await;
    for kind in [
        "game_created",
        "hole_dealt",
        "cards_revealed",
        "card_drawn",
        "bot_took_seat",
        "hole_ended",
        "game_ended",
    ] {
        assert!(kinds.contains(kind), "{kind} in {kinds:?}");
    }
}

on_both_backends!(real_moves_and_log_entries_are_valid);

/// The codes the sources can answer: the codes of rule violations, and the literal codes given to
/// `ApiError::new` (or `Self::new` in `ApiError`'s own constructors). Their statuses are those of
/// the catalog, which the table of `Problem.code` shows.
fn answerable_codes() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let rules = include_str!("../src/engine/error.rs");
    let code_fn = &rules[rules.find("pub const fn code").unwrap()..];
    let code_fn = &code_fn[..code_fn.find("\n    }\n").unwrap()];
    for line in code_fn.lines().filter(|l| l.contains("=> \"")) {
        let code = line.split('"').nth(1).unwrap();
        found.insert(code.to_owned());
    }
    let sources = [
        include_str!("../src/api/problem.rs"),
        include_str!("../src/api/mod.rs"),
        include_str!("../src/api/http.rs"),
        include_str!("../src/api/limits.rs"),
        include_str!("../src/api/log.rs"),
        include_str!("../src/api/stream.rs"),
        include_str!("../src/api/health.rs"),
    ];
    for source in sources {
        for call in source
            .split("ApiError::new(")
            .chain(source.split("Self::new("))
            .skip(1)
        {
            if let Some(code) = call.trim_start().strip_prefix('"') {
                found.insert(code[..code.find('"').unwrap()].to_owned());
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_code_the_server_can_answer_is_documented_in_the_spec_and_on_a_page() {
    // Each code of the sources is in the table of Problem.code (with its status) and on the
    // page /problems, which the spec's description links and which loads nothing from elsewhere.
    let spec = spec();
    let table = schema(&spec, "Problem")["properties"]["code"]["description"]
        .as_str()
        .unwrap()
        .to_owned();
    let app = spawn_app(Backend::Sqlite).await;
    let response = app.get("/problems").await;
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let page = response.text().await.unwrap();
    let codes = answerable_codes();
    assert!(codes.len() > 25, "{codes:?}");
    for code in codes {
        assert!(
            table
                .lines()
                .any(|line| line.starts_with(&format!("| `{code}` |"))),
            "{code} is not in the table of Problem.code"
        );
        assert!(
            page.contains(&format!("<code>{code}</code>")),
            "{code} is not on /problems"
        );
    }
    assert!(!page.contains("http://") && !page.contains("https://") && !page.contains("src="));
    let info = spec["info"]["description"].as_str().unwrap();
    assert!(info.contains("(/problems)"), "{info}");
}

#[test]
fn every_example_in_the_spec_is_valid() {
    // The examples of bodies and responses (a real move, view, problem, log page) and of the
    // named schemas validate against their schemas.
    let spec = spec();
    let mut checked = 0;
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let bodies = operation["responses"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(status, response)| (status.clone(), response))
                .chain([("body".to_owned(), &operation["requestBody"])]);
            for (status, response) in bodies {
                let contents = response["content"].as_object().cloned().unwrap_or_default();
                for (media, content) in contents {
                    if !media.contains("json") {
                        continue;
                    }
                    let at = format!("{method} {path} {status} {media}");
                    let mut examples: Vec<Value> =
                        content.get("example").cloned().into_iter().collect();
                    for example in content["examples"].as_object().into_iter().flatten() {
                        examples.push(example.1["value"].clone());
                    }
                    assert!(!examples.is_empty(), "{at} has no example");
                    for example in examples {
                        if let Err(why) = validate(&spec, &content["schema"], &example, &at) {
                            panic!("{why}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    for (name, schema) in spec["components"]["schemas"].as_object().unwrap() {
        for example in schema["examples"].as_array().into_iter().flatten() {
            assert_valid(&spec, name, example);
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} examples");
}

#[test]
fn links_lead_from_creating_a_game_to_joining_it_and_on_to_playing() {
    // Create links to join (the new game's id); join links to the seat's view and moves, with
    // the game of the request and the token of the answer; every link names an operation.
    let spec = spec();
    let mut operations = BTreeSet::new();
    for item in spec["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            operations.insert(operation["operationId"].as_str().unwrap().to_owned());
        }
    }
    let created = &spec["paths"]["/v1/games"]["post"]["responses"]["201"]["links"];
    assert_eq!(created["join"]["operationId"], "join_game");
    assert_eq!(created["join"]["parameters"]["id"], "$response.body#/id");
    let joined = &spec["paths"]["/v1/games/{id}/players"]["post"]["responses"]["201"]["links"];
    for (link, operation) in [("view", "own_view"), ("move", "make_move")] {
        assert_eq!(joined[link]["operationId"], operation);
        assert_eq!(joined[link]["parameters"]["id"], "$request.path.id");
        assert_eq!(
            joined[link]["parameters"]["header.Authorization"],
            "Bearer {$response.body#/token}"
        );
    }
    for link in [&created["join"], &joined["view"], &joined["move"]] {
        assert!(
            operations.contains(link["operationId"].as_str().unwrap()),
            "{link}"
        );
    }
}
