//! Pretraining BERT: masked-language modelling, optionally with next-sentence or sentence-order
//! prediction, as a step-at-a-time loop the browser can drive between frames.
//!
//! Vocabulary logits are computed only at the picked positions (see [`MlmHead::forward`]).

use burn::nn::Linear;
use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::TensorData;
use burn_store::ModuleSnapshot;
use serde::{Deserialize, Serialize};

use crate::attention::init_linear;
use crate::linear::linear;
use crate::checkpoint::{Bert, CheckpointFiles, hf_store};
use crate::config::BertConfig;
use crate::error::Error;
use crate::heads::{ClassificationHead, MlmHead, MlmHeadConfig};
use crate::inference::read_f32;
use crate::masking::{MaskVocab, Masked, MaskingConfig, PairTask, make_pairs};
use crate::metrics::softmax;
use crate::model::{BertInput, BertModel, BertModelConfig, BertPooler, ForwardOptions};
use crate::rng::Rng;
use crate::tokenizer::{Batch, BertTokenizer, Encoded};
use crate::train::{AdamW, adamw, clip_grad_norm, linear_schedule};

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
            bert.pooler = Some(BertPooler { dense: init_linear(config.hidden_size, config.hidden_size, config.initializer_range, device) });
        }
        let predictions = MlmHeadConfig::new(config.hidden_size, config.vocab_size)
            .with_hidden_act(config.hidden_act)
            .with_layer_norm_eps(config.layer_norm_eps)
            .with_initializer_range(config.initializer_range)
            .init(device);
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

/// Settings of a pretraining run.
#[derive(Config, Debug)]
pub struct PretrainConfig {
    /// Sequences per step.
    #[config(default = 32)]
    pub batch_size: usize,
    /// Longest sequence in tokens (longer lines are truncated).
    #[config(default = 64)]
    pub max_len: usize,
    /// Peak learning rate (tiny models from scratch like a high one).
    #[config(default = 1e-3)]
    pub learning_rate: f64,
    /// Decoupled weight decay (not on biases and LayerNorm).
    #[config(default = 0.01)]
    pub weight_decay: f64,
    /// Share of the steps spent warming up linearly.
    #[config(default = 0.06)]
    pub warmup_ratio: f64,
    /// Global gradient-norm clip (0 = none).
    #[config(default = 1.0)]
    pub max_grad_norm: f64,
    /// Passes over the corpus.
    #[config(default = 10)]
    pub epochs: usize,
    /// A new mask every epoch (RoBERTa) rather than one fixed mask per line (original BERT).
    #[config(default = true)]
    pub dynamic_masking: bool,
    /// Train NSP or SOP next to MLM.
    pub pair_task: Option<PairTask>,
    /// Seed for shuffling, masking and pairs.
    #[config(default = 42)]
    pub seed: u64,
    /// Token picking and corruption.
    #[config(default = "MaskingConfig::new()")]
    pub masking: MaskingConfig,
}

/// What one optimizer step did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PretrainStep {
    /// Steps done, this one included.
    pub step: usize,
    /// Of how many.
    pub total_steps: usize,
    /// Fractional epoch.
    pub epoch: f64,
    /// Mean cross-entropy over the picked tokens.
    pub mlm_loss: f32,
    /// Share of picked tokens whose top prediction is the original.
    pub mlm_accuracy: f32,
    /// NSP/SOP cross-entropy, when trained.
    pub pair_loss: Option<f32>,
    /// Learning rate used.
    pub lr: f64,
    /// Tokens (real, not padding) in the step's batch.
    pub tokens: usize,
}

/// One training example before masking.
#[derive(Debug, Clone)]
struct Example {
    encoded: Encoded,
    pair_label: Option<usize>,
    /// The mask kept for static masking.
    fixed: Option<Masked>,
}

/// A pretraining run, one step per [`Pretrainer::step`] call.
pub struct Pretrainer {
    model: BertForPreTraining,
    config: PretrainConfig,
    tokenizer: BertTokenizer,
    vocab: MaskVocab,
    lines: Vec<String>,
    examples: Vec<Example>,
    order: Vec<usize>,
    cursor: usize,
    epoch: usize,
    step: usize,
    total_steps: usize,
    rng: Rng,
    optim: AdamW,
    device: Device,
}

/// One token of a masking preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownToken {
    /// The piece in the text.
    pub original: String,
    /// The piece the model sees.
    pub shown: String,
    /// What masking did here, if the position was picked.
    pub case: Option<crate::masking::MaskCase>,
}

/// Top predictions for one `[MASK]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaskFill {
    /// Index of the `[MASK]` in the tokenized input.
    pub position: usize,
    /// `(piece, probability)`, most likely first.
    pub top: Vec<(String, f32)>,
}

