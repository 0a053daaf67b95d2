//! Messages between the page and the training worker.
//!
//! Each message is a JS object `{ json, bytes }`: `json` is one of the enums below as JSON text,
//! `bytes` an array of `Uint8Array`s for large binary payloads (checkpoint files), which
//! `postMessage` transfers instead of copying through JSON.
//!
//! Two kinds of exchange, one shape each:
//! - a **run** ([`ToWorker::Start`]) reports [`RunUpdate`]s tagged with its run id, whatever its
//!   task: progress, pause, checkpoints, then its end (finished and saved, or failed);
//! - a **request** ([`ToWorker::Ask`]) gets exactly one [`FromWorker::Reply`] with its request id:
//!   the answer of the type its [`Request`] names (`requests.rs`), or why there is none.
//!
//! A new task adds its run to [`Work`], its events to [`Progress`] and its result to
//! [`Outcome`], and each question its model answers as a request type naming its answer type
//! (`requests!`); the envelopes stay as they are. The values runs carry are in `runs.rs`.

use js_sys::{Array, Object, Reflect, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};

use crate::runs::{Backend, LabRequest, RunRecord, RunSummary, TrainRequest};

pub mod answers;
pub mod events;
mod requests;

pub use requests::*;

/// Page → worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum ToWorker {
    /// The base checkpoint follows in `bytes`: config.json, model.safetensors, then
    /// tokenizer.json and/or vocab.txt as flagged.
    /// With `download`, no bytes: the worker reads the model's files from `models/<model_id>/`
    /// itself (from the offline cache), so the page need not write 90 MB of weights from its
    /// tensors to send them.
    SetBase { model_id: String, download: bool, tokenizer_json: bool, vocab_txt: bool },
    /// Start run `run` (the worker does one at a time; a second one fails at once).
    Start { run: u32, work: Work },
    /// Pause the run after its current unit of work.
    Pause,
    /// Resume a paused run.
    Resume,
    /// Stop the run; the best weights so far are kept.
    Cancel,
    /// Request `request`, answered by one [`FromWorker::Reply`] with the same id.
    Ask { request: u32, ask: Ask },
}

/// What a run trains.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Work {
    /// Fine-tune a classifier.
    FineTune(Box<TrainRequest>),
    /// Continue the fine-tuning run whose checkpoint is saved (`store`,
    /// [`CHECKPOINT_ID`](crate::runs::CHECKPOINT_ID)) on `backend` (which may differ from the one
    /// it started on), recorded as `record`.
    ResumeFineTune { backend: Backend, record: RunRecord },
    /// Pretrain (or continue pretraining) a model by MLM in the lab.
    Pretrain(Box<LabRequest>),
}

/// Worker → page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker's wasm is running and listening, computing on `threads` threads (more than
    /// one only in the threaded build, in a cross-origin isolated page); `note` says why it has
    /// one thread when more were wanted, or is empty. `fused_multiply_add`: its matrix kernel
    /// uses relaxed SIMD's multiply-add (the relaxed threaded build). `webgpu`: its build can
    /// drive WebGPU (the single-thread one).
    Ready { threads: usize, note: String, fused_multiply_add: bool, webgpu: bool },
    /// What run `run` did.
    Run { run: u32, update: RunUpdate },
    /// The answer to request `request` (its [`Request::Answer`] as JSON), or why there is none.
    Reply { request: u32, answer: Result<serde_json::Value, String> },
    /// Something failed outside any one request or run (the worker could not start, or read
    /// the base model); every request still waiting fails with it.
    Error { message: String },
}

/// What a run reports, in order: progress (and pauses, checkpoints), then either `Finished`
/// (followed by `Saved` when it saves something) or `Failed`. The last one ends the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum RunUpdate {
    /// The task's progress.
    Progress(Progress),
    /// The run is paused (`true`) or goes on.
    Paused(bool),
    /// A checkpoint is saved after `step` steps (`epoch` epochs of its stage).
    Checkpointed { step: usize, epoch: usize },
    /// The checkpoint could not be saved (the run goes on).
    CheckpointFailed(String),
    /// The run ended (cancelled or not); its model is the worker's current one for its task.
    /// `saving`: the id of the item the worker is saving it as ([`Saved`](Self::Saved) follows),
    /// or `None` when there is nothing to save (and this ends the run).
    Finished { outcome: Outcome, saving: Option<String> },
    /// Item `id` is saved, or why not. Ends the run.
    Saved { id: String, result: Result<(), String> },
    /// The run failed; the message says why. Ends the run; any model from before is still there.
    /// `gpu_lost`: it ran on WebGPU and the device failed (lost, or its process crashed), so the
    /// page goes on on the CPU from the run's last checkpoint.
    Failed { message: String, gpu_lost: bool },
}

