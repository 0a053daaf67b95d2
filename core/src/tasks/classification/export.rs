//! A classifier's Hugging Face folder, out ([`export`]) and back in ([`load_classifier`]): the
//! family's own `*ForSequenceClassification`, `*ForTokenClassification` or
//! `*ForQuestionAnswering` where the features are what that class computes (ModernBERT's token
//! and span classes with their `head` before the output, a [`HeadTransform`]), else the encoder
//! with [`MODELING_FILE`] naming how the page computes them.


use burn::prelude::*;
use safetensors::SafeTensors;

use super::weights::{f32_bytes, has_tensor, linear_tensors, read_head, read_normed_pooler, serialize};
use super::{BertClassifier, ClassificationHead, ClassifierMeta, FeatureLayers, FeatureSpec, HeadTransform, Level, LoadedClassifier, ProblemType};
use crate::bert::checkpoint::{CheckpointFiles, LoadedModel, save_weights};
use crate::bert::config::BertConfig;
use crate::bert::family::SequenceHead;
use crate::bert::model::BertPooler;
use crate::bert::pooling::Pooling;
use crate::data::ScoreScale;
use crate::error::Error;
use crate::tokenizer::BertTokenizer;

/// Name of the head file written for features other than `[CLS]` + pooler.
pub const HEAD_FILE: &str = "classifier_head.safetensors";

/// A head's `transformers` class, by what the head labels ([`class_of`], the one place the
/// export tells heads apart): the end of its name, and where its folder, its saved head or its
/// labels differ from the common path here, what it does instead. A class whose folder is its
/// own implements this in its task's file.
pub(crate) trait HeadClass: Sync {
    /// The class's name after the family's (`ForSequenceClassification`).
    fn suffix(&self) -> &'static str;

    /// Whether a checkpoint whose `config.json` names `architecture` is this class's (read
    /// before the sequence class, which is the default); the token and span classes are told by
    /// [`crate::bert::checkpoint`].
    fn recognises(&self, _architecture: &str) -> bool {
        false
    }

    /// What each pooled feature reads, where it is not the text or pair itself ("each text
    /// alone"): the start of [`FeatureSpec::label`].
    fn reads(&self) -> Option<&'static str> {
        None
    }

    /// Why the model gives no label per text ([`super::predict`] refuses it), if it gives none.
    fn not_per_text(&self) -> Option<&'static str> {
        None
    }

    /// The whole folder, where the class writes its own; `None`: the common path of [`export`].
    fn export(&self, _config: &BertConfig, _model: &BertClassifier, _meta: &ClassifierMeta, _tokenizer: &TokenizerFiles) -> Option<crate::Result<Vec<(String, Vec<u8>)>>> {
        None
    }

    /// Refuses a head that cannot be saved alone on its base (a bi-encoder is saved whole).
    fn saved_alone(&self) -> crate::Result<()> {
        Ok(())
    }

    /// Tensors a head saved alone keeps beside `classifier.*` (name, values, PyTorch shape):
    /// what the run added on the base that the base lacks.
    fn head_tensors(&self, _config: &BertConfig, _model: &BertClassifier) -> crate::Result<Vec<(String, Vec<f32>, Vec<usize>)>> {
        Ok(Vec::new())
    }

    /// Reads what [`head_tensors`](Self::head_tensors) kept (in `bytes`, [`HEAD_FILE`]) back
    /// onto `bert` or `head`.
    fn read_head_tensors(&self, _bert: &mut LoadedModel, _head: &mut ClassificationHead, _bytes: &[u8], _device: &Device) -> crate::Result<()> {
        Ok(())
    }

    /// Its output names from `config.json` (`raw`): `id2label`, unless the class's outputs are
    /// fixed; `None` where the config names none (`transformers` 5 leaves out its default two
    /// labels): the head's width then says how many there are.
    fn labels(&self, raw: &serde_json::Value) -> crate::Result<Option<Vec<String>>> {
        labels_from_config(raw)
    }
}

/// The tokenizer's files a folder carries: `tokenizer_config.json` as the export writes it, and
/// the base's `tokenizer.json` or `vocab.txt` as they are.
pub(crate) struct TokenizerFiles<'a> {
    pub(crate) tokenizer_config: Vec<u8>,
    pub(crate) tokenizer_json: Option<&'a [u8]>,
    pub(crate) vocab_txt: Option<&'a [u8]>,
}

