//! The page's one connection to its training workers (`worker/`; the messages are in
//! `protocol.rs`).
//!
//! Two workers at most, one API: the first ([`CPU`]) trains on the CPU and computes the
//! explorer's many-text views, on the threaded build (every core) where the page is cross-origin
//! isolated; the second ([`GPU`]) is started when a run asks for WebGPU and the first cannot
//! drive it (the threaded build has no WebGPU). A run goes to the worker for its backend; a
//! request about a run's model (predictions, export, the lab's fills) goes to the worker that
//! trained or imported that model.
//!
//! It starts the workers, sends typed requests and routes the replies, by id (one counter gives
//! out both kinds):
//! - a request with one answer (predictions, mask fills, the fine-tuned encoder, the lab's
//!   files, an export, an import, opening a saved lab model) is a `Future` of that answer;
//! - the updates of a run (fine-tuning, an MLM-lab run, whatever its task) go to whoever started
//!   it ([`WorkerClient::start_run`]), its last one included (the worker saves a finished run
//!   itself, and says so).
//!
//! The studio and the lab both use it, and neither knows the other.

use std::collections::HashMap;
use std::rc::Rc;

use bertbench_core::analysis::inspect::TextStates;
use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::tasks::classification::{ClassifierMeta, HEAD_FILE};
use bertbench_core::tasks::pretraining::MaskFill;
use bertbench_core::tasks::tagging::{TaggedWord, TagsByLayer};
use bertbench_core::tokenizer::Encoded;
use futures::channel::oneshot;
use gloo_events::EventListener;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

use crate::engine::{Engine, ModelSource};
use crate::protocol::{self as ask, Ask, At, FromWorker, Inspect, Inspecting, Request, RunUpdate, ToWorker, Work, bytes_f32, decode, encode};
use crate::runs::Backend;
use crate::saved::list;

/// An answer (as JSON) with its byte attachments, or why there is none.
type Reply = Result<(serde_json::Value, Vec<Vec<u8>>), String>;

/// Whoever started a run, and whether it has finished (its save may still be under way).
struct Route {
    owner: Rc<dyn Fn(u32, RunUpdate)>,
    finished: bool,
}

/// The first worker: CPU runs and computations, the threaded build where it can.
pub const CPU: usize = 0;
/// The second worker: WebGPU runs, when the first cannot drive WebGPU.
pub const GPU: usize = 1;

/// One worker and what the page sent it.
#[derive(Default)]
struct Slot {
    worker: Option<Worker>,
    /// It answered `Ready`.
    ready: bool,
    /// Its build drives WebGPU (the single-thread build).
    webgpu: bool,
    /// The model the worker has as its base.
    base_sent: Option<String>,
    /// Messages sent before the worker said it is ready (it starts after the page's model has
    /// loaded, and takes a moment to load its own build): posted, in order, when it is.
    pending: Vec<(JsValue, js_sys::Array)>,
    /// Why the worker could not start, if it could not.
    failed: Option<String>,
}

/// Where each reply goes.
#[derive(Default)]
struct Routes {
    slots: [Slot; 2],
    /// The worker that holds the current classifier, the lab's model, the run in progress.
    classifier_at: usize,
    lab_at: usize,
    running_at: usize,
    /// The last request or run id given out.
    last_id: u32,
    /// Requests waiting for their answer, by id.
    requests: HashMap<u32, oneshot::Sender<Reply>>,
    /// Runs not ended yet, by id.
    runs: HashMap<u32, Route>,
    /// Told every message of a failure (a request refused, or a failure of the worker's own).
    errors: Vec<Rc<dyn Fn(String)>>,
}

/// The training workers, as the page sees them (`Copy`: all handles). The signals describe the
/// first worker, the one that trains on the CPU.
#[derive(Clone, Copy)]
pub struct WorkerClient {
    routes: StoredValue<Routes, LocalStorage>,
    /// The first worker answered `Ready`.
    pub ready: RwSignal<bool>,
    /// The threads the worker computes on (rayon's pool in the threaded build), and why only
    /// one when that is not the build's choice (empty otherwise).
    pub threads: RwSignal<(usize, String)>,
    /// Whether the worker's matrix kernel uses relaxed SIMD's fused multiply-add.
    pub fused_multiply_add: RwSignal<bool>,
    /// Whether the worker could not start (it never will be ready).
    pub failed: RwSignal<bool>,
}

