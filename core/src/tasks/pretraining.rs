//! The pretraining task: masked-language modelling, optionally with next-sentence or
//! sentence-order prediction (`BertForPreTraining`, `BertForMaskedLM`): the heads, their export
//! and loading, and fill-mask. The run itself is [`crate::train::Pretrainer`].
//!
//! Vocabulary logits are computed only at the picked positions (see [`MlmHead::forward`]).

use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::TensorData;
use burn_store::{BurnToPyTorchAdapter, ModuleSnapshot, SafetensorsStore};

use burn::module::Param;

use crate::bert::config::HiddenAct;
use crate::nn::layer_norm::LayerNorm;
use crate::nn::linear::{init_linear, linear, matmul};
use crate::bert::checkpoint::{CheckpointFiles, Head, LoadedModel, hf_store, save_weights, with_heads};
use crate::bert::config::BertConfig;
use crate::error::Error;
use crate::nn::read_f32;
use crate::tasks::metrics::softmax;
use crate::bert::model::{BertInput, BertModel, BertModelConfig, BertPooler, ForwardOptions};
use crate::tokenizer::{Batch, BertTokenizer};

/// The pretraining heads (`cls` in a `BertForPreTraining` checkpoint).
#[derive(Module, Debug)]
pub struct PretrainingHeads {
    /// Masked-token prediction.
    pub predictions: MlmHead,
    /// NSP/SOP: `[CLS]` pooled vector → 2 logits, when a pair task is trained.
    pub seq_relationship: Option<Linear>,
}

/// BERT with its pretraining heads.
#[derive(Module, Debug)]
pub struct BertForPreTraining {
    /// The encoder (with pooler when a pair task is trained).
    pub bert: BertModel,
    /// MLM (and NSP/SOP) heads.
    pub cls: PretrainingHeads,
}

impl BertForPreTraining {
    /// Fresh heads on `bert` (a new model, or a pretrained one to adapt to a corpus). A pair
    /// task on an encoder without a pooler gets a freshly initialised one.
    pub fn new(mut bert: BertModel, config: &BertConfig, pair_task: bool, device: &Device) -> Self {
        if pair_task && bert.pooler.is_none() {
            bert.pooler = Some(BertPooler::new(init_linear(config.hidden_size, config.hidden_size, config.initializer_range, device)));
        }
        let predictions = MlmHeadConfig::from_model(config).with_initializer_range(config.initializer_range).init(device);
        let seq_relationship = pair_task.then(|| init_linear(config.hidden_size, 2, config.initializer_range, device));
        Self { bert, cls: PretrainingHeads { predictions, seq_relationship } }
    }

    /// A freshly initialised model of `config`'s size.
    pub fn from_scratch(config: &BertConfig, pair_task: bool, device: &Device) -> Self {
        let bert = BertModelConfig::new(config.clone()).with_with_pooler(pair_task).init(device);
        Self::new(bert, config, pair_task, device)
    }

    /// MLM logits at the picked positions and, with a pair head, the pair logits.
    ///
    /// # Shapes
    /// - `input`: `[batch, seq]` tensors; `picked`: `[picked]` flat indices `b * seq + s`
    /// - output: `([picked, vocab], Option<[batch, 2]>)`
    pub fn forward(&self, input: BertInput, picked: Tensor<1, Int>) -> (Tensor<2>, Option<Tensor<2>>) {
        let out = self.bert.forward(input, ForwardOptions::default());
        let [batch, seq, hidden] = out.last_hidden_state.dims();
        let rows = out.last_hidden_state.reshape([batch * seq, hidden]).select(0, picked);
        let table = self.bert.embeddings.word_embeddings.weight.val();
        let mlm = self.cls.predictions.forward(rows, table);
        let pair = match (&self.cls.seq_relationship, out.pooler_output) {
            (Some(head), Some(pooled)) => Some(linear(head, pooled)),
            _ => None,
        };
        (mlm, pair)
    }
}

