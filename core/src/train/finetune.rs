//! Fine-tuning a classifier, as the BERT paper does it: AdamW with decoupled weight decay
//! (none on biases and LayerNorm), linear warmup then linear decay, gradients clipped to a
//! global norm, dropout 0.1. Three modes:
//!
//! - **head-only**: the encoder is frozen, so its features are computed once, cached, and the
//!   head trains on them in seconds;
//! - **full**: every weight trains;
//! - **freeze-then-unfreeze**: head-only first (from cached features), then everything.
//!
//! The loop is a state machine: [`FineTuner::advance`] does one small unit of work (a batch
//! of features, one optimizer step, one evaluation batch) and says what it did. The browser
//! yields to its event loop between calls, which is what makes progress bars, pause and cancel
//! possible on a single thread; the command line simply loops.

use burn::module::Module;
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::TensorData;

use crate::tasks::classification::{BertClassifier, ClassificationHead, ClassifierMeta, HeadTransform, features, span_rows, token_features};
use crate::nn::dropout;
use crate::error::Error;
use crate::nn::read_f32;
use crate::tokenizer::shortest_first;
use crate::tasks::metrics::Metrics;
use crate::bert::model::{BertInput, BertModel};
use crate::rng::Rng;
use crate::tokenizer::Batch;

use super::adamw::{AdamW, adamw};
use crate::cpu::join;
use super::grads::{AddGrads, FreshLeaves};
use super::schedule::{group_by_length, steps_per_epoch};
use super::step::{Schedule, clip, read_back};

mod config;
mod eval;
mod report;
mod snapshot;
pub mod task;
mod units;
pub use config::{FineTuneConfig, Phase, TrainMode, config_with_defaults};
pub use report::{EvalReport, Event, Progress, StepPoint, TaskScores};
pub use snapshot::{BestTask, Snapshot, TrainState, copy_to};
pub use task::{encode_examples, encode_label_sets, encode_pairs, encode_questions, encode_tagged};
pub use units::{LabeledText, SpanTarget};
pub use task::start_encoder;
use task::{batch_inputs, batch_units};

struct EvalState {
    next: usize,
    logits: Vec<f32>,
    end_of_epoch: bool,
}

/// A fine-tuning run. Build with [`FineTuner::new`], then call [`advance`](Self::advance)
/// until it returns [`Event::Finished`].
pub struct FineTuner {
    config: FineTuneConfig,
    labels: Vec<String>,
    max_len: usize,
    pad_id: u32,
    device: Device,
    model: BertClassifier,
    train: Vec<LabeledText>,
    valid: Vec<LabeledText>,
    /// Where each example's rows start among all rows (training then validation examples),
    /// and the total at the end: see [`units`] for rows and units.
    row_start: Vec<usize>,
    phase: Phase,
    feature_rows: Vec<f32>,
    feature_done: usize,
    train_features: Option<Tensor<2>>,
    valid_features: Option<Tensor<2>>,
    optim: Option<AdamW>,
    order: Vec<usize>,
    /// Training then validation examples (indices into both, validation after training),
    /// shortest first: the order the frozen features are computed in.
    feature_order: Vec<usize>,
    /// Validation examples, shortest first: the order of evaluation batches.
    valid_order: Vec<usize>,
    cursor: usize,
    epoch: usize,
    phase_step: usize,
    phase_steps: usize,
    step: usize,
    total_steps: usize,
    since_eval: (f64, usize, usize),
    eval: Option<EvalState>,
    /// A stage's start, for the next call of [`advance`](Self::advance) to report before any
    /// work, so every stage is announced by `advance`: freeze-then-unfreeze's second stage starts
    /// in the call that ends the head stage's last evaluation (that call reports the
    /// evaluation), a full fine-tuning run's stage in [`new`](Self::new), a head stage on reused
    /// features in [`reuse_features`](Self::reuse_features). Not in a snapshot: a resumed run
    /// is already in its stage (the host names it from [`progress`](Self::progress)).
    announce: Option<Event>,
    best: Option<Best>,
    rng: Rng,
}

/// The weights with the best validation score, and how they did.
struct Best {
    model: BertClassifier,
    metrics: Metrics,
    /// The task's own scores.
    scores: TaskScores,
    /// Each validation item's predicted text (question answering's answer, "": none; empty
    /// for the other tasks).
    predictions: Vec<String>,
    /// Per validation text (a tagger: per word), in order.
    probs: Vec<Vec<f32>>,
    /// The step its weights are from, where known: while no optimizer step has followed, they
    /// are the weights in training (a snapshot then leaves them out).
    step: Option<usize>,
}

impl std::fmt::Debug for FineTuner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FineTuner").field("phase", &self.phase).field("step", &self.step).finish()
    }
}

/// Forward and backward pass of one batch on the CPU, as two halves that run side by side where
/// this build has threads (natively, and in the browser's threaded build), one after the other
/// where it has one. Either way the arithmetic is the same, so a run gives the same losses on one
/// thread or several.
///
/// Threads already share each matrix product, but the rest of a step (element-wise kernels,
/// dropout, allocation) runs on the thread that asks for it; two halves spread that too. Each
/// half runs on its own copy of the model's parameter handles (the same values, new autodiff
/// leaves, so the two graphs stay apart), draws its dropout masks from its own seed
/// ([`dropout::with_seeded_masks`]), and weighs its mean loss by its share of the batch, so the
/// summed gradients are those of the whole batch's mean loss.
///
/// Returns the batch's mean loss `[1]`, its units' logits `[units, num_labels]` (both without
/// autodiff) and the gradients.
fn halves_step(
    model: &BertClassifier,
    rows: &[&LabeledText],
    pad_id: u32,
    device: &Device,
    seed: u64,
    config: &FineTuneConfig,
) -> crate::Result<(Tensor<1>, Tensor<2>, GradientsParams)> {
    let task = task::of(model.spec.level);
    let half = rows.len().div_ceil(2);
    let n: usize = rows.iter().map(|t| task.units(t)).sum();
    let part = |replica: BertClassifier, rows: &[&LabeledText], which: u64| {
        dropout::with_seeded_masks(seed ^ which.wrapping_mul(0xD1B5_4A32_D192_ED03), || -> crate::Result<_> {
            let batch = Batch::from_encoded(&batch_inputs(rows, task), pad_id);
            let (positions, labels) = batch_units(rows, task, batch.seq_len, device);
            let logits = replica.forward_units(BertInput::from_batch(&batch, device), positions)?;
            let scores: Vec<f32> = rows.iter().flat_map(|t| task.unit_scores(t)).collect();
            let loss = task.loss(config, logits.clone(), &labels, &scores, device).mul_scalar(labels.len() as f64 / n as f64);
            let grads = GradientsParams::from_grads(loss.backward(), &replica);
            Ok((loss.inner(), logits.inner(), grads))
        })
    };
    let (a, b) = (model.clone().map(&mut FreshLeaves), model.clone().map(&mut FreshLeaves));
    let (first, second) = join(|| part(a, &rows[..half], 1), || part(b, &rows[half..], 2));
    let ((loss_a, logits_a, mut grads), (loss_b, logits_b, from)) = (first?, second?);
    model.visit(&mut AddGrads { into: &mut grads, from });
    // A question-answering model's rows are as wide as each half's windows: pad to the wider.
    let width = logits_a.dims()[1].max(logits_b.dims()[1]);
    let pad = |x: Tensor<2>| match width - x.dims()[1] {
        0 => x,
        more => {
            let filler = Tensor::<2>::full([x.dims()[0], more], -1e4, &x.device());
            Tensor::cat(vec![x, filler], 1)
        }
    };
    Ok((loss_a + loss_b, Tensor::cat(vec![pad(logits_a), pad(logits_b)], 0), grads))
}




