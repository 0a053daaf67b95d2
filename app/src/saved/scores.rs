//! Saved copies of what a fine-tuning run measures: the classifier's description, validation
//! metrics, each task's own scores, the training curve's points and the evaluations. Their JSON
//! is the one core's types wrote when they were saved directly (pinned by
//! `tests/fixtures/saved-items/today.json`).

use bertbench_core::bert::pooling::Pooling as CorePooling;
use bertbench_core::data::ScoreScale as CoreScale;
use bertbench_core::tasks::{classification as cls, metrics as met, multi_label, qa, similarity as sim, tagging};
use bertbench_core::train;
use serde::{Deserialize, Serialize};

use super::{list, unit_enum};

unit_enum!(
    /// How token vectors become one vector.
    Pooling = CorePooling { Cls, Pooler, Mean }
);

unit_enum!(
    /// Which encoder layers a head reads.
    FeatureLayers = cls::FeatureLayers { Last, SecondToLast, SumLastFour, ConcatLastFour }
);

unit_enum!(
    /// What a head predicts per input (a sentence's class, a token's tag, ...).
    Level = cls::Level { Sentence, Token, Span, Score, Embedding, Choice, MultiLabel }
);

unit_enum!(
    /// What a sequence classifier's outputs are (`problem_type`).
    ProblemType = cls::ProblemType { SingleLabelClassification, MultiLabelClassification, Regression }
);

unit_enum!(
    /// A stage of a fine-tuning run.
    Phase = train::Phase { Features, Head, Full, Done }
);

/// What a head reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FeatureSpec {
    pub pooling: Pooling,
    pub layers: FeatureLayers,
    /// Absent in items saved before heads had levels: a sentence's.
    #[serde(default = "sentence")]
    pub level: Level,
}

fn sentence() -> Level {
    Level::Sentence
}

impl From<cls::FeatureSpec> for FeatureSpec {
    fn from(c: cls::FeatureSpec) -> Self {
        Self { pooling: c.pooling.into(), layers: c.layers.into(), level: c.level.into() }
    }
}

impl From<FeatureSpec> for cls::FeatureSpec {
    fn from(s: FeatureSpec) -> Self {
        Self { pooling: s.pooling.into(), layers: s.layers.into(), level: s.level.into() }
    }
}

/// The range of a similarity data set's scores.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScoreScale {
    pub low: f32,
    pub high: f32,
}

impl From<CoreScale> for ScoreScale {
    fn from(c: CoreScale) -> Self {
        Self { low: c.low, high: c.high }
    }
}

impl From<ScoreScale> for CoreScale {
    fn from(s: ScoreScale) -> Self {
        Self { low: s.low, high: s.high }
    }
}

/// A classifier's labels, features and length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassifierMeta {
    pub labels: Vec<String>,
    pub spec: FeatureSpec,
    pub max_len: usize,
    #[serde(default)]
    pub scale: Option<ScoreScale>,
    /// What its `config.json` said its outputs are; absent where it said nothing (and in items
    /// saved before this was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<ProblemType>,
    /// A multi-label head's decision threshold; absent for others (and in items saved before
    /// it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f32>,
}

impl From<cls::ClassifierMeta> for ClassifierMeta {
    fn from(c: cls::ClassifierMeta) -> Self {
        Self { labels: c.labels, spec: c.spec.into(), max_len: c.max_len, scale: c.scale.map(Into::into), problem: c.problem.map(Into::into), threshold: c.threshold }
    }
}

impl From<ClassifierMeta> for cls::ClassifierMeta {
    fn from(s: ClassifierMeta) -> Self {
        Self { labels: s.labels, spec: s.spec.into(), max_len: s.max_len, scale: s.scale.map(Into::into), problem: s.problem.map(Into::into), threshold: s.threshold }
    }
}

/// One class's (or entity type's) precision, recall and F1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassMetrics {
    pub label: String,
    pub precision: f32,
    pub recall: f32,
    pub f1: f32,
    pub support: usize,
}

