//! The saved copy of a finished fine-tuning run (`runs::SavedRun`): its row in the runs table,
//! its summary and mistakes, its curves. Reads today's shape and the earlier one, where each
//! task kept its score, scores and mistakes in optional fields of their own. (The conversions
//! from and to `runs`' types are in `runs/to_saved.rs`: `runs` uses this layer, not the other
//! way round.)

use serde::{Deserialize, Serialize};

pub use super::choice::ChoiceMistake;
pub use super::labels::LabelSetMistake;
use super::scores::{AnswerMetrics, ClassifierMeta, EntityMetrics, EvalReport, Metrics, SimilarityMetrics, StepPoint, TaskScores};

/// A finished run: the JSON of its item (its bytes are the classifier, or its head).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedRun {
    pub record: RunRecord,
    pub summary: RunSummary,
    pub steps: Vec<StepPoint>,
    pub evals: Vec<EvalReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_on: Option<String>,
}

/// The score a run is known by in the runs table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum KnownBy {
    Accuracy,
    EntityF1(f32),
    Answers { exact: f32, f1: f32 },
    Correlations { pearson: f32, spearman: f32 },
    LabelF1 { micro: f32, macro_f1: f32 },
}

/// A run's row in the runs table, as saved today.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    pub model: String,
    pub from_scratch: bool,
    pub recipe: String,
    pub accuracy: f32,
    pub macro_f1: f32,
    pub steps: usize,
    pub seconds: f64,
    pub device: String,
    pub cancelled: bool,
    pub saved_id: Option<String>,
    pub known_by: KnownBy,
}

/// A run not ended yet (a request saved before records were sent with it).
impl Default for RunRecord {
    fn default() -> Self {
        Self {
            model: String::new(),
            from_scratch: false,
            recipe: String::new(),
            accuracy: 0.0,
            macro_f1: 0.0,
            steps: 0,
            seconds: 0.0,
            device: String::new(),
            cancelled: false,
            saved_id: None,
            known_by: KnownBy::Accuracy,
        }
    }
}

/// A [`RunRecord`] as read: today's, or an earlier build's (one optional field per task's
/// score; no `saved_id` before runs were saved).
#[derive(Deserialize)]
struct RunRecordRead {
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

impl<'de> Deserialize<'de> for RunRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = RunRecordRead::deserialize(d)?;
        let known_by = s.known_by.unwrap_or(match (s.correlations, s.answer_scores, s.entity_f1) {
            (Some((pearson, spearman)), _, _) => KnownBy::Correlations { pearson, spearman },
            (None, Some((exact, f1)), _) => KnownBy::Answers { exact, f1 },
            (None, None, Some(f1)) => KnownBy::EntityF1(f1),
            (None, None, None) => KnownBy::Accuracy,
        });
        Ok(Self {
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
        })
    }
}

/// A validation text classified wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mistake {
    pub line: usize,
    pub text: String,
    pub label: String,
    pub predicted: String,
    pub probs: Vec<f32>,
}

/// A validation sentence with a wrong tag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagMistake {
    pub line: usize,
    pub words: Vec<String>,
    pub gold: Vec<String>,
    pub predicted: Vec<String>,
}

/// A validation question answered wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerMistake {
    pub line: usize,
    pub question: String,
    pub context: String,
    pub gold: Vec<String>,
    pub predicted: String,
    pub f1: f32,
}

/// A validation pair and its predicted similarity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairMistake {
    pub line: usize,
    pub text: String,
    pub text_pair: String,
    pub gold: f32,
    pub predicted: f32,
}

/// A student's speed, and its teacher's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    pub ms_per_text: f64,
    pub teacher_ms_per_text: Option<f64>,
}

/// The validation items a run got wrong, by task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Mistakes {
    Labels(Vec<Mistake>),
    Tags(Vec<TagMistake>),
    Answers(Vec<AnswerMistake>),
    Pairs(Vec<PairMistake>),
    Choices(Vec<ChoiceMistake>),
    LabelSets(Vec<LabelSetMistake>),
}

/// What a finished run leaves, as saved today.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    pub meta: ClassifierMeta,
    pub metrics: Metrics,
    pub scores: TaskScores,
    pub mistakes: Mistakes,
    pub cancelled: bool,
    pub seconds: f64,
    pub steps: usize,
    pub device: String,
    pub speed: Option<Speed>,
}

/// A [`RunSummary`] as read: today's, or an earlier build's, which kept each task's scores and
/// mistakes in optional fields of their own.
#[derive(Deserialize)]
struct RunSummaryRead {
    meta: ClassifierMeta,
    metrics: Metrics,
    #[serde(default)]
    scores: Option<TaskScores>,
    mistakes: MistakesRead,
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
enum MistakesRead {
    Today(Mistakes),
    Labels(Vec<Mistake>),
}

impl<'de> Deserialize<'de> for RunSummary {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = RunSummaryRead::deserialize(d)?;
        let scores = s.scores.unwrap_or_else(|| TaskScores::from_fields(s.entities, s.answers, s.similarity));
        let mistakes = match s.mistakes {
            MistakesRead::Today(m) => m,
            MistakesRead::Labels(m) if !m.is_empty() => Mistakes::Labels(m),
            MistakesRead::Labels(_) if !s.tag_mistakes.is_empty() => Mistakes::Tags(s.tag_mistakes),
            MistakesRead::Labels(_) if !s.answer_mistakes.is_empty() => Mistakes::Answers(s.answer_mistakes),
            MistakesRead::Labels(_) if !s.pair_mistakes.is_empty() => Mistakes::Pairs(s.pair_mistakes),
            MistakesRead::Labels(_) if !s.choice_mistakes.is_empty() => Mistakes::Choices(s.choice_mistakes),
            MistakesRead::Labels(m) => Mistakes::Labels(m),
        };
        Ok(Self { meta: s.meta, metrics: s.metrics, scores, mistakes, cancelled: s.cancelled, seconds: s.seconds, steps: s.steps, device: s.device, speed: s.speed })
    }
}
