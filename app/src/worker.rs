//! The training worker: the same wasm as the page, started in a dedicated Web Worker by
//! `worker.js`, so fine-tuning and batch prediction never block the page.
//!
//! It holds the base model, the run in progress and the current classifier (trained or
//! imported), and answers [`ToWorker`] messages with [`FromWorker`] ones. Training yields to the
//! worker's event loop every few tens of milliseconds so that Pause and Cancel arrive.

use std::cell::{Cell, RefCell};
use std::io::{Cursor, Read, Write};
use std::rc::Rc;

use bertbench_core::burn::prelude::{Device, Tensor};
use bertbench_core::bert::checkpoint::{self, LoadedModel, CheckpointFiles};
use bertbench_core::tasks::classification::{self, HEAD_FILE, LoadedClassifier};
use bertbench_core::tasks::metrics::argmax;
use bertbench_core::tokenizer::by_length;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::bert::config::{BertConfig, Preset};
use bertbench_core::tasks::pretraining::{self, BertForPreTraining};
use bertbench_core::train::{PretrainStep, Pretrainer};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::tasks::classification::predict;
use bertbench_core::train::session::{Ended, Host, Session, better, restart_seed};
use bertbench_core::train::{CheckpointPolicy, EvalReport, Event, FileSink, FineTuner, Snapshot, StepPoint, copy_to, encode_examples};
use futures::channel::oneshot;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, DedicatedWorkerGlobalScope, MessageEvent};

use crate::engine;
use crate::fetch::sleep_ms;
use crate::protocol::{
    Backend, CHECKPOINT_ID, CheckpointMeta, FromWorker, LAB_FILES, LabEvent, LabRequest, LabVocab, Mistake, RunSummary, ToWorker, TrainEvent,
    TrainRequest, decode, encode,
};
use crate::store::{self, BlobWriter, Item, Kind, StoredBlob};
use crate::widgets::now_ms;

/// The current classifier and what it needs to predict and export.
struct Current {
    loaded: LoadedClassifier,
    device: Device,
    tokenizer_json: Option<Vec<u8>>,
    vocab_txt: Option<Vec<u8>>,
}

/// The MLM lab's model, kept after a run for fill-mask and export.
struct LabModel {
    model: BertForPreTraining,
    tokenizer: BertTokenizer,
    config: BertConfig,
    device: Device,
    tokenizer_json: Option<Vec<u8>>,
    vocab_txt: Option<Vec<u8>>,
}

/// The pretrained model runs start from, loaded once on the CPU (from the page's bytes, or read
/// from `models/<id>/` by [`base_model`]). A run on the CPU starts from these very tensors
/// (modules are immutable values, so sharing them costs no memory); a run on WebGPU copies them
/// to the GPU. A run of one restart from a `downloadable` base lets go of it while it trains
/// (`Job::execute`), and [`base_model`] reads it again when next needed. The checkpoint's bytes are not kept: a
/// second copy of the weights (and the copies made by loading them again) would add about 180 MB
/// for MiniLM to every run's peak.
struct Base {
    id: String,
    /// One of the page's own models (`models/<id>/`), which the worker can read again.
    downloadable: bool,
    bert: LoadedModel,
    tokenizer_json: Option<Vec<u8>>,
    vocab_txt: Option<Vec<u8>>,
}

impl Base {
    /// The base model on `device` (an autodiff device, for training).
    async fn on(&self, device: &Device, backend: Backend) -> Result<LoadedModel, String> {
        match backend {
            Backend::Cpu => Ok(self.bert.clone()),
            Backend::WebGpu => {
                let model = copy_to(self.bert.model.clone(), device).await.map_err(|e| e.to_string())?;
                Ok(LoadedModel { model, ..self.bert.clone() })
            }
        }
    }
}

#[derive(Default)]
struct State {
    base: Option<Rc<Base>>,
    /// The page's own model that is the base but not in memory: asked for and not read yet,
    /// or let go of during a run (see [`base_model`]).
    base_to_read: Option<String>,
    /// While a base model is being read (see [`base_model`]): who waits for it.
    base_reading: Option<Vec<oneshot::Sender<()>>>,
    /// Counts `SetBase` requests: a download overtaken by a newer request is dropped.
    base_generation: u32,
    current: Option<Rc<Current>>,
    lab: Option<Rc<LabModel>>,
    run: Option<u32>,
    control: Rc<Control>,
    /// The run in progress ran on WebGPU and the device failed under it.
    gpu_lost: bool,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

const BUSY: &str = "a run is already in progress; cancel it first";

/// Pause and cancel of the worker's one run, as the page asked them. A paused run waits on a
/// channel that Resume and Cancel close, rather than polling the flag.
#[derive(Default)]
struct Control {
    paused: Cell<bool>,
    cancelled: Cell<bool>,
    waiters: RefCell<Vec<oneshot::Sender<()>>>,
}

impl Control {
    fn set_paused(&self, paused: bool) {
        self.paused.set(paused);
        if !paused {
            self.wake();
        }
    }

    fn cancel(&self) {
        self.cancelled.set(true);
        self.set_paused(false);
    }

    fn wake(&self) {
        for waiter in self.waiters.borrow_mut().drain(..) {
            let _ = waiter.send(());
        }
    }
}

impl Host for Control {
    fn now_ms(&self) -> f64 {
        now_ms()
    }

    fn cancelled(&self) -> bool {
        self.cancelled.get()
    }

    async fn until_resumed(&self) {
        while self.paused.get() && !self.cancelled.get() {
            let (waiter, woken) = oneshot::channel();
            self.waiters.borrow_mut().push(waiter);
            let _ = woken.await;
        }
    }