impl Pretrainer {
    /// Prepares a run over `lines` (the corpus, in reading order) on an autodiff `device`.
    pub fn new(model: BertForPreTraining, tokenizer: &BertTokenizer, lines: Vec<String>, config: PretrainConfig, device: &Device) -> crate::Result<Self> {
        config.masking.validate()?;
        if config.batch_size == 0 || config.epochs == 0 {
            return Err(Error::Input("batch size and epochs must be at least 1".into()));
        }
        let lines: Vec<String> = lines.into_iter().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect();
        if lines.is_empty() {
            return Err(Error::Input("the corpus has no text".into()));
        }
        if config.pair_task.is_some() != model.cls.seq_relationship.is_some() {
            return Err(Error::Input("the model's heads do not match the pair task".into()));
        }
        let tokenizer = tokenizer.with_max_len(config.max_len);
        let per_epoch = if config.pair_task.is_some() { lines.len() - 1 } else { lines.len() };
        let steps_per_epoch = per_epoch.div_ceil(config.batch_size);
        let mut run = Self {
            vocab: MaskVocab::from_tokenizer(&tokenizer),
            model,
            tokenizer,
            lines,
            examples: Vec::new(),
            order: Vec::new(),
            cursor: 0,
            epoch: 0,
            step: 0,
            total_steps: steps_per_epoch * config.epochs,
            rng: Rng::new(config.seed),
            optim: adamw(config.weight_decay),
            device: device.clone(),
            config,
        };
        run.start_epoch()?;
        Ok(run)
    }

    /// Builds the epoch's examples (new pairs each epoch) and shuffles them.
    fn start_epoch(&mut self) -> crate::Result<()> {
        if self.examples.is_empty() || self.config.pair_task.is_some() {
            self.examples = match self.config.pair_task {
                None => self
                    .lines
                    .iter()
                    .map(|l| Ok(Example { encoded: self.tokenizer.encode(l)?, pair_label: None, fixed: None }))
                    .collect::<crate::Result<_>>()?,
                Some(task) => make_pairs(&self.lines, task, &mut self.rng)?
                    .into_iter()
                    .map(|p| Ok(Example { encoded: self.tokenizer.encode_pair(&p.a, &p.b)?, pair_label: Some(p.label), fixed: None }))
                    .collect::<crate::Result<_>>()?,
            };
        }
        self.order = (0..self.examples.len()).collect();
        self.rng.shuffle(&mut self.order);
        self.cursor = 0;
        Ok(())
    }

    /// Steps done and in total.
    pub fn progress(&self) -> (usize, usize) {
        (self.step, self.total_steps)
    }

    /// The model as trained so far.
    pub fn model(&self) -> &BertForPreTraining {
        &self.model
    }

    /// The run's tokenizer (truncating at `max_len`).
    pub fn tokenizer(&self) -> &BertTokenizer {
        &self.tokenizer
    }

    /// How masking treats the first `n` examples, drawn with `seed` (the run's own random
    /// stream is not touched): for the page's "before and after masking" view.
    pub fn masking_preview(&self, n: usize, seed: u64) -> Vec<Vec<ShownToken>> {
        let mut rng = Rng::new(seed);
        let piece = |id: u32| self.tokenizer.id_to_piece(id).unwrap_or_else(|| format!("#{id}"));
        self.examples
            .iter()
            .take(n)
            .map(|ex| {
                let ids = ex.encoded.ids();
                let special: Vec<bool> = ex.encoded.tokens.iter().map(|t| t.special).collect();
                let m = self.config.masking.apply(&ids, &special, &self.vocab, &mut rng);
                ids.iter()
                    .enumerate()
                    .map(|(i, &id)| ShownToken {
                        original: piece(id),
                        shown: piece(m.input_ids[i]),
                        case: m.picks.iter().find(|p| p.position == i).map(|p| p.case),
                    })
                    .collect()
            })
            .collect()
    }

    fn mask(&mut self, i: usize) -> Masked {
        let ex = &self.examples[i];
        if !self.config.dynamic_masking
            && let Some(m) = &ex.fixed
        {
            return m.clone();
        }
        let ids = ex.encoded.ids();
        let special: Vec<bool> = ex.encoded.tokens.iter().map(|t| t.special).collect();
        let m = self.config.masking.apply(&ids, &special, &self.vocab, &mut self.rng);
        if !self.config.dynamic_masking {
            self.examples[i].fixed = Some(m.clone());
        }
        m
    }