/// Top predictions for one `[MASK]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MaskFill {
    /// Index of the `[MASK]` in the tokenized input.
    pub position: usize,
    /// `(piece, probability)`, most likely first.
    pub top: Vec<(String, f32)>,
}

/// The pretrained model as a Hugging Face folder under its family's names: `config.json`
/// (`BertForPreTraining` for a BERT with a pair head, else the family's `*ForMaskedLM`),
/// `model.safetensors` with the encoder under the family's prefix and the heads under their
/// checkpoint names (the decoder is tied to the word embeddings, so it is not stored),
/// `tokenizer_config.json` naming the class that reads `tokenizer`'s vocabulary (`BertTokenizer`
/// for a WordPiece one on an ALBERT), and the tokenizer files given. `transformers` loads it with
/// `AutoModelForMaskedLM` and `AutoTokenizer`; the studio loads the encoder from it as from any
/// checkpoint. Only BERT (next sentence) and ALBERT (sentence order) have a pair head in
/// `transformers`: another family's pair head is not exported.
pub fn export(
    model: &BertForPreTraining,
    config: &BertConfig,
    tokenizer: &BertTokenizer,
    tokenizer_json: Option<&[u8]>,
    vocab_txt: Option<&[u8]>,
) -> crate::Result<Vec<(String, Vec<u8>)>> {
    let family = config.model_type;
    let mut value: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).map_err(|e| Error::Config(e.to_string()))?;
    let pair_head = family.facts().pair_head.filter(|_| model.cls.seq_relationship.is_some());
    let pair = pair_head.is_some();
    let architecture = pair_head.map_or(family.mlm_architecture(), |p| p.architecture);
    value["architectures"] = serde_json::json!([architecture]);
    value["tie_word_embeddings"] = true.into();
    let heads = PretrainingHeads { predictions: model.cls.predictions.clone(), seq_relationship: model.cls.seq_relationship.clone().filter(|_| pair) };
    let mut store = SafetensorsStore::from_bytes(None).with_to_adapter(BurnToPyTorchAdapter);
    for (from, to) in family.mlm_save_renames() {
        store = store.with_key_remapping(from, *to);
    }
    heads.save_into(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    let heads = store.get_bytes().map_err(|e| Error::Weights(e.to_string()))?;
    let weights = with_heads(&save_weights(&model.bert)?, &heads, family)?;
    let mut files = vec![
        ("config.json".to_string(), serde_json::to_vec_pretty(&value).map_err(|e| Error::Config(e.to_string()))?),
        ("model.safetensors".to_string(), weights),
        ("tokenizer_config.json".to_string(), crate::tasks::classification::tokenizer_config(config, tokenizer, config.max_len())),
    ];
    if let Some(b) = tokenizer_json {
        files.push(("tokenizer.json".into(), crate::tokenizer::tokenizer_json_as_run(b)));
    }
    if let Some(b) = vocab_txt {
        files.push(("vocab.txt".into(), b.to_vec()));
    }
    Ok(files)
}

/// A checkpoint with its masked-language-model head (a `BertForMaskedLM`, `BertForPreTraining`,
/// `RobertaForMaskedLM` or `DistilBertForMaskedLM` folder, or one saved by [`export`]), with its
/// tokenizer and configuration: what continued pretraining starts from. An encoder-only
/// checkpoint is refused (it has no head to fill masks with).
pub fn load(files: CheckpointFiles, device: &Device) -> crate::Result<(BertForPreTraining, BertTokenizer, BertConfig)> {
    let loaded = crate::bert::checkpoint::load(files, device)?;
    let cls = load_heads(&loaded, device)?;
    let LoadedModel { config, model: mut bert, tokenizer, .. } = loaded;
    if cls.seq_relationship.is_some() && bert.pooler.is_none() {
        bert.pooler = Some(BertPooler::new(init_linear(config.hidden_size, config.hidden_size, config.initializer_range, device)));
    }
    Ok((BertForPreTraining { bert, cls }, tokenizer, config))
}

