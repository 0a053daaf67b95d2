//! Training checkpoints: a [`FineTuner`] between two optimizer steps, as files, and back.
//!
//! A [`Snapshot`] holds the weights in training, the best weights so far, AdamW's moments, the
//! cached frozen features of a head-only stage, and the counters and the shuffling generator's
//! state. The device is re-seeded from the step number before every step, so dropout draws the
//! same masks too: a run resumed from a snapshot takes exactly the steps the uninterrupted run
//! would have (on the same backend).
//!
//! Weights and AdamW's moments are read back with asynchronous reads, a few megabytes at a time
//! ([`FineTuner::write_snapshot`], [`crate::train::stream`]): safe on WebGPU in the browser, and the
//! browser writes each piece to its storage as it comes.
//! A caller may still leave the moments out (they double a full fine-tuning checkpoint); the
//! resumed run then starts them afresh ([`TrainState::with_optimizer`] says which).

use std::collections::HashMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::prelude::*;
use safetensors::tensor::Dtype;
use serde::{Deserialize, Serialize};

use crate::train::stream::{Entry, FileSink, Files, write_f32, write_safetensors};
use super::{Best, FineTuner, Phase, TaskScores};
use crate::train::adamw;
use crate::error::{Error, Result};
use crate::nn::read_f32;
use crate::tasks::metrics::Metrics;
use crate::tasks::qa::AnswerMetrics;
use crate::tasks::tagging::EntityMetrics;
use crate::tasks::similarity::SimilarityMetrics;
use crate::rng::Rng;

/// Where a run stands, as plain values: the JSON part of a [`Snapshot`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrainState {
    /// The run's seed (a snapshot resumes only the run it came from).
    pub seed: u64,
    /// Training and validation examples, to check the snapshot fits the data it resumes on.
    pub examples: (usize, usize),
    /// Current stage (`Head` or `Full`).
    pub phase: Phase,
    /// Epochs done in this stage.
    pub epoch: usize,
    /// This epoch's example order, and how far into it the run is.
    pub order: Vec<usize>,
    /// Position in `order`.
    pub cursor: usize,
    /// Steps done in this stage, and the stage's length.
    pub phase_step: usize,
    /// Steps of this stage.
    pub phase_steps: usize,
    /// Steps done in the whole run.
    pub step: usize,
    /// Steps of the whole run.
    pub total_steps: usize,
    /// Training loss sum, correct and seen since the last evaluation.
    pub since_eval: (f64, usize, usize),
    /// The shuffling generator.
    pub rng: u64,
    /// The best evaluation so far: its metrics and per-example probabilities.
    pub best: Option<(Metrics, Vec<Vec<f32>>)>,
    /// The task's own scores and predicted texts at its best evaluation.
    #[serde(flatten)]
    pub best_task: BestTask,
    /// Whether AdamW's moments are in the snapshot.
    pub with_optimizer: bool,
    /// The best weights are the weights in training (no optimizer step since that evaluation,
    /// as at the end of an epoch that improved): the snapshot leaves them out, a whole copy of
    /// the model's weights less. Absent from older snapshots.
    #[serde(default)]
    pub best_is_model: bool,
}

/// The task's own scores at a run's best evaluation, and each validation item's predicted text
/// then (question answering's answers; empty for the other tasks). Saved as `best_scores` and
/// `best_predictions`; an earlier build's `best_entities`, `best_answers` and `best_similarity`
/// (one optional field per task) read as the same.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "SavedBestTask")]
pub struct BestTask {
    pub best_scores: TaskScores,
    pub best_predictions: Vec<String>,
}

#[derive(Deserialize)]
struct SavedBestTask {
    #[serde(default)]
    best_scores: Option<TaskScores>,
    #[serde(default)]
    best_predictions: Vec<String>,
    #[serde(default)]
    best_entities: Option<EntityMetrics>,
    #[serde(default)]
    best_answers: Option<(AnswerMetrics, Vec<String>)>,
    #[serde(default)]
    best_similarity: Option<SimilarityMetrics>,
}

