//! A run's training and validation data, by task: [`RunData`] is the one place a task's data is
//! told apart, and each task's file in `data/` owns the rest through [`TaskData`]: its request
//! (what the studio sends), how the worker tokenizes it into the training session's units, and
//! the validation items the kept model got wrong, as that task's results show them. A new task
//! is a file here, its [`RunData`] and [`Mistakes`] variants and its row in [`RunData::task`].

use bertbench_core::tasks::classification::Level;
use bertbench_core::tasks::qa::SpanConfig;
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::{LabeledText, TaskScores};

use super::Mistakes;

mod choices;
mod label_sets;
mod pairs;
mod questions;
mod tagged;
mod texts;

pub use choices::{ChoiceMistake, ChoiceRequest};
pub use label_sets::{LabelSetMistake, LabelSetRequest};
pub use pairs::{PairMistake, PairRequest};
pub use questions::{AnswerMistake, QaRequest};
pub use tagged::{TagMistake, TaggedRequest};
pub use texts::{Mistake, TextRequest};

/// How a run's items are tokenized: the run's tokenizer, label names, level and windows.
pub struct Encoding<'a> {
    /// The run's tokenizer, cut at the run's length.
    pub tokenizer: &'a BertTokenizer,
    /// Label names in id order.
    pub labels: &'a [String],
    /// What the head labels (a similarity run's cross- or bi-encoder).
    pub level: Level,
    /// A question-answering run's windows.
    pub spans: &'a SpanConfig,
}

/// What the kept model said of the validation items, for [`TaskData::mistakes`].
pub struct Kept<'a> {
    /// The validation units, as [`TaskData::encode`] gave them.
    pub valid: &'a [LabeledText],
    /// Each validation item's probabilities (a tagger: each scored word's; a similarity model:
    /// its one predicted score).
    pub probs: &'a [Vec<f32>],
    /// Each validation item's predicted text (question answering; empty for the other tasks).
    pub predictions: &'a [String],
    /// Label names in id order.
    pub labels: &'a [String],
    /// The task's own scores of the kept weights (a multi-label run's threshold), if evaluated.
    pub scores: Option<&'a TaskScores>,
}

/// What a run does with its task's data.
pub trait TaskData {
    /// How many training and validation items it has (texts, sentences, questions, pairs).
    fn counts(&self) -> (usize, usize);

    /// The training and validation units of the training session. An error says which item is
    /// wrong.
    fn encode(&self, how: &Encoding) -> Result<(Vec<LabeledText>, Vec<LabeledText>), String>;

    /// The validation items the kept model got wrong, as the task's results show them.
    fn mistakes(&self, kept: &Kept) -> Mistakes;
}

/// A run's training and validation data, by task.
#[derive(Debug, Clone)]
pub enum RunData {
    /// Labeled texts, or pairs of texts (sentence classification).
    Texts(TextRequest),
    /// A token-tagging run's sentences (`labels` are the tags, the features are per token).
    Tagged(TaggedRequest),
    /// A question-answering run's questions (`labels` are `start` and `end`, the features are
    /// per token, and `max_len` is a window's length).
    Questions(QaRequest),
    /// A similarity run's scored pairs (`labels` is `score`; the configuration's features say
    /// cross- or bi-encoder).
    Pairs(PairRequest),
    /// A multiple-choice run's questions (the features are `[CLS]` + pooler of the last layer).
    Choices(ChoiceRequest),
    /// A multi-label run's texts (`labels` are the run's labels, each a yes or no).
    LabelSets(LabelSetRequest),
}

impl Default for RunData {
    fn default() -> Self {
        RunData::Texts(TextRequest::default())
    }
}

impl RunData {
    /// Its task's side of the run.
    pub fn task(&self) -> &dyn TaskData {
        match self {
            RunData::Texts(t) => t,
            RunData::Tagged(t) => t,
            RunData::Questions(q) => q,
            RunData::Pairs(p) => p,
            RunData::Choices(c) => c,
            RunData::LabelSets(l) => l,
        }
    }

    /// How many training and validation items it has.
    pub fn counts(&self) -> (usize, usize) {
        self.task().counts()
    }
}

/// The `n` worst of `items` by `worse_first`, in that order.
fn worst<T>(mut items: Vec<T>, n: usize, worse_first: impl FnMut(&T, &T) -> std::cmp::Ordering) -> Vec<T> {
    items.sort_by(worse_first);
    items.truncate(n);
    items
}

/// A small tokenizer and a run's [`Encoding`] and [`Kept`] pieces, for the tests in `data/`.
#[cfg(test)]
mod test_helpers {
    use bertbench_core::tokenizer::BertTokenizer;

    /// A WordPiece tokenizer over a few words (every test's words are among them).
    pub(super) fn tokenizer() -> BertTokenizer {
        let words = "the a cat sat on mat dog ran is it who where what park paris rome lives in bob alice yes no fine day dull good bad";
        let vocab: String = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].into_iter().chain(words.split(' ')).map(|w| format!("{w}\n")).collect();
        BertTokenizer::from_vocab_txt(vocab.as_bytes(), true, 64).unwrap()
    }
}
