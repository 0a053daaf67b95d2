//! ELECTRA's pretraining task, replaced-token detection (Clark et al. 2020, "ELECTRA:
//! Pre-training Text Encoders as Discriminators Rather Than Generators"). A small generator, an
//! MLM model, fills the masked positions with tokens sampled from its own predictions; the
//! discriminator reads the result and learns, at every token rather than at the picked ones only,
//! whether that token was replaced. The two share their embeddings, and the loss is the
//! generator's MLM loss plus [`DISCRIMINATOR_WEIGHT`] times the discriminator's. After
//! pretraining the generator is dropped: the discriminator's encoder is the model, exported as
//! `transformers`' `ElectraForPreTraining`. The run itself is [`crate::train::Pretrainer`].

use burn::nn::Linear;
use burn::prelude::*;
use burn::tensor::activation::relu;
use burn::tensor::{Distribution, IndexingUpdateOp};
use burn_store::{BurnToPyTorchAdapter, ModuleSnapshot, SafetensorsStore};

use crate::bert::checkpoint::{CheckpointFiles, Head, LoadedModel, hf_store, save_weights, with_heads};
use crate::bert::config::{BertConfig, HiddenAct};
use crate::bert::family::Family;
use crate::bert::model::{BertInput, BertModel, BertModelConfig, ForwardOptions};
use crate::error::Error;
use crate::nn::linear::{init_linear, linear};
use crate::tasks::pretraining::BertForPreTraining;
use crate::tokenizer::BertTokenizer;

/// How much more the discriminator's loss counts than the generator's: ELECTRA's λ = 50 (its
/// binary loss per token is much smaller than the MLM loss over the vocabulary).
pub const DISCRIMINATOR_WEIGHT: f64 = 50.0;

/// The generator's size as a share of the discriminator's (width, heads, feed-forward): ELECTRA's
/// own code scales them together, and the paper found generators a quarter to half the
/// discriminator's size work best.
pub const GENERATOR_SHARE: usize = 4;

/// Configuration of [`DiscriminatorHead`].
#[derive(Config, Debug)]
pub struct DiscriminatorHeadConfig {
    /// Width of the hidden states.
    pub hidden_size: usize,
    /// The activation between its two layers (the encoder's `hidden_act`).
    #[config(default = "HiddenAct::Gelu")]
    pub hidden_act: HiddenAct,
    /// Standard deviation of the normal initialiser.
    #[config(default = 0.02)]
    pub initializer_range: f64,
}

impl DiscriminatorHeadConfig {
    /// A fresh head (biases zero).
    pub fn init(&self, device: &Device) -> DiscriminatorHead {
        DiscriminatorHead {
            dense: init_linear(self.hidden_size, self.hidden_size, self.initializer_range, device),
            dense_prediction: init_linear(self.hidden_size, 1, self.initializer_range, device),
            act: self.hidden_act,
        }
    }
}

/// `dense → activation → dense_prediction`: one logit per token, above 0 where the token looks
/// replaced (`discriminator_predictions` in a checkpoint).
#[derive(Module, Debug)]
pub struct DiscriminatorHead {
    /// `hidden → hidden`.
    pub dense: Linear,
    /// `hidden → 1`.
    pub dense_prediction: Linear,
    #[module(skip)]
    act: HiddenAct,
}

impl DiscriminatorHead {
    /// # Shapes
    /// - `hidden`: `[batch, seq, hidden]`
    /// - output: logits `[batch, seq]`
    pub fn forward(&self, hidden: Tensor<3>) -> Tensor<2> {
        let [batch, seq, _] = hidden.dims();
        let x = self.act.apply(linear(&self.dense, hidden));
        linear(&self.dense_prediction, x).reshape([batch, seq])
    }
}

/// The discriminator's head under its checkpoint name.
#[derive(Module, Debug)]
struct DiscriminatorHeads {
    discriminator_predictions: DiscriminatorHead,
}

