//! How much memory a run needs, checked before it starts: a WebAssembly tab cannot address more
//! than 4 GiB, and a run that outgrows it dies mid-step with nothing saved. Refusing up front
//! names the limit and what fits instead.

use crate::error::Error;

/// The most memory a wasm32 tab or worker can address.
pub const WASM_MEMORY: u64 = 4 << 30;

/// Bytes per parameter of a run that trains every weight: the f32 weights, their gradients,
/// AdamW's two moments and the checkpoint bytes (5 × 4), plus the autodiff graph's activations
/// and the allocator's high-water mark at the studio's batch 16 × 64 tokens. Calibrated with
/// `bench/memory.mjs` on BERT-base (docs/performance.md, "Big models").
const TRAINING_BYTES_PER_PARAM: u64 = 34;

/// Bytes per parameter of a run that only reads the encoder (head-only training, inference):
/// the weights and the checkpoint bytes.
const READING_BYTES_PER_PARAM: u64 = 2 * 4;

/// The share of [`WASM_MEMORY`] a run may plan for; the rest is the tokenizer, the data and
/// slack.
const PLANNED_SHARE: f64 = 0.95;

/// At least the bytes a run on `num_params` parameters holds: [`TRAINING_BYTES_PER_PARAM`] each
/// when `trains_encoder`, else [`READING_BYTES_PER_PARAM`].
pub fn memory_needed(num_params: u64, trains_encoder: bool) -> u64 {
    num_params.saturating_mul( if trains_encoder { TRAINING_BYTES_PER_PARAM } else { READING_BYTES_PER_PARAM })
}

/// Refuses a run whose [`memory_needed`] does not fit in `limit` bytes, saying how much it needs,
/// the limit, and what fits instead.
pub fn check_memory(num_params: u64, trains_encoder: bool, limit: u64) -> crate::Result<()> {
    let needed = memory_needed(num_params, trains_encoder);
    let room = (limit as f64 * PLANNED_SHARE) as u64;
    if needed <= room {
        return Ok(());
    }
    let gb = |b: u64| b as f64 / (1u64 << 30) as f64;
    let millions = num_params as f64 / 1e6;
    let instead = if trains_encoder && memory_needed(num_params, false) <= room {
        " Head-only training (a frozen encoder) needs the weights alone and fits."
    } else {
        " A smaller model fits."
    };
    let what = if trains_encoder { "weights, gradients, AdamW's two moments and activations" } else { "its weights" };
    Err(Error::Input(format!(
        "a {millions:.0} M-parameter model needs about {:.1} GB for {what}; this tab can address {:.0} GB.{instead}",
        gb(needed),
        gb(limit)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BERT_BASE: u64 = 109_482_240;
    const BERT_LARGE: u64 = 335_141_888;

    #[test]
    fn bert_base_fits_every_mode_and_bert_large_only_head_only() {
        assert!(check_memory(BERT_BASE, true, WASM_MEMORY).is_ok());
        assert!(check_memory(BERT_LARGE, false, WASM_MEMORY).is_ok());
        let err = check_memory(BERT_LARGE, true, WASM_MEMORY).unwrap_err().to_string();
        assert!(err.contains("335 M-parameter") && err.contains("10.6 GB") && err.contains("4 GB") && err.contains("Head-only"), "{err}");
    }

    #[test]
    fn a_model_too_big_to_read_says_so() {
        let err = check_memory(600_000_000, false, WASM_MEMORY).unwrap_err().to_string();
        assert!(err.contains("its weights") && err.contains("smaller model"), "{err}");
        // More parameters than a 32-bit usize counts: refused, not wrapped round to a small model.
        let huge = crate::bert::config::BertConfig::new().with_hidden_size(8192).with_num_hidden_layers(48).with_intermediate_size(32768).with_num_attention_heads(64);
        assert!(huge.num_params(true) > u32::MAX as u64);
        assert!(check_memory(huge.num_params(true), false, WASM_MEMORY).is_err());
    }
}
