//! Saved copies of a fine-tuning run's request (hyper-parameters, labels, data), as the studio's
//! settings and a checkpoint of the run in progress keep them. Reads today's shape and the
//! earlier one, which kept the texts in `train` and `valid` and every other task's data in an
//! optional field of its own, and hyper-parameters saved before some were added (they take
//! their defaults). (The conversions from and to `runs`' types are in `runs/to_saved.rs`.)

use bertbench_core::data;
use bertbench_core::tasks::{distillation, qa, similarity, tagging};
use bertbench_core::train;
use serde::{Deserialize, Serialize};

use super::list;
use super::choice::ChoiceItem;
use super::labels::LabelSet;
use super::run::RunRecord;
use super::scores::{EvalReport, FeatureSpec, Phase, ScoreScale, StepPoint};
use super::{plain_struct, unit_enum};

unit_enum!(
    /// What trains.
    TrainMode = train::TrainMode { HeadOnly, Full, FreezeThenUnfreeze }
);

unit_enum!(
    /// How a similarity model learns.
    SimilarityLoss = similarity::SimilarityLoss { Cosine, Contrastive }
);

unit_enum!(
    /// Which pieces of a word a tagger's loss reads.
    LabelPieces = tagging::LabelPieces { First, All }
);

/// Where a run computes (`runs::Backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backend {
    Cpu,
    WebGpu,
}

/// A question-answering run's windows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SpanConfig {
    pub max_len: usize,
    pub stride: usize,
    pub max_answer_len: usize,
    pub n_best: usize,
}

impl From<qa::SpanConfig> for SpanConfig {
    fn from(c: qa::SpanConfig) -> Self {
        Self { max_len: c.max_len, stride: c.stride, max_answer_len: c.max_answer_len, n_best: c.n_best }
    }
}

impl From<SpanConfig> for qa::SpanConfig {
    fn from(s: SpanConfig) -> Self {
        Self { max_len: s.max_len, stride: s.stride, max_answer_len: s.max_answer_len, n_best: s.n_best }
    }
}

/// A student's distillation from its teacher.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Distillation {
    pub temperature: f64,
    pub soft_weight: f64,
}

impl From<distillation::Distillation> for Distillation {
    fn from(c: distillation::Distillation) -> Self {
        Self { temperature: c.temperature, soft_weight: c.soft_weight }
    }
}

impl From<Distillation> for distillation::Distillation {
    fn from(s: Distillation) -> Self {
        Self { temperature: s.temperature, soft_weight: s.soft_weight }
    }
}

/// A fine-tuning run's hyper-parameters. A field an earlier build did not save takes today's
/// default (`FineTuneConfig::new()`'s), as core's `config_with_defaults` reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FineTuneConfig {
    pub mode: TrainMode,
    pub features: FeatureSpec,
    pub batch_size: usize,
    pub learning_rate: f64,
    pub epochs: usize,
    pub head_learning_rate: f64,
    pub head_epochs: usize,
    pub warmup_ratio: f64,
    pub weight_decay: f64,
    pub max_grad_norm: f64,
    pub dropout: f64,
    pub seed: u64,
    pub eval_every: usize,
    pub group_by_length: bool,
    pub spans: SpanConfig,
    pub similarity_loss: SimilarityLoss,
    pub score_scale: Option<ScoreScale>,
    pub distil: Option<Distillation>,
}

impl Default for FineTuneConfig {
    fn default() -> Self {
        train::FineTuneConfig::new().into()
    }
}

impl From<train::FineTuneConfig> for FineTuneConfig {
    fn from(c: train::FineTuneConfig) -> Self {
        Self {
            mode: c.mode.into(),
            features: c.features.into(),
            batch_size: c.batch_size,
            learning_rate: c.learning_rate,
            epochs: c.epochs,
            head_learning_rate: c.head_learning_rate,
            head_epochs: c.head_epochs,
            warmup_ratio: c.warmup_ratio,
            weight_decay: c.weight_decay,
            max_grad_norm: c.max_grad_norm,
            dropout: c.dropout,
            seed: c.seed,
            eval_every: c.eval_every,
            group_by_length: c.group_by_length,
            spans: c.spans.into(),
            similarity_loss: c.similarity_loss.into(),
            score_scale: c.score_scale.map(Into::into),
            distil: c.distil.map(Into::into),
        }
    }
}

impl From<FineTuneConfig> for train::FineTuneConfig {
    fn from(s: FineTuneConfig) -> Self {
        Self {
            mode: s.mode.into(),
            features: s.features.into(),
            batch_size: s.batch_size,
            learning_rate: s.learning_rate,
            epochs: s.epochs,
            head_learning_rate: s.head_learning_rate,
            head_epochs: s.head_epochs,
            warmup_ratio: s.warmup_ratio,
            weight_decay: s.weight_decay,
            max_grad_norm: s.max_grad_norm,
            dropout: s.dropout,
            seed: s.seed,
            eval_every: s.eval_every,
            group_by_length: s.group_by_length,
            spans: s.spans.into(),
            similarity_loss: s.similarity_loss.into(),
            score_scale: s.score_scale.map(Into::into),
            distil: s.distil.map(Into::into),
        }
    }
}