    async fn breathe(&self) {
        // A macrotask, so the page's messages (Pause, Cancel) are handled in between.
        sleep_ms(0).await;
    }
}

/// Makes `run` the worker's one run, with a fresh [`Control`]; `None` while another run
/// (fine-tuning or pretraining) holds the worker.
fn begin_run(run: u32) -> Option<Rc<Control>> {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.run.is_some() {
            return None;
        }
        s.run = Some(run);
        s.control = Rc::new(Control::default());
        Some(s.control.clone())
    })
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(message: &FromWorker, bytes: &[&[u8]]) {
    let (data, transfer) = encode(message, bytes);
    let _ = scope().post_message_with_transfer(&data, &transfer);
}

/// Whether this wasm instance runs in a worker (no `window`).
pub fn in_worker() -> bool {
    web_sys::window().is_none()
}

/// Starts listening; called from `start` (lib.rs) when there is no `window`.
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        let message = format!("the training worker hit an internal error and stopped: {info}. Reload the page.");
        // The run in progress (if any) ends here: say so, so the page does not wait for it.
        if let Some(run) = STATE.try_with(|s| s.try_borrow().ok().and_then(|s| s.run)).ok().flatten() {
            post(&FromWorker::Failed { run, message: message.clone(), gpu_lost: false }, &[]);
        }
        post(&FromWorker::Error { message }, &[]);
    }));
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(|event: MessageEvent| match decode::<ToWorker>(&event.data()) {
        Ok((message, bytes)) => handle(message, bytes),
        Err(e) => post(&FromWorker::Error { message: e }, &[]),
    });
    scope().set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
}

/// How many threads burn's CPU backend computes on here: rayon's pool (started by `worker.js`
/// through `initThreadPool`) in the threaded build, else this one.
pub fn threads() -> usize {
    #[cfg(feature = "threads")]
    {
        rayon::current_num_threads()
    }
    #[cfg(not(feature = "threads"))]
    {
        1
    }
}

/// Called by `worker.js` once the thread pool (if any) is up: tells the page the worker is
/// ready. Not before: a job must not reach burn before rayon's pool exists, or rayon would build
/// its own one-thread pool and `initThreadPool` could no longer replace it.
#[wasm_bindgen]
pub fn worker_ready(note: String) {
    post(&FromWorker::Ready { threads: threads(), note, fused_multiply_add: bertbench_core::nn::linear::gemm::FUSED_MULTIPLY_ADD }, &[]);
}

/// Loads `files` as the base model runs start from.
fn set_base(model_id: String, files: CheckpointFiles, downloadable: bool) {
    let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
    match checkpoint::load(files, &Device::flex().autodiff()) {
        Ok(bert) => {
            let base = Base { id: model_id.clone(), downloadable, bert, tokenizer_json, vocab_txt };
            STATE.with(|s| s.borrow_mut().base = Some(Rc::new(base)));
            post(&FromWorker::BaseSet { model_id }, &[]);
        }
        Err(e) => post(&FromWorker::Error { message: format!("the training worker could not load {model_id}: {e}") }, &[]),
    }
}

/// The base model; one of the page's own models is read from `models/<id>/` (the offline
/// cache) when it is not in memory.
async fn base_model() -> Option<Rc<Base>> {
    loop {
        let reading = STATE.with(|s| {
            s.borrow_mut().base_reading.as_mut().map(|waiters| {
                let (waiter, woken) = oneshot::channel();
                waiters.push(waiter);
                woken
            })
        });
        if let Some(woken) = reading {
            let _ = woken.await;
            continue;
        }
        let (base, to_read, generation) = STATE.with(|s| {
            let s = s.borrow();
            (s.base.clone(), s.base_to_read.clone(), s.base_generation)
        });
        let Some(model_id) = to_read.filter(|_| base.is_none()) else { return base };
        STATE.with(|s| s.borrow_mut().base_reading = Some(Vec::new()));
        let files = engine::download(&model_id, |_, _, _| {}).await;
        // A newer SetBase overtook this one: its own state stands.
        if STATE.with(|s| s.borrow().base_generation) == generation {
            STATE.with(|s| s.borrow_mut().base_to_read = None);
            match files {
                Ok(files) => set_base(model_id, files, true),
                Err(e) => post(&FromWorker::Error { message: format!("the training worker could not load {model_id}: {e}") }, &[]),
            }
            base_read_ended();
        }
    }
}

/// Wakes whoever waits for the base model's read (it ended, or a newer `SetBase` overtook it).
fn base_read_ended() {
    for waiter in STATE.with(|s| s.borrow_mut().base_reading.take()).into_iter().flatten() {
        let _ = waiter.send(());
    }
}

