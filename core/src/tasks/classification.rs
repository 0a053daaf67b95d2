//! A sentence classifier: BERT → sentence features → [`ClassificationHead`], and its
//! Hugging Face folder in and out.
//!
//! Features are what the head reads. Devlin et al. (2019, §5.3) compare several for a frozen
//! encoder; all of them are here: `[CLS]` or mean pooling of the last layer, the second-to-last
//! layer, the sum of the last four, or their concatenation. `[CLS]` through the pooler is what
//! `transformers.BertForSequenceClassification` does, so that choice exports to a folder
//! `AutoModelForSequenceClassification` loads unchanged. Every other choice exports the encoder
//! as a plain `BertModel` plus `classifier_head.safetensors`, described in `config.json` under
//! `bertbench_head` (see [`export`]).

use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bert::config::BertConfig;
use crate::data::ScoreScale;
use crate::error::Error;
use crate::bert::model::{BertInput, BertModel, BertModelOutput, ForwardOptions, rows_by_length};
use crate::bert::pooling::{Pooling, cls_pool, mean_pool};
use crate::nn::dropout;
use crate::nn::linear::{init_linear, linear};
use crate::tasks::metrics::softmax;
use crate::tokenizer::{BertTokenizer, Encoded};

pub(crate) mod export;
pub(crate) mod weights;
mod transform;
pub use transform::{HeadTransform, HeadTransformConfig};
pub use export::{ENCODER_KEY, HEAD_FILE, MODELING_FILE, REMOTE_MODEL_TYPE, attach_head, export, export_head, load_classifier};
pub(crate) use export::{HeadClass, TokenizerFiles};
pub(crate) use export::tokenizer_config;

/// Which hidden layers a sentence feature comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum FeatureLayers {
    /// The last layer.
    #[default]
    Last,
    /// The layer below the last (often better for frozen features).
    SecondToLast,
    /// The element-wise sum of the last four layers (fewer if the model has fewer).
    SumLastFour,
    /// The concatenation of the last four layers: four times as wide.
    ConcatLastFour,
}

impl FeatureLayers {
    /// Short label for the page.
    pub fn label(self) -> &'static str {
        match self {
            FeatureLayers::Last => "last layer",
            FeatureLayers::SecondToLast => "second-to-last layer",
            FeatureLayers::SumLastFour => "sum of last four",
            FeatureLayers::ConcatLastFour => "concat of last four",
        }
    }
}

/// What the head labels: a whole text, or each token of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Level {
    /// One label per text (or pair): `*ForSequenceClassification`.
    #[default]
    Sentence,
    /// One label per token (tagging, see [`super::tagging`]): `*ForTokenClassification`.
    Token,
    /// A start and an end logit per token, softmaxed over the sequence (extractive question
    /// answering, see [`super::qa`]): `*ForQuestionAnswering`.
    Span,
    /// One number for a pair read together, regressed on its similarity (a cross-encoder, see
    /// [`super::similarity`]): `*ForSequenceClassification` with one label.
    Score,
    /// A vector for each text of a pair read alone, compared by cosine (a bi-encoder, see
    /// [`super::similarity`]): a sentence-transformers folder.
    Embedding,
    /// A score for each ending of a question read with its premise, softmaxed over the endings
    /// (multiple choice, see [`super::choice`]): `*ForMultipleChoice`.
    Choice,
    /// Any number of labels per text (or pair), each a yes or no of its own, a sigmoid each
    /// (see [`super::multi_label`]): `*ForSequenceClassification` with `problem_type:
    /// "multi_label_classification"`.
    MultiLabel,
}

impl Level {
    /// Every level: the one list of the heads (each one's class is [`export::class_of`]'s).
    pub const ALL: [Level; 7] = [Level::Sentence, Level::Token, Level::Span, Level::Score, Level::Embedding, Level::Choice, Level::MultiLabel];

    /// Whether the head reads one pooled vector per sequence (not its tokens).
    pub fn pooled(self) -> bool {
        !matches!(self, Level::Token | Level::Span)
    }

    /// Why a model of this level gives no label per text, if it gives none (its class says).
    pub fn not_per_text(self) -> Option<&'static str> {
        export::class_of(self).not_per_text()
    }

    /// Whether the model scores the similarity of pairs (its one output is a score, not a class).
    pub fn similarity(self) -> bool {
        matches!(self, Level::Score | Level::Embedding)
    }
}

/// How the head's features are read off the encoder: one per text (pooled), or one per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FeatureSpec {
    /// `[CLS]`, `[CLS]` + pooler, or mean (a sentence's feature; unused per token).
    pub pooling: Pooling,
    /// Which layers.
    pub layers: FeatureLayers,
    /// A text's feature or each token's. Absent from what was saved before tagging existed.
    #[serde(default)]
    pub level: Level,
}

impl FeatureSpec {
    /// Whether every layer's hidden state is needed.
    pub fn needs_hidden_states(&self) -> bool {
        self.layers != FeatureLayers::Last
    }

    /// Number of layers combined for a model of `num_layers` layers.
    fn span(&self, num_layers: usize) -> usize {
        match self.layers {
            FeatureLayers::Last | FeatureLayers::SecondToLast => 1,
            FeatureLayers::SumLastFour | FeatureLayers::ConcatLastFour => num_layers.min(4),
        }
    }

    /// Width of the feature vector.
    pub fn width(&self, hidden_size: usize, num_layers: usize) -> usize {
        match self.layers {
            FeatureLayers::ConcatLastFour => hidden_size * self.span(num_layers),
            _ => hidden_size,
        }
    }

    /// The features of a token classifier that `transformers` computes: the last layer.
    pub fn tokens() -> Self {
        FeatureSpec { level: Level::Token, ..Default::default() }
    }

    /// The features of a question-answering model that `transformers` computes: the last layer.
    pub fn spans() -> Self {
        FeatureSpec { level: Level::Span, ..Default::default() }
    }

    /// A cross-encoder's features: those of a sentence classifier, `pooling` of `layers`.
    pub fn scores(pooling: Pooling, layers: FeatureLayers) -> Self {
        FeatureSpec { pooling, layers, level: Level::Score }
    }

    /// A bi-encoder's features: `pooling` (mean or `[CLS]`) of the last layer.
    pub fn embeddings(pooling: Pooling) -> Self {
        FeatureSpec { pooling, layers: FeatureLayers::Last, level: Level::Embedding }
    }

    /// Refuses combinations that cannot be computed for this model.
    pub fn check(&self, num_layers: usize, has_pooler: bool) -> crate::Result<()> {
        if self.level == Level::Embedding {
            check_bi_encoder_spec(self)?;
        }
        if self.pooling == Pooling::Pooler && self.level.pooled() {
            if self.layers != FeatureLayers::Last {
                return Err(Error::Input("the pooler reads the last layer only; choose [CLS] or mean pooling for other layers".into()));
            }
            if !has_pooler {
                return Err(Error::Input("this checkpoint has no pooler; use [CLS] or mean pooling".into()));
            }
        }
        if self.layers == FeatureLayers::SecondToLast && num_layers < 2 {
            return Err(Error::Input("a one-layer model has no second-to-last layer".into()));
        }
        Ok(())
    }

