//! Saved work, in the browser's IndexedDB: uploaded datasets, finished runs (curves, metrics and
//! the trained classifier), the studio's settings, the checkpoint of a run in progress and the
//! MLM lab's models (with their curves and probes) survive a reload and a browser restart.
//!
//! Two object stores: `items` holds small records ([`Item`], listed together), `blobs` the bytes
//! of each item (read only when it is opened). An item and its bytes are written in one
//! transaction, so a failed write (the storage quota, a full disk) leaves nothing half-written:
//! the old record, if any, stays as it was. The page and the training worker both use this
//! module (IndexedDB works in workers), so large checkpoints never cross `postMessage`.

use idb::{Database, DatabaseEvent, Factory, ObjectStoreParams, TransactionMode, TransactionResult};
use js_sys::{Array, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

const DB: &str = "bertbench";
const VERSION: u32 = 1;
const ITEMS: &str = "items";
const BLOBS: &str = "blobs";

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// An uploaded training file; its bytes are the file.
    Dataset,
    /// A finished fine-tuning run; its bytes are the classifier as a zip of a Hugging Face folder.
    Run,
    /// The studio's settings (no bytes).
    Settings,
    /// The last checkpoint of the run in progress; its bytes are the snapshot's files.
    Checkpoint,
    /// A model pretrained in the MLM lab, with its run (`lab::SavedLab`); its bytes are the
    /// Hugging Face files in [`LAB_FILES`](crate::protocol::LAB_FILES) order (empty when absent).
    LabModel,
    /// The MLM lab's settings (`lab::LabSettings`); its bytes are the lab's corpus unless it is
    /// the built-in one.
    LabSettings,
}

/// One saved thing, without its bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// Unique key.
    pub id: String,
    /// What it is.
    pub kind: Kind,
    /// Shown name (a file name, a run's description).
    pub name: String,
    /// When it was saved (ms since the epoch).
    pub saved_ms: f64,
    /// Size of its bytes.
    pub size: u64,
    /// Kind-specific details, JSON.
    pub json: String,
}

/// Storage used and available to this page, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Used by this origin.
    pub used: f64,
    /// The most this origin may use.
    pub quota: f64,
}

fn mb(bytes: f64) -> String {
    if bytes >= 1e9 { format!("{:.1} GB", bytes / 1e9) } else { format!("{:.1} MB", bytes / 1e6) }
}

impl Usage {
    /// "12.3 MB of 1.2 GB".
    pub fn describe(&self) -> String {
        format!("{} of {}", mb(self.used), mb(self.quota))
    }
}

async fn open() -> Result<Database, String> {
    let factory = Factory::new().map_err(|e| format!("this browser has no IndexedDB, so nothing can be saved: {e}"))?;
    let mut request = factory.open(DB, Some(VERSION)).map_err(|e| format!("could not open the saved work: {e}"))?;
    request.on_upgrade_needed(|event| {
        let Ok(db) = event.database() else { return };
        for name in [ITEMS, BLOBS] {
            if !db.store_names().iter().any(|n| n == name) {
                let _ = db.create_object_store(name, ObjectStoreParams::new());
            }
        }
    });
    request.await.map_err(|e| format!("could not open the saved work: {e}"))
}

/// Whether `error` (a failed or aborted write) is the storage quota.
fn is_quota(text: &str) -> bool {
    text.contains("QuotaExceeded") || text.to_lowercase().contains("quota")
}

/// The message for a write that failed with `error`.
async fn write_error(what: &str, error: String) -> String {
    if is_quota(&error) {
        // Browsers may enforce a lower limit than the estimate reports: show it only when it agrees.
        let usage = estimate().await.filter(|u| u.used >= 0.8 * u.quota).map(|u| format!(" ({} used)", u.describe())).unwrap_or_default();
        format!(
            "{what} was not saved: this page's storage in the browser is full{usage}. Delete saved runs or datasets to make room. Nothing was half-written."
        )
    } else {
        format!("{what} was not saved: {error}")
    }
}

/// Saves `item` and its bytes together (replacing an item with the same id), or neither.
pub async fn put(item: &Item, bytes: &[&[u8]]) -> Result<(), String> {
    let blobs = bytes.iter().map(|b| blob_of(b)).collect::<Result<Vec<_>, _>>().map_err(|e| format!("“{}” was not saved: {e}", item.name))?;
    put_blobs(item, &blobs).await
}

/// [`put`] for bytes already in [`Blob`](web_sys::Blob)s (see [`blob_of`]).
pub async fn put_blobs(item: &Item, blobs: &[web_sys::Blob]) -> Result<(), String> {
    let what = format!("“{}”", item.name);
    let list: Array = blobs.iter().collect();
    let db = open().await?;
    let json = serde_json::to_string(item).map_err(|e| e.to_string())?;
    let result = async {
        let tx = db.transaction(&[ITEMS, BLOBS], TransactionMode::ReadWrite).map_err(|e| e.to_string())?;
        let key = JsValue::from(item.id.as_str());
        tx.object_store(BLOBS).map_err(|e| e.to_string())?.put(&list, Some(&key)).map_err(|e| e.to_string())?;
        tx.object_store(ITEMS).map_err(|e| e.to_string())?.put(&JsValue::from(json), Some(&key)).map_err(|e| e.to_string())?;
        // A second handle on the same transaction, to read its error once it has ended.
        let raw: web_sys::IdbTransaction = tx.object_store(ITEMS).map_err(|e| e.to_string())?.transaction().into();
        match tx.await {
            Ok(TransactionResult::Committed) => Ok(()),
            Ok(TransactionResult::Aborted) => Err(raw.error().map(|e| format!("{}: {}", e.name(), e.message())).unwrap_or_else(|| "the write was aborted".into())),
            Err(e) => Err(raw.error().map(|e| format!("{}: {}", e.name(), e.message())).unwrap_or_else(|| e.to_string())),
        }
    }
    .await;
    db.close();
    match result {
        Ok(()) => Ok(()),
        Err(e) => Err(write_error(&what, e).await),
    }
}