impl From<met::ClassMetrics> for ClassMetrics {
    fn from(c: met::ClassMetrics) -> Self {
        Self { label: c.label, precision: c.precision, recall: c.recall, f1: c.f1, support: c.support }
    }
}

impl From<ClassMetrics> for met::ClassMetrics {
    fn from(s: ClassMetrics) -> Self {
        Self { label: s.label, precision: s.precision, recall: s.recall, f1: s.f1, support: s.support }
    }
}

/// Validation metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub accuracy: f32,
    pub macro_f1: f32,
    pub per_class: Vec<ClassMetrics>,
    pub confusion: Vec<Vec<usize>>,
    pub count: usize,
}

impl From<met::Metrics> for Metrics {
    fn from(c: met::Metrics) -> Self {
        Self { accuracy: c.accuracy, macro_f1: c.macro_f1, per_class: list(c.per_class), confusion: c.confusion, count: c.count }
    }
}

impl From<Metrics> for met::Metrics {
    fn from(s: Metrics) -> Self {
        Self { accuracy: s.accuracy, macro_f1: s.macro_f1, per_class: list(s.per_class), confusion: s.confusion, count: s.count }
    }
}

/// A tagger's entity-level scores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityMetrics {
    pub precision: f32,
    pub recall: f32,
    pub f1: f32,
    pub per_type: Vec<ClassMetrics>,
    pub predicted: usize,
    pub support: usize,
}

impl From<tagging::EntityMetrics> for EntityMetrics {
    fn from(c: tagging::EntityMetrics) -> Self {
        Self { precision: c.precision, recall: c.recall, f1: c.f1, per_type: list(c.per_type), predicted: c.predicted, support: c.support }
    }
}

impl From<EntityMetrics> for tagging::EntityMetrics {
    fn from(s: EntityMetrics) -> Self {
        Self { precision: s.precision, recall: s.recall, f1: s.f1, per_type: list(s.per_type), predicted: s.predicted, support: s.support }
    }
}

/// A multi-label model's scores at the threshold chosen on its validation set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelSetMetrics {
    pub threshold: f32,
    pub micro_precision: f32,
    pub micro_recall: f32,
    pub micro_f1: f32,
    pub macro_f1: f32,
    pub exact_match: f32,
    pub per_label: Vec<ClassMetrics>,
    pub texts: usize,
}

impl From<multi_label::LabelSetMetrics> for LabelSetMetrics {
    fn from(c: multi_label::LabelSetMetrics) -> Self {
        let multi_label::LabelSetMetrics { threshold, micro_precision, micro_recall, micro_f1, macro_f1, exact_match, per_label, texts } = c;
        Self { threshold, micro_precision, micro_recall, micro_f1, macro_f1, exact_match, per_label: list(per_label), texts }
    }
}

impl From<LabelSetMetrics> for multi_label::LabelSetMetrics {
    fn from(s: LabelSetMetrics) -> Self {
        let LabelSetMetrics { threshold, micro_precision, micro_recall, micro_f1, macro_f1, exact_match, per_label, texts } = s;
        Self { threshold, micro_precision, micro_recall, micro_f1, macro_f1, exact_match, per_label: list(per_label), texts }
    }
}

/// Exact match and F1 over some questions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AnswerScores {
    pub exact: f32,
    pub f1: f32,
    pub count: usize,
}

impl From<qa::AnswerScores> for AnswerScores {
    fn from(c: qa::AnswerScores) -> Self {
        Self { exact: c.exact, f1: c.f1, count: c.count }
    }
}

impl From<AnswerScores> for qa::AnswerScores {
    fn from(s: AnswerScores) -> Self {
        Self { exact: s.exact, f1: s.f1, count: s.count }
    }
}

/// A question-answering model's scores: all questions, answerable ones, unanswerable ones.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AnswerMetrics {
    pub all: AnswerScores,
    pub has_answer: AnswerScores,
    pub no_answer: AnswerScores,
}

