//! The fine-tuning studio's state, and the page's side of the training worker.
//!
//! Data parsing and validation run on the page (they are quick and the user is looking at
//! them); training, prediction, export and import run in the worker (`worker.rs`). Worker
//! replies update the signals here, and the studio panels draw from them.

use std::collections::HashMap;
use std::sync::Arc;

use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::tasks::classification::ClassifierMeta;
use bertbench_core::tasks::pretraining::MaskFill;
use bertbench_core::data::{self, ColumnMap, Dataset, Table, ValidationReport};
use bertbench_core::train::{EvalReport, FineTuneConfig, Phase, StepPoint, TrainMode};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

use crate::app::AppState;
use crate::lab::{Lab, LabRun};
use crate::fetch::yield_to_browser;
use crate::protocol::{Backend, CheckpointMeta, FromWorker, RunSummary, ToWorker, TrainEvent, TrainRequest, decode, encode};
use crate::store::{Item, Usage};

mod data;
mod inside;
mod results;
mod saved;
mod train;

pub use data::StudioDataPanel;
pub use inside::StudioInsidePanel;
pub use results::StudioResultsPanel;
pub use train::{StudioTrainPanel, cpu_label};
use crate::widgets::now_ms;

/// The built-in example dataset, written for this project.
pub const EXAMPLE_CSV: &[u8] = include_bytes!("../../../public/examples/sentiment.csv");

/// An uploaded file, parsed.
#[derive(Debug, Clone)]
pub struct Upload {
    /// The file's name.
    pub name: String,
    /// Its rows.
    pub table: Arc<Table>,
}

/// The data after column mapping and validation.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Usable examples and labels (skips recorded).
    pub dataset: Arc<Dataset>,
    /// The validation report.
    pub report: ValidationReport,
    /// Examples of the separate validation file, if one is used.
    pub valid_file: Option<Arc<Dataset>>,
}

/// Where a run stands.
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    /// No run yet.
    Idle,
    /// Running (or paused).
    Running { paused: bool },
    /// Finished or cancelled; the summary is in `summary`.
    Finished,
    /// Failed with a message.
    Failed(String),
}

/// Live progress of the current run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Live {
    /// Current stage.
    pub phase: Option<Phase>,
    /// Steps done / in all (all stages, this restart).
    pub step: usize,
    /// Total optimizer steps of this restart.
    pub total_steps: usize,
    /// Frozen features done / total.
    pub features: Option<(usize, usize)>,
    /// Validation examples done / total while evaluating.
    pub evaluating: Option<(usize, usize)>,
    /// Steps per second over the current stage.
    pub steps_per_second: Option<f64>,
    /// Restart index and count.
    pub restart: Option<(usize, usize)>,
    /// When the current stage's first step was seen, and at which step.
    stage_start: Option<(f64, usize)>,
}

