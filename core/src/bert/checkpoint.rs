//! Hugging Face checkpoints in and out: `config.json` + `model.safetensors` + `tokenizer.json`
//! (or `vocab.txt`), always from bytes so the same code runs in
//! the browser. [`folder`](crate::bert::folder) turns any Hugging Face folder (sharded
//! safetensors, `pytorch_model.bin`) into these files.
//!
//! Module names follow BERT's checkpoint (other families' names are mapped onto them, see
//! [`Family`]); two differ because Rust needs them to:
//!
//! | checkpoint          | here              |
//! |---------------------|-------------------|
//! | `*.LayerNorm.*`     | `*.layer_norm.*`  |
//! | `attention.self.*`  | `attention.self_attn.*` |
//!
//! The family's prefix (`bert.` in task checkpoints such as `BertForMaskedLM`) is stripped. PyTorch stores
//! linear weights as `[out, in]`; burn's adapter transposes them. Half-precision weights are
//! widened to f32, and so are 8-bit ones with their scales ([`quantized`]).

use burn::prelude::*;
use burn::tensor::DType;
use burn_store::{
    BurnToPyTorchAdapter, FloatCastAdapter, ModuleAdapter, ModuleSnapshot, PyTorchToBurnAdapter,
    SafetensorsStore,
};
use safetensors::SafeTensors;

use crate::bert::config::BertConfig;
use crate::bert::family::Family;
use crate::bert::quantized;
use crate::error::{Error, Result};
use crate::bert::model::{BertModel, BertModelConfig};
use crate::tokenizer::BertTokenizer;

/// Buffers some checkpoints carry that are not weights (`arange(512)`, zeros): ignored silently.
const BUFFERS: [&str; 2] = ["embeddings.position_ids", "embeddings.token_type_ids"];

/// The raw files of a checkpoint.
#[derive(Debug, Clone, Default)]
pub struct CheckpointFiles {
    /// `config.json`.
    pub config_json: Vec<u8>,
    /// `model.safetensors`.
    pub weights: Vec<u8>,
    /// `tokenizer.json`, preferred when present.
    pub tokenizer_json: Option<Vec<u8>>,
    /// `vocab.txt`, used when there is no `tokenizer.json`.
    pub vocab_txt: Option<Vec<u8>>,
}

/// What loading found, for the page to show.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadReport {
    /// Tensors loaded into the model.
    pub loaded: usize,
    /// Tensors in the file that belong to task heads (read by the task that uses them).
    pub skipped: Vec<String>,
    /// Whether the checkpoint had a pooler.
    pub with_pooler: bool,
    /// Number of parameters of the loaded model.
    pub num_params: usize,
    /// The task heads the checkpoint carries besides the encoder, by name (see [`Head`]).
    pub heads: Vec<Head>,
    /// How the file stores the encoder's weights (`f32`, `f16`, `bf16`, `int8` or `mixed`); the
    /// model computes in f32 whatever they are.
    pub stored: String,
}

/// A task head found in a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Head {
    /// A masked-language-model head: fill-mask, continued pretraining.
    MaskedLm,
    /// A sentence-pair head: BERT's next-sentence, ALBERT's sentence-order.
    NextSentence,
    /// A classifier over the whole text (`classifier.*`; `id2label` names its classes).
    Classifier,
    /// A classifier of every token (`*ForTokenClassification`: named-entity or part-of-speech
    /// tags), whose `classifier.*` is shaped like a text classifier's but reads each token.
    TokenClassifier,
    /// A span head for extractive question answering (`qa_outputs.*`).
    QuestionAnswering,
    /// ELECTRA's discriminator: which tokens were replaced (`discriminator_predictions.*`).
    ReplacedToken,
}

impl Head {
    /// What the page calls it.
    pub fn label(self) -> &'static str {
        match self {
            Head::MaskedLm => "masked-language-model head (fill-mask)",
            Head::NextSentence => "sentence-pair head (next-sentence or sentence-order)",
            Head::Classifier => "classification head",
            Head::TokenClassifier => "token-classification head (tagging)",
            Head::QuestionAnswering => "question-answering head",
            Head::ReplacedToken => "replaced-token-detection head (ELECTRA's discriminator)",
        }
    }

    /// The heads a family's head tensors (as [`LoadReport::skipped`] names them) make up.
    pub fn found(family: Family, skipped: &[String]) -> Vec<Head> {
        let any = |prefix: &str| skipped.iter().any(|n| n.starts_with(prefix));
        let mut heads = Vec::new();
        if skipped.iter().any(|n| n == family.mlm_marker()) {
            heads.push(Head::MaskedLm);
        }
        if family.facts().pair_head.is_some_and(|pair| any(pair.prefix)) {
            heads.push(Head::NextSentence);
        }
        if any("classifier.") {
            heads.push(Head::Classifier);
        }
        if any("qa_outputs.") {
            heads.push(Head::QuestionAnswering);
        }
        if any("discriminator_predictions.") {
            heads.push(Head::ReplacedToken);
        }
        heads
    }
}