impl From<qa::AnswerMetrics> for AnswerMetrics {
    fn from(c: qa::AnswerMetrics) -> Self {
        Self { all: c.all.into(), has_answer: c.has_answer.into(), no_answer: c.no_answer.into() }
    }
}

impl From<AnswerMetrics> for qa::AnswerMetrics {
    fn from(s: AnswerMetrics) -> Self {
        Self { all: s.all.into(), has_answer: s.has_answer.into(), no_answer: s.no_answer.into() }
    }
}

/// A similarity model's correlations and error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SimilarityMetrics {
    pub count: usize,
    pub pearson: f32,
    pub spearman: f32,
    pub mse: f32,
    pub accuracy: Option<f32>,
}

impl From<sim::SimilarityMetrics> for SimilarityMetrics {
    fn from(c: sim::SimilarityMetrics) -> Self {
        Self { count: c.count, pearson: c.pearson, spearman: c.spearman, mse: c.mse, accuracy: c.accuracy }
    }
}

impl From<SimilarityMetrics> for sim::SimilarityMetrics {
    fn from(s: SimilarityMetrics) -> Self {
        Self { count: s.count, pearson: s.pearson, spearman: s.spearman, mse: s.mse, accuracy: s.accuracy }
    }
}

/// A task's own scores, beside its accuracy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskScores {
    Classes,
    Entities(EntityMetrics),
    Answers(AnswerMetrics),
    Similarity(SimilarityMetrics),
    Labels(LabelSetMetrics),
}

impl TaskScores {
    /// The scores of an item saved with one optional field per task (the earlier shape).
    pub fn from_fields(entities: Option<EntityMetrics>, answers: Option<AnswerMetrics>, similarity: Option<SimilarityMetrics>) -> Self {
        match (similarity, answers, entities) {
            (Some(s), _, _) => TaskScores::Similarity(s),
            (_, Some(a), _) => TaskScores::Answers(a),
            (_, _, Some(e)) => TaskScores::Entities(e),
            _ => TaskScores::Classes,
        }
    }
}

impl From<train::TaskScores> for TaskScores {
    fn from(c: train::TaskScores) -> Self {
        match c {
            train::TaskScores::Classes => Self::Classes,
            train::TaskScores::Entities(e) => Self::Entities(e.into()),
            train::TaskScores::Answers(a) => Self::Answers(a.into()),
            train::TaskScores::Similarity(s) => Self::Similarity(s.into()),
            train::TaskScores::Labels(l) => Self::Labels(l.into()),
        }
    }
}

impl From<TaskScores> for train::TaskScores {
    fn from(s: TaskScores) -> Self {
        match s {
            TaskScores::Classes => Self::Classes,
            TaskScores::Entities(e) => Self::Entities(e.into()),
            TaskScores::Answers(a) => Self::Answers(a.into()),
            TaskScores::Similarity(m) => Self::Similarity(m.into()),
            TaskScores::Labels(l) => Self::Labels(l.into()),
        }
    }
}

/// One optimizer step of a fine-tuning run's curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepPoint {
    pub phase: Phase,
    pub step: usize,
    pub epoch: f32,
    pub loss: f32,
    pub lr: f64,
    pub grad_norm: f32,
}

impl From<train::StepPoint> for StepPoint {
    fn from(c: train::StepPoint) -> Self {
        Self { phase: c.phase.into(), step: c.step, epoch: c.epoch, loss: c.loss, lr: c.lr, grad_norm: c.grad_norm }
    }
}

impl From<StepPoint> for train::StepPoint {
    fn from(s: StepPoint) -> Self {
        Self { phase: s.phase.into(), step: s.step, epoch: s.epoch, loss: s.loss, lr: s.lr, grad_norm: s.grad_norm }
    }
}

/// One validation pass, as saved today: its task's scores in `scores`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    pub phase: Phase,
    pub step: usize,
    pub epoch: f32,
    pub train_loss: f32,
    pub train_accuracy: f32,
    pub valid_loss: f32,
    pub metrics: Metrics,
    pub scores: TaskScores,
    pub best: bool,
}