impl TokenizerFiles<'_> {
    /// Them as a folder's `(name, bytes)` pairs.
    pub(crate) fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut files = vec![("tokenizer_config.json".to_string(), self.tokenizer_config.clone())];
        files.extend(self.tokenizer_json.map(|b| ("tokenizer.json".to_string(), crate::tokenizer::tokenizer_json_as_run(b))));
        files.extend(self.vocab_txt.map(|b| ("vocab.txt".to_string(), b.to_vec())));
        files
    }
}

/// A text's or pair's label (`*ForSequenceClassification`; a cross-encoder's one output too).
struct Sequence;

impl HeadClass for Sequence {
    fn suffix(&self) -> &'static str {
        "ForSequenceClassification"
    }
}

/// A label per token (`*ForTokenClassification`) or an answer's start and end
/// (`*ForQuestionAnswering`): the family's token head transform (ModernBERT's `head`) where the
/// saved head holds one.
struct Tokens {
    suffix: &'static str,
    /// Fixed output names (question answering's start and end).
    labels: Option<&'static [&'static str]>,
}

impl HeadClass for Tokens {
    fn suffix(&self) -> &'static str {
        self.suffix
    }

    fn read_head_tensors(&self, bert: &mut LoadedModel, head: &mut ClassificationHead, bytes: &[u8], device: &Device) -> crate::Result<()> {
        let config = &bert.config;
        let SequenceHead { dense, norm, .. } = config.model_type.facts().sequence_head;
        if config.model_type.facts().token_head_transform && !norm.is_empty() && has_tensor(bytes, &format!("{norm}weight")) {
            head.transform = Some(HeadTransform::read(config, bytes, dense, norm, device)?);
        }
        Ok(())
    }

    fn labels(&self, raw: &serde_json::Value) -> crate::Result<Option<Vec<String>>> {
        match self.labels {
            // A question-answering head's two outputs are the start and end logits, whatever
            // `id2label` calls them (`LABEL_0`, `LABEL_1` from `transformers`' defaults).
            Some(names) => Ok(Some(names.iter().map(|l| l.to_string()).collect())),
            None => labels_from_config(raw),
        }
    }
}

/// The class of a head labelling at `level`.
pub(crate) fn class_of(level: Level) -> &'static dyn HeadClass {
    match level {
        Level::Sentence | Level::Score | Level::MultiLabel => &Sequence,
        Level::Token => &Tokens { suffix: "ForTokenClassification", labels: None },
        Level::Span => &Tokens { suffix: "ForQuestionAnswering", labels: Some(&crate::tasks::qa::LABELS) },
        Level::Embedding => &crate::tasks::similarity::BiEncoderClass,
        Level::Choice => &crate::tasks::choice::ChoiceClass,
    }
}

/// `classifier.weight` `[labels, width]` and `classifier.bias` `[labels]`, PyTorch layout.
fn head_tensors(head: &ClassificationHead) -> crate::Result<(Vec<f32>, Vec<f32>, [usize; 2])> {
    linear_tensors(&head.classifier)
}

