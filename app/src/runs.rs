//! What a run is given, what it reports, and what it leaves: the plain data that the page, the
//! worker and the browser's storage share. Nothing here touches JavaScript, so it is tested
//! natively; the messages that carry these values are in `protocol.rs`.
//!
//! A run is one task's training: fine-tuning a classifier ([`TrainRequest`], [`TrainEvent`],
//! [`RunSummary`], saved as a [`SavedRun`]) or MLM pretraining in the lab ([`LabRequest`],
//! [`LabEvent`], saved as a [`SavedLab`]). The worker saves a finished run itself, from the record
//! the page gave it when the run started.

use bertbench_core::bert::config::{BertConfig, Preset};
use bertbench_core::bert::family::Family;
use bertbench_core::tasks::classification::ClassifierMeta;
use bertbench_core::tasks::metrics::Metrics;
use bertbench_core::tasks::pretraining::MaskFill;
use bertbench_core::train::{EvalReport, FineTuneConfig, Phase, PretrainConfig, PretrainStep, ShownToken, StepPoint, TaskScores};
use serde::{Deserialize, Serialize};

use crate::saved as saved_copy;
use crate::saved::Versioned;
use crate::store::{Item, Kind};

mod data;
mod to_saved;

pub use data::{AnswerMistake, ChoiceMistake, ChoiceRequest, Encoding, Kept, LabelSetMistake, LabelSetRequest, Mistake, PairMistake, PairRequest, QaRequest, RunData, TagMistake, TaggedRequest, TaskData, TextRequest};

/// The saved-item fixtures, for the tests of the other saved values (studio, lab).
#[cfg(test)]
pub(crate) mod to_saved_fixtures {
    pub(crate) use super::saved_by_an_earlier_build::fixture as earlier_items;
    pub(crate) use super::to_saved::tests::{todays_items, versioned};
}

/// Where a model runs or trains: the page's model, a run in the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Backend {
    /// burn's `flex` backend in WebAssembly.
    Cpu,
    /// WebGPU through burn-wgpu.
    WebGpu,
}

impl Backend {
    /// Name for the page.
    pub fn label(self) -> &'static str {
        match self {
            Backend::WebGpu => "WebGPU",
            Backend::Cpu => "CPU",
        }
    }
}

/// A fine-tuning run to start.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "saved_copy::train::TrainRequest", from = "saved_copy::train::TrainRequest")]
pub struct TrainRequest {
    /// Hyper-parameters.
    pub config: FineTuneConfig,
    /// Label names in id order.
    pub labels: Vec<String>,
    /// Its training and validation data.
    pub data: RunData,
    /// Longest input in tokens.
    pub max_len: usize,
    /// Where to compute.
    pub backend: Backend,
    /// Runs with seeds `seed`, `seed + 1`, …; the best validation accuracy is kept.
    pub restarts: usize,
    /// Start the encoder from random weights of the same shape (a baseline without pretraining).
    pub from_scratch: bool,
    /// The run's row in the runs table, its results still empty: the worker fills them in and
    /// saves the finished run with it.
    pub record: RunRecord,
    /// The base model can be opened again in this browser (one of the page's own, or the
    /// user's own kept here): a head-only run is then saved as its head alone.
    pub base_kept: bool,
    /// A student's run: the model keeps this many of its layers, spaced evenly
    /// (`distillation::spaced_layers`), and, where the configuration distils, learns the
    /// worker's current classifier's probabilities too.
    pub keep_layers: Option<usize>,
}

impl TrainRequest {
    /// The base model a finished run's head can be saved on alone: a head-only run leaves the
    /// encoder as it was, so the head and the base's name are the whole classifier. A bi-encoder
    /// (a sentence-transformers folder) is saved whole.
    pub fn head_on(&self) -> Option<String> {
        let head_only = self.config.mode == bertbench_core::train::TrainMode::HeadOnly && !self.from_scratch && self.base_kept && self.keep_layers.is_none();
        let bi_encoder = self.config.features.level == bertbench_core::tasks::classification::Level::Embedding;
        (head_only && !bi_encoder).then(|| self.record.model.clone())
    }
}

/// A search of a list of texts with a query, and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// The best texts, best first: their index in the list and their similarity (0..1).
    pub ranked: Vec<(usize, f32)>,
    /// Texts searched.
    pub texts: usize,
    /// Encoder passes (texts or pairs through the model) this query took.
    pub passes: usize,
    /// This query's seconds, the texts' encoding aside.
    pub seconds: f64,
    /// A bi-encoder's encoding of the list, when this query did it (the list is encoded once
    /// and kept for the next queries).
    pub index_seconds: Option<f64>,
}

/// A fine-tuning event, as the page draws it (it crosses from the worker as
/// `protocol::events::TrainEvent`).
#[derive(Debug, Clone)]
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

/// The validation items a finished run got wrong, as its task shows them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Mistakes {
    /// Texts (or pairs of texts) classified wrong, most confident first.
    Labels(Vec<Mistake>),
    /// A tagger's sentences with a wrong tag, most wrong tags first.
    Tags(Vec<TagMistake>),
    /// A question-answering model's wrong answers, lowest F1 first.
    Answers(Vec<AnswerMistake>),
    /// A similarity model's every pair with its prediction, furthest off first.
    Pairs(Vec<PairMistake>),
    /// A multiple-choice model's questions answered wrong, most confident first.
    Choices(Vec<ChoiceMistake>),
    /// A multi-label model's texts whose labels it did not give exactly, surest first.
    LabelSets(Vec<LabelSetMistake>),
}