fn bundle_urls() -> Option<(String, String)> {
    let document = web_sys::window()?.document()?;
    let href = |selector: &str| -> Option<String> {
        let link = document.query_selector(selector).ok()??;
        js_sys::Reflect::get(&link, &"href".into()).ok()?.as_string()
    };
    // The page's module, not the default model's files the page also preloads.
    Some((href("link[rel=modulepreload]")?, href("link[rel=preload][as=fetch][href*='_bg.wasm']")?))
}

/// The URL of a threaded build's bundle (the meta tag `name` that `cargo xtask` writes into
/// index.html: `bertbench-threads`, or `bertbench-threads-relaxed` for the one with relaxed
/// SIMD), if this build has one.
fn threaded_bundle_url(name: &str) -> Option<String> {
    let document = web_sys::window()?.document()?;
    let meta = document.query_selector(&format!("meta[name={name}]")).ok()??;
    let path = meta.get_attribute("content")?;
    let base = document.base_uri().ok()??;
    Some(web_sys::Url::new_with_base(&path, &base).ok()?.href())
}

impl WorkerClient {
    /// The client, before its worker starts ([`start`](Self::start)).
    pub fn new() -> Self {
        Self {
            routes: StoredValue::new_local(Routes::default()),
            ready: RwSignal::new(false),
            threads: RwSignal::new((1, String::new())),
            fused_multiply_add: RwSignal::new(false),
            failed: RwSignal::new(false),
        }
    }

    /// Starts the first worker. Called once, after those who listen for failures
    /// ([`on_error`](Self::on_error)) have, and after the page's model has loaded (or failed
    /// to): the worker loads a build of its own (the threaded one where the page is isolated),
    /// which a first visit should not download before the page is usable. What is sent before
    /// it is ready waits for it.
    pub fn start(self) {
        self.start_slot(CPU);
    }

