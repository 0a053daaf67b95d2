//! Lesson progress in this browser's `localStorage`: the lesson last shown and the questions
//! answered right. Small, synchronous and kept with the page's origin, like the saved work; a
//! browser that refuses storage (a private window with storage off) simply starts afresh.

use js_sys::{Function, Reflect};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

const KEY: &str = "bertbench-lessons";

/// What is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The id of the lesson last shown.
    pub lesson: String,
    /// The ids of the questions answered right.
    pub solved: Vec<String>,
}

fn storage() -> Option<JsValue> {
    // Reading `localStorage` itself throws where storage is blocked.
    Reflect::get(&js_sys::global(), &"localStorage".into()).ok().filter(|s| !s.is_undefined() && !s.is_null())
}

fn call(storage: &JsValue, method: &str, args: &[&str]) -> Option<JsValue> {
    let f: Function = Reflect::get(storage, &method.into()).ok()?.dyn_into().ok()?;
    match args {
        [a] => f.call1(storage, &(*a).into()).ok(),
        [a, b] => f.call2(storage, &(*a).into(), &(*b).into()).ok(),
        _ => None,
    }
}

/// The progress kept, or none.
pub fn load() -> Progress {
    storage()
        .and_then(|s| call(&s, "getItem", &[KEY]))
        .and_then(|v| v.as_string())
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default()
}

/// Keeps `progress` (best effort: a full or blocked storage keeps the old one).
pub fn save(progress: &Progress) {
    if let (Some(s), Ok(json)) = (storage(), serde_json::to_string(progress)) {
        let _ = call(&s, "setItem", &[KEY, &json]);
    }
}