fn handle(message: ToWorker, bytes: Vec<Vec<u8>>) {
    match message {
        ToWorker::SetBase { model_id, download, tokenizer_json, vocab_txt } => {
            // The old base goes first, so that two models' weights are never held at once.
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                s.base = None;
                s.base_generation += 1;
                s.base_to_read = download.then(|| model_id.clone());
            });
            base_read_ended();
            if download {
                // Read when a run first needs it (`base_model`).
                wasm_bindgen_futures::spawn_local(async {
                    base_model().await;
                });
            } else {
                let mut it = bytes.into_iter();
                let files = CheckpointFiles {
                    config_json: it.next().unwrap_or_default(),
                    weights: it.next().unwrap_or_default(),
                    tokenizer_json: if tokenizer_json { it.next() } else { None },
                    vocab_txt: if vocab_txt { it.next() } else { None },
                };
                set_base(model_id, files, false);
            }
        }
        ToWorker::Train(request) => {
            let run = request.run;
            let Some(control) = begin_run(run) else {
                post(&FromWorker::Failed { run, message: BUSY.into(), gpu_lost: false }, &[]);
                return;
            };
            wasm_bindgen_futures::spawn_local(async move {
                let job = Job::new(*request, control, None);
                finish_run(run, job.execute().await).await;
            });
        }
        ToWorker::ResumeRun { run, backend } => {
            let Some(control) = begin_run(run) else {
                post(&FromWorker::Failed { run, message: BUSY.into(), gpu_lost: false }, &[]);
                return;
            };
            wasm_bindgen_futures::spawn_local(async move {
                let result = match load_checkpoint().await {
                    Ok((meta, resume)) => {
                        let mut request = meta.request.clone();
                        request.run = run;
                        request.backend = backend;
                        Job::new(request, control, Some((meta, resume))).execute().await
                    }
                    Err(message) => Err(message),
                };
                finish_run(run, result).await;
            });
        }
        ToWorker::SaveRun { item } => {
            let current = STATE.with(|s| s.borrow().current.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let id = item.id.clone();
                let zip = match current {
                    Some(c) => host_zip(&c, &item.name).await,
                    None => Err("there is no classifier to save".to_string()),
                };
                let saved = match zip {
                    Ok(zip) => {
                        let item = Item { size: zip.len() as u64, ..*item };
                        store::put(&item, &[&zip]).await
                    }
                    Err(e) => Err(e),
                };
                match saved {
                    Ok(()) => post(&FromWorker::Saved { id }, &[]),
                    Err(message) => post(&FromWorker::SaveFailed { id, message }, &[]),
                }
            });
        }
        ToWorker::Pause | ToWorker::Resume => {
            let pause = matches!(message, ToWorker::Pause);
            STATE.with(|s| {
                let s = s.borrow();
                if let Some(run) = s.run {
                    s.control.set_paused(pause);
                    post(&FromWorker::Paused { run, paused: pause }, &[]);
                }
            });
        }
        ToWorker::Cancel => STATE.with(|s| {
            let s = s.borrow();
            s.control.cancel();
        }),
        ToWorker::Predict { request, texts } => {
            let current = STATE.with(|s| s.borrow().current.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let Some(current) = current else {
                    post(&FromWorker::Refused { request, message: "there is no classifier yet: train or import one first".into() }, &[]);
                    return;
                };
                match predict_texts(&current, &texts).await {
                    Ok(probs) => post(&FromWorker::Predictions { request, labels: current.loaded.meta.labels.clone(), probs }, &[]),
                    Err(message) => post(&FromWorker::Refused { request, message }, &[]),
                }
            });
        }
        ToWorker::Export { request, name } => {
            let current = STATE.with(|s| s.borrow().current.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let zip = match current {
                    Some(c) => host_zip(&c, &name).await,
                    None => Err("there is no classifier to export yet".to_string()),
                };
                match zip {
                    Ok(zip) => post(&FromWorker::Exported { request, file_name: format!("{name}.zip") }, &[&zip]),
                    Err(message) => post(&FromWorker::Refused { request, message }, &[]),
                }
            });
        }
        ToWorker::Encoder { request } => {
            let current = STATE.with(|s| s.borrow().current.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let out = match current {
                    None => Err("there is no fine-tuned model yet: train or import one first".to_string()),
                    // Copied to the CPU first: saving reads tensors synchronously (not possible on WebGPU).
                    Some(c) => match copy_to(c.loaded.model.bert.clone(), &Device::flex()).await {
                        Ok(bert) => checkpoint::save_weights(&bert).map(|w| (c.loaded.config.to_hf_json(), w, c)).map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    },
                };
                match out {
                    Ok((config, weights, c)) => {
                        let mut files: Vec<&[u8]> = vec![&config, &weights];
                        files.extend(c.tokenizer_json.as_deref());
                        files.extend(c.vocab_txt.as_deref());
                        let message = FromWorker::Encoder {
                            request,
                            labels: c.loaded.meta.labels.clone(),
                            tokenizer_json: c.tokenizer_json.is_some(),
                            vocab_txt: c.vocab_txt.is_some(),
                        };
                        post(&message, &files);
                    }
                    Err(message) => post(&FromWorker::Refused { request, message }, &[]),
                }
            });
        }
        ToWorker::Pretrain(request) => {
            let run = request.run;
            let Some(control) = begin_run(run) else {
                post(&FromWorker::LabFailed { run, message: BUSY.into() }, &[]);
                return;
            };
            wasm_bindgen_futures::spawn_local(async move {
                let started = now_ms();
                match run_lab(*request, &control).await {
                    Ok((lab, was_cancelled, steps)) => {
                        STATE.with(|s| s.borrow_mut().lab = Some(Rc::new(lab)));
                        post(&FromWorker::LabFinished { run, cancelled: was_cancelled, steps, seconds: (now_ms() - started) / 1000.0 }, &[]);
                    }
                    Err(message) => post(&FromWorker::LabFailed { run, message }, &[]),
                }
                STATE.with(|s| s.borrow_mut().run = None);
            });
        }
        ToWorker::FillMask { request, text } => {
            let lab = STATE.with(|s| s.borrow().lab.clone());
            wasm_bindgen_futures::spawn_local(async move {
                let Some(lab) = lab else {
                    post(&FromWorker::Refused { request, message: "there is no lab model yet: train one first".into() }, &[]);
                    return;
                };
                match pretraining::fill_mask(&lab.model, &lab.tokenizer, &text, 5, &lab.device).await {
                    Ok(fills) => post(&FromWorker::Filled { request, fills }, &[]),
                    Err(e) => post(&FromWorker::Refused { request, message: e.to_string() }, &[]),
                }
            });
        }
        ToWorker::LabExport { request } => {
            let lab = STATE.with(|s| s.borrow().lab.clone());
            let out = lab.ok_or_else(|| "there is no lab model yet: train one first".to_string()).and_then(|lab| {
                pretraining::export(&lab.model, &lab.config, lab.tokenizer_json.as_deref(), lab.vocab_txt.as_deref()).map_err(|e| e.to_string())
            });
            match out {
                Ok(files) => {
                    let names = files.iter().map(|(n, _)| n.clone()).collect();
                    let bytes: Vec<&[u8]> = files.iter().map(|(_, b)| b.as_slice()).collect();
                    post(&FromWorker::LabExported { request, names }, &bytes);
                }
                Err(message) => post(&FromWorker::Refused { request, message }, &[]),
            }
        }
        ToWorker::SaveLab { item } => {
            let lab = STATE.with(|s| s.borrow().lab.clone());
            let corpus = bytes.into_iter().next().unwrap_or_default();
            wasm_bindgen_futures::spawn_local(async move {
                let id = item.id.clone();
                let files = lab.ok_or_else(|| "there is no lab model to save".to_string()).and_then(|lab| {
                    pretraining::export(&lab.model, &lab.config, lab.tokenizer_json.as_deref(), lab.vocab_txt.as_deref()).map_err(|e| e.to_string())
                });
                let saved = match files {
                    Ok(files) => {
                        // The files in LAB_FILES order (an absent one empty), then the corpus.
                        let parts: Vec<&[u8]> = LAB_FILES
                            .iter()
                            .map(|name| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice()).unwrap_or(&[]))
                            .chain([corpus.as_slice()])
                            .collect();
                        let item = Item { size: parts.iter().map(|p| p.len() as u64).sum(), ..*item };
                        store::put(&item, &parts).await
                    }
                    Err(e) => Err(e),
                };
                match saved {
                    Ok(()) => post(&FromWorker::Saved { id }, &[]),
                    Err(message) => post(&FromWorker::SaveFailed { id, message }, &[]),
                }
            });
        }
        ToWorker::OpenLab { run } => {
            if STATE.with(|s| s.borrow().run.is_some()) {
                post(&FromWorker::LabFailed { run, message: BUSY.into() }, &[]);
                return;
            }
            match open_lab(bytes) {
                Ok(lab) => {
                    STATE.with(|s| s.borrow_mut().lab = Some(Rc::new(lab)));
                    post(&FromWorker::LabOpened { run }, &[]);
                }
                Err(message) => post(&FromWorker::LabFailed { run, message }, &[]),
            }
        }
        ToWorker::Import { request, names } => match import(names, bytes) {
            Ok(current) => {
                let description = format!(
                    "{} labels ({}), features: {}",
                    current.loaded.meta.labels.len(),
                    current.loaded.meta.labels.join(", "),
                    current.loaded.meta.spec.label()
                );
                let meta = current.loaded.meta.clone();
                STATE.with(|s| s.borrow_mut().current = Some(Rc::new(current)));
                post(&FromWorker::Imported { request, meta, description }, &[]);
            }
            Err(message) => post(&FromWorker::Refused { request, message: format!("The classifier could not be imported: {message}") }, &[]),
        },
    }
}