/// A loaded model with its configuration and tokenizer.
#[derive(Debug, Clone)]
pub struct LoadedModel {
    /// Hyper-parameters.
    pub config: BertConfig,
    /// The encoder, on the device it was loaded to.
    pub model: BertModel,
    /// Its tokenizer.
    pub tokenizer: BertTokenizer,
    /// What the loader found.
    pub report: LoadReport,
    /// The checkpoint's task-head tensors (see [`head_tensors`]), for the task that reads them
    /// (fill-mask, a classifier from the Hub); `None` when it carries no head.
    pub head_weights: Option<Vec<u8>>,
}

/// Loads a whole checkpoint onto `device`.
pub fn load(files: CheckpointFiles, device: &Device) -> Result<LoadedModel> {
    let config = BertConfig::from_json_bytes(&files.config_json)?;
    let tokenizer = files.tokenizer(config.read_len())?;
    if tokenizer.vocab_size() > config.vocab_size {
        return Err(Error::Tokenizer(format!(
            "the tokenizer has {} pieces but config.json says vocab_size is {}",
            tokenizer.vocab_size(),
            config.vocab_size
        )));
    }
    let stored = stored_precision(&files.weights);
    let weights = quantized::widen(files.weights)?;
    let head_weights = head_tensors(&weights, config.model_type);
    let (model, mut report) = load_model(&config, weights, device)?;
    report.stored = stored;
    // bertbench's own exports keep any head under `classifier.*`; the architecture says which.
    let named = if question_answering(&files.config_json) {
        Some(Head::QuestionAnswering)
    } else {
        token_classifier(&files.config_json).then_some(Head::TokenClassifier)
    };
    if let Some(named) = named {
        for head in &mut report.heads {
            if *head == Head::Classifier {
                *head = named;
            }
        }
        report.heads.dedup();
    }
    Ok(LoadedModel { config, model, tokenizer, report, head_weights })
}

/// Whether `config.json` names a `*ForTokenClassification` architecture: its `classifier.*`
/// labels tokens, not texts.
pub fn token_classifier(config_json: &[u8]) -> bool {
    architecture_ends_with(config_json, "ForTokenClassification")
}

/// Whether `config.json` names a `*ForQuestionAnswering` architecture.
pub fn question_answering(config_json: &[u8]) -> bool {
    architecture_ends_with(config_json, "ForQuestionAnswering")
}

fn architecture_ends_with(config_json: &[u8], suffix: &str) -> bool {
    serde_json::from_slice::<serde_json::Value>(config_json)
        .ok()
        .and_then(|v| v.get("architectures")?.as_array().cloned())
        .is_some_and(|a| a.iter().any(|n| n.as_str().is_some_and(|n| n.ends_with(suffix))))
}