impl FineTuner {
    /// Prepares a run on `device` (an autodiff device: `Device::flex().autodiff()`, say).
    /// `bert` must live on `device`; `train` and `valid` come from [`encode_examples`].
    pub fn new(
        bert: BertModel,
        pad_id: u32,
        max_len: usize,
        labels: Vec<String>,
        train: Vec<LabeledText>,
        valid: Vec<LabeledText>,
        config: FineTuneConfig,
        device: &Device,
    ) -> crate::Result<Self> {
        let task = task::of(config.features.level);
        if train.is_empty() || valid.is_empty() {
            return Err(Error::Training("both the training and the validation set need examples".into()));
        }
        task.check(&labels, &train.iter().chain(&valid).collect::<Vec<_>>())?;
        if let Some(d) = &config.distil {
            d.check()?;
            if !task.distils() {
                return Err(Error::Training("a student learns from its teacher's probabilities in sentence classification only".into()));
            }
            if train.iter().any(|t| t.teacher.len() != labels.len()) {
                return Err(Error::Training("a student's every training text needs its teacher's probability of each label".into()));
            }
        }
        let layers = bert.num_layers();
        config.features.check(layers, bert.pooler.is_some())?;
        let head_epochs = if config.mode == TrainMode::Full { 0 } else { config.head_epochs };
        let full_epochs = if config.mode == TrainMode::HeadOnly { 0 } else { config.epochs };
        if head_epochs + full_epochs == 0 {
            return Err(Error::Training("nothing to train: set at least one epoch".into()));
        }
        device.seed(config.seed);
        let hidden = bert.hidden_size();
        let width = config.features.width(hidden, layers);
        let head = task.head(width, labels.len(), config.dropout, device);
        let per_epoch = steps_per_epoch(train.len(), config.batch_size);
        let total_steps = per_epoch * (head_epochs + full_epochs);
        let phase = if config.mode == TrainMode::Full { Phase::Full } else { Phase::Features };
        let rng = Rng::new(config.seed);
        let lengths: Vec<usize> = train.iter().chain(&valid).map(|t| t.len()).collect();
        let feature_order = shortest_first(&lengths);
        let valid_order = shortest_first(&lengths[train.len()..]);
        let mut row_start = vec![0];
        for t in train.iter().chain(&valid) {
            row_start.push(row_start.last().expect("starts with 0") + task.rows(t));
        }
        let mut tuner = Self {
            labels,
            max_len,
            pad_id,
            device: device.clone(),
            model: BertClassifier { bert, head, spec: config.features },
            train,
            valid,
            row_start,
            phase,
            feature_rows: Vec::new(),
            feature_done: 0,
            train_features: None,
            valid_features: None,
            optim: None,
            order: Vec::new(),
            feature_order,
            valid_order,
            cursor: 0,
            epoch: 0,
            phase_step: 0,
            phase_steps: 0,
            step: 0,
            total_steps,
            since_eval: (0.0, 0, 0),
            eval: None,
            announce: None,
            best: None,
            rng,
            config,
        };
        if phase == Phase::Full {
            tuner.announce = Some(tuner.start_phase(Phase::Full));
        }
        Ok(tuner)
    }

    /// Starts from `head`'s weights instead of a fresh head: a checkpoint's own head (a
    /// `BertForQuestionAnswering`'s `qa_outputs`, say), or the head a reference run starts
    /// from. Only before the run's first step or feature; the head must be as wide as the
    /// features and have one output per label. Its dropout becomes the run's.
    pub fn with_head(mut self, mut head: ClassificationHead) -> crate::Result<Self> {
        if self.step > 0 || self.feature_done > 0 || self.train_features.is_some() {
            return Err(Error::Training("the head can only be replaced before the run starts".into()));
        }
        let (want, got) = (self.model.head.classifier.weight.dims(), head.classifier.weight.dims());
        if want != got {
            return Err(Error::Training(format!("the head maps {} features to {} outputs; this run needs {} to {}", got[0], got[1], want[0], want[1])));
        }
        head.dropout = self.model.head.dropout.clone();
        self.model.head = head;
        Ok(self)
    }

    /// Puts `transform` before the head's output layer, or none: the [`HeadTransform`] a family's
    /// token and span classes apply to every token (ModernBERT's `head`; see
    /// [`HeadTransform::for_run`]), trained with the head. Only before the run's first step or
    /// feature; it must be as wide as the features.
    pub fn with_head_transform(mut self, transform: Option<HeadTransform>) -> crate::Result<Self> {
        if self.step > 0 || self.feature_done > 0 || self.train_features.is_some() {
            return Err(Error::Training("the head can only be replaced before the run starts".into()));
        }
        let width = self.model.head.classifier.weight.dims()[0];
        if let Some(got) = transform.as_ref().map(|t| t.dense.weight.dims()).filter(|&d| d != [width, width]) {
            return Err(Error::Training(format!("the head's transform maps {} features to {}; this run's features are {width} wide", got[0], got[1])));
        }
        self.model.head.transform = transform;
        Ok(self)
    }

    /// The run's configuration.
    pub fn config(&self) -> &FineTuneConfig {
        &self.config
    }

    /// Where the run stands.
    pub fn progress(&self) -> Progress {
        Progress { phase: self.phase, step: self.step, total_steps: self.total_steps }
    }

    /// Labels, features and length of the classifier being trained, and a multi-label run's
    /// decision threshold at its best weights (once evaluated).
    pub fn meta(&self) -> ClassifierMeta {
        let threshold = self.best_scores().and_then(TaskScores::labels).map(|m| m.threshold);
        ClassifierMeta { labels: self.labels.clone(), spec: self.config.features, max_len: self.max_len, scale: self.config.score_scale, problem: None, threshold }
    }

    /// Rows (see [`units`]) of the training and of the validation examples.
    fn row_counts(&self) -> (usize, usize) {
        let split = self.row_start[self.train.len()];
        (split, self.row_start[self.train.len() + self.valid.len()] - split)
    }