async fn predict_texts(current: &Current, texts: &[(String, Option<String>)]) -> Result<Vec<Vec<f32>>, String> {
    let tok = &current.loaded.tokenizer;
    let encoded = texts
        .iter()
        .enumerate()
        .map(|(i, (a, b))| {
            tok.encode_text(a, b.as_deref()).map_err(|e| if texts.len() > 1 { format!("row {}: {e}", i + 1) } else { e.to_string() })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Shortest first across the whole file, so each batch pads to about its own length.
    let mut out = vec![Vec::new(); encoded.len()];
    let mut last_yield = now_ms();
    for indices in by_length(&encoded).chunks(32) {
        let chunk: Vec<_> = indices.iter().map(|&i| encoded[i].clone()).collect();
        let probs = predict(&current.loaded.model, &chunk, tok.pad_id, 32, &current.device).await.map_err(|e| e.to_string())?;
        for (&i, p) in indices.iter().zip(probs) {
            out[i] = p;
        }
        if now_ms() - last_yield > 30.0 {
            sleep_ms(0).await;
            last_yield = now_ms();
        }
    }
    Ok(out)
}

/// Files written into [`BlobWriter`]s, one after another: the checkpoint's files go to the
/// browser's storage a few megabytes at a time, and neither the worker's memory nor the tab's
/// ever holds a whole file (360 MB for MiniLM with AdamW's moments and the best weights).
#[derive(Default)]
struct BlobFiles {
    done: Vec<(String, StoredBlob)>,
    open: Option<(String, BlobWriter)>,
}

impl BlobFiles {
    async fn close(&mut self) -> Result<(), String> {
        if let Some((name, writer)) = self.open.take() {
            self.done.push((name, writer.finish().await?));
        }
        Ok(())
    }

    /// Every file, finished.
    async fn finish(mut self) -> Result<Vec<(String, StoredBlob)>, String> {
        self.close().await?;
        Ok(std::mem::take(&mut self.done))
    }
}

impl FileSink for BlobFiles {
    async fn begin(&mut self, name: &str) -> bertbench_core::Result<()> {
        self.close().await.map_err(bertbench_core::Error::Training)?;
        self.open = Some((name.to_string(), BlobWriter::new().await));
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> bertbench_core::Result<()> {
        let (_, writer) = self.open.as_mut().ok_or_else(|| bertbench_core::Error::Training("no file was begun".into()))?;
        writer.write(bytes).map_err(bertbench_core::Error::Training)
    }
}

/// `tuner`'s snapshot as stored blobs ([`BlobFiles`]). A failure says why, as a save's would
/// (the storage quota, say).
async fn snapshot_blobs(tuner: &FineTuner, with_optimizer: bool) -> Result<Vec<(String, StoredBlob)>, String> {
    let mut files = BlobFiles::default();
    let written = tuner.write_snapshot(with_optimizer, &mut files).await;
    match written {
        Ok(()) => files.finish().await,
        Err(e) => Err(store::write_error("The checkpoint", e.to_string()).await),
    }
}

/// Files in memory as stored blobs.
async fn stored_blobs(files: Vec<(String, Vec<u8>)>) -> Result<Vec<(String, StoredBlob)>, String> {
    let mut out = BlobFiles::default();
    for (name, bytes) in files {
        out.begin(&name).await.map_err(|e| e.to_string())?;
        out.write(&bytes).map_err(|e| e.to_string())?;
    }
    out.finish().await
}

/// Ends run `run`: keeps its classifier, forgets its checkpoint (unless it failed: then the
/// checkpoint stays, to resume from), and tells the page.
async fn finish_run(run: u32, result: Result<(RunSummary, Current), String>) {
    match result {
        Ok((summary, current)) => {
            STATE.with(|s| s.borrow_mut().current = Some(Rc::new(current)));
            let _ = store::delete(CHECKPOINT_ID).await;
            post(&FromWorker::Finished { run, summary: Box::new(summary) }, &[]);
        }
        Err(message) => {
            let gpu_lost = STATE.with(|s| s.borrow().gpu_lost);
            post(&FromWorker::Failed { run, message, gpu_lost }, &[]);
        }
    }
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.run = None;
        s.gpu_lost = false;
    });
}

/// A run's state read back from a checkpoint: the current restart's snapshot and the best
/// earlier restart's.
struct Resume {
    current: Snapshot,
    kept: Option<Snapshot>,
}

/// Reads the saved checkpoint; checks the worker has the base model it was trained from.
async fn load_checkpoint() -> Result<(CheckpointMeta, Resume), String> {
    let item = store::get(CHECKPOINT_ID).await?.ok_or("there is no saved checkpoint to resume")?;
    let meta: CheckpointMeta = serde_json::from_str(&item.json).map_err(|e| format!("the checkpoint is unreadable: {e}"))?;
    let base = base_model().await.map(|b| b.id.clone());
    if base.as_deref() != Some(meta.base_model.as_str()) {
        return Err(format!("the checkpoint was trained from {}; load that model first", meta.base_model));
    }
    let mut bytes = store::bytes(CHECKPOINT_ID).await?.into_iter();
    let mut take = |names: &[String]| names.iter().map(|n| (n.clone(), bytes.next().unwrap_or_default())).collect::<Vec<_>>();
    let current = take(&meta.files);
    let kept = take(&meta.kept_files);
    let current = Snapshot::from_files(current).map_err(|e| e.to_string())?;
    let kept = if kept.is_empty() { None } else { Some(Snapshot::from_files(kept).map_err(|e| e.to_string())?) };
    Ok((meta, Resume { current, kept }))
}

struct Job {
    request: TrainRequest,
    control: Rc<Control>,
    resume: Option<(CheckpointMeta, Resume)>,
    /// Steps and evaluations of the current restart, for the checkpoint.
    log: RefCell<(Vec<StepPoint>, Vec<EvalReport>)>,
    /// Drives every restart: the checkpoint cadence (core's default policy) runs across them.
    session: RefCell<Session>,
    /// Seconds trained before a resume.
    seconds_before: f64,
    device_name: RefCell<String>,
    /// The base model's id, for the checkpoint (the worker may let go of the base itself).
    base_id: RefCell<String>,
}

impl Job {
    fn new(request: TrainRequest, control: Rc<Control>, resume: Option<(CheckpointMeta, Resume)>) -> Self {
        let (log, seconds_before) = match &resume {
            Some((meta, _)) => ((meta.steps.clone(), meta.evals.clone()), meta.seconds),
            None => ((Vec::new(), Vec::new()), 0.0),
        };
        Self {
            request,
            control,
            resume,
            log: RefCell::new(log),
            session: RefCell::new(Session::new(CheckpointPolicy::default())),
            seconds_before,
            device_name: RefCell::new(String::new()),
            base_id: RefCell::new(String::new()),
        }
    }

    fn send(&self, event: TrainEvent) {
        post(&FromWorker::Event { run: self.request.run, event }, &[]);
    }

    /// The message for a training error; notes a failed WebGPU device, so the page can go on
    /// on the CPU.
    fn failure(&self, e: bertbench_core::Error) -> String {
        if self.request.backend == Backend::WebGpu && matches!(e, bertbench_core::Error::Device(_)) {
            STATE.with(|s| s.borrow_mut().gpu_lost = true);
        }
        e.to_string()
    }

    /// Saves `tuner` (restart `restart`) and the best earlier restart's files as the checkpoint.
    async fn checkpoint(&self, tuner: &FineTuner, restart: usize, kept: &[(String, StoredBlob)], started: f64) {
        let run = self.request.run;
        // AdamW's moments are kept (read asynchronously, so on WebGPU too): a resumed run takes
        // the same steps as the uninterrupted one would have.
        let with_optimizer = true;
        let files = match snapshot_blobs(tuner, with_optimizer).await {
            Ok(f) => f,
            Err(message) => {
                post(&FromWorker::CheckpointFailed { run, message }, &[]);
                return;
            }
        };
        let progress = tuner.progress();
        let epoch = tuner.epochs_done();
        let (steps, evals) = self.log.borrow().clone();
        let meta = CheckpointMeta {
            request: self.request.clone(),
            base_model: self.base_id.borrow().clone(),
            restart,
            files: files.iter().map(|(n, _)| n.clone()).collect(),
            kept_files: kept.iter().map(|(n, _)| n.clone()).collect(),
            step: progress.step,
            total_steps: progress.total_steps,
            epoch,
            phase: progress.phase,
            with_optimizer,
            seconds: self.seconds_before + (now_ms() - started) / 1000.0,
            device: self.device_name.borrow().clone(),
            steps,
            evals,
        };
        let blobs: Vec<Blob> = files.iter().chain(kept).map(|(_, b)| b.blob.clone()).collect();
        let item = Item {
            id: CHECKPOINT_ID.into(),
            kind: Kind::Checkpoint,
            name: format!("checkpoint of the run in progress (step {})", progress.step),
            saved_ms: js_sys::Date::now(),
            size: blobs.iter().map(|b| b.size() as u64).sum(),
            json: serde_json::to_string(&meta).unwrap_or_default(),
        };
        match store::put_blobs(&item, &blobs).await {
            Ok(()) => post(&FromWorker::Checkpointed { run, step: progress.step, epoch }, &[]),
            Err(message) => post(&FromWorker::CheckpointFailed { run, message }, &[]),
        }
    }

    /// Runs `tuner` to its end (or until cancelled: returns true) in the job's session,
    /// forwarding its events and saving checkpoints when the session says they are due.
    async fn drive(
        &self,
        tuner: &mut FineTuner,
        cached: &mut Option<(Tensor<2>, Tensor<2>)>,
        restart: usize,
        kept: &[(String, StoredBlob)],
        started: f64,
    ) -> Result<bool, String> {
        let mut session = self.session.borrow().clone();
        let ended = session
            .drive(
                tuner,
                &*self.control,
                async |tuner: &FineTuner, event: Event| {
                    let event = match event {
                        Event::Finished => return,
                        Event::Features { done, total } => TrainEvent::Features { done, total },
                        Event::PhaseStarted { phase, steps } => {
                            if cached.is_none() {
                                *cached = tuner.features();
                            }
                            TrainEvent::Phase { phase, steps }
                        }
                        Event::Step(point) => {
                            self.log.borrow_mut().0.push(point.clone());
                            TrainEvent::Step(point)
                        }
                        Event::Evaluating { done, total } => TrainEvent::Evaluating { done, total },
                        Event::Evaluated(report) => {
                            self.log.borrow_mut().1.push((*report).clone());
                            TrainEvent::Evaluated(report)
                        }
                    };
                    self.send(event);
                },
                async |tuner: &FineTuner| self.checkpoint(tuner, restart, kept, started).await,
            )
            .await;
        *self.session.borrow_mut() = session;
        Ok(ended.map_err(|e| self.failure(e))? == Ended::Cancelled)
    }

    async fn execute(mut self) -> Result<(RunSummary, Current), String> {
        let started = now_ms();
        let base = base_model().await.ok_or("no model is loaded in the worker yet")?;
        let (device, device_name) = match self.request.backend {
            Backend::Cpu => (Device::flex(), match threads() {
                1 => "CPU".to_string(),
                n => format!("CPU · {n} threads"),
            }),
            Backend::WebGpu => {
                let gpu = engine::gpu().await.map_err(|e| format!("WebGPU is unavailable in the worker: {e}"))?;
                (gpu.device, format!("WebGPU · {}", gpu.adapter))
            }
        };
        *self.device_name.borrow_mut() = device_name.clone();
        let ad = device.clone().autodiff();
        let LoadedModel { model: base_weights, config, tokenizer, .. } = base.on(&ad, self.request.backend).await?;
        let restarts = self.request.restarts.max(1);
        // One run from one of the page's own models: the worker lets go of the base while it
        // trains (the run starts from its very tensors, the only copy then, 90 MB less for
        // MiniLM) and reads it again from the offline cache when it next needs it.
        let let_go = base.downloadable && restarts == 1;
        *self.base_id.borrow_mut() = base.id.clone();
        let (tokenizer_json, vocab_txt) = (base.tokenizer_json.clone(), base.vocab_txt.clone());
        if let_go {
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                s.base = None;
                s.base_to_read = Some(base.id.clone());
            });
        }
        drop(base);
        let has_pooler = base_weights.pooler.is_some();
        // A run from random weights never needs the base's.
        let base_weights = RefCell::new(Some(base_weights).filter(|_| !self.request.from_scratch));
        let max_len = self.request.max_len.clamp(8, config.max_position_embeddings);
        let tokenizer = tokenizer.with_max_len(max_len);
        let train = encode_examples(&tokenizer, &self.request.train, &self.request.labels).map_err(|e| e.to_string())?;
        let valid = encode_examples(&tokenizer, &self.request.valid, &self.request.labels).map_err(|e| e.to_string())?;
        let mut kept: Option<FineTuner> = None;
        // The best finished restart, as checkpoint files (written once, saved with every
        // checkpoint), in Blobs: out of wasm memory.
        let mut kept_files: Vec<(String, StoredBlob)> = Vec::new();
        let mut cancelled = false;
        // Frozen features are the same for every seed: computed once, reused by restarts.
        let mut cached = None;
        let fresh = |seed: u64| {
            let run_config = self.request.config.clone().with_seed(seed);
            // Every restart starts from the pretrained weights (modules are immutable values), or
            // from fresh random ones for the baseline.
            let start = if self.request.from_scratch {
                BertModelConfig::new(config.clone()).with_with_pooler(has_pooler).init(&ad)
            } else if let_go {
                base_weights.borrow_mut().take().ok_or("the base model's weights were already used")?
            } else {
                base_weights.borrow().clone().ok_or("the base model's weights were already used")?
            };
            FineTuner::new(start, tokenizer.pad_id, max_len, self.request.labels.clone(), train.clone(), valid.clone(), run_config, &ad)
                .map_err(|e| e.to_string())
        };
        let resume = self.resume.take();
        let first = resume.as_ref().map_or(0, |(meta, _)| meta.restart);
        let mut resume = resume.map(|(_, r)| r);
        for index in first..restarts {
            let seed = restart_seed(self.request.config.seed, index);
            if restarts > 1 {
                self.send(TrainEvent::Restart { index, of: restarts, seed });
            }
            let mut tuner = fresh(seed)?;
            match resume.take() {
                Some(r) => {
                    if let Some(k) = r.kept {
                        let k_seed = k.state.seed;
                        kept_files = stored_blobs(k.clone().into_files()).await?;
                        kept = Some(fresh(k_seed)?.restore(k).map_err(|e| e.to_string())?);
                    }
                    tuner = tuner.restore(r.current).map_err(|e| e.to_string())?;
                    cached = tuner.features();
                    let p = tuner.progress();
                    self.send(TrainEvent::Phase { phase: p.phase, steps: p.total_steps });
                }
                None => {
                    self.log.replace((Vec::new(), Vec::new()));
                    if let Some((f_train, f_valid)) = cached.clone() {
                        tuner.reuse_features(f_train, f_valid).map_err(|e| e.to_string())?;
                    }
                }
            }
            cancelled = self.drive(&mut tuner, &mut cached, index, &kept_files, started).await?;
            if better(kept.as_ref().and_then(FineTuner::best_accuracy), tuner.best_accuracy()) {
                if index + 1 < restarts && !cancelled {
                    kept_files = snapshot_blobs(&tuner, false).await.unwrap_or_default();
                }
                kept = Some(tuner);
            }
            if cancelled {
                break;
            }
        }
        let Some(tuner) = kept else {
            return Err("the run was cancelled before its first evaluation, so there is no classifier to keep".into());
        };
        let (metrics, probs) = tuner.best().ok_or("no evaluation was recorded")?;
        let labels = &self.request.labels;
        let mut mistakes: Vec<Mistake> = self
            .request
            .valid
            .iter()
            .zip(probs)
            .filter_map(|(ex, p)| {
                let predicted = argmax(p);
                (labels[predicted] != ex.label).then(|| Mistake {
                    line: ex.line,
                    text: match &ex.text_pair {
                        Some(b) => format!("{} ‖ {b}", ex.text),
                        None => ex.text.clone(),
                    },
                    label: ex.label.clone(),
                    predicted: labels[predicted].clone(),
                    probs: p.clone(),
                })
            })
            .collect();
        mistakes.sort_by(|a, b| {
            let conf = |m: &Mistake| m.probs.iter().cloned().fold(0.0, f32::max);
            conf(b).total_cmp(&conf(a))
        });
        mistakes.truncate(500);
        let summary = RunSummary {
            meta: tuner.meta(),
            metrics: metrics.clone(),
            mistakes,
            cancelled,
            seconds: self.seconds_before + (now_ms() - started) / 1000.0,
            steps: tuner.progress().step,
            device: device_name,
        };
        let current = Current {
            loaded: LoadedClassifier { config, model: tuner.best_model(), tokenizer, meta: tuner.meta() },
            device,
            tokenizer_json,
            vocab_txt,
        };
        Ok((summary, current))
    }
}