/// ELECTRA's discriminator: the encoder that is kept, and its replaced-token head.
#[derive(Module, Debug)]
pub struct ElectraDiscriminator {
    /// The encoder (`electra.*`).
    pub electra: BertModel,
    /// Replaced or original, per token.
    pub discriminator_predictions: DiscriminatorHead,
}

impl ElectraDiscriminator {
    /// A freshly initialised discriminator of `config`'s size.
    pub fn from_scratch(config: &BertConfig, device: &Device) -> Self {
        Self {
            electra: BertModelConfig::new(config.clone()).with_with_pooler(false).init(device),
            discriminator_predictions: head_config(config).init(device),
        }
    }

    /// # Shapes
    /// - `input`: `[batch, seq]` tensors
    /// - output: logits `[batch, seq]`
    pub fn forward(&self, input: BertInput) -> Tensor<2> {
        let out = self.electra.forward(input, ForwardOptions::default());
        self.discriminator_predictions.forward(out.last_hidden_state)
    }
}

fn head_config(config: &BertConfig) -> DiscriminatorHeadConfig {
    DiscriminatorHeadConfig::new(config.hidden_size).with_hidden_act(config.hidden_act).with_initializer_range(config.initializer_range)
}

/// The generator of a discriminator of `config`'s size: an ELECTRA MLM model
/// [`GENERATOR_SHARE`] times narrower (at least one head of the discriminator's head width is
/// kept), as deep, on embeddings as wide as the discriminator's (they are shared), projected
/// down to its width.
pub fn generator_config(config: &BertConfig) -> BertConfig {
    let head_width = config.hidden_size / config.num_attention_heads.max(1);
    let heads = (config.num_attention_heads / GENERATOR_SHARE).max(1);
    let hidden = (config.hidden_size / GENERATOR_SHARE).max(head_width.min(config.hidden_size));
    config
        .clone()
        .with_model_type(Family::Electra)
        .with_embedding_size(Some(config.embedding_width()))
        .with_hidden_size(hidden)
        .with_num_attention_heads(heads)
        .with_intermediate_size((config.intermediate_size / GENERATOR_SHARE).max(hidden))
}

/// What one training forward pass gives.
#[derive(Debug, Clone)]
pub struct ElectraOutput {
    /// The generator's vocabulary logits at the picked positions, `[picked, vocab]`.
    pub mlm_logits: Tensor<2>,
    /// The discriminator's logits, `[batch, seq]`.
    pub logits: Tensor<2>,
    /// 1 where the generator's sample differs from the original token, `[batch, seq]`.
    pub replaced: Tensor<2, Int>,
}

/// The generator and the discriminator, trained together.
#[derive(Module, Debug)]
pub struct ElectraForPreTraining {
    /// What is kept.
    pub discriminator: ElectraDiscriminator,
    /// The small MLM model. Its own embedding tables are never used: it reads the
    /// discriminator's (see [`tied`]).
    pub generator: BertForPreTraining,
}

/// `generator` reading `discriminator`'s embeddings (tokens, positions, segments and their
/// LayerNorm), as ELECTRA ties them: its MLM decoder is then the shared token table too.
pub fn tied(generator: &BertForPreTraining, discriminator: &ElectraDiscriminator) -> BertForPreTraining {
    let mut g = generator.clone();
    g.bert.embeddings = discriminator.electra.embeddings.clone();
    g
}

impl ElectraForPreTraining {
    /// A fresh discriminator of `config`'s size (an ELECTRA) and its generator.
    pub fn from_scratch(config: &BertConfig, device: &Device) -> Self {
        let config = config.clone().with_model_type(Family::Electra).with_embedding_size(Some(config.embedding_width()));
        Self {
            discriminator: ElectraDiscriminator::from_scratch(&config, device),
            generator: BertForPreTraining::from_scratch(&generator_config(&config), false, device),
        }
    }

