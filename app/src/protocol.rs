//! Messages between the page and the training worker.
//!
//! Each message is a JS object `{ json, bytes }`: `json` is one of the enums below as JSON text,
//! `bytes` an array of `Uint8Array`s for large binary payloads (checkpoint files), which
//! `postMessage` transfers instead of copying through JSON.

use bertbench_core::tasks::classification::ClassifierMeta;
use bertbench_core::data::Example;
use bertbench_core::tasks::metrics::Metrics;
use bertbench_core::tasks::pretraining::MaskFill;
use bertbench_core::train::{PretrainConfig, PretrainStep, ShownToken};
use bertbench_core::train::{EvalReport, FineTuneConfig, Phase, StepPoint};

use crate::store::Item;
use js_sys::{Array, Object, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

/// Where the worker computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backend {
    /// burn's `flex` backend in WebAssembly.
    Cpu,
    /// WebGPU through burn-wgpu.
    WebGpu,
}

/// A run to start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainRequest {
    /// Id the worker's replies carry.
    pub run: u32,
    /// Hyper-parameters (a checkpoint saved before a field existed gets its default).
    #[serde(deserialize_with = "bertbench_core::train::config_with_defaults")]
    pub config: FineTuneConfig,
    /// Label names in id order.
    pub labels: Vec<String>,
    /// Training examples.
    pub train: Vec<Example>,
    /// Validation examples.
    pub valid: Vec<Example>,
    /// Longest input in tokens.
    pub max_len: usize,
    /// Where to compute.
    pub backend: Backend,
    /// Runs with seeds `seed`, `seed + 1`, …; the best validation accuracy is kept.
    pub restarts: usize,
    /// Start the encoder from random weights of the same shape (a baseline without pretraining).
    pub from_scratch: bool,
}

/// Page → worker. A request that carries a `request` id is answered by one reply with the same
/// id, or by [`FromWorker::Refused`] with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ToWorker {
    /// The base checkpoint follows in `bytes`: config.json, model.safetensors, then
    /// tokenizer.json and/or vocab.txt as flagged.
    /// With `download`, no bytes: the worker reads the model's files from `models/<model_id>/`
    /// itself (from the offline cache), so the page need not write 90 MB of weights from its
    /// tensors to send them.
    SetBase { model_id: String, download: bool, tokenizer_json: bool, vocab_txt: bool },
    /// Start a run.
    Train(Box<TrainRequest>),
    /// Pause the run after its current unit of work.
    Pause,
    /// Resume a paused run.
    Resume,
    /// Stop the run; the best weights so far are kept.
    Cancel,
    /// Probabilities for texts (with optional second segments) from the current classifier.
    Predict { request: u32, texts: Vec<(String, Option<String>)> },
    /// Export the current classifier as a zip of a Hugging Face folder.
    Export { request: u32, name: String },
    /// Import a classifier: files named in `names`, bytes in `bytes` (or one `.zip`).
    Import { request: u32, names: Vec<String> },
    /// Send the current classifier's encoder as a plain BERT checkpoint, for the explorer.
    Encoder { request: u32 },
    /// Start an MLM-lab run.
    Pretrain(Box<LabRequest>),
    /// Top-k fills for a sentence with `[MASK]`, from the lab's model.
    FillMask { request: u32, text: String },
    /// Send the lab's model as a Hugging Face folder (files in `bytes`, names in the reply).
    LabExport { request: u32 },
    /// Continue the run whose checkpoint is saved (`store`, [`CHECKPOINT_ID`]), as run `run`,
    /// on `backend` (which may differ from the one it started on).
    ResumeRun { run: u32, backend: Backend },
    /// Save the current classifier (a zip of its folder) as the bytes of `item`, in one write.
    SaveRun { item: Box<Item> },
    /// Save the lab's model as the bytes of `item`: its files in [`LAB_FILES`] order, then the
    /// corpus sent in `bytes`.
    SaveLab { item: Box<Item> },
    /// Make the saved lab model in `bytes` ([`LAB_FILES`] order) the lab's model, for lab run
    /// `run` (the reply is [`FromWorker::LabOpened`] or [`FromWorker::LabFailed`]).
    OpenLab { run: u32 },
}

