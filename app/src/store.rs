//! Saved work, in the browser's IndexedDB: uploaded datasets, finished runs (curves, metrics and
//! the trained classifier), the studio's settings, the checkpoint of a run in progress and the
//! MLM lab's models (with their curves and probes) survive a reload and a browser restart.
//!
//! Two object stores: `items` holds small records ([`Item`], listed together), `blobs` the bytes
//! of each item (read only when it is opened). An item and its bytes are written in one
//! transaction, so a failed write (the storage quota, a full disk) leaves nothing half-written:
//! the old record, if any, stays as it was. The page and the training worker both use this
//! module (IndexedDB works in workers), so large checkpoints never cross `postMessage`.
//!
//! The training worker writes large bytes (a checkpoint, a classifier) through a
//! [`BlobWriter`]: into a scratch file of the origin private file system, a piece at a time,
//! and stores that file as the blob, so the tab never holds the bytes; the scratch file is
//! removed once IndexedDB has its copy.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use idb::{Database, DatabaseEvent, Factory, ObjectStoreParams, TransactionMode, TransactionResult};
use js_sys::{Array, Function, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{FileSystemDirectoryHandle, FileSystemFileHandle, FileSystemSyncAccessHandle};

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
    /// Hugging Face files in [`LAB_FILES`](crate::runs::LAB_FILES) order (empty when absent).
    LabModel,
    /// The MLM lab's settings (`lab::LabSettings`); its bytes are the lab's corpus unless it is
    /// the built-in one.
    LabSettings,
    /// The MLM lab's "Runs compared" (their settings, curves and results; no bytes: each run's
    /// model is in its saved lab model).
    LabComparison,
    /// A model the user opened from the disk; its bytes are `config.json`, the weights as one
    /// safetensors file, `tokenizer.json` and `vocab.txt` (empty when absent).
    Model,
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
    /// Of `used`, what the browser counts for each kind of storage, where it says (Chromium's
    /// `usageDetails`): saved work (IndexedDB), the offline copy (the cache), scratch files.
    pub details: Option<UsageDetails>,
}

/// What the browser counts for each kind of storage this page uses, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UsageDetails {
    /// IndexedDB: the saved work.
    pub saved: f64,
    /// Cache storage: the offline copy of the page, its wasm and its models.
    pub offline: f64,
    /// The origin private file system: scratch files of large writes in progress.
    pub scratch: f64,
}

