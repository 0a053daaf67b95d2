//! Does a device compute what the CPU computes? The same tiny BERT, the same inputs, on two
//! devices: forward outputs, then one training step's loss and gradients.
//!
//! This exists because of a real failure: burn-wgpu with kernel fusion and autotuning gave NaN
//! or zero training losses on a software WebGPU adapter. The browser app runs this check before
//! trusting a GPU, and the end-to-end tests run it in headless Chromium.

use burn::module::Param;
use burn::prelude::*;
use burn::tensor::TensorData;
use burn_store::{ModuleSnapshot, SafetensorsStore};
use serde::Serialize;

use crate::bert::checkpoint::{load_model, save_weights};
use crate::nn::activation::{gelu, tanh};
use crate::bert::config::{BertConfig, Preset};
use crate::bert::family::Family;
use crate::error::{Error, Result};
use crate::tasks::classification::{ClassificationHead, ClassificationHeadConfig};
use crate::nn::read_f32;
use crate::bert::model::{BertInput, BertModel, BertModelConfig, ForwardOptions};
use crate::bert::pooling::mean_pool;
use crate::tokenizer::Batch;

/// How far one named output is from the reference.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// What was compared (`last_hidden_state`, a parameter's gradient, ...).
    pub name: String,
    /// Number of values.
    pub len: usize,
    /// Largest `|candidate - reference|`.
    pub max_abs_diff: f32,
    /// Largest `|reference|`, for scale.
    pub max_abs_reference: f32,
    /// Whether the candidate has NaN or infinite values.
    pub non_finite: bool,
    /// `max_abs_diff <= tolerance × max(1, max_abs_reference)` and all finite.
    pub ok: bool,
}

/// The outcome of [`compare_devices`].
#[derive(Debug, Clone, Serialize)]
pub struct DeviceCheckReport {
    /// Tolerance used (relative to the reference's scale, absolute below 1).
    pub tolerance: f32,
    /// Forward outputs: last hidden state, last layer's attention, mean-pooled vectors.
    pub forward: Vec<Comparison>,
    /// The training loss on the reference device.
    pub loss_reference: f32,
    /// The training loss on the candidate device.
    pub loss_candidate: f32,
    /// Gradients of a few parameters spread over the model.
    pub gradients: Vec<Comparison>,
    /// Every comparison passed and both losses are finite and positive.
    pub passed: bool,
}

/// Tolerance of the check: f32 kernels that differ only in summation order agree far closer.
pub const TOLERANCE: f32 = 1e-4;

struct Outputs {
    forward: Vec<(String, Vec<f32>)>,
    loss: f32,
    gradients: Vec<(String, Vec<f32>)>,
}

/// The tiny model the check uses: BERT-tiny with a 512-piece vocabulary and no dropout.
pub fn check_config() -> BertConfig {
    Preset::Tiny.config(512).with_max_position_embeddings(64).without_dropout()
}

/// Tiny models of the families whose blocks BERT-tiny does not exercise, for a check of a
/// device's kernels on them: ALBERT (narrow embeddings projected up, two layer groups of two
/// layers each over three depths, the first group's shared by two), MPNet (a relative position bias in every attention, no segments) and ModernBERT
/// (rotary positions, pre-norm gated layers without biases, a local window of 4 that the check's
/// 12-token rows exceed, between two global layers) and DeBERTa-v3 (disentangled attention:
/// content-to-position and position-to-content terms gathered from a normalised relative table,
/// 8 log buckets reaching 8, which the 12-token rows pass; no absolute positions or segments;
/// v2-xlarge's grouped convolution of the embeddings after the first layer, beside padding).
pub fn family_check_configs() -> Vec<BertConfig> {
    use crate::bert::config::AttentionKind::{FullAttention, SlidingAttention};
    use crate::bert::config::PositionAttention;
    vec![
        check_config()
            .with_model_type(Family::Albert)
            .with_embedding_size(Some(32))
            .with_num_hidden_layers(3)
            .with_num_hidden_groups(Some(2))
            .with_inner_group_num(Some(2)),
        check_config().with_model_type(Family::MpNet).with_type_vocab_size(0).with_pad_token_id(1).with_max_position_embeddings(66),
        check_config()
            .with_model_type(Family::ModernBert)
            .with_type_vocab_size(0)
            .with_num_hidden_layers(3)
            .with_layer_types(Some(vec![FullAttention, SlidingAttention, FullAttention]))
            .with_local_attention(Some(4))
            .with_global_rope_theta(Some(160_000.0))
            .with_local_rope_theta(Some(10_000.0))
            .with_norm_bias(Some(false))
            .with_attention_bias(Some(false))
            .with_mlp_bias(Some(false)),
        check_config()
            .with_model_type(Family::DebertaV2)
            .with_type_vocab_size(0)
            .with_absolute_positions(Some(false))
            .with_position_buckets(Some(8))
            .with_max_relative_positions(Some(8))
            .with_pos_att_type(Some(vec![PositionAttention::C2p, PositionAttention::P2c]))
            .with_share_att_key(Some(true))
            .with_norm_rel_ebd(Some("layer_norm".into()))
            .with_conv_kernel_size(Some(3))
            .with_conv_groups(Some(2))
            .with_conv_act(Some(crate::bert::config::HiddenAct::Gelu)),
        check_config().with_position_embedding_type(Some(crate::bert::config::RelativeKey::RelativeKeyQuery)),
    ]
}