/// Writes a classifier as a Hugging Face folder: `(file name, bytes)` pairs, which
/// `transformers.AutoModelForSequenceClassification.from_pretrained` loads to the page's
/// probabilities, and `AutoTokenizer` to the page's token ids.
///
/// - `[CLS]` + pooler of the last layer is what each family's `*ForSequenceClassification`
///   computes: `config.json` names that class, with `id2label`, and `model.safetensors` holds
///   the encoder under the family's prefix and the head under the class's names (BERT:
///   `classifier`; RoBERTa: the pooler as `classifier.dense`, the head as `classifier.out_proj`;
///   DistilBERT: the pooler as `pre_classifier`, the head as `classifier`). It loads as it is.
/// - Any other feature carries its modelling code, [`MODELING_FILE`], and an `auto_map` naming
///   it, the Hugging Face convention for a model `transformers` does not know; it loads with
///   `trust_remote_code=True`. `model.safetensors` holds the encoder under its family's prefix
///   and `classifier.*`. Its `model_type` is [`REMOTE_MODEL_TYPE`] (the family in
///   [`ENCODER_KEY`]), so that loading it without `trust_remote_code` fails: as the family's
///   own `*ForSequenceClassification` it would load and silently compute something else.
///
/// `config.json`'s `bertbench_head` says how the features are made (the page reads it back);
/// `tokenizer_config.json` names the tokenizer class, its longest input and its special
/// tokens. `tokenizer_json` / `vocab_txt` are copied as they are.
pub fn export(
    config: &BertConfig,
    model: &BertClassifier,
    meta: &ClassifierMeta,
    tokenizer: &BertTokenizer,
    tokenizer_json: Option<&[u8]>,
    vocab_txt: Option<&[u8]>,
) -> crate::Result<Vec<(String, Vec<u8>)>> {
    // A student keeps some of its encoder's layers: the file says how many the model has.
    let config = &config.clone().with_num_hidden_layers(model.bert.encoder.depth());
    let family = config.model_type;
    let level = meta.spec.level;
    let tokenizer_files = TokenizerFiles { tokenizer_config: tokenizer_config(config, tokenizer, meta.max_len), tokenizer_json, vocab_txt };
    let class = class_of(level);
    if let Some(folder) = class.export(config, model, meta, &tokenizer_files) {
        return folder;
    }
    let tokens = !level.pooled();
    let hf_native = hf_native(meta.spec, family, &model.head);
    if model.head.transform.is_some() && !hf_native {
        return Err(Error::UnsupportedConfig(format!(
            "this {} head transforms each token before its output layer, as {} does on the last layer; it reads {}",
            family.display_name(),
            family.base_architecture().replace("Model", class.suffix()),
            meta.spec.label()
        )));
    }
    // A token classifier has no pooler (transformers builds it with `add_pooling_layer=False`).
    let with_pooler = model.bert.pooler.is_some() && !tokens;
    if let Some(pooler) = model.bert.pooler.as_ref().filter(|_| hf_native && !tokens) {
        let expected = family.facts().sequence_activation;
        if pooler.activation != expected {
            return Err(Error::UnsupportedConfig(format!(
                "a {} classifier whose pooler uses {:?} has no transformers class to export to",
                family.display_name(),
                pooler.activation
            )));
        }
    }
    let config_json = classifier_config(config, meta, with_pooler, hf_native)?;

    let encoder = save_weights(&model.bert)?;
    let (weight, bias, shape) = head_tensors(&model.head)?;
    let st = SafeTensors::deserialize(&encoder).map_err(|e| Error::Weights(e.to_string()))?;
    // Where the family's native classifier keeps its dense layer (in place of the pooler) and
    // its head; a question-answering class calls its head `qa_outputs` (ModernBERT's
    // `classifier`).
    let (pooler_as, head_as) = match (hf_native, level) {
        (true, Level::Sentence | Level::Score | Level::MultiLabel) => (family.facts().sequence_head.dense, family.facts().sequence_head.out),
        (true, Level::Span) => ("", family.facts().qa_outputs),
        _ => ("", "classifier."),
    };
    // ModernBERT's head keeps its LayerNorm beside its dense layer.
    let norm_as = if pooler_as.is_empty() { "" } else { family.facts().sequence_head.norm };
    let name = |n: &str| match (n.strip_prefix("pooler.dense."), n.strip_prefix("pooler.norm.")) {
        (Some(rest), _) if !pooler_as.is_empty() => format!("{pooler_as}{rest}"),
        (_, Some(rest)) if !norm_as.is_empty() => format!("{norm_as}{rest}"),
        _ => format!("{}{n}", family.prefix()),
    };
    let mut all: Vec<(String, Vec<u8>, Vec<usize>)> = st
        .tensors()
        .into_iter()
        .filter(|(n, _)| with_pooler || !n.starts_with("pooler."))
        .map(|(n, view)| (name(&n), view.data().to_vec(), view.shape().to_vec()))
        .collect();
    all.extend(transform_tensors(family, &model.head)?);
    all.push((format!("{head_as}weight"), f32_bytes(&weight), shape.to_vec()));
    all.push((format!("{head_as}bias"), f32_bytes(&bias), vec![shape[0]]));
    let mut files = vec![("config.json".to_string(), config_json), ("model.safetensors".into(), serialize(all)?)];
    if !hf_native {
        files.push((MODELING_FILE.into(), modeling_code(config).into_bytes()));
    }
    files.extend(tokenizer_files.files());
    Ok(files)
}

