//! What earlier builds saved, read as today's types: a run's request, summary or record in its
//! current form or in the earlier one, where each task kept its data, scores and mistakes in
//! optional fields of their own.

use serde::Deserialize;

use super::*;

/// A [`TrainRequest`] as a checkpoint saved it: today's, or an earlier build's, which kept the
/// texts in `train` and `valid` and every other task's data in an optional field of its own
/// (and may lack fields added since: they take their defaults).
#[derive(Deserialize)]
pub(super) struct SavedTrainRequest {
    #[serde(deserialize_with = "bertbench_core::train::config_with_defaults")]
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
    questions: Option<QaRequest>,
    #[serde(default)]
    pairs: Option<PairRequest>,
    #[serde(default)]
    choices: Option<ChoiceRequest>,
}

impl From<SavedTrainRequest> for TrainRequest {
    fn from(s: SavedTrainRequest) -> Self {
        let data = match (s.data, s.tagged, s.questions, s.pairs, s.choices) {
            (Some(data), ..) => data,
            (None, Some(t), ..) => RunData::Tagged(t),
            (None, _, Some(q), ..) => RunData::Questions(q),
            (None, _, _, Some(p), _) => RunData::Pairs(p),
            (None, _, _, _, Some(c)) => RunData::Choices(c),
            (None, None, None, None, None) => RunData::Texts { train: s.train, valid: s.valid },
        };
        TrainRequest {
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
        }
    }
}

/// A [`RunSummary`] as saved with a run: today's, or an earlier build's, which kept each task's
/// scores and mistakes in optional fields of their own.
#[derive(Deserialize)]
pub(super) struct SavedRunSummary {
    meta: ClassifierMeta,
    metrics: Metrics,
    #[serde(default)]
    scores: Option<TaskScores>,
    mistakes: SavedMistakes,
    cancelled: bool,
    seconds: f64,
    steps: usize,
    device: String,
    #[serde(default)]
    speed: Option<Speed>,
    #[serde(default)]
    entities: Option<EntityMetrics>,
    #[serde(default)]
    tag_mistakes: Vec<TagMistake>,
    #[serde(default)]
    answers: Option<AnswerMetrics>,
    #[serde(default)]
    answer_mistakes: Vec<AnswerMistake>,
    #[serde(default)]
    similarity: Option<SimilarityMetrics>,
    #[serde(default)]
    pair_mistakes: Vec<PairMistake>,
    #[serde(default)]
    choice_mistakes: Vec<ChoiceMistake>,
}

/// Today's mistakes, or an earlier build's list of texts classified wrong.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum SavedMistakes {
    Today(Mistakes),
    Labels(Vec<Mistake>),
}

impl From<SavedRunSummary> for RunSummary {
    fn from(s: SavedRunSummary) -> Self {
        let scores = s.scores.unwrap_or_else(|| TaskScores::from_fields(s.entities, s.answers, s.similarity));
        let mistakes = match s.mistakes {
            SavedMistakes::Today(m) => m,
            SavedMistakes::Labels(m) if !m.is_empty() => Mistakes::Labels(m),
            SavedMistakes::Labels(_) if !s.tag_mistakes.is_empty() => Mistakes::Tags(s.tag_mistakes),
            SavedMistakes::Labels(_) if !s.answer_mistakes.is_empty() => Mistakes::Answers(s.answer_mistakes),
            SavedMistakes::Labels(_) if !s.pair_mistakes.is_empty() => Mistakes::Pairs(s.pair_mistakes),
            SavedMistakes::Labels(_) if !s.choice_mistakes.is_empty() => Mistakes::Choices(s.choice_mistakes),
            SavedMistakes::Labels(m) => Mistakes::Labels(m),
        };
        RunSummary { meta: s.meta, metrics: s.metrics, scores, mistakes, cancelled: s.cancelled, seconds: s.seconds, steps: s.steps, device: s.device, speed: s.speed }
    }
}

/// A [`RunRecord`] as saved: today's, or an earlier build's (one optional field per task's score;
/// no `saved_id` before runs were saved).
#[derive(Deserialize)]
pub(super) struct SavedRunRecord {
    model: String,
    from_scratch: bool,
    recipe: String,
    accuracy: f32,
    macro_f1: f32,
    steps: usize,
    seconds: f64,
    device: String,
    cancelled: bool,
    #[serde(default)]
    saved_id: Option<String>,
    #[serde(default)]
    known_by: Option<KnownBy>,
    #[serde(default)]
    entity_f1: Option<f32>,
    #[serde(default)]
    answer_scores: Option<(f32, f32)>,
    #[serde(default)]
    correlations: Option<(f32, f32)>,
}

impl From<SavedRunRecord> for RunRecord {
    fn from(s: SavedRunRecord) -> Self {
        let known_by = s.known_by.unwrap_or(match (s.correlations, s.answer_scores, s.entity_f1) {
            (Some((pearson, spearman)), _, _) => KnownBy::Correlations { pearson, spearman },
            (None, Some((exact, f1)), _) => KnownBy::Answers { exact, f1 },
            (None, None, Some(f1)) => KnownBy::EntityF1(f1),
            (None, None, None) => KnownBy::Accuracy,
        });
        RunRecord {
            model: s.model,
            from_scratch: s.from_scratch,
            recipe: s.recipe,
            accuracy: s.accuracy,
            macro_f1: s.macro_f1,
            steps: s.steps,
            seconds: s.seconds,
            device: s.device,
            cancelled: s.cancelled,
            saved_id: s.saved_id,
            known_by,
        }
    }
}