impl From<SavedBestTask> for BestTask {
    fn from(s: SavedBestTask) -> Self {
        match s.best_scores {
            Some(best_scores) => BestTask { best_scores, best_predictions: s.best_predictions },
            None => {
                let (answers, best_predictions) = s.best_answers.map_or((None, Vec::new()), |(m, p)| (Some(m), p));
                BestTask { best_scores: TaskScores::from_fields(s.best_entities, answers, s.best_similarity), best_predictions }
            }
        }
    }
}

/// A run between two optimizer steps. [`Snapshot::into_files`] names its parts.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Counters and metrics.
    pub state: TrainState,
    /// The weights in training (safetensors, parameters in visiting order with their ids).
    pub model: Vec<u8>,
    /// The best weights so far, in the same layout.
    pub best_model: Option<Vec<u8>>,
    /// AdamW's state (burn's optimizer record).
    pub optimizer: Option<Vec<u8>>,
    /// Cached frozen features, training rows then validation rows, f32 little-endian.
    pub features: Option<Vec<u8>>,
}

const STATE: &str = "state.json";
const MODEL: &str = "model.safetensors";
const BEST: &str = "best.safetensors";
const OPTIMIZER: &str = "optimizer.safetensors";
const FEATURES: &str = "features.f32";

impl Snapshot {
    /// The snapshot as named files (what the browser stores).
    pub fn into_files(self) -> Vec<(String, Vec<u8>)> {
        let state = serde_json::to_vec(&self.state).unwrap_or_default();
        let mut files = vec![(STATE.to_string(), state), (MODEL.to_string(), self.model)];
        for (name, part) in [(BEST, self.best_model), (OPTIMIZER, self.optimizer), (FEATURES, self.features)] {
            if let Some(bytes) = part {
                files.push((name.to_string(), bytes));
            }
        }
        files
    }

    /// Reads files written by [`into_files`](Self::into_files).
    pub fn from_files(files: Vec<(String, Vec<u8>)>) -> Result<Self> {
        let mut files: HashMap<String, Vec<u8>> = files.into_iter().collect();
        let broken = |what: &str| Error::Training(format!("the checkpoint is incomplete: {what} is missing"));
        let state: TrainState = serde_json::from_slice(&files.remove(STATE).ok_or_else(|| broken(STATE))?)
            .map_err(|e| Error::Training(format!("the checkpoint's state is unreadable: {e}")))?;
        let model = files.remove(MODEL).ok_or_else(|| broken(MODEL))?;
        Ok(Self {
            best_model: files.remove(BEST),
            optimizer: files.remove(OPTIMIZER),
            features: files.remove(FEATURES),
            model,
            state,
        })
    }
}

/// Every float parameter of a module, flattened, with its id and shape, in visiting order.
#[derive(Default)]
struct Collect {
    params: Vec<(ParamId, Vec<usize>, Tensor<1>)>,
}

impl ModuleVisitor for Collect {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let value = param.val().inner();
        let shape = value.dims().to_vec();
        let numel: usize = shape.iter().product();
        self.params.push((param.id, shape, value.reshape([numel])));
    }
}

/// Writes a module's weights into `sink` as the safetensors file `name` (`p00000`, `p00001`, …
/// in visiting order), a piece at a time with asynchronous reads. Each parameter's id goes into
/// the metadata, so a restored module keeps the ids the optimizer's state is keyed by.
async fn write_module<M: Module>(sink: &mut impl FileSink, name: &str, module: &M) -> Result<()> {
    let mut collect = Collect::default();
    module.visit(&mut collect);
    if collect.params.is_empty() {
        return Err(Error::Training("a module without parameters has nothing to save".into()));
    }
    let mut metadata = HashMap::new();
    let mut entries = Vec::with_capacity(collect.params.len());
    for (i, (id, shape, values)) in collect.params.into_iter().enumerate() {
        let name = format!("p{i:05}");
        metadata.insert(name.clone(), id.val().to_string());
        entries.push(Entry { name, shape, values });
    }
    write_safetensors(sink, name, entries, metadata).await
}

