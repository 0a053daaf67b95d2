//! What the unit tests share: tiny random models and a toy classification task, so no test
//! builds its own copy. Compiled for tests only.

use burn::prelude::*;

use crate::bert::checkpoint::{CheckpointFiles, LoadedModel};
use crate::bert::config::{BertConfig, Preset};
use crate::bert::model::BertModelConfig;
use crate::rng::Rng;
use crate::tokenizer::{Encoded, Token};
use crate::train::LabeledText;

/// Held by every test that initialises or trains a model: burn's device generator (weight
/// initialisation, dropout) is shared by all the threads the tests run on, so one test's seeding
/// or draws would change another's run.
static DEVICE_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes the device generator for the rest of a test.
pub fn device_rng() -> std::sync::MutexGuard<'static, ()> {
    DEVICE_RNG.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// BERT-tiny's shape over a vocabulary of `vocab` pieces and 16 positions.
pub fn tiny_config(vocab: usize) -> BertConfig {
    Preset::Tiny.config(vocab).with_max_position_embeddings(16)
}

/// `config` as a ModernBERT: a global then a local layer (a window of 2), no segments, no
/// LayerNorm biases.
pub fn as_modernbert(config: BertConfig) -> BertConfig {
    use crate::bert::config::AttentionKind::{FullAttention, SlidingAttention};
    config
        .with_model_type(crate::bert::family::Family::ModernBert)
        .with_type_vocab_size(0)
        .with_layer_types(Some(vec![FullAttention, SlidingAttention]))
        .with_local_attention(Some(2))
        .with_norm_bias(Some(false))
}

/// `config` as a DeBERTa-v3: disentangled attention both ways over 4 log buckets reaching 4,
/// shared position projections, a normalised relative table, no absolute positions or segments.
pub fn as_deberta_v3(config: BertConfig) -> BertConfig {
    use crate::bert::config::PositionAttention::{C2p, P2c};
    config
        .with_model_type(crate::bert::family::Family::DebertaV2)
        .with_type_vocab_size(0)
        .with_absolute_positions(Some(false))
        .with_position_buckets(Some(4))
        .with_max_relative_positions(Some(4))
        .with_pos_att_type(Some(vec![C2p, P2c]))
        .with_share_att_key(Some(true))
        .with_norm_rel_ebd(Some("layer_norm".into()))
}

/// A tiny random BERT with a word-level vocabulary, loaded the way the app loads one.
pub fn tiny_bert() -> (LoadedModel, Device) {
    let device = Device::flex();
    let words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "river", "bank", "loan", "a", "##s", "money", "."];
    let config = Preset::Tiny.config(words.len()).without_dropout();
    let model = BertModelConfig::new(config.clone()).init(&device);
    let files = CheckpointFiles {
        config_json: config.to_hf_json(),
        weights: crate::bert::checkpoint::save_weights(&model).unwrap(),
        tokenizer_json: None,
        vocab_txt: Some(words.join("\n").into_bytes()),
    };
    (crate::bert::checkpoint::load(files, &device).unwrap(), device)
}

/// A SentencePiece Unigram `tokenizer.json` as XLM-RoBERTa's and CamemBERT's are written: the
/// `<s> <pad> </s> <unk> <mask>` specials, a lone `Metaspace` pre-tokenizer (`▁` before every
/// word), `<s> A </s></s> B </s>`. Its pieces cover "Le café près de la rivière" and "Die
/// Straße" (accents and a word cut into several pieces); anything else falls to characters or
/// `<unk>`.
pub fn unigram_tokenizer_json() -> Vec<u8> {
    let special = |id: u32, content: &str| serde_json::json!({"id": id, "content": content, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true});
    let mut vocab: Vec<(String, f64)> = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"].iter().map(|s| (s.to_string(), 0.0)).collect();
    for (piece, score) in [("▁Le", -2.0), ("▁café", -3.0), ("▁pr", -4.0), ("ès", -4.0), ("▁de", -2.0), ("▁la", -2.0), ("▁", -3.0), ("ri", -4.0), ("vi", -4.0), ("ère", -4.0), ("▁Die", -3.0), ("▁Stra", -4.0), ("ße", -4.0)] {
        vocab.push((piece.into(), score));
    }
    for c in "LecafépèsdlrivèDSta".chars() {
        vocab.push((c.to_string(), -8.0));
    }
    let template = |pair: bool| {
        let (s, e) = (serde_json::json!({"SpecialToken": {"id": "<s>", "type_id": 0}}), serde_json::json!({"SpecialToken": {"id": "</s>", "type_id": 0}}));
        let seq = |id: &str| serde_json::json!({"Sequence": {"id": id, "type_id": 0}});
        if pair { serde_json::json!([s, seq("A"), e, e, seq("B"), e]) } else { serde_json::json!([s, seq("A"), e]) }
    };
    let metaspace = serde_json::json!({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true});
    serde_json::to_vec(&serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null,
        "added_tokens": [special(0, "<s>"), special(1, "<pad>"), special(2, "</s>"), special(3, "<unk>"), special(4, "<mask>")],
        "normalizer": null,
        "pre_tokenizer": metaspace,
        "post_processor": {"type": "TemplateProcessing", "single": template(false), "pair": template(true),
            "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}, "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": false},
    }))
    .unwrap()
}

/// A separable toy task: label 1 iff the sentence contains token 7 ("good"), else it contains
/// token 8 ("bad"); the other tokens are noise.
pub fn toy(n: usize, seed: u64) -> Vec<LabeledText> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let label = i % 2;
            let mut ids = vec![2u32];
            let len = 3 + rng.below(6);
            let at = rng.below(len);
            for j in 0..len {
                ids.push(if j == at { 7 + (1 - label as u32) } else { 10 + rng.below(50) as u32 });
            }
            ids.push(3);
            let tokens = ids
                .iter()
                .map(|&id| Token { piece: format!("t{id}"), id, type_id: 0, offsets: (0, 0), special: id < 5 })
                .collect();
            LabeledText::sentence(Encoded { tokens, truncated_from: None }, label)
        })
        .collect()
}
