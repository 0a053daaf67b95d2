//! DeBERTa-v2's convolution after the first layer (`encoder.conv`, He et al. 2021, section 5.3:
//! the xlarge and xxlarge models). A 1-D convolution over neighbouring tokens of the *embeddings*
//! (the first layer's input), padded to keep the sequence's length, is masked at padding,
//! activated (`conv_act`, tanh by default), added to the first layer's output and normalised:
//! `LayerNorm(layer₀ + act(conv(embeddings)))`, zero at padding. As `transformers`' `ConvLayer`,
//! whose input is zero at padding (`DebertaV2Embeddings` multiplies by the mask): here the
//! convolution's input is masked, so a real token beside padding reads zeros there too.

use burn::nn::conv::{Conv1d, Conv1dConfig};
use burn::nn::{Dropout, DropoutConfig, PaddingConfig1d};
use burn::prelude::*;

use crate::bert::config::{BertConfig, HiddenAct};
use crate::nn::dropout;
use crate::nn::layer_norm::LayerNorm;

/// The convolution and its LayerNorm (`encoder.conv.conv`, `encoder.conv.LayerNorm`).
#[derive(Module, Debug)]
pub struct DebertaConvLayer {
    /// `[hidden, hidden / groups, kernel]`, padded `(kernel − 1) / 2` each side.
    pub conv: Conv1d,
    pub layer_norm: LayerNorm,
    pub dropout: Dropout,
    #[module(skip)]
    act: HiddenAct,
}

impl DebertaConvLayer {
    /// A fresh convolution of `config`'s DeBERTa, where it has one (`conv_kernel_size` > 0).
    pub fn init(config: &BertConfig, device: &Device) -> Option<Self> {
        let (kernel, groups, act) = config.convolution()?;
        let h = config.hidden_size;
        let pad = (kernel - 1) / 2;
        Some(Self {
            conv: Conv1dConfig::new(h, h, kernel).with_groups(groups).with_padding(PaddingConfig1d::Explicit(pad, pad)).init(device),
            layer_norm: LayerNorm::new(h, config.layer_norm_eps, device),
            dropout: DropoutConfig::new(config.hidden_dropout_prob).init(),
            act,
        })
    }

    /// # Shapes
    /// - `embeddings`: `[batch, seq, hidden]`, the first layer's input
    /// - `layer`: `[batch, seq, hidden]`, the first layer's output
    /// - `real`: `[batch, seq]`, 1 for real tokens and 0 for padding
    /// - output: `[batch, seq, hidden]`
    pub fn forward(&self, embeddings: Tensor<3>, layer: Tensor<3>, real: Tensor<2>) -> Tensor<3> {
        let [batch, seq, _] = embeddings.dims();
        let real = real.reshape([batch, seq, 1]);
        let embeddings = embeddings * real.clone();
        let out = self.conv.forward(embeddings.swap_dims(1, 2)).swap_dims(1, 2) * real.clone();
        let out = self.act.apply(dropout::forward(&self.dropout, out));
        self.layer_norm.forward(layer + out) * real
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bert::config::Preset;
    use crate::bert::family::Family;
    use burn::tensor::{Distribution, TensorData};

    fn config(kernel: usize, groups: usize) -> BertConfig {
        let mut c = Preset::Tiny.config(50).with_model_type(Family::DebertaV2).without_dropout();
        c.conv_kernel_size = Some(kernel);
        c.conv_groups = Some(groups);
        c
    }

    /// Each output token mixes its own and its neighbours' embeddings only, within half the
    /// kernel either side; grouped channels see only their own group's inputs.
    #[test]
    fn a_token_reads_its_neighbours_within_the_kernel_and_its_own_group() {
        let device = Device::flex();
        let conv = DebertaConvLayer::init(&config(3, 2), &device).unwrap();
        assert_eq!(conv.conv.weight.dims(), [128, 64, 3]);
        let x = Tensor::<3>::random([1, 6, 128], Distribution::Normal(0.0, 1.0), &device);
        let out = |x: Tensor<3>| conv.conv.forward(x.swap_dims(1, 2)).swap_dims(1, 2);
        let base = out(x.clone());
        assert_eq!(base.dims(), [1, 6, 128], "the sequence keeps its length");
        // Change token 0's second half of the channels (group 1's inputs).
        let bump = Tensor::<3>::zeros([1, 6, 128], &device).slice_assign([0..1, 0..1, 64..128], Tensor::ones([1, 1, 64], &device));
        let diff = (out(x + bump) - base).abs().sum_dim(2).reshape([6]).into_data().try_to_vec::<f32>().unwrap();
        assert!(diff[0] > 0.0 && diff[1] > 0.0, "tokens 0 and 1 see token 0: {diff:?}");
        assert!(diff[2..].iter().all(|d| *d == 0.0), "tokens 2.. are beyond the kernel: {diff:?}");
    }

    /// At padding the output is zero, and the real tokens' outputs do not depend on it.
    #[test]
    fn padding_is_zero_and_unread() {
        let device = Device::flex();
        let conv = DebertaConvLayer::init(&config(3, 1), &device).unwrap();
        let x = Tensor::<3>::random([1, 4, 128], Distribution::Normal(0.0, 1.0), &device);
        let layer = Tensor::<3>::random([1, 4, 128], Distribution::Normal(0.0, 1.0), &device);
        let real = Tensor::<2>::from_data(TensorData::new(vec![1.0f32, 1.0, 1.0, 0.0], [1, 4]), &device);
        let out = conv.forward(x.clone(), layer.clone(), real.clone()).into_data().try_to_vec::<f32>().unwrap();
        assert!(out[3 * 128..].iter().all(|v| *v == 0.0));
        let other_pad = x.slice_assign([0..1, 3..4, 0..128], Tensor::ones([1, 1, 128], &device) * 5.0);
        let again = conv.forward(other_pad, layer, real).into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(out, again, "token 2 reads zeros at the padding beside it");
        assert!(DebertaConvLayer::init(&Preset::Tiny.config(50).with_model_type(Family::DebertaV2), &device).is_none());
    }
}