impl Default for Mistakes {
    fn default() -> Self {
        Mistakes::Labels(Vec::new())
    }
}

impl Mistakes {
    /// Texts classified wrong (none for another task).
    pub fn labels(&self) -> &[Mistake] {
        if let Mistakes::Labels(m) = self { m } else { &[] }
    }

    /// A tagger's sentences with a wrong tag.
    pub fn tags(&self) -> &[TagMistake] {
        if let Mistakes::Tags(m) = self { m } else { &[] }
    }

    /// A question-answering model's wrong answers.
    pub fn answers(&self) -> &[AnswerMistake] {
        if let Mistakes::Answers(m) = self { m } else { &[] }
    }

    /// A similarity model's pairs.
    pub fn pairs(&self) -> &[PairMistake] {
        if let Mistakes::Pairs(m) = self { m } else { &[] }
    }
}

/// What a finished (or cancelled) fine-tuning run leaves.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "saved_copy::run::RunSummary", from = "saved_copy::run::RunSummary")]
pub struct RunSummary {
    /// Labels, features, length.
    pub meta: ClassifierMeta,
    /// Validation metrics of the kept weights.
    pub metrics: Metrics,
    /// The task's own scores of the kept weights (entity F1, exact match and F1, correlations).
    pub scores: TaskScores,
    /// The validation items it got wrong.
    pub mistakes: Mistakes,
    /// Whether the run was cancelled before its end.
    pub cancelled: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Optimizer steps done.
    pub steps: usize,
    /// Where it trained ("CPU" or "WebGPU · adapter").
    pub device: String,
    /// A student's: how fast it and its teacher classify (none for other runs).
    pub speed: Option<Speed>,
}

/// How fast a student and its teacher classify the validation texts, in the worker, on the
/// devices they trained on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    /// Milliseconds per text, the student's.
    pub ms_per_text: f64,
    /// The same, its teacher's (a student that learned from one).
    pub teacher_ms_per_text: Option<f64>,
}

/// The score a run is known by in the runs table, beyond its accuracy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub enum KnownBy {
    /// Its accuracy: a classifier's, a tagger's without BIO tags, any other task's that scores
    /// by accuracy.
    #[default]
    Accuracy,
    /// A BIO tagger's entity F1 (micro).
    EntityF1(f32),
    /// A question-answering model's exact match and F1.
    Answers { exact: f32, f1: f32 },
    /// A similarity model's Pearson and Spearman correlations.
    Correlations { pearson: f32, spearman: f32 },
    /// A multi-label classifier's micro and macro F1 at its chosen threshold.
    LabelF1 { micro: f32, macro_f1: f32 },
}

impl KnownBy {
    fn of(scores: &TaskScores) -> Self {
        match scores {
            TaskScores::Classes => KnownBy::Accuracy,
            TaskScores::Entities(e) => KnownBy::EntityF1(e.f1),
            TaskScores::Answers(a) => KnownBy::Answers { exact: a.all.exact, f1: a.all.f1 },
            TaskScores::Similarity(m) => KnownBy::Correlations { pearson: m.pearson, spearman: m.spearman },
            TaskScores::Labels(l) => KnownBy::LabelF1 { micro: l.micro_f1, macro_f1: l.macro_f1 },
        }
    }
}

/// One ended fine-tuning run, as the comparison table shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "saved_copy::run::RunRecord", from = "saved_copy::run::RunRecord")]
pub struct RunRecord {
    /// The page's model when the run started.
    pub model: String,
    /// Whether the encoder started from random weights instead of the model's.
    pub from_scratch: bool,
    /// Training mode and its epochs, in words.
    pub recipe: String,
    /// Validation accuracy of the kept weights.
    pub accuracy: f32,
    /// Validation macro-F1 of the kept weights.
    pub macro_f1: f32,
    /// Optimizer steps.
    pub steps: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Where it ran.
    pub device: String,
    /// Whether it was cancelled before its end.
    pub cancelled: bool,
    /// Its key in the browser's saved work, once saved.
    pub saved_id: Option<String>,
    /// The task's own score of the kept weights.
    pub known_by: KnownBy,
}

impl RunRecord {
    /// The record of a run that starts now; its results are filled in when it ends.
    pub fn starting(model: String, from_scratch: bool, recipe: String) -> Self {
        Self { model, from_scratch, recipe, ..Self::default() }
    }

    /// The score it is known by: a similarity model's Spearman correlation, a question-answering
    /// model's F1, a tagger's entity F1, a multi-label classifier's micro-F1, or a classifier's
    /// accuracy.
    pub fn score(&self) -> String {
        match self.known_by {
            KnownBy::Correlations { spearman, .. } => format!("Spearman {spearman:.3}"),
            KnownBy::Answers { f1, .. } => format!("F1 {:.1}%", f1 * 100.0),
            KnownBy::EntityF1(f1) => format!("entity F1 {f1:.3}"),
            KnownBy::LabelF1 { micro, .. } => format!("micro-F1 {micro:.3}"),
            KnownBy::Accuracy => format!("{:.1}%", self.accuracy * 100.0),
        }
    }