/// Whether the family's own `transformers` class computes these features: `[CLS]` + pooler of
/// the last layer for a text, the last layer for a token, read through a [`HeadTransform`]
/// exactly where the family's token and span classes have one (ModernBERT's `head`).
fn hf_native(spec: FeatureSpec, family: crate::bert::family::Family, head: &ClassificationHead) -> bool {
    if spec.level.pooled() {
        spec.pooling == Pooling::Pooler && spec.layers == FeatureLayers::Last
    } else {
        spec.layers == FeatureLayers::Last && head.transform.is_some() == family.facts().token_head_transform
    }
}

/// A head's [`HeadTransform`] under the names its family's classes keep it (`head.dense.`,
/// `head.norm.`); none without one.
fn transform_tensors(family: crate::bert::family::Family, head: &ClassificationHead) -> crate::Result<Vec<(String, Vec<u8>, Vec<usize>)>> {
    let Some(transform) = &head.transform else { return Ok(Vec::new()) };
    let SequenceHead { dense, norm, .. } = family.facts().sequence_head;
    Ok(transform.tensors(dense, norm)?.into_iter().map(|(name, values, shape)| (name, f32_bytes(&values), shape)).collect())
}

/// The `config.json` of an exported classifier: the encoder's configuration with the labels,
/// `bertbench_head` (how the page computes the features) and the class that loads it: the
/// family's own (`hf_native`) or the shipped modelling code's.
fn classifier_config(config: &BertConfig, meta: &ClassifierMeta, with_pooler: bool, hf_native: bool) -> crate::Result<Vec<u8>> {
    let family = config.model_type;
    let level = meta.spec.level;
    let mut value: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).map_err(|e| Error::Config(e.to_string()))?;
    let obj = value.as_object_mut().expect("config is an object");
    let id2label: serde_json::Map<String, serde_json::Value> =
        meta.labels.iter().enumerate().map(|(i, l)| (i.to_string(), l.clone().into())).collect();
    let label2id: serde_json::Map<String, serde_json::Value> =
        meta.labels.iter().enumerate().map(|(i, l)| (l.clone(), i.into())).collect();
    obj.insert("id2label".into(), id2label.into());
    obj.insert("label2id".into(), label2id.into());
    // What the config it came with said, else the level's: transformers' regression for one
    // output (mean squared error), a softmax over a text's labels.
    let problem = meta.problem.or(match level {
        Level::Sentence => Some(ProblemType::SingleLabelClassification),
        Level::Score => Some(ProblemType::Regression),
        Level::MultiLabel => Some(ProblemType::MultiLabelClassification),
        _ => None,
    });
    if let Some(problem) = problem.filter(|_| level.pooled()) {
        obj.insert("problem_type".into(), problem.name().into());
    }
    if let Some(threshold) = meta.threshold.filter(|_| problem == Some(ProblemType::MultiLabelClassification)) {
        obj.insert(super::THRESHOLD_KEY.into(), serde_json::json!((threshold as f64 * 100.0).round() / 100.0));
    }
    obj.insert("bertbench_head".into(), serde_json::json!({
        "spec": meta.spec,
        "max_len": meta.max_len,
        "with_pooler": with_pooler,
        "scale": meta.scale,
        "file": "model.safetensors",
        "how": "features from the encoder's hidden states as `spec` says (mean = average over tokens where attention_mask is 1, [CLS] = token 0, Pooler = the pooler's output; layers counted from the end; ConcatLastFour concatenates oldest first); logits = classifier(features)",
    }));
    let task = class_of(level).suffix();
    if hf_native {
        obj.insert("architectures".into(), serde_json::json!([family.base_architecture().replace("Model", task)]));
    } else {
        obj.insert("architectures".into(), serde_json::json!([format!("Bertbench{task}")]));
        // A `model_type` of our own, which only the shipped code registers: plain transformers
        // refuses the folder (it asks for `trust_remote_code=True`) instead of building the
        // family's own class, which would load these weights and compute other numbers.
        obj.insert("model_type".into(), REMOTE_MODEL_TYPE.into());
        obj.insert(ENCODER_KEY.into(), family.model_type().into());
        obj.insert("auto_map".into(), serde_json::json!({
            "AutoConfig": "modeling_bertbench.BertbenchConfig",
            format!("AutoModel{task}"): format!("modeling_bertbench.Bertbench{task}"),
        }));
    }
    serde_json::to_vec_pretty(&value).map_err(|e| Error::Config(e.to_string()))
}

