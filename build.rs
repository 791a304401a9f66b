//! Finds the web client's language catalogs: every `web/lang-xx.js` is embedded and offered by
//! the page (`/web/languages.js`), English first as the fallback, so that adding a language is
//! adding its file. The generated code is included by `src/api/webapp.rs`.

use std::path::Path;
use std::{env, fs};

fn main() {
    println!("cargo:rerun-if-changed=web");
    let mut codes: Vec<String> = fs::read_dir("web")
        .expect("the web client's folder")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let code = name.strip_prefix("lang-")?.strip_suffix(".js")?;
            is_language_code(code).then(|| code.to_owned())
        })
        .collect();
    codes.sort_by_key(|code| (code != "en", code.clone()));
    assert_eq!(
        codes.first().map(String::as_str),
        Some("en"),
        "web/lang-en.js is the fallback catalog"
    );
    let catalogs: String = codes
        .iter()
        .map(|code| format!("    asset!(\"lang-{code}.js\", JAVASCRIPT),\n"))
        .collect();
    let listed: Vec<String> = codes.iter().map(|code| format!("'{code}'")).collect();
    let generated = format!(
        "/// The catalogs of `web/lang-*.js`, English first.\n\
         const CATALOGS: &[Asset] = &[\n{catalogs}];\n\n\
         /// The module that tells the page its languages.\n\
         const LANGUAGES: Asset = Asset {{\n    name: \"languages.js\",\n    \
         content_type: JAVASCRIPT,\n    body: b\"export default [{}];\\n\",\n}};\n",
        listed.join(", ")
    );
    let out = Path::new(&env::var("OUT_DIR").expect("OUT_DIR")).join("catalogs.rs");
    fs::write(out, generated).expect("write the catalogs' list");
}

/// A primary language subtag (BCP 47): two or three lowercase letters.
fn is_language_code(code: &str) -> bool {
    (2..=3).contains(&code.len()) && code.bytes().all(|byte| byte.is_ascii_lowercase())
}