/// The task-head tensors of `model.safetensors` bytes (every tensor under one of the family's
/// head prefixes, under its own name and dtype) as a small safetensors file of their own, so
/// the heads can be read after the encoder has taken the weights without keeping them twice.
/// The decoder matrix of a tied masked-language-model head is left out: it is the word
/// embeddings. `None` when there are no head tensors (or the bytes are not safetensors:
/// [`load_model`] says why).
pub fn head_tensors(weights: &[u8], family: Family) -> Option<Vec<u8>> {
    let st = SafeTensors::deserialize(weights).ok()?;
    let tied_decoder = |n: &str| n.ends_with("decoder.weight") || n == "vocab_projector.weight";
    let heads: Vec<(String, safetensors::tensor::TensorView<'_>)> = st
        .tensors()
        .into_iter()
        .filter(|(n, _)| family.head_prefixes().iter().any(|p| n.starts_with(p)) && !tied_decoder(n))
        .collect();
    if heads.is_empty() {
        return None;
    }
    safetensors::serialize(heads, None).ok()
}

/// `model.safetensors` bytes of an encoder ([`save_weights`]) with a checkpoint's head tensors
/// ([`head_tensors`]) added: the encoder's names take the family's prefix (`bert.`, …), as a
/// `*ForMaskedLM` or `*ForSequenceClassification` checkpoint stores them.
pub fn with_heads(encoder: &[u8], heads: &[u8], family: Family) -> Result<Vec<u8>> {
    let encoder = SafeTensors::deserialize(encoder).map_err(|e| Error::Weights(e.to_string()))?;
    let heads = SafeTensors::deserialize(heads).map_err(|e| Error::Weights(e.to_string()))?;
    let mut all: Vec<(String, safetensors::tensor::TensorView<'_>)> =
        encoder.tensors().into_iter().map(|(n, v)| (format!("{}{n}", family.prefix()), v)).collect();
    all.extend(heads.tensors());
    let meta = std::collections::HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::serialize(all, Some(meta)).map_err(|e| Error::Weights(e.to_string()))
}

impl CheckpointFiles {
    /// The tokenizer: `tokenizer.json` when there is one, else an uncased `vocab.txt` (a
    /// folder's `tokenizer_config.json` is read by [`from_folder`](crate::bert::folder::from_folder),
    /// which writes the `tokenizer.json` it describes).
    pub fn tokenizer(&self, max_len: usize) -> Result<BertTokenizer> {
        match (&self.tokenizer_json, &self.vocab_txt) {
            (Some(json), _) => BertTokenizer::from_tokenizer_json(json, max_len),
            (None, Some(vocab)) => BertTokenizer::from_vocab_txt(vocab, true, max_len),
            (None, None) => Err(Error::Tokenizer("the model has no tokenizer: it needs tokenizer.json or vocab.txt".into())),
        }
    }
}

/// Loads `model.safetensors` bytes into a [`BertModel`] built from `config`, mapping the
/// family's tensor names (see [`Family`]) onto the model's.
pub fn load_model(config: &BertConfig, weights: Vec<u8>, device: &Device) -> Result<(BertModel, LoadReport)> {
    let family = config.model_type;
    let stored = stored_precision(&weights);
    let weights = quantized::widen(weights)?;
    let names = tensor_names(&weights)?;
    let prefix = family.prefix();
    let strip = |n: &str| n.strip_prefix(prefix).unwrap_or(n).to_string();
    let with_pooler = family.has_pooler() && names.iter().any(|n| strip(n).starts_with("pooler."));

    let mut model = BertModelConfig::new(config.clone()).with_with_pooler(with_pooler).init(device);
    let mut store = encoder_store(weights, config);
    let result = model
        .load_from(&mut store)
        .map_err(|e| Error::Weights(e.to_string()))?;

    let name = |p: &str| family.to_checkpoint_name(p);
    if !result.errors.is_empty() {
        return Err(Error::ShapeMismatch(result.errors.iter().map(|e| name(&e.to_string())).collect()));
    }
    if !result.missing.is_empty() {
        return Err(Error::MissingTensors(result.missing.iter().map(|(p, _)| name(p)).collect()));
    }
    let (skipped, unknown): (Vec<String>, Vec<String>) = result
        .unused
        .iter()
        .map(|p| name(p))
        .filter(|p| !BUFFERS.contains(&p.as_str()))
        .partition(|p| family.head_prefixes().iter().any(|f| p.starts_with(f)));
    if !unknown.is_empty() {
        return Err(Error::UnknownTensors(unknown));
    }
    let report = LoadReport {
        loaded: result.applied.len(),
        heads: Head::found(family, &skipped),
        skipped,
        with_pooler,
        num_params: model.num_params(),
        stored,
    };
    Ok((model, report))
}

/// A store reading a family's encoder from `model.safetensors` bytes: its prefix removed, its
/// names mapped onto BERT's (see [`Family::load_renames`], and ALBERT's layers in groups of
/// several), weights as [`hf_store`] reads them.
pub(crate) fn encoder_store(weights: Vec<u8>, config: &BertConfig) -> SafetensorsStore {
    let family = config.model_type;
    let mut store = hf_store(weights).with_key_remapping(&format!("^{}", regex::escape(family.prefix())), "");
    for (theirs, ours) in config.grouped_layer_names() {
        store = store.with_key_remapping(format!("^{}", regex::escape(&theirs)), &ours);
    }
    for (from, to) in family.load_renames() {
        store = store.with_key_remapping(from, *to);
    }
    store
}

/// A store reading Hugging Face `model.safetensors` bytes into this crate's modules: linear
/// weights transposed, half precision widened, `LayerNorm`/`self` renamed (see the table above).
/// Partial: the caller checks what was missing or unused.
pub(crate) fn hf_store(weights: Vec<u8>) -> SafetensorsStore {
    SafetensorsStore::from_bytes(Some(weights))
        .with_from_adapter(PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F32)))
        .with_key_remapping(r"\.LayerNorm\.", ".layer_norm.")
        .with_key_remapping(r"\.attention\.self\.", ".attention.self_attn.")
        .allow_partial(true)
        .validate(false)
}

