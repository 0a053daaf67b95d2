//! Multiple choice (`*ForMultipleChoice`; SWAG): a premise and its endings, one of them right.
//! Each (premise, ending) pair is read through BERT as one sequence (`[CLS] premise [SEP] ending
//! [SEP]`), the head gives each pair one score from its pooled `[CLS]` vector (dropout, then
//! `Linear(hidden, 1)`: `BertForMultipleChoice` on `outputs[1]`; DeBERTa's and ModernBERT's
//! classes pool with their sequence head instead, held as the pooler), and a softmax over the
//! question's endings gives their probabilities; the loss is the cross-entropy of the right one,
//! the metric accuracy.
//!
//! Files: JSON Lines in the layouts people have (this project's `question`/`context`, `endings`,
//! `label`; SWAG, HellaSwag, ARC, OpenBookQA and CommonsenseQA as `datasets` or AI2 write them:
//! [`jsonl`]) or SWAG's own CSV columns (`sent1`, `sent2`, `ending0`…, `label`; `startphrase`
//! when there is no `sent1`), read as `transformers`' `run_swag.py` reads them: the premise is
//! `sent1`, each ending `sent2 + " " + ending_i`. A run's questions all have the same number of
//! endings, two or more: a file's questions with another number than most of them are set aside
//! and counted ([`ChoiceFile::set_aside`]).

use burn::prelude::*;
use safetensors::SafeTensors;
use serde_json::Value;

use super::classification::weights::{f32_bytes, has_tensor, linear_tensors, read_head, read_normed_pooler, serialize};
use super::classification::{
    BertClassifier, ClassificationHead, ClassificationHeadConfig, ClassifierMeta, FeatureLayers, HEAD_FILE, HeadClass, HeadTransform, Level, TokenizerFiles,
};
use crate::bert::checkpoint::{LoadedModel, save_weights};
use crate::bert::config::{BertConfig, HiddenAct};
use crate::bert::family::{PoolerActivation, SequenceHead};
use crate::bert::model::{BertModel, BertPooler, rows_by_length};
use crate::nn::linear::init_linear;
use crate::bert::pooling::Pooling;
use crate::error::Error;
use crate::tasks::metrics::softmax;
use crate::tokenizer::{BertTokenizer, Encoded};

mod jsonl;

/// The name of a multiple-choice head's one output (`id2label` of its export): each ending's
/// score.
pub const SCORE_LABEL: &str = "score";

/// One multiple-choice question as a file gives it (serialisable: the page sends questions to
/// its training worker).
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceItem {
    /// 1-based line of the file where it starts.
    pub line: usize,
    /// The premise (`question`, `context`, or SWAG's `sent1`).
    pub premise: String,
    /// The text read after the premise for each ending (SWAG's `sent2 + " " + ending_i`).
    pub choices: Vec<String>,
    /// The right ending's index.
    pub label: usize,
}

/// A multiple-choice file read: its questions, and those set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceFile {
    /// The questions with the file's most common number of endings, in file order.
    pub items: Vec<ChoiceItem>,
    /// The line and number of endings of each question with another number (ARC's few of 3 or
    /// 5 choices among 4), left out: a run scores one number of endings.
    pub set_aside: Vec<(usize, usize)>,
}

impl ChoiceFile {
    /// What was set aside, as a sentence ("2 questions with another number of endings than
    /// the 4 of the others were left out (lines 7, 19)"), if any.
    pub fn set_aside_note(&self) -> Option<String> {
        let n = self.set_aside.len();
        let endings = self.items.first().map_or(0, |q| q.choices.len());
        let lines: Vec<String> = self.set_aside.iter().take(5).map(|(l, _)| l.to_string()).collect();
        let more = if n > 5 { ", …" } else { "" };
        (n > 0).then(|| format!("{n} question{} with another number of endings than the {endings} of the others {} left out (line{} {}{more})", if n == 1 { "" } else { "s" }, if n == 1 { "was" } else { "were" }, if n == 1 { "" } else { "s" }, lines.join(", ")))
    }
}

/// Reads multiple-choice questions: JSON Lines when the file name says `.jsonl`/`.json` or the
/// first non-blank character is `{`, else CSV (or TSV) with SWAG's columns. Refuses, naming the
/// line (and the column), a question without a premise, with fewer than two endings or an empty
/// one, or a label that is not an ending's index. Questions with another number of endings than
/// most (the first question's on a tie) are set aside.
pub fn parse_choices(bytes: &[u8], file_name: Option<&str>) -> crate::Result<ChoiceFile> {
    let text = crate::data::decode_named(bytes, file_name).map_err(|e| Error::Input(e.to_string()))?.text;
    let name = file_name.unwrap_or("").to_ascii_lowercase();
    let json = [".jsonl", ".json", ".ndjson", ".parquet"].iter().any(|e| name.ends_with(e)) || text.trim_start().starts_with('{') || bytes.starts_with(b"PAR1");
    let all = if json { jsonl::parse_jsonl(&text)? } else { parse_swag_csv(bytes, file_name)? };
    if all.is_empty() {
        return Err(Error::Input("the file has no questions".into()));
    }
    let count = |n: usize| all.iter().filter(|q| q.choices.len() == n).count();
    let first = all[0].choices.len();
    let most = all.iter().map(|q| q.choices.len()).fold(first, |best, n| if count(n) > count(best) { n } else { best });
    let (items, other): (Vec<ChoiceItem>, Vec<ChoiceItem>) = all.into_iter().partition(|q| q.choices.len() == most);
    Ok(ChoiceFile { items, set_aside: other.iter().map(|q| (q.line, q.choices.len())).collect() })
}

