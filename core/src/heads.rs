//! Task heads on top of the encoder.

use burn::module::Param;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;
use burn::tensor::activation::{gelu_approximate, relu};

use crate::activation::gelu;

use crate::attention::init_linear;
use crate::linear::{linear, matmul};
use crate::dropout;
use crate::layer_norm::LayerNorm;
use crate::config::HiddenAct;

/// Configuration of [`ClassificationHead`].
#[derive(Config, Debug)]
pub struct ClassificationHeadConfig {
    /// Width of the pooled sentence vector.
    pub hidden_size: usize,
    /// Number of labels.
    pub num_labels: usize,
    /// Dropout before the dense layer (BERT paper: 0.1).
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Standard deviation of the normal initialiser.
    #[config(default = 0.02)]
    pub initializer_range: f64,
}

impl ClassificationHeadConfig {
    /// Creates the head with freshly initialised weights.
    pub fn init(&self, device: &Device) -> ClassificationHead {
        ClassificationHead {
            dropout: DropoutConfig::new(self.dropout).init(),
            classifier: init_linear(self.hidden_size, self.num_labels, self.initializer_range, device),
        }
    }
}

/// Dropout then a dense layer to one logit per label (`classifier` in a Hugging Face
/// `BertForSequenceClassification` checkpoint).
#[derive(Module, Debug)]
pub struct ClassificationHead {
    /// Dropout on the pooled vector.
    pub dropout: Dropout,
    /// `hidden → num_labels`.
    pub classifier: Linear,
}

impl ClassificationHead {
    /// # Shapes
    /// - `pooled`: `[batch, hidden]`
    /// - output: logits `[batch, num_labels]`
    pub fn forward(&self, pooled: Tensor<2>) -> Tensor<2> {
        linear(&self.classifier, dropout::forward(&self.dropout, pooled))
    }

    /// Mean cross-entropy of `logits` against integer `labels`.
    ///
    /// # Shapes
    /// - `logits`: `[batch, num_labels]`; `labels`: `[batch]`
    /// - output: `[1]`
    pub fn loss(logits: Tensor<2>, labels: Tensor<1, Int>) -> Tensor<1> {
        let device = logits.device();
        CrossEntropyLossConfig::new().init(&device).forward(logits, labels)
    }
}

/// Configuration of [`MlmHead`].
#[derive(Config, Debug)]
pub struct MlmHeadConfig {
    /// Width of the hidden states.
    pub hidden_size: usize,
    /// Number of WordPiece tokens (the decoder's output width).
    pub vocab_size: usize,
    /// The transform's activation (the encoder's `hidden_act`).
    #[config(default = "HiddenAct::Gelu")]
    pub hidden_act: HiddenAct,
    /// LayerNorm epsilon.
    #[config(default = 1e-12)]
    pub layer_norm_eps: f64,
    /// Standard deviation of the normal initialiser.
    #[config(default = 0.02)]
    pub initializer_range: f64,
}

impl MlmHeadConfig {
    /// Creates the head with freshly initialised weights (bias zero, as BERT starts).
    pub fn init(&self, device: &Device) -> MlmHead {
        MlmHead {
            transform: MlmTransform {
                dense: init_linear(self.hidden_size, self.hidden_size, self.initializer_range, device),
                layer_norm: LayerNorm::new(self.hidden_size, self.layer_norm_eps, device),
                act: self.hidden_act,
            },
            bias: Param::from_tensor(Tensor::zeros([self.vocab_size], device)),
        }
    }
}

/// `dense → activation → LayerNorm` (`cls.predictions.transform` in the checkpoint).
#[derive(Module, Debug)]
pub struct MlmTransform {
    /// `hidden → hidden`.
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
    /// - `word_embeddings`: `[vocab, hidden]` (the encoder's embedding table)
    /// - output: logits `[picked, vocab]`
    pub fn forward(&self, hidden: Tensor<2>, word_embeddings: Tensor<2>) -> Tensor<2> {
        let x = linear(&self.transform.dense, hidden);
        let x = match self.transform.act {
            HiddenAct::Gelu => gelu(x),
            HiddenAct::GeluApproximate => gelu_approximate(x),
            HiddenAct::Relu => relu(x),
        };
        let x = self.transform.layer_norm.forward(x);
        matmul(x, word_embeddings.transpose()) + self.bias.val().unsqueeze::<2>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    #[test]
    fn loss_is_log_k_for_uniform_logits() {
        let device = Device::flex();
        let logits = Tensor::<2>::zeros([4, 3], &device);
        let labels = Tensor::<1, Int>::from_data(TensorData::new(vec![0i64, 1, 2, 0], [4]), &device);
        let loss = ClassificationHead::loss(logits, labels).into_scalar::<f32>();
        assert!((loss - 3f32.ln()).abs() < 1e-6, "{loss}");
    }

    #[test]
    fn head_maps_hidden_to_labels() {
        let device = Device::flex();
        let head = ClassificationHeadConfig::new(16, 5).init(&device);
        assert_eq!(head.forward(Tensor::zeros([2, 16], &device)).dims(), [2, 5]);
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
        let t = head.transform.layer_norm.forward(gelu(head.transform.dense.forward(hidden)));
        let expected = t.matmul(table.transpose());
        let diff = (logits - expected).abs().max().into_scalar::<f32>();
        assert!(diff < 1e-5, "{diff}");
    }
}