    /// One optimizer step; `None` once every epoch is done.
    pub async fn step(&mut self) -> crate::Result<Option<PretrainStep>> {
        if self.step >= self.total_steps {
            return Ok(None);
        }
        if self.cursor >= self.order.len() {
            self.epoch += 1;
            self.start_epoch()?;
        }
        let end = (self.cursor + self.config.batch_size).min(self.order.len());
        let idx: Vec<usize> = self.order[self.cursor..end].to_vec();
        let masked: Vec<Masked> = idx.iter().map(|&i| self.mask(i)).collect();
        let ids: Vec<Vec<u32>> = masked.iter().map(|m| m.input_ids.clone()).collect();
        let types: Vec<Vec<u32>> = idx.iter().map(|&i| self.examples[i].encoded.type_ids()).collect();
        let batch = Batch::from_rows(&ids, &types, self.tokenizer.pad_id);
        let seq = batch.seq_len;
        let mut picked = Vec::new();
        let mut targets = Vec::new();
        for (b, m) in masked.iter().enumerate() {
            for p in &m.picks {
                picked.push((b * seq + p.position) as i64);
                targets.push(p.original as i64);
            }
        }
        let n = picked.len();
        let device = &self.device;
        let picked_t = Tensor::<1, Int>::from_data(TensorData::new(picked, [n]), device);
        let targets_t = Tensor::<1, Int>::from_data(TensorData::new(targets.clone(), [n]), device);
        let (mlm_logits, pair_logits) = self.model.forward(BertInput::from_batch(&batch, device), picked_t);
        let mlm_loss = ClassificationHead::loss(mlm_logits.clone(), targets_t);
        let mlm_correct = mlm_logits.clone().argmax(1).reshape([n]).equal(Tensor::from_data(TensorData::new(targets, [n]), device)).int().sum();
        let (loss, pair_loss) = match pair_logits {
            Some(logits) => {
                let labels: Vec<i64> = idx.iter().map(|&i| self.examples[i].pair_label.unwrap_or(0) as i64).collect();
                let l = ClassificationHead::loss(logits, Tensor::from_data(TensorData::new(labels, [idx.len()]), device));
                (mlm_loss.clone() + l.clone(), Some(l))
            }
            None => (mlm_loss.clone(), None),
        };
        let inner = device.clone().inner();
        let mut grads = GradientsParams::from_grads(loss.backward(), &self.model);
        let norm = clip_grad_norm(&self.model, &mut grads, self.config.max_grad_norm, &inner);
        let mut parts = vec![mlm_loss.inner(), norm, mlm_correct.inner().float().reshape([1])];
        if let Some(l) = &pair_loss {
            parts.push(l.clone().inner());
        }
        let values = read_f32(Tensor::cat(parts, 0)).await?;
        if values.iter().any(|v| !v.is_finite()) {
            return Err(Error::Training(format!(
                "the loss became NaN or infinite at step {}: training stopped before that step's update, so the model keeps its last good weights. Try a lower learning rate.",
                self.step + 1
            )));
        }
        let warmup = (self.total_steps as f64 * self.config.warmup_ratio).round() as usize;
        let lr = linear_schedule(self.step, self.total_steps, warmup, self.config.learning_rate);
        self.model = self.optim.step(lr, self.model.clone(), grads);
        self.cursor = end;
        self.step += 1;
        let per_epoch = self.order.len().max(1);
        Ok(Some(PretrainStep {
            step: self.step,
            total_steps: self.total_steps,
            epoch: self.epoch as f64 + self.cursor as f64 / per_epoch as f64,
            mlm_loss: values[0],
            mlm_accuracy: values[2] / n.max(1) as f32,
            pair_loss: pair_loss.map(|_| values[3]),
            lr,
            tokens: batch.attention_mask.iter().filter(|&&m| m == 1).count(),
        }))
    }
}

/// The pretrained model as a Hugging Face folder: `config.json` (`BertForPreTraining` with a
/// pair head, else `BertForMaskedLM`), `model.safetensors` with `bert.*` and `cls.*` names (the
/// decoder is tied to the word embeddings, so it is not stored), and the tokenizer files given.
/// The studio (and `transformers`) load the encoder from it as they load any BERT.
pub fn export(
    model: &BertForPreTraining,
    config: &BertConfig,
    tokenizer_json: Option<&[u8]>,
    vocab_txt: Option<&[u8]>,
) -> crate::Result<Vec<(String, Vec<u8>)>> {
    let mut value: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).map_err(|e| Error::Config(e.to_string()))?;
    let architecture = if model.cls.seq_relationship.is_some() { "BertForPreTraining" } else { "BertForMaskedLM" };
    value["architectures"] = serde_json::json!([architecture]);
    value["tie_word_embeddings"] = true.into();
    let mut files = vec![
        ("config.json".to_string(), serde_json::to_vec_pretty(&value).map_err(|e| Error::Config(e.to_string()))?),
        ("model.safetensors".to_string(), crate::checkpoint::save_module(model)?),
    ];
    if let Some(b) = tokenizer_json {
        files.push(("tokenizer.json".into(), b.to_vec()));
    }
    if let Some(b) = vocab_txt {
        files.push(("vocab.txt".into(), b.to_vec()));
    }
    Ok(files)
}