    /// This record with the results of `summary`.
    pub fn finished(self, summary: &RunSummary) -> Self {
        Self {
            accuracy: summary.metrics.accuracy,
            macro_f1: summary.metrics.macro_f1,
            steps: summary.steps,
            seconds: summary.seconds,
            device: summary.device.clone(),
            cancelled: summary.cancelled,
            known_by: KnownBy::of(&summary.scores),
            ..self
        }
    }
}

/// A finished fine-tuning run as saved (the JSON of its item; the bytes are the classifier's zip).
/// Written and read as its saved copy, `saved::run::SavedRun`, with the format's version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Versioned<saved_copy::run::SavedRun>", from = "Versioned<saved_copy::run::SavedRun>")]
pub struct SavedRun {
    /// Its row in the runs table.
    pub record: RunRecord,
    /// Metrics and mistakes.
    pub summary: RunSummary,
    /// Training-loss points (thinned).
    pub steps: Vec<StepPoint>,
    /// Every evaluation.
    pub evals: Vec<EvalReport>,
    /// The base model when the run is saved as its head alone (a head-only run: its bytes are
    /// `config.json` and the head, `classification::export_head`); `None`: the bytes are the
    /// whole classifier as a zip.
    pub head_on: Option<String>,
}

impl SavedRun {
    /// The run as an item saved at `saved_ms` (its bytes, the classifier, are written with it):
    /// the record's `saved_id` is the item's id.
    pub fn item(mut self, saved_ms: f64) -> (Item, Self) {
        let id = format!("run:{saved_ms:.0}");
        self.record.saved_id = Some(id.clone());
        let r = &self.record;
        let item = Item {
            id,
            kind: Kind::Run,
            name: format!("{} · {} · {}", r.model, r.recipe, r.score()),
            saved_ms,
            size: 0,
            json: serde_json::to_string(&self).unwrap_or_default(),
        };
        (item, self)
    }
}

/// What one backend took for the probe's work, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// A forward pass of `texts` texts.
    pub forward_ms: f64,
    /// One full fine-tuning step on as many texts; `None` where it did not finish in time.
    pub step_ms: Option<f64>,
}

/// Where the MLM lab's vocabulary comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LabVocab {
    /// The pretrained model's WordPiece vocabulary.
    Pretrained,
    /// A WordPiece vocabulary of this many pieces, trained on the corpus.
    Train(usize),
}

/// The lab's settings and corpus choice as the page holds them, saved with the lab's settings
/// and with every lab model. Sent to the worker, and saved, as its saved copy
/// (`saved::lab::LabSettings`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Versioned<saved_copy::lab::LabSettings>", from = "Versioned<saved_copy::lab::LabSettings>")]
pub struct LabSettings {
    pub corpus_name: String,
    pub vocab: LabVocab,
    /// Preset size (`bert-tiny`, ...), unless continuing the pretrained model.
    pub preset: String,
    /// Continue pretraining the page's model instead of starting from scratch.
    pub continue_pretrained: bool,
    /// From scratch: one layer's weights shared by every layer (ALBERT), see
    /// [`scratch_config`]. Absent (false) in settings saved before it was offered.
    pub share_layers: bool,
    /// Hyper-parameters, masking and pair task.
    pub config: PretrainConfig,
    /// Probe sentences, one per line, each with `[MASK]`.
    pub probes: String,
    /// Steps between probe evaluations.
    pub probe_every: usize,
    pub backend: Backend,
}

impl LabSettings {
    /// The probe sentences (non-empty lines).
    pub fn probe_lines(&self) -> Vec<String> {
        self.probes.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
    }

    /// The model a run from scratch builds over `vocab_size` pieces ([`scratch_config`]).
    pub fn scratch_config(&self, vocab_size: usize) -> Result<BertConfig, String> {
        scratch_config(&self.preset, self.share_layers, self.config.max_len, vocab_size)
    }
}

/// The model the lab builds from scratch: preset `preset`'s size over `vocab_size` pieces, with
/// a position for each of the `max_len` tokens it trains on (16 at least). With `share_layers`,
/// an ALBERT of the same depth: one layer's weights serve every layer. Its embeddings are as
/// wide as its layers, not ALBERT's narrower factorised ones, so that it differs from the BERT
/// of the same size in the sharing alone (ALBERT still projects the embeddings into the encoder:
/// one hidden × hidden matrix more).
pub fn scratch_config(preset: &str, share_layers: bool, max_len: usize, vocab_size: usize) -> Result<BertConfig, String> {
    let preset = Preset::ALL.into_iter().find(|p| p.name() == preset).ok_or_else(|| format!("unknown model size {preset}"))?;
    let config = preset.config(vocab_size).with_max_position_embeddings(max_len.max(16));
    Ok(if share_layers {
        let width = config.hidden_size;
        config.with_model_type(Family::Albert).with_embedding_size(Some(width))
    } else {
        config
    })
}

/// An MLM-lab run to start.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabRequest {
    /// The settings (the vocabulary is ignored when continuing: the pretrained model keeps its own).
    pub settings: LabSettings,
    /// The corpus, one sentence or paragraph per line, in reading order.
    pub lines: Vec<String>,
}

/// Progress of an MLM-lab run (it crosses from the worker as `protocol::events::LabEvent`).
#[derive(Debug, Clone)]
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