/// `12.3 MB`, `1.2 GB`.
pub fn mb(bytes: f64) -> String {
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

/// The message for a write of `what` (“the checkpoint”, a run's quoted name) that failed with
/// `error`: the storage quota's own message when that is the cause.
pub async fn write_error(what: &str, error: String) -> String {
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
    let what = format!("“{}”", item.name);
    let mut blobs = Vec::with_capacity(bytes.len());
    for part in bytes {
        let mut writer = BlobWriter::new().await;
        let written = writer.write(part);
        match written {
            Ok(()) => blobs.push(writer.finish().await.map_err(|e| format!("{what} was not saved: {e}"))?),
            Err(e) => return Err(write_error(&what, e).await),
        }
    }
    put_blobs(item, &blobs.iter().map(|b| b.blob.clone()).collect::<Vec<_>>()).await
}

/// [`put`] for bytes already in [`Blob`](web_sys::Blob)s (see [`BlobWriter`]).
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

/// Pieces of a [`Blob`] are written this many bytes at a time.
const BLOB_PIECE: usize = 8 << 20;

/// The origin private file system's folder where [`BlobWriter`] writes.
const SCRATCH: &str = "scratch";

/// Each worker holds the Web Lock `{SCRATCH_LOCK}{session}` for as long as it lives; its
/// scratch files are named `{session}-{n}`. A sweep removes the files whose lock nobody holds:
/// those of a tab closed in the middle of a write, never those of another open tab.
const SCRATCH_LOCK: &str = "bertbench-scratch-";

/// This worker's scratch folder and its files' names.
struct Scratch {
    dir: FileSystemDirectoryHandle,
    session: String,
    next: Cell<u32>,
}

thread_local! {
    /// `None` until first asked; then the folder, or `None` where there is none.
    static SCRATCH_DIR: RefCell<Option<Option<Rc<Scratch>>>> = const { RefCell::new(None) };
}

/// The scratch folder, in a dedicated worker of a browser with synchronous file handles (the
/// page has none: it writes to memory).
async fn scratch() -> Option<Rc<Scratch>> {
    if let Some(known) = SCRATCH_DIR.with(|s| s.borrow().clone()) {
        return known;
    }
    let opened = open_scratch().await.map(Rc::new);
    SCRATCH_DIR.with(|s| *s.borrow_mut() = Some(opened.clone()));
    opened
}

async fn open_scratch() -> Option<Scratch> {
    let global = js_sys::global();
    global.dyn_ref::<web_sys::DedicatedWorkerGlobalScope>()?;
    let handle_class = Reflect::get(&global, &"FileSystemFileHandle".into()).ok().filter(|c| !c.is_undefined())?;
    let prototype = Reflect::get(&handle_class, &"prototype".into()).ok()?;
    if !Reflect::has(&prototype, &"createSyncAccessHandle".into()).unwrap_or(false) {
        return None;
    }
    let options = web_sys::FileSystemGetDirectoryOptions::new();
    options.set_create(true);
    let dir: FileSystemDirectoryHandle = JsFuture::from(storage_root().await?.get_directory_handle_with_options(SCRATCH, &options)).await.ok()?.dyn_into().ok()?;
    let session = format!("{:08x}{:08x}", (js_sys::Math::random() * 4e9) as u32, (js_sys::Math::random() * 4e9) as u32);
    // Without Web Locks there is no telling a closed tab's files from an open one's: no sweep.
    // With them, no scratch file is written before this worker holds its lock (another tab's
    // sweep would take the file for a closed tab's).
    let navigator = Reflect::get(&global, &"navigator".into()).ok()?;
    if let Some(locks) = Reflect::get(&navigator, &"locks".into()).ok().filter(|l| !l.is_undefined()) {
        hold_lock(&locks, &format!("{SCRATCH_LOCK}{session}")).await?;
        sweep(&dir, &locks).await;
    }
    let scratch = Scratch { dir, session, next: Cell::new(0) };
    stores_copies(&scratch).await.then_some(scratch)
}

/// Whether IndexedDB keeps its own copy of a stored file's bytes, so that the scratch file can
/// go once the write has committed. A normal profile does; Chromium's off-the-record ones
/// (incognito, guest, a test driver's fresh context) keep a reference to the file instead, and
/// a blob read back after the file is removed fails. Tried once per worker with a small file.
async fn stores_copies(scratch: &Scratch) -> bool {
    const KEY: &str = "scratch-probe";
    const BYTES: [u8; 4] = [98, 101, 114, 116];
    let Some((name, file, handle)) = new_scratch_file(scratch).await else { return false };
    let written = handle.write_with_u8_array(&BYTES).map_err(js_error).and_then(|_| handle.flush().map_err(js_error));
    handle.close();
    let blob = match written {
        Ok(()) => file_blob(&file).await.ok(),
        Err(_) => None,
    };
    let stored = match blob {
        Some(blob) => put_part(KEY, &blob).await.is_ok(),
        None => false,
    };
    let _ = JsFuture::from(scratch.dir.remove_entry(&name)).await;
    let copied = stored && bytes(KEY).await.is_ok_and(|parts| parts == [BYTES.to_vec()]);
    let _ = delete(KEY).await;
    copied
}

/// The origin private file system's root (`navigator.storage.getDirectory()`), in the page or a
/// worker.
async fn storage_root() -> Option<FileSystemDirectoryHandle> {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let storage: web_sys::StorageManager = Reflect::get(&navigator, &"storage".into()).ok().filter(|s| !s.is_undefined())?.unchecked_into();
    JsFuture::from(storage.get_directory()).await.ok()?.dyn_into().ok()
}

/// The names of the entries of `dir`.
async fn entry_names(dir: &FileSystemDirectoryHandle) -> Option<Vec<String>> {
    let mut names = Vec::new();
    let keys = dir.keys();
    loop {
        let step = JsFuture::from(keys.next().ok()?).await.ok()?;
        if Reflect::get(&step, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
            return Some(names);
        }
        names.extend(Reflect::get(&step, &"value".into()).ok().and_then(|v| v.as_string()));
    }
}

/// Takes the Web Lock `name` for as long as this worker lives; returns once it is held, or
/// `None` if the request fails (then the callback never runs: waiting for it would hang).
async fn hold_lock(locks: &JsValue, name: &str) -> Option<()> {
    let mut settle = None;
    let held = js_sys::Promise::new(&mut |resolve, reject| settle = Some((resolve, reject)));
    let (granted, failed) = settle?;
    // The lock is held until the promise the callback returns settles: never.
    let callback = Closure::once_into_js(move |_lock: JsValue| -> JsValue {
        let _ = granted.call0(&JsValue::NULL);
        js_sys::Promise::new(&mut |_, _| {}).into()
    });
    let request: Function = Reflect::get(locks, &"request".into()).ok()?.dyn_into().ok()?;
    let requested: js_sys::Promise = request.call2(locks, &name.into(), &callback).ok()?.dyn_into().ok()?;
    let on_failure = Closure::once(move |error: JsValue| {
        let _ = failed.call1(&JsValue::NULL, &error);
    });
    let _ = requested.catch(&on_failure);
    on_failure.forget();
    JsFuture::from(held).await.ok().map(|_| ())
}

/// Removes the scratch files of workers that are gone (their lock is not held).
async fn sweep(dir: &FileSystemDirectoryHandle, locks: &JsValue) {
    let held = async {
        let query: Function = Reflect::get(locks, &"query".into()).ok()?.dyn_into().ok()?;
        let snapshot = JsFuture::from(query.call0(locks).ok()?.dyn_into::<js_sys::Promise>().ok()?).await.ok()?;
        let held: Array = Reflect::get(&snapshot, &"held".into()).ok()?.dyn_into().ok()?;
        Some(held.iter().filter_map(|l| Reflect::get(&l, &"name".into()).ok()?.as_string()).collect::<Vec<_>>())
    };
    let (Some(held), Some(names)) = (held.await, entry_names(dir).await) else { return };
    for name in names {
        let session = name.split('-').next().unwrap_or_default();
        if !held.iter().any(|h| h.strip_prefix(SCRATCH_LOCK) == Some(session)) {
            let _ = JsFuture::from(dir.remove_entry(&name)).await;
        }
    }
}

/// Bytes becoming a [`Blob`](web_sys::Blob) a piece at a time, to store with [`put_blobs`].
///
/// In the training worker the bytes go straight to a file in the origin private file system
/// (a synchronous handle writes them from wasm memory, no JS copy), and the blob is that file:
/// the tab never holds them. A blob built from bytes in memory, as the page's are, is held by
/// the tab until a garbage collection, which a tab left alone may not run for many seconds:
/// 270 MB for a checkpoint of MiniLM.
pub struct BlobWriter {
    target: Option<Target>,
    written: u64,
}

enum Target {
    File { scratch: Rc<Scratch>, name: String, file: FileSystemFileHandle, handle: FileSystemSyncAccessHandle },
    Memory(Array),
}

impl BlobWriter {
    /// A writer to a scratch file where the browser allows one, else to memory.
    pub async fn new() -> Self {
        let file = match scratch().await {
            Some(scratch) => scratch_file(scratch).await,
            None => None,
        };
        Self { target: Some(file.unwrap_or_else(|| Target::Memory(Array::new()))), written: 0 }
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        for chunk in bytes.chunks(BLOB_PIECE) {
            match &self.target {
                Some(Target::File { handle, .. }) => {
                    let at = web_sys::FileSystemReadWriteOptions::new();
                    at.set_at(self.written as f64);
                    let wrote = handle.write_with_u8_array_and_options(chunk, &at).map_err(js_error)?;
                    // Chromium answers a write over the quota with a short (or nonsensical)
                    // count rather than the specified QuotaExceededError; a full disk does the
                    // same. Either way the storage is full.
                    if wrote != chunk.len() as f64 {
                        return Err("QuotaExceededError: the browser could not write all of it".into());
                    }
                }
                Some(Target::Memory(pieces)) => {
                    let array = Uint8Array::new_from_slice(chunk);
                    let piece = web_sys::Blob::new_with_u8_array_sequence(&Array::of1(&array)).map_err(js_error)?;
                    crate::js_bytes::release(&array.buffer());
                    pieces.push(&piece);
                }
                None => return Err("the blob is already finished".into()),
            }
            self.written += chunk.len() as u64;
        }
        Ok(())
    }

    /// The blob of everything written.
    pub async fn finish(mut self) -> Result<StoredBlob, String> {
        match self.target.take() {
            Some(Target::File { scratch, name, file, handle }) => {
                let flushed = handle.flush().map_err(js_error);
                handle.close();
                let blob = match flushed {
                    Ok(()) => file_blob(&file).await,
                    Err(e) => Err(e),
                };
                match blob {
                    // From here on the file is the blob's: `StoredBlob` removes it.
                    Ok(blob) => Ok(StoredBlob { blob, file: Some((scratch, name)) }),
                    Err(e) => {
                        remove_later(scratch, name);
                        Err(e)
                    }
                }
            }
            Some(Target::Memory(pieces)) => Ok(StoredBlob { blob: web_sys::Blob::new_with_blob_sequence(&pieces).map_err(js_error)?, file: None }),
            None => Err("the blob is already finished".into()),
        }
    }
}

impl Drop for BlobWriter {
    /// An unfinished writer (a failed write) closes and removes its file.
    fn drop(&mut self) {
        if let Some(Target::File { scratch, name, handle, .. }) = self.target.take() {
            handle.close();
            remove_later(scratch, name);
        }
    }
}

/// Stores `blob` as the only part under `key`, without an item (nothing lists it).
async fn put_part(key: &str, blob: &web_sys::Blob) -> Result<(), String> {
    let db = open().await?;
    let result = async {
        let tx = db.transaction(&[BLOBS], TransactionMode::ReadWrite).map_err(|e| e.to_string())?;
        tx.object_store(BLOBS).map_err(|e| e.to_string())?.put(&Array::of1(blob), Some(&JsValue::from(key))).map_err(|e| e.to_string())?;
        match tx.await.map_err(|e| e.to_string())? {
            TransactionResult::Committed => Ok(()),
            TransactionResult::Aborted => Err("the write was aborted".to_string()),
        }
    }
    .await;
    db.close();
    result
}

/// A written scratch file as a plain Blob over its bytes (no copy), as the page's writes store,
/// not a File named after the scratch file.
async fn file_blob(file: &FileSystemFileHandle) -> Result<web_sys::Blob, String> {
    let file: web_sys::Blob = JsFuture::from(file.get_file()).await.map_err(js_error)?.unchecked_into();
    file.slice().map_err(js_error)
}

/// A new scratch file and its synchronous handle, as a writer's target.
async fn scratch_file(scratch: Rc<Scratch>) -> Option<Target> {
    let (name, file, handle) = new_scratch_file(&scratch).await?;
    Some(Target::File { scratch, name, file, handle })
}

/// A new scratch file: its name, handle and synchronous handle.
async fn new_scratch_file(scratch: &Scratch) -> Option<(String, FileSystemFileHandle, FileSystemSyncAccessHandle)> {
    let n = scratch.next.get();
    scratch.next.set(n + 1);
    let name = format!("{}-{n}", scratch.session);
    let options = web_sys::FileSystemGetFileOptions::new();
    options.set_create(true);
    let file: FileSystemFileHandle = JsFuture::from(scratch.dir.get_file_handle_with_options(&name, &options)).await.ok()?.dyn_into().ok()?;
    match JsFuture::from(file.create_sync_access_handle()).await.ok().and_then(|h| h.dyn_into().ok()) {
        Some(handle) => Some((name, file, handle)),
        None => {
            let _ = JsFuture::from(scratch.dir.remove_entry(&name)).await;
            None
        }
    }
}

fn remove_later(scratch: Rc<Scratch>, name: String) {
    wasm_bindgen_futures::spawn_local(async move {
        let _ = JsFuture::from(scratch.dir.remove_entry(&name)).await;
    });
}

/// A finished [`BlobWriter`]'s blob. A blob backed by a scratch file stays readable while this
/// lives; dropping it removes the file (IndexedDB has its own copy of what it stored).
pub struct StoredBlob {
    pub blob: web_sys::Blob,
    file: Option<(Rc<Scratch>, String)>,
}

impl Drop for StoredBlob {
    fn drop(&mut self) {
        if let Some((scratch, name)) = self.file.take() {
            remove_later(scratch, name);
        }
    }
}

/// The names of the scratch files now in this origin's scratch folder (for the tests, through
/// the page: see `bench.rs`), or `None` where there is no such folder.
pub async fn scratch_files() -> Option<Vec<String>> {
    let dir: FileSystemDirectoryHandle = JsFuture::from(storage_root().await?.get_directory_handle(SCRATCH)).await.ok()?.dyn_into().ok()?;
    entry_names(&dir).await
}

/// A JS error as text: a `DOMException`'s name and message (the name says “QuotaExceededError”).
fn js_error(e: JsValue) -> String {
    match Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()) {
        Some(name) if !name.is_empty() && name != "Error" => format!("{name}: {}", js_message(e)),
        _ => js_message(e),
    }
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
    let details = Reflect::get(&estimate, &"usageDetails".into()).ok().filter(|d| d.is_object()).map(|d| {
        let part = |key: &str| Reflect::get(&d, &key.into()).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
        UsageDetails { saved: part("indexedDB"), offline: part("caches") + part("serviceWorkerRegistrations"), scratch: part("fileSystem") }
    });
    Some(Usage { used: number("usage")?, quota: number("quota")?, details })
}