/// Pieces of a [`Blob`] are copied out of wasm memory this many bytes at a time.
const BLOB_PIECE: usize = 8 << 20;

/// `bytes` as a [`Blob`], built piece by piece, each piece's JS copy freed as soon as the blob
/// holds it. Stored in IndexedDB, a blob is a handle on bytes the browser keeps (on disk in a
/// normal profile): writing a 270 MB checkpoint this way never holds a full JS copy of it, nor
/// a structured-clone copy of that, in the tab's memory.
pub fn blob_of(bytes: &[u8]) -> Result<web_sys::Blob, String> {
    let pieces = Array::new();
    for chunk in bytes.chunks(BLOB_PIECE) {
        let array = Uint8Array::new_from_slice(chunk);
        let piece = web_sys::Blob::new_with_u8_array_sequence(&Array::of1(&array)).map_err(js_message)?;
        crate::js_bytes::release(&array.buffer());
        pieces.push(&piece);
    }
    web_sys::Blob::new_with_blob_sequence(&pieces).map_err(js_message)
}

/// A JS error's message.
fn js_message(e: JsValue) -> String {
    Reflect::get(&e, &"message".into()).ok().and_then(|m| m.as_string()).or_else(|| e.as_string()).unwrap_or_else(|| format!("{e:?}"))
}

/// One stored part: a [`Blob`] (written by [`put`]) or, from versions before it, a
/// `Uint8Array`.
async fn read_part(value: JsValue) -> Result<Vec<u8>, String> {
    if let Some(array) = value.dyn_ref::<Uint8Array>() {
        return Ok(crate::js_bytes::take(array));
    }
    let blob: web_sys::Blob = value.dyn_into().map_err(|_| "a stored part is neither bytes nor a blob".to_string())?;
    let buffer = JsFuture::from(blob.array_buffer()).await.map_err(js_message)?;
    Ok(crate::js_bytes::take(&Uint8Array::new(&buffer)))
}

/// Every saved item, newest first.
pub async fn list() -> Result<Vec<Item>, String> {
    let db = open().await?;
    let result = async {
        let tx = db.transaction(&[ITEMS], TransactionMode::ReadOnly).map_err(|e| e.to_string())?;
        let values = tx.object_store(ITEMS).map_err(|e| e.to_string())?.get_all(None, None).map_err(|e| e.to_string())?.await.map_err(|e| e.to_string())?;
        Ok::<_, String>(values.iter().filter_map(|v| v.as_string()).filter_map(|s| serde_json::from_str::<Item>(&s).ok()).collect::<Vec<_>>())
    }
    .await;
    db.close();
    let mut items = result.map_err(|e| format!("could not read the saved work: {e}"))?;
    items.sort_by(|a, b| b.saved_ms.total_cmp(&a.saved_ms));
    Ok(items)
}

/// One item, if saved.
pub async fn get(id: &str) -> Result<Option<Item>, String> {
    Ok(list().await?.into_iter().find(|i| i.id == id))
}

/// The bytes of item `id`.
pub async fn bytes(id: &str) -> Result<Vec<Vec<u8>>, String> {
    let db = open().await?;
    let result = async {
        let tx = db.transaction(&[BLOBS], TransactionMode::ReadOnly).map_err(|e| e.to_string())?;
        let value = tx
            .object_store(BLOBS)
            .map_err(|e| e.to_string())?
            .get(JsValue::from(id))
            .map_err(|e| e.to_string())?
            .await
            .map_err(|e| e.to_string())?;
        let list = value.and_then(|v| v.dyn_into::<Array>().ok()).ok_or("its bytes are missing")?;
        let mut out = Vec::with_capacity(list.length() as usize);
        for value in list.iter() {
            out.push(read_part(value).await?);
        }
        Ok::<_, String>(out)
    }
    .await;
    db.close();
    result.map_err(|e| format!("could not read the saved item: {e}"))
}

/// Deletes item `id` and its bytes.
pub async fn delete(id: &str) -> Result<(), String> {
    let db = open().await?;
    let result = async {
        let tx = db.transaction(&[ITEMS, BLOBS], TransactionMode::ReadWrite).map_err(|e| e.to_string())?;
        for store in [ITEMS, BLOBS] {
            tx.object_store(store).map_err(|e| e.to_string())?.delete(JsValue::from(id)).map_err(|e| e.to_string())?;
        }
        match tx.await.map_err(|e| e.to_string())? {
            TransactionResult::Committed => Ok(()),
            TransactionResult::Aborted => Err("the delete was aborted".to_string()),
        }
    }
    .await;
    db.close();
    result.map_err(|e| format!("could not delete: {e}"))
}

/// Storage used and the quota (`navigator.storage.estimate()`, in the page or a worker).
pub async fn estimate() -> Option<Usage> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let storage = Reflect::get(&navigator, &"storage".into()).ok().filter(|s| !s.is_undefined())?;
    let manager: web_sys::StorageManager = storage.unchecked_into();
    let estimate = JsFuture::from(manager.estimate().ok()?).await.ok()?;
    let number = |key: &str| Reflect::get(&estimate, &key.into()).ok().and_then(|v| v.as_f64());
    Some(Usage { used: number("usage")?, quota: number("quota")? })
}

/// A short stable id for `bytes` (FNV-1a, 64 bits, hex).
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}