/// [`write_module`] into memory: the file's bytes.
async fn module_bytes<M: Module>(module: &M) -> Result<Vec<u8>> {
    let mut files = Files::new();
    write_module(&mut files, MODEL, module).await?;
    Ok(files.pop().map(|(_, bytes)| bytes).unwrap_or_default())
}

/// Puts saved weights back into a module of the same shape, parameter by parameter in visiting
/// order, with their saved ids.
struct Restore {
    device: Device,
    params: Vec<(u64, Vec<usize>, Vec<f32>)>,
    next: usize,
    error: Option<String>,
}

impl ModuleMapper for Restore {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let index = self.next;
        self.next += 1;
        let current = param.val();
        let dims = current.dims().to_vec();
        match self.params.get_mut(index) {
            Some((id, shape, values)) if *shape == dims => {
                let tensor = Tensor::<D>::from_data(TensorData::new(std::mem::take(values), dims), &self.device)
                    .set_require_grad(current.is_require_grad());
                Param::initialized(ParamId::from(*id), tensor)
            }
            found => {
                if self.error.is_none() {
                    self.error = Some(match found {
                        Some((_, shape, _)) => format!("parameter {index} has shape {shape:?} in the checkpoint but {dims:?} in the model"),
                        None => format!("the checkpoint has {} parameters, the model more", self.params.len()),
                    });
                }
                param
            }
        }
    }
}

fn restore_module<M: Module>(module: M, bytes: &[u8], device: &Device) -> Result<M> {
    let bad = |e: String| Error::Training(format!("the checkpoint's weights do not fit this model: {e}"));
    let file = safetensors::SafeTensors::deserialize(bytes).map_err(|e| bad(e.to_string()))?;
    let (_, meta) = safetensors::SafeTensors::read_metadata(bytes).map_err(|e| bad(e.to_string()))?;
    let ids = meta.metadata().clone().unwrap_or_default();
    let mut names: Vec<String> = file.names().into_iter().map(str::to_string).collect();
    names.sort();
    let mut params = Vec::with_capacity(names.len());
    for name in &names {
        let view = file.tensor(name).map_err(|e| bad(e.to_string()))?;
        if view.dtype() != Dtype::F32 {
            return Err(bad(format!("{name} is not f32")));
        }
        let id = ids.get(name).and_then(|s| s.parse::<u64>().ok()).ok_or_else(|| bad(format!("{name} has no parameter id")))?;
        let values = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        params.push((id, view.shape().to_vec(), values));
    }
    let count = params.len();
    let mut restore = Restore { device: device.clone(), params, next: 0, error: None };
    let module = module.map(&mut restore);
    match restore.error {
        Some(e) => Err(bad(e)),
        None if restore.next != count => Err(bad(format!("the checkpoint has {count} parameters, the model {}", restore.next))),
        None => Ok(module),
    }
}

/// `module` with every parameter copied to `device`, read back with one asynchronous read (so
/// it works from WebGPU in the browser, where a synchronous read panics). Parameter ids are kept.
pub async fn copy_to<M: Module>(module: M, device: &Device) -> Result<M> {
    let bytes = module_bytes(&module).await?;
    restore_module(module, &bytes, device)
}

impl FineTuner {
    /// Whether the run is between two optimizer steps (not caching features, not evaluating),
    /// or over, where [`snapshot`](Self::snapshot) can be taken.
    pub fn can_snapshot(&self) -> bool {
        matches!(self.phase, Phase::Head | Phase::Full | Phase::Done) && self.eval.is_none()
    }

    /// Epochs done in the current stage.
    pub fn epochs_done(&self) -> usize {
        self.epoch
    }

