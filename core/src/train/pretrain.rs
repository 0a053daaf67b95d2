//! MLM pretraining as a step-at-a-time run the browser can drive between frames: the corpus,
//! dynamic or static masking, NSP/SOP pairs drawn anew each epoch, or ELECTRA's replaced-token
//! detection on the same masks, and one optimizer step per [`Pretrainer::step`].

use burn::optim::GradientsParams;
use burn::prelude::*;
use burn::tensor::TensorData;

use super::adamw::{AdamW, adamw};
use super::step::{Schedule, clip, read_back};
use crate::error::Error;
use crate::bert::model::BertInput;
use crate::rng::Rng;
use crate::tasks::classification::ClassificationHead;
use crate::tasks::masking::{MaskVocab, Masked, MaskingConfig, PairTask, documents, make_pairs, pair_count};
use crate::tasks::pretraining::{BertForPreTraining, MaskFill, fill_mask};
use crate::tasks::replaced_token::{DISCRIMINATOR_WEIGHT, ElectraDiscriminator, ElectraForPreTraining, discriminator_loss, tied};
use crate::tokenizer::{Batch, BertTokenizer, Encoded};

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
    /// A new mask every epoch (RoBERTa) rather than one mask per line kept for the whole run.
    /// (BERT's own data generation sat between the two: `dupe_factor` 10 masked copies of each
    /// sequence, so each mask was seen in 4 of its 40 epochs.)
    #[config(default = true)]
    pub dynamic_masking: bool,
    /// Train NSP or SOP next to MLM.
    pub pair_task: Option<PairTask>,
    /// ELECTRA's objective: a small generator fills the masks and the model, a discriminator,
    /// learns at every token which were replaced (see [`crate::tasks::replaced_token`]). An
    /// option so that settings saved before it existed still read (as MLM): see
    /// [`PretrainConfig::electra`].
    pub replaced_token_detection: Option<bool>,
    /// Seed for the new weights, shuffling, masking, pairs and dropout.
    #[config(default = 42)]
    pub seed: u64,
    /// Token picking and corruption.
    #[config(default = "MaskingConfig::new()")]
    pub masking: MaskingConfig,
}

impl PretrainConfig {
    /// Whether the run detects replaced tokens (ELECTRA) rather than training MLM alone.
    pub fn electra(&self) -> bool {
        self.replaced_token_detection == Some(true)
    }
}

/// What one optimizer step did.
#[derive(Debug, Clone, Copy, PartialEq)]
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
    /// Tokens picked for prediction in the step's batch: what the MLM loss averages over (at
    /// least one per sequence, so a low masking rate on short lines picks more than its rate).
    pub picked: usize,
    /// ELECTRA: the discriminator's loss, over every real token of the batch.
    pub rtd_loss: Option<f32>,
    /// ELECTRA: the share of the batch's real tokens the discriminator judged right (replaced
    /// or original).
    pub rtd_accuracy: Option<f32>,
    /// ELECTRA: the picked tokens the generator replaced by another piece (the rest it guessed
    /// right, so they stay original).
    pub replaced: usize,
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
    /// The MLM model, or ELECTRA's generator (whose own embedding tables are unused: it reads
    /// the discriminator's).
    model: BertForPreTraining,
    /// ELECTRA's discriminator, when the run detects replaced tokens.
    discriminator: Option<ElectraDiscriminator>,
    config: PretrainConfig,
    tokenizer: BertTokenizer,
    vocab: MaskVocab,
    /// The corpus's documents, each its lines in order.
    documents: Vec<Vec<String>>,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownToken {
    /// The piece in the text.
    pub original: String,
    /// The piece the model sees.
    pub shown: String,
    /// What masking did here, if the position was picked.
    pub case: Option<crate::tasks::masking::MaskCase>,
}

/// What `masking` does to one encoded text, token by token, drawn from `rng`: for the pages
/// that show masking (the lab's preview, the masking lesson).
pub fn show_masking(encoded: &Encoded, tokenizer: &BertTokenizer, masking: &MaskingConfig, vocab: &MaskVocab, rng: &mut Rng) -> Vec<ShownToken> {
    let ids = encoded.ids();
    let special: Vec<bool> = encoded.tokens.iter().map(|t| t.special).collect();
    let m = masking.apply(&ids, &special, vocab, rng);
    let piece = |id: u32| tokenizer.id_to_piece(id).unwrap_or_else(|| format!("#{id}"));
    ids.iter()
        .enumerate()
        .map(|(i, &id)| ShownToken { original: piece(id), shown: piece(m.input_ids[i]), case: m.picks.iter().find(|p| p.position == i).map(|p| p.case) })
        .collect()
}

