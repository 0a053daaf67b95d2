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
use bertbench_core::tasks::classification::{self, HEAD_FILE, Level, LoadedClassifier};
use bertbench_core::tasks::tagging::{self, TaggedWord};
use bertbench_core::tasks::similarity;
use bertbench_core::tokenizer::by_length;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::bert::config::BertConfig;
use bertbench_core::tasks::pretraining::{self, BertForPreTraining};
use bertbench_core::tasks::replaced_token::{self, ElectraDiscriminator, ElectraForPreTraining};
use bertbench_core::train::{PretrainStep, Pretrainer};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::tasks::classification::predict;
use bertbench_core::train::session::{Ended, Host, Session, better, restart_seed};
use bertbench_core::tasks::qa::{self, SpanConfig};
use bertbench_core::train::{CheckpointPolicy, EvalReport, Event, FileSink, FineTuner, LabeledText, Snapshot, StepPoint, copy_to, start_encoder};
use futures::channel::oneshot;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, DedicatedWorkerGlobalScope, MessageEvent};

use crate::engine;
use crate::fetch::sleep_ms;
use crate::protocol::{FromWorker, Outcome, Progress, RunUpdate, ToWorker, Work, decode, encode};
use crate::runs::{
    Backend, CHECKPOINT_ID, CheckpointMeta, Encoding, Kept, LAB_FILES, LabEvent, LabRequest, LabVocab, RunSummary, SavedLab, SavedRun, Speed,
    TrainEvent, TrainRequest, thin,
};
use crate::store::{self, BlobWriter, Item, Kind, StoredBlob};
use crate::fetch::now_ms;

mod base;
mod inspect;
mod probe;
mod requests;
mod classifier;
mod finetune;
mod student;
mod lab;
mod search;

use base::*;
use classifier::*;
use finetune::*;
use student::*;
use lab::*;

/// The current classifier and what it needs to predict and export.
struct Current {
    loaded: LoadedClassifier,
    device: Device,
    tokenizer_json: Option<Vec<u8>>,
    vocab_txt: Option<Vec<u8>>,
}

/// The MLM lab's model, kept after a run for fill-mask and export.
struct LabModel {
    /// The MLM model (an ELECTRA run's generator, on the discriminator's embeddings); none for a
    /// saved ELECTRA discriminator, whose generator is not kept.
    model: Option<BertForPreTraining>,
    /// An ELECTRA run's discriminator: the model its files hold.
    discriminator: Option<ElectraDiscriminator>,
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
    /// A bi-encoder's vectors of the last list of texts searched.
    search_index: Option<search::SearchIndex>,
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
            update(run, RunUpdate::Failed { message: message.clone(), gpu_lost: false });
        }
        post(&FromWorker::Error { message }, &[]);
    }));
    // The worker's one listener, for its whole life.
    gloo_events::EventListener::new(&scope(), "message", |event| {
        let Some(event) = event.dyn_ref::<MessageEvent>() else { return };
        match decode::<ToWorker>(&event.data()) {
            Ok((message, bytes)) => handle(message, bytes),
            Err(e) => post(&FromWorker::Error { message: e }, &[]),
        }
    })
    .forget();
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
    let webgpu = cfg!(not(feature = "threads"));
    post(&FromWorker::Ready { threads: threads(), note, fused_multiply_add: bertbench_core::nn::linear::gemm::FUSED_MULTIPLY_ADD, webgpu }, &[]);
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
        ToWorker::Start { run, work } => {
            let Some(control) = begin_run(run) else {
                update(run, RunUpdate::Failed { message: BUSY.into(), gpu_lost: false });
                return;
            };
            wasm_bindgen_futures::spawn_local(async move {
                match work {
                    Work::FineTune(request) => finish_run(run, Job::new(run, *request, control, None).execute().await).await,
                    Work::ResumeFineTune { backend, record } => {
                        let result = match load_checkpoint().await {
                            Ok((meta, resume)) => {
                                let request = TrainRequest { backend, record, ..meta.request.clone() };
                                Job::new(run, request, control, Some((meta, resume))).execute().await
                            }
                            Err(message) => Err(message),
                        };
                        finish_run(run, result).await;
                    }
                    Work::Pretrain(request) => {
                        let started = now_ms();
                        let result = run_lab(run, &request, &control).await;
                        finish_lab(run, &request, result, (now_ms() - started) / 1000.0).await;
                    }
                }
            });
        }
        ToWorker::Pause | ToWorker::Resume => {
            let pause = matches!(message, ToWorker::Pause);
            STATE.with(|s| {
                let s = s.borrow();
                if let Some(run) = s.run {
                    s.control.set_paused(pause);
                    update(run, RunUpdate::Paused(pause));
                }
            });
        }
        ToWorker::Cancel => STATE.with(|s| {
            let s = s.borrow();
            s.control.cancel();
        }),
        ToWorker::Ask { request, ask } => wasm_bindgen_futures::spawn_local(async move {
            match requests::answer(ask, bytes).await {
                Ok((answer, files)) => {
                    let files: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
                    post(&FromWorker::Reply { request, answer: Ok(answer) }, &files);
                }
                Err(message) => post(&FromWorker::Reply { request, answer: Err(message) }, &[]),
            }
        }),
    }
}

/// Tells the page what run `run` did.
fn update(run: u32, update: RunUpdate) {
    post(&FromWorker::Run { run, update }, &[]);
}