    /// The generator fills the picked positions of `masked` by sampling from its predictions
    /// (Gumbel-max on the device's generator; no gradient flows through the sample), and the
    /// discriminator reads `original` with those samples in place.
    ///
    /// # Shapes
    /// - `masked`: the generator's input, `[batch, seq]` tensors
    /// - `original`: the uncorrupted ids, `[batch, seq]`
    /// - `picked`: `[picked]` flat indices `b * seq + s`; `targets`: `[picked]` the ids there in `original`
    pub fn forward(&self, masked: BertInput, original: Tensor<2, Int>, picked: Tensor<1, Int>, targets: Tensor<1, Int>) -> ElectraOutput {
        let [batch, seq] = original.dims();
        let (token_type_ids, attention_mask) = (masked.token_type_ids.clone(), masked.attention_mask.clone());
        let (mlm_logits, _) = tied(&self.generator, &self.discriminator).forward(masked, picked.clone());
        let [n, _] = mlm_logits.dims();
        // argmax(logits − log(−log u)), u uniform, is a draw from softmax(logits).
        let uniform = Tensor::<2>::random(mlm_logits.shape(), Distribution::Uniform(1e-7, 1.0), &mlm_logits.device());
        let gumbel = uniform.log().neg().log().neg();
        let sampled = (mlm_logits.clone().detach() + gumbel).argmax(1).reshape([n]);
        let corrupted = original.clone().reshape([batch * seq]).select_assign(0, picked, sampled - targets, IndexingUpdateOp::Add).reshape([batch, seq]);
        let replaced = corrupted.clone().not_equal(original).int();
        let logits = self.discriminator.forward(BertInput { input_ids: corrupted, token_type_ids, attention_mask });
        ElectraOutput { mlm_logits, logits, replaced }
    }
}

/// The discriminator's loss, binary cross-entropy averaged over the real tokens (padding left
/// out, as `ElectraForPreTraining` does with its attention mask), and how many of them it
/// judged right (logit above 0 where replaced, not above where original).
///
/// # Shapes
/// - `logits`, `replaced`, `attention_mask`: `[batch, seq]`
/// - output: `([1], [1])`
pub fn discriminator_loss(logits: Tensor<2>, replaced: Tensor<2, Int>, attention_mask: Tensor<2, Int>) -> (Tensor<1>, Tensor<1>) {
    let y = replaced.clone().float();
    let real = attention_mask.clone().float();
    // max(x, 0) − x·y + log(1 + e^−|x|): −[y·log σ(x) + (1 − y)·log(1 − σ(x))] without overflow.
    let per_token = relu(logits.clone()) - logits.clone() * y + logits.clone().abs().neg().exp().log1p();
    let loss = (per_token * real.clone()).sum() / real.sum().clamp_min(1.0);
    let right = logits.greater_elem(0.0).equal(replaced.equal_elem(1)).int() * attention_mask;
    (loss, right.sum().float())
}

