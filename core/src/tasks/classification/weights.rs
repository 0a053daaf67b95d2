//! A head's weights to and from safetensors bytes: the readers and writers the export and
//! every task's [`HeadClass`](super::HeadClass) share.

use burn::nn::{DropoutConfig, Linear};
use burn::prelude::*;
use burn::tensor::TensorData;
use safetensors::{Dtype, SafeTensors};

use super::{ClassificationHead, HeadTransform};
use crate::bert::config::BertConfig;
use crate::bert::model::BertPooler;
use crate::error::Error;

/// Whether the safetensors `bytes` hold a tensor called `name`.
pub(crate) fn has_tensor(bytes: &[u8], name: &str) -> bool {
    SafeTensors::deserialize(bytes).is_ok_and(|st| st.names().iter().any(|n| *n == name))
}

/// A linear layer's weight and bias as PyTorch keeps them, and the weight's `[out, in]` shape.
pub(crate) fn linear_tensors(linear: &Linear) -> crate::Result<(Vec<f32>, Vec<f32>, [usize; 2])> {
    let weight = &linear.weight.val();
    let [width, labels] = weight.dims();
    // burn stores [in, out]; PyTorch [out, in].
    let weight = weight.clone().transpose().into_data().try_to_vec::<f32>().map_err(|e| Error::Device(format!("{e:?}")))?;
    let bias = match &linear.bias {
        Some(b) => b.val().into_data().try_to_vec::<f32>().map_err(|e| Error::Device(format!("{e:?}")))?,
        None => vec![0.0; labels],
    };
    Ok((weight, bias, [labels, width]))
}

/// A sequence head with a LayerNorm (ModernBERT's `head`: `dense`, the heads' activation,
/// `norm`) from a checkpoint's head tensors, as a pooler of the first token or of the mean, as
/// `classifier_pooling` says.
pub(crate) fn read_normed_pooler(config: &BertConfig, bytes: &[u8], dense: &str, norm: &str, device: &Device) -> crate::Result<BertPooler> {
    Ok(HeadTransform::read(config, bytes, dense, norm, device)?.into_pooler(config))
}

/// A linear head from a safetensors file: `names` are its weight (`[labels, width]`, PyTorch
/// layout) and bias.
pub(crate) fn read_head(bytes: &[u8], file: &str, names: [&str; 2], device: &Device) -> crate::Result<ClassificationHead> {
    if bytes.is_empty() {
        // A checkpoint without head tensors.
        return Err(Error::MissingTensors(names.iter().map(|n| n.to_string()).collect()));
    }
    let st = SafeTensors::deserialize(bytes).map_err(|e| Error::Weights(format!("{file}: {e}")))?;
    let read = |name: &str| -> crate::Result<(Vec<f32>, Vec<usize>)> {
        let view = st.tensor(name).map_err(|_| Error::MissingTensors(vec![name.to_string()]))?;
        Ok((widen(view.dtype(), view.data()).ok_or_else(|| Error::Weights(format!("{file}: {name} is {:?}; expected a float type", view.dtype())))?, view.shape().to_vec()))
    };
    let [weight_name, bias_name] = names;
    let (weight, wshape) = read(weight_name)?;
    let (bias, bshape) = read(bias_name)?;
    let labels = wshape.first().copied().unwrap_or(0);
    if wshape.len() != 2 || bshape != [labels] || labels < 1 {
        return Err(Error::ShapeMismatch(vec![format!(
            "{weight_name} is {wshape:?} and {bias_name} {bshape:?}; expected [labels, width] and [labels] with at least 1 label"
        )]));
    }
    let width = wshape[1];
    // PyTorch [out, in] → burn [in, out].
    let weight = Tensor::<2>::from_data(TensorData::new(weight, [labels, width]), device).transpose();
    let bias = Tensor::<1>::from_data(TensorData::new(bias, [labels]), device);
    Ok(ClassificationHead {
        transform: None,
        dropout: DropoutConfig::new(0.1).init(),
        classifier: Linear { weight: burn::module::Param::from_tensor(weight), bias: Some(burn::module::Param::from_tensor(bias)) },
    })
}

/// Little-endian `f32` bytes, as safetensors stores them.
pub(crate) fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A safetensors file of `(name, f32 bytes, shape)` tensors, marked as PyTorch's (`format: pt`).
pub(crate) fn serialize(tensors: Vec<(String, Vec<u8>, Vec<usize>)>) -> crate::Result<Vec<u8>> {
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .map(|(name, data, shape)| {
            safetensors::tensor::TensorView::new(Dtype::F32, shape.clone(), data)
                .map(|v| (name.clone(), v))
                .map_err(|e| Error::Weights(e.to_string()))
        })
        .collect::<crate::Result<_>>()?;
    let meta = std::collections::BTreeMap::from([("format".to_string(), "pt".to_string())]).into_iter().collect();
    safetensors::serialize(views, Some(meta)).map_err(|e| Error::Weights(e.to_string()))
}

/// Little-endian f32, f16 or bf16 bytes as f32 (a Hub classifier may be saved in half precision).
fn widen(dtype: Dtype, data: &[u8]) -> Option<Vec<f32>> {
    let halves = |f: fn(u16) -> f32| data.chunks_exact(2).map(|b| f(u16::from_le_bytes([b[0], b[1]]))).collect();
    match dtype {
        Dtype::F32 => Some(data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()),
        Dtype::F16 => Some(halves(|h| burn::tensor::f16::from_bits(h).to_f32())),
        Dtype::BF16 => Some(halves(|h| burn::tensor::bf16::from_bits(h).to_f32())),
        _ => None,
    }
}