/// A fixed batch: four rows of different lengths (so padding is exercised) and two labels.
fn check_batch(seed: u64) -> (Batch, Vec<i64>) {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) % n) as u32
    };
    let lengths = [12usize, 9, 5, 12];
    let ids: Vec<Vec<u32>> = lengths
        .iter()
        .map(|&len| {
            let mut row = vec![2u32];
            row.extend((0..len - 2).map(|_| 5 + next(500)));
            row.push(3);
            row
        })
        .collect();
    let types: Vec<Vec<u32>> = lengths.iter().map(|&len| (0..len as u32).map(|i| u32::from(i >= len as u32 / 2)).collect()).collect();
    (Batch::from_rows(&ids, &types, 0), vec![0, 1, 1, 0])
}

fn head_bytes(head: &ClassificationHead) -> Result<Vec<u8>> {
    let mut store = SafetensorsStore::from_bytes(None);
    head.save_into(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    store.get_bytes().map_err(|e| Error::Weights(e.to_string()))
}

fn load_head(bytes: &[u8], hidden: usize, device: &Device) -> Result<ClassificationHead> {
    let mut head = ClassificationHeadConfig::new(hidden, 2).with_dropout(0.0).init(device);
    let mut store = SafetensorsStore::from_bytes(Some(bytes.to_vec()));
    head.load_from(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
    Ok(head)
}

async fn grad_of<const D: usize>(name: &str, param: &Param<Tensor<D>>, grads: &burn::tensor::Gradients) -> Result<(String, Vec<f32>)> {
    let grad = param
        .val()
        .grad(grads)
        .ok_or_else(|| Error::Device(format!("no gradient for {name}")))?;
    Ok((name.to_string(), read_f32(grad).await?))
}

async fn run_on(device: &Device, config: &BertConfig, weights: &[u8], head: &[u8], seed: u64) -> Result<Outputs> {
    let (batch, labels) = check_batch(seed);

    // Forward, without autodiff.
    let (model, _) = load_model(config, weights.to_vec(), device)?;
    let input = BertInput::from_batch(&batch, device);
    let mask = input.attention_mask.clone();
    let out = model.forward(input, ForwardOptions { attentions: true, ..Default::default() });
    let pooled = mean_pool(out.last_hidden_state.clone(), mask);
    let mut forward = vec![
        ("last_hidden_state".to_string(), read_f32(out.last_hidden_state).await?),
        ("attention (last layer)".to_string(), read_f32(out.attentions.last().cloned().expect("layers")).await?),
        ("mean-pooled".to_string(), read_f32(pooled).await?),
    ];

    // One training step: loss and gradients.
    let ad = device.clone().autodiff();
    let (model, _) = load_model(config, weights.to_vec(), &ad)?;
    let head = load_head(head, config.hidden_size, &ad)?;
    let input = BertInput::from_batch(&batch, &ad);
    let mask = input.attention_mask.clone();
    let out = model.forward(input, ForwardOptions::default());
    let logits = head.forward(mean_pool(out.last_hidden_state, mask));
    let labels = Tensor::<1, Int>::from_data(TensorData::new(labels, [batch.batch_size]), &ad);
    let loss = ClassificationHead::loss(logits, labels);
    let grads = loss.backward();
    let loss = read_f32(loss).await?[0];
    let mut gradients = gradient_probes(&model, &head, &grads).await?;

    // GELU, the pooler's `tanh` and their derivatives at arguments real models reach (large
    // enough for burn's tanh-based GELU derivative to meet SwiftShader's `tanh`, NaN from 89 on).
    // The tiny random model's activations stay small, so they are checked here directly.
    let activations: [(&str, fn(Tensor<1>) -> Tensor<1>); 2] = [("GELU", gelu::<1>), ("tanh", tanh::<1>)];
    for (name, f) in activations {
        let x = Tensor::<1>::from_data(TensorData::new(LARGE_ARGUMENTS.to_vec(), [LARGE_ARGUMENTS.len()]), &ad).require_grad();
        let y = f(x.clone());
        let g = y.clone().sum().backward();
        forward.push((format!("{name} at large arguments"), read_f32(y).await?));
        let dx = x.grad(&g).ok_or_else(|| Error::Training(format!("{name}'s probe got no gradient")))?;
        gradients.push((format!("{name}′ at large arguments"), read_f32(dx).await?));
    }
    Ok(Outputs { forward, loss, gradients })
}

/// Where [`compare_devices`] checks GELU, `tanh` and their derivatives.
const LARGE_ARGUMENTS: [f32; 15] = [-300.0, -100.0, -89.0, -20.0, -13.0, -3.0, -0.5, 0.0, 0.5, 3.0, 13.0, 20.0, 89.0, 100.0, 300.0];

async fn gradient_probes(model: &BertModel, head: &ClassificationHead, grads: &burn::tensor::Gradients) -> Result<Vec<(String, Vec<f32>)>> {
    let mut own = Vec::new();
    if let Some(bias) = &model.encoder.relative_attention_bias {
        own.push(grad_of("encoder.relative_attention_bias.weight", &bias.weight, grads).await?);
    }
    if let Some(table) = &model.encoder.rel_embeddings {
        own.push(grad_of("encoder.rel_embeddings.weight", &table.weight, grads).await?);
    }
    if let Some(conv) = &model.encoder.conv {
        own.push(grad_of("encoder.conv.conv.weight", &conv.conv.weight, grads).await?);
    }
    if let Some(table) = model.encoder.layer.first().and_then(|l| l.attention.self_attn.distance_embedding.as_ref()) {
        own.push(grad_of("encoder.layer.0.attention.self.distance_embedding.weight", &table.weight, grads).await?);
    }
    if let Some(project) = &model.embeddings_project {
        own.push(grad_of("embeddings_project.weight", &project.weight, grads).await?);
    }
    let mut spread = vec![grad_of("classifier.weight", &head.classifier.weight, grads).await?];
    // The bottom and top layers, of whichever kind the family's are.
    if let (Some(first), Some(last)) = (model.encoder.layer.first(), model.encoder.layer.last()) {
        spread.push(grad_of("encoder.layer.last.output.dense.weight", &last.output.dense.weight, grads).await?);
        spread.push(grad_of("encoder.layer.0.attention.self.query.weight", &first.attention.self_attn.query.weight, grads).await?);
    }
    if let (Some(first), Some(last)) = (model.encoder.layers.first(), model.encoder.layers.last()) {
        spread.push(grad_of("layers.last.mlp.Wi.weight", &last.mlp.wi.weight, grads).await?);
        spread.push(grad_of("layers.0.attn.Wqkv.weight", &first.attn.wqkv.weight, grads).await?);
    }
    if let (Some(first), Some(last)) = (model.encoder.disentangled.first(), model.encoder.disentangled.last()) {
        spread.push(grad_of("encoder.layer.last.output.dense.weight", &last.output.dense.weight, grads).await?);
        spread.push(grad_of("encoder.layer.0.attention.self.query_proj.weight", &first.attention.self_attn.query_proj.weight, grads).await?);
    }
    spread.push(grad_of("embeddings.LayerNorm.weight", &model.embeddings.layer_norm.gamma, grads).await?);
    spread.push(grad_of("embeddings.word_embeddings.weight", &model.embeddings.word_embeddings.weight, grads).await?);
    Ok(spread.into_iter().chain(own).collect())
}

fn compare(name: &str, reference: &[f32], candidate: &[f32]) -> Comparison {
    let non_finite = candidate.iter().any(|x| !x.is_finite()) || reference.len() != candidate.len();
    let max_abs_reference = reference.iter().fold(0f32, |m, x| m.max(x.abs()));
    let max_abs_diff = reference
        .iter()
        .zip(candidate)
        .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    let ok = !non_finite && max_abs_diff <= TOLERANCE * max_abs_reference.max(1.0);
    Comparison { name: name.to_string(), len: reference.len(), max_abs_diff, max_abs_reference, non_finite, ok }
}

/// Runs the tiny model on `reference` (normally `Device::flex()`) and on `candidate`, from the
/// same weights and inputs, and compares everything.
pub async fn compare_devices(reference: &Device, candidate: &Device, seed: u64) -> Result<DeviceCheckReport> {
    compare_devices_on(reference, candidate, seed, check_config()).await
}

/// [`compare_devices`] with another tiny model (see [`family_check_configs`]).
pub async fn compare_devices_on(reference: &Device, candidate: &Device, seed: u64, config: BertConfig) -> Result<DeviceCheckReport> {
    let host = Device::flex();
    host.seed(seed);
    let pooler = config.model_type.has_pooler();
    let weights = save_weights(&BertModelConfig::new(config.clone()).with_with_pooler(pooler).init(&host))?;
    let head = head_bytes(&ClassificationHeadConfig::new(config.hidden_size, 2).with_dropout(0.0).init(&host))?;

    let a = run_on(reference, &config, &weights, &head, seed).await?;
    let b = run_on(candidate, &config, &weights, &head, seed).await?;
    let pair = |xs: &[(String, Vec<f32>)], ys: &[(String, Vec<f32>)]| -> Vec<Comparison> {
        xs.iter().zip(ys).map(|((n, x), (_, y))| compare(n, x, y)).collect()
    };
    let forward = pair(&a.forward, &b.forward);
    let gradients = pair(&a.gradients, &b.gradients);
    let loss_ok = b.loss.is_finite()
        && b.loss > 0.0
        && (a.loss - b.loss).abs() <= TOLERANCE * a.loss.abs().max(1.0);
    let passed = loss_ok && forward.iter().chain(&gradients).all(|c| c.ok);
    Ok(DeviceCheckReport { tolerance: TOLERANCE, forward, loss_reference: a.loss, loss_candidate: b.loss, gradients, passed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_agrees_with_itself_and_gradients_are_real() {
        let device = Device::flex();
        let report = pollster::block_on(compare_devices(&device, &device, 7)).unwrap();
        assert!(report.passed, "{report:#?}");
        // ln 2 ≈ 0.69 for an untrained 2-way head.
        assert!((report.loss_reference - 2f32.ln()).abs() < 0.1, "{}", report.loss_reference);
        for g in &report.gradients {
            assert!(g.max_abs_reference > 0.0, "{} has an all-zero gradient", g.name);
        }
    }

    /// ALBERT's, MPNet's, ModernBERT's and DeBERTa's own blocks are checked too, and get
    /// gradients: the shared layer, the embedding projection, the relative position bias, the
    /// fused attention with rotary positions and a local window, the relative table DeBERTa's
    /// attention projects and its convolution, BERT's relative distance table.
    #[test]
    fn the_families_own_blocks_agree_and_learn() {
        let device = Device::flex();
        for config in family_check_configs() {
            let family = config.model_type;
            let report = pollster::block_on(compare_devices_on(&device, &device, 7, config)).unwrap();
            assert!(report.passed, "{family:?}: {report:#?}");
            let own = match family {
                Family::MpNet => "encoder.relative_attention_bias.weight",
                Family::ModernBert => "layers.0.attn.Wqkv.weight",
                Family::DebertaV2 => "encoder.rel_embeddings.weight",
                Family::Bert => "encoder.layer.0.attention.self.distance_embedding.weight",
                _ => "embeddings_project.weight",
            };
            let conv = (family == Family::DebertaV2).then_some("encoder.conv.conv.weight");
            for own in std::iter::once(own).chain(conv) {
                let g = report.gradients.iter().find(|g| g.name == own).unwrap_or_else(|| panic!("{family:?}: no {own} gradient"));
                assert!(g.max_abs_reference > 0.0, "{family:?}: {own} has an all-zero gradient");
            }
        }
    }

    #[test]
    fn comparison_flags_nan_and_drift() {
        assert!(compare("x", &[1.0, 2.0], &[1.0, 2.00001]).ok);
        assert!(!compare("x", &[1.0, 2.0], &[1.0, 2.1]).ok);
        assert!(!compare("x", &[1.0, 2.0], &[1.0, f32::NAN]).ok);
        assert!(!compare("x", &[1.0, 2.0], &[1.0]).ok);
    }
}
