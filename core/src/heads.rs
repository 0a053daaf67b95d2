//! Task heads on top of the encoder.

use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Dropout, DropoutConfig, Linear};
use burn::prelude::*;

use crate::attention::linear;

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
            classifier: linear(self.hidden_size, self.num_labels, self.initializer_range, device),
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
        self.classifier.forward(self.dropout.forward(pooled))
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
}