/// An [`EvalReport`] as read: today's, or an earlier build's with one optional field per task.
#[derive(Deserialize)]
struct EvalReportRead {
    phase: Phase,
    step: usize,
    epoch: f32,
    train_loss: f32,
    train_accuracy: f32,
    valid_loss: f32,
    metrics: Metrics,
    #[serde(default)]
    scores: Option<TaskScores>,
    #[serde(default)]
    entities: Option<EntityMetrics>,
    #[serde(default)]
    answers: Option<AnswerMetrics>,
    #[serde(default)]
    similarity: Option<SimilarityMetrics>,
    best: bool,
}

impl<'de> Deserialize<'de> for EvalReport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = EvalReportRead::deserialize(d)?;
        let scores = r.scores.unwrap_or_else(|| TaskScores::from_fields(r.entities, r.answers, r.similarity));
        Ok(Self { phase: r.phase, step: r.step, epoch: r.epoch, train_loss: r.train_loss, train_accuracy: r.train_accuracy, valid_loss: r.valid_loss, metrics: r.metrics, scores, best: r.best })
    }
}

impl From<train::EvalReport> for EvalReport {
    fn from(c: train::EvalReport) -> Self {
        Self {
            phase: c.phase.into(),
            step: c.step,
            epoch: c.epoch,
            train_loss: c.train_loss,
            train_accuracy: c.train_accuracy,
            valid_loss: c.valid_loss,
            metrics: c.metrics.into(),
            scores: c.scores.into(),
            best: c.best,
        }
    }
}

impl From<EvalReport> for train::EvalReport {
    fn from(s: EvalReport) -> Self {
        Self {
            phase: s.phase.into(),
            step: s.step,
            epoch: s.epoch,
            train_loss: s.train_loss,
            train_accuracy: s.train_accuracy,
            valid_loss: s.valid_loss,
            metrics: s.metrics.into(),
            scores: s.scores.into(),
            best: s.best,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(scores: train::TaskScores) -> train::EvalReport {
        let metrics = met::Metrics::new(&[0, 1, 1], &[0, 1, 0], &["a".to_string(), "b".to_string()]);
        train::EvalReport { phase: train::Phase::Full, step: 9, epoch: 1.5, train_loss: 0.4, train_accuracy: 0.8, valid_loss: 0.5, metrics, scores, best: true }
    }

    /// An evaluation saved by an earlier build (a run's curves, a checkpoint's), with each task's
    /// scores in an optional field of its own, reads as its task's variant; today's comes back
    /// as it went.
    #[test]
    fn an_evaluation_saved_with_one_field_per_task_reads_as_its_task() {
        let answers = qa::AnswerMetrics::new(&[vec!["the cat"]], &["a cat"]);
        let mut old = serde_json::to_value(EvalReport::from(report(train::TaskScores::Classes))).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("scores").expect("saved today");
        fields.insert("entities".into(), serde_json::Value::Null);
        fields.insert("answers".into(), serde_json::to_value(AnswerMetrics::from(answers.clone())).unwrap());
        let read: train::EvalReport = serde_json::from_value::<EvalReport>(old.clone()).unwrap().into();
        assert_eq!(read.scores, train::TaskScores::Answers(answers));
        assert_eq!((read.step, read.best), (9, true));
        old.as_object_mut().unwrap().remove("answers");
        let read: train::EvalReport = serde_json::from_value::<EvalReport>(old).unwrap().into();
        assert_eq!(read.scores, train::TaskScores::Classes, "a classifier's had none");

        let today = report(train::TaskScores::Similarity(sim::SimilarityMetrics::new(&[0.0, 1.0, 0.5], &[0.2, 0.9, 0.4], false)));
        let json = serde_json::to_string(&EvalReport::from(today.clone())).unwrap();
        let back: train::EvalReport = serde_json::from_str::<EvalReport>(&json).unwrap().into();
        assert_eq!(back.scores, today.scores);
    }
}
