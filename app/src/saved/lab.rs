//! Saved copies of the MLM lab's work: its settings (saved alone, with every lab model and with
//! every run compared) and a lab model's run (its curves, probes and masked preview). (The
//! conversions from and to `runs`' and `lab`'s types are in `runs/to_saved.rs` and
//! `lab/saved.rs`.)

use bertbench_core::tasks::{masking, pretraining};
use bertbench_core::train;
use serde::{Deserialize, Serialize};

use super::train::Backend;
use super::{list, unit_enum};

unit_enum!(
    /// The sentence-pair task pretrained beside MLM.
    PairTask = masking::PairTask { Nsp, Sop }
);

unit_enum!(
    /// What a picked token became in the masked input.
    MaskCase = masking::MaskCase { Mask, Random, Keep }
);

/// Where the lab's vocabulary comes from (`runs::LabVocab`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LabVocab {
    Pretrained,
    Train(usize),
}

/// How tokens are picked and replaced for MLM.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MaskingConfig {
    pub pick_prob: f64,
    pub mask_prob: f64,
    pub random_prob: f64,
}

impl From<masking::MaskingConfig> for MaskingConfig {
    fn from(c: masking::MaskingConfig) -> Self {
        Self { pick_prob: c.pick_prob, mask_prob: c.mask_prob, random_prob: c.random_prob }
    }
}

impl From<MaskingConfig> for masking::MaskingConfig {
    fn from(s: MaskingConfig) -> Self {
        Self { pick_prob: s.pick_prob, mask_prob: s.mask_prob, random_prob: s.random_prob }
    }
}

/// A pretraining run's hyper-parameters (an option absent in an earlier item: none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PretrainConfig {
    #[serde(default)]
    pub pair_task: Option<PairTask>,
    #[serde(default)]
    pub replaced_token_detection: Option<bool>,
    pub batch_size: usize,
    pub max_len: usize,
    pub learning_rate: f64,
    pub weight_decay: f64,
    pub warmup_ratio: f64,
    pub max_grad_norm: f64,
    pub epochs: usize,
    pub dynamic_masking: bool,
    pub seed: u64,
    pub masking: MaskingConfig,
}

impl From<train::PretrainConfig> for PretrainConfig {
    fn from(c: train::PretrainConfig) -> Self {
        Self {
            pair_task: c.pair_task.map(Into::into),
            replaced_token_detection: c.replaced_token_detection,
            batch_size: c.batch_size,
            max_len: c.max_len,
            learning_rate: c.learning_rate,
            weight_decay: c.weight_decay,
            warmup_ratio: c.warmup_ratio,
            max_grad_norm: c.max_grad_norm,
            epochs: c.epochs,
            dynamic_masking: c.dynamic_masking,
            seed: c.seed,
            masking: c.masking.into(),
        }
    }
}

impl From<PretrainConfig> for train::PretrainConfig {
    fn from(s: PretrainConfig) -> Self {
        Self {
            pair_task: s.pair_task.map(Into::into),
            replaced_token_detection: s.replaced_token_detection,
            batch_size: s.batch_size,
            max_len: s.max_len,
            learning_rate: s.learning_rate,
            weight_decay: s.weight_decay,
            warmup_ratio: s.warmup_ratio,
            max_grad_norm: s.max_grad_norm,
            epochs: s.epochs,
            dynamic_masking: s.dynamic_masking,
            seed: s.seed,
            masking: s.masking.into(),
        }
    }
}

/// The lab's settings and corpus choice (`runs::LabSettings`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabSettings {
    pub corpus_name: String,
    pub vocab: LabVocab,
    pub preset: String,
    pub continue_pretrained: bool,
    /// Absent (false) in settings saved before it was offered.
    #[serde(default)]
    pub share_layers: bool,
    pub config: PretrainConfig,
    pub probes: String,
    pub probe_every: usize,
    pub backend: Backend,
}