    /// Label for the page, e.g. "mean of last layer".
    pub fn label(&self) -> String {
        if !self.level.pooled() {
            return format!("each token · {}", self.layers.label());
        }
        match export::class_of(self.level).reads() {
            Some(reads) => format!("{reads} · {} · {}", self.pooling.label(), self.layers.label()),
            None => format!("{} · {}", self.pooling.label(), self.layers.label()),
        }
    }

    /// Reads every token's features off a forward pass made with
    /// `hidden_states: self.needs_hidden_states()`.
    ///
    /// # Shapes
    /// - `output.hidden_states`: `L + 1` tensors `[batch, seq, hidden]` (when needed)
    /// - output: `[batch, seq, width]`
    pub fn extract_tokens(&self, output: &BertModelOutput) -> crate::Result<Tensor<3>> {
        if self.layers == FeatureLayers::Last {
            return Ok(output.last_hidden_state.clone());
        }
        let states = &output.hidden_states;
        if states.len() < 2 {
            return Err(Error::Input("the forward pass kept no per-layer states".into()));
        }
        let num_layers = states.len() - 1;
        let last = &states[num_layers + 1 - self.span(num_layers)..];
        Ok(match self.layers {
            FeatureLayers::Last => unreachable!("handled above"),
            FeatureLayers::SecondToLast => states[num_layers - 1].clone(),
            FeatureLayers::SumLastFour => last.iter().cloned().reduce(|a, b| a + b).expect("at least one layer"),
            FeatureLayers::ConcatLastFour => Tensor::cat(last.to_vec(), 2),
        })
    }

    /// Reads the sentence features off a forward pass made with
    /// `hidden_states: self.needs_hidden_states()`.
    ///
    /// # Shapes
    /// - `output.hidden_states`: `L + 1` tensors `[batch, seq, hidden]` (when needed)
    /// - `attention_mask`: `[batch, seq]`
    /// - output: `[batch, width]`
    pub fn extract(&self, output: &BertModelOutput, attention_mask: Tensor<2, Int>) -> crate::Result<Tensor<2>> {
        if self.layers == FeatureLayers::Last {
            return self.pooling.apply(output, attention_mask);
        }
        let states = &output.hidden_states;
        if states.len() < 2 {
            return Err(Error::Input("the forward pass kept no per-layer states".into()));
        }
        let num_layers = states.len() - 1;
        let pool = |h: Tensor<3>| match self.pooling {
            Pooling::Cls | Pooling::Pooler => cls_pool(h),
            Pooling::Mean => mean_pool(h, attention_mask.clone()),
        };
        let last = &states[num_layers + 1 - self.span(num_layers)..];
        Ok(match self.layers {
            FeatureLayers::Last => unreachable!("handled above"),
            FeatureLayers::SecondToLast => pool(states[num_layers - 1].clone()),
            FeatureLayers::SumLastFour => pool(last.iter().cloned().reduce(|a, b| a + b).expect("at least one layer")),
            FeatureLayers::ConcatLastFour => Tensor::cat(last.iter().cloned().map(pool).collect(), 1),
        })
    }
}

/// Encodes a batch and reads its features.
///
/// # Shapes
/// - input: each tensor of [`BertInput`] is `[batch, seq]`
/// - output: `[batch, width]`
pub fn features(bert: &BertModel, input: BertInput, spec: FeatureSpec) -> crate::Result<Tensor<2>> {
    let mask = input.attention_mask.clone();
    let options = ForwardOptions { hidden_states: spec.needs_hidden_states(), ..Default::default() };
    spec.extract(&bert.forward(input, options), mask)
}

/// Encodes a batch and reads the features of the tokens at `positions`, counted in the batch
/// flattened row by row (`row × seq + column`).
///
/// # Shapes
/// - input: each tensor of [`BertInput`] is `[batch, seq]`
/// - `positions`: `[units]`
/// - output: `[units, width]`
pub fn token_features(bert: &BertModel, input: BertInput, spec: FeatureSpec, positions: Tensor<1, Int>) -> crate::Result<Tensor<2>> {
    let options = ForwardOptions { hidden_states: spec.needs_hidden_states(), ..Default::default() };
    let tokens = spec.extract_tokens(&bert.forward(input, options))?;
    let [batch, seq, width] = tokens.dims();
    Ok(tokens.reshape([batch * seq, width]).select(0, positions))
}

/// A question-answering head's token logits as rows: each sequence's start logits, then its
/// end logits, padding masked out so a softmax over a row reads only real tokens.
///
/// # Shapes
/// - `logits`: `[batch, seq, 2]`; `attention_mask`: `[batch, seq]`
/// - output: `[2 × batch, seq]`
pub fn span_rows(logits: Tensor<3>, attention_mask: Tensor<2, Int>) -> Tensor<2> {
    let [batch, seq, _] = logits.dims();
    let padding = attention_mask.equal_elem(0).unsqueeze_dim::<3>(1).expand([batch, 2, seq]);
    logits.swap_dims(1, 2).mask_fill(padding, -1e4).reshape([batch * 2, seq])
}

/// BERT with a classification head on top: of the whole text, or of each token
/// ([`FeatureSpec::level`]).
#[derive(Module, Debug)]
pub struct BertClassifier {
    /// The encoder (`bert.*` in a Hugging Face checkpoint).
    pub bert: BertModel,
    /// Dropout + dense (`classifier.*`).
    pub head: ClassificationHead,
    /// What the head reads.
    #[module(skip)]
    pub spec: FeatureSpec,
}

impl BertClassifier {
    /// Logits for a batch.
    ///
    /// # Shapes
    /// - input: each tensor of [`BertInput`] is `[batch, seq]`
    /// - output: `[batch, num_labels]`
    pub fn forward(&self, input: BertInput) -> crate::Result<Tensor<2>> {
        Ok(self.head.forward(features(&self.bert, input, self.spec)?))
    }