/// A lab model as saved: the JSON of its item. The bytes are its files in [`LAB_FILES`] order,
/// then the corpus (kept out of the JSON, which every listing reads). Written and read as its
/// saved copy, `saved::lab::SavedLab`, with the format's version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Versioned<saved_copy::lab::SavedLab>", from = "Versioned<saved_copy::lab::SavedLab>")]
pub struct SavedLab {
    /// Corpus name and settings of the run.
    pub settings: LabSettings,
    pub vocab_info: Option<(usize, bool, Vec<String>)>,
    pub ready: Option<(usize, usize)>,
    pub preview: Vec<Vec<ShownToken>>,
    /// Every step (thinned beyond [`MAX_SAVED_STEPS`]).
    pub steps: Vec<PretrainStep>,
    pub probe_results: Vec<(usize, Vec<(String, Vec<MaskFill>)>)>,
    pub cancelled: bool,
    /// Steps done.
    pub done: usize,
    pub seconds: f64,
}

impl SavedLab {
    /// A run of `settings` that has not reported anything yet.
    pub fn starting(settings: LabSettings) -> Self {
        Self {
            settings,
            vocab_info: None,
            ready: None,
            preview: Vec::new(),
            steps: Vec::new(),
            probe_results: Vec::new(),
            cancelled: false,
            done: 0,
            seconds: 0.0,
        }
    }

    /// Takes in what `event` reports.
    pub fn record(&mut self, event: &LabEvent) {
        match event {
            LabEvent::Vocab { size, trained, sample } => self.vocab_info = Some((*size, *trained, sample.clone())),
            LabEvent::Ready { params, total_steps, preview } => {
                self.ready = Some((*params, *total_steps));
                self.preview = preview.clone();
            }
            LabEvent::Step(s) => self.steps.push(*s),
            LabEvent::Probes { step, fills } => self.probe_results.push((*step, fills.clone())),
        }
    }

    /// The finished run (`cancelled`, `done` steps in `seconds`) as an item saved at `saved_ms`,
    /// its curves thinned.
    pub fn item(mut self, cancelled: bool, done: usize, seconds: f64, saved_ms: f64) -> Item {
        self.steps = thin(std::mem::take(&mut self.steps));
        let s = &self.settings;
        let model = match (s.continue_pretrained, s.share_layers) {
            (true, _) => "continued pretraining".to_string(),
            (false, _) if s.config.electra() => format!("{} ELECTRA discriminator", s.preset),
            (false, true) => format!("{} (one shared layer)", s.preset),
            (false, false) => s.preset.clone(),
        };
        // The objective beside masked words, so two saved models of the same corpus tell apart.
        let model = match s.config.pair_task {
            Some(bertbench_core::tasks::masking::PairTask::Nsp) => format!("{model} + NSP"),
            Some(bertbench_core::tasks::masking::PairTask::Sop) => format!("{model} + SOP"),
            None => model,
        };
        let loss = self.steps.last().map(|s| match s.rtd_loss {
            Some(rtd) => format!(" · replaced-token loss {rtd:.3}"),
            None => format!(" · MLM loss {:.2}", s.mlm_loss),
        });
        let loss = loss.unwrap_or_default();
        let name = format!("{model} · {} · {done} steps{loss}", s.corpus_name);
        let saved = Self { cancelled, done, seconds, ..self };
        Item { id: format!("lab:{saved_ms:.0}"), kind: Kind::LabModel, name, saved_ms, size: 0, json: serde_json::to_string(&saved).unwrap_or_default() }
    }
}

/// The files of a saved lab model, in the order of its item's bytes (an absent one is empty).
pub const LAB_FILES: [&str; 4] = ["config.json", "model.safetensors", "tokenizer.json", "vocab.txt"];

/// The key of the one saved checkpoint: the run in progress.
pub const CHECKPOINT_ID: &str = "checkpoint";

/// What a saved checkpoint says about its run (the JSON of its [`Item`]); the bytes are the
/// files of the current restart's snapshot, then those of the best earlier restart's. Written and
/// read as its saved copy, `saved::train::CheckpointMeta`, with the format's version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(into = "Versioned<saved_copy::train::CheckpointMeta>", from = "Versioned<saved_copy::train::CheckpointMeta>")]
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

/// At most this many steps of a run's curves are kept with a saved run or lab model.
pub const MAX_SAVED_STEPS: usize = 2000;