    fn start_slot(self, slot: usize) {
        let Some((js, wasm)) = bundle_urls() else {
            self.fail(slot, "the page could not find its own wasm bundle to start the training worker".into());
            return;
        };
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Module);
        let worker = match Worker::new_with_options("worker.js", &options) {
            Ok(w) => w,
            Err(e) => {
                self.fail(slot, format!("the training worker could not start: {e:?}"));
                return;
            }
        };
        // The worker lives as long as the page: its listener is never removed.
        EventListener::new(&worker, "message", move |event| {
            let Some(event) = event.dyn_ref::<MessageEvent>() else { return };
            match decode::<FromWorker>(&event.data()) {
                Ok((message, bytes)) => self.receive(slot, message, bytes),
                Err(e) => self.tell(e),
            }
        })
        .forget();
        let init = js_sys::Object::new();
        js_sys::Reflect::set(&init, &"js".into(), &js.into()).ok();
        js_sys::Reflect::set(&init, &"wasm".into(), &wasm.into()).ok();
        js_sys::Reflect::set(&init, &"role".into(), &(if slot == GPU { "gpu" } else { "cpu" }).into()).ok();
        for (key, name) in [("threaded", "bertbench-threads"), ("threadedRelaxed", "bertbench-threads-relaxed")] {
            if let Some(url) = threaded_bundle_url(name) {
                js_sys::Reflect::set(&init, &key.into(), &url.into()).ok();
            }
        }
        worker.post_message(&init).ok();
        self.routes.update_value(|r| r.slots[slot].worker = Some(worker));
    }

    /// The worker for a run on `backend`: the first one, unless the run needs WebGPU and the
    /// first one's build cannot drive it; that one is started when first needed.
    fn slot_for(self, backend: Backend) -> usize {
        if backend == Backend::Cpu || self.routes.with_value(|r| r.slots[CPU].webgpu) {
            return CPU;
        }
        if self.routes.with_value(|r| r.slots[GPU].worker.is_none() && r.slots[GPU].failed.is_none()) {
            self.start_slot(GPU);
        }
        GPU
    }

    /// Calls `listener` with the message of every failure the worker reports (a refused request
    /// included: its caller gets the same message as its answer).
    pub fn on_error(self, listener: impl Fn(String) + 'static) {
        self.routes.update_value(|r| r.errors.push(Rc::new(listener)));
    }

    /// A worker could not start: what waits for it fails with `message`, and so will what is
    /// asked of it later.
    fn fail(self, slot: usize, message: String) {
        self.routes.update_value(|r| {
            r.slots[slot].failed = Some(message.clone());
            r.slots[slot].pending.clear();
        });
        let waiting: Vec<_> = self.routes.try_update_value(|r| r.requests.drain().collect()).unwrap_or_default();
        for (_, reply) in waiting {
            let _ = reply.send(Err(message.clone()));
        }
        // A run sent to it ends here.
        let runs: Vec<_> = self.routes.try_update_value(|r| if r.running_at == slot { r.runs.drain().collect() } else { Vec::new() }).unwrap_or_default();
        for (run, route) in runs {
            (route.owner)(run, RunUpdate::Failed { message: message.clone(), gpu_lost: false });
        }
        if slot == CPU {
            self.failed.set(true);
        }
        self.tell(message);
    }

    fn tell(self, message: String) {
        let listeners = self.routes.with_value(|r| r.errors.clone());
        for listener in listeners {
            listener(message.clone());
        }
    }

    fn send(self, slot: usize, message: &ToWorker, bytes: &[&[u8]]) {
        let (data, transfer) = encode(message, bytes);
        self.post(slot, data, transfer);
    }

    /// [`send`](Self::send) with `extra.1` put among the bytes at index `extra.0`, cloned by
    /// `postMessage` rather than transferred.
    fn send_with(self, slot: usize, message: &ToWorker, bytes: &[&[u8]], extra: (u32, &js_sys::Uint8Array)) {
        let (data, transfer) = encode(message, bytes);
        if let Ok(list) = js_sys::Reflect::get(&data, &"bytes".into()) {
            wasm_bindgen::JsCast::unchecked_into::<js_sys::Array>(list).splice(extra.0, 0, extra.1);
        }
        self.post(slot, data, transfer);
    }

    /// Posts an encoded message to the worker of `slot`, or queues it until the worker is ready.
    fn post(self, slot: usize, data: wasm_bindgen::JsValue, transfer: js_sys::Array) {
        self.routes.update_value(|r| {
            let slot = &mut r.slots[slot];
            match &slot.worker {
                Some(w) if slot.ready => {
                    w.post_message_with_transfer(&data, &transfer).ok();
                }
                _ if slot.failed.is_none() => slot.pending.push((data, transfer)),
                _ => {}
            }
        });
    }

    fn receive(self, slot: usize, message: FromWorker, bytes: Vec<Vec<u8>>) {
        match message {
            FromWorker::Ready { threads, note, fused_multiply_add, webgpu } => {
                self.routes.update_value(|r| {
                    let s = &mut r.slots[slot];
                    s.ready = true;
                    s.webgpu = webgpu;
                    if let Some(w) = &s.worker {
                        for (data, transfer) in s.pending.drain(..) {
                            w.post_message_with_transfer(&data, &transfer).ok();
                        }
                    }
                });
                if slot == CPU {
                    self.threads.set((threads, note));
                    self.fused_multiply_add.set(fused_multiply_add);
                    self.ready.set(true);
                }
            }
            FromWorker::Run { run, update } => self.to_run(run, update),
            FromWorker::Reply { request, answer } => {
                if let Err(message) = &answer {
                    self.tell(message.clone());
                }
                if let Some(waiting) = self.routes.try_update_value(|r| r.requests.remove(&request)).flatten() {
                    let _ = waiting.send(answer.map(|a| (a, bytes)));
                }
            }
            // Before it was ready: it could not start.
            FromWorker::Error { message } if !self.routes.with_value(|r| r.slots[slot].ready) => self.fail(slot, message),
            FromWorker::Error { message } => {
                // It belongs to no one request: each waiting one fails with it, so no button
                // stays stuck.
                let waiting: Vec<_> = self.routes.try_update_value(|r| r.requests.drain().collect()).unwrap_or_default();
                for (_, reply) in waiting {
                    let _ = reply.send(Err(message.clone()));
                }
                self.tell(message);
            }
        }
    }

    /// Hands a run's update to whoever started the run; its last update ends it. An update for
    /// a run no one follows is dropped.
    fn to_run(self, run: u32, update: RunUpdate) {
        let last = update.ends_run();
        let finished = matches!(update, RunUpdate::Finished { .. });
        let owner = self
            .routes
            .try_update_value(|r| {
                if last {
                    r.runs.remove(&run).map(|route| route.owner)
                } else {
                    let route = r.runs.get_mut(&run)?;
                    route.finished |= finished;
                    Some(route.owner.clone())
                }
            })
            .flatten();
        if let Some(owner) = owner {
            owner(run, update);
        }
    }

    fn next_id(self) -> u32 {
        self.routes
            .try_update_value(|r| {
                r.last_id += 1;
                r.last_id
            })
            .unwrap_or_default()
    }

    /// Sends `request` (with `bytes` attached) to the worker it is about and waits for its
    /// answer, of the type the request names, and the answer's attachments.
    pub(crate) async fn request<R: Request>(self, request: R, bytes: &[&[u8]]) -> Result<(R::Answer, Vec<Vec<u8>>), String> {
        let ask: Ask = request.into();
        // A model's questions go to the worker that holds it; a model handed over becomes the
        // first worker's; computations run there too, the probe's on its backend's worker.
        let slot = match (ask.at(), &ask) {
            (At::Probe, Ask::TimeWork(work)) => self.slot_for(work.backend),
            (At::Classifier, _) => self.routes.with_value(|r| r.classifier_at),
            (At::Lab, _) => self.routes.with_value(|r| r.lab_at),
            (At::First | At::Probe, _) => CPU,
        };
        match ask {
            Ask::Import(_) | Ask::AttachHead(_) => self.routes.update_value(|r| r.classifier_at = CPU),
            Ask::OpenLab(_) => self.routes.update_value(|r| r.lab_at = CPU),
            _ => {}
        }
        if let Some(why) = self.routes.with_value(|r| r.slots[slot].failed.clone()) {
            return Err(why);
        }
        let (reply, answer) = oneshot::channel();
        let request = self.next_id();
        self.routes.update_value(|r| {
            r.requests.insert(request, reply);
        });
        self.send(slot, &ToWorker::Ask { request, ask }, bytes);
        let (json, bytes) = answer.await.map_err(|_| "the training worker did not answer".to_string())??;
        let answer = serde_json::from_value(json).map_err(|e| format!("the training worker's answer could not be read: {e}"))?;
        Ok((answer, bytes))
    }

    /// What the backend probe's work took on `backend`, in the worker for it (which must have
    /// the page's model as its base: [`send_base`](Self::send_base) first).
    pub async fn time_work(self, backend: Backend, texts: Vec<String>, max_len: usize, step: bool) -> Result<crate::runs::Timing, String> {
        Ok(self.request(ask::TimeWork { backend, texts, max_len, step }, &[]).await?.0)
    }

    /// Every layer's vectors of `encoded` from the worker's base model, which must be the model
    /// they were encoded for ([`send_base`](Self::send_base) first).
    pub async fn states(self, model_id: &str, encoded: &[Encoded]) -> Result<Vec<TextStates>, String> {
        let request = ask::States { model_id: model_id.to_string(), encoded: encoded.iter().cloned().map(Into::into).collect() };
        let (ask::StatesShape { hidden, layers }, bytes) = self.request(request, &[]).await?;
        if bytes.len() != encoded.len() {
            return Err("the worker's vectors came back for another number of texts".into());
        }
        encoded
            .iter()
            .zip(bytes)
            .map(|(e, b)| {
                let per_layer = e.tokens.len() * hidden;
                if b.len() != 4 * per_layer * layers {
                    return Err("the worker's vectors came back the wrong size".to_string());
                }
                let flat = bytes_f32(&b).unwrap_or_default();
                Ok(TextStates { encoded: e.clone(), hidden, layers: flat.chunks(per_layer.max(1)).map(<[f32]>::to_vec).collect() })
            })
            .collect()
    }

    /// The arrays of one of the explorer's computations, from the worker's base model (which
    /// must be the page's: [`send_base`](Self::send_base) first).
    pub async fn inspect(self, model_id: &str, what: Inspecting) -> Result<Vec<Vec<f32>>, String> {
        let ((), bytes) = self.request(Inspect { model_id: model_id.to_string(), what }, &[]).await?;
        bytes.iter().map(|b| bytes_f32(b).ok_or_else(|| "the worker's numbers came back cut".to_string())).collect()
    }

    /// Starts a run of `work` in the worker for its backend; `owner` gets each of its updates
    /// with the run's id, the last one included. Returns the run's id. The run's model will be
    /// that worker's (the classifier's, or the lab's).
    pub fn start_run(self, work: Work, owner: impl Fn(u32, RunUpdate) + 'static) -> u32 {
        let run = self.next_id();
        let (backend, lab) = match &work {
            Work::FineTune(r) => (r.backend, false),
            Work::ResumeFineTune { backend, .. } => (*backend, false),
            Work::Pretrain(r) => (r.settings.backend, true),
        };
        let slot = self.slot_for(backend);
        self.routes.update_value(|r| {
            r.runs.insert(run, Route { owner: Rc::new(owner), finished: false });
            r.running_at = slot;
            if lab {
                r.lab_at = slot;
            } else {
                r.classifier_at = slot;
            }
        });
        self.send(slot, &ToWorker::Start { run, work }, &[]);
        run
    }

    /// Whether a run started here has not finished yet (the worker trains one at a time).
    pub fn run_in_progress(self) -> bool {
        self.routes.with_value(|r| r.runs.values().any(|route| !route.finished))
    }

    /// Pauses or resumes the run in progress (whichever started it).
    pub fn pause(self, pause: bool) {
        let slot = self.routes.with_value(|r| r.running_at);
        self.send(slot, if pause { &ToWorker::Pause } else { &ToWorker::Resume }, &[]);
    }

    /// Cancels the run in progress (its best weights so far are kept).
    pub fn cancel(self) {
        let slot = self.routes.with_value(|r| r.running_at);
        self.send(slot, &ToWorker::Cancel, &[]);
    }

    /// Makes `engine` (the page's model) the base model of the worker that runs on `backend`,
    /// unless it is already. A WebGPU worker's base goes to the first worker too: a run whose
    /// GPU fails goes on there, from its checkpoint and this base.
    pub fn send_base(self, engine: &Engine, backend: Backend) -> Result<(), String> {
        let slot = self.slot_for(backend);
        let slots = if slot == GPU { vec![GPU, CPU] } else { vec![CPU] };
        let missing: Vec<usize> = slots
            .into_iter()
            .filter(|&s| self.routes.with_value(|r| r.slots[s].base_sent.as_deref() != Some(engine.model_id.as_str())))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let outside = engine.outside_files();
        let files = if engine.source == ModelSource::Server || outside.is_some() { None } else { Some(engine.files()?) };
        for slot in missing {
            match (&files, outside) {
                (_, Some((small, weights))) => {
                    // The weights go from their JavaScript buffer (copied by postMessage, not
                    // transferred: the page keeps them for the next worker).
                    let message = ToWorker::SetBase {
                        model_id: engine.model_id.clone(),
                        download: false,
                        tokenizer_json: small.tokenizer_json.is_some(),
                        vocab_txt: small.vocab_txt.is_some(),
                    };
                    let mut parts: Vec<&[u8]> = vec![&small.config_json];
                    parts.extend(small.tokenizer_json.as_deref());
                    parts.extend(small.vocab_txt.as_deref());
                    self.send_with(slot, &message, &parts, (1, weights));
                }
                (None, None) => self.send(slot, &ToWorker::SetBase { model_id: engine.model_id.clone(), download: true, tokenizer_json: false, vocab_txt: false }, &[]),
                (Some(f), None) => {
                    let mut parts: Vec<&[u8]> = vec![&f.config_json, &f.weights];
                    parts.extend(f.tokenizer_json.as_deref());
                    parts.extend(f.vocab_txt.as_deref());
                    let message = ToWorker::SetBase {
                        model_id: engine.model_id.clone(),
                        download: false,
                        tokenizer_json: f.tokenizer_json.is_some(),
                        vocab_txt: f.vocab_txt.is_some(),
                    };
                    self.send(slot, &message, &parts);
                }
            }
            self.routes.update_value(|r| r.slots[slot].base_sent = Some(engine.model_id.clone()));
        }
        Ok(())
    }

    /// The current classifier's labels and probabilities, one row per text.
    pub async fn predict(self, texts: Vec<(String, Option<String>)>) -> Result<ask::Predictions, String> {
        Ok(self.request(ask::Predict { texts }, &[]).await?.0)
    }

    /// Puts the current classifier away, in the worker that holds it.
    pub async fn forget_classifier(self) -> Result<(), String> {
        self.request(ask::ForgetClassifier, &[]).await.map(|_| ())
    }

    /// Each text's words with their predicted tags, from the current tagger, and its tags.
    pub async fn tag(self, texts: Vec<String>) -> Result<(Vec<String>, Vec<Vec<TaggedWord>>), String> {
        let (ask::Tagged { tags, texts }, _) = self.request(ask::Tag { texts }, &[]).await?;
        Ok((tags, texts.into_iter().map(list).collect()))
    }

    /// What the current tagger's head reads off each layer for `text`, and its tags.
    pub async fn tag_layers(self, text: String) -> Result<(Vec<String>, TagsByLayer), String> {
        let (ask::LayerTags { tags, layers }, _) = self.request(ask::TagLayers { text }, &[]).await?;
        Ok((tags, layers.into()))
    }

    /// The current question-answering model's answer to `question` over `context`.
    pub async fn answer(self, question: String, context: String, allow_null: bool) -> Result<bertbench_core::tasks::qa::Answered, String> {
        Ok(self.request(ask::AnswerQuestion { question, context, allow_null }, &[]).await?.0.into())
    }

    /// The current similarity model's score of each pair (0..1).
    pub async fn similar(self, pairs: Vec<(String, String)>) -> Result<Vec<f32>, String> {
        Ok(self.request(ask::Similar { pairs }, &[]).await?.0)
    }

    /// The `top` texts most like `query`, and what the search cost.
    pub async fn search(self, query: String, texts: Vec<String>, top: usize) -> Result<crate::runs::SearchResult, String> {
        Ok(self.request(ask::Search { query, texts, top }, &[]).await?.0)
    }

    /// Top-5 fills for every `[MASK]` of `text`, from the lab's model.
    pub async fn fill_mask(self, text: String) -> Result<Vec<MaskFill>, String> {
        Ok(list(self.request(ask::FillMask { text }, &[]).await?.0))
    }

    /// The lab's model as Hugging Face files (name, bytes).
    pub async fn lab_files(self) -> Result<Vec<(String, Vec<u8>)>, String> {
        let (names, bytes) = self.request(ask::LabFiles, &[]).await?;
        if names.len() != bytes.len() {
            return Err("the lab's model came back incomplete".into());
        }
        Ok(names.into_iter().zip(bytes).collect())
    }

    /// Makes a saved lab model (its files in [`LAB_FILES`](crate::runs::LAB_FILES) order) the
    /// lab's model.
    pub async fn open_lab(self, files: &[&[u8]]) -> Result<(), String> {
        self.request(ask::OpenLab, files).await.map(|_| ())
    }

    /// The current classifier's encoder as a plain BERT checkpoint, and the classifier's labels.
    pub async fn encoder(self) -> Result<(CheckpointFiles, Vec<String>), String> {
        let (ask::EncoderFiles { labels, tokenizer_json, vocab_txt }, bytes) = self.request(ask::Encoder, &[]).await?;
        let mut parts = bytes.into_iter();
        let (Some(config_json), Some(weights)) = (parts.next(), parts.next()) else {
            return Err("the fine-tuned model came back incomplete".into());
        };
        let tokenizer_json = if tokenizer_json { parts.next() } else { None };
        let vocab_txt = if vocab_txt { parts.next() } else { None };
        Ok((CheckpointFiles { config_json, weights, tokenizer_json, vocab_txt }, labels))
    }

    /// The current classifier as a zip of a Hugging Face folder: its file name and bytes.
    pub async fn export(self, name: String) -> Result<(String, Vec<u8>), String> {
        let (file_name, bytes) = self.request(ask::Export { name }, &[]).await?;
        bytes.into_iter().next().map(|zip| (file_name, zip)).ok_or_else(|| "the export came back empty".into())
    }

    /// Makes a classifier read from `files` (a Hugging Face folder's files, or one zip) the
    /// current one: its description, and what it is.
    pub async fn import(self, files: Vec<(String, Vec<u8>)>) -> Result<(ClassifierMeta, String), String> {
        let names = files.iter().map(|(n, _)| n.clone()).collect();
        let bytes: Vec<&[u8]> = files.iter().map(|(_, b)| b.as_slice()).collect();
        let (ask::Imported { meta, description }, _) = self.request(ask::Import { names }, &bytes).await?;
        Ok((meta, description))
    }

    /// Makes a head saved alone on `engine` (the page's model, which the run was trained from)
    /// the current classifier.
    pub async fn attach_head(self, engine: &Engine, files: Vec<Vec<u8>>) -> Result<(ClassifierMeta, String), String> {
        self.send_base(engine, Backend::Cpu)?;
        let names = vec!["config.json".to_string(), HEAD_FILE.to_string()];
        let bytes: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
        let (ask::Imported { meta, description }, _) = self.request(ask::AttachHead { base: engine.model_id.clone(), names }, &bytes).await?;
        Ok((meta, description))
    }

    /// "CPU (WebAssembly)", or with the worker's thread count when it has more than one.
    pub fn cpu_label(self) -> String {
        match self.threads.get().0 {
            1 => "CPU (WebAssembly)".to_string(),
            n => format!("CPU · {n} threads"),
        }
    }
}