/// The classifier as a zip. Weights on WebGPU are first copied to the CPU with an asynchronous
/// read: the export reads tensors synchronously, which WebGPU in a browser cannot do.
async fn host_zip(current: &Current, name: &str) -> Result<Vec<u8>, String> {
    let cpu = Device::flex();
    if current.device == cpu {
        // Already in memory: no copy of the weights.
        return export_zip(current, name);
    }
    let model = copy_to(current.loaded.model.clone(), &cpu).await.map_err(|e| e.to_string())?;
    let on_host = Current {
        loaded: LoadedClassifier { model, ..current.loaded.clone() },
        device: cpu,
        tokenizer_json: current.tokenizer_json.clone(),
        vocab_txt: current.vocab_txt.clone(),
    };
    export_zip(&on_host, name)
}

fn export_zip(current: &Current, name: &str) -> Result<Vec<u8>, String> {
    let files = classification::export(
        &current.loaded.config,
        &current.loaded.model,
        &current.loaded.meta,
        current.tokenizer_json.as_deref(),
        current.vocab_txt.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    // Sized up front: growing by doubling would hold a half-size and a full-size copy at once.
    let size = files.iter().map(|(name, bytes)| bytes.len() + 2 * name.len() + 256).sum::<usize>() + 1024;
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::with_capacity(size)));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (file, bytes) in files {
        zip.start_file(format!("{name}/{file}"), options).map_err(|e| e.to_string())?;
        zip.write_all(&bytes).map_err(|e| e.to_string())?;
    }
    Ok(zip.finish().map_err(|e| e.to_string())?.into_inner())
}