/// The files of a saved lab model, in the order of its item's bytes (an absent one is empty).
pub const LAB_FILES: [&str; 4] = ["config.json", "model.safetensors", "tokenizer.json", "vocab.txt"];

/// The key of the one saved checkpoint: the run in progress.
pub const CHECKPOINT_ID: &str = "checkpoint";

/// What a saved checkpoint says about its run (the JSON of its [`Item`]); the bytes are the
/// files of the current restart's snapshot, then those of the best earlier restart's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// The run's request, examples included.
    pub request: TrainRequest,
    /// The base model's id (the page must have it loaded to resume).
    pub base_model: String,
    /// Restart being trained (from 0).
    pub restart: usize,
    /// Names of the snapshot's files.
    pub files: Vec<String>,
    /// Names of the best finished restart's snapshot files, if any.
    pub kept_files: Vec<String>,
    /// Steps done and planned in this restart.
    pub step: usize,
    /// Steps of this restart.
    pub total_steps: usize,
    /// Epochs done in the current stage, and the stage.
    pub epoch: usize,
    /// The stage.
    pub phase: Phase,
    /// Whether AdamW's moments were saved (not on WebGPU).
    pub with_optimizer: bool,
    /// Seconds trained before this checkpoint.
    pub seconds: f64,
    /// Where it trained.
    pub device: String,
    /// The curves so far.
    pub steps: Vec<StepPoint>,
    /// The evaluations so far.
    pub evals: Vec<EvalReport>,
}

/// A training event, as the page draws it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum TrainEvent {
    /// Restart `index` (from 0) of `of` begins, with this seed.
    Restart { index: usize, of: usize, seed: u64 },
    /// Caching frozen features.
    Features { done: usize, total: usize },
    /// A stage starts.
    Phase { phase: Phase, steps: usize },
    /// One optimizer step.
    Step(StepPoint),
    /// Evaluating.
    Evaluating { done: usize, total: usize },
    /// A validation pass.
    Evaluated(Box<EvalReport>),
}

/// A validation example the classifier got wrong.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mistake {
    /// Line in the uploaded file.
    pub line: usize,
    /// The text (and pair).
    pub text: String,
    /// True label.
    pub label: String,
    /// Predicted label.
    pub predicted: String,
    /// Probability per label.
    pub probs: Vec<f32>,
}

/// Where the MLM lab's vocabulary comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LabVocab {
    /// The pretrained model's WordPiece vocabulary.
    Pretrained,
    /// A WordPiece vocabulary of this many pieces, trained on the corpus.
    Train(usize),
}

/// An MLM-lab run to start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabRequest {
    /// Id the worker's replies carry.
    pub run: u32,
    /// The corpus, one sentence or paragraph per line, in reading order.
    pub lines: Vec<String>,
    /// Vocabulary (ignored when continuing: the pretrained model keeps its own).
    pub vocab: LabVocab,
    /// Preset size, or the pretrained model.
    pub preset: String,
    /// Continue from the pretrained model instead of starting from scratch.
    pub continue_pretrained: bool,
    /// Hyper-parameters, masking and pair task.
    pub config: PretrainConfig,
    /// Sentences with `[MASK]` scored every `probe_every` steps.
    pub probes: Vec<String>,
    /// Steps between probe evaluations.
    pub probe_every: usize,
    /// Where to compute.
    pub backend: Backend,
}