/// A classifier whose encoder is still the one it was trained on (a head-only run), saved as its
/// head alone: `config.json` as [`export`] writes it and [`HEAD_FILE`]. [`attach_head`] puts it
/// back on that encoder; the saved run is a few kilobytes instead of the encoder's megabytes.
pub fn export_head(config: &BertConfig, model: &BertClassifier, meta: &ClassifierMeta) -> crate::Result<Vec<(String, Vec<u8>)>> {
    let class = class_of(meta.spec.level);
    class.saved_alone()?;
    let with_pooler = model.bert.pooler.is_some() && meta.spec.level.pooled();
    let config_json = classifier_config(config, meta, with_pooler, hf_native(meta.spec, config.model_type, &model.head))?;
    let (weight, bias, shape) = head_tensors(&model.head)?;
    let mut tensors = transform_tensors(config.model_type, &model.head)?;
    tensors.extend(class.head_tensors(config, model)?.into_iter().map(|(name, values, shape)| (name, f32_bytes(&values), shape)));
    tensors.push(("classifier.weight".into(), f32_bytes(&weight), shape.to_vec()));
    tensors.push(("classifier.bias".into(), f32_bytes(&bias), vec![shape[0]]));
    let head = serialize(tensors)?;
    Ok(vec![("config.json".into(), config_json), (HEAD_FILE.into(), head)])
}

/// A head saved by [`export_head`] on `bert`, the encoder it was trained on (its tokenizer cut
/// to the length the head was trained with).
pub fn attach_head(mut bert: LoadedModel, files: &[(String, Vec<u8>)], device: &Device) -> crate::Result<LoadedClassifier> {
    let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice());
    let config_json = get("config.json").ok_or_else(|| Error::Input("the saved head has no config.json".into()))?;
    let head = get(HEAD_FILE).ok_or_else(|| Error::Input(format!("the saved head has no {HEAD_FILE}")))?;
    let about = HeadConfig::read(config_json)?;
    let head = read_head_file(&mut bert, about.spec.level, head, device)?;
    about.finish(bert, head)
}

/// The head in [`HEAD_FILE`]: `classifier.*`, and what its class kept beside it
/// ([`HeadClass::read_head_tensors`]).
fn read_head_file(bert: &mut LoadedModel, level: Level, bytes: &[u8], device: &Device) -> crate::Result<ClassificationHead> {
    let mut head = read_head(bytes, HEAD_FILE, ["classifier.weight", "classifier.bias"], device)?;
    class_of(level).read_head_tensors(bert, &mut head, bytes, device)?;
    Ok(head)
}

/// The modelling code an export carries for `trust_remote_code`.
pub const MODELING_FILE: &str = "modeling_bertbench.py";

/// The `model_type` of an export that carries [`MODELING_FILE`]: no `transformers` class has it.
pub const REMOTE_MODEL_TYPE: &str = "bertbench";

/// The `config.json` key that names such an export's encoder family (`bert`, `roberta`, …).
pub const ENCODER_KEY: &str = "bertbench_encoder";

/// [`MODELING_FILE`] for `config`'s family: its `transformers` encoder and configuration classes.
fn modeling_code(config: &BertConfig) -> String {
    let family = config.model_type;
    let model = family.base_architecture();
    let python_bool = |b: bool| if b { "True" } else { "False" };
    include_str!("../modeling_bertbench.py")
        .replace("{CONFIG}", &model.replace("Model", "Config"))
        .replace("{MODEL}", model)
        .replace("{PREFIX}", family.prefix().trim_end_matches('.'))
        .replace("{HAS_POOLER}", python_bool(family.has_pooler()))
        .replace("{HAS_SEGMENTS}", python_bool(family.facts().segments && config.type_vocab_size > 0))
}

