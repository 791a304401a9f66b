//! The web client: the page at `/` and its assets under `/web/` (its scripts, one catalog of
//! strings per language, each `web/lang-xx.js` that `build.rs` finds, with `languages.js` listing
//! them, its web app manifest and icons, and `docs/RULES.md` as `/web/RULES.md` for its
//! how-to-play screens), embedded in the binary at build time, so the service needs no other files
//! and no outside network.
//!
//! Every answer carries `Content-Security-Policy: default-src 'self'; frame-ancestors 'none'` (no
//! inline script or style, nothing from elsewhere, no framing by another site), `X-Frame-Options:
//! DENY` for older browsers, and `X-Content-Type-Options: nosniff`. These routes are not part of the
//! API and stay out of the OpenAPI document.

use actix_web::HttpResponse;
use actix_web::http::header;
use actix_web::web::{self, Path};

use crate::api::problem::ApiError;

/// The page of the client.
pub const INDEX_PATH: &str = "/";
/// Its assets, by file name.
pub const ASSETS_PATH: &str = "/web/{name}";

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $content_type:expr) => {
        asset!($name, concat!("web/", $name), $content_type)
    };
    ($name:literal, $file:expr, $content_type:expr) => {
        Asset {
            name: $name,
            content_type: $content_type,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $file)),
        }
    };
}

const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
/// The content type of a web app manifest (W3C Web Application Manifest, "Media type registration").
pub const MANIFEST: &str = "application/manifest+json";

/// The files of `web/` that the client is made of.
const ASSETS: &[Asset] = &[
    asset!("index.html", "text/html; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("manifest.webmanifest", MANIFEST),
    asset!("icon-192.png", "image/png"),
    asset!("icon-512.png", "image/png"),
    asset!("RULES.md", "docs/RULES.md", "text/markdown; charset=utf-8"),
    asset!("app.js", JAVASCRIPT),
    asset!("i18n.js", JAVASCRIPT),
    asset!("help.js", JAVASCRIPT),
    asset!("announce.js", JAVASCRIPT),
    asset!("api.js", JAVASCRIPT),
    asset!("dom.js", JAVASCRIPT),
    asset!("lobby.js", JAVASCRIPT),
    asset!("house-rules.js", JAVASCRIPT),
    asset!("table.js", JAVASCRIPT),
    asset!("cards.js", JAVASCRIPT),
    asset!("scoring.js", JAVASCRIPT),
    asset!("replay.js", JAVASCRIPT),
    asset!("analysis.js", JAVASCRIPT),
    asset!("audit.js", JAVASCRIPT),
    asset!("jcs.js", JAVASCRIPT),
    asset!("account.js", JAVASCRIPT),
    asset!("my-games.js", JAVASCRIPT),
    asset!("profile.js", JAVASCRIPT),
    asset!("turns.js", JAVASCRIPT),
    asset!("ratings.js", JAVASCRIPT),
    asset!("challenges.js", JAVASCRIPT),
    asset!("seeks.js", JAVASCRIPT),
];

include!(concat!(env!("OUT_DIR"), "/catalogs.rs"));

/// Registers `/` and `/web/{name}`.
pub fn configure(config: &mut web::ServiceConfig) {
    config
        .route(INDEX_PATH, web::get().to(index))
        .route(ASSETS_PATH, web::get().to(asset));
}

async fn index() -> HttpResponse {
    serve(find("index.html").expect("index.html is embedded"))
}

async fn asset(name: Path<String>) -> Result<HttpResponse, ApiError> {
    find(&name)
        .map(serve)
        .ok_or_else(|| ApiError::not_found(format!("The web client has no file {name}.")))
}

fn find(name: &str) -> Option<&'static Asset> {
    ASSETS
        .iter()
        .chain(CATALOGS)
        .chain([&LANGUAGES])
        .find(|asset| asset.name == name)
}

fn serve(asset: &'static Asset) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(asset.content_type)
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; frame-ancestors 'none'",
        ))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        // The files change with the binary: a browser asks again (and gets them from the
        // binary it now talks to) rather than mix an old script with a new API.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .body(asset.body)
}
