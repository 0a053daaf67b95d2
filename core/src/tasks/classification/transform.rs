//! A head's transform before its output layer: dense → activation → LayerNorm on each row it
//! reads. ModernBERT's token-classification and question-answering classes apply their `head`
//! (`ModernBertPredictionHead`) to every token before `classifier`
//! ([`FamilyFacts::token_head_transform`](crate::bert::family::FamilyFacts::token_head_transform)),
//! so a [`ClassificationHead`](super::ClassificationHead) of such a family holds one; other heads
//! have none.

use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::TensorData;

use super::{FeatureLayers, FeatureSpec, Level};
use crate::bert::config::{BertConfig, HiddenAct};
use crate::error::Error;
use crate::nn::layer_norm::LayerNorm;
use crate::nn::linear::linear;
use crate::rng::Rng;

/// Configuration of [`HeadTransform`]: as `transformers`' `ModernBertPredictionHead` builds it.
#[derive(Config, Debug)]
pub struct HeadTransformConfig {
    /// Width of the rows it reads and writes.
    pub hidden_size: usize,
    /// The activation after the dense layer (ModernBERT's `classifier_activation`).
    #[config(default = "HiddenAct::Gelu")]
    pub activation: HiddenAct,
    /// LayerNorm epsilon (`norm_eps`).
    #[config(default = 1e-5)]
    pub layer_norm_eps: f64,
    /// Whether the dense layer has a bias (`classifier_bias`).
    #[config(default = false)]
    pub dense_bias: bool,
    /// Whether the LayerNorm has a bias (`norm_bias`).
    #[config(default = false)]
    pub norm_bias: bool,
    /// Standard deviation of the dense weights' truncated normal (`transformers` gives the
    /// prediction head its "out" scale, `initializer_range / sqrt(2 × num_hidden_layers)`).
    #[config(default = 0.02)]
    pub std: f64,
    /// Where the truncated normal is cut, in standard deviations (`initializer_cutoff_factor`).
    #[config(default = 2.0)]
    pub cutoff: f64,
    /// Seed of the dense weights (drawn on the host, the same on every device).
    #[config(default = 0)]
    pub seed: u64,
}

impl HeadTransformConfig {
    /// The transform of a model configuration: its `classifier_activation`, LayerNorm epsilon,
    /// biases as `classifier_bias` and `norm_bias` say, and `transformers`' initial scale.
    pub fn from_model(config: &BertConfig) -> Self {
        let layers = config.num_hidden_layers.max(1) as f64;
        Self::new(config.hidden_size)
            .with_activation(config.classifier_activation.unwrap_or(config.hidden_act))
            .with_layer_norm_eps(config.layer_norm_eps)
            .with_dense_bias(config.classifier_bias.unwrap_or(true))
            .with_norm_bias(config.norm_bias())
            .with_std(config.initializer_range / (2.0 * layers).sqrt())
    }

    /// Creates the transform as `transformers` initialises it: dense weights from a normal cut
    /// at `cutoff` standard deviations, bias zero, the LayerNorm at the identity.
    pub fn init(&self, device: &Device) -> HeadTransform {
        let h = self.hidden_size;
        let mut rng = Rng::new(self.seed);
        let bound = (self.cutoff * self.std) as f32;
        // Box–Muller, a draw outside the cut drawn again.
        let mut normal = || loop {
            let (u, v) = (rng.next_f32().max(f32::MIN_POSITIVE), rng.next_f32());
            let x = (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos() * self.std as f32;
            if x.abs() <= bound {
                return x;
            }
        };
        let values: Vec<f32> = (0..h * h).map(|_| normal()).collect();
        let mut dense = LinearConfig::new(h, h).with_bias(self.dense_bias).init(device);
        dense.weight = burn::module::Param::from_tensor(Tensor::from_data(TensorData::new(values, [h, h]), device));
        if let Some(bias) = &mut dense.bias {
            *bias = burn::module::Param::from_tensor(Tensor::zeros([h], device));
        }
        HeadTransform { dense, norm: LayerNorm::with_bias(h, self.layer_norm_eps, self.norm_bias, device), activation: self.activation }
    }
}

/// `norm(activation(dense(x)))` on each row (`head.dense`, `head.norm` in a ModernBERT
/// checkpoint).
#[derive(Module, Debug)]
pub struct HeadTransform {
    /// `hidden → hidden`.
    pub dense: Linear,
    /// Normalises each transformed row.
    pub norm: LayerNorm,
    /// What follows the dense layer.
    #[module(skip)]
    pub activation: HiddenAct,
}

impl HeadTransform {
    /// # Shapes
    /// - `rows`: `[rows, hidden]`
    /// - output: `[rows, hidden]`
    pub fn forward(&self, rows: Tensor<2>) -> Tensor<2> {
        let x = linear(&self.dense, rows);
        let x = self.activation.apply(x);
        self.norm.forward(x)
    }