impl RunUpdate {
    /// Whether this is the run's last update.
    pub fn ends_run(&self) -> bool {
        matches!(self, Self::Finished { saving: None, .. } | Self::Saved { .. } | Self::Failed { .. })
    }
}

/// A task's progress.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Progress {
    FineTune(events::TrainEvent),
    Pretrain(events::LabEvent),
}

/// What a finished run leaves.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Outcome {
    /// The kept classifier is the current one.
    FineTune(Box<RunSummary>),
    /// The model is the lab's model (fill-mask, export, hand-over).
    Pretrain { cancelled: bool, steps: usize, seconds: f64 },
}

/// `values` as little-endian bytes, for an attachment.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The f32s in an attachment made by [`f32_bytes`]; `None` when its length is not a multiple of 4.
pub fn bytes_f32(bytes: &[u8]) -> Option<Vec<f32>> {
    (bytes.len() % 4 == 0).then(|| bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
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

    /// Every reply names its request, every run update its run, in one shape each.
    #[test]
    fn replies_name_their_request_and_updates_their_run() {
        let reply: FromWorker = serde_json::from_str(r#"{"Reply":{"request":4,"answer":{"Err":"no classifier yet"}}}"#).unwrap();
        assert!(matches!(reply, FromWorker::Reply { request: 4, answer: Err(ref m) } if m == "no classifier yet"));
        let json = serde_json::to_string(&FromWorker::Run { run: 9, update: RunUpdate::Paused(true) }).unwrap();
        assert_eq!(json, r#"{"Run":{"run":9,"update":{"Paused":true}}}"#);
        let json = serde_json::to_string(&ToWorker::Ask { request: 2, ask: Encoder.into() }).unwrap();
        assert_eq!(json, r#"{"Ask":{"request":2,"ask":{"Encoder":null}}}"#);
    }

    /// A reply travels as JSON and is read back as the answer type its request names; read as
    /// another request's answer it is refused, not taken for something else.
    #[test]
    fn a_reply_is_read_as_the_answer_its_request_names() {
        fn read<R: Request>(json: serde_json::Value) -> Result<R::Answer, serde_json::Error> {
            serde_json::from_value(json)
        }
        let sent = Predictions { labels: vec!["neg".into(), "pos".into()], probs: vec![vec![0.25, 0.75]], multi_label: false, threshold: None };
        let json = serde_json::to_value(&sent).unwrap();
        let back = read::<Predict>(json.clone()).unwrap();
        assert_eq!((back.labels, back.probs), (sent.labels, sent.probs));
        assert!(read::<TimeWork>(json.clone()).is_err());
        assert!(read::<Similar>(json).is_err());
        let ask: Ask = Predict { texts: vec![("good".into(), None)] }.into();
        assert_eq!(serde_json::to_string(&ask).unwrap(), r#"{"Predict":{"texts":[["good",null]]}}"#);
    }

    /// The client lets go of a run at its last update, and only then.
    #[test]
    fn a_run_ends_at_failure_at_an_unsaved_finish_or_once_saved() {
        let finished = |saving: Option<&str>| RunUpdate::Finished {
            outcome: Outcome::Pretrain { cancelled: false, steps: 3, seconds: 1.0 },
            saving: saving.map(String::from),
        };
        assert!(!finished(Some("lab:1")).ends_run());
        assert!(finished(None).ends_run());
        assert!(RunUpdate::Saved { id: "lab:1".into(), result: Err("quota".into()) }.ends_run());
        assert!(RunUpdate::Failed { message: "no".into(), gpu_lost: false }.ends_run());
        assert!(!RunUpdate::Paused(false).ends_run());
        assert!(!RunUpdate::Checkpointed { step: 1, epoch: 0 }.ends_run());
    }

    /// Arrays travel as bytes and come back bit for bit; a cut attachment is refused.
    #[test]
    fn floats_round_trip_through_bytes() {
        let values = [0.0, -1.5, f32::MIN_POSITIVE, 3.25e7, f32::EPSILON];
        assert_eq!(bytes_f32(&f32_bytes(&values)).unwrap(), values);
        assert_eq!(bytes_f32(&[1, 2, 3]), None);
    }
}