/// Progress of an MLM-lab run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum LabEvent {
    /// The vocabulary is ready: its size and some of its pieces (`##` ones included).
    Vocab { size: usize, trained: bool, sample: Vec<String> },
    /// The model is built: parameters, planned steps, and a masked batch to show.
    Ready { params: usize, total_steps: usize, preview: Vec<Vec<ShownToken>> },
    /// One optimizer step.
    Step(PretrainStep),
    /// The probe sentences' top predictions after `step` steps.
    Probes { step: usize, fills: Vec<(String, Vec<MaskFill>)> },
}

/// What a finished (or cancelled) run leaves.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunSummary {
    /// Labels, features, length.
    pub meta: ClassifierMeta,
    /// Validation metrics of the kept weights.
    pub metrics: Metrics,
    /// Misclassified validation examples, most confident mistakes first.
    pub mistakes: Vec<Mistake>,
    /// Whether the run was cancelled before its end.
    pub cancelled: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Optimizer steps done.
    pub steps: usize,
    /// Where it trained ("CPU" or "WebGPU · adapter").
    pub device: String,
}

/// Worker → page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker's wasm is running and listening, computing on `threads` threads (more than
    /// one only in the threaded build, in a cross-origin isolated page); `note` says why it has
    /// one thread when more were wanted, or is empty. `fused_multiply_add`: its matrix kernel
    /// uses relaxed SIMD's multiply-add (the relaxed threaded build).
    Ready { threads: usize, note: String, fused_multiply_add: bool },
    /// The base checkpoint is loaded.
    BaseSet { model_id: String },
    /// Progress of run `run`.
    Event { run: u32, event: TrainEvent },
    /// The run is paused / resumed.
    Paused { run: u32, paused: bool },
    /// The run ended; the kept classifier is now the current one.
    Finished { run: u32, summary: Box<RunSummary> },
    /// The run failed; the message says why. Any classifier from before is still there.
    /// `gpu_lost`: it ran on WebGPU and the device failed (lost, or its process crashed), so the
    /// page goes on on the CPU from the run's last checkpoint.
    Failed { run: u32, message: String, gpu_lost: bool },
    /// Probabilities for request `request`, one row per text.
    Predictions { request: u32, labels: Vec<String>, probs: Vec<Vec<f32>> },
    /// The export for request `request`: one zip in `bytes`.
    Exported { request: u32, file_name: String },
    /// An imported classifier is now the current one (request `request`).
    Imported { request: u32, meta: ClassifierMeta, description: String },
    /// The current classifier's encoder: config.json and model.safetensors in `bytes`, then
    /// tokenizer.json and/or vocab.txt as flagged. `labels` names the classifier.
    Encoder { request: u32, labels: Vec<String>, tokenizer_json: bool, vocab_txt: bool },
    /// MLM-lab progress for run `run`.
    Lab { run: u32, event: LabEvent },
    /// The lab run ended (cancelled or not); its model is kept for fill-mask and export.
    LabFinished { run: u32, cancelled: bool, steps: usize, seconds: f64 },
    /// The lab run failed; the message says why.
    LabFailed { run: u32, message: String },
    /// Fills for request `request`.
    Filled { request: u32, fills: Vec<MaskFill> },
    /// The lab's model as files for request `request`: `names[i]` is `bytes[i]`.
    LabExported { request: u32, names: Vec<String> },
    /// A saved lab model is the lab's model now (lab run `run`).
    LabOpened { run: u32 },
    /// Run `run` saved a checkpoint after `step` steps (`epoch` epochs of its stage).
    Checkpointed { run: u32, step: usize, epoch: usize },
    /// Run `run` could not save its checkpoint (it goes on training).
    CheckpointFailed { run: u32, message: String },
    /// The run (or lab model) item `id` is saved.
    Saved { id: String },
    /// The run (or lab model) item `id` could not be saved.
    SaveFailed { id: String, message: String },
    /// Request `request` failed; the message says why.
    Refused { request: u32, message: String },
    /// Something failed outside any one request or run (the worker could not start, or read
    /// the base model); every request still waiting fails with it.
    Error { message: String },
}

