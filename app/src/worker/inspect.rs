//! The explorer's computations done for the page on the worker's threads: every layer's vectors
//! of many texts ([`States`](crate::protocol::States)), and the one-input views ([`Inspect`]: attention, input
//! parts, sentence vectors). All on the base model, which the page sent first and
//! which is the page's own model, so the numbers are the page's.

use bertbench_core::analysis::embed::EmbedOptions;
use bertbench_core::bert::attention::AttentionMask;
use bertbench_core::tokenizer::Encoded;

use super::*;
use crate::protocol::{Inspect, Inspecting, StatesShape, f32_bytes};

/// The base model without autodiff (nothing here is trained), which must be `model_id`, the
/// model the page encoded its input for.
async fn plain_base(model_id: &str) -> Result<LoadedModel, String> {
    let base = base_model().await.ok_or("the worker has no model to compute with")?;
    if base.id != model_id {
        return Err(format!("the worker holds {} now, not {model_id}: the page computes this itself", base.id));
    }
    Ok(LoadedModel { model: bertbench_core::burn::module::Module::valid(&base.bert.model), ..base.bert.clone() })
}

/// Every layer's vectors of `encoded`: one attachment per text, its layers one after the other.
pub(super) async fn states(model_id: &str, encoded: Vec<Encoded>) -> Result<(StatesShape, Vec<Vec<u8>>), String> {
    let bert = plain_base(model_id).await?;
    let states = bert.text_states(&encoded, &Device::flex()).await.map_err(|e| e.to_string())?;
    let (hidden, layers) = (bert.config.hidden_size, states.first().map_or(0, |s| s.layers.len()));
    let bytes = states.iter().map(|s| f32_bytes(&s.layers.concat())).collect();
    Ok((StatesShape { hidden, layers }, bytes))
}

/// `inspect`'s arrays, in the order [`Inspect`] documents.
pub(super) async fn inspect(inspect: Inspect) -> Result<((), Vec<Vec<u8>>), String> {
    let bert = plain_base(&inspect.model_id).await?;
    let device = Device::flex();
    let arrays: Vec<Vec<f32>> = match inspect.what {
        Inspecting::Attention { encoded, causal } => {
            let encoded = encoded.into();
            let mask = if causal { AttentionMask::Causal } else { AttentionMask::Bidirectional };
            vec![bert.attention_map(&encoded, mask, &device).await.map_err(|e| e.to_string())?.weights]
        }
        Inspecting::InputParts { encoded } => {
            let encoded = encoded.into();
            let p = bert.input_parts(&encoded, &device).await.map_err(|e| e.to_string())?;
            [p.token, p.segment, p.position, p.sum, p.normalized].iter().map(|rows| rows.concat()).collect()
        }
        Inspecting::Embed { texts, pooling, normalize } => {
            let options = EmbedOptions { pooling, normalize, ..Default::default() };
            bert.embed(&texts, options, &device).await.map_err(|e| e.to_string())?.vectors
        }
    };
    Ok(((), arrays.iter().map(|a| f32_bytes(a)).collect()))
}
