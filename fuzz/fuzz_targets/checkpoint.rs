//! Checkpoint files of any bytes: `config.json`, `model.safetensors` (for a tiny model's valid
//! config), `tokenizer.json` and `vocab.txt`, each through the loader the page uses. Errors are
//! fine; a panic is a bug.
#![no_main]

use bertbench_core::burn::prelude::Device;
use bertbench_core::bert::checkpoint::load_model;
use bertbench_core::bert::config::{BertConfig, Preset};
use bertbench_core::tokenizer::BertTokenizer;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, bytes)) = input.split_first() else { return };
    match pick % 4 {
        0 => {
            let _ = BertConfig::from_json_bytes(bytes);
        }
        1 => {
            let config = Preset::Tiny.config(64).with_max_position_embeddings(16);
            let _ = load_model(&config, bytes.to_vec(), &Device::flex());
        }
        2 => {
            if let Ok(tok) = BertTokenizer::from_tokenizer_json(bytes, 32) {
                let _ = tok.encode("a short text, with café and 日本");
            }
        }
        _ => {
            if let Ok(tok) = BertTokenizer::from_vocab_txt(bytes, true, 32) {
                let _ = tok.encode("a short text, with café and 日本");
            }
        }
    }
});