/// Builds the JS message for `message` with binary attachments, and the transfer list.
pub fn encode<T: Serialize>(message: &T, bytes: &[&[u8]]) -> (JsValue, Array) {
    let obj = Object::new();
    let json = serde_json::to_string(message).unwrap_or_else(|e| format!("{{\"Error\":{{\"message\":\"{e}\"}}}}"));
    Reflect::set(&obj, &"json".into(), &json.into()).ok();
    let list = Array::new();
    let transfer = Array::new();
    for b in bytes {
        let array = Uint8Array::new_from_slice(b);
        transfer.push(&array.buffer());
        list.push(&array);
    }
    Reflect::set(&obj, &"bytes".into(), &list).ok();
    (obj.into(), transfer)
}

/// Reads a message built by [`encode`].
pub fn decode<T: for<'de> Deserialize<'de>>(data: &JsValue) -> Result<(T, Vec<Vec<u8>>), String> {
    let json = Reflect::get(data, &"json".into())
        .ok()
        .and_then(|j| j.as_string())
        .ok_or("a message without json")?;
    let message = serde_json::from_str(&json).map_err(|e| format!("bad message: {e}"))?;
    let bytes = Reflect::get(data, &"bytes".into())
        .ok()
        .and_then(|b| b.dyn_into::<Array>().ok())
        .map(|list| list.iter().filter_map(|v| v.dyn_into::<Uint8Array>().ok()).map(|a| crate::js_bytes::take(&a)).collect())
        .unwrap_or_default();
    Ok((message, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::train::{FineTuneConfig, TrainMode};

    fn example(text: &str, label: &str, line: usize) -> Example {
        Example { text: text.into(), text_pair: None, label: label.into(), line }
    }

    fn request() -> TrainRequest {
        TrainRequest {
            run: 7,
            config: FineTuneConfig::new().with_mode(TrainMode::FreezeThenUnfreeze).with_epochs(3),
            labels: vec!["neg".into(), "pos".into()],
            train: vec![example("a fine day", "pos", 2)],
            valid: vec![example("a dull day", "neg", 3)],
            max_len: 64,
            backend: Backend::Cpu,
            restarts: 2,
            from_scratch: false,
        }
    }

    /// Messages cross `postMessage` as JSON: every field survives the trip.
    #[test]
    fn a_train_request_goes_to_the_worker_and_back_unchanged() {
        let json = serde_json::to_string(&ToWorker::Train(Box::new(request()))).unwrap();
        let ToWorker::Train(back) = serde_json::from_str::<ToWorker>(&json).unwrap() else { panic!("not a Train message: {json}") };
        assert_eq!(serde_json::to_string(&*back).unwrap(), serde_json::to_string(&request()).unwrap());
        assert_eq!(back.config.mode, TrainMode::FreezeThenUnfreeze);
        assert_eq!(back.valid[0].line, 3);
    }

    /// A checkpoint saved by an older version, whose settings lack a field added since, still
    /// resumes: the field takes its default.
    #[test]
    fn a_request_saved_before_a_setting_existed_still_reads() {
        let mut value = serde_json::to_value(request()).unwrap();
        value["config"].as_object_mut().unwrap().remove("group_by_length").expect("the field is saved today");
        let back: TrainRequest = serde_json::from_value(value).unwrap();
        assert_eq!(back.config.group_by_length, FineTuneConfig::new().group_by_length);
        assert_eq!(back.config.epochs, 3);
    }

    #[test]
    fn replies_name_their_request_or_run() {
        let reply: FromWorker = serde_json::from_str(r#"{"Refused":{"request":4,"message":"no classifier yet"}}"#).unwrap();
        assert!(matches!(reply, FromWorker::Refused { request: 4, ref message } if message == "no classifier yet"));
        let json = serde_json::to_string(&FromWorker::Paused { run: 9, paused: true }).unwrap();
        assert_eq!(json, r#"{"Paused":{"run":9,"paused":true}}"#);
    }
}