/// The pretraining heads a loaded checkpoint carries (its masked-language-model head, and
/// BERT's next-sentence head when there is one): fill-mask on the loaded model, or the start
/// of continued pretraining. Refused, naming why, when there is no MLM head or its decoder is
/// not tied to the word embeddings.
pub fn load_heads(loaded: &LoadedModel, device: &Device) -> crate::Result<PretrainingHeads> {
    let family = loaded.config.model_type;
    if loaded.config.legacy == Some(false) {
        return Err(Error::UnsupportedConfig(format!(
            "this {}'s masked-language-model head is lm_predictions.lm_head (legacy is false); bertbench reads its legacy head, cls.predictions",
            family.display_name()
        )));
    }
    if !loaded.report.heads.contains(&Head::MaskedLm) {
        return Err(Error::MissingTensors(vec![format!("{} (the checkpoint has no masked-language-model head)", family.mlm_marker())]));
    }
    if !loaded.config.tie_word_embeddings {
        return Err(Error::UnsupportedConfig(
            "tie_word_embeddings is false: the masked-language-model head has its own decoder matrix, which bertbench does not read (it ties the decoder to the word embeddings)".into(),
        ));
    }
    let config = &loaded.config;
    let pair = loaded.report.heads.contains(&Head::NextSentence);
    if config.decoder_bias == Some(false) {
        return Err(Error::UnsupportedConfig(format!(
            "this {}'s masked-language-model decoder has no bias (decoder_bias is false); bertbench's head adds one per vocabulary entry",
            family.display_name()
        )));
    }
    let predictions = MlmHeadConfig::from_model(config).init(device);
    let seq_relationship = pair.then(|| init_linear(config.hidden_size, 2, config.initializer_range, device));
    let mut heads = PretrainingHeads { predictions, seq_relationship };
    let mut store = hf_store(loaded.head_weights.clone().unwrap_or_default());
    for (from, to) in family.mlm_renames() {
        store = store.with_key_remapping(from, *to);
    }
    let result = heads.load_from(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    if !result.errors.is_empty() {
        return Err(Error::ShapeMismatch(result.errors.iter().map(|e| format!("{} head: {e}", family.display_name())).collect()));
    }
    if !result.missing.is_empty() {
        return Err(Error::MissingTensors(result.missing.iter().map(|(p, _)| format!("{} head: {p}", family.display_name())).collect()));
    }
    Ok(heads)
}

/// Top-`k` predictions for every mask in `text` (written literally as the tokenizer's mask
/// token: `[MASK]`, RoBERTa's `<mask>`).
pub async fn fill_mask(model: &BertForPreTraining, tokenizer: &BertTokenizer, text: &str, k: usize, device: &Device) -> crate::Result<Vec<MaskFill>> {
    fill_mask_with(&model.bert, &model.cls.predictions, tokenizer, text, k, device).await
}

/// [`fill_mask`] with an encoder and a masked-language-model head held apart (the explorer's
/// loaded model and the head its checkpoint carries).
pub async fn fill_mask_with(bert: &BertModel, head: &MlmHead, tokenizer: &BertTokenizer, text: &str, k: usize, device: &Device) -> crate::Result<Vec<MaskFill>> {
    let encoded = tokenizer.encode(text)?;
    let positions: Vec<usize> = encoded.tokens.iter().enumerate().filter(|(_, t)| t.id == tokenizer.mask_id).map(|(i, _)| i).collect();
    if positions.is_empty() {
        let mask = tokenizer.mask_token();
        return Err(Error::Input(format!("the text has no {mask}: write {mask} where a word should be guessed")));
    }
    let batch = Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
    let picked: Vec<i64> = positions.iter().map(|&p| p as i64).collect();
    let n = picked.len();
    let picked = Tensor::<1, Int>::from_data(TensorData::new(picked, [n]), device);
    let out = bert.forward(BertInput::from_batch(&batch, device), ForwardOptions::default());
    let [_, seq, hidden] = out.last_hidden_state.dims();
    let rows = out.last_hidden_state.reshape([seq, hidden]).select(0, picked);
    let logits = head.forward(rows, bert.embeddings.word_embeddings.weight.val());
    let vocab = logits.dims()[1];
    let values = read_f32(logits).await?;
    Ok(positions
        .into_iter()
        .zip(values.chunks(vocab))
        .map(|(position, row)| {
            let probs = softmax(row);
            let mut order: Vec<usize> = (0..vocab).collect();
            order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
            let top = order
                .into_iter()
                .take(k)
                .map(|id| (tokenizer.id_to_piece(id as u32).unwrap_or_else(|| format!("#{id}")), probs[id]))
                .collect();
            MaskFill { position, top }
        })
        .collect())
}

/// Configuration of [`MlmHead`].
#[derive(Config, Debug)]
pub struct MlmHeadConfig {
    /// Width of the hidden states.
    pub hidden_size: usize,
    /// Number of WordPiece tokens (the decoder's output width).
    pub vocab_size: usize,
    /// Width of the word embeddings the decoder is tied to, where narrower than the hidden
    /// states (ELECTRA-small's generator, ALBERT): the transform projects down to it.
    pub embedding_size: Option<usize>,
    /// The transform's activation (the encoder's `hidden_act`).
    #[config(default = "HiddenAct::Gelu")]
    pub hidden_act: HiddenAct,
    /// LayerNorm epsilon.
    #[config(default = 1e-12)]
    pub layer_norm_eps: f64,
    /// Standard deviation of the normal initialiser.
    #[config(default = 0.02)]
    pub initializer_range: f64,
    /// Whether the transform's dense layer has a bias (ModernBERT's `classifier_bias`).
    #[config(default = true)]
    pub dense_bias: bool,
    /// Whether the transform's LayerNorm has a bias (ModernBERT's `norm_bias`).
    #[config(default = true)]
    pub norm_bias: bool,
}

impl MlmHeadConfig {
    /// The head of a model configuration: embedding-wide, its activation as the family's head
    /// applies it (RoBERTa's and ELECTRA's exact GELU whatever the encoder's, ModernBERT's
    /// `classifier_activation`), its biases as the configuration says.
    pub fn from_model(config: &BertConfig) -> Self {
        Self::new(config.hidden_size, config.vocab_size)
            .with_embedding_size(Some(config.embedding_width()))
            .with_hidden_act(config.mlm_head_act())
            .with_layer_norm_eps(config.layer_norm_eps)
            .with_dense_bias(config.classifier_bias.unwrap_or(true))
            .with_norm_bias(config.norm_bias())
    }

    /// Creates the head with freshly initialised weights (bias zero, as BERT starts).
    pub fn init(&self, device: &Device) -> MlmHead {
        let width = self.embedding_size.unwrap_or(self.hidden_size);
        MlmHead {
            transform: MlmTransform {
                dense: burn::nn::LinearConfig::new(self.hidden_size, width)
                    .with_bias(self.dense_bias)
                    .with_initializer(burn::nn::Initializer::Normal { mean: 0.0, std: self.initializer_range })
                    .init(device),
                layer_norm: LayerNorm::with_bias(width, self.layer_norm_eps, self.norm_bias, device),
                act: self.hidden_act,
            },
            bias: Param::from_tensor(Tensor::zeros([self.vocab_size], device)),
        }
    }
}

/// `dense → activation → LayerNorm` (`cls.predictions.transform` in the checkpoint).
#[derive(Module, Debug)]
pub struct MlmTransform {
    /// `hidden → embedding` (the same width but in ELECTRA-small's generator and ALBERT).
    pub dense: Linear,
    /// Normalises the transformed vector.
    pub layer_norm: LayerNorm,
    #[module(skip)]
    act: HiddenAct,
}

/// The masked-language-model head (`cls.predictions`): a transform, then a decoder whose
/// weight is the word-embedding matrix (tied, as in BERT), plus a per-token bias.
#[derive(Module, Debug)]
pub struct MlmHead {
    /// Dense + activation + LayerNorm.
    pub transform: MlmTransform,
    /// Output bias, one per vocabulary entry.
    pub bias: Param<Tensor<1>>,
}

impl MlmHead {
    /// Vocabulary logits for the given hidden vectors only. Pass just the picked positions:
    /// full-vocabulary logits for every position of a batch do not fit a WebGPU buffer at
    /// realistic sizes, and only picked positions enter the loss.
    ///
    /// # Shapes
    /// - `hidden`: `[picked, hidden]` (gathered from `[batch, seq, hidden]`)
    /// - `word_embeddings`: `[vocab, embedding]` (the encoder's embedding table)
    /// - output: logits `[picked, vocab]`
    pub fn forward(&self, hidden: Tensor<2>, word_embeddings: Tensor<2>) -> Tensor<2> {
        let x = linear(&self.transform.dense, hidden);
        let x = self.transform.act.apply(x);
        let x = self.transform.layer_norm.forward(x);
        matmul(x, word_embeddings.transpose()) + self.bias.val().unsqueeze::<2>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;
    use burn::module::Param;

    /// A vocabulary of whole words: the specials, then `words`.
    fn tokenizer(words: &[&str]) -> BertTokenizer {
        let mut vocab = vec!["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
        vocab.extend_from_slice(words);
        BertTokenizer::from_vocab_txt(vocab.join("\n").as_bytes(), true, 64).unwrap()
    }

    #[test]
    fn forward_scores_only_the_picked_positions() {
        let device = Device::flex();
        let tok = tokenizer(&["a", "b", "c"]);
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).without_dropout();
        let model = BertForPreTraining::from_scratch(&config, true, &device);
        let batch = Batch::from_encoded(&[tok.encode("a b c").unwrap(), tok.encode("c").unwrap()], tok.pad_id);
        let picked = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 2, 6], [3]), &device);
        let (mlm, pair) = model.forward(BertInput::from_batch(&batch, &device), picked);
        assert_eq!(mlm.dims(), [3, tok.vocab_size()]);
        assert_eq!(pair.unwrap().dims(), [2, 2]);
    }

    #[test]
    fn a_pair_task_on_an_encoder_without_pooler_gets_a_fresh_one() {
        let device = Device::flex();
        let tok = tokenizer(&["a", "b"]);
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).without_dropout();
        let bert = BertModelConfig::new(config.clone()).with_with_pooler(false).init(&device);
        let model = BertForPreTraining::new(bert.clone(), &config, true, &device);
        assert!(model.bert.pooler.is_some());
        let batch = Batch::from_encoded(&[tok.encode("a b").unwrap()], tok.pad_id);
        let picked = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64], [1]), &device);
        let (_, pair) = model.forward(BertInput::from_batch(&batch, &device), picked);
        assert_eq!(pair.unwrap().dims(), [1, 2]);
        // MLM only leaves the encoder as it was.
        assert!(BertForPreTraining::new(bert, &config, false, &device).bert.pooler.is_none());
    }

    #[test]
    fn fill_mask_needs_a_mask() {
        let device = Device::flex();
        let tok = tokenizer(&["a"]);
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).without_dropout();
        let model = BertForPreTraining::from_scratch(&config, false, &device);
        let err = pollster::block_on(fill_mask(&model, &tok, "a a", 3, &device)).unwrap_err();
        assert!(err.to_string().contains("[MASK]"), "{err}");
        let fills = pollster::block_on(fill_mask(&model, &tok, "a [MASK] a", 3, &device)).unwrap();
        assert_eq!(fills.len(), 1);
        assert_eq!(fills[0].position, 2);
        assert_eq!(fills[0].top.len(), 3);
        let total: f32 = fills[0].top.iter().map(|t| t.1).sum();
        assert!(total <= 1.0 + 1e-5);
    }

    #[test]
    fn an_exported_pretrained_model_loads_back_as_an_encoder() {
        use crate::bert::checkpoint::{CheckpointFiles, load};
        let device = Device::flex();
        let tok = tokenizer(&["a", "b", "c"]);
        let vocab: Vec<String> = (0..tok.vocab_size() as u32).map(|i| tok.id_to_piece(i).unwrap()).collect();
        let vocab_txt = vocab.join("\n").into_bytes();
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).without_dropout();
        let model = BertForPreTraining::from_scratch(&config, true, &device);
        let files = export(&model, &config, &tok, None, Some(&vocab_txt)).unwrap();
        let get = |n: &str| files.iter().find(|(f, _)| f == n).map(|(_, b)| b.clone());
        let weights = get("model.safetensors").unwrap();
        let st = safetensors::SafeTensors::deserialize(&weights).unwrap();
        let names: Vec<String> = st.names().into_iter().map(String::from).collect();
        for expected in ["bert.embeddings.word_embeddings.weight", "bert.embeddings.LayerNorm.weight", "bert.pooler.dense.weight",
            "cls.predictions.transform.dense.weight", "cls.predictions.transform.LayerNorm.bias", "cls.predictions.bias",
            "cls.seq_relationship.weight"] {
            assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
        }
        let bert = load(CheckpointFiles { config_json: get("config.json").unwrap(), weights, tokenizer_json: None, vocab_txt: get("vocab.txt") }, &device).unwrap();
        let batch = Batch::from_encoded(&[tok.encode("a b c").unwrap()], tok.pad_id);
        let before = model.bert.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default()).last_hidden_state;
        let after = bert.model.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default()).last_hidden_state;
        let diff = (before - after).abs().max().into_scalar::<f32>();
        assert!(diff < 1e-6, "{diff}");
    }

    /// ALBERT (one shared layer, a sentence-order head) and ELECTRA-small (projected embeddings)
    /// pretrained from scratch: the MLM head is embedding-wide, and the export under the
    /// family's own names and class loads back with the same logits.
    #[test]
    fn narrow_embeddings_and_shared_layers_export_under_their_own_names() {
        use crate::bert::family::Family;
        let device = Device::flex();
        let tok = tokenizer(&["a", "b", "c", "d"]);
        let vocab: Vec<String> = (0..tok.vocab_size() as u32).map(|i| tok.id_to_piece(i).unwrap()).collect();
        let vocab_txt = vocab.join("\n").into_bytes();
        // The tokenizer class: ALBERT's own reads SentencePiece, so a WordPiece vocabulary (the
        // lab's) is named as BERT's; ELECTRA's own class reads WordPiece.
        for (family, pair, architecture, tokenizer_class, names) in [
            (Family::Albert, true, "AlbertForPreTraining", "BertTokenizer", ["albert.encoder.embedding_hidden_mapping_in.weight", "albert.encoder.albert_layer_groups.0.albert_layers.0.ffn_output.weight", "predictions.dense.weight", "sop_classifier.classifier.weight"]),
            (Family::Electra, false, "ElectraForMaskedLM", "ElectraTokenizer", ["electra.embeddings_project.weight", "electra.encoder.layer.1.output.dense.weight", "generator_predictions.dense.weight", "generator_lm_head.bias"]),
        ] {
            let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).with_model_type(family).with_embedding_size(Some(32)).without_dropout();
            let model = BertForPreTraining::from_scratch(&config, pair, &device);
            assert_eq!(model.cls.predictions.transform.dense.weight.dims(), [128, 32], "{family:?}");
            let files = export(&model, &config, &tok, None, Some(&vocab_txt)).unwrap();
            let get = |n: &str| files.iter().find(|(f, _)| f == n).map(|(_, b)| b.clone());
            let json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
            assert_eq!((json["architectures"][0].as_str(), json["embedding_size"].as_u64()), (Some(architecture), Some(32)));
            let tokenizer_config: serde_json::Value = serde_json::from_slice(&get("tokenizer_config.json").unwrap()).unwrap();
            assert_eq!(tokenizer_config["tokenizer_class"], tokenizer_class, "{family:?}");
            let weights = get("model.safetensors").unwrap();
            let saved: Vec<String> = safetensors::SafeTensors::deserialize(&weights).unwrap().names().into_iter().map(String::from).collect();
            for name in names {
                assert!(saved.iter().any(|n| n == name), "{name} missing from {saved:?}");
            }
            let checkpoint = CheckpointFiles { config_json: get("config.json").unwrap(), weights, tokenizer_json: None, vocab_txt: get("vocab.txt") };
            let (loaded, loaded_tok, _) = load(checkpoint, &device).unwrap();
            assert_eq!(loaded.cls.seq_relationship.is_some(), pair);
            assert_eq!(loaded.bert.num_params(), model.bert.num_params());
            let batch = Batch::from_encoded(&[loaded_tok.encode("a [MASK] c d").unwrap()], loaded_tok.pad_id);
            let picked = || Tensor::<1, Int>::from_data(TensorData::new(vec![2i64, 3], [2]), &device);
            let (before, before_pair) = model.forward(BertInput::from_batch(&batch, &device), picked());
            let (after, after_pair) = loaded.forward(BertInput::from_batch(&batch, &device), picked());
            assert!((before - after).abs().max().into_scalar::<f32>() < 1e-6, "{family:?}: MLM logits");
            if pair {
                assert!((before_pair.unwrap() - after_pair.unwrap()).abs().max().into_scalar::<f32>() < 1e-6, "{family:?}: pair logits");
            }
        }
    }

    #[test]
    fn an_exported_pretrained_model_loads_back_with_its_heads() {
        let device = Device::flex();
        let tok = tokenizer(&["a", "b", "c", "d"]);
        let vocab: Vec<String> = (0..tok.vocab_size() as u32).map(|i| tok.id_to_piece(i).unwrap()).collect();
        let vocab_txt = vocab.join("\n").into_bytes();
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).without_dropout();
        for pair in [false, true] {
            let mut model = BertForPreTraining::from_scratch(&config, pair, &device);
            // A non-zero output bias, so the test sees whether the head's own weights came back.
            model.cls.predictions.bias = Param::from_tensor(Tensor::random([tok.vocab_size()], burn::tensor::Distribution::Normal(0.0, 1.0), &device));
            let files = export(&model, &config, &tok, None, Some(&vocab_txt)).unwrap();
            let get = |n: &str| files.iter().find(|(f, _)| f == n).map(|(_, b)| b.clone());
            let checkpoint = CheckpointFiles { config_json: get("config.json").unwrap(), weights: get("model.safetensors").unwrap(), tokenizer_json: None, vocab_txt: get("vocab.txt") };
            let (loaded, loaded_tok, loaded_config) = load(checkpoint, &device).unwrap();
            assert_eq!(loaded.cls.seq_relationship.is_some(), pair);
            assert_eq!(loaded_config.hidden_size, config.hidden_size);
            let batch = Batch::from_encoded(&[loaded_tok.encode("a [MASK] c d").unwrap()], loaded_tok.pad_id);
            let picked = || Tensor::<1, Int>::from_data(TensorData::new(vec![2i64, 3], [2]), &device);
            let (before, before_pair) = model.forward(BertInput::from_batch(&batch, &device), picked());
            let (after, after_pair) = loaded.forward(BertInput::from_batch(&batch, &device), picked());
            let diff = (before - after).abs().max().into_scalar::<f32>();
            assert!(diff < 1e-6, "MLM logits differ by {diff}");
            if pair {
                let diff = (before_pair.unwrap() - after_pair.unwrap()).abs().max().into_scalar::<f32>();
                assert!(diff < 1e-6, "pair logits differ by {diff}");
            }
        }
    }

    #[test]
    fn the_heads_kept_apart_fill_masks_as_the_whole_model_and_survive_a_rewrite_of_the_encoder() {
        use crate::bert::checkpoint::{head_tensors, save_weights, with_heads};
        let device = Device::flex();
        let tok = tokenizer(&["a", "b", "c", "d"]);
        let vocab: Vec<String> = (0..tok.vocab_size() as u32).map(|i| tok.id_to_piece(i).unwrap()).collect();
        let vocab_txt = vocab.join("\n").into_bytes();
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).without_dropout();
        let mut model = BertForPreTraining::from_scratch(&config, true, &device);
        model.cls.predictions.bias = Param::from_tensor(Tensor::random([tok.vocab_size()], burn::tensor::Distribution::Normal(0.0, 1.0), &device));
        let files = export(&model, &config, &tok, None, Some(&vocab_txt)).unwrap();
        let get = |n: &str| files.iter().find(|(f, _)| f == n).map(|(_, b)| b.clone());
        let checkpoint = |weights| CheckpointFiles { config_json: get("config.json").unwrap(), weights, tokenizer_json: None, vocab_txt: get("vocab.txt") };
        let whole = pollster::block_on(fill_mask(&model, &tok, "a [MASK] c", 4, &device)).unwrap();

        let loaded = crate::bert::checkpoint::load(checkpoint(get("model.safetensors").unwrap()), &device).unwrap();
        let heads = loaded.head_weights.clone().expect("the head tensors are kept");
        let names: Vec<String> = safetensors::SafeTensors::deserialize(&heads).unwrap().names().into_iter().map(String::from).collect();
        assert!(names.iter().all(|n| n.starts_with("cls.")), "{names:?}");
        let cls = load_heads(&loaded, &device).unwrap();
        assert!(cls.seq_relationship.is_some());
        let apart = pollster::block_on(fill_mask_with(&loaded.model, &cls.predictions, &loaded.tokenizer, "a [MASK] c", 4, &device)).unwrap();
        assert_eq!(whole.len(), 1);
        assert_eq!(apart[0].position, whole[0].position);
        for ((w1, p1), (w2, p2)) in whole[0].top.iter().zip(&apart[0].top) {
            assert_eq!(w1, w2);
            assert!((p1 - p2).abs() < 1e-6, "{p1} vs {p2}");
        }

        // The encoder written from its tensors plus the kept heads is the checkpoint again.
        let rewritten = with_heads(&save_weights(&loaded.model).unwrap(), &heads, loaded.config.model_type).unwrap();
        assert_eq!(head_tensors(&rewritten, loaded.config.model_type), Some(heads.clone()));
        let (again, _, _) = load(checkpoint(rewritten), &device).unwrap();
        let refilled = pollster::block_on(fill_mask(&again, &tok, "a [MASK] c", 4, &device)).unwrap();
        assert_eq!(refilled, apart);
        // A checkpoint without heads keeps none.
        assert!(head_tensors(&save_weights(&loaded.model).unwrap(), loaded.config.model_type).is_none());
    }

    #[test]
    fn an_encoder_without_an_mlm_head_is_refused_by_the_lab_loader() {
        let device = Device::flex();
        let tok = tokenizer(&["a"]);
        let vocab: Vec<String> = (0..tok.vocab_size() as u32).map(|i| tok.id_to_piece(i).unwrap()).collect();
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16);
        let bert = BertModelConfig::new(config.clone()).init(&device);
        let checkpoint = CheckpointFiles {
            config_json: config.to_hf_json(),
            weights: crate::bert::checkpoint::save_weights(&bert).unwrap(),
            tokenizer_json: None,
            vocab_txt: Some(vocab.join("\n").into_bytes()),
        };
        let err = load(checkpoint, &device).unwrap_err();
        assert!(err.to_string().contains("masked-language-model head"), "{err}");
    }

    #[test]
    fn mlm_head_scores_every_vocabulary_entry_through_the_tied_table() {
        let device = Device::flex();
        let head = MlmHeadConfig::new(8, 11).init(&device);
        let table = Tensor::<2>::random([11, 8], burn::tensor::Distribution::Normal(0.0, 1.0), &device);
        let hidden = Tensor::<2>::random([3, 8], burn::tensor::Distribution::Normal(0.0, 1.0), &device);
        let logits = head.forward(hidden.clone(), table.clone());
        assert_eq!(logits.dims(), [3, 11]);
        // With a zero bias, row i of the logits is transform(hidden_i) · table^T.
        let t = head.transform.layer_norm.forward(crate::nn::activation::gelu(head.transform.dense.forward(hidden)));
        let expected = t.matmul(table.transpose());
        let diff = (logits - expected).abs().max().into_scalar::<f32>();
        assert!(diff < 1e-5, "{diff}");
    }
}
