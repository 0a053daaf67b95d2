//! The fine-tuning studio: its state, and its panels (data, training, results, a look inside,
//! the offer to resume an interrupted run).
//!
//! Data parsing and validation run on the page (they are quick and the user is looking at
//! them); training, prediction, export and import run in the worker (`worker.rs`), reached
//! through the page's worker client (`worker_client.rs`). A run's replies update the signals
//! here, and the studio panels draw from them.

use std::rc::Rc;
use std::sync::Arc;

use bertbench_core::data::{Dataset, guess_columns, parse_table, to_examples};
use bertbench_core::tasks::classification::ClassifierMeta;
use bertbench_core::train::{EvalReport, FineTuneConfig, Phase, StepPoint, TrainMode};
use bertbench_core::bert::checkpoint::CheckpointFiles;
use futures::channel::oneshot;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::app::AppState;
use crate::backend_choice::BackendChoice;
use crate::engine::{Engine, ModelSource};
use crate::files::download;
use crate::protocol::{Outcome, Progress, RunUpdate, Work};
use crate::runs::{Backend, CheckpointMeta, RunData, RunRecord, RunSummary, TextRequest, TrainEvent, TrainRequest};
use crate::saved_work::SavedWork;
use crate::worker_client::WorkerClient;

mod class_names;
mod data;
mod data_card;
mod distil;
mod recipe;
mod held_out;
mod answering;
mod choice;
mod inside;
mod multi_label;
mod predict;
mod results;
mod resume;
mod saved;
mod similarity;
mod tagging;
mod task;
mod task_state;
mod train;

pub use distil::StudioDistilPanel;
pub(crate) use distil::{Distillations, Model as DistilModel, better_student};
pub use inside::StudioInsidePanel;
pub(crate) use inside::{Change, Senses, layer_change, where_moved};
pub use results::StudioResultsPanel;
pub use resume::ResumeBanner;
pub use task::{StudioTaskData, StudioTaskSwitch, Task};
use task_state::{TaskState, TaskStates};
pub use train::StudioTrainPanel;
use crate::widgets::now_ms;

/// The built-in example dataset, written for this project.
pub const EXAMPLE_CSV: &[u8] = crate::examples::SENTIMENT_CSV;

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
    /// The training worker.
    pub client: WorkerClient,
    /// Work saved in this browser.
    pub saved: SavedWork,
    /// Each task's own state (its files, its columns), by type: [`Studio::own`].
    tasks: TaskStates,
    /// Class names for integer labels, from a dataset's README or `dataset_info.json`.
    pub class_names: class_names::ClassNamesState,
    /// A separate validation file of the tagging, question-answering or similarity mode.
    pub held_out: RwSignal<Option<held_out::HeldOut>>,
    /// Parse / mapping error to show.
    pub data_error: RwSignal<Option<String>>,
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
    /// A message from the worker outside training (import, export, predict, any failure).
    pub notice: RwSignal<Option<Result<String, String>>>,
    /// Fine-tune a randomly initialised encoder of the same shape (the "no pretraining" baseline).
    pub from_scratch: RwSignal<bool>,
    /// Every run of this session that ended, oldest first, to compare them.
    pub history: RwSignal<Vec<RunRecord>>,
    /// What the run in progress will be recorded as.
    starting: StoredValue<Option<RunRecord>>,
    /// Who waits for the run in progress to end ([`Studio::run_end`]).
    ending: StoredValue<Vec<oneshot::Sender<Result<Arc<RunSummary>, String>>>>,
    /// An interrupted run's checkpoint, offered for resuming.
    pub resume_offer: RwSignal<Option<Arc<CheckpointMeta>>>,
    /// The run's last checkpoint, in words (or why it failed).
    pub checkpoint_note: RwSignal<Option<Result<String, String>>>,
    /// The last run that saved a checkpoint (the checkpoint in the store is its).
    checkpointed: StoredValue<Option<u32>>,
    /// The saved training file last opened.
    dataset_id: RwSignal<Option<String>>,
    /// What is trained: the chosen task (its own state is in its field above).
    pub task: RwSignal<Task>,
    /// The page's backend choice, which may move a run to the backend faster at its batch shape.
    pub(crate) choice: StoredValue<Option<BackendChoice>>,
}

impl Task {
    /// The module that implements the task: the one place that lists them.
    pub(crate) fn panel(self) -> &'static dyn task::TaskPanel {
        match self {
            Task::Classify => &data::Classification,
            Task::MultiLabel => &multi_label::MultiLabelling,
            Task::Tag => &tagging::Tagging,
            Task::Answer => &answering::Answering,
            Task::Similar => &similarity::Similarity,
            Task::Choice => &choice::MultipleChoice,
        }
    }
}