    /// Logits of a batch's units: a sentence classifier's texts (`positions` unused), or a token
    /// classifier's tokens at `positions` (see [`token_features`]).
    ///
    /// # Shapes
    /// - input: each tensor of [`BertInput`] is `[batch, seq]`; `positions`: `[units]`
    /// - output: `[units, num_labels]` (`units = batch` for a sentence classifier)
    ///
    /// A question-answering model's units are each row's start and its end: `[2 × batch, seq]`,
    /// each row softmaxed over the sequence, padding masked (`positions` unused). A bi-encoder's
    /// batch holds each pair's two texts in consecutive rows; its units are the pairs' cosines,
    /// `[batch / 2, 1]`.
    pub fn forward_units(&self, input: BertInput, positions: Option<Tensor<1, Int>>) -> crate::Result<Tensor<2>> {
        match (self.spec.level, positions) {
            (Level::Embedding, _) => Ok(pair_cosines(self.forward(input)?)),
            (Level::Token, Some(positions)) => Ok(self.head.forward(token_features(&self.bert, input, self.spec, positions)?)),
            (Level::Token, None) => Err(Error::Input("a token classifier needs the positions of the tokens to label".into())),
            (Level::Span, _) => {
                let mask = input.attention_mask.clone();
                Ok(span_rows(self.forward_tokens(input)?, mask))
            }
            // Every other head's units are its rows' outputs: [batch, labels].
            _ => self.forward(input),
        }
    }

    /// Logits of the tokens at `positions` (a token classifier's or a question-answering
    /// model's), or of each text (a sentence classifier's, `positions` unused).
    ///
    /// # Shapes
    /// - input: each tensor of [`BertInput`] is `[batch, seq]`; `positions`: `[rows]`
    /// - output: `[rows, num_labels]` (`rows = batch` for a sentence classifier)
    pub fn forward_rows(&self, input: BertInput, positions: Option<Tensor<1, Int>>) -> crate::Result<Tensor<2>> {
        match (self.spec.level, positions) {
            (Level::Token | Level::Span, Some(positions)) => Ok(self.head.forward(token_features(&self.bert, input, self.spec, positions)?)),
            (Level::Token | Level::Span, None) => Err(Error::Input("the positions of the tokens are needed".into())),
            _ => self.forward(input),
        }
    }

    /// Every token's logits.
    ///
    /// # Shapes
    /// - input: each tensor of [`BertInput`] is `[batch, seq]`
    /// - output: `[batch, seq, num_labels]`
    pub fn forward_tokens(&self, input: BertInput) -> crate::Result<Tensor<3>> {
        let options = ForwardOptions { hidden_states: self.spec.needs_hidden_states(), ..Default::default() };
        let tokens = self.spec.extract_tokens(&self.bert.forward(input, options))?;
        let [batch, seq, width] = tokens.dims();
        let logits = self.head.forward(tokens.reshape([batch * seq, width]));
        Ok(logits.reshape([batch, seq, self.num_labels()]))
    }

    /// Number of labels.
    pub fn num_labels(&self) -> usize {
        self.head.classifier.weight.dims()[1]
    }
}

/// Everything a saved classifier needs besides its weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassifierMeta {
    /// Label names in id order.
    pub labels: Vec<String>,
    /// What the head reads.
    pub spec: FeatureSpec,
    /// Longest input the classifier was trained with (tokens, specials included).
    pub max_len: usize,
    /// A similarity model's score scale: the data's values that 0 and 1 stand for.
    #[serde(default)]
    pub scale: Option<ScoreScale>,
    /// What its `config.json` says the outputs are (`problem_type`), where it says more than
    /// its labels do (a softmax over several is the default); none for a head trained here,
    /// which its level says (its export writes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<ProblemType>,
    /// A multi-label classifier's decision threshold: a label is given where its probability
    /// reaches it. Chosen on validation by the run that trained it here, or read from the
    /// `config.json` key [`THRESHOLD_KEY`] its export writes; none otherwise (0.5 is then used,
    /// as `transformers`' pipeline users threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f32>,
}

/// The `config.json` key under which an exported multi-label classifier keeps the decision
/// threshold its run chose (`transformers` keeps unknown keys as attributes of the config, so
/// Python reads it as `model.config.multi_label_threshold`).
pub const THRESHOLD_KEY: &str = "multi_label_threshold";

impl ClassifierMeta {
    /// What `transformers`' `text-classification` pipeline applies to this head's logits by
    /// default (its `function_to_apply`): nothing for regression; a sigmoid per output for a
    /// multi-label head and for a head of one output whose `problem_type` is not regression; a
    /// softmax over the labels otherwise.
    pub fn pipeline_scoring(&self) -> Scoring {
        match (self.problem, self.labels.len()) {
            (Some(ProblemType::Regression), _) => Scoring::Raw,
            _ if self.multi_label() => Scoring::Sigmoid,
            (_, 1) => Scoring::Sigmoid,
            _ => Scoring::Softmax,
        }
    }

    /// What [`predict`] gives for each text: the pipeline's scores, except that a head of one
    /// output gives its raw score (the similarity views read it on their scale; the page shows
    /// its sigmoid beside it where the pipeline would give that).
    pub fn scoring(&self) -> Scoring {
        if self.labels.len() == 1 { Scoring::Raw } else { self.pipeline_scoring() }
    }

    /// Whether each label is a yes or no of its own (a sigmoid each), not one of several.
    pub fn multi_label(&self) -> bool {
        self.problem == Some(ProblemType::MultiLabelClassification) || self.spec.level == Level::MultiLabel
    }
}

/// What a sequence classifier's outputs are, as `transformers`' `problem_type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProblemType {
    /// One label of several: a softmax over them, cross-entropy.
    SingleLabelClassification,
    /// Any number of labels at once: a sigmoid for each, binary cross-entropy.
    MultiLabelClassification,
    /// A number: the output as it is, mean squared error.
    Regression,
}

impl ProblemType {
    /// `problem_type` of a `config.json` (`raw`), if it has a known one.
    pub fn of_config(raw: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(raw.get("problem_type")?.clone()).ok()
    }

    /// Its `config.json` name.
    pub fn name(self) -> &'static str {
        match self {
            Self::SingleLabelClassification => "single_label_classification",
            Self::MultiLabelClassification => "multi_label_classification",
            Self::Regression => "regression",
        }
    }
}

/// How a head's logits become the scores shown for a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scoring {
    /// A softmax over the labels: probabilities that sum to 1.
    Softmax,
    /// A sigmoid of each output on its own.
    Sigmoid,
    /// The outputs as they are.
    Raw,
}

impl Scoring {
    /// `row`'s scores.
    pub fn apply(self, row: &[f32]) -> Vec<f32> {
        match self {
            Scoring::Softmax => softmax(row),
            Scoring::Sigmoid => row.iter().map(|&x| sigmoid(x)).collect(),
            Scoring::Raw => row.to_vec(),
        }
    }

    /// The pipeline's name for it (`function_to_apply`).
    pub fn name(self) -> &'static str {
        match self {
            Scoring::Softmax => "softmax",
            Scoring::Sigmoid => "sigmoid",
            Scoring::Raw => "none",
        }
    }
}