    /// The transform kept in a safetensors file under `dense` and `norm` (`head.dense.`,
    /// `head.norm.`), its shape and biases as `config` says; refuses one that is missing or
    /// mis-shaped, by name.
    pub fn read(config: &BertConfig, bytes: &[u8], dense: &str, norm: &str, device: &Device) -> crate::Result<Self> {
        use burn_store::ModuleSnapshot;
        let mut transform = HeadTransformConfig::from_model(config).init(device);
        let mut store = crate::bert::checkpoint::hf_store(bytes.to_vec())
            .with_key_remapping(format!("^{}", regex::escape(dense)), "dense.")
            .with_key_remapping(format!("^{}", regex::escape(norm)), "norm.");
        let result = transform.load_from(&mut store).map_err(|e| Error::Weights(e.to_string()))?;
        if !result.errors.is_empty() {
            return Err(Error::ShapeMismatch(result.errors.iter().map(|e| format!("{} head: {e}", config.model_type.display_name())).collect()));
        }
        if !result.missing.is_empty() {
            let name = |p: &str| p.replacen("dense.", dense, 1).replacen("norm.", norm, 1).replace(".gamma", ".weight").replace(".beta", ".bias");
            return Err(Error::MissingTensors(result.missing.iter().map(|(p, _)| name(p)).collect()));
        }
        Ok(transform)
    }

    /// Its tensors under `dense` and `norm` as PyTorch keeps them: `(name, f32 values, shape)`.
    pub fn tensors(&self, dense: &str, norm: &str) -> crate::Result<Vec<(String, Vec<f32>, Vec<usize>)>> {
        let read = |t: Tensor<1>| t.into_data().try_to_vec::<f32>().map_err(|e| Error::Device(format!("{e:?}")));
        let [width_in, width_out] = self.dense.weight.dims();
        // burn keeps [in, out]; PyTorch [out, in].
        let weight = self.dense.weight.val().transpose().reshape([width_in * width_out]);
        let mut out = vec![(format!("{dense}weight"), read(weight)?, vec![width_out, width_in])];
        if let Some(bias) = &self.dense.bias {
            out.push((format!("{dense}bias"), read(bias.val())?, vec![width_out]));
        }
        out.push((format!("{norm}weight"), read(self.norm.gamma.val())?, vec![width_out]));
        if let Some(beta) = &self.norm.beta {
            out.push((format!("{norm}bias"), read(beta.val())?, vec![width_out]));
        }
        Ok(out)
    }

    /// A pooler of this transform: `transformers`' `ModernBertPredictionHead` on the first token
    /// or on the mean of the real tokens, as `config`'s `classifier_pooling` says (ModernBERT's
    /// pooled classes).
    pub fn into_pooler(self, config: &BertConfig) -> crate::bert::model::BertPooler {
        crate::bert::model::BertPooler {
            dense: self.dense,
            activation: self.activation,
            norm: Some(self.norm),
            mean: config.classifier_pooling == Some(crate::bert::config::HeadPooling::Mean),
        }
    }