impl Pretrainer {
    /// Prepares a run over `lines` (the corpus, in reading order, a blank line between two
    /// documents: NSP draws its negatives from another document) on an autodiff `device`.
    pub fn new(model: BertForPreTraining, tokenizer: &BertTokenizer, lines: Vec<String>, config: PretrainConfig, device: &Device) -> crate::Result<Self> {
        Self::start(model, None, tokenizer, lines, config, device)
    }

    /// [`Pretrainer::new`] for ELECTRA's replaced-token detection (`config` asks for it).
    pub fn new_electra(model: ElectraForPreTraining, tokenizer: &BertTokenizer, lines: Vec<String>, config: PretrainConfig, device: &Device) -> crate::Result<Self> {
        Self::start(model.generator, Some(model.discriminator), tokenizer, lines, config, device)
    }

    fn start(
        model: BertForPreTraining,
        discriminator: Option<ElectraDiscriminator>,
        tokenizer: &BertTokenizer,
        lines: Vec<String>,
        config: PretrainConfig,
        device: &Device,
    ) -> crate::Result<Self> {
        config.masking.validate()?;
        if config.electra() != discriminator.is_some() {
            return Err(Error::Input("the model does not match the objective (replaced-token detection needs a generator and a discriminator)".into()));
        }
        if config.electra() && config.pair_task.is_some() {
            return Err(Error::Input("ELECTRA's replaced-token detection trains no sentence-pair task: choose one objective".into()));
        }
        if config.batch_size == 0 || config.epochs == 0 {
            return Err(Error::Input("batch size and epochs must be at least 1".into()));
        }
        let documents = documents(&lines);
        if documents.is_empty() {
            return Err(Error::Input("the corpus has no text".into()));
        }
        if config.pair_task.is_some() != model.cls.seq_relationship.is_some() {
            return Err(Error::Input("the model's heads do not match the pair task".into()));
        }
        let tokenizer = tokenizer.with_max_len(config.max_len);
        let per_epoch = if config.pair_task.is_some() { pair_count(&documents) } else { documents.iter().map(Vec::len).sum() };
        let steps_per_epoch = per_epoch.div_ceil(config.batch_size);
        let mut run = Self {
            vocab: MaskVocab::from_tokenizer(&tokenizer),
            model,
            discriminator,
            tokenizer,
            documents,
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
                    .documents
                    .iter()
                    .flatten()
                    .map(|l| Ok(Example { encoded: self.tokenizer.encode(l)?, pair_label: None, fixed: None }))
                    .collect::<crate::Result<_>>()?,
                Some(task) => make_pairs(&self.documents, task, &mut self.rng)?
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

    /// Epochs begun before the current one.
    pub fn epochs_done(&self) -> usize {
        self.epoch
    }

    /// Steps done and in total.
    pub fn progress(&self) -> (usize, usize) {
        (self.step, self.total_steps)
    }

    /// The MLM model as trained so far (ELECTRA's generator, reading the discriminator's
    /// embeddings).
    pub fn mlm_model(&self) -> BertForPreTraining {
        match &self.discriminator {
            Some(d) => tied(&self.model, d),
            None => self.model.clone(),
        }
    }

    /// ELECTRA's discriminator as trained so far, in a run that has one.
    pub fn discriminator(&self) -> Option<&ElectraDiscriminator> {
        self.discriminator.as_ref()
    }

    /// The run's tokenizer (truncating at `max_len`).
    pub fn tokenizer(&self) -> &BertTokenizer {
        &self.tokenizer
    }

    /// How masking treats the first `n` examples, drawn with `seed` (the run's own random
    /// stream is not touched): for the page's "before and after masking" view.
    pub fn masking_preview(&self, n: usize, seed: u64) -> Vec<Vec<ShownToken>> {
        let mut rng = Rng::new(seed);
        self.examples.iter().take(n).map(|ex| show_masking(&ex.encoded, &self.tokenizer, &self.config.masking, &self.vocab, &mut rng)).collect()
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
        let tokens = batch.attention_mask.iter().filter(|&&m| m == 1).count();
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
        // Dropout's masks come from the device's generator, seeded from the run's seed and the
        // step: a run is the same every time.
        device.seed(self.config.seed ^ (self.step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let picked_t = Tensor::<1, Int>::from_data(TensorData::new(picked, [n]), device);
        let targets_t = Tensor::<1, Int>::from_data(TensorData::new(targets.clone(), [n]), device);
        let input = BertInput::from_batch(&batch, device);
        let attention_mask = input.attention_mask.clone();
        let targets_check = Tensor::from_data(TensorData::new(targets, [n]), device);
        let (values, grads, pair_trained, rtd_trained) = match self.discriminator.take() {
            None => {
                let (mlm_logits, pair_logits) = self.model.forward(input, picked_t);
                let mlm_loss = ClassificationHead::loss(mlm_logits.clone(), targets_t);
                let mlm_correct = mlm_logits.argmax(1).reshape([n]).equal(targets_check).int().sum();
                let (loss, pair_loss) = match pair_logits {
                    Some(logits) => {
                        let labels: Vec<i64> = idx.iter().map(|&i| self.examples[i].pair_label.unwrap_or(0) as i64).collect();
                        let l = ClassificationHead::loss(logits, Tensor::from_data(TensorData::new(labels, [idx.len()]), device));
                        (mlm_loss.clone() + l.clone(), Some(l))
                    }
                    None => (mlm_loss.clone(), None),
                };
                let mut grads = GradientsParams::from_grads(loss.backward(), &self.model);
                let norm = clip(&self.model, &mut grads, self.config.max_grad_norm, device);
                let mut extra = vec![mlm_correct.inner().float().reshape([1])];
                extra.extend(pair_loss.as_ref().map(|l| l.clone().inner()));
                let on_gpu = device.clone().inner() != Device::flex();
                let values = read_back(mlm_loss.inner(), &norm, extra, self.step, on_gpu).await?;
                (values, grads, pair_loss.is_some(), false)
            }
            Some(discriminator) => {
                let electra = ElectraForPreTraining { discriminator, generator: self.model.clone() };
                let original: Vec<Vec<u32>> = idx.iter().map(|&i| self.examples[i].encoded.ids()).collect();
                let original = BertInput::from_batch(&Batch::from_rows(&original, &types, self.tokenizer.pad_id), device).input_ids;
                let out = electra.forward(input, original, picked_t, targets_t.clone());
                let mlm_loss = ClassificationHead::loss(out.mlm_logits.clone(), targets_t);
                let mlm_correct = out.mlm_logits.argmax(1).reshape([n]).equal(targets_check).int().sum();
                let replaced = out.replaced.clone().sum();
                let (rtd_loss, rtd_right) = discriminator_loss(out.logits, out.replaced, attention_mask);
                let loss = mlm_loss.clone() + rtd_loss.clone() * DISCRIMINATOR_WEIGHT;
                let mut grads = GradientsParams::from_grads(loss.backward(), &electra);
                let norm = clip(&electra, &mut grads, self.config.max_grad_norm, device);
                let extra = vec![mlm_correct.inner().float().reshape([1]), rtd_loss.inner(), rtd_right.inner(), replaced.inner().float().reshape([1])];
                let on_gpu = device.clone().inner() != Device::flex();
                let read = read_back(mlm_loss.inner(), &norm, extra, self.step, on_gpu).await;
                // The generator and discriminator are put back before a failed step returns.
                self.discriminator = Some(electra.discriminator);
                (read?, grads, false, true)
            }
        };
        let lr = Schedule::new(self.total_steps, self.config.warmup_ratio, self.config.learning_rate).lr(self.step);
        match self.discriminator.take() {
            None => self.model = self.optim.step(lr, self.model.clone(), grads),
            Some(discriminator) => {
                let electra = self.optim.step(lr, ElectraForPreTraining { discriminator, generator: self.model.clone() }, grads);
                self.model = electra.generator;
                self.discriminator = Some(electra.discriminator);
            }
        }
        self.cursor = end;
        self.step += 1;
        let per_epoch = self.order.len().max(1);
        Ok(Some(PretrainStep {
            step: self.step,
            total_steps: self.total_steps,
            epoch: self.epoch as f64 + self.cursor as f64 / per_epoch as f64,
            mlm_loss: values.loss,
            mlm_accuracy: values.extra[0] / n.max(1) as f32,
            pair_loss: pair_trained.then(|| values.extra[1]),
            lr,
            tokens,
            picked: n,
            rtd_loss: rtd_trained.then(|| values.extra[1]),
            rtd_accuracy: rtd_trained.then(|| values.extra[2] / tokens.max(1) as f32),
            replaced: if rtd_trained { values.extra[3] as usize } else { 0 },
        }))
    }
}

impl Pretrainer {
    /// [`fill_mask`] with the model as trained so far (no dropout, no autodiff).
    pub async fn fill_mask(&self, text: &str, k: usize) -> crate::Result<Vec<MaskFill>> {
        let model = self.mlm_model().valid();
        fill_mask(&model, &self.tokenizer, text, k, &self.device.clone().inner()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{device_rng, tiny_config};

    /// A step reports how many tokens it picked: at least one per line, more at a higher
    /// masking rate, never a special token or padding.
    #[test]
    fn a_step_counts_the_tokens_it_picked() {
        let _rng = device_rng();
        let words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cow", "eats", "grass", "in", "a", "field"];
        let tokenizer = BertTokenizer::from_vocab_txt(words.join("\n").as_bytes(), true, 16).unwrap();
        let lines: Vec<String> = (0..8).map(|i| ["the cow eats grass in a field", "a cow", "the field"][i % 3].to_string()).collect();
        let device = Device::flex().autodiff();
        let picked = |rate: f64| {
            let model = BertForPreTraining::from_scratch(&tiny_config(words.len()), false, &device);
            let run = PretrainConfig::new().with_epochs(1).with_batch_size(8).with_masking(MaskingConfig::new().with_pick_prob(rate));
            let mut trainer = Pretrainer::new(model, &tokenizer, lines.clone(), run, &device).unwrap();
            let step = pollster::block_on(trainer.step()).unwrap().unwrap();
            (step.picked, step.tokens)
        };
        let (low, tokens) = picked(0.05);
        let (high, _) = picked(0.9);
        // 8 lines, each `[CLS] … [SEP]`: the specials are never picked.
        assert!(low >= 8, "at least one pick per line: {low}");
        assert!(high > low && high <= tokens - 16, "{low} at 5%, {high} at 90% of {tokens} tokens");
    }

    /// An ELECTRA run trains the discriminator on every real token: its loss falls over a few
    /// epochs on a small corpus, the generator's MLM loss is reported beside it, and the
    /// replaced tokens are among the picked ones. A model that does not match the objective is
    /// refused.
    #[test]
    fn an_electra_run_learns_to_tell_replaced_tokens() {
        let _rng = device_rng();
        let words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cow", "eats", "grass", "in", "a", "field", "dog", "runs"];
        let tokenizer = BertTokenizer::from_vocab_txt(words.join("\n").as_bytes(), true, 16).unwrap();
        let lines: Vec<String> = (0..16).map(|i| ["the cow eats grass in a field", "a dog runs in the field", "the dog eats grass"][i % 3].to_string()).collect();
        let device = Device::flex().autodiff();
        device.seed(7);
        let config = tiny_config(words.len());
        let run = PretrainConfig::new().with_epochs(12).with_batch_size(8).with_learning_rate(2e-3).with_replaced_token_detection(Some(true));
        let mlm = BertForPreTraining::from_scratch(&config, false, &device);
        assert!(Pretrainer::new(mlm, &tokenizer, lines.clone(), run.clone(), &device).is_err(), "an MLM model for an ELECTRA run");
        let model = ElectraForPreTraining::from_scratch(&config, &device);
        let mut trainer = Pretrainer::new_electra(model, &tokenizer, lines, run, &device).unwrap();
        let mut steps = Vec::new();
        while let Some(step) = pollster::block_on(trainer.step()).unwrap() {
            steps.push(step);
        }
        assert_eq!(steps.len(), 24);
        for s in &steps {
            assert!(s.rtd_loss.is_some() && s.rtd_accuracy.is_some() && s.pair_loss.is_none());
            assert!(s.replaced <= s.picked, "{} replaced of {} picked", s.replaced, s.picked);
        }
        let mean = |of: &[PretrainStep]| of.iter().map(|s| s.rtd_loss.unwrap()).sum::<f32>() / of.len() as f32;
        let (first, last) = (mean(&steps[..4]), mean(&steps[20..]));
        assert!(last < first * 0.8, "the discriminator's loss went from {first} to {last}");
        assert!(trainer.discriminator().is_some());
        // The generator fills masks through the shared embeddings.
        let fills = pollster::block_on(trainer.fill_mask("the cow [MASK] grass", 3)).unwrap();
        assert_eq!(fills[0].top.len(), 3);
    }
}