/// Files by base name, from a list of files or from one zip (folders inside are ignored).
fn unpack(names: Vec<String>, bytes: Vec<Vec<u8>>) -> Result<Vec<(String, Vec<u8>)>, String> {
    if names.len() == 1 && names[0].to_lowercase().ends_with(".zip") {
        let mut archive = zip::ZipArchive::new(Cursor::new(&bytes[0])).map_err(|e| format!("{} is not a readable zip: {e}", names[0]))?;
        let mut out = Vec::new();
        for i in 0..archive.len() {
            let mut file = archive.by_index(i).map_err(|e| e.to_string())?;
            if file.is_dir() {
                continue;
            }
            let base = file.name().rsplit('/').next().unwrap_or_default().to_string();
            let mut data = Vec::with_capacity(file.size() as usize);
            file.read_to_end(&mut data).map_err(|e| format!("{base} in the zip: {e}"))?;
            out.push((base, data));
        }
        return Ok(out);
    }
    Ok(names.into_iter().map(|n| n.rsplit('/').next().unwrap_or_default().to_string()).zip(bytes).collect())
}

fn import(names: Vec<String>, bytes: Vec<Vec<u8>>) -> Result<Current, String> {
    let files = unpack(names, bytes)?;
    let take = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
    let config_json = take("config.json").ok_or("config.json is missing")?;
    let weights = take("model.safetensors").ok_or("model.safetensors is missing")?;
    let tokenizer_json = take("tokenizer.json");
    let vocab_txt = take("vocab.txt");
    let device = Device::flex();
    let loaded = classification::load_classifier(
        CheckpointFiles { config_json, weights, tokenizer_json: tokenizer_json.clone(), vocab_txt: vocab_txt.clone() },
        take(HEAD_FILE),
        &device,
    )
    .map_err(|e| e.to_string())?;
    Ok(Current { loaded, device, tokenizer_json, vocab_txt })
}