    /// What the session asks of its task.
    fn task(&self) -> &'static dyn task::UnitTask {
        task::of(self.config.features.level)
    }

    fn epochs_of(&self, phase: Phase) -> usize {
        match phase {
            Phase::Head => self.config.head_epochs,
            Phase::Full => self.config.epochs,
            _ => 0,
        }
    }

    fn start_phase(&mut self, phase: Phase) -> Event {
        self.phase = phase;
        self.epoch = 0;
        self.phase_step = 0;
        self.phase_steps = steps_per_epoch(self.train.len(), self.config.batch_size) * self.epochs_of(phase);
        self.optim = Some(adamw(self.config.weight_decay));
        self.since_eval = (0.0, 0, 0);
        self.new_epoch_order();
        Event::PhaseStarted { phase, steps: self.phase_steps }
    }

    fn new_epoch_order(&mut self) {
        let mut order: Vec<usize> = (0..self.train.len()).collect();
        self.rng.shuffle(&mut order);
        // The head stage's steps read cached features: length makes no difference there.
        if self.phase == Phase::Full && self.config.group_by_length {
            let lengths: Vec<usize> = self.train.iter().map(|t| t.len()).collect();
            order = group_by_length(order, &lengths, self.config.batch_size, &mut self.rng);
        }
        self.order = order;
        self.cursor = 0;
    }

    fn fractional_epoch(&self) -> f32 {
        self.epoch as f32 + self.cursor as f32 / self.order.len().max(1) as f32
    }

    /// The cached frozen features `(training, validation)`, while the head stage has them.
    pub fn features(&self) -> Option<(Tensor<2>, Tensor<2>)> {
        Some((self.train_features.clone()?, self.valid_features.clone()?))
    }

    /// Skips the feature stage, using features cached by an earlier run on the same examples,
    /// encoder and feature choice (a restart with another seed, say). The head stage starts;
    /// the next [`advance`](Self::advance) says so.
    pub fn reuse_features(&mut self, train: Tensor<2>, valid: Tensor<2>) -> crate::Result<()> {
        let width = self.model.head.classifier.weight.dims()[0];
        let (train_units, valid_units) = self.row_counts();
        if self.phase != Phase::Features
            || train.dims() != [train_units, width]
            || valid.dims() != [valid_units, width]
        {
            return Err(Error::Training("the cached features do not fit this run".into()));
        }
        self.train_features = Some(train);
        self.valid_features = Some(valid);
        self.announce = Some(self.start_phase(Phase::Head));
        Ok(())
    }

    /// Does the next unit of work (or reports a stage that started at the end of the last one).
    pub async fn advance(&mut self) -> crate::Result<Event> {
        if let Some(event) = self.announce.take() {
            return Ok(event);
        }
        match self.phase {
            Phase::Features => self.feature_batch().await,
            Phase::Head | Phase::Full if self.eval.is_some() => self.eval_batch().await,
            Phase::Head | Phase::Full => self.train_step().await,
            Phase::Done => Ok(Event::Finished),
        }
    }

    /// Frozen features for the next batch of examples, shortest first (training and
    /// validation together), each stored at its example's row.
    async fn feature_batch(&mut self) -> crate::Result<Event> {
        let total = self.train.len() + self.valid.len();
        let batch_size = self.config.batch_size.max(8);
        let end = (self.feature_done + batch_size).min(total);
        let indices = &self.feature_order[self.feature_done..end];
        let examples: Vec<&LabeledText> = indices
            .iter()
            .map(|&i| if i < self.train.len() { &self.train[i] } else { &self.valid[i - self.train.len()] })
            .collect();
        let rows = batch_inputs(&examples, self.task());
        // The frozen encoder runs without autodiff and without dropout.
        let inner = self.device.clone().inner();
        let bert = self.model.bert.valid();
        let batch = Batch::from_encoded(&rows, self.pad_id);
        let input = BertInput::from_batch(&batch, &inner);
        let x = match batch_units(&examples, self.task(), batch.seq_len, &inner) {
            (Some(positions), _) => token_features(&bert, input, self.config.features, positions)?,
            (None, _) => features(&bert, input, self.config.features)?,
        };
        let values = read_f32(x).await?;
        if values.iter().any(|v| !v.is_finite()) {
            return Err(Error::Device("the encoder produced NaN or infinite features".into()));
        }
        let rows: usize = examples.iter().map(|t| self.task().rows(t)).sum();
        let width = values.len() / rows;
        let (train_units, valid_units) = self.row_counts();
        if self.feature_rows.is_empty() {
            self.feature_rows = vec![0.0; (train_units + valid_units) * width];
        }
        // Each example's unit rows go where its units start.
        let mut from = 0;
        for &i in indices {
            let (a, b) = (self.row_start[i] * width, self.row_start[i + 1] * width);
            self.feature_rows[a..b].copy_from_slice(&values[from..from + b - a]);
            from += b - a;
        }
        self.feature_done = end;
        if end == total {
            let rows = std::mem::take(&mut self.feature_rows);
            let split = train_units * width;
            let make = |v: Vec<f32>, n: usize| Tensor::<2>::from_data(TensorData::new(v, [n, width]), &self.device);
            self.valid_features = Some(make(rows[split..].to_vec(), valid_units));
            self.train_features = Some(make(rows[..split].to_vec(), train_units));
            return Ok(self.start_phase(Phase::Head));
        }
        Ok(Event::Features { done: end, total })
    }

    async fn train_step(&mut self) -> crate::Result<Event> {
        let end = (self.cursor + self.config.batch_size).min(self.order.len());
        let idx: Vec<usize> = self.order[self.cursor..end].to_vec();
        let task = self.task();
        let labels: Vec<usize> = idx.iter().flat_map(|&i| task.unit_labels(&self.train[i])).collect();
        let scores: Vec<f32> = idx.iter().flat_map(|&i| task.unit_scores(&self.train[i])).collect();
        let n = labels.len();
        let k = self.labels.len();
        let peak = if self.phase == Phase::Head { self.config.head_learning_rate } else { self.config.learning_rate };
        let lr = Schedule::new(self.phase_steps, self.config.warmup_ratio, peak).lr(self.phase_step);
        let inner = self.device.clone().inner();
        // Dropout's masks depend only on the run's seed and the step (drawn from the device's
        // generator, or on the CPU from each half's generator seeded from `seed`), so a run
        // resumed from a checkpoint draws the same ones as the uninterrupted run.
        let seed = self.config.seed ^ (self.step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.device.seed(seed);

        let (loss, logits, grads, norm) = if self.phase == Phase::Head {
            let feats = self.train_features.clone().expect("features are cached before the head stage");
            let logits = self.head_logits(feats, &idx);
            let loss = task.loss(&self.config, logits.clone(), &labels, &scores, &self.device);
            let mut grads = GradientsParams::from_grads(loss.backward(), &self.model.head);
            let norm = clip(&self.model.head, &mut grads, self.config.max_grad_norm, &self.device);
            (loss.inner(), logits.inner(), grads, norm)
        } else {
            let examples: Vec<&LabeledText> = idx.iter().map(|&i| &self.train[i]).collect();
            let (loss, logits, mut grads) = if inner == Device::flex() && examples.len() >= 2 {
                halves_step(&self.model, &examples, self.pad_id, &self.device, seed, &self.config)?
            } else {
                let batch = Batch::from_encoded(&batch_inputs(&examples, task), self.pad_id);
                let (positions, _) = batch_units(&examples, task, batch.seq_len, &self.device);
                let logits = self.model.forward_units(BertInput::from_batch(&batch, &self.device), positions)?;
                let loss = task.loss(&self.config, logits.clone(), &labels, &scores, &self.device);
                let grads = GradientsParams::from_grads(loss.backward(), &self.model);
                (loss.inner(), logits.inner(), grads)
            };
            let norm = clip(&self.model, &mut grads, self.config.max_grad_norm, &self.device);
            (loss, logits, grads, norm)
        };

        // One read-back per step: loss, gradient norm and logits together.
        // A row per unit: `k` labels wide, or a question-answering window's tokens.
        let width = logits.dims()[1];
        let values = match read_back(loss, &norm, vec![logits.reshape([n * width])], self.step, inner != Device::flex()).await {
            Ok(v) => v,
            Err(e) => {
                self.phase = Phase::Done;
                return Err(e);
            }
        };
        let (loss, grad_norm) = (values.loss, values.grad_norm);
        let correct = task.correct(&values.extra, width, &labels, &scores);

        let optim = self.optim.as_mut().expect("an optimizer per stage");
        if self.phase == Phase::Head {
            self.model.head = optim.step(lr, self.model.head.clone(), grads);
        } else {
            self.model = optim.step(lr, self.model.clone(), grads);
        }
        self.cursor = end;
        self.phase_step += 1;
        self.step += 1;
        self.since_eval.0 += f64::from(loss) * n as f64;
        self.since_eval.1 += correct;
        self.since_eval.2 += n;
        // A bi-encoder's validation outputs are its pairs' cosines; the others', their rows'.
        let valid_units = if task.one_output_per_pair() { self.valid.len() } else { self.row_counts().1 };

        let end_of_epoch = self.cursor >= self.order.len();
        let periodic = self.config.eval_every > 0 && self.phase_step % self.config.eval_every == 0;
        if end_of_epoch || periodic {
            self.eval = Some(EvalState { next: 0, logits: vec![0.0; valid_units * k], end_of_epoch });
        }
        Ok(Event::Step(StepPoint { phase: self.phase, step: self.step, epoch: self.fractional_epoch(), loss, lr, grad_norm }))
    }

    /// The head's logits of training examples `idx` from their cached features, a row per unit
    /// (a question-answering window's rows padded to the longest window's, as in a batch; a
    /// bi-encoder pair's cosine).
    fn head_logits(&self, feats: Tensor<2>, idx: &[usize]) -> Tensor<2> {
        let rows = |i: usize| self.row_start[i]..self.row_start[i + 1];
        if !self.task().windows() {
            let ids: Vec<i64> = idx.iter().flat_map(|&i| rows(i).map(|u| u as i64)).collect();
            let n = ids.len();
            let out = self.model.head.forward(feats.select(0, Tensor::<1, Int>::from_data(TensorData::new(ids, [n]), &self.device)));
            return self.task().rows_to_units(out);
        }
        let seq = idx.iter().map(|&i| rows(i).len()).max().unwrap_or(0);
        let (mut ids, mut mask) = (Vec::with_capacity(idx.len() * seq), Vec::with_capacity(idx.len() * seq));
        for &i in idx {
            let r = rows(i);
            for c in 0..seq {
                ids.push((r.start + c.min(r.len() - 1)) as i64);
                mask.push(i64::from(c < r.len()));
            }
        }
        let n = ids.len();
        let x = feats.select(0, Tensor::<1, Int>::from_data(TensorData::new(ids, [n]), &self.device));
        let tokens = self.model.head.forward(x).reshape([idx.len(), seq, 2]);
        span_rows(tokens, Tensor::from_data(TensorData::new(mask, [idx.len(), seq]), &self.device))
    }

    /// The weights with the best validation score so far (the current ones before any
    /// evaluation), ready for inference.
    pub fn best_model(&self) -> BertClassifier {
        self.best.as_ref().map_or(&self.model, |b| &b.model).valid()
    }

    /// The best validation accuracy so far.
    pub fn best_accuracy(&self) -> Option<f32> {
        self.best.as_ref().map(|b| b.metrics.accuracy)
    }

    /// The best validation score so far (see [`EvalReport::score`]).
    pub fn best_score(&self) -> Option<f32> {
        self.best.as_ref().map(|b| b.scores.score(&b.metrics))
    }

    /// The task's own scores at its best weights.
    pub fn best_scores(&self) -> Option<&TaskScores> {
        self.best.as_ref().map(|b| &b.scores)
    }

    /// Each validation item's predicted text at the best weights, in order: a
    /// question-answering model's answer to each question (`""`: no answer); empty for the
    /// other tasks.
    pub fn best_predictions(&self) -> &[String] {
        self.best.as_ref().map_or(&[], |b| b.predictions.as_slice())
    }

    /// Validation metrics and per-example probabilities (validation order; a tagger's: per
    /// word) of the best weights, once evaluated.
    pub fn best(&self) -> Option<(&Metrics, &[Vec<f32>])> {
        self.best.as_ref().map(|b| (&b.metrics, b.probs.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::units::labels_tensor;
    use crate::tasks::classification::{ClassificationHeadConfig, FeatureSpec};
    use crate::tasks::metrics::argmax;
    use crate::tasks::classification::predict;
    use crate::tokenizer::Encoded;
    use burn::module::{ModuleVisitor, Param};
    use crate::test_util::{as_modernbert, device_rng, tiny_config, toy};
    use crate::bert::model::BertModelConfig;
    use crate::bert::pooling::Pooling;
    use crate::tasks::distillation::Distillation;







    fn run(mode: TrainMode, spec: FeatureSpec) -> (Vec<EvalReport>, Vec<StepPoint>, FineTuner) {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        device.seed(1);
        let config = tiny_config(64);
        let bert = BertModelConfig::new(config).init(&device);
        let train = toy(96, 1);
        let valid = toy(32, 2);
        let cfg = FineTuneConfig::new()
            .with_mode(mode)
            .with_features(spec)
            .with_batch_size(16)
            .with_learning_rate(1e-3)
            .with_epochs(4)
            .with_head_learning_rate(1e-2)
            .with_head_epochs(5)
            .with_seed(3);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["neg".into(), "pos".into()], train, valid, cfg, &device).unwrap();
        let (mut evals, mut steps) = (Vec::new(), Vec::new());
        for _ in 0..10_000 {
            match pollster::block_on(tuner.advance()).unwrap() {
                Event::Finished => return (evals, steps, tuner),
                Event::Evaluated(r) => evals.push(*r),
                Event::Step(s) => steps.push(s),
                _ => {}
            }
        }
        panic!("the run did not finish");
    }

    #[test]
    fn full_fine_tuning_learns_a_separable_task() {
        let (evals, steps, tuner) = run(TrainMode::Full, FeatureSpec { pooling: Pooling::Cls, layers: Default::default(), ..Default::default() });
        assert_eq!(steps.len(), 4 * 6);
        assert_eq!(evals.len(), 4);
        let last = evals.last().unwrap();
        assert!(last.metrics.accuracy >= 0.9, "validation accuracy {}", last.metrics.accuracy);
        assert!(last.train_loss < steps[0].loss * 0.5, "loss {} → {}", steps[0].loss, last.train_loss);
        assert!(tuner.best_accuracy().unwrap() >= last.metrics.accuracy);
    }

    /// A student learns what its teacher's probabilities say: taught by a teacher that is
    /// always wrong, with all the weight on the soft labels, it learns the wrong labels.
    #[test]
    fn a_student_learns_its_teacher_s_labels() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        device.seed(1);
        let bert = BertModelConfig::new(tiny_config(64).with_num_hidden_layers(2)).init(&device).keep_layers(&[1]).unwrap();
        let wrong = |t: LabeledText| {
            let p = if t.label == 0 { [0.05, 0.95] } else { [0.95, 0.05] };
            t.with_teacher(&p)
        };
        let train: Vec<LabeledText> = toy(96, 1).into_iter().map(wrong).collect();
        let cfg = FineTuneConfig::new()
            .with_mode(TrainMode::HeadOnly)
            .with_batch_size(16)
            .with_head_learning_rate(1e-2)
            .with_head_epochs(8)
            .with_distil(Some(Distillation::new().with_soft_weight(1.0).with_temperature(1.0)));
        let labels = vec!["neg".to_string(), "pos".to_string()];
        let mut tuner = FineTuner::new(bert.clone(), 0, 16, labels.clone(), train.clone(), toy(32, 2), cfg.clone(), &device).unwrap();
        let mut accuracy = None;
        loop {
            match pollster::block_on(tuner.advance()).unwrap() {
                Event::Finished => break,
                Event::Evaluated(r) => accuracy = Some(r.metrics.accuracy),
                _ => {}
            }
        }
        let accuracy = accuracy.unwrap();
        assert!(accuracy <= 0.2, "the student scored {accuracy} against the gold labels; it should have learned its teacher's");
        // A training text without its teacher's probabilities is refused.
        let bare = toy(96, 1);
        assert!(FineTuner::new(bert, 0, 16, labels, bare, toy(32, 2), cfg, &device).is_err());
    }

    /// A tiny classifier on `device`, with or without dropout.
    fn classifier(dropout: bool, device: &Device) -> BertClassifier {
        let config = tiny_config(64);
        let config = if dropout { config } else { config.without_dropout() };
        let width = config.hidden_size;
        let bert = BertModelConfig::new(config).init(device);
        let head = ClassificationHeadConfig::new(width, 2).with_dropout(if dropout { 0.1 } else { 0.0 }).init(device);
        BertClassifier { bert, head, spec: FeatureSpec::default() }
    }

    /// The gradient of `grads` for each of `model`'s parameters, flattened, in visiting order
    /// (none for a parameter the loss does not reach, such as an unused pooler).
    fn flat_grads(model: &BertClassifier, grads: &GradientsParams) -> Vec<Option<Vec<f32>>> {
        struct Read<'a>(&'a GradientsParams, Vec<Option<Vec<f32>>>);
        impl ModuleVisitor for Read<'_> {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                self.1.push(self.0.get::<D>(param.id).map(|g| g.into_data().try_to_vec().unwrap()));
            }
        }
        let mut read = Read(grads, Vec::new());
        model.visit(&mut read);
        read.1
    }

    /// A seeded tiny classifier and `n` toy texts with their labels; the guard holds the device
    /// generator for the test.
    type Setup = (std::sync::MutexGuard<'static, ()>, Device, BertClassifier, Vec<LabeledText>, Vec<Encoded>, Vec<usize>);

    fn halves_setup(dropout: bool, n: usize, data_seed: u64) -> Setup {
        let guard = device_rng();
        let device = Device::flex().autodiff();
        device.seed(5);
        let model = classifier(dropout, &device);
        let data = toy(n, data_seed);
        let rows = data.iter().map(|t| t.encoded.clone()).collect();
        let labels = data.iter().map(|t| t.label).collect();
        (guard, device, model, data, rows, labels)
    }

    #[test]
    fn two_halves_give_the_whole_batchs_loss_logits_and_gradients() {
        // Five texts of different lengths: halves of 3 and 2, each padded to its own longest.
        let (_rng, device, model, data, rows, labels) = halves_setup(false, 5, 9);

        let batch = Batch::from_encoded(&rows, 0);
        let logits = model.forward(BertInput::from_batch(&batch, &device)).unwrap();
        let loss = ClassificationHead::loss(logits.clone(), labels_tensor(&labels, &device));
        let whole = GradientsParams::from_grads(loss.backward(), &model);
        let examples: Vec<&LabeledText> = data.iter().collect();
        let (loss_h, logits_h, halves) = halves_step(&model, &examples, 0, &device, 1, &FineTuneConfig::new()).unwrap();

        let close = |a: &[f32], b: &[f32], what: &str| {
            let scale = a.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() <= 1e-5 * scale, "{what}: {x} vs {y}");
            }
        };
        close(&loss.into_data().try_to_vec::<f32>().unwrap(), &loss_h.into_data().try_to_vec::<f32>().unwrap(), "loss");
        close(&logits.into_data().try_to_vec::<f32>().unwrap(), &logits_h.into_data().try_to_vec::<f32>().unwrap(), "logits");
        let (a, b) = (flat_grads(&model, &whole), flat_grads(&model, &halves));
        assert_eq!(a.len(), b.len());
        assert!(a.iter().flatten().count() > 20, "the encoder's and the head's parameters have gradients");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            match (x, y) {
                (Some(x), Some(y)) => close(x, y, &format!("gradient {i}")),
                (None, None) => {}
                _ => panic!("parameter {i} has a gradient one way only"),
            }
        }
    }

    #[test]
    fn halves_with_dropout_are_the_same_for_the_same_seed_whatever_the_threads_do() {
        let (_rng, device, model, data, _, _) = halves_setup(true, 16, 4);
        let examples: Vec<&LabeledText> = data.iter().collect();
        let step = |seed| {
            let (loss, _, grads) = halves_step(&model, &examples, 0, &device, seed, &FineTuneConfig::new()).unwrap();
            (loss.into_scalar::<f32>(), flat_grads(&model, &grads))
        };
        let first = step(11);
        // Run it again while other threads keep rayon's pool busy, so the halves start in
        // another order and on other threads.
        let busy = std::thread::spawn(|| (0..200).map(|i| rayon::join(|| i * 2, || i + 1).0).sum::<usize>());
        assert_eq!(first, step(11), "same seed, same masks, same gradients");
        busy.join().unwrap();
        assert_ne!(first.0, step(12).0, "another seed draws other masks");
    }

    /// A tiny encoder's run of `spec` on `train`, validated on `valid`, with head dropout 0.3.
    fn tuner_of(spec: FeatureSpec, train: Vec<LabeledText>, valid: Vec<LabeledText>, device: &Device) -> FineTuner {
        let bert = BertModelConfig::new(tiny_config(64)).init(device);
        let cfg = FineTuneConfig::new().with_mode(TrainMode::Full).with_features(spec).with_dropout(0.3).with_batch_size(4);
        FineTuner::new(bert, 0, 16, vec!["start".into(), "end".into()], train, valid, cfg, device).unwrap()
    }

    /// `n` toy texts as question-answering windows, each answered by its second and third token.
    fn windows(n: usize, seed: u64) -> Vec<LabeledText> {
        let item = std::sync::Arc::new(crate::data::QaItem { line: 1, id: "q".into(), question: "q".into(), context: "c".into(), answers: Vec::new() });
        toy(n, seed)
            .into_iter()
            .map(|t| {
                let len = t.encoded.tokens.len();
                LabeledText::window(t.encoded, SpanTarget { start: 1, end: 2, context: 1..len - 1, item: item.clone() })
            })
            .collect()
    }

    #[test]
    fn a_question_answering_head_has_no_dropout_of_its_own() {
        // transformers' BertForQuestionAnswering: qa_outputs on the last hidden states as they
        // are; its sequence classifier: dropout, then the classifier.
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        assert_eq!(tuner_of(FeatureSpec::spans(), windows(8, 1), windows(4, 2), &device).model.head.dropout.prob, 0.0);
        assert_eq!(tuner_of(FeatureSpec::default(), toy(8, 1), toy(4, 2), &device).model.head.dropout.prob, 0.3);
    }

    #[test]
    fn with_head_starts_from_its_weights_with_the_runs_dropout_and_refuses_a_misfit() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let run = || tuner_of(FeatureSpec::default(), toy(8, 1), toy(4, 2), &device);
        let head = ClassificationHeadConfig::new(tiny_config(64).hidden_size, 2).with_dropout(0.5).init(&device);
        let weights = head.classifier.weight.val().into_data();
        let tuner = run().with_head(head).unwrap();
        assert_eq!(tuner.model.head.classifier.weight.val().into_data(), weights);
        assert_eq!(tuner.model.head.dropout.prob, 0.3);
        let wide = ClassificationHeadConfig::new(tiny_config(64).hidden_size, 3).init(&device);
        assert!(run().with_head(wide).unwrap_err().to_string().contains("this run needs"));
        let mut started = run();
        while !matches!(pollster::block_on(started.advance()).unwrap(), Event::Step(_)) {}
        let head = ClassificationHeadConfig::new(tiny_config(64).hidden_size, 2).init(&device);
        assert!(started.with_head(head).is_err(), "not once the run has started");
    }

    #[test]
    fn freeze_then_unfreeze_runs_both_stages_and_keeps_the_best() {
        let (evals, steps, tuner) = run(TrainMode::FreezeThenUnfreeze, FeatureSpec::default());
        assert_eq!(evals.iter().filter(|e| e.phase == Phase::Head).count(), 5);
        assert_eq!(evals.iter().filter(|e| e.phase == Phase::Full).count(), 4);
        assert_eq!(steps.len(), 9 * 6);
        let best = evals.iter().map(|e| e.metrics.accuracy).fold(0.0, f32::max);
        assert_eq!(tuner.best_accuracy(), Some(best));
        assert!(best >= 0.9, "best validation accuracy {best}");
        // The kept weights are the best ones: re-evaluating them gives the best accuracy.
        let model = tuner.best_model();
        let device = Device::flex();
        let valid = toy(32, 2);
        let enc: Vec<Encoded> = valid.iter().map(|t| t.encoded.clone()).collect();
        let probs = pollster::block_on(predict(&model, crate::tasks::classification::Scoring::Softmax, &enc, 0, 8, &device)).unwrap();
        let acc = probs.iter().zip(&valid).filter(|(p, t)| argmax(p) == t.label).count() as f32 / 32.0;
        assert_eq!(acc, best);
        for p in &probs {
            assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }

    /// Every event of a tiny run of `mode` up to `Finished`, without the progress of the feature
    /// and evaluation passes, each as a short line: 32 training examples in batches of 16 (2
    /// steps an epoch), 2 head epochs, 1 full one.
    fn outline(mode: TrainMode) -> Vec<String> {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let bert = BertModelConfig::new(tiny_config(64)).init(&device);
        let cfg = FineTuneConfig::new().with_mode(mode).with_batch_size(16).with_head_epochs(2).with_epochs(1).with_seed(3);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(32, 1), toy(8, 2), cfg, &device).unwrap();
        let mut lines = Vec::new();
        for _ in 0..1_000 {
            lines.push(match pollster::block_on(tuner.advance()).unwrap() {
                Event::Finished => return lines,
                Event::Features { .. } | Event::Evaluating { .. } => continue,
                Event::PhaseStarted { phase, steps } => format!("start {phase:?}, {steps} steps"),
                Event::Step(s) => format!("step {} {:?}", s.step, s.phase),
                Event::Evaluated(r) => format!("evaluated {:?}", r.phase),
            });
        }
        panic!("the run did not finish");
    }

    #[test]
    fn freeze_then_unfreeze_announces_its_second_stage_after_the_head_stages_last_evaluation() {
        // The second stage starts in the call that ends the head stage's last evaluation; the
        // next call says so, before the stage's first step, with as many steps as it takes.
        assert_eq!(
            outline(TrainMode::FreezeThenUnfreeze),
            [
                "start Head, 4 steps",
                "step 1 Head",
                "step 2 Head",
                "evaluated Head",
                "step 3 Head",
                "step 4 Head",
                "evaluated Head",
                "start Full, 2 steps",
                "step 5 Full",
                "step 6 Full",
                "evaluated Full",
            ]
        );
    }

    #[test]
    fn a_full_run_announces_its_stage_before_its_first_step() {
        assert_eq!(outline(TrainMode::Full), ["start Full, 2 steps", "step 1 Full", "step 2 Full", "evaluated Full"]);
    }

    #[test]
    fn a_run_on_reused_features_announces_its_head_stage_before_its_first_step() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let bert = BertModelConfig::new(tiny_config(64)).init(&device);
        // 16 training examples in batches of 8, one epoch: 2 steps.
        let tuner = || {
            let cfg = FineTuneConfig::new().with_head_epochs(1).with_batch_size(8);
            FineTuner::new(bert.clone(), 0, 16, vec!["a".into(), "b".into()], toy(16, 1), toy(8, 2), cfg, &device).unwrap()
        };
        let mut first = tuner();
        while first.features().is_none() {
            pollster::block_on(first.advance()).unwrap();
        }
        let (train, valid) = first.features().unwrap();
        let mut restart = tuner();
        restart.reuse_features(train, valid).unwrap();
        assert!(matches!(pollster::block_on(restart.advance()).unwrap(), Event::PhaseStarted { phase: Phase::Head, steps: 2 }));
        assert!(matches!(pollster::block_on(restart.advance()).unwrap(), Event::Step(StepPoint { phase: Phase::Head, step: 1, .. })));
    }

    #[test]
    fn head_only_never_changes_the_encoder() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let config = tiny_config(64);
        let bert = BertModelConfig::new(config).init(&device);
        let before = bert.encoder.layer[0].attention.self_attn.query.weight.val().inner().into_data();
        let (_, _, tuner) = {
            let cfg = FineTuneConfig::new().with_head_epochs(2).with_batch_size(16);
            let mut t = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(32, 5), toy(8, 6), cfg, &device).unwrap();
            while !matches!(pollster::block_on(t.advance()).unwrap(), Event::Finished) {}
            ((), (), t)
        };
        let after = tuner.best_model().bert.encoder.layer[0].attention.self_attn.query.weight.val().into_data();
        assert_eq!(before, after);
    }

    /// Full fine-tuning of an ALBERT (one layer shared by every depth, embeddings narrower than
    /// the encoder): the head reads the encoder's width, and the one shared layer learns.
    #[test]
    fn full_fine_tuning_trains_a_shared_layer_and_a_projected_embedding() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let config = tiny_config(64).with_model_type(crate::bert::family::Family::Albert).with_embedding_size(Some(32));
        let bert = BertModelConfig::new(config).init(&device);
        assert_eq!((bert.encoder.layer.len(), bert.num_layers(), bert.hidden_size()), (1, 2, 128));
        let before = bert.encoder.layer[0].attention.self_attn.query.weight.val().inner().into_data();
        let cfg = FineTuneConfig::new().with_mode(TrainMode::Full).with_epochs(1).with_batch_size(16);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(32, 5), toy(8, 6), cfg, &device).unwrap();
        while !matches!(pollster::block_on(tuner.advance()).unwrap(), Event::Finished) {}
        let after = tuner.best_model().bert.encoder.layer[0].attention.self_attn.query.weight.val().into_data();
        assert_ne!(before, after);
    }

    /// Full fine-tuning of a ModernBERT (pre-norm gated layers, rotary positions, a local window
    /// shorter than the toy texts): every layer learns, the final LayerNorm too.
    #[test]
    fn full_fine_tuning_trains_modernbert_layers() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let config = as_modernbert(tiny_config(64));
        let bert = BertModelConfig::new(config).with_with_pooler(false).init(&device);
        assert_eq!((bert.encoder.layer.len(), bert.encoder.layers.len(), bert.num_layers()), (0, 2, 2));
        let before = (bert.encoder.layers[1].attn.wqkv.weight.val().inner().into_data(), bert.encoder.final_norm.as_ref().unwrap().gamma.val().inner().into_data());
        let cfg = FineTuneConfig::new().with_mode(TrainMode::Full).with_epochs(1).with_batch_size(16);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(32, 5), toy(8, 6), cfg, &device).unwrap();
        while !matches!(pollster::block_on(tuner.advance()).unwrap(), Event::Finished) {}
        let best = &tuner.best_model().bert;
        assert_ne!(before.0, best.encoder.layers[1].attn.wqkv.weight.val().into_data());
        assert_ne!(before.1, best.encoder.final_norm.as_ref().unwrap().gamma.val().into_data());
    }

    /// A ModernBERT question-answering run trains its `head` (the transform before the span
    /// logits) with the output layer, on frozen features and then in full; the kept model
    /// exports as `ModernBertForQuestionAnswering` and reads back to the same logits. A
    /// transform of another width, or once the run has started, is refused.
    #[test]
    fn a_modernbert_span_run_trains_its_head_transform_and_exports_it() {
        use crate::tasks::classification::HeadTransformConfig;
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let config = as_modernbert(tiny_config(64))
            .with_attention_bias(Some(true))
            .with_mlp_bias(Some(true))
            .with_classifier_bias(Some(false));
        let run = || {
            let bert = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
            let cfg = FineTuneConfig::new().with_mode(TrainMode::FreezeThenUnfreeze).with_features(FeatureSpec::spans()).with_batch_size(8).with_head_epochs(1).with_epochs(1);
            FineTuner::new(bert, 0, 16, crate::tasks::qa::LABELS.iter().map(|l| l.to_string()).collect(), windows(16, 1), windows(8, 2), cfg, &device).unwrap()
        };
        let transform = HeadTransform::for_run(&config, FeatureSpec::spans(), None, 3, &device).unwrap().expect("ModernBERT's span class has one");
        let before = transform.dense.weight.val().inner().into_data();
        let narrow = HeadTransformConfig::new(32).init(&device);
        assert!(run().with_head_transform(Some(narrow)).unwrap_err().to_string().contains("features are 128 wide"));
        let mut tuner = run().with_head_transform(Some(transform)).unwrap();
        while !matches!(pollster::block_on(tuner.advance()).unwrap(), Event::Step(_)) {}
        assert!(tuner.with_head_transform(None).is_err(), "not once the run has started");
        let mut tuner = run().with_head_transform(HeadTransform::for_run(&config, FeatureSpec::spans(), None, 3, &device).unwrap()).unwrap();
        while !matches!(pollster::block_on(tuner.advance()).unwrap(), Event::Finished) {}
        let model = tuner.best_model();
        let trained = model.head.transform.as_ref().expect("kept with the head");
        assert_ne!(trained.dense.weight.val().into_data(), before);
        let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].map(String::from).into_iter().chain((5..64).map(|i| format!("w{i}"))).collect::<Vec<_>>().join("\n").into_bytes();
        let tokenizer = crate::tokenizer::BertTokenizer::from_vocab_txt(&vocab, true, 16).unwrap();
        let files = crate::tasks::classification::export(&config, &model, &tuner.meta(), &tokenizer, None, Some(&vocab)).unwrap();
        let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
        let json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
        assert_eq!(json["architectures"][0], "ModernBertForQuestionAnswering");
        let weights = get("model.safetensors").unwrap();
        let names = safetensors::SafeTensors::deserialize(&weights).unwrap().names().into_iter().map(String::from).collect::<Vec<_>>();
        for name in ["head.dense.weight", "head.norm.weight", "classifier.weight", "classifier.bias"] {
            assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
        }
        let files = crate::bert::checkpoint::CheckpointFiles { config_json: get("config.json").unwrap(), weights, tokenizer_json: None, vocab_txt: get("vocab.txt") };
        let loaded = crate::tasks::classification::load_classifier(files, None, &Device::flex()).unwrap();
        let batch = Batch::from_encoded(&[windows(1, 9)[0].encoded.clone()], 0);
        let logits = |m: &BertClassifier| m.forward_tokens(BertInput::from_batch(&batch, &Device::flex())).unwrap().into_data().try_to_vec::<f32>().unwrap();
        let (a, b) = (logits(&model), logits(&loaded.model));
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5), "{a:?} vs {b:?}");
    }

    /// Full fine-tuning of a DeBERTa-v3 (disentangled attention, log buckets shorter than the toy
    /// texts, a normalised relative table, no absolute positions): the layers learn, and so do
    /// the relative table and its LayerNorm, which reach the loss only through attention.
    #[test]
    fn full_fine_tuning_trains_deberta_layers_and_its_relative_table() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let config = crate::test_util::as_deberta_v3(tiny_config(64));
        let bert = BertModelConfig::new(config).with_with_pooler(false).init(&device);
        assert_eq!((bert.encoder.layer.len(), bert.encoder.disentangled.len(), bert.num_layers()), (0, 2, 2));
        let table = |b: &crate::bert::model::BertModel| b.encoder.rel_embeddings.as_ref().unwrap().weight.val().into_data();
        let before = (
            bert.encoder.disentangled[1].attention.self_attn.query_proj.weight.val().inner().into_data(),
            bert.encoder.rel_embeddings.as_ref().unwrap().weight.val().inner().into_data(),
            bert.encoder.layer_norm.as_ref().unwrap().gamma.val().inner().into_data(),
        );
        let cfg = FineTuneConfig::new().with_mode(TrainMode::Full).with_epochs(1).with_batch_size(16);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(32, 5), toy(8, 6), cfg, &device).unwrap();
        while !matches!(pollster::block_on(tuner.advance()).unwrap(), Event::Finished) {}
        let best = &tuner.best_model().bert;
        assert_ne!(before.0, best.encoder.disentangled[1].attention.self_attn.query_proj.weight.val().into_data());
        assert_ne!(before.1, table(best));
        assert_ne!(before.2, best.encoder.layer_norm.as_ref().unwrap().gamma.val().into_data());
    }

    #[test]
    fn a_diverging_run_stops_with_a_message_before_the_bad_update() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let bert = BertModelConfig::new(tiny_config(64)).init(&device);
        // An absurd learning rate: the first update blows the head up, the next loss is not finite.
        let cfg = FineTuneConfig::new().with_head_learning_rate(1e38).with_warmup_ratio(0.0).with_max_grad_norm(0.0).with_batch_size(8);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], toy(32, 1), toy(8, 2), cfg, &device).unwrap();
        let mut steps = 0;
        let err = loop {
            match pollster::block_on(tuner.advance()) {
                Ok(Event::Step(_)) => steps += 1,
                Ok(Event::Finished) => panic!("a diverging run finished"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert!(steps >= 1, "the first step is finite");
        assert!(err.to_string().contains("NaN or infinite") && err.to_string().contains("learning rate"), "{err}");
        assert_eq!(tuner.progress().phase, Phase::Done);
        assert!(matches!(pollster::block_on(tuner.advance()), Ok(Event::Finished)));
    }


    #[test]
    fn full_fine_tuning_batches_by_length_only_when_asked() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let bert = || BertModelConfig::new(tiny_config(64)).init(&device);
        let longest = |group: bool| {
            let cfg = FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(8).with_group_by_length(group);
            let t = FineTuner::new(bert(), 0, 16, vec!["a".into(), "b".into()], toy(400, 1), toy(8, 2), cfg, &device).unwrap();
            let lengths: Vec<usize> = t.order.iter().map(|&i| t.train[i].encoded.tokens.len()).collect();
            lengths.chunks(8).map(|b| b.iter().max().unwrap() - b.iter().min().unwrap()).sum::<usize>()
        };
        // Spread of lengths within batches, summed: toy lengths are 5..=10.
        let (grouped, plain) = (longest(true), longest(false));
        assert!(grouped * 4 < plain, "grouped {grouped}, plain {plain}");
    }

    #[test]
    fn cached_features_do_not_depend_on_the_batch_order() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let bert = BertModelConfig::new(tiny_config(64)).init(&device);
        let reference = bert.valid();
        let (train, valid) = (toy(40, 3), toy(12, 4));
        let cfg = FineTuneConfig::new().with_head_epochs(1).with_batch_size(8);
        let mut tuner = FineTuner::new(bert, 0, 16, vec!["a".into(), "b".into()], train.clone(), valid.clone(), cfg, &device).unwrap();
        while tuner.features().is_none() {
            pollster::block_on(tuner.advance()).unwrap();
        }
        let (t, v) = tuner.features().unwrap();
        let cached = [t.into_data().try_to_vec::<f32>().unwrap(), v.into_data().try_to_vec::<f32>().unwrap()].concat();
        let inner = device.clone().inner();
        let width = cached.len() / 52;
        for (row, text) in train.iter().chain(&valid).enumerate() {
            let batch = Batch::from_encoded(std::slice::from_ref(&text.encoded), 0);
            let alone = features(&reference, BertInput::from_batch(&batch, &inner), FeatureSpec::default()).unwrap();
            let alone = alone.into_data().try_to_vec::<f32>().unwrap();
            for (a, b) in alone.iter().zip(&cached[row * width..(row + 1) * width]) {
                assert!((a - b).abs() < 1e-5, "row {row}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn a_config_saved_before_a_field_existed_still_loads() {
        let mut saved = serde_json::to_value(FineTuneConfig::new().with_batch_size(8).with_group_by_length(false)).unwrap();
        let cfg = config_with_defaults(saved.clone()).unwrap();
        assert_eq!((cfg.batch_size, cfg.group_by_length), (8, false));
        saved.as_object_mut().unwrap().remove("group_by_length");
        assert!(serde_json::from_value::<FineTuneConfig>(saved.clone()).is_err(), "burn's Config has no serde defaults");
        let cfg = config_with_defaults(saved.clone()).unwrap();
        assert_eq!((cfg.batch_size, cfg.group_by_length), (8, true));
        saved["batch_size"] = serde_json::json!("eight");
        assert!(config_with_defaults(saved).is_err());
    }

    #[test]
    fn refuses_one_label_and_empty_sets() {
        let device = Device::flex().autodiff();
        let bert = || BertModelConfig::new(tiny_config(64)).init(&device);
        let err = FineTuner::new(bert(), 0, 16, vec!["a".into()], toy(4, 1), toy(4, 2), FineTuneConfig::new(), &device).unwrap_err();
        assert!(err.to_string().contains("two labels"), "{err}");
        let err = FineTuner::new(bert(), 0, 16, vec!["a".into(), "b".into()], toy(4, 1), vec![], FineTuneConfig::new(), &device).unwrap_err();
        assert!(err.to_string().contains("validation"), "{err}");
    }
}