/// Everything the studio shows (`Copy`: all handles).
#[derive(Clone, Copy)]
pub struct Studio {
    worker: StoredValue<Option<Worker>, LocalStorage>,
    /// The worker answered `Ready`.
    pub worker_ready: RwSignal<bool>,
    /// The threads the worker computes on (rayon's pool in the threaded build), and why only
    /// one when that is not the build's choice (empty otherwise).
    pub threads: RwSignal<(usize, String)>,
    /// Whether the worker's matrix kernel uses relaxed SIMD's fused multiply-add.
    pub fused_multiply_add: RwSignal<bool>,
    base_sent: StoredValue<Option<String>>,
    /// The training file.
    pub upload: RwSignal<Option<Upload>>,
    /// A separate validation file (same columns).
    pub valid_upload: RwSignal<Option<Upload>>,
    /// Column mapping.
    pub columns: RwSignal<ColumnMap>,
    /// Parse / mapping error to show.
    pub data_error: RwSignal<Option<String>>,
    /// Mapping + validation result.
    pub prepared: RwSignal<Option<Prepared>>,
    /// Validation share when splitting.
    pub valid_fraction: RwSignal<f32>,
    /// Seed of the split.
    pub split_seed: RwSignal<u64>,
    /// Run configuration.
    pub config: RwSignal<FineTuneConfig>,
    /// Longest input in tokens.
    pub max_len: RwSignal<usize>,
    /// Seeds to try.
    pub restarts: RwSignal<usize>,
    /// Where training runs.
    pub backend: RwSignal<Backend>,
    /// Run state.
    pub run: RwSignal<RunState>,
    run_id: StoredValue<u32>,
    /// Live progress.
    pub live: RwSignal<Live>,
    /// Step losses of the current restart.
    pub steps: RwSignal<Vec<StepPoint>>,
    /// Evaluations of the current restart.
    pub evals: RwSignal<Vec<EvalReport>>,
    /// Result of the last finished run.
    pub summary: RwSignal<Option<Arc<RunSummary>>>,
    /// The classifier in the worker, if any, and where it came from.
    pub classifier: RwSignal<Option<(ClassifierMeta, String)>>,
    /// A message from the worker outside training (import, export, predict).
    pub notice: RwSignal<Option<Result<String, String>>>,
    pending: StoredValue<HashMap<u32, Box<dyn FnOnce(Result<(Vec<String>, Vec<Vec<f32>>), String>)>>, LocalStorage>,
    next_request: StoredValue<u32>,
    encoder_reply: StoredValue<Option<EncoderReply>, LocalStorage>,
    fill_reply: StoredValue<Option<(u32, FillReply)>, LocalStorage>,
    lab_files_reply: StoredValue<Option<FilesReply>, LocalStorage>,
    /// Fine-tune a randomly initialised encoder of the same shape (the "no pretraining" baseline).
    pub from_scratch: RwSignal<bool>,
    /// Every run of this session that ended, oldest first, to compare them.
    pub history: RwSignal<Vec<RunRecord>>,
    /// What the run in progress will be recorded as.
    starting: StoredValue<Option<RunRecord>>,
    /// The MLM lab, which trains in the same worker.
    pub lab: Lab,
    /// Work saved in this browser, newest first.
    pub saved: RwSignal<Vec<Item>>,
    /// Storage used by this page, and its quota.
    pub usage: RwSignal<Option<Usage>>,
    /// Why something could not be saved or read back.
    pub storage_error: RwSignal<Option<String>>,
    /// An interrupted run's checkpoint, offered for resuming.
    pub resume_offer: RwSignal<Option<Arc<CheckpointMeta>>>,
    /// The run's last checkpoint, in words (or why it failed).
    pub checkpoint_note: RwSignal<Option<Result<String, String>>>,
    /// The last run that saved a checkpoint (the checkpoint in the store is its).
    checkpointed: StoredValue<Option<u32>>,
    /// Whether the saved settings have been read (before that, nothing is written).
    settings_ready: StoredValue<bool>,
    /// The saved training file last opened.
    dataset_id: RwSignal<Option<String>>,
}

/// One ended run, as the comparison table shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunRecord {
    /// The page's model when the run started.
    pub model: String,
    /// Whether the encoder started from random weights instead of the model's.
    pub from_scratch: bool,
    /// Training mode and its epochs, in words.
    pub recipe: String,
    /// Validation accuracy of the kept weights.
    pub accuracy: f32,
    /// Validation macro-F1 of the kept weights.
    pub macro_f1: f32,
    /// Optimizer steps.
    pub steps: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Where it ran.
    pub device: String,
    /// Whether it was cancelled before its end.
    pub cancelled: bool,
    /// Its key in the browser's saved work, once saved.
    #[serde(default)]
    pub saved_id: Option<String>,
}

impl RunRecord {
    /// The record of a run that starts now; its results are filled in when it ends.
    pub fn starting(model: String, from_scratch: bool, recipe: String) -> Self {
        Self {
            model,
            from_scratch,
            recipe,
            accuracy: 0.0,
            macro_f1: 0.0,
            steps: 0,
            seconds: 0.0,
            device: String::new(),
            cancelled: false,
            saved_id: None,
        }
    }
}