/// `steps` thinned evenly to at most [`MAX_SAVED_STEPS`] (every k-th, the last always kept), so a
/// saved run's curves keep their shape and their end at a bounded size.
pub fn thin<T>(steps: Vec<T>) -> Vec<T> {
    if steps.len() <= MAX_SAVED_STEPS {
        return steps;
    }
    let every = steps.len().div_ceil(MAX_SAVED_STEPS);
    let last = steps.len() - 1;
    steps.into_iter().enumerate().filter(|(i, _)| i % every == 0 || *i == last).map(|(_, s)| s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::data::Example;
    use bertbench_core::tasks::tagging::EntityMetrics;
    use bertbench_core::train::TrainMode;

    fn example(text: &str, label: &str, line: usize) -> Example {
        Example { text: text.into(), text_pair: None, label: label.into(), line }
    }

    fn request() -> TrainRequest {
        TrainRequest {
            config: FineTuneConfig::new().with_mode(TrainMode::FreezeThenUnfreeze).with_epochs(3),
            labels: vec!["neg".into(), "pos".into()],
            data: RunData::Texts(TextRequest { train: vec![example("a fine day", "pos", 2)], valid: vec![example("a dull day", "neg", 3)] }),
            max_len: 64,
            backend: Backend::Cpu,
            restarts: 2,
            from_scratch: false,
            base_kept: true,
            record: RunRecord::starting("bert-tiny".into(), false, "freeze, then unfreeze".into()),
            keep_layers: None,
        }
    }

    /// A question-answering run's questions cross as JSON whole, and its record is known by its
    /// F1 (its accuracy, answered or not, means nothing to the person).
    #[test]
    fn a_question_answering_request_and_record_keep_their_answers() {
        let data = bertbench_core::data::parse_qa(
            br#"{"id": "q1", "question": "Who?", "context": "Tom fed it.", "answers": {"text": ["Tom"], "answer_start": [0]}}"#,
            Some("q.jsonl"),
        )
        .unwrap();
        let request = TrainRequest { data: RunData::Questions(QaRequest { train: data.items.clone(), valid: data.items.clone() }), ..request() };
        let back: TrainRequest = serde_json::from_str(&serde_json::to_string(&request).unwrap()).unwrap();
        let RunData::Questions(q) = back.data else { panic!("a question-answering run's data") };
        assert_eq!(q.valid, data.items);
        let record = RunRecord { accuracy: 0.9, known_by: KnownBy::Answers { exact: 0.5, f1: 0.625 }, ..RunRecord::default() };
        assert_eq!(record.score(), "F1 62.5%");
        assert_eq!(RunRecord { accuracy: 0.9, ..RunRecord::default() }.score(), "90.0%");
        let known_by = KnownBy::Correlations { pearson: 0.8, spearman: 0.8512 };
        assert_eq!(RunRecord { accuracy: 0.9, known_by, ..RunRecord::default() }.score(), "Spearman 0.851");
    }

    /// Requests cross `postMessage` as JSON, and checkpoints keep them as JSON: every field
    /// survives the trip.
    #[test]
    fn a_train_request_goes_to_the_worker_and_back_unchanged() {
        let json = serde_json::to_string(&request()).unwrap();
        let back: TrainRequest = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert_eq!(back.config.mode, TrainMode::FreezeThenUnfreeze);
        let RunData::Texts(TextRequest { valid, .. }) = &back.data else { panic!("texts") };
        assert_eq!(valid[0].line, 3);
        assert_eq!(back.record.model, "bert-tiny");
    }

    /// A checkpoint saved by an older version, whose settings lack a field added since (and
    /// which had no record, and a run id inside), still resumes: the field takes its default.
    #[test]
    fn a_request_saved_before_a_setting_existed_still_reads() {
        let mut value = serde_json::to_value(request()).unwrap();
        value["config"].as_object_mut().unwrap().remove("group_by_length").expect("the field is saved today");
        value.as_object_mut().unwrap().remove("record");
        value.as_object_mut().unwrap().insert("run".into(), 7.into());
        let back: TrainRequest = serde_json::from_value(value).unwrap();
        assert_eq!(back.config.group_by_length, FineTuneConfig::new().group_by_length);
        assert_eq!(back.config.epochs, 3);
        assert_eq!(back.record, RunRecord::default());
    }

    /// A request an earlier build saved in a checkpoint, with a texts' run's examples in
    /// `train` and `valid` and every other task's data in an optional field of its own, reads
    /// as its task's data.
    #[test]
    fn a_request_saved_with_one_field_per_task_reads_as_its_task() {
        let mut value = serde_json::to_value(request()).unwrap();
        let fields = value.as_object_mut().unwrap();
        fields.remove("data").expect("saved today");
        let texts = serde_json::json!([
            {"text": "a fine day", "text_pair": null, "label": "pos", "line": 2},
            {"text": "a sad day", "text_pair": null, "label": "neg", "line": 5},
        ]);
        fields.insert("train".into(), texts);
        fields.insert("valid".into(), serde_json::json!([]));
        for task in ["tagged", "questions", "pairs", "choices"] {
            fields.insert(task.into(), serde_json::Value::Null);
        }
        let back: TrainRequest = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(back.data.counts(), (2, 0));
        assert!(matches!(back.data, RunData::Texts(_)));
        value["pairs"] = serde_json::json!({"train": [], "valid": [{"line": 2, "text": "a", "text_pair": "b", "score": 0.5, "raw": "2.5"}]});
        value["train"] = serde_json::json!([]);
        let back: TrainRequest = serde_json::from_value(value).unwrap();
        assert!(matches!(&back.data, RunData::Pairs(p) if p.valid.len() == 1));
    }

    /// The checkpoint of a run in progress, as an earlier build saved it in IndexedDB
    /// (`record_saved_items.mjs --checkpoint`: full fine-tuning of bert-tiny, interrupted after
    /// its first checkpoint), reads with today's types: the item, what it says about its run, and
    /// the run's state that resuming reads first. Its weights are safetensors files.
    #[test]
    fn a_checkpoint_saved_by_an_earlier_build_still_reads() {
        let fixture: serde_json::Value = serde_json::from_str(include_str!("../../tests/fixtures/saved-items/checkpoint.json")).unwrap();
        let item: Item = serde_json::from_str(fixture["item"].as_str().unwrap()).unwrap();
        assert_eq!((item.id.as_str(), item.kind), (CHECKPOINT_ID, Kind::Checkpoint));
        let meta: CheckpointMeta = serde_json::from_str(&item.json).unwrap();
        assert_eq!(meta.base_model, "bert-tiny");
        assert_eq!((meta.step, meta.total_steps, meta.phase), (3, 120, Phase::Full));
        assert_eq!(meta.request.config.mode, bertbench_core::train::TrainMode::Full);
        assert_eq!(meta.request.labels, ["negative", "positive"]);
        assert_eq!(meta.files, ["state.json", "model.safetensors", "optimizer.safetensors"]);
        let state: bertbench_core::train::TrainState = serde_json::from_str(fixture["state"].as_str().unwrap()).unwrap();
        assert_eq!((state.step, state.total_steps), (meta.step, meta.total_steps));
        assert_eq!(state.examples, meta.request.data.counts());
        assert!(state.with_optimizer && meta.with_optimizer);
        assert_eq!(state.best_task.best_scores, bertbench_core::train::TaskScores::Classes, "a classifier's, saved as one field per task");
        let (best, probs) = state.best.expect("the first epoch's evaluation is the best so far");
        assert_eq!(probs.len(), meta.request.data.counts().1);
        assert_eq!(best.count, meta.request.data.counts().1);
    }

    #[test]
    fn short_curves_are_kept_whole_and_long_ones_thinned_to_the_bound_with_their_end() {
        let short: Vec<usize> = (0..MAX_SAVED_STEPS).collect();
        assert_eq!(thin(short.clone()), short);
        let long: Vec<usize> = (0..5 * MAX_SAVED_STEPS + 7).collect();
        let thinned = thin(long.clone());
        assert!(thinned.len() <= MAX_SAVED_STEPS + 1, "{}", thinned.len());
        assert_eq!(thinned.first(), Some(&0));
        assert_eq!(thinned.last(), long.last());
        let gaps: Vec<usize> = thinned.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps[..gaps.len() - 1].iter().all(|&g| g == gaps[0]), "evenly spaced but for the last");
    }

    fn summary(accuracy: f32) -> RunSummary {
        let metrics = Metrics { accuracy, macro_f1: accuracy - 0.1, per_class: Vec::new(), confusion: Vec::new(), count: 8 };
        RunSummary {
            meta: ClassifierMeta { labels: vec!["neg".into(), "pos".into()], spec: Default::default(), max_len: 64, scale: None, problem: None, threshold: None },
            metrics,
            scores: TaskScores::Classes,
            mistakes: Mistakes::default(),
            cancelled: true,
            seconds: 12.5,
            steps: 40,
            device: "CPU".into(),
            speed: None,
        }
    }

    /// A run's record and summary as an earlier build saved them, each task's score and
    /// mistakes in optional fields of their own, read as today's per-task variants; today's
    /// go and come back unchanged.
    #[test]
    fn a_run_saved_with_one_field_per_task_reads_as_its_task() {
        let mut record = serde_json::to_value(RunRecord { model: "m".into(), ..RunRecord::default() }).unwrap();
        let fields = record.as_object_mut().unwrap();
        fields.remove("known_by").expect("saved today");
        fields.remove("saved_id");
        fields.insert("answer_scores".into(), serde_json::json!([0.5, 0.625]));
        fields.insert("entity_f1".into(), serde_json::Value::Null);
        let old: RunRecord = serde_json::from_value(record.clone()).unwrap();
        assert_eq!(old.known_by, KnownBy::Answers { exact: 0.5, f1: 0.625 });
        record.as_object_mut().unwrap().insert("correlations".into(), serde_json::json!([0.8, 0.85]));
        let old: RunRecord = serde_json::from_value(record).unwrap();
        assert_eq!(old.known_by, KnownBy::Correlations { pearson: 0.8, spearman: 0.85 }, "a similarity run's correlations came first");

        let mut summary_json = serde_json::to_value(summary(0.5)).unwrap();
        let fields = summary_json.as_object_mut().unwrap();
        fields.remove("scores").expect("saved today");
        fields.insert("mistakes".into(), serde_json::json!([]));
        let tag = TagMistake { line: 4, words: vec!["Paris".into()], gold: vec!["B-LOC".into()], predicted: vec!["O".into()] };
        fields.insert("tag_mistakes".into(), serde_json::to_value(vec![tag.clone()]).unwrap());
        let entities = EntityMetrics::new(&[vec!["B-LOC".to_string()]], &[vec!["O".to_string()]]);
        fields.insert("entities".into(), serde_json::to_value(&entities).unwrap());
        fields.insert("answers".into(), serde_json::Value::Null);
        let old: RunSummary = serde_json::from_value(summary_json).unwrap();
        assert_eq!(old.scores, TaskScores::Entities(entities));
        assert_eq!(old.mistakes.tags().len(), 1);
        assert_eq!(old.mistakes.tags()[0].line, 4);
        assert!(old.mistakes.labels().is_empty());

        let today = RunSummary { mistakes: Mistakes::Tags(vec![tag]), ..old };
        let back: RunSummary = serde_json::from_str(&serde_json::to_string(&today).unwrap()).unwrap();
        assert_eq!((back.scores, back.mistakes.tags().len()), (today.scores, 1));
    }

    /// A finished run saved by the worker comes back as the page showed it: the record's
    /// results are the summary's, and its `saved_id` is its item's id.
    #[test]
    fn a_saved_run_carries_its_results_and_its_own_id() {
        let record = request().record.finished(&summary(0.875));
        assert_eq!((record.accuracy, record.steps, record.cancelled, record.device.as_str()), (0.875, 40, true, "CPU"));
        assert_eq!(record.model, "bert-tiny");
        let saved = SavedRun { record, summary: summary(0.875), steps: Vec::new(), evals: Vec::new(), head_on: None };
        let (item, saved) = saved.item(1234.0);
        assert_eq!(item.id, "run:1234");
        assert_eq!(item.kind, Kind::Run);
        assert_eq!(item.name, "bert-tiny · freeze, then unfreeze · 87.5%");
        let back: SavedRun = serde_json::from_str(&item.json).unwrap();
        assert_eq!(back.record.saved_id.as_deref(), Some("run:1234"));
        assert_eq!(back.record, saved.record);
    }

    fn settings() -> LabSettings {
        LabSettings {
            corpus_name: "farm.txt".into(),
            vocab: LabVocab::Train(500),
            preset: "bert-tiny".into(),
            continue_pretrained: false,
            share_layers: false,
            config: PretrainConfig::new(),
            probes: " the cow [MASK].\n\n the sun [MASK]. \n".into(),
            probe_every: 10,
            backend: Backend::Cpu,
        }
    }

    fn step(step: usize, mlm_loss: f32) -> PretrainStep {
        PretrainStep { step, total_steps: 3, epoch: step as f64 / 3.0, mlm_loss, mlm_accuracy: 0.1, pair_loss: None, lr: 1e-3, tokens: 40, picked: 6, rtd_loss: None, rtd_accuracy: None, replaced: 0 }
    }

    /// The worker saves a lab run from the events it sent: the saved run shows what the page
    /// showed.
    #[test]
    fn a_saved_lab_run_holds_what_its_events_reported() {
        assert_eq!(settings().probe_lines(), ["the cow [MASK].", "the sun [MASK]."]);
        let mut saved = SavedLab::starting(settings());
        saved.record(&LabEvent::Vocab { size: 500, trained: true, sample: vec!["##s".into()] });
        saved.record(&LabEvent::Ready { params: 1000, total_steps: 3, preview: Vec::new() });
        saved.record(&LabEvent::Step(step(1, 6.5)));
        saved.record(&LabEvent::Probes { step: 1, fills: Vec::new() });
        saved.record(&LabEvent::Step(step(2, 5.25)));
        let item = saved.item(true, 2, 3.5, 99.0);
        assert_eq!(item.id, "lab:99");
        assert_eq!(item.kind, Kind::LabModel);
        assert_eq!(item.name, "bert-tiny · farm.txt · 2 steps · MLM loss 5.25");
        let back: SavedLab = serde_json::from_str(&item.json).unwrap();
        assert_eq!(back.vocab_info, Some((500, true, vec!["##s".to_string()])));
        assert_eq!(back.ready, Some((1000, 3)));
        assert_eq!(back.steps.iter().map(|s| s.step).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(back.probe_results.len(), 1);
        assert_eq!((back.cancelled, back.done, back.settings.corpus_name.as_str()), (true, 2, "farm.txt"));
        let shared = LabSettings { share_layers: true, ..settings() };
        assert_eq!(SavedLab::starting(shared).item(false, 2, 3.5, 99.0).name, "bert-tiny (one shared layer) · farm.txt · 2 steps");
        let mut nsp = settings();
        nsp.config.pair_task = Some(bertbench_core::tasks::masking::PairTask::Nsp);
        assert_eq!(SavedLab::starting(nsp).item(false, 2, 3.5, 99.0).name, "bert-tiny + NSP · farm.txt · 2 steps");
    }

    /// The shared-layer model is an ALBERT of the same depth and width whose one layer serves
    /// all: fewer parameters, by the layers it does not repeat.
    #[test]
    fn sharing_the_layers_keeps_the_depth_and_drops_the_repeated_layers() {
        for preset in ["bert-tiny", "bert-mini"] {
            let own = scratch_config(preset, false, 64, 1000).unwrap();
            let shared = scratch_config(preset, true, 64, 1000).unwrap();
            assert_eq!((own.model_type, shared.model_type), (Family::Bert, Family::Albert));
            assert_eq!(shared.num_hidden_layers, own.num_hidden_layers);
            assert_eq!((shared.distinct_layers(), shared.embedding_width()), (1, own.hidden_size));
            assert_eq!(own.max_position_embeddings, 64);
            shared.validate().unwrap();
            // One layer: attention (four h × h matrices with biases, a LayerNorm) and the
            // feed-forward block (h × 4h and back, a LayerNorm). ALBERT adds its h × h projection.
            let (h, i) = (own.hidden_size as u64, own.intermediate_size as u64);
            let layer = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h;
            let repeated = (own.num_hidden_layers as u64 - 1) * layer;
            assert_eq!(own.num_params(false) - shared.num_params(false), repeated - (h * h + h), "{preset}");
        }
        assert!(scratch_config("bert-huge", false, 64, 1000).is_err());
    }
}

/// Items saved in a browser by an earlier build (`tests/fixtures/saved-items`, written by
/// `tests/e2e/record_saved_items.mjs`): today's types must still read them, and their bytes
/// must still give what that build showed. A field renamed or retyped fails here, not in a
/// user's browser.
#[cfg(test)]
mod saved_by_an_earlier_build {
    use std::path::PathBuf;

    use bertbench_core::bert::checkpoint::{self, CheckpointFiles};
    use bertbench_core::burn::prelude::Device;
    use bertbench_core::tasks::{classification, pretraining};

    use super::*;
    use crate::store::{Item, Kind};

    pub(crate) fn fixture() -> (serde_json::Value, Vec<(Item, Vec<Vec<u8>>)>) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/saved-items");
        let index: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("items.json")).unwrap()).unwrap();
        let items = index["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| {
                let item: Item = serde_json::from_str(entry["value"].as_str().unwrap()).unwrap();
                let parts = entry["parts"].as_array().unwrap().iter().map(|p| std::fs::read(dir.join(p.as_str().unwrap())).unwrap()).collect();
                (item, parts)
            })
            .collect();
        (index["shown"].clone(), items)
    }

    fn of(items: &[(Item, Vec<Vec<u8>>)], kind: Kind) -> &(Item, Vec<Vec<u8>>) {
        items.iter().find(|(i, _)| i.kind == kind).unwrap_or_else(|| panic!("no {kind:?} item in the fixture"))
    }

    #[test]
    fn every_item_reads_as_todays_type() {
        let (shown, items) = fixture();
        let kinds: Vec<Kind> = items.iter().map(|(i, _)| i.kind).collect();
        for kind in [Kind::Dataset, Kind::Run, Kind::Settings, Kind::LabModel, Kind::LabSettings] {
            assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
        }
        let (item, parts) = of(&items, Kind::Run);
        let run: SavedRun = serde_json::from_str(&item.json).unwrap();
        assert_eq!(run.record.model, shown["model"].as_str().unwrap());
        assert_eq!(run.record.saved_id.as_deref(), Some(item.id.as_str()));
        assert_eq!(run.summary.meta.labels, ["negative", "positive"]);
        assert!(!run.steps.is_empty() && !run.evals.is_empty(), "its curves");
        assert_eq!(run.head_on.as_deref(), Some(run.record.model.as_str()), "a head-only run keeps only its head");
        assert_eq!(parts.len(), 2, "config.json and the head");
        let (item, parts) = of(&items, Kind::LabModel);
        let lab: SavedLab = serde_json::from_str(&item.json).unwrap();
        assert_eq!((lab.settings.preset.as_str(), lab.settings.vocab), ("bert-tiny", LabVocab::Train(1000)));
        assert!(lab.done > 0 && lab.steps.len() == lab.done, "{} steps, {} recorded", lab.done, lab.steps.len());
        assert_eq!(parts.len(), LAB_FILES.len() + 1, "its files and its corpus");
        let (item, _) = of(&items, Kind::LabSettings);
        let settings: LabSettings = serde_json::from_str(&item.json).unwrap();
        assert_eq!(settings.vocab, LabVocab::Train(1000));
    }

    /// The saved head, put back on the model it was trained on, gives the probabilities the page
    /// showed when it was saved.
    #[test]
    fn the_saved_head_predicts_what_the_page_showed() {
        let (shown, items) = fixture();
        let (_, parts) = of(&items, Kind::Run);
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../public/models").join(shown["model"].as_str().unwrap());
        assert!(dir.join("config.json").exists(), "{} is missing: run `cargo xtask setup`", dir.display());
        let read = |f: &str| std::fs::read(dir.join(f)).ok();
        let files = CheckpointFiles {
            config_json: read("config.json").unwrap(),
            weights: read("model.safetensors").unwrap(),
            tokenizer_json: read("tokenizer.json"),
            vocab_txt: read("vocab.txt"),
        };
        let device = Device::flex();
        let bert = checkpoint::load(files, &device).unwrap();
        let head = vec![("config.json".to_string(), parts[0].clone()), (classification::HEAD_FILE.to_string(), parts[1].clone())];
        let loaded = classification::attach_head(bert, &head, &device).unwrap();
        let encoded = loaded.tokenizer.encode_text(shown["sentence"].as_str().unwrap(), None).unwrap();
        let probs = futures::executor::block_on(classification::predict(&loaded.model, loaded.meta.scoring(), &[encoded], loaded.tokenizer.pad_id, 32, &device)).unwrap();
        let expected: Vec<f32> = serde_json::from_value(shown["probs"].clone()).unwrap();
        for (p, e) in probs[0].iter().zip(&expected) {
            assert!((p - e).abs() < 1e-4, "{:?} against the page's {expected:?}", probs[0]);
        }
    }

    /// The saved lab model opens and fills the blank as the page did.
    #[test]
    fn the_saved_lab_model_fills_as_the_page_showed() {
        let (shown, items) = fixture();
        let (_, parts) = of(&items, Kind::LabModel);
        let some = |b: &Vec<u8>| (!b.is_empty()).then(|| b.clone());
        let files = CheckpointFiles { config_json: parts[0].clone(), weights: parts[1].clone(), tokenizer_json: some(&parts[2]), vocab_txt: some(&parts[3]) };
        let device = Device::flex();
        let (model, tokenizer, _) = pretraining::load(files, &device).unwrap();
        let fills = futures::executor::block_on(pretraining::fill_mask(&model, &tokenizer, shown["fill"].as_str().unwrap(), 5, &device)).unwrap();
        // As the lab writes them: "the 6%, a 6%, ...".
        let text = fills[0].top.iter().map(|(piece, p)| format!("{piece} {:.0}%", p * 100.0)).collect::<Vec<_>>().join(", ");
        assert_eq!(text, shown["fills"].as_str().unwrap());
    }
}
