//! The building blocks below the model: dense layers and their matrix products per backend,
//! GELU, LayerNorm, attention's masked softmax and dropout. Each is a burn op with its own CPU
//! kernel (wasm SIMD in the browser) and, where burn's is unfit, a GPU kernel. Nothing here
//! knows BERT, tasks or training; the CPU kernels share [`crate::cpu`].

pub mod activation;
pub mod dropout;
pub mod layer_norm;
pub mod linear;
pub mod masked_softmax;

use burn::prelude::*;

use crate::error::{Error, Result};

/// Reads a float tensor back to the host, row-major.
pub async fn read_f32<const D: usize>(tensor: Tensor<D>) -> Result<Vec<f32>> {
    let data = tensor
        .into_data_async()
        .await
        .map_err(|e| Error::Device(format!("{e:?}")))?;
    data.try_to_vec::<f32>().map_err(|e| Error::Device(format!("{e:?}")))
}