/// The logistic function, `1 / (1 + e^-x)`, without overflow for large `|x|`.
pub fn sigmoid(x: f32) -> f32 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// The cosine of each pair of consecutive rows: rows `2i` and `2i + 1` are the two texts of
/// pair `i`.
///
/// # Shapes
/// - `rows`: `[2 × pairs, width]`
/// - output: `[pairs, 1]`
pub fn pair_cosines(rows: Tensor<2>) -> Tensor<2> {
    let [n, width] = rows.dims();
    let pairs = rows.reshape([n / 2, 2, width]);
    let a = pairs.clone().narrow(1, 0, 1).reshape([n / 2, width]);
    let b = pairs.narrow(1, 1, 1).reshape([n / 2, width]);
    let dot = (a.clone() * b.clone()).sum_dim(1);
    let norms = (a.powi_scalar(2).sum_dim(1) * b.powi_scalar(2).sum_dim(1)).sqrt().clamp_min(1e-8);
    dot / norms
}

/// The features a bi-encoder may read: what sentence-transformers' `Pooling` computes.
pub fn check_bi_encoder_spec(spec: &FeatureSpec) -> crate::Result<()> {
    if spec.layers != FeatureLayers::Last || spec.pooling == Pooling::Pooler {
        return Err(Error::Input(
            "a bi-encoder pools the last layer's tokens (mean or [CLS]), as sentence-transformers does; choose one of those".into(),
        ));
    }
    Ok(())
}

/// `bert` with the layer its family's `*ForSequenceClassification` reads `[CLS]` through, for a
/// classifier on `[CLS]` + pooler: its own pooler, or, for a checkpoint saved without one (a
/// masked-language model, DistilBERT, an ELECTRA discriminator, DeBERTa, ModernBERT), a fresh one
/// of the family's sequence head, as `transformers` builds the class on such a checkpoint:
/// BERT's and ALBERT's pooler and RoBERTa's and MPNet's `classifier.dense` with `tanh`,
/// DistilBERT's `pre_classifier` with ReLU, ELECTRA's `classifier.dense` and DeBERTa's
/// `pooler.dense` with GELU, ModernBERT's `head` (dense, GELU, LayerNorm, on the first token or
/// the mean) read from the MLM head's `head.*` in `head_weights` (the checkpoint's head tensors)
/// where there is one, else fresh from `seed`. The export then names the family's own class.
pub fn with_sequence_pooler(mut bert: BertModel, config: &BertConfig, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
    if bert.pooler.is_some() {
        return Ok(bert);
    }
    let facts = config.model_type.facts();
    let crate::bert::family::SequenceHead { dense, norm, .. } = facts.sequence_head;
    bert.pooler = Some(if norm.is_empty() {
        let dense = init_linear(config.hidden_size, config.hidden_size, config.initializer_range, device);
        crate::bert::model::BertPooler::with_activation(dense, facts.sequence_activation)
    } else {
        let has_norm = head_weights
            .and_then(|b| safetensors::SafeTensors::deserialize(b).ok())
            .is_some_and(|st| st.names().iter().any(|n| **n == format!("{norm}weight")));
        let transform = match head_weights {
            Some(bytes) if has_norm => HeadTransform::read(config, bytes, dense, norm, device)?,
            _ => HeadTransformConfig::from_model(config).with_seed(seed).init(device),
        };
        transform.into_pooler(config)
    });
    Ok(bert)
}

/// A loaded classifier: model, tokenizer and labels.
#[derive(Debug, Clone)]
pub struct LoadedClassifier {
    /// Encoder hyper-parameters.
    pub config: BertConfig,
    /// The model.
    pub model: BertClassifier,
    /// Its tokenizer.
    pub tokenizer: BertTokenizer,
    /// Labels, feature choice, training length.
    pub meta: ClassifierMeta,
}

/// Configuration of [`ClassificationHead`].
#[derive(Config, Debug)]
pub struct ClassificationHeadConfig {
    /// Width of the pooled sentence vector.
    pub hidden_size: usize,
    /// Number of labels.
    pub num_labels: usize,
    /// Dropout before the dense layer (BERT paper: 0.1).
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Standard deviation of the normal initialiser.
    #[config(default = 0.02)]
    pub initializer_range: f64,
}

impl ClassificationHeadConfig {
    /// Creates the head with freshly initialised weights.
    pub fn init(&self, device: &Device) -> ClassificationHead {
        ClassificationHead {
            transform: None,
            dropout: DropoutConfig::new(self.dropout).init(),
            classifier: init_linear(self.hidden_size, self.num_labels, self.initializer_range, device),
        }
    }
}

/// Dropout then a dense layer to one logit per label (`classifier` in a Hugging Face
/// `BertForSequenceClassification` checkpoint), after a [`HeadTransform`] where the family's
/// token and span classes have one (ModernBERT's `head`).
#[derive(Module, Debug)]
pub struct ClassificationHead {
    /// Dense → activation → LayerNorm on each row before the dropout, or none.
    pub transform: Option<HeadTransform>,
    /// Dropout on the pooled vector.
    pub dropout: Dropout,
    /// `hidden → num_labels`.
    pub classifier: Linear,
}

impl ClassificationHead {
    /// # Shapes
    /// - `pooled`: `[batch, hidden]`
    /// - output: logits `[batch, num_labels]`
    pub fn forward(&self, pooled: Tensor<2>) -> Tensor<2> {
        let rows = match &self.transform {
            Some(transform) => transform.forward(pooled),
            None => pooled,
        };
        linear(&self.classifier, dropout::forward(&self.dropout, rows))
    }

    /// Mean cross-entropy of `logits` against integer `labels`.
    ///
    /// # Shapes
    /// - `logits`: `[batch, num_labels]`; `labels`: `[batch]`
    /// - output: `[1]`
    pub fn loss(logits: Tensor<2>, labels: Tensor<1, Int>) -> Tensor<1> {
        let device = logits.device();
        CrossEntropyLossConfig::new().init(&device).forward(logits, labels)
    }
}