/// A training configuration in words ("full fine-tuning · 3 epochs · lr 2e-5").
pub fn recipe(c: &FineTuneConfig) -> String {
    let recipe = match c.mode {
        TrainMode::HeadOnly => format!("{} · {} epochs", c.mode.label(), c.head_epochs),
        TrainMode::Full => format!("{} · {} epochs · lr {:e}", c.mode.label(), c.epochs, c.learning_rate),
        TrainMode::FreezeThenUnfreeze => format!("{} · {} + {} epochs", c.mode.label(), c.head_epochs, c.epochs),
    };
    match &c.distil {
        Some(d) => format!("{recipe} · distilled (T {}, soft labels {})", d.temperature, d.soft_weight),
        None => recipe,
    }
}

impl Studio {
    /// The studio's state, before anything saved is read back (`restore_saved`); it hears of
    /// every failure the worker reports.
    pub fn new(client: WorkerClient, saved: SavedWork) -> Self {
        let studio = Self {
            client,
            saved,
            tasks: TaskStates::new(),
            class_names: class_names::ClassNamesState::new(),
            held_out: RwSignal::new(None),
            data_error: RwSignal::new(None),
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
            from_scratch: RwSignal::new(false),
            history: RwSignal::new(Vec::new()),
            starting: StoredValue::new(None),
            ending: StoredValue::new(Vec::new()),
            resume_offer: RwSignal::new(None),
            checkpoint_note: RwSignal::new(None),
            checkpointed: StoredValue::new(None),
            dataset_id: RwSignal::new(None),
            task: RwSignal::new(Task::Classify),
            choice: StoredValue::new(None),
        };
        client.on_error(move |message| studio.notice.set(Some(Err(message))));
        studio.offer_checkpoint();
        studio
    }

    /// An update of run `run`. Those of an older run are ignored, but for the end of its save.
    fn on_run(self, run: u32, update: RunUpdate) {
        if let RunUpdate::Saved { id, result } = update {
            self.on_saved(id, result);
            return;
        }
        if run != self.run_id.get_value() {
            return;
        }
        match update {
            RunUpdate::Progress(Progress::FineTune(event)) => self.on_event(event.into()),
            RunUpdate::Progress(_) => {}
            RunUpdate::Paused(paused) => self.run.set(RunState::Running { paused }),
            RunUpdate::Finished { outcome: Outcome::FineTune(summary), saving } => {
                // Which run it is, where the runs table numbers it: after a second run, the
                // export and the predict box are this one's, not the better one's before.
                let mut from = "trained in this session".to_string();
                if let Some(record) = self.starting.get_value() {
                    // The worker is saving the run as `saving`, with this very record.
                    let record = RunRecord { saved_id: saving, ..record.finished(&summary) };
                    let number = self.history.with_untracked(Vec::len) + 1;
                    from = format!("run #{number} of the runs table ({}), the last to finish", record.recipe);
                    self.history.update(|h| h.push(record));
                }
                self.classifier.set(Some((summary.meta.clone(), from)));
                self.checkpoint_note.set(None);
                let summary = Arc::new(*summary);
                self.summary.set(Some(summary.clone()));
                self.live.update(|l| l.evaluating = None);
                self.run.set(RunState::Finished);
                self.ended(Ok(summary));
            }
            RunUpdate::Finished { .. } | RunUpdate::Saved { .. } => {}
            RunUpdate::Failed { message, gpu_lost: true } => self.fall_back_to_cpu(run, message),
            RunUpdate::Failed { message, .. } => {
                self.ended(Err(message.clone()));
                self.run.set(RunState::Failed(message));
                // A checkpoint of the failed run, if any, is offered for resuming (on the CPU, say).
                self.saved.refresh();
            }
            RunUpdate::Checkpointed { step, epoch } => {
                self.checkpointed.set_value(Some(run));
                self.checkpoint_note.set(Some(Ok(format!(
                    "Checkpoint saved in this browser at step {step} ({epoch} epoch{} of this stage done): a reload can resume from here.",
                    if epoch == 1 { "" } else { "s" }
                ))));
                self.saved.refresh_usage();
            }
            RunUpdate::CheckpointFailed(message) => {
                self.checkpoint_note.set(Some(Err(format!("No checkpoint: {message} Training goes on."))));
            }
        }
    }

    /// The end of the next run to end (the one in progress, or the next started): its summary,
    /// or why it failed. A run that loses its GPU and goes on on the CPU has not ended.
    pub fn run_end(self) -> oneshot::Receiver<Result<Arc<RunSummary>, String>> {
        let (tx, rx) = oneshot::channel();
        self.ending.update_value(|w| w.push(tx));
        rx
    }