/// A sample of a vocabulary's pieces for the page: every k-th entry after the specials.
fn vocab_sample(tokenizer: &BertTokenizer, n: usize) -> Vec<String> {
    let size = tokenizer.vocab_size() as u32;
    let step = (size / n.max(1) as u32).max(1);
    (5..size).step_by(step as usize).filter_map(|id| tokenizer.id_to_piece(id)).take(n).collect()
}

/// Top-5 fills of every probe sentence (a probe the tokenizer cannot read is left out).
async fn probe_all(trainer: &Pretrainer, probes: &[String]) -> Vec<(String, Vec<bertbench_core::tasks::pretraining::MaskFill>)> {
    let mut fills = Vec::new();
    for p in probes {
        if let Ok(f) = trainer.fill_mask(p, 5).await {
            fills.push((p.clone(), f));
        }
    }
    fills
}

/// Runs an MLM-lab request to its end or until cancelled; returns the model and whether it was
/// cancelled, and the steps done.
/// A saved lab model (its files in [`LAB_FILES`] order), on the CPU.
fn open_lab(mut parts: Vec<Vec<u8>>) -> Result<LabModel, String> {
    if parts.len() != LAB_FILES.len() {
        return Err(format!("the saved lab model has {} files instead of {}", parts.len(), LAB_FILES.len()));
    }
    let some = |b: Vec<u8>| (!b.is_empty()).then_some(b);
    let vocab_txt = some(parts.pop().unwrap_or_default());
    let tokenizer_json = some(parts.pop().unwrap_or_default());
    let weights = parts.pop().unwrap_or_default();
    let config_json = parts.pop().unwrap_or_default();
    let files = CheckpointFiles { config_json, weights, tokenizer_json: tokenizer_json.clone(), vocab_txt: vocab_txt.clone() };
    let device = Device::flex();
    let (model, tokenizer, config) = pretraining::load(files, &device).map_err(|e| format!("the saved lab model cannot be read: {e}"))?;
    Ok(LabModel { model, tokenizer, config, device, tokenizer_json, vocab_txt })
}