    /// The run as it stands. `with_optimizer` adds AdamW's moments (two values per trained
    /// weight).
    pub async fn snapshot(&self, with_optimizer: bool) -> Result<Snapshot> {
        let mut files = Files::new();
        self.write_snapshot(with_optimizer, &mut files).await?;
        Snapshot::from_files(files)
    }

    /// [`snapshot`](Self::snapshot) into `sink`, one file after another, named and ordered as
    /// [`Snapshot::into_files`] names them. Each file is written a piece at a time, so a sink
    /// that stores what it gets (the browser's storage) lets the run hold a few megabytes of
    /// it at a time, not the whole snapshot (a full fine-tuning checkpoint with its best weights
    /// is four times the model's weights).
    pub async fn write_snapshot(&self, with_optimizer: bool, sink: &mut impl FileSink) -> Result<()> {
        if !self.can_snapshot() {
            return Err(Error::Training("a checkpoint is taken between two optimizer steps".into()));
        }
        let optimizer = self.optim.as_ref().filter(|_| with_optimizer);
        let best_is_model = self.best.as_ref().is_some_and(|b| b.step == Some(self.step));
        let state = TrainState {
            seed: self.config.seed,
            examples: (self.train.len(), self.valid.len()),
            phase: self.phase,
            epoch: self.epoch,
            order: self.order.clone(),
            cursor: self.cursor,
            phase_step: self.phase_step,
            phase_steps: self.phase_steps,
            step: self.step,
            total_steps: self.total_steps,
            since_eval: self.since_eval,
            rng: self.rng.state(),
            best: self.best.as_ref().map(|b| (b.metrics.clone(), b.probs.clone())),
            best_task: self.best.as_ref().map(|b| BestTask { best_scores: b.scores.clone(), best_predictions: b.predictions.clone() }).unwrap_or_default(),
            with_optimizer: optimizer.is_some(),
            best_is_model,
        };
        sink.begin(STATE).await?;
        sink.write(&serde_json::to_vec(&state).map_err(|e| Error::Training(format!("could not save the run's state: {e}")))?)?;
        write_module(sink, MODEL, &self.model).await?;
        if let Some(b) = self.best.as_ref().filter(|_| !best_is_model) {
            write_module(sink, BEST, &b.model).await?;
        }
        if let Some(o) = optimizer {
            o.write_state(sink, OPTIMIZER).await?;
        }
        if let (Some(t), Some(v)) = (&self.train_features, &self.valid_features) {
            sink.begin(FEATURES).await?;
            write_f32(sink, &read_f32(t.clone().inner()).await?)?;
            write_f32(sink, &read_f32(v.clone().inner()).await?)?;
        }
        Ok(())
    }