/// Deletes every saved item and its bytes (the offline copy of the page stays), and the scratch
/// files of writes no open tab is making.
pub async fn delete_all() -> Result<(), String> {
    let db = open().await?;
    let result = async {
        let tx = db.transaction(&[ITEMS, BLOBS], TransactionMode::ReadWrite).map_err(|e| e.to_string())?;
        for store in [ITEMS, BLOBS] {
            tx.object_store(store).map_err(|e| e.to_string())?.clear().map_err(|e| e.to_string())?;
        }
        match tx.await.map_err(|e| e.to_string())? {
            TransactionResult::Committed => Ok(()),
            TransactionResult::Aborted => Err("the delete was aborted".to_string()),
        }
    }
    .await;
    db.close();
    result.map_err(|e| format!("could not delete: {e}"))?;
    free_scratch().await;
    Ok(())
}

/// Removes the scratch files whose writer is gone (no Web Lock held for them): a tab closed in
/// the middle of a write leaves its file behind, and only this sweep frees it.
pub async fn free_scratch() {
    let Some(root) = storage_root().await else { return };
    let Ok(dir) = JsFuture::from(root.get_directory_handle(SCRATCH)).await else { return };
    let Ok(dir) = dir.dyn_into::<FileSystemDirectoryHandle>() else { return };
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok();
    if let Some(locks) = navigator.and_then(|n| Reflect::get(&n, &"locks".into()).ok()).filter(|l| !l.is_undefined()) {
        sweep(&dir, &locks).await;
    }
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