plain_struct!(
    /// A labeled text (or pair of texts).
    Example = data::Example { line: usize, text: String, text_pair: Option<String>, label: String }
);

plain_struct!(
    /// A sentence's words and their tags.
    TaggedSentence = data::TaggedSentence { line: usize, words: Vec<String>, tags: Vec<String> }
);

plain_struct!(
    /// A gold answer: its text and where it starts in the passage.
    QaAnswer = data::QaAnswer { text: String, start: usize }
);

/// A question on a passage, and its gold answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QaItem {
    pub line: usize,
    pub id: String,
    pub question: String,
    pub context: String,
    pub answers: Vec<QaAnswer>,
}

impl From<data::QaItem> for QaItem {
    fn from(c: data::QaItem) -> Self {
        Self { line: c.line, id: c.id, question: c.question, context: c.context, answers: list(c.answers) }
    }
}

impl From<QaItem> for data::QaItem {
    fn from(s: QaItem) -> Self {
        Self { line: s.line, id: s.id, question: s.question, context: s.context, answers: list(s.answers) }
    }
}

plain_struct!(
    /// Two texts and their similarity score (scaled to 0..1; `raw` as the file had it).
    ScoredPair = data::ScoredPair { line: usize, text: String, text_pair: String, score: f32, raw: String }
);

/// A token-tagging run's sentences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaggedRequest {
    pub train: Vec<TaggedSentence>,
    pub valid: Vec<TaggedSentence>,
    pub pieces: LabelPieces,
}

/// Training and validation items of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Items<T> {
    pub train: Vec<T>,
    pub valid: Vec<T>,
}

/// A run's training and validation data, by task (`runs::RunData`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RunData {
    Texts { train: Vec<Example>, valid: Vec<Example> },
    Tagged(TaggedRequest),
    Questions(Items<QaItem>),
    Pairs(Items<ScoredPair>),
    Choices(Items<ChoiceItem>),
    LabelSets(Items<LabelSet>),
}

/// A fine-tuning run's request, as saved today (`runs::TrainRequest`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainRequest {
    pub config: FineTuneConfig,
    pub labels: Vec<String>,
    pub data: RunData,
    pub max_len: usize,
    pub backend: Backend,
    pub restarts: usize,
    pub from_scratch: bool,
    pub record: RunRecord,
    pub base_kept: bool,
    pub keep_layers: Option<usize>,
}

/// A [`TrainRequest`] as read: today's, or an earlier build's, with the texts in `train` and
/// `valid` and every other task's data in an optional field of its own (and maybe without the
/// fields added since: they take their defaults).
#[derive(Deserialize)]
struct TrainRequestRead {
    config: FineTuneConfig,
    labels: Vec<String>,
    #[serde(default)]
    data: Option<RunData>,
    max_len: usize,
    backend: Backend,
    restarts: usize,
    from_scratch: bool,
    #[serde(default)]
    record: RunRecord,
    #[serde(default)]
    base_kept: bool,
    #[serde(default)]
    keep_layers: Option<usize>,
    #[serde(default)]
    train: Vec<Example>,
    #[serde(default)]
    valid: Vec<Example>,
    #[serde(default)]
    tagged: Option<TaggedRequest>,
    #[serde(default)]
    questions: Option<Items<QaItem>>,
    #[serde(default)]
    pairs: Option<Items<ScoredPair>>,
    #[serde(default)]
    choices: Option<Items<ChoiceItem>>,
}

impl<'de> Deserialize<'de> for TrainRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = TrainRequestRead::deserialize(d)?;
        let data = match (s.data, s.tagged, s.questions, s.pairs, s.choices) {
            (Some(data), ..) => data,
            (None, Some(t), ..) => RunData::Tagged(t),
            (None, _, Some(q), ..) => RunData::Questions(q),
            (None, _, _, Some(p), _) => RunData::Pairs(p),
            (None, _, _, _, Some(c)) => RunData::Choices(c),
            (None, None, None, None, None) => RunData::Texts { train: s.train, valid: s.valid },
        };
        Ok(Self {
            config: s.config,
            labels: s.labels,
            data,
            max_len: s.max_len,
            backend: s.backend,
            restarts: s.restarts,
            from_scratch: s.from_scratch,
            record: s.record,
            base_kept: s.base_kept,
            keep_layers: s.keep_layers,
        })
    }
}

/// What a saved checkpoint says about its run (`runs::CheckpointMeta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    pub request: TrainRequest,
    pub base_model: String,
    pub restart: usize,
    pub files: Vec<String>,
    pub kept_files: Vec<String>,
    pub step: usize,
    pub total_steps: usize,
    pub epoch: usize,
    pub phase: Phase,
    pub with_optimizer: bool,
    pub seconds: f64,
    pub device: String,
    pub steps: Vec<StepPoint>,
    pub evals: Vec<EvalReport>,
}
