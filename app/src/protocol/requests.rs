//! The requests the page asks a worker, each a type that names its answer's type.
//!
//! As `lsp-types` pairs a request with its result, [`Request::Answer`] pairs each request here
//! with what the worker gives back: the worker's handler for a request must return that type,
//! and the page's [`WorkerClient`](crate::worker_client::WorkerClient) reads the reply as that
//! type, so a request answered with another's answer does not compile. Large binary payloads
//! (checkpoint files, arrays of floats) travel beside the answer as attachments; each request
//! says which.

use bertbench_core::bert::pooling::Pooling;
use bertbench_core::tasks::classification::ClassifierMeta;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::answers::{Answered, Encoded, MaskFill, TaggedWord, TagsByLayer};
use crate::runs::{Backend, SearchResult, Timing};

mod choice;
pub use choice::Choose;

/// A request with exactly one answer, of type [`Answer`](Self::Answer).
pub trait Request: Into<Ask> {
    /// What the worker answers (attachments travel beside it).
    type Answer: Serialize + DeserializeOwned;
}

/// Which worker a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The one that holds the current classifier.
    Classifier,
    /// The one that holds the lab's model.
    Lab,
    /// The first (CPU) worker: a model handed over becomes its, computations run there.
    First,
    /// The worker of the backend the probe times.
    Probe,
}

/// Declares the requests: each one's [`Request`] impl, the worker it goes to ([`Ask::at`]), and
/// [`Ask`], the enum they travel as.
macro_rules! requests {
    ($($(#[$doc:meta])* $name:ident => $answer:ty, at $at:ident;)*) => {
        /// Any request, as it travels to the worker.
        #[derive(Debug, Clone, Serialize, Deserialize)]
        pub enum Ask {
            $($(#[$doc])* $name($name),)*
        }
        impl Ask {
            /// The worker it goes to.
            pub fn at(&self) -> At {
                match self {
                    $(Self::$name(_) => At::$at,)*
                }
            }
        }
        $(
            impl From<$name> for Ask {
                fn from(request: $name) -> Self {
                    Self::$name(request)
                }
            }
            impl Request for $name {
                type Answer = $answer;
            }
        )*
    };
}

requests! {
    /// Probabilities from the current classifier.
    Predict => Predictions, at Classifier;
    /// Each word's tag, from the current tagger.
    Tag => Tagged, at Classifier;
    /// What the current tagger's head reads off each layer.
    TagLayers => LayerTags, at Classifier;
    /// Each pair's similarity (0..1) by the current similarity model.
    Similar => Vec<f32>, at Classifier;
    /// The texts most like a query, by the current similarity model.
    Search => SearchResult, at Classifier;
    /// The current question-answering model's answer.
    AnswerQuestion => Answered, at Classifier;
    /// Each ending's probability for a question, by the current multiple-choice model.
    Choose => Vec<f32>, at Classifier;
    /// The current classifier as a zip (one attachment); the answer is the zip's file name.
    Export => String, at Classifier;
    /// A classifier from files (attachments) made the current one.
    Import => Imported, at First;
    /// A head saved alone, put back on the worker's base model.
    AttachHead => Imported, at First;
    /// The current classifier put away: the worker holds none after.
    ForgetClassifier => (), at Classifier;
    /// The current classifier's encoder as a plain checkpoint (attachments).
    Encoder => EncoderFiles, at Classifier;
    /// Top-5 fills for every `[MASK]`, from the lab's model.
    FillMask => Vec<MaskFill>, at Lab;
    /// The lab's model's files (attachments); the answer names them.
    LabFiles => Vec<String>, at Lab;
    /// A saved lab model (attachments) made the lab's model.
    OpenLab => (), at First;
    /// Every layer's vectors of texts from the base model (one attachment per text).
    States => StatesShape, at First;
    /// One of the explorer's one-input computations (one attachment per array).
    Inspect => (), at First;
    /// The backend probe's timed work.
    TimeWork => Timing, at Probe;
}

/// Probabilities for texts (with optional second segments) from the current classifier.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Predict {
    pub texts: Vec<(String, Option<String>)>,
}

/// The classifier's labels, and the probabilities, one row per text.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Predictions {
    pub labels: Vec<String>,
    pub probs: Vec<Vec<f32>>,
    /// Whether each label's probability is its own (a multi-label head's sigmoid), not one of a
    /// softmax over the labels.
    pub multi_label: bool,
    /// A multi-label head's decision threshold, where its run chose one (or its export kept
    /// it); 0.5 is used otherwise.
    #[serde(default)]
    pub threshold: Option<f32>,
}

/// Put the current classifier away.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ForgetClassifier;

/// Each word's tag for texts, from the current classifier when it is a tagger.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tag {
    pub texts: Vec<String>,
}

/// The tagger's tags, and each text's words with theirs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tagged {
    pub tags: Vec<String>,
    pub texts: Vec<Vec<TaggedWord>>,
}