/// How a safetensors file stores its weights: `f32`, `f16`, `bf16`, `int8` (8-bit matrices with
/// their scales, see [`quantized`], the rest in any float type), or `mixed`.
fn stored_precision(weights: &[u8]) -> String {
    let Ok(st) = SafeTensors::deserialize(weights) else { return "unknown".into() };
    if quantized::is_quantized(weights) {
        return "int8".into();
    }
    let mut kinds: Vec<&str> = st
        .tensors()
        .iter()
        .filter_map(|(_, view)| match view.dtype() {
            safetensors::Dtype::F32 => Some("f32"),
            safetensors::Dtype::F16 => Some("f16"),
            safetensors::Dtype::BF16 => Some("bf16"),
            _ => None,
        })
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    match kinds.as_slice() {
        [one] => (*one).to_string(),
        _ => "mixed".into(),
    }
}

/// The tensor names of a safetensors file, checking the whole file is readable first.
fn tensor_names(weights: &[u8]) -> Result<Vec<String>> {
    if weights.len() < 8 {
        return Err(Error::Weights(format!("the file is {} bytes long; it is not a safetensors file", weights.len())));
    }
    let st = SafeTensors::deserialize(weights).map_err(|e| Error::Weights(describe_safetensors_error(e, weights.len())))?;
    let mut names: Vec<String> = st.names().into_iter().map(String::from).collect();
    names.sort();
    Ok(names)
}

fn describe_safetensors_error(e: safetensors::SafeTensorError, len: usize) -> String {
    use safetensors::SafeTensorError as E;
    match e {
        E::InvalidHeaderLength => format!("the header length is larger than the {len}-byte file (truncated or not safetensors)"),
        E::MetadataIncompleteBuffer => format!("the file ends before its tensors do ({len} bytes): it is truncated"),
        E::HeaderTooLarge => "the header is implausibly large: the file is corrupt or not safetensors".into(),
        E::InvalidHeader(_) | E::InvalidHeaderDeserialization(_) => {
            "the header is not valid safetensors JSON".into()
        }
        other => other.to_string(),
    }
}