/// `tokenizer_config.json`: the tokenizer class `transformers` builds, the longest input the
/// classifier was trained with, casing, the special tokens by role, and where the model has
/// segments, that the segment ids are model inputs: `transformers` 5's `AlbertTokenizer` leaves
/// them out unless told, and would run a pair's second text as segment 0, not as the model (and
/// this page) reads it.
pub(crate) fn tokenizer_config(config: &BertConfig, tokenizer: &BertTokenizer, max_len: usize) -> Vec<u8> {
    let family = config.model_type;
    let piece = |id: u32| tokenizer.id_to_piece(id).unwrap_or_default();
    let class = tokenizer_class(config, tokenizer);
    let mut value = serde_json::json!({
        "tokenizer_class": class,
        "model_max_length": max_len,
        "do_lower_case": !tokenizer.is_cased(),
        "cls_token": piece(tokenizer.cls_id),
        "sep_token": piece(tokenizer.sep_id),
        "pad_token": piece(tokenizer.pad_id),
        "mask_token": tokenizer.mask_token(),
        "unk_token": piece(tokenizer.unk_id),
    });
    if family.facts().segments && config.type_vocab_size > 1 {
        value["model_input_names"] = serde_json::json!(["input_ids", "token_type_ids", "attention_mask"]);
    } else if family.facts().tokenizer_class.is_some() {
        // A generic tokenizer class would hand the model segment ids it does not take.
        value["model_input_names"] = serde_json::json!(["input_ids", "attention_mask"]);
    }
    serde_json::to_vec_pretty(&value).expect("tokenizer config serialises")
}

/// The tokenizer class `transformers` is to build: the family's own, except for a WordPiece
/// vocabulary on a family whose own class reads another kind (the MLM lab's shared-layer ALBERT
/// with its trained `vocab.txt`): `BertTokenizer` then, as `AlbertTokenizer` would read every
/// word of it as `<unk>`, and fail on a WordPiece `tokenizer.json`.
fn tokenizer_class(config: &BertConfig, tokenizer: &BertTokenizer) -> String {
    let facts = config.model_type.facts();
    let own = facts.tokenizer_class.map_or_else(|| config.model_type.base_architecture().replace("Model", "Tokenizer"), str::to_string);
    if tokenizer.is_wordpiece() && !config.model_type.facts().wordpiece_tokenizer { "BertTokenizer".into() } else { own }
}