/// Refuses a label outside `0..endings`.
fn label_of(line: usize, column: &str, value: &str, endings: usize) -> crate::Result<usize> {
    match value.trim().parse::<usize>() {
        Ok(label) if label < endings => Ok(label),
        _ => Err(Error::Input(format!(
            "line {line}, {column}: {value:?} is not the index of one of its {endings} endings (0 to {})",
            endings - 1
        ))),
    }
}

fn parse_swag_csv(bytes: &[u8], file_name: Option<&str>) -> crate::Result<Vec<ChoiceItem>> {
    let table = crate::data::parse_table(bytes, file_name).map_err(|e| Error::Input(e.to_string()))?;
    // A header of words over rows of words is not always guessed as one: SWAG's names decide.
    let named = |fields: &[String]| fields.iter().any(|f| f.trim() == "ending0");
    let (columns, rows) = match table.rows.first() {
        Some(first) if !table.has_header && named(&first.fields) => (first.fields.clone(), &table.rows[1..]),
        _ if named(&table.columns) => (table.columns.clone(), &table.rows[..]),
        _ => return Err(Error::Input("no header row naming SWAG's columns (sent1, sent2, ending0, ending1, …, label)".into())),
    };
    let column = |name: &str| columns.iter().position(|c| c.trim() == name);
    let premise = column("sent1").or_else(|| column("startphrase")).ok_or_else(|| {
        Error::Input(format!("no sent1 (or startphrase) column for the premise; the columns are {}", columns.join(", ")))
    })?;
    // With `sent1`, SWAG's `sent2` starts each ending; `startphrase` is the two together.
    let lead = if columns[premise].trim() == "sent1" { column("sent2") } else { None };
    let endings: Vec<usize> = (0..).map_while(|i| column(&format!("ending{i}"))).collect();
    if endings.len() < 2 {
        return Err(Error::Input(format!("multiple choice needs columns ending0, ending1, … (at least two); the columns are {}", columns.join(", "))));
    }
    let label = column("label").ok_or_else(|| Error::Input(format!("no label column; the columns are {}", columns.join(", "))))?;
    let mut items = Vec::new();
    for record in rows {
        let line = record.line;
        if let Some(error) = &record.error {
            return Err(Error::Input(format!("line {line}: {error}")));
        }
        let field = |j: usize| -> crate::Result<&str> {
            match record.fields.get(j).map(|f| f.trim()) {
                Some(f) if !f.is_empty() => Ok(f),
                _ => Err(Error::Input(format!("line {line}, column {}: empty", columns[j].trim()))),
            }
        };
        let start = match lead {
            Some(j) => record.fields.get(j).map_or("", |f| f.trim()),
            None => "",
        };
        let choices = endings
            .iter()
            .map(|&j| Ok(if start.is_empty() { field(j)?.to_string() } else { format!("{start} {}", field(j)?) }))
            .collect::<crate::Result<Vec<_>>>()?;
        let label = label_of(line, "column label", record.fields.get(label).map_or("", |f| f.as_str()), choices.len())?;
        items.push(ChoiceItem { line, premise: field(premise)?.to_string(), choices, label });
    }
    Ok(items)
}

/// Encodes a question's pairs: `[CLS] premise [SEP] choice [SEP]`, one per ending.
pub fn encode_question(tokenizer: &BertTokenizer, premise: &str, choices: &[String]) -> crate::Result<Vec<Encoded>> {
    choices.iter().map(|c| tokenizer.encode_pair(premise, c)).collect()
}

