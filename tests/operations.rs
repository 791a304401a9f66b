//! The operational endpoints, the docs page and the OpenAPI document; only readiness asks the
//! database, so only it runs on both backends.

mod common;

use common::{Backend, TestApp, spawn_app};

/// A server for a test whose requests never reach the database: every backend answers them
/// alike, so the test runs once, on SQLite.
async fn spawn_app_once() -> TestApp {
    spawn_app(Backend::Sqlite).await
}

async fn health_and_readiness_answer(backend: Backend) {
    // /healthz and /readyz (which asks the database) answer that all is well.
    let app = spawn_app(backend).await;
    let health = app.get("/healthz").await;
    assert_eq!(health.status(), 200);
    assert_eq!(
        health.json::<serde_json::Value>().await.unwrap()["status"],
        "ok"
    );
    let ready = app.get("/readyz").await;
    assert_eq!(ready.status(), 200);
    assert_eq!(
        ready.json::<serde_json::Value>().await.unwrap()["status"],
        "ready"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_a_request_id() {
    // Every response carries an x-request-id of its own.
    let app = spawn_app_once().await;
    let first = app.get("/healthz").await;
    let second = app.get("/no/such/route").await;
    let id_of = |response: &reqwest::Response| {
        response
            .headers()
            .get("x-request-id")
            .expect("x-request-id header")
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_ne!(id_of(&first), id_of(&second));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_routes_are_problems() {
    // An unknown route is a 404 not_found problem.
    let app = spawn_app_once().await;
    let response = app.get("/v0/nothing").await;
    assert_eq!(response.status(), 404);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let problem: serde_json::Value = response.json().await.unwrap();
    assert_eq!(problem["code"], "not_found");
    assert_eq!(problem["status"], 404);
    for field in ["type", "title", "detail"] {
        assert!(
            problem[field].is_string(),
            "problem lacks {field}: {problem}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_by_route_and_status() {
    // /metrics counts requests by method, route and status, unmatched routes as one.
    let app = spawn_app_once().await;
    for _ in 0..3 {
        app.get("/healthz").await;
    }
    app.get("/no/such/route").await;
    let response = app.get("/metrics").await;
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    assert!(
        text.contains(r#"http_requests_total{method="GET",route="/healthz",status="200"} 3"#),
        "{text}"
    );
    assert!(
        text.contains(r#"http_requests_total{method="GET",route="unmatched",status="404"} 1"#),
        "{text}"
    );
    assert!(
        text.contains("http_request_duration_seconds_bucket"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_methods_add_no_series_to_the_metrics() {
    // A client that sends 300 made-up methods grows /metrics by one label value, not 300.
    let app = spawn_app_once().await;
    let series = |text: &str| {
        text.lines()
            .filter(|line| line.starts_with("http_request"))
            .count()
    };
    app.get("/healthz").await;
    let before = series(&app.get("/metrics").await.text().await.unwrap());
    for n in 1..=300 {
        let method = reqwest::Method::from_bytes(format!("XMETHOD{n}").as_bytes()).unwrap();
        app.client
            .request(method, app.url("/healthz"))
            .send()
            .await
            .expect("the server answers");
    }
    let text = app.get("/metrics").await.text().await.unwrap();
    assert!(
        !text.contains("XMETHOD"),
        "a made-up method is a label value"
    );
    assert!(text.contains(r#"method="other""#), "{text}");
    // The made-up methods' counter, sum and histogram series: at most a few dozen lines.
    assert!(
        series(&text) <= before + 40,
        "{} series after, {before} before",
        series(&text)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_spec_equals_the_committed_one() {
    // /openapi.json serves the committed openapi/openapi.json.
    let app = spawn_app_once().await;
    let response = app.get("/openapi.json").await;
    assert_eq!(response.status(), 200);
    let served: serde_json::Value = response.json().await.unwrap();
    let committed: serde_json::Value =
        serde_json::from_str(include_str!("../openapi/openapi.json")).unwrap();
    assert_eq!(served, committed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_page_and_all_its_assets_are_served_locally() {
    // /docs serves its page and every asset itself, none from the outside network.
    let app = spawn_app_once().await;
    let redirect = app.get("/docs").await;
    assert!(redirect.status().is_redirection());
    assert_eq!(redirect.headers()["location"], "/docs/");

    let page = app.get("/docs/").await;
    assert_eq!(page.status(), 200);
    // Same origin as the seat tokens the web client keeps: no other site may frame it, and it
    // runs only its own scripts.
    let policy = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(policy.starts_with("default-src 'self';"), "{policy}");
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
    assert!(
        !policy.contains("script-src"),
        "scripts fall under default-src: {policy}"
    );
    assert_eq!(page.headers()["x-frame-options"], "DENY");
    let html = page.text().await.unwrap();
    let assets = referenced_assets(&html);
    assert!(
        assets.len() >= 3,
        "the page loads its scripts and styles: {assets:?}"
    );
    for asset in &assets {
        assert!(
            !asset.starts_with("http"),
            "{asset} would need the outside network"
        );
        let path = if asset.starts_with('/') {
            asset.clone()
        } else {
            format!("/docs/{}", asset.trim_start_matches("./"))
        };
        let response = app.get(&path).await;
        assert_eq!(response.status(), 200, "{path}");
        if path.ends_with(".js") {
            let script = response.text().await.unwrap();
            assert!(
                !script.contains("https://petstore") && !script.contains("unpkg.com"),
                "{path} points outside"
            );
            if path.contains("initializer") {
                assert!(script.contains("/openapi.json"), "{path} loads our spec");
            }
        }
    }
}

/// The `src` and `href` attribute values of an HTML page.
fn referenced_assets(html: &str) -> Vec<String> {
    let mut assets = Vec::new();
    for attribute in ["src=\"", "href=\""] {
        let mut rest = html;
        while let Some(start) = rest.find(attribute) {
            rest = &rest[start + attribute.len()..];
            if let Some(end) = rest.find('"') {
                assets.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    assets
}

async fn readiness_fails_fast_when_the_database_is_gone(backend: Backend) {
    // Without its database /readyz is a quick 503 unavailable, while /healthz stays 200.
    let app = spawn_app(backend).await;
    assert_eq!(app.get("/readyz").await.status(), 200);
    app.database.drop_postgres().await;
    let started = std::time::Instant::now();
    let response = app.get("/readyz").await;
    assert_eq!(response.status(), 503);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let problem: serde_json::Value = response.json().await.unwrap();
    assert_eq!(problem["code"], "unavailable");
    assert_eq!(
        app.get("/healthz").await.status(),
        200,
        "liveness does not depend on the database"
    );
}

on_both_backends!(health_and_readiness_answer);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_readiness_fails_fast_when_the_database_is_gone() {
    // Only a PostgreSQL database can be dropped from under a running server.
    readiness_fails_fast_when_the_database_is_gone(Backend::Postgres).await;
}

#[test]
fn every_reference_in_the_spec_resolves() {
    // Every `$ref` of the generated spec points to a component it defines.
    fn references(value: &serde_json::Value, found: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(object) => {
                for (key, inner) in object {
                    match (key.as_str(), inner.as_str()) {
                        ("$ref", Some(target)) => found.push(target.to_owned()),
                        _ => references(inner, found),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| references(i, found)),
            _ => {}
        }
    }
    let spec: serde_json::Value = serde_json::from_str(&golf_server::api::openapi_json()).unwrap();
    let mut found = Vec::new();
    references(&spec, &mut found);
    assert!(found.len() > 20);
    for target in found {
        let (kind, name) = target
            .strip_prefix("#/components/")
            .and_then(|component| component.split_once('/'))
            .unwrap_or_else(|| panic!("{target} is not a component reference"));
        assert!(
            spec["components"][kind].get(name).is_some(),
            "{target} points to nothing"
        );
    }
}

#[test]
fn committed_spec_is_what_the_code_generates() {
    // openapi/openapi.json is what the code generates today.
    let committed = include_str!("../openapi/openapi.json");
    assert!(
        committed.trim_end() == golf_server::api::openapi_json().trim_end(),
        "openapi/openapi.json is stale: regenerate it with \
         `cargo run -- openapi > openapi/openapi.json`"
    );
}

/// Every operation of the spec: its method, path and operation object.
fn operations(spec: &serde_json::Value) -> Vec<(String, String, &serde_json::Value)> {
    let mut found = Vec::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            found.push((method.to_uppercase(), path.clone(), operation));
        }
    }
    found
}

/// `value`, or what its `$ref` points to.
fn resolve<'a>(spec: &'a serde_json::Value, value: &'a serde_json::Value) -> &'a serde_json::Value {
    match value["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => spec.pointer(pointer).expect("the reference resolves"),
        None => value,
    }
}

#[test]
fn the_spec_documents_every_failure_and_every_header() {
    // Operations that ask the database document 500 and 503, writes the 409s a store gives, and
    // every answer the headers it carries.
    let spec: serde_json::Value = serde_json::from_str(&golf_server::api::openapi_json()).unwrap();
    let without_database = ["/healthz", "/metrics", "/problems"];
    let operations = operations(&spec);
    assert!(operations.len() >= 12, "{}", operations.len());
    for (method, path, operation) in operations {
        let what = format!("{method} {path}");
        let responses = operation["responses"].as_object().unwrap();
        if !without_database.contains(&path.as_str()) {
            for (status, code) in [("500", "internal_error"), ("503", "unavailable")] {
                let example = &responses
                    .get(status)
                    .unwrap_or_else(|| panic!("{what} documents {status}"))["content"]["application/problem+json"]
                    ["examples"][code]["value"];
                assert_eq!(example["code"], code, "{what} {status}");
            }
        }
        if method == "POST" || method == "DELETE" {
            let conflict = responses["409"]["description"].as_str().unwrap_or_default();
            assert!(conflict.contains("database_busy"), "{what}: 409 {conflict}");
            if path.ends_with("/moves") || path.ends_with("/players") {
                assert!(
                    conflict.contains("write_conflict"),
                    "{what}: 409 {conflict}"
                );
            }
        }
        for (status, response) in responses {
            let headers = &response["headers"];
            let declares = |name: &str| headers.get(name).is_some();
            assert!(declares("X-Request-Id"), "{what} {status}: X-Request-Id");
            if status == "401" {
                assert!(declares("WWW-Authenticate"), "{what} 401: WWW-Authenticate");
            }
            let content = response["content"].as_object();
            if status.starts_with(['4', '5']) {
                let problem = &content.and_then(|c| c.get("application/problem+json"));
                assert_eq!(
                    problem.map(|p| &p["schema"]["$ref"]),
                    Some(&serde_json::json!("#/components/schemas/Problem")),
                    "{what} {status}: a problem"
                );
            }
            let body = &response["content"]["application/json"]["schema"]["$ref"];
            let is_view = [
                "#/components/schemas/View",
                "#/components/schemas/CreatedGame",
            ]
            .iter()
            .any(|view| body == view);
            if is_view || status == "304" {
                assert!(
                    declares("ETag"),
                    "{what} {status}: a view declares its ETag"
                );
            }
            if path.starts_with("/v1/") && (status.starts_with('2') || status == "304") {
                let cache = &resolve(&spec, &headers["Cache-Control"])["example"];
                if *cache == "private, no-store" {
                    assert!(
                        declares("Vary"),
                        "{what} {status}: Vary with a private answer"
                    );
                } else if path.ends_with("/export") {
                    // A finished game's log never changes.
                    assert_eq!(
                        *cache, "public, max-age=31536000, immutable",
                        "{what} {status}: Cache-Control"
                    );
                } else if status != "204" {
                    assert_eq!(*cache, "no-cache", "{what} {status}: Cache-Control");
                }
            }
        }
    }
}