/// Writes the model's weights as `model.safetensors` bytes with its family's Hugging Face
/// names and layout, which `transformers`' `AutoModel` loads as it is.
pub fn save_weights(model: &BertModel) -> Result<Vec<u8>> {
    let mut store = SafetensorsStore::from_bytes(None).with_to_adapter(BurnToPyTorchAdapter).metadata("format", "pt");
    for (theirs, ours) in model.encoder.grouped_layer_names() {
        store = store.with_key_remapping(format!("^{}", regex::escape(&ours)), &theirs);
    }
    for (from, to) in model.family().save_renames() {
        store = store.with_key_remapping(from, *to);
    }
    model.save_into(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    store.get_bytes().map_err(|e| Error::Weights(e.to_string()))
}

/// [`save_weights`] for any module built from this crate's parts (a model with heads, say):
/// module paths become tensor names, with Hugging Face's `LayerNorm` and `self` spelling.
pub fn save_module<M: Module>(model: &M) -> Result<Vec<u8>> {
    let mut store = SafetensorsStore::from_bytes(None)
        .with_to_adapter(BurnToPyTorchAdapter)
        .with_key_remapping(r"\.layer_norm\.", ".LayerNorm.")
        .with_key_remapping(r"\.self_attn\.", ".self.")
        .metadata("format", "pt");
    model.save_into(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    store.get_bytes().map_err(|e| Error::Weights(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::tiny_config;
    use crate::bert::model::{BertInput, ForwardOptions};
    use crate::tokenizer::Batch;

    fn tiny() -> (BertConfig, BertModel) {
        let device = Device::flex();
        let config = tiny_config(64).without_dropout();
        let model = BertModelConfig::new(config.clone()).init(&device);
        (config, model)
    }

    fn names(bytes: &[u8]) -> Vec<String> {
        tensor_names(bytes).unwrap()
    }

    #[test]
    fn saves_hugging_face_names_and_loads_them_back_identically() {
        let (config, model) = tiny();
        let bytes = save_weights(&model).unwrap();
        let n = names(&bytes);
        for want in [
            "embeddings.LayerNorm.weight",
            "embeddings.word_embeddings.weight",
            "encoder.layer.1.attention.self.query.weight",
            "encoder.layer.0.attention.output.LayerNorm.bias",
            "encoder.layer.0.intermediate.dense.weight",
            "pooler.dense.bias",
        ] {
            assert!(n.contains(&want.to_string()), "{want} not in {n:?}");
        }
        // PyTorch layout: intermediate.dense is [out = 512, in = 128].
        let st = SafeTensors::deserialize(&bytes).unwrap();
        assert_eq!(st.tensor("encoder.layer.0.intermediate.dense.weight").unwrap().shape(), [512, 128]);

        let device = Device::flex();
        let (loaded, report) = load_model(&config, bytes, &device).unwrap();
        assert!(report.with_pooler);
        assert_eq!(report.num_params as u64, config.num_params(true));
        let batch = Batch::from_rows(&[vec![2, 9, 11, 3]], &[vec![0; 4]], 0);
        let run = |m: &BertModel| {
            m.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default())
                .last_hidden_state
                .into_data()
                .try_to_vec::<f32>()
                .unwrap()
        };
        assert_eq!(run(&model), run(&loaded));
    }

    #[test]
    fn missing_tensors_are_named() {
        let (config, model) = tiny();
        let bytes = save_weights(&model).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let kept: Vec<_> = st
            .tensors()
            .into_iter()
            .filter(|(n, _)| n != "encoder.layer.1.output.dense.weight")
            .collect();
        let cut = safetensors::serialize(kept, None).unwrap();
        let err = load_model(&config, cut, &Device::flex()).unwrap_err();
        assert!(matches!(err, Error::MissingTensors(_)), "{err}");
        assert!(err.to_string().contains("encoder.layer.1.output.dense.weight"), "{err}");
    }

    #[test]
    fn shape_mismatch_is_named() {
        let (_, model) = tiny();
        let bytes = save_weights(&model).unwrap();
        // Same weights, but the config claims a wider feed-forward block.
        let wrong = tiny_config(64).with_intermediate_size(256);
        let err = load_model(&wrong, bytes, &Device::flex()).unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch(_)), "{err}");
        assert!(err.to_string().contains("intermediate.dense"), "{err}");
    }

    #[test]
    fn unknown_tensors_are_refused_and_head_tensors_skipped() {
        let (config, model) = tiny();
        let bytes = save_weights(&model).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let mut all: Vec<(String, safetensors::tensor::TensorView<'_>)> = st.tensors();
        let extra = all[0].1.clone();
        all.push(("cls.predictions.bias".into(), extra.clone()));
        let with_head = safetensors::serialize(all.clone(), None).unwrap();
        let (_, report) = load_model(&config, with_head, &Device::flex()).unwrap();
        assert_eq!(report.skipped, vec!["cls.predictions.bias".to_string()]);

        all.push(("encoder.layer.9.mystery.weight".into(), extra));
        let strange = safetensors::serialize(all, None).unwrap();
        let err = load_model(&config, strange, &Device::flex()).unwrap_err();
        assert!(err.to_string().contains("encoder.layer.9.mystery.weight"), "{err}");
    }

    #[test]
    fn bert_prefix_is_stripped() {
        let (config, model) = tiny();
        let bytes = save_weights(&model).unwrap();
        let st = SafeTensors::deserialize(&bytes).unwrap();
        let renamed: Vec<_> = st.tensors().into_iter().map(|(n, v)| (format!("bert.{n}"), v)).collect();
        let bytes = safetensors::serialize(renamed, None).unwrap();
        let (_, report) = load_model(&config, bytes, &Device::flex()).unwrap();
        assert_eq!(report.num_params as u64, config.num_params(true));
    }

    #[test]
    fn truncated_and_garbage_files_give_messages() {
        let (config, model) = tiny();
        let bytes = save_weights(&model).unwrap();
        let err = load_model(&config, bytes[..bytes.len() / 2].to_vec(), &Device::flex()).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
        let err = load_model(&config, b"<html>404</html>".to_vec(), &Device::flex()).unwrap_err();
        assert!(matches!(err, Error::Weights(_)), "{err}");
        let err = load_model(&config, vec![], &Device::flex()).unwrap_err();
        assert!(err.to_string().contains("not a safetensors file"), "{err}");
    }
}