/// `bert` with the pooler its family's `*ForMultipleChoice` reads: its own, or, for a checkpoint
/// saved without one (a RoBERTa encoder, say), a fresh one initialised as `transformers` does
/// when it builds the class on such a checkpoint; DeBERTa's is its sequence head's dense layer
/// with GELU (`pooler.dense`, outside the base model); ModernBERT's its `head` (dense, GELU,
/// LayerNorm) on the first token or the mean, read from the MLM head's `head.*` in
/// `head_weights` (the checkpoint's head tensors) where there is one, as `transformers` loads a
/// `ModernBertForMaskedLM` checkpoint into `ModernBertForMultipleChoice`, else fresh from
/// `seed` (the sequence classifier's layer:
/// [`with_sequence_pooler`](super::classification::with_sequence_pooler)). Refuses a family whose
/// class reads no pooler.
pub fn with_pooler(mut bert: BertModel, config: &BertConfig, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<BertModel> {
    let family = config.model_type;
    if family.facts().choice_reads_sequence_head {
        return super::classification::with_sequence_pooler(bert, config, head_weights, seed, device);
    }
    if !family.has_pooler() {
        return Err(Error::UnsupportedConfig(format!(
            "{}'s {} scores each ending with its own head, not the pooler; bertbench trains multiple choice on BERT and the RoBERTa family",
            family.display_name(),
            family.base_architecture().replace("Model", "ForMultipleChoice")
        )));
    }
    if bert.pooler.is_none() {
        bert.pooler = Some(BertPooler::new(init_linear(config.hidden_size, config.hidden_size, config.initializer_range, device)));
    }
    Ok(bert)
}

/// A multiple-choice head on `width` features: dropout, then one score (`classifier`,
/// `Linear(hidden, 1)`).
pub fn head(width: usize, dropout: f64, device: &Device) -> ClassificationHead {
    ClassificationHeadConfig::new(width, 1).with_dropout(dropout).init(device)
}

/// The head's scores of consecutive (premise, ending) rows as one row per question (the view
/// `BertForMultipleChoice` takes before its softmax).
///
/// # Shapes
/// - `scores`: `[questions × endings, 1]`
/// - output: `[questions, endings]`
pub fn by_question(scores: Tensor<2>, endings: usize) -> Tensor<2> {
    let [rows, _] = scores.dims();
    scores.reshape([rows / endings.max(1), endings])
}

/// Mean cross-entropy of each question's right ending under a softmax over its endings.
///
/// # Shapes
/// - `scores`: `[questions, endings]`; `right`: `[questions]`
/// - output: `[1]`
pub fn loss(scores: Tensor<2>, right: Tensor<1, Int>) -> Tensor<1> {
    ClassificationHead::loss(scores, right)
}

/// Each ending's probability for one question: the premise read with each of `choices` (a
/// SWAG file's already prefixed by `sent2`), scored, softmaxed over the endings.
pub async fn predict(model: &BertClassifier, tokenizer: &BertTokenizer, premise: &str, choices: &[String], device: &Device) -> crate::Result<Vec<f32>> {
    if model.spec.level != Level::Choice {
        return Err(Error::Input("this model is not a multiple-choice model".into()));
    }
    if choices.len() < 2 {
        return Err(Error::Input("a question needs at least two endings".into()));
    }
    let encoded = encode_question(tokenizer, premise, choices)?;
    let scores = rows_by_length(&encoded, tokenizer.pad_id, encoded.len(), device, |input| model.forward(input)).await?;
    Ok(softmax(&scores.iter().map(|s| s[0]).collect::<Vec<_>>()))
}

/// The `*ForMultipleChoice` class: its own folder ([`export`]); a head saved alone keeps the
/// pooler the run read where the base lacks one (ModernBERT's `head`, DeBERTa's `pooler`, the
/// pooler of a BERT saved without one, fresh when the run began), so the head reads the same
/// features on that base again; its one output is each ending's score.
pub(crate) struct ChoiceClass;

/// Where a head saved alone keeps a multiple-choice model's pooler (a dense layer and its
/// activation, the family's: see [`with_pooler`]).
const SAVED_POOLER: &str = "pooler.dense.";

impl HeadClass for ChoiceClass {
    fn suffix(&self) -> &'static str {
        "ForMultipleChoice"
    }

    fn recognises(&self, architecture: &str) -> bool {
        architecture.ends_with(self.suffix())
    }

    fn reads(&self) -> Option<&'static str> {
        Some("each ending with its premise")
    }

    fn not_per_text(&self) -> Option<&'static str> {
        Some("the model picks the right ending of a premise; give it a question and its endings")
    }

    fn export(&self, config: &BertConfig, model: &BertClassifier, meta: &ClassifierMeta, tokenizer: &TokenizerFiles) -> Option<crate::Result<Vec<(String, Vec<u8>)>>> {
        Some(export(config, model, meta, tokenizer))
    }

    fn head_tensors(&self, config: &BertConfig, model: &BertClassifier) -> crate::Result<Vec<(String, Vec<f32>, Vec<usize>)>> {
        let SequenceHead { dense, norm, .. } = config.model_type.facts().sequence_head;
        match model.bert.pooler.as_ref() {
            Some(pooler) if pooler.norm.is_some() && !norm.is_empty() => {
                let as_transform = HeadTransform { dense: pooler.dense.clone(), norm: pooler.norm.clone().expect("matched"), activation: HiddenAct::Gelu };
                as_transform.tensors(dense, norm)
            }
            Some(pooler) => {
                let (weight, bias, shape) = linear_tensors(&pooler.dense)?;
                Ok(vec![(format!("{SAVED_POOLER}weight"), weight, shape.to_vec()), (format!("{SAVED_POOLER}bias"), bias, vec![shape[0]])])
            }
            None => Ok(Vec::new()),
        }
    }

    fn read_head_tensors(&self, bert: &mut LoadedModel, _head: &mut ClassificationHead, bytes: &[u8], device: &Device) -> crate::Result<()> {
        let config = &bert.config;
        let SequenceHead { dense, norm, .. } = config.model_type.facts().sequence_head;
        if !norm.is_empty() && has_tensor(bytes, &format!("{norm}weight")) {
            bert.model.pooler = Some(read_normed_pooler(config, bytes, dense, norm, device)?);
        // A base with its own pooler is the one the run read ([`with_pooler`] keeps it).
        } else if bert.model.pooler.is_none() && has_tensor(bytes, &format!("{SAVED_POOLER}weight")) {
            let [weight, bias] = [format!("{SAVED_POOLER}weight"), format!("{SAVED_POOLER}bias")];
            let pooler = read_head(bytes, HEAD_FILE, [&weight, &bias], device)?.classifier;
            let facts = config.model_type.facts();
            let activation = if facts.choice_reads_sequence_head { facts.sequence_activation } else { PoolerActivation::Tanh };
            bert.model.pooler = Some(BertPooler::with_activation(pooler, activation));
        }
        Ok(())
    }

    /// Each ending's score, whatever `id2label` says (`transformers` 5 writes none for its
    /// default two labels).
    fn labels(&self, _raw: &Value) -> crate::Result<Option<Vec<String>>> {
        Ok(Some(vec![SCORE_LABEL.to_string()]))
    }
}

