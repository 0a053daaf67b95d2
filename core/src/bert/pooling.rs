//! From token vectors to one sentence vector.

use burn::prelude::*;

use crate::error::{Error, Result};
use crate::bert::model::BertModelOutput;

/// How a sentence vector is made from its token vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Pooling {
    /// The `[CLS]` token's vector.
    Cls,
    /// The `[CLS]` vector through Hugging Face's pooler (`tanh(dense(·))`, trained for
    /// next-sentence prediction); only for checkpoints that have one.
    Pooler,
    /// The mean over real tokens (`[CLS]` and `[SEP]` included, padding excluded), as
    /// sentence-transformers does for all-MiniLM-L6-v2.
    #[default]
    Mean,
}

impl Pooling {
    /// Pools a model output into one vector per row.
    ///
    /// # Shapes
    /// - `output.last_hidden_state`: `[batch, seq, hidden]`
    /// - `attention_mask`: `[batch, seq]`, 1 for real tokens
    /// - output: `[batch, hidden]`
    pub fn apply(self, output: &BertModelOutput, attention_mask: Tensor<2, Int>) -> Result<Tensor<2>> {
        match self {
            Pooling::Cls => Ok(cls_pool(output.last_hidden_state.clone())),
            Pooling::Mean => Ok(mean_pool(output.last_hidden_state.clone(), attention_mask)),
            Pooling::Pooler => output
                .pooler_output
                .clone()
                .ok_or_else(|| Error::Input("this checkpoint has no pooler; use [CLS] or mean pooling".into())),
        }
    }

    /// Short label for the page.
    pub fn label(self) -> &'static str {
        match self {
            Pooling::Cls => "[CLS]",
            Pooling::Pooler => "[CLS] + pooler",
            Pooling::Mean => "mean",
        }
    }
}

/// The first token's vector.
///
/// # Shapes
/// - `hidden`: `[batch, seq, hidden]`
/// - output: `[batch, hidden]`
pub fn cls_pool(hidden: Tensor<3>) -> Tensor<2> {
    let [batch, _, width] = hidden.dims();
    hidden.slice([0..batch, 0..1, 0..width]).reshape([batch, width])
}

/// The mean of the real tokens' vectors; padding contributes nothing.
///
/// # Shapes
/// - `hidden`: `[batch, seq, hidden]`
/// - `attention_mask`: `[batch, seq]`
/// - output: `[batch, hidden]`
pub fn mean_pool(hidden: Tensor<3>, attention_mask: Tensor<2, Int>) -> Tensor<2> {
    let [batch, seq, width] = hidden.dims();
    let weights = attention_mask.float().reshape([batch, seq, 1]);
    let summed = (hidden * weights.clone()).sum_dim(1).reshape([batch, width]);
    // A row of only padding cannot occur (every row has [CLS]); clamp anyway so it gives 0, not NaN.
    let counts = weights.sum_dim(1).reshape([batch, 1]).clamp_min(1.0);
    summed / counts
}

/// Scales each row to unit length.
///
/// # Shapes
/// - `x`: `[batch, hidden]`
/// - output: `[batch, hidden]`
pub fn l2_normalize(x: Tensor<2>) -> Tensor<2> {
    let norm = x.clone().square().sum_dim(1).sqrt().clamp_min(1e-12);
    x / norm
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    #[test]
    fn mean_excludes_padding_and_cls_takes_the_first() {
        let device = Device::flex();
        // Two rows of three tokens, width 2; row 1 has one padding token holding junk.
        let h = Tensor::<3>::from_data(
            TensorData::new(vec![1.0f32, 2., 3., 4., 5., 6., 10., 20., 30., 40., 99., 99.], [2, 3, 2]),
            &device,
        );
        let m = Tensor::<2, Int>::from_data(TensorData::new(vec![1i64, 1, 1, 1, 1, 0], [2, 3]), &device);
        let mean = mean_pool(h.clone(), m.clone()).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(mean, vec![3.0, 4.0, 20.0, 30.0]);
        let cls = cls_pool(h).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(cls, vec![1.0, 2.0, 10.0, 20.0]);
    }

    #[test]
    fn pooler_pooling_uses_the_pooler_and_needs_one() {
        use crate::bert::config::Preset;
        use crate::bert::model::{BertInput, BertModelConfig};
        use crate::tokenizer::Batch;
        let device = Device::flex();
        let batch = Batch::from_rows(&[vec![2, 7, 3]], &[vec![0; 3]], 0);
        let input = BertInput::from_batch(&batch, &device);
        let config = Preset::Tiny.config(50);
        let with = BertModelConfig::new(config.clone()).init(&device);
        let out = with.forward(input.clone(), Default::default());
        let pooled = Pooling::Pooler.apply(&out, input.attention_mask.clone()).unwrap();
        let cls = Pooling::Cls.apply(&out, input.attention_mask.clone()).unwrap();
        let pooled = pooled.into_data().try_to_vec::<f32>().unwrap();
        assert!(pooled.iter().all(|x| x.abs() < 1.0), "tanh output");
        assert_ne!(pooled, cls.into_data().try_to_vec::<f32>().unwrap());

        let without = BertModelConfig::new(config).with_with_pooler(false).init(&device);
        let out = without.forward(input.clone(), Default::default());
        let err = Pooling::Pooler.apply(&out, input.attention_mask).unwrap_err();
        assert!(err.to_string().contains("no pooler"), "{err}");
    }

    #[test]
    fn normalised_rows_have_unit_length() {
        let device = Device::flex();
        let x = Tensor::<2>::from_data(TensorData::new(vec![3.0f32, 4.0, 0.0, 0.0], [2, 2]), &device);
        let y = l2_normalize(x).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(y, vec![0.6, 0.8, 0.0, 0.0]);
    }
}