/// Loads a folder written by [`export`], or any `*ForSequenceClassification` checkpoint (`[CLS]`
/// + pooler features), `*ForTokenClassification` or `*ForQuestionAnswering` one (the last
/// layer's tokens; ModernBERT's through its `head`, a [`HeadTransform`]) or one of another class
/// a task's [`HeadClass`] recognises, of the families read here. `head` is the bytes of [`HEAD_FILE`] when the folder has one.
pub fn load_classifier(files: CheckpointFiles, head: Option<Vec<u8>>, device: &Device) -> crate::Result<LoadedClassifier> {
    let about = HeadConfig::read(&files.config_json)?;
    let architecture = serde_json::from_slice::<serde_json::Value>(&files.config_json)
        .ok()
        .and_then(|v| v.pointer("/architectures/0").and_then(serde_json::Value::as_str).map(str::to_string))
        .unwrap_or_default();
    let mut bert = crate::bert::checkpoint::load(files, device)?;
    let family = bert.config.model_type;
    let own_class = architecture.starts_with(family.base_architecture().trim_end_matches("Model"));
    let head_weights = bert.head_weights.clone().unwrap_or_default();
    // ModernBERT's token and span classes apply its `head` to every token before the output.
    let transform = if family.facts().token_head_transform && own_class && !about.spec.level.pooled() && head.is_none() {
        let SequenceHead { dense, norm, .. } = family.facts().sequence_head;
        Some(HeadTransform::read(&bert.config, &head_weights, dense, norm, device)?)
    } else {
        None
    };
    let no_head = || Error::Input(format!(
        "this folder has no classifier head: model.safetensors lacks classifier.weight and there is no {HEAD_FILE}; load it as an encoder instead"
    ));
    let has = |name: &str| SafeTensors::deserialize(&head_weights).is_ok_and(|st| st.names().iter().any(|n| *n == name));
    let head = match head {
        Some(bytes) => Some(read_head_file(&mut bert, about.spec.level, &bytes, device)?),
        None if transform.is_some() => None,
        // ModernBERT's `head` (dense → activation → LayerNorm on the pooled first token or
        // mean) is a pooler with a LayerNorm, its biases as the config says.
        None if !family.facts().sequence_head.norm.is_empty() && has(&format!("{}weight", family.facts().sequence_head.norm)) => {
            let SequenceHead { dense, out, norm } = family.facts().sequence_head;
            bert.model.pooler = Some(read_normed_pooler(&bert.config, &head_weights, dense, norm, device)?);
            Some(read_head(&head_weights, "model.safetensors", [&format!("{out}weight"), &format!("{out}bias")], device)?)
        }
        // A family whose `*ForSequenceClassification` has its own dense layer (RoBERTa's
        // out_proj(tanh(dense(<s>))), ELECTRA's with GELU, DistilBERT's
        // classifier(ReLU(pre_classifier([CLS])))), dropout aside, is a pooler (in place of any
        // pretrained one) and a linear layer.
        None if !family.facts().sequence_head.dense.is_empty() && has(&format!("{}weight", family.facts().sequence_head.dense)) => {
            let SequenceHead { dense, out, .. } = family.facts().sequence_head;
            let names = |prefix: &str| [format!("{prefix}weight"), format!("{prefix}bias")];
            let ([dense_w, dense_b], [out_w, out_b]) = (names(dense), names(out));
            let pooler = read_head(&head_weights, "model.safetensors", [&dense_w, &dense_b], device)?;
            bert.model.pooler = Some(BertPooler::with_activation(pooler.classifier, family.facts().sequence_activation));
            Some(read_head(&head_weights, "model.safetensors", [&out_w, &out_b], device)?)
        }
        None => None,
    };
    let head = match head {
        Some(head) => head,
        None if about.spec.level == Level::Span && has("qa_outputs.weight") => {
            read_head(&head_weights, "model.safetensors", ["qa_outputs.weight", "qa_outputs.bias"], device)?
        }
        None => read_head(&head_weights, "model.safetensors", ["classifier.weight", "classifier.bias"], device).map_err(|e| match e {
            Error::MissingTensors(_) => no_head(),
            other => other,
        })?,
    };
    let head = ClassificationHead { transform: transform.or(head.transform), ..head };
    about.finish(bert, head)
}

/// What a classifier's `config.json` says about its head: what it labels, its labels (or that
/// it names none), how its features are made, what its outputs are, its score scale and
/// training length.
struct HeadConfig {
    labels: Option<Vec<String>>,
    spec: FeatureSpec,
    /// Whether `spec` was read from `bertbench_head` (an export of this page's), not taken
    /// from the class's defaults.
    spec_saved: bool,
    problem: Option<ProblemType>,
    /// A multi-label head's decision threshold, as its export keeps it.
    threshold: Option<f32>,
    scale: Option<ScoreScale>,
    max_len: Option<usize>,
}