/// Writes a multiple-choice model as the folder of its family's `*ForMultipleChoice`
/// (`config.json`, `model.safetensors`, the tokenizer's files as
/// [`super::classification::export`] passes them): the encoder with its pooler under the
/// family's prefix and `classifier.{weight,bias}` (`[1, hidden]`, `[1]`), which
/// `AutoModelForMultipleChoice` loads as it is. That is BERT's and the RoBERTa family's class (the
/// pooler, dropout, one score), DeBERTa's (its `ContextPooler`, `pooler.dense` with GELU, kept
/// outside the base model) and ModernBERT's (its `head`: `head.dense`, GELU, `head.norm`, on the
/// first token or the mean); it reads `[CLS]` + pooler features of the last layer. A family
/// whose class reads another head (DistilBERT's `pre_classifier`, ELECTRA's `sequence_summary`)
/// and any other feature choice are refused by name.
fn export(
    config: &BertConfig,
    model: &BertClassifier,
    meta: &ClassifierMeta,
    tokenizer: &TokenizerFiles,
) -> crate::Result<Vec<(String, Vec<u8>)>> {
    let family = config.model_type;
    let class = family.base_architecture().replace("Model", "ForMultipleChoice");
    let own_head = family.facts().choice_reads_sequence_head;
    if !family.has_pooler() && !own_head {
        return Err(Error::UnsupportedConfig(format!(
            "{}'s {class} scores each ending with its own head, not the pooler; bertbench exports multiple choice for BERT and the RoBERTa family",
            family.display_name()
        )));
    }
    let spec = meta.spec;
    let pooler = model.bert.pooler.as_ref();
    // BERT's pooler applies tanh; DeBERTa's `ContextPooler` its sequence head's activation.
    let (activation, said) = if own_head { (family.facts().sequence_activation, "GELU") } else { (PoolerActivation::Tanh, "tanh") };
    if spec.pooling != Pooling::Pooler || spec.layers != FeatureLayers::Last || pooler.is_none_or(|p| p.activation != activation) {
        return Err(Error::UnsupportedConfig(format!("{class} scores the pooler's {said} output of [CLS] in the last layer; this model reads {}", spec.label())));
    }
    let [width, outputs] = model.head.classifier.weight.dims();
    if outputs != 1 {
        return Err(Error::UnsupportedConfig(format!("a multiple-choice head has one output per ending; this one has {outputs}")));
    }
    let mut json: Value = serde_json::from_slice(&config.to_hf_json()).map_err(|e| Error::Config(e.to_string()))?;
    let obj = json.as_object_mut().expect("config is an object");
    obj.insert("architectures".into(), serde_json::json!([class]));
    obj.insert("id2label".into(), serde_json::json!({"0": SCORE_LABEL}));
    obj.insert("label2id".into(), serde_json::json!({SCORE_LABEL: 0}));
    obj.insert("bertbench_head".into(), serde_json::json!({
        "spec": spec,
        "max_len": meta.max_len,
        "with_pooler": true,
        "file": "model.safetensors",
        "how": "each ending read with its premise as one sequence; score = classifier(pooler([CLS])); softmax over a question's endings",
    }));
    let config_json = serde_json::to_vec_pretty(&json).map_err(|e| Error::Config(e.to_string()))?;

    let encoder = save_weights(&model.bert)?;
    let st = SafeTensors::deserialize(&encoder).map_err(|e| Error::Weights(e.to_string()))?;
    let read = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().map_err(|e| Error::Device(format!("{e:?}")));
    // burn keeps [in, out]; PyTorch [out, in].
    let weight = read(model.head.classifier.weight.val().transpose())?;
    let bias = match &model.head.classifier.bias {
        Some(b) => read(b.val().unsqueeze::<2>())?,
        None => vec![0.0],
    };
    // The encoder under the family's prefix; DeBERTa's pooler (and ModernBERT's with its
    // LayerNorm) at the top, where its class keeps it.
    let name = |n: &str| match (n.strip_prefix("pooler.dense."), n.strip_prefix("pooler.norm.")) {
        (Some(rest), _) if own_head => format!("{}{rest}", family.facts().sequence_head.dense),
        (_, Some(rest)) if own_head => format!("{}{rest}", family.facts().sequence_head.norm),
        _ => format!("{}{n}", family.prefix()),
    };
    let mut tensors: Vec<(String, Vec<u8>, Vec<usize>)> =
        st.tensors().into_iter().map(|(n, view)| (name(&n), view.data().to_vec(), view.shape().to_vec())).collect();
    tensors.push(("classifier.weight".into(), f32_bytes(&weight), vec![1, width]));
    tensors.push(("classifier.bias".into(), f32_bytes(&bias), vec![1]));
    let mut files = vec![("config.json".to_string(), config_json), ("model.safetensors".into(), serialize(tensors)?)];
    files.extend(tokenizer.files());
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::checkpoint::CheckpointFiles;
    use crate::bert::config::Preset;
    use crate::bert::family::Family;
    use crate::bert::model::BertModelConfig;
    use crate::tasks::classification::{FeatureSpec, load_classifier};

    const SWAG: &[u8] = include_bytes!("../../../tests/fixtures/swag.csv");

    fn refused(text: &str, name: &str) -> String {
        parse_choices(text.as_bytes(), Some(name)).unwrap_err().to_string()
    }

    #[test]
    fn json_lines_read_a_question_or_a_context_its_endings_and_label() {
        let text = concat!(
            r#"{"question": "You drop a glass on the tiles.", "endings": ["It bounces up to the ceiling.", "It breaks.", "It sings."], "label": 1}"#,
            "\n\n",
            r#"{"context": "The kettle boils.", "endings": ["You make tea.", "It freezes.", "It flies."], "label": 0, "id": "x"}"#,
            "\n"
        );
        let items = parse_choices(text.as_bytes(), Some("c.jsonl")).unwrap().items;
        assert_eq!(items.len(), 2);
        assert_eq!((items[0].line, items[0].premise.as_str(), items[0].label), (1, "You drop a glass on the tiles.", 1));
        assert_eq!(items[0].choices[1], "It breaks.");
        assert_eq!((items[1].line, items[1].premise.as_str(), items[1].choices.len()), (3, "The kettle boils.", 3));
        // Without a telling name, a line starting with `{` is JSON too.
        assert_eq!(parse_choices(text.as_bytes(), None).unwrap().items, items);
    }

    #[test]
    fn swag_csv_reads_sent1_as_the_premise_and_sent2_before_each_ending() {
        let items = parse_choices(SWAG, Some("swag.csv")).unwrap().items;
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].premise, "The kettle clicks off.");
        assert_eq!(items[0].choices, ["She pours the water over the tea bag.", "She plants the kettle in the garden, carefully.", "She swims across the kitchen floor.", "She reads the kettle a bedtime story."]);
        assert_eq!((items[1].label, items[1].choices[2].as_str()), (2, "The ball rolls past the keeper into the net."));
        assert_eq!((items[2].line, items[2].label), (4, 1));
    }

    #[test]
    fn the_built_in_example_has_sixty_questions_of_four_endings_with_the_right_one_anywhere() {
        let items = parse_choices(include_bytes!("../../../public/examples/choices.jsonl"), Some("choices.jsonl")).unwrap().items;
        assert_eq!(items.len(), 60);
        assert!(items.iter().all(|q| q.choices.len() == 4));
        for position in 0..4 {
            assert_eq!(items.iter().filter(|q| q.label == position).count(), 15, "right endings at {position}");
        }
    }

    #[test]
    fn a_csv_with_only_a_startphrase_reads_it_as_the_premise() {
        let text = "startphrase,ending0,ending1,label\nThe dog hears the doorbell and,barks.,photosynthesises.,0\n";
        let items = parse_choices(text.as_bytes(), Some("s.csv")).unwrap().items;
        assert_eq!((items[0].premise.as_str(), items[0].choices.clone(), items[0].label), ("The dog hears the doorbell and", vec!["barks.".to_string(), "photosynthesises.".into()], 0));
    }

    #[test]
    fn malformed_questions_are_refused_by_line_and_column() {
        let q = |label: &str, endings: &str| format!("{{\"question\": \"q\", \"endings\": {endings}, \"label\": {label}}}");
        let ok = q("0", r#"["a", "b", "c"]"#);
        let two = |bad: String| format!("{ok}\n{bad}\n");
        let err = refused(&two(q("3", r#"["a", "b", "c"]"#)), "c.jsonl");
        assert!(err.contains("line 2") && err.contains("\"label\"") && err.contains("0 to 2"), "{err}");
        let err = refused(&two(q("\"b\"", r#"["a", "b", "c"]"#)), "c.jsonl");
        assert!(err.contains("line 2") && err.contains("\"label\" is \"b\""), "{err}");
        let err = refused(&two(q("0", r#"["a"]"#)), "c.jsonl");
        assert!(err.contains("line 2") && err.contains("at least two"), "{err}");
        let err = refused(&two(q("0", r#"["a", ""]"#)), "c.jsonl");
        assert!(err.contains("line 2") && err.contains("\"endings\"[1]"), "{err}");
        let err = refused(&two(r#"{"question": "q", "label": 0}"#.into()), "c.jsonl");
        assert!(err.contains("line 2") && err.contains("no \"endings\""), "{err}");
        let err = refused(&two(r#"{"endings": ["a", "b"], "label": 0}"#.into()), "c.jsonl");
        assert!(err.contains("line 2") && err.contains("no premise: none of \"question\", \"context\""), "{err}");
        // Another number of endings than most: set aside, counted, named by line.
        let file = parse_choices(format!("{ok}\n{}\n{ok}\n", q("0", r#"["a", "b"]"#)).as_bytes(), Some("c.jsonl")).unwrap();
        assert_eq!((file.items.len(), file.set_aside.clone()), (2, vec![(2, 2)]));
        assert_eq!(file.set_aside_note().unwrap(), "1 question with another number of endings than the 3 of the others was left out (line 2)");
        assert_eq!(parse_choices(two(q("0", r#"["a", "b"]"#)).as_bytes(), Some("c.jsonl")).unwrap().set_aside, [(2, 2)], "a tie keeps the first's");
        let err = refused(&two("{not json".into()), "c.jsonl");
        assert!(err.contains("line 2") && err.contains("not JSON"), "{err}");

        let csv = |row: &str| format!("sent1,sent2,ending0,ending1,ending2,label\nA man waves.,He,smiles.,melts.,sings.,0\n{row}\n");
        let err = refused(&csv("A cat naps.,It,purrs.,,barks.,0"), "s.csv");
        assert!(err.contains("line 3, column ending1: empty"), "{err}");
        let err = refused(&csv("A cat naps.,It,purrs.,flies.,barks.,3"), "s.csv");
        assert!(err.contains("line 3, column label") && err.contains("0 to 2"), "{err}");
        let err = refused(&csv("A cat naps.,It,purrs.,flies.,barks.,"), "s.csv");
        assert!(err.contains("line 3, column label"), "{err}");
        let err = refused(&csv(",It,purrs.,flies.,barks.,1"), "s.csv");
        assert!(err.contains("line 3, column sent1: empty"), "{err}");
        let err = refused("sent1,sent2,ending0,label\nA man waves.,He,smiles.,0\n", "s.csv");
        assert!(err.contains("ending0, ending1") && err.contains("at least two"), "{err}");
        let err = refused("sent1,sent2,ending0,ending1\nA man waves.,He,smiles.,melts.\n", "s.csv");
        assert!(err.contains("no label column"), "{err}");
        let err = refused("text,ending0,ending1,label\nA man waves.,smiles.,melts.,0\n", "s.csv");
        assert!(err.contains("no sent1 (or startphrase) column"), "{err}");
    }

    #[test]
    fn scores_are_read_per_question_and_the_loss_is_the_right_endings_cross_entropy() {
        let device = Device::flex();
        let head = head(16, 0.0, &device);
        assert_eq!(head.classifier.weight.dims(), [16, 1], "one score per (premise, ending) row");
        let rows = head.forward(Tensor::random([6, 16], burn::tensor::Distribution::Normal(0.0, 1.0), &device));
        assert_eq!(rows.dims(), [6, 1]);
        let scores = by_question(rows.clone(), 3);
        assert_eq!(scores.dims(), [2, 3]);
        // Rows stay in order: question 1's endings are rows 3, 4, 5.
        let flat = rows.into_data().try_to_vec::<f32>().unwrap();
        let grid = scores.clone().into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(flat, grid);
        let right = Tensor::<1, Int>::from_data(TensorData::new(vec![2i64, 0], [2]), &device);
        let got = loss(scores, right).into_scalar::<f32>();
        let want: f32 = [(&grid[..3], 2), (&grid[3..], 0)].iter().map(|(q, r)| -softmax(q)[*r].ln()).sum::<f32>() / 2.0;
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
        let uniform = loss(Tensor::zeros([3, 4], &device), Tensor::from_data(TensorData::new(vec![0i64, 1, 3], [3]), &device));
        assert!((uniform.into_scalar::<f32>() - 4f32.ln()).abs() < 1e-6);
    }

    fn vocab() -> Vec<u8> {
        let mut v: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"].iter().map(|s| s.to_string()).collect();
        v.extend(["the", "kettle", "boils", "you", "make", "tea", "it", "freezes", "flies", "."].map(String::from));
        v.extend((0..49).map(|i| format!("w{i}")));
        v.join("\n").into_bytes()
    }

    /// A multiple-choice model of `family` on a fresh tiny encoder, its head's weights spread so
    /// the endings' probabilities differ.
    fn model(family: Family, spec: FeatureSpec) -> (BertConfig, BertClassifier) {
        let device = Device::flex();
        let mut config = Preset::Tiny.config(64).with_num_hidden_layers(2).with_max_position_embeddings(40).with_model_type(family).without_dropout();
        if family != Family::Bert {
            config = config.with_pad_token_id(1).with_type_vocab_size(1).with_max_position_embeddings(42);
        }
        let bert = BertModelConfig::new(config.clone()).init(&device);
        let mut head = head(config.hidden_size, 0.0, &device);
        // A fresh tiny encoder's pooled vectors of the three pairs are close: large weights tell them apart.
        let values: Vec<f32> = (0..config.hidden_size).map(|k| 50.0 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
        head.classifier.weight = burn::module::Param::from_tensor(Tensor::from_data(TensorData::new(values, [config.hidden_size, 1]), &device));
        (config, BertClassifier { bert, head, spec })
    }

    fn pooler_spec() -> FeatureSpec {
        FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, level: Level::Choice }
    }

    #[test]
    fn an_export_is_the_familys_multiple_choice_class_and_loads_back_with_the_same_probabilities() {
        let device = Device::flex();
        let tokenizer = BertTokenizer::from_vocab_txt(&vocab(), true, 24).unwrap();
        let choices: Vec<String> = ["you make tea .", "it freezes .", "it flies ."].map(String::from).to_vec();
        for (family, class, prefix) in [(Family::Bert, "BertForMultipleChoice", "bert."), (Family::Roberta, "RobertaForMultipleChoice", "roberta.")] {
            let (config, model) = model(family, pooler_spec());
            let meta = ClassifierMeta { labels: vec![SCORE_LABEL.into()], spec: model.spec, max_len: 24, scale: None, problem: None, threshold: None };
            let files = super::super::classification::export(&config, &model, &meta, &tokenizer, None, Some(&vocab())).unwrap();
            let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
            let json: Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
            assert_eq!(json["architectures"][0], class);
            assert_eq!(json["model_type"], family.model_type());
            let weights = get("model.safetensors").unwrap();
            let st = SafeTensors::deserialize(&weights).unwrap();
            assert_eq!(st.tensor("classifier.weight").unwrap().shape(), [1, 128]);
            assert_eq!(st.tensor("classifier.bias").unwrap().shape(), [1]);
            assert!(st.names().iter().any(|n| **n == format!("{prefix}pooler.dense.weight")), "the pooler under the family's prefix");
            assert!(st.names().iter().all(|n| n.starts_with(prefix) || n.starts_with("classifier.")));
            let before = pollster::block_on(predict(&model, &tokenizer, "the kettle boils", &choices, &device)).unwrap();
            assert_eq!(before.len(), 3);
            assert!((before.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(before.iter().any(|&p| (p - 1.0 / 3.0).abs() > 1e-3), "{before:?}: too even to tell a wrong read from a right one");
            let loaded = load_classifier(CheckpointFiles { config_json: get("config.json").unwrap(), weights, tokenizer_json: None, vocab_txt: get("vocab.txt") }, None, &device).unwrap();
            assert_eq!(loaded.meta.spec, model.spec);
            let after = pollster::block_on(predict(&loaded.model, &loaded.tokenizer, "the kettle boils", &choices, &device)).unwrap();
            for (a, b) in before.iter().zip(&after) {
                assert!((a - b).abs() < 1e-6, "{family:?}: {before:?} vs {after:?}");
            }
        }
    }

    #[test]
    fn families_without_a_pooler_and_other_features_are_refused_by_name() {
        let tokenizer = BertTokenizer::from_vocab_txt(&vocab(), true, 24).unwrap();
        let meta = |spec| ClassifierMeta { labels: vec![SCORE_LABEL.into()], spec, max_len: 24, scale: None, problem: None, threshold: None };
        for (family, class) in [(Family::DistilBert, "DistilBertForMultipleChoice"), (Family::Electra, "ElectraForMultipleChoice")] {
            let (mut config, model) = model(Family::Bert, pooler_spec());
            config.model_type = family;
            let err = export(&config, &model, &meta(model.spec), &TokenizerFiles { tokenizer_config: Vec::new(), tokenizer_json: None, vocab_txt: None }).unwrap_err().to_string();
            assert!(err.contains(class) && err.contains(family.display_name()), "{err}");
        }
        let spec = FeatureSpec { pooling: Pooling::Mean, layers: FeatureLayers::Last, level: Level::Choice };
        let (config, model) = model(Family::Bert, spec);
        let err = super::super::classification::export(&config, &model, &meta(spec), &tokenizer, None, None).unwrap_err().to_string();
        assert!(err.contains("BertForMultipleChoice") && err.contains("mean"), "{err}");
    }

    #[test]
    fn an_encoder_saved_without_a_pooler_gets_a_fresh_one_and_a_family_without_refuses() {
        let device = Device::flex();
        let config = Preset::Tiny.config(64).with_num_hidden_layers(1).with_model_type(Family::Roberta).with_pad_token_id(1);
        let bare = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        let pooled = with_pooler(bare, &config, None, 0, &device).unwrap();
        assert_eq!(pooled.pooler.as_ref().map(|p| (p.dense.weight.dims(), p.activation)), Some(([128, 128], PoolerActivation::Tanh)));
        let mut distil = config.clone();
        distil.model_type = Family::DistilBert;
        let err = with_pooler(BertModelConfig::new(config.clone()).init(&device), &distil, None, 0, &device).unwrap_err().to_string();
        assert!(err.contains("DistilBertForMultipleChoice"), "{err}");
        // DeBERTa's class pools with its sequence head: `pooler.dense` with GELU, fresh here.
        let deberta = config.with_model_type(Family::DebertaV2).with_type_vocab_size(0);
        let bare = BertModelConfig::new(deberta.clone()).with_with_pooler(false).init(&device);
        let pooled = with_pooler(bare, &deberta, None, 0, &device).unwrap();
        assert_eq!(pooled.pooler.as_ref().map(|p| p.activation), Some(PoolerActivation::Gelu));
    }

    #[test]
    fn a_modernbert_head_saved_alone_keeps_the_pooling_head_its_base_lacks() {
        // ModernBertForMultipleChoice pools with its `head` (dense, GELU, LayerNorm), outside the
        // base model: a head-only run's saved head carries it.
        use crate::tasks::classification::{attach_head, export_head};
        let device = Device::flex();
        let tokenizer = BertTokenizer::from_vocab_txt(&vocab(), true, 24).unwrap();
        let config = Preset::Tiny.config(64).with_num_hidden_layers(2).with_max_position_embeddings(40).without_dropout()
            .with_model_type(Family::ModernBert).with_type_vocab_size(0).with_norm_bias(Some(false)).with_classifier_bias(Some(true))
            .with_attention_bias(Some(true)).with_mlp_bias(Some(true)).with_classifier_pooling(Some(crate::bert::config::HeadPooling::Mean));
        let bare = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        let encoder = save_weights(&bare).unwrap();
        let bert = with_pooler(bare, &config, None, 3, &device).unwrap();
        let pooler = bert.pooler.as_ref().unwrap();
        assert!(pooler.norm.is_some() && pooler.mean && pooler.activation == PoolerActivation::Gelu);
        let (_, mut model) = model(Family::Bert, pooler_spec());
        model.bert = bert;
        let meta = ClassifierMeta { labels: vec![SCORE_LABEL.into()], spec: model.spec, max_len: 24, scale: None, problem: None, threshold: None };
        let files = export_head(&config, &model, &meta).unwrap();
        let json: Value = serde_json::from_slice(&files[0].1).unwrap();
        assert_eq!(json["architectures"][0], "ModernBertForMultipleChoice");
        let names = SafeTensors::deserialize(&files[1].1).unwrap().names().into_iter().map(String::from).collect::<Vec<_>>();
        assert!(["head.dense.weight", "head.dense.bias", "head.norm.weight"].iter().all(|n| names.contains(&n.to_string())), "{names:?}");
        let base = crate::bert::checkpoint::load(CheckpointFiles { config_json: config.to_hf_json(), weights: encoder, tokenizer_json: None, vocab_txt: Some(vocab()) }, &device).unwrap();
        assert!(base.model.pooler.is_none());
        let loaded = attach_head(base, &files, &device).unwrap();
        assert!(loaded.model.head.transform.is_none(), "the pooler is the encoder's, not a token transform");
        let choices: Vec<String> = ["you make tea .", "it freezes .", "it flies ."].map(String::from).to_vec();
        let before = pollster::block_on(predict(&model, &tokenizer, "the kettle boils", &choices, &device)).unwrap();
        let after = pollster::block_on(predict(&loaded.model, &loaded.tokenizer, "the kettle boils", &choices, &device)).unwrap();
        assert!(before.iter().any(|&p| (p - 1.0 / 3.0).abs() > 1e-3), "{before:?}: too even to tell a wrong read from a right one");
        for (a, b) in before.iter().zip(&after) {
            assert!((a - b).abs() < 1e-5, "{before:?} vs {after:?}");
        }
    }

    #[test]
    fn a_fresh_pooler_is_saved_with_the_head_and_read_back() {
        // DeBERTa's class pools with a `pooler.dense` its base checkpoint lacks (so does a BERT
        // saved without its pooler): a head-only run trains on a fresh one, which its saved
        // head must carry, or the encoder it goes back on reads other features.
        use crate::tasks::classification::{attach_head, export_head};
        let device = Device::flex();
        let tokenizer = BertTokenizer::from_vocab_txt(&vocab(), true, 24).unwrap();
        for family in [Family::DebertaV2, Family::Bert] {
            let config = Preset::Tiny.config(64).with_num_hidden_layers(2).with_max_position_embeddings(40).without_dropout().with_model_type(family);
            let config = if family == Family::DebertaV2 { config.with_type_vocab_size(0) } else { config };
            let bare = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
            let encoder = save_weights(&bare).unwrap();
            let (_, mut model) = model(Family::Bert, pooler_spec());
            model.bert = with_pooler(bare, &config, None, 3, &device).unwrap();
            let meta = ClassifierMeta { labels: vec![SCORE_LABEL.into()], spec: model.spec, max_len: 24, scale: None, problem: None, threshold: None };
            let files = export_head(&config, &model, &meta).unwrap();
            let base = crate::bert::checkpoint::load(CheckpointFiles { config_json: config.to_hf_json(), weights: encoder, tokenizer_json: None, vocab_txt: Some(vocab()) }, &device).unwrap();
            assert!(base.model.pooler.is_none(), "{family:?}: the base has no pooler");
            let loaded = attach_head(base, &files, &device).unwrap();
            let choices: Vec<String> = ["you make tea .", "it freezes .", "it flies ."].map(String::from).to_vec();
            let before = pollster::block_on(predict(&model, &tokenizer, "the kettle boils", &choices, &device)).unwrap();
            let after = pollster::block_on(predict(&loaded.model, &loaded.tokenizer, "the kettle boils", &choices, &device)).unwrap();
            assert!(before.iter().any(|&p| (p - 1.0 / 3.0).abs() > 1e-3), "{family:?}: {before:?} too even to tell a wrong read from a right one");
            for (a, b) in before.iter().zip(&after) {
                assert!((a - b).abs() < 1e-5, "{family:?}: {before:?} vs {after:?}");
            }
        }
    }

    #[test]
    fn a_head_saved_alone_goes_back_on_its_encoder_as_a_multiple_choice_model() {
        // A head-only run keeps its encoder: the page saves the head alone.
        use crate::tasks::classification::{attach_head, export_head};
        let device = Device::flex();
        let tokenizer = BertTokenizer::from_vocab_txt(&vocab(), true, 24).unwrap();
        let (config, model) = model(Family::Bert, pooler_spec());
        let meta = ClassifierMeta { labels: vec![SCORE_LABEL.into()], spec: model.spec, max_len: 24, scale: None, problem: None, threshold: None };
        let files = export_head(&config, &model, &meta).unwrap();
        let json: Value = serde_json::from_slice(&files[0].1).unwrap();
        assert_eq!(json["architectures"][0], "BertForMultipleChoice");
        let weights = save_weights(&model.bert).unwrap();
        let base = crate::bert::checkpoint::load(CheckpointFiles { config_json: config.to_hf_json(), weights, tokenizer_json: None, vocab_txt: Some(vocab()) }, &device).unwrap();
        let loaded = attach_head(base, &files, &device).unwrap();
        assert_eq!(loaded.meta, meta);
        let choices: Vec<String> = ["you make tea .", "it freezes ."].map(String::from).to_vec();
        let before = pollster::block_on(predict(&model, &tokenizer, "the kettle boils", &choices, &device)).unwrap();
        let after = pollster::block_on(predict(&loaded.model, &loaded.tokenizer, "the kettle boils", &choices, &device)).unwrap();
        for (a, b) in before.iter().zip(&after) {
            assert!((a - b).abs() < 1e-6, "{before:?} vs {after:?}");
        }
    }
}