async fn run_lab(request: LabRequest, control: &Control) -> Result<(LabModel, bool, usize), String> {
    let run = request.run;
    let send = |event: LabEvent| post(&FromWorker::Lab { run, event }, &[]);
    let device = match request.backend {
        Backend::Cpu => Device::flex(),
        Backend::WebGpu => engine::gpu().await.map_err(|e| format!("WebGPU is unavailable in the worker: {e}"))?.device,
    };
    let ad = device.clone().autodiff();
    let max_len = request.config.max_len;
    let pair = request.config.pair_task.is_some();
    let base = base_model().await;
    let (model, tokenizer, config, tokenizer_json, vocab_txt) = if request.continue_pretrained {
        let base = base.ok_or("the pretrained model is not loaded in the worker yet")?;
        let bert = base.on(&ad, request.backend).await?;
        send(LabEvent::Vocab { size: bert.tokenizer.vocab_size(), trained: false, sample: vocab_sample(&bert.tokenizer, 40) });
        let model = BertForPreTraining::new(bert.model, &bert.config, pair, &ad);
        (model, bert.tokenizer, bert.config, base.tokenizer_json.clone(), base.vocab_txt.clone())
    } else {
        let (tokenizer, tokenizer_json, vocab_txt) = match request.vocab {
            LabVocab::Train(size) => {
                let (tok, vocab) = BertTokenizer::train_wordpiece(&request.lines, size, true, max_len).map_err(|e| e.to_string())?;
                (tok, None, Some(vocab))
            }
            LabVocab::Pretrained => {
                let base = base.ok_or("the pretrained model is not loaded in the worker yet")?;
                let tok = base.bert.tokenizer.with_max_len(max_len);
                (tok, base.tokenizer_json.clone(), base.vocab_txt.clone())
            }
        };
        send(LabEvent::Vocab { size: tokenizer.vocab_size(), trained: matches!(request.vocab, LabVocab::Train(_)), sample: vocab_sample(&tokenizer, 40) });
        let preset = Preset::ALL.into_iter().find(|p| p.name() == request.preset).ok_or_else(|| format!("unknown model size {}", request.preset))?;
        let config = preset.config(tokenizer.vocab_size()).with_max_position_embeddings(max_len.max(16));
        let model = BertForPreTraining::from_scratch(&config, pair, &ad);
        (model, tokenizer, config, tokenizer_json, vocab_txt)
    };
    let params = bertbench_core::burn::module::Module::num_params(&model);
    let mut trainer = Pretrainer::new(model, &tokenizer, request.lines.clone(), request.config.clone(), &ad).map_err(|e| e.to_string())?;
    send(LabEvent::Ready { params, total_steps: trainer.progress().1, preview: trainer.masking_preview(4, 1) });
    send(LabEvent::Probes { step: 0, fills: probe_all(&trainer, &request.probes).await });
    let probes = &request.probes;
    let ended = Session::new(CheckpointPolicy::NEVER)
        .drive(
            &mut trainer,
            control,
            async |trainer: &Pretrainer, step: PretrainStep| {
                send(LabEvent::Step(step));
                if request.probe_every > 0 && (step.step % request.probe_every == 0 || step.step == step.total_steps) {
                    send(LabEvent::Probes { step: step.step, fills: probe_all(trainer, probes).await });
                }
            },
            async |_: &Pretrainer| {},
        )
        .await
        .map_err(|e| e.to_string())?;
    let was_cancelled = ended == Ended::Cancelled;
    let steps = trainer.progress().0;
    let mut model = bertbench_core::burn::module::Module::valid(trainer.model());
    let mut device = device;
    if request.backend == Backend::WebGpu {
        // Kept on the CPU: export and saving read the weights synchronously, which WebGPU cannot
        // do in the browser, and fill-mask on a tiny model is quick there.
        let cpu = Device::flex();
        model = copy_to(model, &cpu).await.map_err(|e| e.to_string())?;
        device = cpu;
    }
    let lab = LabModel { model, tokenizer: trainer.tokenizer().clone(), config, device, tokenizer_json, vocab_txt };
    Ok((lab, was_cancelled, steps))
}