/// The discriminator as a Hugging Face folder: `config.json` (an `electra` whose architecture is
/// `ElectraForPreTraining`), `model.safetensors` (the encoder under `electra.`, the head under
/// `discriminator_predictions.`), `tokenizer_config.json` and the tokenizer files given.
/// `transformers` loads it with `ElectraForPreTraining` (replaced-token logits) and any
/// `AutoModelFor...` (the encoder); the studio fine-tunes it as any ELECTRA.
pub fn export(
    model: &ElectraDiscriminator,
    config: &BertConfig,
    tokenizer: &BertTokenizer,
    tokenizer_json: Option<&[u8]>,
    vocab_txt: Option<&[u8]>,
) -> crate::Result<Vec<(String, Vec<u8>)>> {
    let mut value: serde_json::Value = serde_json::from_slice(&config.to_hf_json()).map_err(|e| Error::Config(e.to_string()))?;
    value["architectures"] = serde_json::json!(["ElectraForPreTraining"]);
    let heads = DiscriminatorHeads { discriminator_predictions: model.discriminator_predictions.clone() };
    let mut store = SafetensorsStore::from_bytes(None).with_to_adapter(BurnToPyTorchAdapter);
    heads.save_into(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    let heads = store.get_bytes().map_err(|e| Error::Weights(e.to_string()))?;
    let weights = with_heads(&save_weights(&model.electra)?, &heads, config.model_type)?;
    let mut files = vec![
        ("config.json".to_string(), serde_json::to_vec_pretty(&value).map_err(|e| Error::Config(e.to_string()))?),
        ("model.safetensors".to_string(), weights),
        ("tokenizer_config.json".to_string(), crate::tasks::classification::tokenizer_config(config, tokenizer, config.max_len())),
    ];
    files.extend(tokenizer_json.map(|b| ("tokenizer.json".to_string(), crate::tokenizer::tokenizer_json_as_run(b))));
    files.extend(vocab_txt.map(|b| ("vocab.txt".to_string(), b.to_vec())));
    Ok(files)
}

/// Whether a loaded checkpoint is an ELECTRA discriminator with its replaced-token head and no
/// masked-language-model head (what [`export`] writes).
pub fn is_discriminator(loaded: &LoadedModel) -> bool {
    loaded.report.heads.contains(&Head::ReplacedToken) && !loaded.report.heads.contains(&Head::MaskedLm)
}

/// A discriminator checkpoint (an `ElectraForPreTraining` folder, or one [`export`] wrote) with
/// its tokenizer and configuration; refused, by name, without its replaced-token head.
pub fn load(files: CheckpointFiles, device: &Device) -> crate::Result<(ElectraDiscriminator, BertTokenizer, BertConfig)> {
    let loaded = crate::bert::checkpoint::load(files, device)?;
    if !loaded.report.heads.contains(&Head::ReplacedToken) {
        return Err(Error::MissingTensors(vec!["discriminator_predictions.* (the checkpoint has no replaced-token head)".into()]));
    }
    let mut heads = DiscriminatorHeads { discriminator_predictions: head_config(&loaded.config).init(device) };
    let mut store = hf_store(loaded.head_weights.clone().unwrap_or_default());
    let result = heads.load_from(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    if !result.errors.is_empty() {
        return Err(Error::ShapeMismatch(result.errors.iter().map(|e| format!("discriminator head: {e}")).collect()));
    }
    if !result.missing.is_empty() {
        return Err(Error::MissingTensors(result.missing.iter().map(|(p, _)| format!("discriminator head: {p}")).collect()));
    }
    let LoadedModel { config, model, tokenizer, .. } = loaded;
    Ok((ElectraDiscriminator { electra: model, discriminator_predictions: heads.discriminator_predictions }, tokenizer, config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::checkpoint::CheckpointFiles;
    use crate::test_util::{device_rng, tiny_config};
    use burn::tensor::TensorData;

    fn read_i64(t: Tensor<2, Int>) -> Vec<i64> {
        t.into_data().convert::<i64>().try_to_vec().unwrap()
    }

    /// The generator is a quarter of the discriminator (one head at least), reads embeddings as
    /// wide as the discriminator's, and its decoder is the discriminator's token table.
    #[test]
    fn the_generator_is_a_quarter_as_wide_and_shares_the_embeddings() {
        let _rng = device_rng();
        let config = tiny_config(20);
        let g = generator_config(&config);
        assert_eq!((g.hidden_size, g.num_attention_heads, g.intermediate_size, g.embedding_width()), (64, 1, 128, 128), "BERT-tiny's 2 heads of 64 keep one");
        let mini = generator_config(&config.clone().with_hidden_size(256).with_num_attention_heads(4).with_intermediate_size(1024));
        assert_eq!((mini.hidden_size, mini.num_attention_heads, mini.intermediate_size), (64, 1, 256));
        let device = Device::flex();
        let model = ElectraForPreTraining::from_scratch(&config, &device);
        let g = tied(&model.generator, &model.discriminator);
        assert_eq!(g.bert.embeddings.word_embeddings.weight.id, model.discriminator.electra.embeddings.word_embeddings.weight.id);
        assert!(g.bert.embeddings_project.is_some(), "128-wide embeddings projected to the generator's 64");
        assert!(model.discriminator.electra.embeddings_project.is_none());
    }

    /// The generator's MLM loss reaches the discriminator's embedding table (tied) and not the
    /// generator's own, unused one.
    #[test]
    fn the_generator_learns_through_the_shared_table() {
        let _rng = device_rng();
        let device = Device::flex().autodiff();
        let model = ElectraForPreTraining::from_scratch(&tiny_config(12), &device);
        let t = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, [1, 5]), &device);
        let input = BertInput { input_ids: t(vec![2, 4, 6, 7, 3]), token_type_ids: t(vec![0; 5]), attention_mask: t(vec![1; 5]) };
        let picked = Tensor::<1, Int>::from_data(TensorData::new(vec![1i64], [1]), &device);
        let target = Tensor::<1, Int>::from_data(TensorData::new(vec![5i64], [1]), &device);
        let out = model.forward(input, t(vec![2, 5, 6, 7, 3]), picked, target.clone());
        let grads = crate::tasks::classification::ClassificationHead::loss(out.mlm_logits, target).backward();
        assert!(model.discriminator.electra.embeddings.word_embeddings.weight.val().grad(&grads).is_some(), "the shared table learns from the generator");
        assert!(model.generator.bert.embeddings.word_embeddings.weight.val().grad(&grads).is_none(), "the generator's own table is unused");
    }

    /// Only picked positions change, each to the generator's sample; `replaced` marks exactly
    /// the positions whose token differs from the original (a sample equal to the original is
    /// not a replacement), and the discriminator scores every position.
    #[test]
    fn the_discriminator_reads_the_samples_at_the_picked_positions_only() {
        let _rng = device_rng();
        let device = Device::flex();
        device.seed(3);
        let model = ElectraForPreTraining::from_scratch(&tiny_config(12), &device);
        let original = Tensor::<2, Int>::from_data(TensorData::new(vec![2i64, 5, 6, 7, 3, 2, 8, 9, 3, 0], [2, 5]), &device);
        let mask_id = 4i64;
        let picked = [1i64, 3, 6];
        let mut masked_ids = read_i64(original.clone());
        for &p in &picked {
            masked_ids[p as usize] = mask_id;
        }
        let ones = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, [2, 5]), &device);
        let input = BertInput { input_ids: ones(masked_ids), token_type_ids: ones(vec![0; 10]), attention_mask: ones(vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 0]) };
        let targets = Tensor::<1, Int>::from_data(TensorData::new(vec![5i64, 7, 8], [3]), &device);
        let out = model.forward(input, original.clone(), Tensor::from_data(TensorData::new(picked.to_vec(), [3]), &device), targets);
        assert_eq!(out.mlm_logits.dims(), [3, 12]);
        assert_eq!(out.logits.dims(), [2, 5]);
        let replaced = read_i64(out.replaced);
        for (i, r) in replaced.iter().enumerate() {
            if !picked.contains(&(i as i64)) {
                assert_eq!(*r, 0, "position {i} was not picked");
            }
        }
        // A random generator over 12 pieces replaces most picks; across seeds some are replaced.
        let mut any = replaced.iter().sum::<i64>();
        for seed in 4..10 {
            device.seed(seed);
            let input = BertInput { input_ids: ones(vec![2, 4, 6, 4, 3, 2, 4, 9, 3, 0]), token_type_ids: ones(vec![0; 10]), attention_mask: ones(vec![1; 10]) };
            let targets = Tensor::<1, Int>::from_data(TensorData::new(vec![5i64, 7, 8], [3]), &device);
            any += read_i64(model.forward(input, original.clone(), Tensor::from_data(TensorData::new(picked.to_vec(), [3]), &device), targets).replaced).iter().sum::<i64>();
        }
        assert!(any > 0, "the generator never replaced a token in 7 draws");
    }

    /// The loss is binary cross-entropy over the real tokens: checked against the definition,
    /// with padding left out, and "right" counts the tokens on the right side of 0.
    #[test]
    fn the_discriminator_loss_is_binary_cross_entropy_over_real_tokens() {
        let device = Device::flex();
        let logits = Tensor::<2>::from_data(TensorData::new(vec![2.0f32, -1.0, 0.5, 30.0, -30.0, 7.0], [2, 3]), &device);
        let replaced = Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 0, 0, 1, 1, 0], [2, 3]), &device);
        let mask = Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 1, 1, 1, 1, 0], [2, 3]), &device);
        let (loss, right) = discriminator_loss(logits, replaced, mask);
        let sigmoid = |x: f64| 1.0 / (1.0 + (-x).exp());
        let bce = |x: f64, y: f64| -(y * sigmoid(x).ln() + (1.0 - y) * (1.0 - sigmoid(x)).ln());
        let want = (bce(2.0, 1.0) + bce(-1.0, 0.0) + bce(0.5, 0.0) + bce(30.0, 1.0) + 30.0) / 5.0;
        let got = loss.into_data().try_to_vec::<f32>().unwrap()[0] as f64;
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
        // Right: 2.0→replaced ✓, −1→original ✓, 0.5→"replaced" ✗, 30 ✓, −30 ✗; padding not counted.
        assert_eq!(right.into_data().try_to_vec::<f32>().unwrap()[0], 3.0);
    }

    /// The discriminator written by `export` reads back with the same logits, its head found
    /// under `discriminator_predictions`.
    #[test]
    fn an_exported_discriminator_reads_back_the_same() {
        let _rng = device_rng();
        let device = Device::flex();
        let words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cow", "eats", "grass"];
        let tokenizer = BertTokenizer::from_vocab_txt(words.join("\n").as_bytes(), true, 16).unwrap();
        let config = tiny_config(words.len()).with_model_type(Family::Electra).with_embedding_size(Some(128)).without_dropout();
        let model = ElectraForPreTraining::from_scratch(&config, &device).discriminator;
        let files = export(&model, &config, &tokenizer, None, Some(words.join("\n").as_bytes())).unwrap();
        let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
        let config_json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
        assert_eq!(config_json["architectures"][0], "ElectraForPreTraining");
        assert_eq!(config_json["model_type"], "electra");
        let names: Vec<String> = safetensors::SafeTensors::deserialize(&get("model.safetensors").unwrap()).unwrap().names().into_iter().map(String::from).collect();
        assert!(names.contains(&"discriminator_predictions.dense_prediction.weight".to_string()), "{names:?}");
        assert!(names.contains(&"electra.embeddings.word_embeddings.weight".to_string()), "{names:?}");
        let files = CheckpointFiles { config_json: get("config.json").unwrap(), weights: get("model.safetensors").unwrap(), tokenizer_json: None, vocab_txt: get("vocab.txt") };
        let (back, _, back_config) = load(files, &device).unwrap();
        assert_eq!(back_config.model_type, Family::Electra);
        let input = || {
            let t = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, [1, 5]), &device);
            BertInput { input_ids: t(vec![2, 5, 6, 7, 3]), token_type_ids: t(vec![0; 5]), attention_mask: t(vec![1; 5]) }
        };
        let a = model.forward(input()).into_data().try_to_vec::<f32>().unwrap();
        let b = back.forward(input()).into_data().try_to_vec::<f32>().unwrap();
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5), "{a:?} vs {b:?}");
    }
}
