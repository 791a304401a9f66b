//! The web client as the server serves it: `/` and every file it loads (its catalogs, manifest,
//! icons and `/web/RULES.md` included), each with the strict Content-Security-Policy and nosniff,
//! HEAD and 404/405 as elsewhere, kept out of the API's document; and its sources build the page
//! from text only.

mod common;

use std::collections::BTreeSet;

use common::contract::{header, problem, raw};
use common::{Backend, spawn_app};
use reqwest::Method;

const CSP: &str = "default-src 'self'; frame-ancestors 'none'";

/// Asserts the headers every file of the web client carries.
fn assert_web_headers(response: &reqwest::Response, path: &str, content_type: &str) {
    assert_eq!(response.status(), 200, "GET {path}");
    let headers = response.headers();
    assert_eq!(header(headers, "content-type"), content_type, "{path}");
    assert_eq!(header(headers, "content-security-policy"), CSP, "{path}");
    // No other site may frame the page: it holds seat tokens in localStorage.
    assert_eq!(header(headers, "x-frame-options"), "DENY", "{path}");
    assert_eq!(
        header(headers, "x-content-type-options"),
        "nosniff",
        "{path}"
    );
}

/// The files a page or a module loads: `src="/web/..."`, `href="/web/..."` and
/// `from './x.js'` (as `/web/x.js`).
fn references(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (marker, prefix) in [("\"/web/", "/web/"), ("from './", "/web/")] {
        for (start, _) in text.match_indices(marker) {
            let rest = &text[start + marker.len()..];
            let end = rest.find(['"', '\'']).expect("a quoted reference ends");
            found.insert(format!("{prefix}{}", &rest[..end]));
        }
    }
    found
}

fn content_type_of(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("webmanifest") => "application/manifest+json",
        other => panic!("no file of type {other:?} is expected: {path}"),
    }
}

async fn the_page_and_every_file_it_loads_carry_the_csp_and_nosniff(backend: Backend) {
    // `/` and, transitively, every file it and its modules load are served, each with the headers.
    let app = spawn_app(backend).await;
    let index = app.get("/").await;
    assert_web_headers(&index, "/", "text/html; charset=utf-8");
    let html = index.text().await.unwrap();
    assert!(html.contains(r#"<script type="module" src="/web/app.js"></script>"#));
    assert!(
        !html.contains("<script>") && !html.contains("style="),
        "nothing inline: the CSP forbids it"
    );

    let mut pending: Vec<String> = references(&html).into_iter().collect();
    let mut served = BTreeSet::new();
    while let Some(path) = pending.pop() {
        if !served.insert(path.clone()) {
            continue;
        }
        let response = app.get(&path).await;
        assert_web_headers(&response, &path, content_type_of(&path));
        let text = response.text().await.unwrap();
        assert!(!text.is_empty(), "{path} has content");
        pending.extend(references(&text));
    }
    for expected in [
        "/web/app.css",
        "/web/favicon.svg",
        "/web/audit.js",
        "/web/jcs.js",
        "/web/replay.js",
        "/web/analysis.js",
        "/web/ratings.js",
        "/web/challenges.js",
        "/web/i18n.js",
        "/web/help.js",
        "/web/manifest.webmanifest",
        "/web/icon-192.png",
    ] {
        assert!(
            served.contains(expected),
            "{expected} is loaded: {served:?}"
        );
    }
}

async fn head_unknown_files_and_other_methods_answer_as_elsewhere(backend: Backend) {
    // HEAD is the GET without a body; an unknown file is a 404 problem; POST is a 405 with Allow.
    let app = spawn_app(backend).await;
    for path in ["/", "/web/app.js"] {
        let get = raw(&app, Method::GET, path, None, &[]).await;
        let head = raw(&app, Method::HEAD, path, None, &[]).await;
        assert_eq!(head.status(), 200, "HEAD {path}");
        for name in [
            "content-type",
            "content-length",
            "content-security-policy",
            "x-content-type-options",
        ] {
            assert_eq!(
                head.headers().get(name),
                get.headers().get(name),
                "HEAD {path}: {name}"
            );
        }
        assert!(
            head.bytes().await.unwrap().is_empty(),
            "HEAD {path} has no body"
        );
    }
    problem(app.get("/web/no-such-file.js").await, 404, "not_found").await;
    problem(app.get("/web/%2e%2e%2fCargo.toml").await, 404, "not_found").await;
    let post = raw(&app, Method::POST, "/", Some("{}"), &[]).await;
    assert_eq!(header(post.headers(), "allow"), "GET, HEAD");
    problem(post, 405, "method_not_allowed").await;
}

async fn the_web_client_is_not_part_of_the_api_document(backend: Backend) {
    // The OpenAPI document lists the API only.
    let app = spawn_app(backend).await;
    let spec: serde_json::Value = app.get("/openapi.json").await.json().await.unwrap();
    let paths = spec["paths"].as_object().expect("paths");
    assert!(paths.contains_key("/v1/games"));
    assert!(
        paths
            .keys()
            .all(|path| path != "/" && !path.starts_with("/web")),
        "{:?}",
        paths.keys()
    );
}

async fn the_catalogs_the_manifest_its_icons_and_the_rules_are_served(backend: Backend) {
    // What the page loads by name at run time: a catalog per language, the manifest's icons, and
    // docs/RULES.md as the how-to-play screens link it.
    let app = spawn_app(backend).await;
    for language in ["en", "fr"] {
        let path = format!("/web/lang-{language}.js");
        assert_web_headers(&app.get(&path).await, &path, content_type_of(&path));
    }
    let manifest = app.get("/web/manifest.webmanifest").await;
    assert_web_headers(
        &manifest,
        "/web/manifest.webmanifest",
        "application/manifest+json",
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&manifest.text().await.unwrap()).unwrap();
    assert_eq!(manifest["start_url"], "/");
    assert_eq!(manifest["display"], "standalone");
    let icons = manifest["icons"].as_array().expect("icons");
    let sizes: BTreeSet<&str> = icons
        .iter()
        .filter_map(|icon| icon["sizes"].as_str())
        .collect();
    assert!(
        sizes.contains("192x192") && sizes.contains("512x512"),
        "{sizes:?}"
    );
    for icon in icons {
        let path = icon["src"].as_str().expect("src");
        let response = app.get(path).await;
        assert_web_headers(&response, path, icon["type"].as_str().expect("type"));
    }
    let rules = app.get("/web/RULES.md").await;
    assert_web_headers(&rules, "/web/RULES.md", "text/markdown; charset=utf-8");
    let served = rules.text().await.unwrap();
    let file =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/RULES.md")).unwrap();
    assert_eq!(served, file, "/web/RULES.md is docs/RULES.md");
}

on_both_backends!(
    the_catalogs_the_manifest_its_icons_and_the_rules_are_served,
    the_page_and_every_file_it_loads_carry_the_csp_and_nosniff,
    head_unknown_files_and_other_methods_answer_as_elsewhere,
    the_web_client_is_not_part_of_the_api_document,
);

#[test]
fn the_sources_never_turn_data_into_markup() {
    // Names and client seeds are untrusted: the client builds the page with text nodes only.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "js") {
            let source = std::fs::read_to_string(&path).unwrap();
            for sink in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
            ] {
                assert!(!source.contains(sink), "{} uses {sink}", path.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 8, "the client's modules were found ({checked})");
}