/// One pretraining step of a lab run's curve (fields added since MLM alone: absent, zero or
/// none).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PretrainStep {
    pub step: usize,
    pub total_steps: usize,
    pub epoch: f64,
    pub mlm_loss: f32,
    pub mlm_accuracy: f32,
    pub pair_loss: Option<f32>,
    pub lr: f64,
    pub tokens: usize,
    #[serde(default)]
    pub picked: usize,
    #[serde(default)]
    pub rtd_loss: Option<f32>,
    #[serde(default)]
    pub rtd_accuracy: Option<f32>,
    #[serde(default)]
    pub replaced: usize,
}

impl From<train::PretrainStep> for PretrainStep {
    fn from(c: train::PretrainStep) -> Self {
        Self {
            step: c.step,
            total_steps: c.total_steps,
            epoch: c.epoch,
            mlm_loss: c.mlm_loss,
            mlm_accuracy: c.mlm_accuracy,
            pair_loss: c.pair_loss,
            lr: c.lr,
            tokens: c.tokens,
            picked: c.picked,
            rtd_loss: c.rtd_loss,
            rtd_accuracy: c.rtd_accuracy,
            replaced: c.replaced,
        }
    }
}

impl From<PretrainStep> for train::PretrainStep {
    fn from(s: PretrainStep) -> Self {
        Self {
            step: s.step,
            total_steps: s.total_steps,
            epoch: s.epoch,
            mlm_loss: s.mlm_loss,
            mlm_accuracy: s.mlm_accuracy,
            pair_loss: s.pair_loss,
            lr: s.lr,
            tokens: s.tokens,
            picked: s.picked,
            rtd_loss: s.rtd_loss,
            rtd_accuracy: s.rtd_accuracy,
            replaced: s.replaced,
        }
    }
}

/// A token of the masked preview: what it was, what the model was shown, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShownToken {
    pub original: String,
    pub shown: String,
    pub case: Option<MaskCase>,
}

impl From<train::ShownToken> for ShownToken {
    fn from(c: train::ShownToken) -> Self {
        Self { original: c.original, shown: c.shown, case: c.case.map(Into::into) }
    }
}

impl From<ShownToken> for train::ShownToken {
    fn from(s: ShownToken) -> Self {
        Self { original: s.original, shown: s.shown, case: s.case.map(Into::into) }
    }
}

/// A probe's blank and its top fills.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaskFill {
    pub position: usize,
    pub top: Vec<(String, f32)>,
}

impl From<pretraining::MaskFill> for MaskFill {
    fn from(c: pretraining::MaskFill) -> Self {
        Self { position: c.position, top: c.top }
    }
}

impl From<MaskFill> for pretraining::MaskFill {
    fn from(s: MaskFill) -> Self {
        Self { position: s.position, top: s.top }
    }
}

/// The probes' fills after some steps: each probe sentence with its blanks' fills.
pub type ProbeResult = (usize, Vec<(String, Vec<MaskFill>)>);

/// Core's probe results as saved ones, and back.
pub fn probes_to_saved(probes: Vec<(usize, Vec<(String, Vec<pretraining::MaskFill>)>)>) -> Vec<ProbeResult> {
    probes.into_iter().map(|(step, fills)| (step, fills.into_iter().map(|(s, f)| (s, list(f))).collect())).collect()
}

/// Saved probe results as core's.
pub fn probes_from_saved(probes: Vec<ProbeResult>) -> Vec<(usize, Vec<(String, Vec<pretraining::MaskFill>)>)> {
    probes.into_iter().map(|(step, fills)| (step, fills.into_iter().map(|(s, f)| (s, list(f))).collect())).collect()
}

/// A lab model as saved (`runs::SavedLab`): the JSON of its item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedLab {
    #[serde(flatten)]
    pub settings: LabSettings,
    pub vocab_info: Option<(usize, bool, Vec<String>)>,
    pub ready: Option<(usize, usize)>,
    pub preview: Vec<Vec<ShownToken>>,
    pub steps: Vec<PretrainStep>,
    pub probe_results: Vec<ProbeResult>,
    pub cancelled: bool,
    pub done: usize,
    pub seconds: f64,
}