/// Each encoded text's scores, in their order, as `scoring` makes them of the logits
/// ([`ClassifierMeta::scoring`]: class probabilities; each label's for a multi-label head; a
/// cross-encoder's score as it is). Batches of `batch_size` are taken shortest first, so each
/// pads to about its own length.
pub async fn predict(model: &BertClassifier, scoring: Scoring, encoded: &[Encoded], pad_id: u32, batch_size: usize, device: &Device) -> crate::Result<Vec<Vec<f32>>> {
    if let Some(why) = model.spec.level.not_per_text() {
        return Err(Error::Input(why.into()));
    }
    let logits = rows_by_length(encoded, pad_id, batch_size, device, |input| model.forward(input)).await?;
    Ok(logits.iter().map(|row| scoring.apply(row)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::family::Family;
    use crate::bert::checkpoint::{CheckpointFiles, save_weights};
    use safetensors::SafeTensors;
    use crate::bert::config::Preset;
    use crate::bert::model::BertModelConfig;
    use crate::tokenizer::Batch;

    fn vocab() -> Vec<u8> {
        let mut v: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].iter().map(|s| s.to_string()).collect();
        v.extend((0..59).map(|i| format!("w{i}")));
        v.join("\n").into_bytes()
    }

    fn tokenizer() -> BertTokenizer {
        BertTokenizer::from_vocab_txt(&vocab(), true, 24).unwrap()
    }

    fn classifier(spec: FeatureSpec, layers: usize) -> (BertConfig, BertClassifier) {
        let device = Device::flex();
        let config = Preset::Tiny.config(64).with_num_hidden_layers(layers).with_max_position_embeddings(32).without_dropout();
        let bert = BertModelConfig::new(config.clone()).init(&device);
        let width = spec.width(config.hidden_size, layers);
        let head = ClassificationHeadConfig::new(width, 3).with_dropout(0.0).init(&device);
        (config, BertClassifier { bert, head, spec })
    }

    fn logits(model: &BertClassifier) -> Vec<f32> {
        let device = Device::flex();
        let batch = Batch::from_rows(&[vec![2, 9, 11, 3], vec![2, 7, 3]], &[vec![0; 4], vec![0; 3]], 0);
        model.forward(BertInput::from_batch(&batch, &device)).unwrap().into_data().try_to_vec::<f32>().unwrap()
    }

    #[test]
    fn feature_widths_and_layer_choices() {
        let device = Device::flex();
        let (_, model) = classifier(FeatureSpec::default(), 4);
        let batch = Batch::from_rows(&[vec![2, 9, 11, 3]], &[vec![0; 4]], 0);
        let all = model.bert.forward(
            BertInput::from_batch(&batch, &device),
            ForwardOptions { hidden_states: true, ..Default::default() },
        );
        let mask = BertInput::from_batch(&batch, &device).attention_mask;
        let read = |spec: FeatureSpec| spec.extract(&all, mask.clone()).unwrap().into_data().try_to_vec::<f32>().unwrap();
        let mean = |i: usize| mean_pool(all.hidden_states[i].clone(), mask.clone()).into_data().try_to_vec::<f32>().unwrap();
        let spec = |layers| FeatureSpec { pooling: Pooling::Mean, layers, ..Default::default() };
        assert_eq!(read(spec(FeatureLayers::Last)), mean(4));
        assert_eq!(read(spec(FeatureLayers::SecondToLast)), mean(3));
        let concat = read(spec(FeatureLayers::ConcatLastFour));
        assert_eq!(concat.len(), 4 * 128);
        assert_eq!(&concat[..128], &mean(1)[..]);
        assert_eq!(&concat[3 * 128..], &mean(4)[..]);
        let sum = read(spec(FeatureLayers::SumLastFour));
        let want: Vec<f32> = (0..128).map(|j| (1..=4).map(|i| mean(i)[j]).sum()).collect();
        for (a, b) in sum.iter().zip(&want) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
        // A two-layer model concatenates what it has.
        assert_eq!(spec(FeatureLayers::ConcatLastFour).width(128, 2), 256);
        assert!(FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::SumLastFour, ..Default::default() }.check(4, true).is_err());
    }

    #[test]
    fn a_roberta_classifier_exports_under_its_family_names_and_loads_back() {
        // On [CLS] + pooler it is the family's `*ForSequenceClassification` (the pooler is its
        // `classifier.dense`); on the mean it carries the modelling code. XLM-RoBERTa and
        // CamemBERT are RoBERTa's layout under their own model_type and classes.
        let device = Device::flex();
        for (family, class) in [(Family::Roberta, "Roberta"), (Family::XlmRoberta, "XLMRoberta"), (Family::Camembert, "Camembert")] {
            let config = Preset::Tiny.config(64).with_num_hidden_layers(2).with_max_position_embeddings(34)
                .with_pad_token_id(1).with_type_vocab_size(1).with_model_type(family).without_dropout();
            for spec in [FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() }, FeatureSpec::default()] {
                let native = spec.pooling == Pooling::Pooler;
                let bert = BertModelConfig::new(config.clone()).init(&device);
                let head = ClassificationHeadConfig::new(config.hidden_size, 3).with_dropout(0.0).init(&device);
                let model = BertClassifier { bert, head, spec };
                let meta = ClassifierMeta { labels: vec!["a".into(), "b".into(), "c".into()], spec, max_len: 24, scale: None, problem: None, threshold: None };
                let files = export(&config, &model, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
                let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
                let config_json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
                // The family's own model_type where transformers' class computes it; else ours.
                assert_eq!(config_json["model_type"], if native { family.model_type() } else { "bertbench" });
                let weights = get("model.safetensors").unwrap();
                let names = SafeTensors::deserialize(&weights).unwrap().names().into_iter().map(String::from).collect::<Vec<_>>();
                assert!(names.iter().all(|n| n.starts_with("roberta.") || n.starts_with("classifier.")), "{names:?}");
                if native {
                    assert_eq!(config_json["architectures"][0], format!("{class}ForSequenceClassification"));
                    assert!(get(MODELING_FILE).is_none());
                    for name in ["classifier.dense.weight", "classifier.out_proj.weight", "classifier.out_proj.bias"] {
                        assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
                    }
                    assert!(!names.iter().any(|n| n.contains("pooler")), "{names:?}");
                } else {
                    assert_eq!(config_json["architectures"][0], "BertbenchForSequenceClassification");
                    assert_eq!(config_json["auto_map"]["AutoModelForSequenceClassification"], "modeling_bertbench.BertbenchForSequenceClassification");
                    // Only the shipped code knows this model_type: plain transformers refuses it.
                    assert_eq!((config_json["model_type"].as_str(), config_json["bertbench_encoder"].as_str()), (Some("bertbench"), Some(family.model_type())));
                    assert_eq!(config_json["auto_map"]["AutoConfig"], "modeling_bertbench.BertbenchConfig");
                    let code = String::from_utf8(get(MODELING_FILE).unwrap()).unwrap();
                    assert!(code.contains(&format!("from transformers import {class}Config, {class}Model, PreTrainedModel")), "{code}");
                    assert!(code.contains(&format!("self.roberta = {class}Model(config, **with_pooler)")), "{code}");
                    assert!(!code.contains("{PREFIX}") && !code.contains("{MODEL}"), "{code}");
                }
                let files = CheckpointFiles { config_json: get("config.json").unwrap(), weights, tokenizer_json: None, vocab_txt: get("vocab.txt") };
                let loaded = load_classifier(files, None, &device).unwrap();
                for (a, b) in logits(&model).iter().zip(logits(&loaded.model)) {
                    assert!((a - b).abs() < 1e-6, "{a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn an_encoder_saved_without_a_pooler_gets_its_family_sequence_head_and_exports_as_its_own_class() {
        // An MLM checkpoint (or DistilBERT, an ELECTRA discriminator, DeBERTa, ModernBERT) has no
        // pooler: a classifier on [CLS] + pooler gets the layer the family's
        // `*ForSequenceClassification` puts there, fresh as transformers builds it, and exports
        // as that class (no modelling code), loading back to the same logits.
        let device = Device::flex();
        let spec = FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() };
        let tiny = || Preset::Tiny.config(64).with_num_hidden_layers(2).with_max_position_embeddings(34).without_dropout();
        // ModernBERT with everything its folders' config.json gives (the reader fills what one
        // leaves out): a global and a local layer, each with its rotary base.
        use crate::bert::config::AttentionKind;
        let modernbert = tiny().with_model_type(Family::ModernBert).with_type_vocab_size(0).with_norm_bias(Some(false)).with_classifier_bias(Some(true))
            .with_attention_bias(Some(true)).with_mlp_bias(Some(true)).with_classifier_pooling(Some(crate::bert::config::HeadPooling::Mean))
            .with_local_attention(Some(8)).with_layer_types(Some(vec![AttentionKind::FullAttention, AttentionKind::SlidingAttention]))
            .with_global_rope_theta(Some(160_000.0)).with_local_rope_theta(Some(10_000.0));
        for config in [
            tiny(),
            tiny().with_model_type(Family::Roberta).with_pad_token_id(1).with_type_vocab_size(1),
            tiny().with_model_type(Family::DistilBert).with_type_vocab_size(0),
            tiny().with_model_type(Family::Electra),
            tiny().with_model_type(Family::DebertaV2).with_type_vocab_size(0),
            modernbert,
        ] {
            let family = config.model_type;
            let facts = family.facts();
            let bare = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
            assert!(spec.check(2, bare.pooler.is_some()).is_err(), "{family:?}: the bare encoder has no pooler");
            let bert = with_sequence_pooler(bare, &config, None, 3, &device).unwrap();
            let pooler = bert.pooler.as_ref().expect("a pooler");
            assert_eq!((pooler.activation, pooler.norm.is_some()), (facts.sequence_activation, !facts.sequence_head.norm.is_empty()), "{family:?}");
            let mut head = ClassificationHeadConfig::new(config.hidden_size, 3).with_dropout(0.0).init(&device);
            // Larger than a fresh head's weights, so a wrong read shows in the logits.
            let values: Vec<f32> = (0..config.hidden_size * 3).map(|k| 0.3 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
            head.classifier.weight = burn::module::Param::from_tensor(Tensor::from_data(burn::tensor::TensorData::new(values, [config.hidden_size, 3]), &device));
            let model = BertClassifier { bert, head, spec };
            let meta = ClassifierMeta { labels: vec!["a".into(), "b".into(), "c".into()], spec, max_len: 24, scale: None, problem: None, threshold: None };
            let files = export(&config, &model, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
            let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
            let config_json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
            let class = family.base_architecture().replace("Model", "ForSequenceClassification");
            assert_eq!(config_json["architectures"][0], class.as_str(), "{family:?}");
            assert_eq!(config_json["model_type"], family.model_type(), "{family:?}");
            assert!(get(MODELING_FILE).is_none(), "{family:?}: no modelling code");
            let weights = get("model.safetensors").unwrap();
            let names = SafeTensors::deserialize(&weights).unwrap().names().into_iter().map(String::from).collect::<Vec<_>>();
            let dense = match facts.sequence_head.dense {
                "" => format!("{}pooler.dense.weight", family.prefix()),
                d => format!("{d}weight"),
            };
            assert!(names.contains(&dense), "{family:?}: {dense} missing from {names:?}");
            let files = CheckpointFiles { config_json: get("config.json").unwrap(), weights, tokenizer_json: None, vocab_txt: get("vocab.txt") };
            let loaded = load_classifier(files, None, &device).unwrap();
            let (before, after) = (logits(&model), logits(&loaded.model));
            assert!(before.iter().any(|x| x.abs() > 1e-3), "{family:?}: {before:?} too small to tell a wrong read");
            for (a, b) in before.iter().zip(&after) {
                assert!((a - b).abs() < 1e-5, "{family:?}: {before:?} vs {after:?}");
            }
        }
        // A checkpoint's own pooler stays as it is.
        let (config, model) = classifier(spec, 2);
        let own = model.bert.pooler.as_ref().unwrap().dense.weight.val().into_data();
        let kept = with_sequence_pooler(model.bert, &config, None, 3, &device).unwrap();
        assert_eq!(kept.pooler.unwrap().dense.weight.val().into_data(), own);
    }

    #[test]
    fn export_and_load_give_the_same_logits_for_both_layouts() {
        let device = Device::flex();
        for spec in [
            FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() },
            FeatureSpec { pooling: Pooling::Mean, layers: FeatureLayers::ConcatLastFour, ..Default::default() },
        ] {
            let (config, model) = classifier(spec, 2);
            let meta = ClassifierMeta { labels: vec!["neg".into(), "neu".into(), "pos".into()], spec, max_len: 24, scale: None, problem: None, threshold: None };
            let files = export(&config, &model, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
            let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
            let native = spec.pooling == Pooling::Pooler;
            assert_eq!(get(MODELING_FILE).is_none(), native, "modelling code only when transformers has no class for it");
            assert!(get(HEAD_FILE).is_none(), "the head is in model.safetensors");
            let config_json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
            assert_eq!(config_json["id2label"]["2"], "pos");
            assert_eq!(config_json["auto_map"].is_null(), native);
            assert_eq!(config_json["model_type"], if native { "bert" } else { "bertbench" });
            let tokenizer_config: serde_json::Value = serde_json::from_slice(&get("tokenizer_config.json").unwrap()).unwrap();
            assert_eq!(tokenizer_config["model_max_length"], 24);
            assert_eq!(tokenizer_config["cls_token"], "[CLS]");
            assert_eq!(tokenizer_config["do_lower_case"], true);
            let loaded = load_classifier(
                CheckpointFiles {
                    config_json: get("config.json").unwrap(),
                    weights: get("model.safetensors").unwrap(),
                    tokenizer_json: None,
                    vocab_txt: get("vocab.txt"),
                },
                None,
                &device,
            )
            .unwrap();
            assert_eq!(loaded.meta, meta);
            assert_eq!(loaded.tokenizer.max_len(), 24);
            // Equal up to summation order (a transposed weight takes another matmul kernel).
            for (a, b) in logits(&model).iter().zip(logits(&loaded.model)) {
                assert!((a - b).abs() < 1e-6, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn a_head_saved_alone_goes_back_on_its_encoder() {
        let device = Device::flex();
        for spec in [
            FeatureSpec { pooling: Pooling::Mean, layers: FeatureLayers::ConcatLastFour, ..Default::default() },
            FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() },
        ] {
            let (config, model) = classifier(spec, 2);
            let meta = ClassifierMeta { labels: vec!["neg".into(), "neu".into(), "pos".into()], spec, max_len: 20, scale: None, problem: None, threshold: None };
            let files = export_head(&config, &model, &meta).unwrap();
            let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["config.json", HEAD_FILE], "the head and what it needs, no encoder");
            assert!(files.iter().map(|(_, b)| b.len()).sum::<usize>() < 64 * 1024, "a few kilobytes");
            // The encoder it was trained on, as the worker holds it.
            let weights = crate::bert::checkpoint::save_weights(&model.bert).unwrap();
            let base = crate::bert::checkpoint::load(CheckpointFiles { config_json: config.to_hf_json(), weights, tokenizer_json: None, vocab_txt: Some(vocab()) }, &device).unwrap();
            let loaded = attach_head(base, &files, &device).unwrap();
            assert_eq!(loaded.meta, meta);
            assert_eq!(loaded.tokenizer.max_len(), 20);
            for (a, b) in logits(&model).iter().zip(logits(&loaded.model)) {
                assert!((a - b).abs() < 1e-6, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn a_modernbert_tagger_saved_alone_keeps_its_head_transform() {
        // ModernBertForTokenClassification: its `head` before `classifier` on every token.
        let device = Device::flex();
        let config = Preset::Tiny.config(64).with_num_hidden_layers(2).with_max_position_embeddings(32).without_dropout()
            .with_model_type(Family::ModernBert).with_type_vocab_size(0).with_norm_bias(Some(false)).with_classifier_bias(Some(true))
            .with_attention_bias(Some(true)).with_mlp_bias(Some(true));
        let bert = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        let spec = FeatureSpec::tokens();
        let mut head = ClassificationHeadConfig::new(config.hidden_size, 3).with_dropout(0.0).init(&device);
        head.transform = HeadTransform::for_run(&config, spec, None, 5, &device).unwrap();
        let model = BertClassifier { bert, head, spec };
        let meta = ClassifierMeta { labels: vec!["O".into(), "B-X".into(), "I-X".into()], spec, max_len: 20, scale: None, problem: None, threshold: None };
        let files = export_head(&config, &model, &meta).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&files[0].1).unwrap();
        assert_eq!(json["architectures"][0], "ModernBertForTokenClassification");
        let names = SafeTensors::deserialize(&files[1].1).unwrap().names().into_iter().map(String::from).collect::<Vec<_>>();
        assert!(["head.dense.weight", "head.dense.bias", "head.norm.weight"].iter().all(|n| names.contains(&n.to_string())), "{names:?}");
        let weights = save_weights(&model.bert).unwrap();
        let base = crate::bert::checkpoint::load(CheckpointFiles { config_json: config.to_hf_json(), weights, tokenizer_json: None, vocab_txt: Some(vocab()) }, &device).unwrap();
        let loaded = attach_head(base, &files, &device).unwrap();
        assert!(loaded.model.head.transform.is_some());
        let batch = Batch::from_rows(&[vec![2, 9, 11, 3]], &[vec![0; 4]], 0);
        let tokens = |m: &BertClassifier| m.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap().into_data().try_to_vec::<f32>().unwrap();
        let (a, b) = (tokens(&model), tokens(&loaded.model));
        // Equal up to summation order (the encoder's reloaded weights take another kernel).
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-4), "{a:?} vs {b:?}");
        // Without its transform the head is another model: exported with the modelling code.
        let plain = BertClassifier { head: ClassificationHead { transform: None, ..model.head.clone() }, ..model };
        let files = export(&config, &plain, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
        assert!(files.iter().any(|(n, _)| n == MODELING_FILE));
    }

    #[test]
    fn a_plain_encoder_is_not_taken_for_a_classifier() {
        let (config, model) = classifier(FeatureSpec::default(), 2);
        let mut json: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).unwrap();
        json["id2label"] = serde_json::json!({"0": "a", "1": "b"});
        let files = CheckpointFiles {
            config_json: serde_json::to_vec(&json).unwrap(),
            weights: save_weights(&model.bert).unwrap(),
            tokenizer_json: None,
            vocab_txt: Some(vocab()),
        };
        let err = load_classifier(files, None, &Device::flex()).unwrap_err();
        assert!(err.to_string().contains("no classifier head"), "{err}");
    }

    /// A `config.json` as `transformers` 5 writes a binary classifier's (no `id2label`): the
    /// head's outputs are its labels, named as `transformers` names them; `problem_type` decides
    /// the scores, and an export keeps it.
    #[test]
    fn labels_come_from_the_head_where_the_config_names_none_and_problem_type_decides_the_scores() {
        let spec = FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() };
        let device = Device::flex();
        let (config, mut model) = classifier(spec, 2);
        let meta = ClassifierMeta { labels: vec!["a".into(), "b".into(), "c".into()], spec, max_len: 24, scale: None, problem: None, threshold: None };
        let files = export(&config, &model, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
        let get = |files: &[(String, Vec<u8>)], name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone()).unwrap();
        let read = |json: &serde_json::Value, weights: Vec<u8>| {
            let files = CheckpointFiles { config_json: serde_json::to_vec(json).unwrap(), weights, tokenizer_json: None, vocab_txt: Some(vocab()) };
            load_classifier(files, None, &device)
        };
        let mut json: serde_json::Value = serde_json::from_slice(&get(&files, "config.json")).unwrap();
        for key in ["id2label", "label2id", "bertbench_head", "problem_type"] {
            json.as_object_mut().unwrap().remove(key);
        }
        let loaded = read(&json, get(&files, "model.safetensors")).unwrap();
        assert_eq!(loaded.meta.labels, ["LABEL_0", "LABEL_1", "LABEL_2"]);
        assert_eq!((loaded.meta.problem, loaded.meta.pipeline_scoring(), loaded.meta.scoring()), (None, Scoring::Softmax, Scoring::Softmax));
        json["problem_type"] = "multi_label_classification".into();
        let multi = read(&json, get(&files, "model.safetensors")).unwrap();
        assert!(multi.meta.multi_label());
        assert_eq!(multi.meta.scoring(), Scoring::Sigmoid);
        let logits = logits(&multi.model);
        let encoded = [tokenizer().encode_text("w1 w2", None).unwrap()];
        let scores = pollster::block_on(predict(&multi.model, multi.meta.scoring(), &encoded, 0, 1, &device)).unwrap();
        assert!(scores[0].iter().sum::<f32>() > 1.05 || scores[0].iter().sum::<f32>() < 0.95, "{scores:?}: each label's own sigmoid, not a softmax");
        assert!(logits.iter().all(|x| x.is_finite()));
        let again = export(&multi.config, &multi.model, &multi.meta, &tokenizer(), None, Some(&vocab())).unwrap();
        let json_again: serde_json::Value = serde_json::from_slice(&get(&again, "config.json")).unwrap();
        assert_eq!(json_again["problem_type"], "multi_label_classification");
        // One output without labels is a score: raw where the config says regression, else the
        // pipeline's sigmoid of it (the page shows both).
        let one: Vec<f32> = (0..config.hidden_size).map(|k| 0.1 * ((k % 7) as f32 - 3.0)).collect();
        model.head.classifier.weight = burn::module::Param::from_tensor(Tensor::from_data(burn::tensor::TensorData::new(one, [config.hidden_size, 1]), &device));
        model.head.classifier.bias = Some(burn::module::Param::from_tensor(Tensor::zeros([1], &device)));
        let meta = ClassifierMeta { labels: vec!["score".into()], ..meta };
        let files = export(&config, &model, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
        let mut json: serde_json::Value = serde_json::from_slice(&get(&files, "config.json")).unwrap();
        for key in ["id2label", "label2id", "bertbench_head", "problem_type"] {
            json.as_object_mut().unwrap().remove(key);
        }
        let one = read(&json, get(&files, "model.safetensors")).unwrap();
        assert_eq!((one.meta.spec.level, one.meta.labels.clone()), (Level::Score, vec!["LABEL_0".to_string()]));
        assert_eq!((one.meta.pipeline_scoring(), one.meta.scoring()), (Scoring::Sigmoid, Scoring::Raw));
        json["problem_type"] = "regression".into();
        assert_eq!(read(&json, get(&files, "model.safetensors")).unwrap().meta.pipeline_scoring(), Scoring::Raw);
    }

    /// A multi-label run's threshold is written into its export's `config.json` and read back
    /// with it; a single-label head keeps none; a threshold outside (0, 1) is refused by name.
    #[test]
    fn a_multi_label_threshold_travels_with_its_export() {
        let spec = FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, level: Level::MultiLabel };
        let device = Device::flex();
        let (config, model) = classifier(spec, 2);
        let meta = ClassifierMeta { labels: vec!["a".into(), "b".into(), "c".into()], spec, max_len: 24, scale: None, problem: None, threshold: Some(0.35) };
        let files = export(&config, &model, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
        let get = |files: &[(String, Vec<u8>)], name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone()).unwrap();
        let mut json: serde_json::Value = serde_json::from_slice(&get(&files, "config.json")).unwrap();
        assert_eq!((json["problem_type"].as_str(), json[THRESHOLD_KEY].as_f64()), (Some("multi_label_classification"), Some(0.35)));
        let read = |json: &serde_json::Value| {
            let files = CheckpointFiles { config_json: serde_json::to_vec(json).unwrap(), weights: get(&files, "model.safetensors"), tokenizer_json: None, vocab_txt: Some(vocab()) };
            load_classifier(files, None, &device)
        };
        let loaded = read(&json).unwrap();
        assert_eq!((loaded.meta.spec.level, loaded.meta.threshold), (Level::MultiLabel, Some(0.35)));
        json[THRESHOLD_KEY] = 1.5.into();
        let err = read(&json).unwrap_err().to_string();
        assert!(err.contains("multi_label_threshold is 1.5"), "{err}");
        // A single-label head has no threshold to keep.
        let single = FeatureSpec { level: Level::Sentence, ..spec };
        let (config, model) = classifier(single, 2);
        let files = export(&config, &model, &ClassifierMeta { spec: single, ..meta }, &tokenizer(), None, Some(&vocab())).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&get(&files, "config.json")).unwrap();
        assert!(json.get(THRESHOLD_KEY).is_none(), "{json}");
    }

    #[test]
    fn sigmoid_is_the_logistic_function_without_overflow() {
        assert_eq!(sigmoid(0.0), 0.5);
        assert!((sigmoid(2.0) - 1.0 / (1.0 + (-2.0f32).exp())).abs() < 1e-7);
        assert!((sigmoid(-2.0) + sigmoid(2.0) - 1.0).abs() < 1e-7);
        assert_eq!((sigmoid(-200.0), sigmoid(200.0)), (0.0, 1.0));
    }

    #[test]
    fn a_token_classifier_is_named_and_read_as_a_tagger() {
        // A NER model: BertForTokenClassification, `classifier.*` over every token.
        let spec = FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() };
        let (config, model) = classifier(spec, 3);
        let meta = ClassifierMeta { labels: vec!["O".into(), "B-PER".into(), "I-PER".into()], spec, max_len: 24, scale: None, problem: None, threshold: None };
        let files = export(&config, &model, &meta, &tokenizer(), None, Some(&vocab())).unwrap();
        let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
        let mut json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
        json["architectures"] = serde_json::json!(["BertForTokenClassification"]);
        json.as_object_mut().unwrap().remove("bertbench_head");
        let checkpoint = CheckpointFiles {
            config_json: serde_json::to_vec(&json).unwrap(),
            weights: get("model.safetensors").unwrap(),
            tokenizer_json: None,
            vocab_txt: get("vocab.txt"),
        };
        let device = Device::flex();
        let loaded = crate::bert::checkpoint::load(checkpoint.clone(), &device).unwrap();
        assert_eq!(loaded.report.heads, vec![crate::bert::checkpoint::Head::TokenClassifier]);
        let tagger = load_classifier(checkpoint, None, &device).unwrap();
        assert_eq!(tagger.meta.spec, FeatureSpec::tokens());
        assert_eq!(tagger.meta.labels, meta.labels);
        // Every token's logits: the same head on each of the encoder's last hidden states.
        let batch = crate::tokenizer::Batch::from_encoded(&[tagger.tokenizer.encode("the river bank").unwrap()], 0);
        let got = tagger.model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap();
        let hidden = tagger.model.bert.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default()).last_hidden_state;
        let [b, s, h] = hidden.dims();
        let want = model.head.forward(hidden.reshape([b * s, h])).reshape([b, s, 3]);
        let (got, want) = (got.into_data().try_to_vec::<f32>().unwrap(), want.into_data().try_to_vec::<f32>().unwrap());
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-5), "{got:?} vs {want:?}");
    }

    #[test]
    fn loss_is_log_k_for_uniform_logits() {
        let device = Device::flex();
        let logits = Tensor::<2>::zeros([4, 3], &device);
        let labels = Tensor::<1, Int>::from_data(TensorData::new(vec![0i64, 1, 2, 0], [4]), &device);
        let loss = ClassificationHead::loss(logits, labels).into_scalar::<f32>();
        assert!((loss - 3f32.ln()).abs() < 1e-6, "{loss}");
    }

    #[test]
    fn head_maps_hidden_to_labels() {
        let device = Device::flex();
        let head = ClassificationHeadConfig::new(16, 5).init(&device);
        assert_eq!(head.forward(Tensor::zeros([2, 16], &device)).dims(), [2, 5]);
    }
}