/// What the current tagger's head reads off each layer for a text.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TagLayers {
    pub text: String,
}

/// The tagger's tags, and its head's reading of every layer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayerTags {
    pub tags: Vec<String>,
    pub layers: TagsByLayer,
}

/// The current similarity model's score of each pair of texts (0..1).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Similar {
    pub pairs: Vec<(String, String)>,
}

/// The `top` texts most like `query`, by the current similarity model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Search {
    pub query: String,
    pub texts: Vec<String>,
    pub top: usize,
}

/// The current question-answering model's answer to `question` over `context`; with
/// `allow_null`, "no answer" when `[CLS]` scores above every span.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerQuestion {
    pub question: String,
    pub context: String,
    pub allow_null: bool,
}

/// The current classifier as a zip of a Hugging Face folder named `name`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Export {
    pub name: String,
}

/// Make a classifier the current one: files named in `names`, bytes attached (or one `.zip`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Import {
    pub names: Vec<String>,
}

/// Make the current classifier a head saved alone (`classification::export_head`: files named in
/// `names`, attached) on the base model `base`, which the worker must hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AttachHead {
    pub base: String,
    pub names: Vec<String>,
}

/// A classifier made the current one: what it is, and a line describing it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Imported {
    pub meta: ClassifierMeta,
    pub description: String,
}

/// The current classifier's encoder as a plain BERT checkpoint, for the explorer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Encoder;

/// config.json and model.safetensors attached, then tokenizer.json and/or vocab.txt as flagged.
/// `labels` names the classifier.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EncoderFiles {
    pub labels: Vec<String>,
    pub tokenizer_json: bool,
    pub vocab_txt: bool,
}

/// Top-k fills for a sentence with `[MASK]`, from the lab's model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FillMask {
    pub text: String,
}

/// The lab's model as a Hugging Face folder (files attached, names in the answer).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabFiles;

/// Make the saved lab model attached ([`LAB_FILES`](crate::runs::LAB_FILES) order) the lab's
/// model.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OpenLab;

/// Every layer's vectors of these texts from the base model (which is the page's model: the page
/// sends it first), computed on the worker's threads.
///
/// `model_id` names the model the texts were encoded for: the worker refuses when its base is
/// another by then (a run started meanwhile sent its own), rather than look up tokens of one
/// vocabulary in another's table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct States {
    pub model_id: String,
    pub encoded: Vec<Encoded>,
}

/// One attachment per text: its `layers` layers' vectors, `tokens × hidden` each, one after the
/// other, as little-endian f32.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct StatesShape {
    pub hidden: usize,
    pub layers: usize,
}

/// One of the explorer's computations on one input (or a few texts), which the worker does for
/// the page on its base model, refused when that is no longer `model_id` (as [`States`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Inspect {
    pub model_id: String,
    pub what: Inspecting,
}

/// The computations [`Inspect`] asks for (`compute.rs` rebuilds their results from the attached
/// arrays, little-endian f32).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Inspecting {
    /// Every layer's and head's attention (`[layer][head][query][key]`), bidirectional or causal.
    Attention { encoded: Encoded, causal: bool },
    /// The token, segment and position embeddings, their sum and the normalised sum:
    /// five arrays, `tokens × hidden` each.
    InputParts { encoded: Encoded },
    /// Sentence vectors, one array per text.
    Embed { texts: Vec<String>, pooling: Pooling, normalize: bool },
}

/// The backend probe's work on `backend`: a forward pass (and with `step` a fine-tuning step) of
/// the base model on `texts`, cut to `max_len` tokens, each timed (`backend_choice.rs`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimeWork {
    pub backend: Backend,
    pub texts: Vec<String>,
    pub max_len: usize,
    pub step: bool,
}