/// A model saved by [`export`] (a `BertForMaskedLM` or `BertForPreTraining` folder), heads
/// included, with its tokenizer and configuration: what the lab reopens from the browser's
/// storage. An encoder-only checkpoint is refused (it has no MLM head to fill masks with).
pub fn load(files: CheckpointFiles, device: &Device) -> crate::Result<(BertForPreTraining, BertTokenizer, BertConfig)> {
    let weights = files.weights.clone();
    let Bert { config, model: bert, tokenizer, report } = crate::checkpoint::load(files, device)?;
    let has = |name: &str| report.skipped.iter().any(|n| n == name);
    if !has("cls.predictions.bias") {
        return Err(Error::MissingTensors(vec!["cls.predictions.bias (the checkpoint has no masked-language-model head)".into()]));
    }
    let pair = has("cls.seq_relationship.weight");
    let mut model = BertForPreTraining::new(bert, &config, pair, device);
    let mut store = hf_store(weights).with_key_remapping(r"^cls\.", "");
    let result = model.cls.load_from(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    if !result.errors.is_empty() {
        return Err(Error::ShapeMismatch(result.errors.iter().map(|e| format!("cls.{e}")).collect()));
    }
    if !result.missing.is_empty() {
        return Err(Error::MissingTensors(result.missing.iter().map(|(p, _)| format!("cls.{p}")).collect()));
    }
    Ok((model, tokenizer, config))
}

/// Top-`k` predictions for every `[MASK]` in `text` (written literally as `[MASK]`).
pub async fn fill_mask(model: &BertForPreTraining, tokenizer: &BertTokenizer, text: &str, k: usize, device: &Device) -> crate::Result<Vec<MaskFill>> {
    let encoded = tokenizer.encode(text)?;
    let positions: Vec<usize> = encoded.tokens.iter().enumerate().filter(|(_, t)| t.id == tokenizer.mask_id).map(|(i, _)| i).collect();
    if positions.is_empty() {
        return Err(Error::Input("the text has no [MASK]: write [MASK] where a word should be guessed".into()));
    }
    let batch = Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
    let picked: Vec<i64> = positions.iter().map(|&p| p as i64).collect();
    let n = picked.len();
    let picked = Tensor::<1, Int>::from_data(TensorData::new(picked, [n]), device);
    let (logits, _) = model.forward(BertInput::from_batch(&batch, device), picked);
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

impl Pretrainer {
    /// [`fill_mask`] with the model as trained so far (no dropout, no autodiff).
    pub async fn fill_mask(&self, text: &str, k: usize) -> crate::Result<Vec<MaskFill>> {
        let model = self.model.valid();
        fill_mask(&model, &self.tokenizer, text, k, &self.device.clone().inner()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Preset;
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
        use crate::checkpoint::{CheckpointFiles, load};
        let device = Device::flex();
        let tok = tokenizer(&["a", "b", "c"]);
        let vocab: Vec<String> = (0..tok.vocab_size() as u32).map(|i| tok.id_to_piece(i).unwrap()).collect();
        let vocab_txt = vocab.join("\n").into_bytes();
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16).without_dropout();
        let model = BertForPreTraining::from_scratch(&config, true, &device);
        let files = export(&model, &config, None, Some(&vocab_txt)).unwrap();
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
            let files = export(&model, &config, None, Some(&vocab_txt)).unwrap();
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
    fn an_encoder_without_an_mlm_head_is_refused_by_the_lab_loader() {
        let device = Device::flex();
        let tok = tokenizer(&["a"]);
        let vocab: Vec<String> = (0..tok.vocab_size() as u32).map(|i| tok.id_to_piece(i).unwrap()).collect();
        let config = Preset::Tiny.config(tok.vocab_size()).with_max_position_embeddings(16);
        let bert = BertModelConfig::new(config.clone()).init(&device);
        let checkpoint = CheckpointFiles {
            config_json: config.to_hf_json(),
            weights: crate::checkpoint::save_weights(&bert).unwrap(),
            tokenizer_json: None,
            vocab_txt: Some(vocab.join("\n").into_bytes()),
        };
        let err = load(checkpoint, &device).unwrap_err();
        assert!(err.to_string().contains("masked-language-model head"), "{err}");
    }
}