impl HeadConfig {
    fn read(config_json: &[u8]) -> crate::Result<Self> {
        let raw: serde_json::Value = serde_json::from_slice(config_json).map_err(|e| Error::Config(e.to_string()))?;
        let level = if crate::bert::checkpoint::question_answering(config_json) {
            Level::Span
        } else if crate::bert::checkpoint::token_classifier(config_json) {
            Level::Token
        } else {
            let architecture = raw.pointer("/architectures/0").and_then(serde_json::Value::as_str).unwrap_or_default();
            Level::ALL.into_iter().find(|&l| class_of(l).recognises(architecture)).unwrap_or(Level::Sentence)
        };
        let labels = class_of(level).labels(&raw)?;
        let problem = ProblemType::of_config(&raw);
        // One output is transformers' regression (`num_labels = 1`): a cross-encoder's score;
        // a sequence classifier whose config says multi-label gives each label a sigmoid.
        let level = match level {
            Level::Sentence if problem == Some(ProblemType::MultiLabelClassification) => Level::MultiLabel,
            Level::Sentence if labels.as_ref().is_some_and(|l| l.len() == 1) => Level::Score,
            level => level,
        };
        let saved = raw.pointer("/bertbench_head/spec");
        let spec: FeatureSpec = match saved {
            Some(s) => serde_json::from_value(s.clone()).map_err(|e| Error::Config(format!("bertbench_head.spec: {e}")))?,
            None if level == Level::Token => FeatureSpec::tokens(),
            None if level == Level::Span => FeatureSpec::spans(),
            None => FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, level },
        };
        let scale = raw.pointer("/bertbench_head/scale").and_then(|s| serde_json::from_value(s.clone()).ok()).flatten();
        if spec.level != level {
            return Err(Error::Config("config.json's architecture and bertbench_head disagree on what the head labels (texts, tokens or answer spans)".into()));
        }
        let max_len = raw.pointer("/bertbench_head/max_len").and_then(serde_json::Value::as_u64).map(|n| n as usize);
        let threshold = match raw.get(super::THRESHOLD_KEY) {
            None | Some(serde_json::Value::Null) => None,
            Some(t) => match t.as_f64() {
                Some(t) if t > 0.0 && t < 1.0 => Some(t as f32),
                _ => return Err(Error::Config(format!("config.json's {} is {t}; it must be a number between 0 and 1", super::THRESHOLD_KEY))),
            },
        };
        Ok(Self { labels, spec, spec_saved: saved.is_some(), problem, threshold, scale, max_len })
    }

    /// The classifier of `head` on `bert`, once they are checked to fit together. A config that
    /// names no labels gets the head's outputs as `transformers` names them (`LABEL_0`, …); one
    /// output is then a score.
    fn finish(self, bert: LoadedModel, head: ClassificationHead) -> crate::Result<LoadedClassifier> {
        let Self { labels, mut spec, spec_saved, problem, threshold, scale, max_len } = self;
        let outputs = head.classifier.weight.dims()[1];
        let labels = match labels {
            Some(labels) => labels,
            None => {
                if spec.level == Level::Sentence && outputs == 1 && !spec_saved {
                    spec.level = Level::Score;
                }
                (0..outputs).map(|i| format!("LABEL_{i}")).collect()
            }
        };
        let max_len = max_len.unwrap_or(bert.config.max_len());
        spec.check(bert.config.num_hidden_layers, bert.model.pooler.is_some())?;
        let width = spec.width(bert.config.hidden_size, bert.config.num_hidden_layers);
        if head.classifier.weight.dims()[0] != width {
            return Err(Error::ShapeMismatch(vec![format!(
                "the classifier reads {} features but {} makes {width}",
                head.classifier.weight.dims()[0],
                spec.label()
            )]));
        }
        if outputs != labels.len() {
            return Err(Error::Config(format!("config.json names {} labels but the head has {outputs} outputs", labels.len())));
        }
        // One label of several is what a softmax over them means: said or not, the same head.
        let problem = problem.filter(|p| *p != ProblemType::SingleLabelClassification);
        if problem == Some(ProblemType::MultiLabelClassification) && !spec.level.pooled() {
            return Err(Error::UnsupportedConfig("config.json says multi_label_classification, but this head labels each token; transformers reads that only for a text's labels".into()));
        }
        Ok(LoadedClassifier {
            config: bert.config,
            model: BertClassifier { bert: bert.model, head, spec },
            tokenizer: bert.tokenizer.with_max_len(max_len),
            meta: ClassifierMeta { labels, spec, max_len, scale, problem, threshold: threshold.filter(|_| problem == Some(ProblemType::MultiLabelClassification)) },
        })
    }
}

/// `id2label` in id order, `None` when the config has none.
fn labels_from_config(raw: &serde_json::Value) -> crate::Result<Option<Vec<String>>> {
    let Some(map) = raw.get("id2label").and_then(|v| v.as_object()) else {
        return Ok(None);
    };
    let mut pairs: Vec<(usize, String)> = map
        .iter()
        .map(|(k, v)| {
            let id = k.parse::<usize>().map_err(|_| Error::Config(format!("id2label key {k:?} is not a number")))?;
            Ok((id, v.as_str().map_or_else(|| v.to_string(), str::to_string)))
        })
        .collect::<crate::Result<_>>()?;
    pairs.sort();
    if pairs.iter().enumerate().any(|(i, (id, _))| *id != i) {
        return Err(Error::Config("id2label ids must be 0, 1, 2, … without gaps".into()));
    }
    Ok(Some(pairs.into_iter().map(|(_, l)| l).collect()))
}