/// A training configuration in words ("full fine-tuning · 3 epochs · lr 2e-5").
pub fn recipe(c: &FineTuneConfig) -> String {
    match c.mode {
        TrainMode::HeadOnly => format!("{} · {} epochs", c.mode.label(), c.head_epochs),
        TrainMode::Full => format!("{} · {} epochs · lr {:e}", c.mode.label(), c.epochs, c.learning_rate),
        TrainMode::FreezeThenUnfreeze => format!("{} · {} + {} epochs", c.mode.label(), c.head_epochs, c.epochs),
    }
}

type FillReply = Box<dyn FnOnce(Result<Vec<MaskFill>, String>)>;
type FilesReply = Box<dyn FnOnce(Result<Vec<(String, Vec<u8>)>, String>)>;

/// Receives the fine-tuned encoder (its checkpoint and the classifier's labels), or why not.
type EncoderReply = Box<dyn FnOnce(Result<(CheckpointFiles, Vec<String>), String>)>;

fn bundle_urls() -> Option<(String, String)> {
    let document = web_sys::window()?.document()?;
    let href = |selector: &str| -> Option<String> {
        let link = document.query_selector(selector).ok()??;
        js_sys::Reflect::get(&link, &"href".into()).ok()?.as_string()
    };
    Some((href("link[rel=modulepreload]")?, href("link[rel=preload][as=fetch]")?))
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

impl Studio {
    /// Creates the state and starts the worker.
    pub fn new() -> Self {
        let studio = Self {
            worker: StoredValue::new_local(None),
            worker_ready: RwSignal::new(false),
            threads: RwSignal::new((1, String::new())),
            fused_multiply_add: RwSignal::new(false),
            base_sent: StoredValue::new(None),
            upload: RwSignal::new(None),
            valid_upload: RwSignal::new(None),
            columns: RwSignal::new(ColumnMap { text: 0, text_pair: None, label: Some(1) }),
            data_error: RwSignal::new(None),
            prepared: RwSignal::new(None),
            valid_fraction: RwSignal::new(0.2),
            split_seed: RwSignal::new(13),
            config: RwSignal::new(FineTuneConfig::new()),
            max_len: RwSignal::new(64),
            restarts: RwSignal::new(1),
            backend: RwSignal::new(Backend::Cpu),
            run: RwSignal::new(RunState::Idle),
            run_id: StoredValue::new(0),
            live: RwSignal::new(Live::default()),
            steps: RwSignal::new(Vec::new()),
            evals: RwSignal::new(Vec::new()),
            summary: RwSignal::new(None),
            classifier: RwSignal::new(None),
            notice: RwSignal::new(None),
            pending: StoredValue::new_local(HashMap::new()),
            next_request: StoredValue::new(1),
            encoder_reply: StoredValue::new_local(None),
            fill_reply: StoredValue::new_local(None),
            lab_files_reply: StoredValue::new_local(None),
            from_scratch: RwSignal::new(false),
            history: RwSignal::new(Vec::new()),
            starting: StoredValue::new(None),
            lab: Lab::new(),
            saved: RwSignal::new(Vec::new()),
            usage: RwSignal::new(None),
            storage_error: RwSignal::new(None),
            resume_offer: RwSignal::new(None),
            checkpoint_note: RwSignal::new(None),
            checkpointed: StoredValue::new(None),
            settings_ready: StoredValue::new(false),
            dataset_id: RwSignal::new(None),
        };
        studio.start_worker();
        studio
    }

    fn start_worker(self) {
        let Some((js, wasm)) = bundle_urls() else {
            self.notice.set(Some(Err("the page could not find its own wasm bundle to start the training worker".into())));
            return;
        };
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Module);
        let worker = match Worker::new_with_options("worker.js", &options) {
            Ok(w) => w,
            Err(e) => {
                self.notice.set(Some(Err(format!("the training worker could not start: {e:?}"))));
                return;
            }
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            match decode::<FromWorker>(&event.data()) {
                Ok((message, bytes)) => self.receive(message, bytes),
                Err(e) => self.notice.set(Some(Err(e))),
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let init = js_sys::Object::new();
        js_sys::Reflect::set(&init, &"js".into(), &js.into()).ok();
        js_sys::Reflect::set(&init, &"wasm".into(), &wasm.into()).ok();
        for (key, name) in [("threaded", "bertbench-threads"), ("threadedRelaxed", "bertbench-threads-relaxed")] {
            if let Some(url) = threaded_bundle_url(name) {
                js_sys::Reflect::set(&init, &key.into(), &url.into()).ok();
            }
        }
        worker.post_message(&init).ok();
        self.worker.set_value(Some(worker));
    }

    fn send(self, message: &ToWorker, bytes: &[&[u8]]) {
        let (data, transfer) = encode(message, bytes);
        self.worker.with_value(|w| {
            if let Some(w) = w {
                w.post_message_with_transfer(&data, &transfer).ok();
            }
        });
    }

    fn receive(self, message: FromWorker, bytes: Vec<Vec<u8>>) {
        let current = self.run_id.get_value();
        match message {
            FromWorker::Ready { threads, note, fused_multiply_add } => {
                self.threads.set((threads, note));
                self.fused_multiply_add.set(fused_multiply_add);
                self.worker_ready.set(true);
            }
            FromWorker::BaseSet { .. } => {}
            FromWorker::Event { run, event } if run == current => self.on_event(event),
            FromWorker::Paused { run, paused } if run == current => self.run.set(RunState::Running { paused }),
            FromWorker::Paused { run, paused } if run == self.lab.run_id.get_value() => self.lab.run.set(LabRun::Running { paused }),
            FromWorker::Lab { run, event } => self.lab.on_event(run, event),
            FromWorker::LabFinished { run, cancelled, steps, seconds } => {
                self.lab.on_finished(run, cancelled, steps, seconds);
                if run == self.lab.run_id.get_value() && steps > 0 {
                    self.save_lab(cancelled, steps, seconds);
                }
            }
            FromWorker::LabOpened { run } => self.lab.on_opened(run),
            FromWorker::LabFailed { run, message } => self.lab.on_failed(run, message),
            FromWorker::Filled { request, fills } => {
                if let Some((r, reply)) = self.fill_reply.try_update_value(Option::take).flatten() {
                    if r == request {
                        reply(Ok(fills));
                    }
                }
            }
            FromWorker::LabExported { names } => {
                if let Some(reply) = self.lab_files_reply.try_update_value(Option::take).flatten() {
                    reply(Ok(names.into_iter().zip(bytes).collect()));
                }
            }
            FromWorker::Finished { run, summary } if run == current => {
                self.classifier.set(Some((summary.meta.clone(), "trained in this session".into())));
                if let Some(mut record) = self.starting.get_value() {
                    record.accuracy = summary.metrics.accuracy;
                    record.macro_f1 = summary.metrics.macro_f1;
                    record.steps = summary.steps;
                    record.seconds = summary.seconds;
                    record.device = summary.device.clone();
                    record.cancelled = summary.cancelled;
                    self.save_run(&mut record, &summary);
                    self.history.update(|h| h.push(record));
                }
                self.checkpoint_note.set(None);
                self.summary.set(Some(Arc::new(*summary)));
                self.live.update(|l| l.evaluating = None);
                self.run.set(RunState::Finished);
            }
            FromWorker::Failed { run, message, gpu_lost: true } if run == current => self.fall_back_to_cpu(run, message),
            FromWorker::Failed { run, message, .. } if run == current => {
                self.run.set(RunState::Failed(message));
                // A checkpoint of the failed run, if any, is offered for resuming (on the CPU, say).
                self.refresh_saved();
            }
            FromWorker::Checkpointed { run, step, epoch } if run == current => {
                self.checkpointed.set_value(Some(run));
                self.checkpoint_note.set(Some(Ok(format!(
                    "Checkpoint saved in this browser at step {step} ({epoch} epoch{} of this stage done): a reload can resume from here.",
                    if epoch == 1 { "" } else { "s" }
                ))));
                spawn_local(async move { self.usage.set(crate::store::estimate().await) });
            }
            FromWorker::CheckpointFailed { run, message } if run == current => {
                self.checkpoint_note.set(Some(Err(format!("No checkpoint: {message} Training goes on."))));
            }
            FromWorker::Checkpointed { .. } | FromWorker::CheckpointFailed { .. } => {}
            FromWorker::Saved { id } => {
                if self.lab.saving.get_value().as_deref() == Some(id.as_str()) {
                    self.lab.storage_note.set(Some(Ok("Saved in this browser, with its curves and probes: reopen it from the list below after a reload.".into())));
                }
                self.storage_error.set(None);
                self.refresh_saved();
            }
            FromWorker::SaveFailed { id, message } => {
                if self.lab.saving.get_value().as_deref() == Some(id.as_str()) {
                    self.lab.storage_note.set(Some(Err(message.clone())));
                }
                self.history.update(|h| {
                    for r in h.iter_mut().filter(|r| r.saved_id.as_deref() == Some(id.as_str())) {
                        r.saved_id = None;
                    }
                });
                self.storage_error.set(Some(message));
                self.refresh_saved();
            }
            FromWorker::Event { .. } | FromWorker::Paused { .. } | FromWorker::Finished { .. } | FromWorker::Failed { .. } => {}
            FromWorker::Predictions { request, labels, probs } => {
                if let Some(reply) = self.pending.try_update_value(|p| p.remove(&request)).flatten() {
                    reply(Ok((labels, probs)));
                }
            }
            FromWorker::Exported { file_name } => match bytes.first() {
                Some(zip) => {
                    download(&file_name, zip, "application/zip");
                    self.notice.set(Some(Ok(format!("Exported {file_name} ({:.1} MB).", zip.len() as f64 / 1_048_576.0))));
                }
                None => self.notice.set(Some(Err("the export came back empty".into()))),
            },
            FromWorker::Imported { meta, description } => {
                self.notice.set(Some(Ok(format!("Imported a classifier: {description}."))));
                self.classifier.set(Some((meta, "imported".into())));
            }
            FromWorker::Encoder { labels, tokenizer_json, vocab_txt } => {
                let Some(reply) = self.encoder_reply.try_update_value(Option::take).flatten() else { return };
                let mut parts = bytes.into_iter();
                let (Some(config_json), Some(weights)) = (parts.next(), parts.next()) else {
                    reply(Err("the fine-tuned model came back incomplete".into()));
                    return;
                };
                let tokenizer_json = if tokenizer_json { parts.next() } else { None };
                let vocab_txt = if vocab_txt { parts.next() } else { None };
                reply(Ok((CheckpointFiles { config_json, weights, tokenizer_json, vocab_txt }, labels)));
            }
            FromWorker::Error { message } => {
                if let Some(reply) = self.encoder_reply.try_update_value(Option::take).flatten() {
                    reply(Err(message.clone()));
                }
                if let Some((_, reply)) = self.fill_reply.try_update_value(Option::take).flatten() {
                    reply(Err(message.clone()));
                }
                if let Some(reply) = self.lab_files_reply.try_update_value(Option::take).flatten() {
                    reply(Err(message.clone()));
                }
                // A failed prediction answers every waiting request, so no button stays stuck.
                let waiting: Vec<_> = self.pending.try_update_value(|p| p.drain().collect::<Vec<_>>()).unwrap_or_default();
                for (_, reply) in waiting {
                    reply(Err(message.clone()));
                }
                self.notice.set(Some(Err(message)));
            }
        }
    }

    fn on_event(self, event: TrainEvent) {
        match event {
            TrainEvent::Restart { index, of, .. } => {
                self.steps.set(Vec::new());
                self.evals.set(Vec::new());
                self.live.set(Live { restart: Some((index, of)), total_steps: self.expected_steps(), ..Live::default() });
            }
            TrainEvent::Features { done, total } => self.live.update(|l| {
                l.phase = Some(Phase::Features);
                l.features = Some((done, total));
            }),
            TrainEvent::Phase { phase, .. } => self.live.update(|l| {
                l.phase = Some(phase);
                l.features = None;
                l.stage_start = None;
                l.steps_per_second = None;
            }),
            TrainEvent::Step(point) => {
                self.live.update(|l| {
                    l.step = point.step;
                    l.evaluating = None;
                    let now = now_ms();
                    match l.stage_start {
                        None => l.stage_start = Some((now, point.step)),
                        Some((t0, s0)) if point.step > s0 && now > t0 => {
                            l.steps_per_second = Some((point.step - s0) as f64 / ((now - t0) / 1000.0));
                        }
                        Some(_) => {}
                    }
                });
                self.steps.update(|s| s.push(point));
            }
            TrainEvent::Evaluating { done, total } => self.live.update(|l| l.evaluating = Some((done, total))),
            TrainEvent::Evaluated(report) => {
                self.live.update(|l| l.evaluating = None);
                self.evals.update(|e| e.push(*report));
            }
        }
    }

    /// Parses an uploaded training (or validation) file and re-validates.
    pub fn set_file(self, state: AppState, name: String, bytes: Vec<u8>, validation: bool) {
        match data::parse_table(&bytes, Some(&name)) {
            Ok(table) => {
                // A training file none of whose rows can be used with the guessed columns (no
                // label column, nothing readable) is refused like an unreadable one, keeping the
                // previous data: there would be nothing to fix by choosing columns.
                if !validation {
                    if let Err(e) = data::to_examples(&table, &data::guess_columns(&table)) {
                        self.data_error.set(Some(format!("{name}: {e} The data you had is kept.")));
                        return;
                    }
                }
                if !validation {
                    self.save_dataset(name.clone(), bytes.clone(), table.rows.len());
                }
                let upload = Upload { name, table: Arc::new(table) };
                self.data_error.set(None);
                if validation {
                    self.valid_upload.set(Some(upload));
                } else {
                    self.columns.set(data::guess_columns(&upload.table));
                    self.upload.set(Some(upload));
                    self.valid_upload.set(None);
                }
                self.revalidate(state);
            }
            // The previous data stays as it was: a bad file changes nothing.
            Err(e) => self.data_error.set(Some(format!("{name}: {e} The data you had is kept."))),
        }
    }

    /// Maps columns, validates, and counts tokens (in chunks, yielding).
    pub fn revalidate(self, state: AppState) {
        let Some(upload) = self.upload.get_untracked() else { return };
        let map = self.columns.get_untracked();
        let max_len = self.max_len.get_untracked();
        let dataset = match data::to_examples(&upload.table, &map) {
            Ok(d) => Arc::new(d),
            Err(e) => {
                self.prepared.set(None);
                self.data_error.set(Some(e.to_string()));
                return;
            }
        };
        let valid_file = match self.valid_upload.get_untracked() {
            None => None,
            Some(v) => match data::to_examples(&v.table, &map) {
                Ok(d) => Some(Arc::new(d)),
                Err(e) => {
                    self.data_error.set(Some(format!("{} (validation file): {e}", v.name)));
                    None
                }
            },
        };
        self.data_error.set(None);
        spawn_local(async move {
            let Some(engine) = state.engine() else {
                self.data_error.set(Some("The model is still loading; its tokenizer is needed to count tokens.".into()));
                return;
            };
            let tok = &engine.bert.tokenizer;
            let mut lengths = Vec::with_capacity(dataset.examples.len());
            let mut last = now_ms();
            for ex in &dataset.examples {
                let enc = match &ex.text_pair {
                    Some(b) => tok.encode_pair(&ex.text, b),
                    None => tok.encode(&ex.text),
                };
                lengths.push(enc.map(|e| e.truncated_from.unwrap_or(e.tokens.len())).unwrap_or(0));
                if now_ms() - last > 40.0 {
                    yield_to_browser().await;
                    last = now_ms();
                }
            }
            let report = data::validate(&dataset, &lengths, max_len, 2);
            self.prepared.set(Some(Prepared { dataset, report, valid_file }));
        });
    }

    /// Starts a run on the prepared data.
    pub fn start(self, state: AppState) -> Result<(), String> {
        let prepared = self.prepared.get_untracked().ok_or("load a dataset first")?;
        if let Some(first) = prepared.report.errors.first() {
            return Err(format!("The data has a problem to fix first: {first}"));
        }
        let engine = state.engine().ok_or("the model is still loading")?;
        let dataset = &prepared.dataset;
        let (train, valid) = match &prepared.valid_file {
            Some(v) => {
                if let Some(bad) = v.examples.iter().find(|e| dataset.label_index(&e.label).is_none()) {
                    return Err(format!(
                        "the validation file has label {:?} (line {}), which the training file does not",
                        bad.label, bad.line
                    ));
                }
                (dataset.examples.clone(), v.examples.clone())
            }
            None => {
                let split = dataset
                    .split(self.valid_fraction.get_untracked(), self.split_seed.get_untracked())
                    .map_err(|e| e.to_string())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| dataset.examples[i].clone()).collect::<Vec<_>>();
                (pick(&split.train), pick(&split.valid))
            }
        };
        self.send_base(state)?;
        let run = self.run_id.get_value() + 1;
        self.run_id.set_value(run);
        self.steps.set(Vec::new());
        self.evals.set(Vec::new());
        self.live.set(Live { total_steps: self.expected_steps(), ..Live::default() });
        self.run.set(RunState::Running { paused: false });
        let request = TrainRequest {
            run,
            config: self.config.get_untracked(),
            labels: dataset.labels.clone(),
            train,
            valid,
            max_len: self.max_len.get_untracked(),
            backend: self.backend.get_untracked(),
            restarts: self.restarts.get_untracked(),
            from_scratch: self.from_scratch.get_untracked(),
        };
        self.starting.set_value(Some(RunRecord::starting(engine.model_id.clone(), request.from_scratch, recipe(&request.config))));
        // A new run's first checkpoint replaces an older run's.
        self.resume_offer.set(None);
        self.checkpoint_note.set(None);
        self.send(&ToWorker::Train(Box::new(request)), &[]);
        Ok(())
    }

    /// Sends the page's model to the worker as the base checkpoint, unless it has it already.
    pub fn send_base(self, state: AppState) -> Result<(), String> {
        let engine = state.engine().ok_or("the model is still loading")?;
        if self.base_sent.get_value().as_deref() != Some(engine.model_id.as_str()) && engine.downloaded {
            self.send(&ToWorker::SetBase { model_id: engine.model_id.clone(), download: true, tokenizer_json: false, vocab_txt: false }, &[]);
            self.base_sent.set_value(Some(engine.model_id.clone()));
        } else if self.base_sent.get_value().as_deref() != Some(engine.model_id.as_str()) {
            let f = engine.files()?;
            let mut parts: Vec<&[u8]> = vec![&f.config_json, &f.weights];
            if let Some(t) = &f.tokenizer_json {
                parts.push(t);
            }
            if let Some(v) = &f.vocab_txt {
                parts.push(v);
            }
            self.send(
                &ToWorker::SetBase {
                    model_id: engine.model_id.clone(),
                    download: false,
                    tokenizer_json: f.tokenizer_json.is_some(),
                    vocab_txt: f.vocab_txt.is_some(),
                },
                &parts,
            );
            self.base_sent.set_value(Some(engine.model_id.clone()));
        }
        Ok(())
    }

    /// Sends any message to the worker.
    pub fn send_message(self, message: &ToWorker, bytes: &[&[u8]]) {
        self.send(message, bytes);
    }

    /// Top-5 fills for every `[MASK]` of `text`, from the lab's model.
    pub fn fill_mask(self, text: String, reply: impl FnOnce(Result<Vec<MaskFill>, String>) + 'static) {
        let request = self.next_request.get_value();
        self.next_request.set_value(request + 1);
        if let Some(previous) = self.fill_reply.try_update_value(|r| r.replace((request, Box::new(reply)))).flatten() {
            (previous.1)(Err("superseded by a newer request".into()));
        }
        self.send(&ToWorker::FillMask { request, text }, &[]);
    }

    /// The lab's model as Hugging Face files.
    pub fn lab_files(self, reply: impl FnOnce(Result<Vec<(String, Vec<u8>)>, String>) + 'static) {
        if let Some(previous) = self.lab_files_reply.try_update_value(|r| r.replace(Box::new(reply))).flatten() {
            previous(Err("superseded by a newer request".into()));
        }
        self.send(&ToWorker::LabExport, &[]);
    }

    /// Optimizer steps one restart of the configured run takes on the prepared data.
    pub fn expected_steps(self) -> usize {
        let Some(p) = self.prepared.get_untracked() else { return 0 };
        let c = self.config.get_untracked();
        let n = match &p.valid_file {
            Some(_) => p.dataset.examples.len(),
            None => ((1.0 - self.valid_fraction.get_untracked()) * p.dataset.examples.len() as f32).round() as usize,
        };
        let epochs = match c.mode {
            TrainMode::HeadOnly => c.head_epochs,
            TrainMode::Full => c.epochs,
            TrainMode::FreezeThenUnfreeze => c.head_epochs + c.epochs,
        };
        n.div_ceil(c.batch_size.max(1)) * epochs
    }

    /// Pauses or resumes the run.
    pub fn pause(self, pause: bool) {
        self.send(if pause { &ToWorker::Pause } else { &ToWorker::Resume }, &[]);
    }

    /// Cancels the run (the best weights so far are kept).
    pub fn cancel(self) {
        self.send(&ToWorker::Cancel, &[]);
    }

    /// Asks the worker for probabilities; `reply` gets the labels and one row per text.
    pub fn predict(
        self,
        texts: Vec<(String, Option<String>)>,
        reply: impl FnOnce(Result<(Vec<String>, Vec<Vec<f32>>), String>) + 'static,
    ) {
        let request = self.next_request.get_value();
        self.next_request.set_value(request + 1);
        self.pending.update_value(|p| {
            p.insert(request, Box::new(reply));
        });
        self.send(&ToWorker::Predict { request, texts }, &[]);
    }

    /// Exports the current classifier as a zip download.
    pub fn export(self, name: String) {
        self.send(&ToWorker::Export { name }, &[]);
    }

    /// Asks the worker for the current classifier's encoder as a plain BERT checkpoint.
    pub fn encoder(self, reply: impl FnOnce(Result<(CheckpointFiles, Vec<String>), String>) + 'static) {
        if let Some(previous) = self.encoder_reply.try_update_value(|r| r.replace(Box::new(reply))).flatten() {
            previous(Err("superseded by a newer request".into()));
        }
        self.send(&ToWorker::Encoder, &[]);
    }

    /// Imports a classifier from files (or one zip).
    pub fn import(self, files: Vec<(String, Vec<u8>)>) {
        let names = files.iter().map(|(n, _)| n.clone()).collect();
        let bytes: Vec<&[u8]> = files.iter().map(|(_, b)| b.as_slice()).collect();
        self.send(&ToWorker::Import { names }, &bytes);
    }
}

/// Offers `bytes` as a file download.
pub fn download(name: &str, bytes: &[u8], mime: &str) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options) else { return };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else { return };
    if let Ok(a) = document.create_element("a") {
        let a: web_sys::HtmlAnchorElement = a.unchecked_into();
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    // Revoking at once can cancel the download; the blob is freed a minute later.
    spawn_local(async move {
        crate::fetch::sleep_ms(60_000).await;
        let _ = web_sys::Url::revoke_object_url(&url);
    });
}

/// The files of an `<input type=file>` or a drop, taken at once: the list is live, and clearing
/// the input (so the same file can be picked again) empties it.
pub fn file_list(list: &web_sys::FileList) -> Vec<web_sys::File> {
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// Reads files' bytes.
pub async fn read_files(files: Vec<web_sys::File>) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for file in files {
        if let Ok(buffer) = wasm_bindgen_futures::JsFuture::from(file.array_buffer()).await {
            out.push((file.name(), crate::js_bytes::take(&js_sys::Uint8Array::new(&buffer))));
        }
    }
    out
}
