//! Small values in this browser's `localStorage` (lesson progress, the backend probe): synchronous
//! and kept with the page's origin. Through `Reflect`, since reading `localStorage` itself throws
//! where storage is blocked; a browser that refuses storage simply keeps nothing.

use js_sys::{Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};

fn storage() -> Option<JsValue> {
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

/// The value kept under `key`, if any.
pub fn get(key: &str) -> Option<String> {
    storage().and_then(|s| call(&s, "getItem", &[key])).and_then(|v| v.as_string())
}

/// Keeps `value` under `key` (best effort: a full or blocked storage keeps the old one).
pub fn set(key: &str, value: &str) {
    if let Some(s) = storage() {
        let _ = call(&s, "setItem", &[key, value]);
    }
}
