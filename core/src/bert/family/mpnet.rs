//! MPNet (Song et al. 2020): BERT's blocks under other names (`attention.attn.{q,k,v,o}`), with
//! RoBERTa's positions (after the padding id, which `transformers` fixes at 1) and a relative
//! position bias shared by every layer's attention (`encoder.relative_attention_bias`, 32
//! buckets up to a distance of 128). WordPiece pieces with RoBERTa's specials (`<s>`, `</s>`,
//! `<mask>`), no segments. Its MLM head and sequence-classification head are RoBERTa's; it has no
//! pretraining class with a sentence-pair head.

use super::*;

pub(super) const FACTS: FamilyFacts = FamilyFacts {
    model_type: "mpnet",
    display_name: "MPNet",
    layout: Family::MpNet,
    prefix: "mpnet.",
    base_architecture: "MPNetModel",
    mlm_architecture: "MPNetForMaskedLM",
    segments: false,
    load_renames: &[
        (r"\.attention\.attn\.q\.", ".attention.self_attn.query."),
        (r"\.attention\.attn\.k\.", ".attention.self_attn.key."),
        (r"\.attention\.attn\.v\.", ".attention.self_attn.value."),
        (r"\.attention\.attn\.o\.", ".attention.output.dense."),
        (r"\.attention\.(LayerNorm|layer_norm)\.", ".attention.output.layer_norm."),
        (r"\.LayerNorm\.", ".layer_norm."),
    ],
    save_renames: &[
        (r"\.attention\.self_attn\.query\.", ".attention.attn.q."),
        (r"\.attention\.self_attn\.key\.", ".attention.attn.k."),
        (r"\.attention\.self_attn\.value\.", ".attention.attn.v."),
        (r"\.attention\.output\.dense\.", ".attention.attn.o."),
        (r"\.attention\.output\.layer_norm\.", ".attention.LayerNorm."),
        (r"\.layer_norm\.", ".LayerNorm."),
    ],
    relative_attention: Some(RelativeBuckets::MPNET),
    wordpiece_tokenizer: true,
    read_config,
    write_config,
    // Positions after the padding id, the pooler, `MPNetClassificationHead` (out_proj(tanh(
    // dense(<s>)))), the MLM head `lm_head` with exact GELU, no sentence-pair head: RoBERTa's.
    ..super::roberta::FACTS
};

/// `MPNetConfig`'s defaults where they differ from BERT's, for the keys a `config.json` leaves
/// out.
fn defaults() -> Json {
    serde_json::json!({ "vocab_size": 30527, "pad_token_id": 1, "relative_attention_num_buckets": 32 })
        .as_object()
        .cloned()
        .expect("an object")
}

/// BERT's keys (MPNet has no segments), `MPNetConfig`'s defaults for those left out; refused
/// where the padding id is not 1, which `transformers`' MPNet assumes whatever the config says.
fn read_config(config: Json) -> Result<Json, String> {
    let mut out = defaults();
    out.extend(config.into_iter().filter(|(_, v)| !v.is_null()));
    if let Some(pad) = out.get("pad_token_id").and_then(serde_json::Value::as_u64).filter(|&pad| pad != 1) {
        return Err(format!(
            "this MPNet has pad_token_id {pad}; MPNet's positions count from after padding id 1 whatever the config says, so its outputs would not be MPNet's"
        ));
    }
    out.insert("type_vocab_size".into(), 0.into());
    Ok(out)
}

/// MPNet's keys: no segments, no position type.
fn write_config(mut config: Json) -> Json {
    config.remove("type_vocab_size");
    config.remove("position_embedding_type");
    config
}