    /// Continues the run `snapshot` was taken of. `self` is a fresh [`FineTuner::new`] with the
    /// same examples and configuration (its weights are replaced).
    pub fn restore(mut self, snapshot: Snapshot) -> Result<Self> {
        let s = snapshot.state;
        let mismatch = |what: &str| Error::Training(format!("the checkpoint belongs to another run ({what} differs)"));
        if s.seed != self.config.seed {
            return Err(mismatch("the seed"));
        }
        if s.examples != (self.train.len(), self.valid.len()) {
            return Err(mismatch("the number of examples"));
        }
        if !matches!(s.phase, Phase::Head | Phase::Full | Phase::Done) || s.order.len() != self.train.len() || s.cursor > s.order.len() {
            return Err(Error::Training("the checkpoint's state is inconsistent".into()));
        }
        let device = self.device.clone();
        let template = self.model.clone();
        self.model = restore_module(template.clone(), &snapshot.model, &device)?;
        self.best = match (s.best, snapshot.best_model) {
            (Some((metrics, probs)), _) if s.best_is_model => {
                Some(Best { model: self.model.clone(), metrics, scores: s.best_task.best_scores, predictions: s.best_task.best_predictions, probs, step: Some(s.step) })
            }
            (Some((metrics, probs)), Some(bytes)) => {
                let BestTask { best_scores: scores, best_predictions: predictions } = s.best_task;
                Some(Best { model: restore_module(template, &bytes, &device)?, metrics, scores, predictions, probs, step: None })
            }
            (None, _) => None,
            (Some(_), None) => return Err(Error::Training("the checkpoint is incomplete: the best weights are missing".into())),
        };
        let mut optim = adamw(self.config.weight_decay);
        if let Some(bytes) = snapshot.optimizer {
            optim.load_state(&bytes, &device.clone().inner())?;
        }
        self.optim = Some(optim);
        if s.phase == Phase::Head {
            let bytes = snapshot.features.ok_or_else(|| Error::Training("the checkpoint is incomplete: the cached features are missing".into()))?;
            let values: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            let (train_units, valid_units) = self.row_counts();
            let rows = train_units + valid_units;
            if values.len() % rows != 0 {
                return Err(Error::Training("the checkpoint's cached features do not fit the data".into()));
            }
            let width = values.len() / rows;
            let split = train_units * width;
            let make = |v: Vec<f32>, n: usize| Tensor::<2>::from_data(TensorData::new(v, [n, width]), &device);
            self.train_features = Some(make(values[..split].to_vec(), train_units));
            self.valid_features = Some(make(values[split..].to_vec(), valid_units));
        }
        self.feature_rows.clear();
        self.feature_done = self.train.len() + self.valid.len();
        self.phase = s.phase;
        self.epoch = s.epoch;
        self.order = s.order;
        self.cursor = s.cursor;
        self.phase_step = s.phase_step;
        self.phase_steps = s.phase_steps;
        self.step = s.step;
        self.total_steps = s.total_steps;
        self.since_eval = s.since_eval;
        self.rng = Rng::new(s.rng);
        self.eval = None;
        self.announce = None;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{device_rng, tiny_config, toy};
    use super::*;
    use crate::tasks::classification::FeatureSpec;
    use crate::bert::model::BertModelConfig;
    use crate::bert::pooling::Pooling;
    use crate::tasks::classification::BertClassifier;
    use crate::train::{Event, FineTuneConfig, TrainMode};

    // That a resumed run takes exactly the uninterrupted run's steps is tested in
    // tests/resume.rs, a process of its own: burn's device generator is shared by every thread.

    /// A fresh full fine-tuning run of a tiny random BERT on toy data (40 training examples,
    /// batches of 8, 16 validation examples).
    fn toy_tuner(epochs: usize, seed: u64) -> FineTuner {
        let device = Device::flex().autodiff();
        let config = tiny_config(64);
        let cfg = FineTuneConfig::new()
            .with_mode(TrainMode::Full)
            .with_features(FeatureSpec { pooling: Pooling::Cls, layers: Default::default(), ..Default::default() })
            .with_batch_size(8)
            .with_epochs(epochs)
            .with_seed(seed);
        let bert = BertModelConfig::new(config).init(&device);
        FineTuner::new(bert, 0, 16, vec!["neg".into(), "pos".into()], toy(40, 1), toy(16, 2), cfg, &device).unwrap()
    }

    #[test]
    fn best_weights_equal_to_the_current_ones_are_left_out_and_restored() {
        let _rng = device_rng();
        let tuner = || toy_tuner(2, 9);
        // The weights' values (the files' JSON headers order their metadata at random).
        let values = |m: &BertClassifier| {
            let mut collect = Collect::default();
            m.visit(&mut collect);
            pollster::block_on(read_f32(Tensor::cat(collect.params.into_iter().map(|(_, _, t)| t).collect(), 0))).unwrap()
        };
        let best_bytes = |t: &FineTuner| values(&t.best.as_ref().expect("a best model").model);
        let mut first = tuner();
        // The first epoch's evaluation is the best so far: its weights are the current ones.
        while !matches!(pollster::block_on(first.advance()).unwrap(), Event::Evaluated(_)) {}
        let snapshot = pollster::block_on(first.snapshot(true)).unwrap();
        assert!(snapshot.state.best_is_model);
        assert!(snapshot.best_model.is_none());
        assert!(best_bytes(&tuner().restore(snapshot).unwrap()) == best_bytes(&first));
        // One optimizer step later they differ, and the snapshot carries the best ones.
        while !matches!(pollster::block_on(first.advance()).unwrap(), Event::Step(_)) {}
        let snapshot = pollster::block_on(first.snapshot(true)).unwrap();
        assert!(!snapshot.state.best_is_model);
        assert!(snapshot.best_model.is_some());
        let restored = tuner().restore(snapshot).unwrap();
        assert!(best_bytes(&restored) == best_bytes(&first));
        assert!(best_bytes(&restored) != values(&restored.model));
    }

    #[test]
    fn a_snapshot_between_the_stages_of_freeze_then_unfreeze_resumes_at_the_second_stages_start() {
        let _rng = device_rng();
        // 40 training examples in batches of 8: 5 steps an epoch, one epoch a stage.
        let tuner = || {
            let device = Device::flex().autodiff();
            let bert = BertModelConfig::new(tiny_config(64)).init(&device);
            let cfg = FineTuneConfig::new().with_mode(TrainMode::FreezeThenUnfreeze).with_batch_size(8).with_head_epochs(1).with_epochs(1).with_seed(7);
            FineTuner::new(bert, 0, 16, vec!["neg".into(), "pos".into()], toy(40, 1), toy(16, 2), cfg, &device).unwrap()
        };
        let mut first = tuner();
        // Up to the head stage's evaluation: the second stage has started (its features freed),
        // and the next call will announce it.
        while !matches!(pollster::block_on(first.advance()).unwrap(), Event::Evaluated(_)) {}
        assert!(first.can_snapshot());
        let p = first.progress();
        assert_eq!((p.phase, p.step, p.total_steps, first.epochs_done()), (Phase::Full, 5, 10, 0));
        assert!(first.features().is_none());
        let snapshot = pollster::block_on(first.snapshot(true)).unwrap();
        let s = &snapshot.state;
        assert_eq!((s.phase, s.epoch, s.cursor, s.phase_step, s.phase_steps, s.step), (Phase::Full, 0, 0, 0, 5, 5));
        assert!(snapshot.features.is_none());
        assert!(matches!(pollster::block_on(first.advance()).unwrap(), Event::PhaseStarted { phase: Phase::Full, steps: 5 }));

        // The resumed run is in the second stage already: its first call is the stage's first step.
        let mut resumed = tuner().restore(snapshot).unwrap();
        let p = resumed.progress();
        assert_eq!((p.phase, p.step, p.total_steps, resumed.epochs_done()), (Phase::Full, 5, 10, 0));
        match pollster::block_on(resumed.advance()).unwrap() {
            Event::Step(point) => assert_eq!((point.phase, point.step), (Phase::Full, 6)),
            other => panic!("expected the second stage's first step, got {other:?}"),
        }
    }

    #[test]
    fn a_snapshot_of_another_run_is_refused() {
        let _rng = device_rng();
        let tuner = || toy_tuner(1, 5);
        let mut first = tuner();
        while !matches!(pollster::block_on(first.advance()).unwrap(), Event::Step(_)) {}
        let snapshot = pollster::block_on(first.snapshot(true)).unwrap();
        assert!(tuner().restore(snapshot.clone()).is_ok());

        let mut other = snapshot.clone();
        other.state.seed += 1;
        assert!(tuner().restore(other).unwrap_err().to_string().contains("another run"));

        let mut truncated = snapshot.clone();
        truncated.model.truncate(truncated.model.len() / 2);
        assert!(tuner().restore(truncated).unwrap_err().to_string().contains("do not fit"));

        let mut files = snapshot.into_files();
        files.retain(|(n, _)| n != MODEL);
        assert!(Snapshot::from_files(files).unwrap_err().to_string().contains("incomplete"));
    }
}
