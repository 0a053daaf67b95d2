//! Large byte arrays between JavaScript and wasm memory.
//!
//! Copying a JS `ArrayBuffer` into wasm memory leaves the JS copy to the garbage collector, and
//! V8 may not collect for minutes on a page that sits idle while its worker trains: a model's
//! 90 MB of weights, fetched, sent to the worker and back, once held several hundred megabytes
//! of dead buffers in the tab. [`take`] copies and then frees the JS buffer at once.

use js_sys::{Function, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

/// `array`'s bytes, copied into wasm memory; its buffer is freed (detached) when it can be.
/// Only for arrays whose buffer nothing else reads afterwards.
pub fn take(array: &Uint8Array) -> Vec<u8> {
    let bytes = array.to_vec();
    release(&array.buffer());
    bytes
}

/// Frees `buffer`'s memory now instead of at the next garbage collection, by detaching it
/// (`ArrayBuffer.prototype.transfer(0)`). Buffers that cannot be detached (a wasm memory, a
/// `SharedArrayBuffer`) and browsers without `transfer` are left as they are.
pub fn release(buffer: &JsValue) {
    if let Some(transfer) = Reflect::get(buffer, &"transfer".into()).ok().and_then(|f| f.dyn_into::<Function>().ok()) {
        let _ = transfer.call1(buffer, &0.into());
    }
}