    fn ended(self, result: Result<Arc<RunSummary>, String>) {
        for waiter in self.ending.try_update_value(std::mem::take).unwrap_or_default() {
            let _ = waiter.send(result.clone());
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

    /// The own state of the task whose state is an `S` (made on the first ask).
    pub(crate) fn own<S: TaskState>(self) -> S {
        self.tasks.get()
    }

    /// Starts a run of the chosen task on its data.
    pub fn start(self, state: AppState) -> Result<(), String> {
        self.task.get_untracked().panel().start(self, state)
    }

    /// Shows `task`; the recipe becomes its default unless the user changed the last one's (see
    /// [`follow_recipe_kind`](Self::follow_recipe_kind), which also follows the kind of
    /// similarity model and the pair column).
    pub fn switch_task(self, task: Task) {
        let before = untrack(|| self.recipe_kind());
        let after = untrack(|| recipe::RecipeKind::of(task, self));
        if self.config.with_untracked(|c| before.is_recipe(c)) {
            self.config.update(|c| *c = after.with_recipe(c));
        }
        self.task.set(task);
    }

    /// Starts a fine-tuning run of any task on the page's model: the request with `config`,
    /// `labels` and `max_len`, its data set by `data`, recorded in the runs table as `label`.
    /// Clears the last run's curves. Where the backend probe chose "train on", the run trains
    /// where a probe at its own batch shape says is faster (`BackendChoice::for_run`).
    pub(crate) fn launch(
        self,
        engine: &Rc<Engine>,
        label: String,
        config: FineTuneConfig,
        labels: Vec<String>,
        max_len: usize,
        data: impl FnOnce(&mut TrainRequest),
    ) -> Result<(), String> {
        self.client.send_base(engine, self.backend.get_untracked())?;
        self.steps.set(Vec::new());
        self.evals.set(Vec::new());
        self.live.set(Live { total_steps: self.expected_steps(), ..Live::default() });
        self.run.set(RunState::Running { paused: false });
        let from_scratch = self.from_scratch.get_untracked();
        let record = RunRecord::starting(engine.model_id.clone(), from_scratch, label);
        let (texts, full) = (config.batch_size, config.mode != TrainMode::HeadOnly);
        let mut request = TrainRequest {
            config,
            labels,
            data: RunData::default(),
            max_len,
            backend: self.backend.get_untracked(),
            restarts: self.restarts.get_untracked(),
            from_scratch,
            record: record.clone(),
            keep_layers: None,
            base_kept: match engine.source {
                ModelSource::Server => true,
                ModelSource::Disk => self.saved.items.with_untracked(|items| items.iter().any(|i| i.id == format!("model:{}", engine.model_id))),
                ModelSource::Page => false,
            },
        };
        data(&mut request);
        self.starting.set_value(Some(record));
        // A new run's first checkpoint replaces an older run's.
        self.resume_offer.set(None);
        self.checkpoint_note.set(None);
        let (engine, choice) = (engine.clone(), self.choice.get_value());
        spawn_local(async move {
            if let Some(backend) = match choice {
                Some(c) => c.for_run(texts, max_len, full).await,
                None => None,
            } {
                // The run may move to the other worker, which then needs the model too.
                if self.client.send_base(&engine, backend).is_ok() {
                    request.backend = backend;
                }
            }
            self.start_run(Work::FineTune(Box::new(request)));
        });
        Ok(())
    }

    /// Trains `config` from `engine` on the built-in sentiment examples (a quarter held out,
    /// split seed 13) as the studio's run recorded as `label`, and waits for its end; for the
    /// lessons and the lab, which compare recipes or models on the same data and seed whatever
    /// the studio is set to.
    pub(crate) async fn train_on_examples(self, engine: &Rc<Engine>, config: FineTuneConfig, label: String) -> Result<Arc<RunSummary>, String> {
        let dataset = builtin_sentiment()?;
        let split = dataset.split(0.25, 13).map_err(|e| e.to_string())?;
        let pick = |idx: &[usize]| idx.iter().map(|&i| dataset.examples[i].clone()).collect::<Vec<_>>();
        let (train, valid) = (pick(&split.train), pick(&split.valid));
        let end = self.run_end();
        let model = engine.model_id.clone();
        self.launch(engine, label.clone(), config, dataset.labels.clone(), 64, |r| {
            r.data = RunData::Texts(TextRequest { train, valid });
            r.from_scratch = false;
            r.restarts = 1;
            r.record = RunRecord::starting(model, false, label.clone());
        })?;
        let summary = end.await.map_err(|_| "the run was lost".to_string())??;
        if summary.cancelled {
            return Err(format!("The run “{label}” was cancelled in the studio."));
        }
        Ok(summary)
    }

    /// Starts `work` in the worker as the studio's run.
    pub(super) fn start_run(self, work: Work) {
        let run = self.client.start_run(work, move |run, update| self.on_run(run, update));
        self.run_id.set_value(run);
    }

    /// Optimizer steps one restart of the configured run takes on the prepared data.
    pub fn expected_steps(self) -> usize {
        let c = self.config.get_untracked();
        let n = self.task.get_untracked().panel().epoch_examples(self);
        let epochs = match c.mode {
            TrainMode::HeadOnly => c.head_epochs,
            TrainMode::Full => c.epochs,
            TrainMode::FreezeThenUnfreeze => c.head_epochs + c.epochs,
        };
        n.div_ceil(c.batch_size.max(1)) * epochs
    }

    /// Exports the current classifier as a zip download.
    pub fn export(self, name: String) {
        spawn_local(async move {
            match self.client.export(name).await {
                Ok((file_name, zip)) => {
                    download(&file_name, &zip, "application/zip");
                    self.notice.set(Some(Ok(format!("Exported {file_name} ({:.1} MB).", zip.len() as f64 / 1_048_576.0))));
                }
                Err(e) => self.notice.set(Some(Err(e))),
            }
        });
    }

    /// Imports a classifier from files (or one zip).
    pub fn import(self, files: Vec<(String, Vec<u8>)>) {
        spawn_local(async move {
            // A refusal is shown as the worker's notice already.
            if let Ok((meta, description)) = self.client.import(files).await {
                let task = Task::of(meta.spec.level);
                let what = task.panel().model_noun(meta.spec.level);
                task.panel().took(self, &meta);
                self.notice.set(Some(Ok(format!("Imported {what}: {description}."))));
                self.task.set(task);
                self.classifier.set(Some((meta, "imported".into())));
            }
        });
    }

    /// Makes the head of `model`, a model just opened or chosen as the page's, the current
    /// classifier (`files`: its checkpoint, where it carries a task head; `Ok(None)` where it has
    /// none; `Err` why its head's files could not be written), or none where it has none or its
    /// head cannot be read: whatever the studio had before belongs to another model
    /// and is put away first, in the worker too, and the notice says what became of it.
    pub fn follow_model(self, model: String, files: Result<Option<CheckpointFiles>, String>) {
        let before = self.classifier.get_untracked().map(|(_, from)| from);
        self.classifier.set(None);
        spawn_local(async move {
            // A worker that holds none is not started for nothing.
            if before.is_some() {
                let _ = self.client.forget_classifier().await;
            }
            let files = match files {
                Ok(files) => files,
                Err(e) => {
                    self.notice.set(Some(Err(format!("{model}'s head could not be read, so the studio has no classifier now: {e}"))));
                    return;
                }
            };
            let Some(files) = files else {
                if let Some(before) = before {
                    self.notice.set(Some(Ok(format!(
                        "{model} has no task head, so the studio has no classifier now ({before} belonged to the model before; a finished run opens again from “Saved in this browser”)."
                    ))));
                }
                return;
            };
            let mut list = vec![("config.json".to_string(), files.config_json), ("model.safetensors".to_string(), files.weights)];
            list.extend(files.tokenizer_json.map(|t| ("tokenizer.json".to_string(), t)));
            list.extend(files.vocab_txt.map(|v| ("vocab.txt".to_string(), v)));
            match self.client.import(list).await {
                Ok((meta, _)) => {
                    let task = Task::of(meta.spec.level);
                    task.panel().took(self, &meta);
                    self.notice.set(Some(Ok(task.panel().opened(&model, &meta))));
                    self.task.set(task);
                    self.classifier.set(Some((meta, format!("the head of {model}"))));
                }
                Err(e) => {
                    // A failed import leaves the worker's classifier as it was: put it away too.
                    let _ = self.client.forget_classifier().await;
                    self.notice.set(Some(Err(format!("{model}'s head could not be read, so the studio has no classifier now: {e}"))));
                }
            }
        });
    }
}

/// The built-in sentiment examples (`examples/sentiment.csv`, built into the page).
pub fn builtin_sentiment() -> Result<Arc<Dataset>, String> {
    let table = parse_table(EXAMPLE_CSV, Some("sentiment.csv")).map_err(|e| e.to_string())?;
    let dataset = to_examples(&table, &guess_columns(&table)).map_err(|e| e.to_string())?;
    Ok(Arc::new(dataset))
}
