//! Every family and format against PyTorch `transformers`: the small random-weight models that
//! `scripts/make_test_models.py` writes to `tests/models/` (BERT with an MLM head, a cased BERT
//! with only `vocab.txt`, sharded safetensors, `pytorch_model.bin`, bf16, a classifier with
//! `id2label`, DistilBERT, RoBERTa), each read as a user's folder is: token ids equal to
//! `AutoTokenizer`'s, hidden states within 1e-4, fill-mask and class probabilities within 1e-4,
//! and weights saved back under the family's own names.
//!
//! The models need PyTorch to make, so these tests are `#[ignore]`d in a plain `cargo test`
//! (which says so); `cargo xtask test` makes the models and runs them with `--include-ignored`.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use bertbench_core::bert::checkpoint::{self, CheckpointFiles};
use bertbench_core::bert::folder::from_folder;
use bertbench_core::bert::model::{BertInput, ForwardOptions};
use bertbench_core::burn::prelude::*;
use bertbench_core::nn::read_f32;
use bertbench_core::tasks::{classification, pretraining};
use bertbench_core::tokenizer::Batch;
use serde_json::Value;

const TOLERANCE: f32 = 1e-4;

fn models_dir() -> PathBuf {
    std::env::var_os("BERTBENCH_TEST_MODELS").map(PathBuf::from).unwrap_or_else(|| common::repo().join("tests/models"))
}

/// The folder's files as a user's drop gives them: paths under the folder's name.
fn folder(name: &str) -> (CheckpointFiles, Value) {
    let dir = models_dir().join(name);
    assert!(dir.is_dir(), "{} is missing: run `python3 scripts/make_test_models.py {}`", dir.display(), models_dir().display());
    let files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "expected.json")
        .map(|p| (format!("{name}/{}", p.file_name().unwrap().to_string_lossy()), std::fs::read(&p).unwrap()))
        .collect();
    let expected = serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    (from_folder(files).unwrap_or_else(|e| panic!("{name}: {e}")), expected)
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn floats(v: &Value) -> Vec<f32> {
    match v {
        Value::Array(items) => items.iter().flat_map(floats).collect(),
        other => vec![other.as_f64().unwrap() as f32],
    }
}

fn close(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let worst = got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(worst <= TOLERANCE, "{what}: max error {worst} > {TOLERANCE}");
}

/// Ids and last hidden states of every test text, against `transformers`.
fn check_encoder(name: &str) {
    let device = Device::flex();
    let (files, expected) = folder(name);
    let original = weight_names(&files.weights);
    let loaded = checkpoint::load(files, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(loaded.config.model_type.model_type(), expected["family"], "{name}: family");
    assert_eq!(loaded.report.num_params as u64, expected["num_parameters"].as_u64().unwrap(), "{name}: parameters");
    for text in expected["texts"].as_array().unwrap() {
        let encoded = loaded.tokenizer.encode_text(text["text"].as_str().unwrap(), text["pair"].as_str()).unwrap();
        assert_eq!(encoded.ids(), ids(&text["input_ids"]), "{name}: ids of {}", text["text"]);
        let batch = Batch::from_encoded(std::slice::from_ref(&encoded), loaded.tokenizer.pad_id);
        let out = loaded.model.forward(BertInput::from_batch(&batch, &device), ForwardOptions::default());
        let got = pollster::block_on(read_f32(out.last_hidden_state)).unwrap();
        close(&format!("{name}: hidden states of {}", text["text"]), &got, &floats(&text["last_hidden_state"]));
    }
    // Saved back under the family's own names: every saved tensor is one the checkpoint had.
    let saved = weight_names(&checkpoint::save_weights(&loaded.model).unwrap());
    let prefix = loaded.config.model_type.prefix();
    let stripped: BTreeSet<String> = original.iter().map(|n| n.strip_prefix(prefix).unwrap_or(n).to_string()).collect();
    let strange: Vec<&String> = saved.iter().filter(|n| !stripped.contains(*n)).collect();
    assert!(strange.is_empty(), "{name}: saved names the checkpoint does not have: {strange:?}");
}

fn weight_names(bytes: &[u8]) -> BTreeSet<String> {
    safetensors::SafeTensors::deserialize(bytes).unwrap().names().into_iter().map(String::from).collect()
}

/// Top-5 fills at every mask, against `transformers`' probabilities.
fn check_fill_mask(name: &str) {
    let device = Device::flex();
    let (files, expected) = folder(name);
    let (model, tokenizer, _) = pretraining::load(files, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    for case in expected["fill_mask"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        assert_eq!(tokenizer.encode(text).unwrap().ids(), ids(&case["input_ids"]), "{name}: ids of {text}");
        let fills = pollster::block_on(pretraining::fill_mask(&model, &tokenizer, text, 5, &device)).unwrap();
        let masks = case["masks"].as_array().unwrap();
        assert_eq!(fills.len(), masks.len(), "{name}: masks in {text}");
        for (fill, want) in fills.iter().zip(masks) {
            assert_eq!(fill.position as u64, want["position"].as_u64().unwrap());
            let pieces: Vec<String> = ids(&want["ids"]).iter().map(|&i| tokenizer.id_to_piece(i).unwrap()).collect();
            let got_pieces: Vec<String> = fill.top.iter().map(|(p, _)| p.clone()).collect();
            assert_eq!(got_pieces, pieces, "{name}: top-5 of {text}");
            let probs: Vec<f32> = fill.top.iter().map(|(_, p)| *p).collect();
            close(&format!("{name}: probabilities of {text}"), &probs, &floats(&want["probs"]));
        }
    }
}

macro_rules! family_tests {
    ($($test:ident => $name:literal $(, $extra:ident)?;)*) => {$(
        #[test]
        #[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
        fn $test() {
            check_encoder($name);
            $( $extra($name); )?
        }
    )*};
}

family_tests! {
    bert_with_mlm_head_matches_transformers => "bert-mlm", check_fill_mask;
    cased_bert_with_only_vocab_txt_keeps_case => "bert-cased-vocab";
    sharded_safetensors_load_whole => "bert-sharded";
    pytorch_model_bin_loads => "bert-bin", check_fill_mask;
    bf16_weights_load => "bert-bf16";
    distilbert_matches_transformers => "distilbert", check_fill_mask;
    roberta_matches_transformers => "roberta", check_fill_mask;
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn sequence_classifier_with_id2label_predicts_as_transformers() {
    check_encoder("bert-classifier");
    let device = Device::flex();
    let (files, expected) = folder("bert-classifier");
    let loaded = classification::load_classifier(files, None, &device).unwrap();
    assert_eq!(loaded.meta.labels, ["negative", "neutral", "positive"]);
    for case in expected["classify"].as_array().unwrap() {
        let encoded = loaded.tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let probs = pollster::block_on(classification::predict(&loaded.model, &[encoded], loaded.tokenizer.pad_id, 1, &device)).unwrap();
        close(&format!("class probabilities of {}", case["text"]), &probs[0], &floats(&case["probs"]));
    }
}