    /// The transform a run of `spec` on a model of `config` trains, where the family's token
    /// and span classes have one ([`FamilyFacts::token_head_transform`]) and the features are
    /// the last layer's tokens, as those classes read them; else none. It starts from the MLM
    /// head's in `head_weights` (the checkpoint's head tensors) where there is one, as
    /// `transformers` loads a `ModernBertForMaskedLM` checkpoint into
    /// `ModernBertForTokenClassification` (the `head.*` names are the same), else fresh, from
    /// `seed`.
    ///
    /// [`FamilyFacts::token_head_transform`]: crate::bert::family::FamilyFacts::token_head_transform
    pub fn for_run(config: &BertConfig, spec: FeatureSpec, head_weights: Option<&[u8]>, seed: u64, device: &Device) -> crate::Result<Option<Self>> {
        let facts = config.model_type.facts();
        if !facts.token_head_transform || !matches!(spec.level, Level::Token | Level::Span) || spec.layers != FeatureLayers::Last {
            return Ok(None);
        }
        let (dense, norm) = (facts.sequence_head.dense, facts.sequence_head.norm);
        let has = |name: &str| head_weights.and_then(|b| safetensors::SafeTensors::deserialize(b).ok()).is_some_and(|st| st.names().iter().any(|n| *n == name));
        match head_weights {
            Some(bytes) if has(&format!("{norm}weight")) => Self::read(config, bytes, dense, norm, device).map(Some),
            _ => Ok(Some(HeadTransformConfig::from_model(config).with_seed(seed).init(device))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;
    use crate::bert::family::Family;

    fn modernbert() -> BertConfig {
        let json = br#"{"model_type": "modernbert", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 96, "vocab_size": 80, "pad_token_id": 3, "norm_bias": true, "classifier_bias": true}"#;
        BertConfig::from_json_bytes(json).unwrap()
    }

    #[test]
    fn a_fresh_transform_is_cut_at_two_deviations_with_zero_bias_and_an_identity_norm() {
        let device = Device::flex();
        let config = modernbert();
        let t = HeadTransformConfig::from_model(&config).with_seed(3).init(&device);
        // initializer_range / sqrt(2 × 2 layers).
        let std = 0.02 / 4.0f64.sqrt();
        let w = t.dense.weight.val().into_data().try_to_vec::<f32>().unwrap();
        assert!(w.iter().all(|x| x.abs() as f64 <= 2.0 * std + 1e-9));
        let spread = (w.iter().map(|x| (*x as f64).powi(2)).sum::<f64>() / w.len() as f64).sqrt();
        // A normal cut at 2σ keeps about 0.88 of its deviation.
        assert!((spread / std - 0.88).abs() < 0.05, "{spread} vs {std}");
        assert!(t.dense.bias.as_ref().unwrap().val().into_data().try_to_vec::<f32>().unwrap().iter().all(|b| *b == 0.0));
        assert!(t.norm.gamma.val().into_data().try_to_vec::<f32>().unwrap().iter().all(|g| *g == 1.0));
        // The same seed gives the same weights.
        assert_eq!(HeadTransformConfig::from_model(&config).with_seed(3).init(&device).dense.weight.val().into_data(), t.dense.weight.val().into_data());
    }

    #[test]
    fn written_tensors_read_back_to_the_same_rows() {
        let device = Device::flex();
        let config = modernbert();
        let t = HeadTransformConfig::from_model(&config).with_seed(1).init(&device);
        let named = t.tensors("head.dense.", "head.norm.").unwrap();
        let names: Vec<&str> = named.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, ["head.dense.weight", "head.dense.bias", "head.norm.weight", "head.norm.bias"]);
        let bytes: Vec<(String, Vec<u8>, Vec<usize>)> = named.into_iter().map(|(n, v, s)| (n, v.iter().flat_map(|x| x.to_le_bytes()).collect(), s)).collect();
        let views: Vec<(String, safetensors::tensor::TensorView<'_>)> =
            bytes.iter().map(|(n, b, s)| (n.clone(), safetensors::tensor::TensorView::new(safetensors::Dtype::F32, s.clone(), b).unwrap())).collect();
        let file = safetensors::serialize(views, None).unwrap();
        let back = HeadTransform::read(&config, &file, "head.dense.", "head.norm.", &device).unwrap();
        let rows = Tensor::<2>::random([3, 64], burn::tensor::Distribution::Normal(0.0, 1.0), &device);
        let (a, b) = (t.forward(rows.clone()).into_data().try_to_vec::<f32>().unwrap(), back.forward(rows).into_data().try_to_vec::<f32>().unwrap());
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6));
        // A file without the LayerNorm is refused by its name.
        let empty = safetensors::serialize(Vec::<(String, safetensors::tensor::TensorView<'_>)>::new(), None).unwrap();
        let err = HeadTransform::read(&config, &empty, "head.dense.", "head.norm.", &device);
        assert!(matches!(err, Err(Error::MissingTensors(names)) if names.contains(&"head.norm.weight".to_string())));
    }

    #[test]
    fn only_a_family_whose_token_classes_have_one_gets_one_on_the_last_layers_tokens() {
        let device = Device::flex();
        let config = modernbert();
        let made = |c: &BertConfig, spec: FeatureSpec| HeadTransform::for_run(c, spec, None, 0, &device).unwrap().is_some();
        assert!(made(&config, FeatureSpec::tokens()) && made(&config, FeatureSpec::spans()));
        assert!(!made(&config, FeatureSpec { layers: FeatureLayers::SecondToLast, ..FeatureSpec::tokens() }));
        assert!(!made(&config, FeatureSpec::default()), "a text's head is the sequence head");
        for family in [Family::Bert, Family::Roberta, Family::DebertaV2] {
            assert!(!made(&Preset::Tiny.config(64).with_model_type(family), FeatureSpec::tokens()), "{family:?}");
        }
    }
}
