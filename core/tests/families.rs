//! Every family and format against PyTorch `transformers`: the small random-weight models that
//! `scripts/make_test_models.py` writes to `tests/models/` (BERT with an MLM head, a cased BERT
//! with only `vocab.txt`, sharded safetensors, `pytorch_model.bin`, bf16, a classifier with
//! `id2label`, DistilBERT, RoBERTa, ELECTRA (and ELECTRA-small's projected embeddings),
//! XLM-RoBERTa, CamemBERT and ALBERT (one shared layer) with SentencePiece Unigram tokenizers), each read as a user's folder is: token ids and character offsets equal
//! to `AutoTokenizer`'s, hidden states within 1e-4, fill-mask and class probabilities within
//! 1e-4, and weights saved back under the family's own names.
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
    common::test_models_dir()
}

/// The folder's files as a user's drop gives them: paths under the folder's name.
fn folder(name: &str) -> (CheckpointFiles, Value) {
    let dir = models_dir().join(name);
    let files = common::test_model_drop(name);
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
        // Character offsets as transformers' `offset_mapping` (what question answering and
        // tagging read), `(0, 0)` for specials.
        let offsets: Vec<(usize, usize)> = encoded.tokens.iter().map(|t| t.offsets).collect();
        let want: Vec<(usize, usize)> =
            text["offsets"].as_array().unwrap().iter().map(|p| (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize)).collect();
        assert_eq!(offsets, want, "{name}: offsets of {}", text["text"]);
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
    a_token_classifier_opens_as_a_tagger_with_transformers_probabilities => "bert-ner", check_token_classifier;
    a_question_answering_model_opens_with_transformers_start_and_end_logits => "bert-qa", check_question_answering;
    electra_discriminator_matches_transformers => "electra";
    electra_generator_fills_masks_as_transformers => "electra-generator", check_fill_mask;
    xlm_roberta_with_a_unigram_tokenizer_matches_transformers => "xlm-roberta", check_fill_mask;
    electra_small_projects_its_embeddings_as_transformers => "electra-small";
    electra_small_generator_fills_masks_with_its_narrow_head => "electra-small-generator", check_fill_mask;
    albert_with_one_shared_layer_matches_transformers => "albert", check_albert_pretraining;
}

/// `AlbertForPreTraining`: its MLM head fills masks, and its sentence-order head gives each
/// pair `transformers`' probabilities.
fn check_albert_pretraining(name: &str) {
    check_fill_mask(name);
    let device = Device::flex();
    let (files, expected) = folder(name);
    let (model, tokenizer, _) = pretraining::load(files, &device).unwrap();
    assert!(model.cls.seq_relationship.is_some(), "{name}: the sentence-order head was not read");
    for case in expected["sentence_order"].as_array().unwrap() {
        let encoded = tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let batch = Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
        let picked = Tensor::<1, Int>::from_data(bertbench_core::burn::tensor::TensorData::new(vec![0i64], [1]), &device);
        let (_, pair) = model.forward(BertInput::from_batch(&batch, &device), picked);
        let logits = pair.unwrap().into_data().try_to_vec::<f32>().unwrap();
        close(&format!("{name}: sentence order of {}", case["text"]), &bertbench_core::tasks::metrics::softmax(&logits), &floats(&case["probs"]));
    }
}

/// A `BertForTokenClassification` (a NER model) is named as one and never read as a text
/// classifier, though its `classifier.*` has a text classifier's shape.
fn check_token_classifier(name: &str) {
    use bertbench_core::bert::model::BertInput;
    use bertbench_core::tasks::classification::Level;
    use bertbench_core::tokenizer::Batch;
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = checkpoint::load(files.clone(), &device).unwrap();
    assert_eq!(loaded.report.heads, [checkpoint::Head::TokenClassifier]);
    let tagger = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(tagger.meta.labels, ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]);
    assert_eq!(tagger.meta.spec.level, Level::Token);
    for case in expected["classify"].as_array().unwrap() {
        let encoded = tagger.tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let batch = Batch::from_encoded(&[encoded], tagger.tokenizer.pad_id);
        let logits = tagger.model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap();
        let values = logits.into_data().try_to_vec::<f32>().unwrap();
        let ours: Vec<f32> = values.chunks(5).flat_map(bertbench_core::tasks::metrics::softmax).collect();
        let theirs: Vec<f32> = case["probs"].as_array().unwrap().iter().flat_map(floats).collect();
        close(&format!("{name}: tag probabilities of {}", case["text"]), &ours, &theirs);
    }
}

/// A `BertForQuestionAnswering` folder from the Hub opens as a question-answering model: its
/// start and end logits equal `transformers'` on every token, its windows' tokens
/// `AutoTokenizer`'s.
fn check_question_answering(name: &str) {
    use bertbench_core::bert::model::BertInput;
    use bertbench_core::tasks::classification::Level;
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = checkpoint::load(files.clone(), &device).unwrap();
    assert_eq!(loaded.report.heads, [checkpoint::Head::QuestionAnswering]);
    let qa = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(qa.meta.spec.level, Level::Span);
    assert_eq!(qa.meta.labels, bertbench_core::tasks::qa::LABELS);
    for case in expected["answer"].as_array().unwrap() {
        let (question, context) = (case["question"].as_str().unwrap(), case["context"].as_str().unwrap());
        let windows = qa.tokenizer.encode_windows(question, context, 512, 128).unwrap();
        assert_eq!(windows.len(), 1);
        assert_eq!(windows[0].encoded.ids(), ids(&case["input_ids"]), "{name}: token ids of {question:?}");
        let batch = Batch::from_encoded(&[windows[0].encoded.clone()], qa.tokenizer.pad_id);
        let values = qa.model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap().into_data().to_vec::<f32>().unwrap();
        let (starts, ends): (Vec<f32>, Vec<f32>) = values.chunks(2).map(|x| (x[0], x[1])).unzip();
        close(&format!("{name}: start logits of {question:?}"), &starts, &floats(&case["start_logits"]));
        close(&format!("{name}: end logits of {question:?}"), &ends, &floats(&case["end_logits"]));
    }
}

/// A `*ForSequenceClassification` folder from the Hub, read as the studio reads it: its labels
/// and class probabilities equal `transformers'`.
fn check_classifier(name: &str) {
    check_encoder(name);
    let device = Device::flex();
    let (files, expected) = folder(name);
    let loaded = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(loaded.meta.labels, ["negative", "neutral", "positive"]);
    for case in expected["classify"].as_array().unwrap() {
        let encoded = loaded.tokenizer.encode_text(case["text"].as_str().unwrap(), case["pair"].as_str()).unwrap();
        let probs = pollster::block_on(classification::predict(&loaded.model, &[encoded], loaded.tokenizer.pad_id, 1, &device)).unwrap();
        close(&format!("{name}: class probabilities of {}", case["text"]), &probs[0], &floats(&case["probs"]));
    }
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn sequence_classifier_with_id2label_predicts_as_transformers() {
    check_classifier("bert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn roberta_sequence_classifier_predicts_as_transformers() {
    check_classifier("roberta-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn distilbert_sequence_classifier_predicts_as_transformers() {
    check_classifier("distilbert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn electra_sequence_classifier_predicts_as_transformers() {
    check_classifier("electra-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn camembert_sequence_classifier_predicts_as_transformers() {
    check_classifier("camembert-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn electra_small_sequence_classifier_predicts_as_transformers() {
    check_classifier("electra-small-classifier");
}

#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn albert_sequence_classifier_predicts_as_transformers() {
    check_classifier("albert-classifier");
}

/// The Python that has PyTorch and `transformers`: `BERTBENCH_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("BERTBENCH_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Exports staged for one run of a `scripts/check_*_with_transformers.py` script, which checks
/// them all in one process (PyTorch and transformers imported once).
struct Checks {
    script: &'static str,
    staged: Vec<(std::path::PathBuf, String)>,
}

impl Checks {
    fn new(script: &'static str) -> Self {
        Self { script, staged: Vec::new() }
    }

    /// Writes `exported` and `rows` (as `rows.json`) to `dir`.
    fn add(&mut self, dir: &std::path::Path, exported: Vec<(String, Vec<u8>)>, rows: &[Value], what: String) {
        std::fs::create_dir_all(dir).unwrap();
        for (file, bytes) in exported {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        std::fs::write(dir.join("rows.json"), serde_json::to_vec(rows).unwrap()).unwrap();
        self.staged.push((dir.to_path_buf(), what));
    }

    /// Runs the script on everything staged; panics with what it said when any check fails.
    fn run(self) {
        let script = common::repo().join("scripts").join(self.script);
        let mut command = std::process::Command::new(python());
        command.arg(&script).env("TQDM_DISABLE", "1");
        for (dir, _) in &self.staged {
            command.arg(dir).arg(dir.join("rows.json"));
        }
        let check = command.output().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
        let names: Vec<&str> = self.staged.iter().map(|(_, w)| w.as_str()).collect();
        assert!(check.status.success(), "transformers disagrees on one of {names:?}:\n{said}");
        println!("{said}");
        assert_eq!(said.matches("== ").count(), self.staged.len(), "every export was checked:\n{said}");
    }
}

/// A classifier of every feature choice on each family's encoder, exported as the studio does,
/// loads in `transformers` with `AutoModelForSequenceClassification` (and `AutoTokenizer`) and
/// gives the same probabilities within 1e-4 and the same token ids
/// (`scripts/check_classifier_with_transformers.py` reports and fails otherwise).
#[test]
#[ignore = "needs tests/models and PyTorch + transformers (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn every_export_loads_in_transformers_with_the_same_probabilities() {
    use bertbench_core::bert::pooling::Pooling;
    use bertbench_core::tasks::classification::{BertClassifier, ClassificationHeadConfig, ClassifierMeta, FeatureLayers, FeatureSpec};
    let device = Device::flex();
    let python = python();
    let ready = std::process::Command::new(&python).args(["-c", "import torch, transformers, safetensors"]).status();
    assert!(matches!(ready, Ok(s) if s.success()), "{python} cannot import torch, transformers and safetensors: set BERTBENCH_PYTHON to a Python that has them");
    let out = std::env::temp_dir().join(format!("bertbench-exports-{}", std::process::id()));
    let mut checks = Checks::new("check_classifier_with_transformers.py");
    let texts: [(&str, Option<&str>); 3] = [
        ("What a wonderful, warm little film.", None),
        ("The food was cold and the waiter was rude.", None),
        ("where is the cat sleeping", Some("the cat is asleep on the sofa")),
    ];
    let choices = [
        FeatureSpec { pooling: Pooling::Mean, layers: FeatureLayers::Last, ..Default::default() },
        FeatureSpec { pooling: Pooling::Cls, layers: FeatureLayers::ConcatLastFour, ..Default::default() },
        FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() },
        FeatureSpec { pooling: Pooling::Mean, layers: FeatureLayers::SumLastFour, ..Default::default() },
        FeatureSpec { pooling: Pooling::Cls, layers: FeatureLayers::SecondToLast, ..Default::default() },
    ];
    for name in ["bert-mlm", "bert-classifier", "roberta", "distilbert", "electra", "xlm-roberta", "electra-small", "albert"] {
        let (files, _) = folder(name);
        let tokenizer_json = files.tokenizer_json.clone();
        let vocab_txt = files.vocab_txt.clone();
        let loaded = checkpoint::load(files, &device).unwrap();
        for spec in choices {
            if spec.check(loaded.config.num_hidden_layers, loaded.report.with_pooler).is_err() {
                continue; // DistilBERT has no pooler
            }
            let width = spec.width(loaded.config.hidden_size, loaded.config.num_hidden_layers);
            let mut head = ClassificationHeadConfig::new(width, 3).with_dropout(0.0).init(&device);
            // Weights larger than a fresh head's, so the probabilities are far from a third each,
            // yet not saturated at 0 and 1 (where a wrong feature would go unseen).
            // Deterministic, so the test is the same every run.
            let values: Vec<f32> = (0..width * 3).map(|k| 0.3 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(values, [width, 3]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            let model = BertClassifier { bert: loaded.model.clone(), head, spec };
            let meta = ClassifierMeta { labels: vec!["neg".into(), "neu".into(), "pos".into()], spec, max_len: loaded.config.max_len(), scale: None };
            let encoded: Vec<_> = texts.iter().map(|(t, p)| loaded.tokenizer.encode_text(t, *p).unwrap()).collect();
            let probs = pollster::block_on(classification::predict(&model, &encoded, loaded.tokenizer.pad_id, 1, &device)).unwrap();
            for p in &probs {
                assert!(p.iter().all(|&x| x < 0.99), "{name}, {}: probabilities {p:?} are too sure to compare", spec.label());
            }
            let rows: Vec<Value> = texts
                .iter()
                .zip(&encoded)
                .zip(&probs)
                .map(|(((t, p), e), probs)| serde_json::json!({ "text": t, "pair": p, "input_ids": e.ids(), "probs": probs }))
                .collect();
            let exported = classification::export(&loaded.config, &model, &meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
            let dir = out.join(format!("{name}-{:?}-{:?}", spec.pooling, spec.layers));
            checks.add(&dir, exported, &rows, format!("{name}, {}", spec.label()));
        }
    }
    // The Hub's RoBERTa, DistilBERT, ELECTRA and CamemBERT classifiers, read and exported again:
    // their own `*ForSequenceClassification` classes, loaded as they are.
    for name in ["roberta-classifier", "distilbert-classifier", "electra-classifier", "camembert-classifier", "electra-small-classifier", "albert-classifier"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = classification::load_classifier(files, None, &device).unwrap();
        let encoded: Vec<_> = texts.iter().map(|(t, p)| loaded.tokenizer.encode_text(t, *p).unwrap()).collect();
        let probs = pollster::block_on(classification::predict(&loaded.model, &encoded, loaded.tokenizer.pad_id, 1, &device)).unwrap();
        let rows: Vec<Value> = texts.iter().zip(&encoded).zip(&probs)
            .map(|(((t, p), e), probs)| serde_json::json!({ "text": t, "pair": p, "input_ids": e.ids(), "probs": probs }))
            .collect();
        let exported = classification::export(&loaded.config, &loaded.model, &loaded.meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
        assert!(!exported.iter().any(|(f, _)| f == classification::MODELING_FILE), "{name}: exported without modelling code");
        checks.add(&out.join(name), exported, &rows, format!("{name} re-exported"));
    }
    checks.run();
    std::fs::remove_dir_all(&out).ok();
}

/// A token classifier (tagger) on each family's encoder, exported as the studio exports it, loads
/// in `transformers` with `AutoModelForTokenClassification`: the family's own
/// `*ForTokenClassification` for last-layer features, the exported modelling code otherwise, and
/// the Hub's NER model re-exported as it came. Every token's tag probabilities agree within 1e-4.
#[test]
#[ignore = "needs tests/models and PyTorch + transformers (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn every_tagger_export_loads_in_transformers_with_the_same_token_probabilities() {
    use bertbench_core::bert::model::BertInput;
    use bertbench_core::tasks::classification::{BertClassifier, ClassificationHeadConfig, ClassifierMeta, FeatureLayers, FeatureSpec};
    use bertbench_core::tokenizer::Batch;
    let device = Device::flex();
    let out = std::env::temp_dir().join(format!("bertbench-tagger-exports-{}", std::process::id()));
    let mut checks = Checks::new("check_classifier_with_transformers.py");
    let texts = ["Ann Lee flew from Oslo to Rome.", "the cat sat on the mat"];
    let tags: Vec<String> = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"].iter().map(|t| t.to_string()).collect();
    let token_probs = |model: &BertClassifier, tokenizer: &bertbench_core::tokenizer::BertTokenizer| -> Vec<Value> {
        texts
            .iter()
            .map(|t| {
                let encoded = tokenizer.encode(t).unwrap();
                let batch = Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
                let logits = model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap();
                let k = model.num_labels();
                let probs: Vec<Vec<f32>> = logits.into_data().try_to_vec::<f32>().unwrap().chunks(k).map(bertbench_core::tasks::metrics::softmax).collect();
                serde_json::json!({ "text": t, "pair": null, "input_ids": encoded.ids(), "probs": probs })
            })
            .collect()
    };
    for name in ["bert-mlm", "roberta", "distilbert", "electra", "xlm-roberta", "camembert-classifier", "electra-small", "albert"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = checkpoint::load(files, &device).unwrap();
        for spec in [FeatureSpec::tokens(), FeatureSpec { layers: FeatureLayers::ConcatLastFour, ..FeatureSpec::tokens() }] {
            let width = spec.width(loaded.config.hidden_size, loaded.config.num_hidden_layers);
            let mut head = ClassificationHeadConfig::new(width, tags.len()).with_dropout(0.0).init(&device);
            let values: Vec<f32> = (0..width * tags.len()).map(|k| 0.3 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(values, [width, tags.len()]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            let model = BertClassifier { bert: loaded.model.clone(), head, spec };
            let meta = ClassifierMeta { labels: tags.clone(), spec, max_len: loaded.config.max_len(), scale: None };
            let rows = token_probs(&model, &loaded.tokenizer);
            let exported = classification::export(&loaded.config, &model, &meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
            let native = spec.layers == FeatureLayers::Last;
            assert_eq!(!exported.iter().any(|(f, _)| f == classification::MODELING_FILE), native, "{name}: {}", spec.label());
            // Read back by the page, it is the same tagger.
            let files = checkpoint_files(&exported);
            let again = classification::load_classifier(files, None, &device).unwrap();
            assert_eq!((again.meta.labels.clone(), again.meta.spec), (tags.clone(), spec));
            let flat = |rows: &[Value]| rows.iter().flat_map(|r| floats(&r["probs"])).collect::<Vec<f32>>();
            close(&format!("{name}: re-imported"), &flat(&token_probs(&again.model, &again.tokenizer)), &flat(&rows));
            let dir = out.join(format!("{name}-{:?}", spec.layers));
            checks.add(&dir, exported, &rows, format!("{name} tagger, {}", spec.label()));
        }
    }
    let (files, _) = folder("bert-ner");
    let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
    let loaded = classification::load_classifier(files, None, &device).unwrap();
    let rows = token_probs(&loaded.model, &loaded.tokenizer);
    let exported = classification::export(&loaded.config, &loaded.model, &loaded.meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
    checks.add(&out.join("bert-ner"), exported, &rows, "bert-ner re-exported".into());
    checks.run();
    std::fs::remove_dir_all(&out).ok();
}

/// A question-answering model on each family's encoder, exported as the studio exports it,
/// loads in `transformers` with `AutoModelForQuestionAnswering`: the family's own
/// `*ForQuestionAnswering` for last-layer features, the exported modelling code otherwise, and
/// the Hub's QA model re-exported as it came. Every token's start and end logits agree within
/// 1e-4, and the page reads the export back to the same logits.
#[test]
#[ignore = "needs tests/models and PyTorch + transformers (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn every_question_answering_export_loads_in_transformers_with_the_same_logits() {
    use bertbench_core::bert::model::BertInput;
    use bertbench_core::tasks::classification::{BertClassifier, ClassificationHeadConfig, ClassifierMeta, FeatureLayers, FeatureSpec};
    use bertbench_core::tasks::qa::LABELS;
    let device = Device::flex();
    let out = std::env::temp_dir().join(format!("bertbench-qa-exports-{}", std::process::id()));
    let mut checks = Checks::new("check_classifier_with_transformers.py");
    let pairs = [("Who fed the cat?", "Tom fed the cat on the mat."), ("where is the dog", "the dog is asleep in the garden")];
    let logits = |model: &BertClassifier, tokenizer: &bertbench_core::tokenizer::BertTokenizer| -> Vec<Value> {
        pairs
            .iter()
            .map(|(q, c)| {
                let encoded = tokenizer.encode_pair(q, c).unwrap();
                let batch = Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
                let values = model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap().into_data().to_vec::<f32>().unwrap();
                let (starts, ends): (Vec<f32>, Vec<f32>) = values.chunks(2).map(|x| (x[0], x[1])).unzip();
                serde_json::json!({ "text": q, "pair": c, "input_ids": encoded.ids(), "start_logits": starts, "end_logits": ends })
            })
            .collect()
    };
    let flat = |rows: &[Value]| rows.iter().flat_map(|r| floats(&r["start_logits"]).into_iter().chain(floats(&r["end_logits"]))).collect::<Vec<f32>>();
    let labels: Vec<String> = LABELS.iter().map(|l| l.to_string()).collect();
    for name in ["bert-mlm", "roberta", "distilbert", "electra", "xlm-roberta", "camembert-classifier", "electra-small", "albert"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = checkpoint::load(files, &device).unwrap();
        for spec in [FeatureSpec::spans(), FeatureSpec { layers: FeatureLayers::SumLastFour, ..FeatureSpec::spans() }] {
            let width = spec.width(loaded.config.hidden_size, loaded.config.num_hidden_layers);
            let mut head = ClassificationHeadConfig::new(width, 2).with_dropout(0.0).init(&device);
            let values: Vec<f32> = (0..width * 2).map(|k| 0.3 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(values, [width, 2]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            let model = BertClassifier { bert: loaded.model.clone(), head, spec };
            let meta = ClassifierMeta { labels: labels.clone(), spec, max_len: loaded.config.max_len(), scale: None };
            let rows = logits(&model, &loaded.tokenizer);
            let exported = classification::export(&loaded.config, &model, &meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
            let native = spec.layers == FeatureLayers::Last;
            assert_eq!(!exported.iter().any(|(f, _)| f == classification::MODELING_FILE), native, "{name}: {}", spec.label());
            let again = classification::load_classifier(checkpoint_files(&exported), None, &device).unwrap();
            assert_eq!((again.meta.labels.clone(), again.meta.spec), (labels.clone(), spec));
            close(&format!("{name}: re-imported"), &flat(&logits(&again.model, &again.tokenizer)), &flat(&rows));
            checks.add(&out.join(format!("{name}-{:?}", spec.layers)), exported, &rows, format!("{name} question answering, {}", spec.label()));
        }
    }
    let (files, _) = folder("bert-qa");
    let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
    let loaded = classification::load_classifier(files, None, &device).unwrap();
    let rows = logits(&loaded.model, &loaded.tokenizer);
    let exported = classification::export(&loaded.config, &loaded.model, &loaded.meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
    checks.add(&out.join("bert-qa"), exported, &rows, "bert-qa re-exported".into());
    checks.run();
    std::fs::remove_dir_all(&out).ok();
}

/// SQuAD's exact match and F1 as the page scores answers equal the official evaluation
/// script's (its functions as `transformers` ships them) on hand-made cases: articles,
/// punctuation, case, repeated words, several gold answers, questions without an answer.
#[test]
#[ignore = "needs PyTorch + transformers (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn squad_scores_match_the_official_script() {
    use bertbench_core::tasks::qa::{AnswerMetrics, exact_match, token_f1};
    let cases: [(&[&str], &str); 10] = [
        (&["Denver Broncos"], "the Denver Broncos!"),
        (&["Denver Broncos", "Broncos"], "Broncos win"),
        (&["in the late 1990s"], "late 1990's"),
        (&["a a b"], "a b b"),
        (&["Saint-Étienne"], "saint étienne"),
        (&["x y y z"], "y y"),
        (&[], ""),
        (&[], "Paris"),
        (&["the"], ""),
        (&["An apple, the pear"], "pear apple"),
    ];
    let rows: Vec<Value> = cases
        .iter()
        .map(|(gold, pred)| {
            let m = AnswerMetrics::new(&[gold.to_vec()], &[*pred]);
            // The per-question functions agree with the aggregate on an answered question.
            if let Some(g) = gold.first().filter(|g| !bertbench_core::tasks::qa::normalize_answer(g).is_empty()) {
                if gold.len() == 1 {
                    assert_eq!((m.all.exact, m.all.f1), (exact_match(g, pred), token_f1(g, pred)));
                }
            }
            serde_json::json!({ "gold": gold, "pred": pred, "exact": m.all.exact, "f1": m.all.f1 })
        })
        .collect();
    check_scores("check_squad_scores.py", &Value::from(rows), "the official script");
}

/// Runs `scripts/<script>` on `cases` (written to a temporary JSON file) and fails with what it
/// said unless it agrees.
fn check_scores(script: &str, cases: &Value, reference: &str) {
    let path = std::env::temp_dir().join(format!("bertbench-{script}-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_vec(cases).unwrap()).unwrap();
    let check = std::process::Command::new(python()).arg(common::repo().join("scripts").join(script)).arg(&path).output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    std::fs::remove_file(&path).ok();
    assert!(check.status.success(), "{reference} disagrees:\n{said}");
    println!("{said}");
}

/// Entity-level precision, recall and F1 as the page scores tagging equal seqeval's (default
/// mode) on hand-made sentences: clean BIO, an I- after O, a type change inside a run, B- B-,
/// BIOES, an entity of the wrong type, a boundary off by one, a sentence without entities.
#[test]
#[ignore = "needs seqeval (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn tagging_scores_match_seqeval() {
    use bertbench_core::tasks::tagging::EntityMetrics;
    let sentences: [(&[&str], &[&str]); 8] = [
        (&["B-PER", "I-PER", "O", "B-LOC"], &["B-PER", "I-PER", "O", "B-LOC"]),
        (&["B-PER", "I-PER", "O", "B-LOC"], &["O", "I-PER", "O", "B-ORG"]),
        (&["O", "B-ORG", "I-ORG", "I-ORG"], &["O", "B-ORG", "I-ORG", "O"]),
        (&["B-LOC", "I-LOC", "B-LOC", "O"], &["B-LOC", "I-MISC", "B-LOC", "O"]),
        (&["B-LOC", "B-LOC", "O", "O"], &["B-LOC", "I-LOC", "O", "O"]),
        (&["S-PER", "B-LOC", "E-LOC", "O"], &["S-PER", "B-LOC", "I-LOC", "O"]),
        (&["O", "O", "O", "O"], &["O", "B-MISC", "O", "O"]),
        (&["B-MISC", "I-MISC", "I-MISC", "O"], &["B-MISC", "I-MISC", "I-MISC", "O"]),
    ];
    let truth: Vec<Vec<&str>> = sentences.iter().map(|(t, _)| t.to_vec()).collect();
    let pred: Vec<Vec<&str>> = sentences.iter().map(|(_, p)| p.to_vec()).collect();
    let m = EntityMetrics::new(&truth, &pred);
    let per_type: serde_json::Map<String, Value> =
        m.per_type.iter().map(|c| (c.label.clone(), serde_json::json!([c.precision, c.recall, c.f1, c.support]))).collect();
    let case = serde_json::json!({ "truth": truth, "pred": pred, "precision": m.precision, "recall": m.recall, "f1": m.f1, "per_type": per_type });
    check_scores("check_seqeval.py", &case, "seqeval");
}

/// An export's files as the page reads a dropped folder.
fn checkpoint_files(files: &[(String, Vec<u8>)]) -> CheckpointFiles {
    let get = |n: &str| files.iter().find(|(f, _)| f == n).map(|(_, b)| b.clone());
    CheckpointFiles {
        config_json: get("config.json").unwrap(),
        weights: get("model.safetensors").unwrap(),
        tokenizer_json: get("tokenizer.json"),
        vocab_txt: get("vocab.txt"),
    }
}

/// Each family's model with its MLM head, exported as the MLM lab exports it, loads in
/// `transformers` with `AutoModelForMaskedLM` under the family's own class and names and fills
/// the same masks (`scripts/check_mlm_with_transformers.py`).
#[test]
#[ignore = "needs tests/models and PyTorch + transformers (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn every_mlm_export_loads_in_transformers_and_fills_the_same_masks() {
    let device = Device::flex();
    let out = std::env::temp_dir().join(format!("bertbench-mlm-exports-{}", std::process::id()));
    let mut checks = Checks::new("check_mlm_with_transformers.py");
    for (name, architecture) in [
        ("bert-mlm", "BertForMaskedLM"),
        ("roberta", "RobertaForMaskedLM"),
        ("distilbert", "DistilBertForMaskedLM"),
        ("electra-generator", "ElectraForMaskedLM"),
        ("xlm-roberta", "XLMRobertaForMaskedLM"),
        ("electra-small-generator", "ElectraForMaskedLM"),
        ("albert", "AlbertForPreTraining"),
    ] {
        let (files, expected) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let (model, tokenizer, config) = pretraining::load(files, &device).unwrap();
        let exported = pretraining::export(&model, &config, &tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
        let config_json: Value = serde_json::from_slice(&exported.iter().find(|(f, _)| f == "config.json").unwrap().1).unwrap();
        assert_eq!(config_json["architectures"][0], architecture, "{name}");
        let rows: Vec<Value> = expected["fill_mask"]
            .as_array()
            .unwrap()
            .iter()
            .map(|case| {
                let text = case["text"].as_str().unwrap();
                let fills = pollster::block_on(pretraining::fill_mask(&model, &tokenizer, text, 5, &device)).unwrap();
                serde_json::json!({ "text": text, "input_ids": tokenizer.encode(text).unwrap().ids(), "fills": fills })
            })
            .collect();
        checks.add(&out.join(name), exported, &rows, name.to_string());
    }
    // The MLM lab's own models from scratch: a WordPiece vocabulary trained on a corpus (its
    // `vocab.txt` alone) under BERT with a layer of its own per depth and under ALBERT with one
    // layer shared by all (so `tokenizer_config.json` must name `BertTokenizer`, or
    // `AutoTokenizer` reads every word as ALBERT's `<unk>`), with and without ALBERT's
    // sentence-order head.
    let lines: Vec<String> = (0..40).map(|i| format!("the {} eats grass in the {} field.", ["cow", "sheep", "goat", "horse"][i % 4], ["green", "wide"][i % 2])).collect();
    let (tokenizer, vocab_txt) = bertbench_core::tokenizer::BertTokenizer::train_wordpiece(&lines, 120, true, 32).unwrap();
    for (family, pair, architecture) in [
        (bertbench_core::bert::family::Family::Bert, false, "BertForMaskedLM"),
        (bertbench_core::bert::family::Family::Albert, false, "AlbertForMaskedLM"),
        (bertbench_core::bert::family::Family::Albert, true, "AlbertForPreTraining"),
    ] {
        let width = 128;
        let config = bertbench_core::bert::config::Preset::Tiny.config(tokenizer.vocab_size()).with_max_position_embeddings(32).with_model_type(family).with_embedding_size(Some(width)).without_dropout();
        let model = pretraining::BertForPreTraining::from_scratch(&config, pair, &device);
        let exported = pretraining::export(&model, &config, &tokenizer, None, Some(&vocab_txt)).unwrap();
        let config_json: Value = serde_json::from_slice(&exported.iter().find(|(f, _)| f == "config.json").unwrap().1).unwrap();
        assert_eq!(config_json["architectures"][0], architecture);
        let rows: Vec<Value> = ["the cow [MASK] grass in the green field.", "the [MASK] eats grass."]
            .iter()
            .map(|text| {
                let fills = pollster::block_on(pretraining::fill_mask(&model, &tokenizer, text, 5, &device)).unwrap();
                serde_json::json!({ "text": text, "input_ids": tokenizer.encode(text).unwrap().ids(), "fills": fills })
            })
            .collect();
        let name = format!("lab-{architecture}");
        checks.add(&out.join(&name), exported, &rows, name.clone());
    }
    checks.run();
    std::fs::remove_dir_all(&out).ok();
}

/// A similarity model on each family's encoder, exported as the studio exports it: a
/// cross-encoder loads in `transformers` with `AutoModelForSequenceClassification` as its
/// regression (one label; the family's own class on `[CLS]` + pooler, the modelling code on the
/// mean) and gives the page's score; a bi-encoder (mean or `[CLS]` pooling, a dense layer) loads
/// in sentence-transformers with `SentenceTransformer(folder)` and gives the page's vectors and
/// cosines, and scipy gives the page's Pearson and Spearman correlations. All within 1e-4; the
/// page reads each export back to the same scores.
#[test]
#[ignore = "needs tests/models, PyTorch, transformers and sentence-transformers (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn every_similarity_export_loads_in_transformers_and_sentence_transformers() {
    use bertbench_core::bert::pooling::Pooling;
    use bertbench_core::tasks::classification::{BertClassifier, ClassificationHeadConfig, ClassifierMeta, FeatureLayers, FeatureSpec};
    use bertbench_core::tasks::similarity::{self, DENSE_FILE, LABELS};
    let device = Device::flex();
    let python = python();
    let ready = std::process::Command::new(&python).args(["-c", "import sentence_transformers, scipy"]).status();
    assert!(matches!(ready, Ok(s) if s.success()), "{python} cannot import sentence_transformers and scipy: set BERTBENCH_PYTHON to a Python that has them");
    let out = std::env::temp_dir().join(format!("bertbench-similarity-exports-{}", std::process::id()));
    let (mut cross_checks, mut bi_checks) = (Checks::new("check_classifier_with_transformers.py"), Checks::new("check_bi_encoder_with_sentence_transformers.py"));
    let pairs = [
        ("A man is playing a guitar.", "Someone plays the guitar on stage.", 0.9f32),
        ("A woman is slicing tomatoes.", "The cat sleeps on the sofa.", 0.0),
        ("Two dogs run in the park", "Dogs are running outside", 0.7),
        ("The train is late again.", "A child eats an apple.", 0.1),
    ];
    let owned: Vec<(String, String)> = pairs.iter().map(|(a, b, _)| (a.to_string(), b.to_string())).collect();
    let labels: Vec<String> = LABELS.iter().map(|l| l.to_string()).collect();
    // Deterministic weights, so each run of the test is the same.
    let weights = |n: usize, scale: f32| -> Vec<f32> { (0..n).map(|k| scale * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect() };
    for name in ["bert-mlm", "roberta", "distilbert", "electra", "xlm-roberta", "electra-small", "albert"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = checkpoint::load(files, &device).unwrap();
        let hidden = loaded.config.hidden_size;
        let export = |model: &BertClassifier, meta: &ClassifierMeta| {
            classification::export(&loaded.config, model, meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap()
        };
        // Cross-encoders.
        for spec in [FeatureSpec::scores(Pooling::Pooler, FeatureLayers::Last), FeatureSpec::scores(Pooling::Mean, FeatureLayers::Last)] {
            if spec.check(loaded.config.num_hidden_layers, loaded.report.with_pooler).is_err() {
                continue; // DistilBERT has no pooler
            }
            let mut head = ClassificationHeadConfig::new(hidden, 1).with_dropout(0.0).init(&device);
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(weights(hidden, 0.6), [hidden, 1]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            let model = BertClassifier { bert: loaded.model.clone(), head, spec };
            let meta = ClassifierMeta { labels: labels.clone(), spec, max_len: loaded.config.max_len(), scale: None };
            let scores = pollster::block_on(similarity::score_pairs(&model, &loaded.tokenizer, &owned, &device)).unwrap();
            let rows: Vec<Value> = owned
                .iter()
                .zip(&scores)
                .map(|((a, b), s)| serde_json::json!({ "text": a, "pair": b, "input_ids": loaded.tokenizer.encode_pair(a, b).unwrap().ids(), "scores": [s] }))
                .collect();
            let exported = export(&model, &meta);
            let again = classification::load_classifier(checkpoint_files(&exported), None, &device).unwrap();
            assert_eq!(again.meta.spec, spec, "{name}");
            close(&format!("{name}: cross-encoder re-imported"), &pollster::block_on(similarity::score_pairs(&again.model, &again.tokenizer, &owned, &device)).unwrap(), &scores);
            cross_checks.add(&out.join(format!("{name}-cross-{:?}", spec.pooling)), exported, &rows, format!("{name} cross-encoder, {}", spec.label()));
        }
        // Bi-encoders: the identity moved a little, so a wrong dense layer would show.
        for pooling in [Pooling::Mean, Pooling::Cls] {
            let spec = FeatureSpec::embeddings(pooling);
            let mut head = similarity::identity_head(hidden, &device);
            let nudge = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(weights(hidden * hidden, 0.2), [hidden, hidden]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(head.classifier.weight.val() + nudge);
            let model = BertClassifier { bert: loaded.model.clone(), head, spec };
            let meta = ClassifierMeta { labels: labels.clone(), spec, max_len: loaded.config.max_len(), scale: None };
            let cosines = pollster::block_on(similarity::score_pairs(&model, &loaded.tokenizer, &owned, &device)).unwrap();
            let gold: Vec<f32> = pairs.iter().map(|p| p.2).collect();
            let (pearson, spearman) = (similarity::pearson(&gold, &cosines), similarity::spearman(&gold, &cosines));
            let rows: Vec<Value> = owned
                .iter()
                .zip(&cosines)
                .zip(&gold)
                .map(|(((a, b), c), g)| {
                    let vectors: Vec<Vec<f32>> = [a, b]
                        .iter()
                        .map(|t| {
                            let batch = Batch::from_encoded(&[loaded.tokenizer.encode(t).unwrap()], loaded.tokenizer.pad_id);
                            model.forward(BertInput::from_batch(&batch, &device)).unwrap().into_data().try_to_vec::<f32>().unwrap()
                        })
                        .collect();
                    serde_json::json!({ "text": a, "pair": b, "vectors": vectors, "cosine": c, "gold": g, "pearson": pearson, "spearman": spearman })
                })
                .collect();
            let exported = export(&model, &meta);
            let get = |f: &str| exported.iter().find(|(n, _)| n == f).map(|(_, b)| b.clone()).unwrap_or_else(|| panic!("{name}: no {f}"));
            let dense = (get("2_Dense/config.json"), get(DENSE_FILE));
            let again = similarity::load_bi_encoder(checkpoint_files(&exported), &get("1_Pooling/config.json"), Some((&dense.0, &dense.1)), &device).unwrap();
            close(&format!("{name}: bi-encoder re-imported"), &pollster::block_on(similarity::score_pairs(&again.model, &again.tokenizer, &owned, &device)).unwrap(), &cosines);
            bi_checks.add(&out.join(format!("{name}-bi-{pooling:?}")), exported, &rows, format!("{name} bi-encoder, {}", spec.label()));
        }
    }
    cross_checks.run();
    bi_checks.run();
    std::fs::remove_dir_all(&out).ok();
}

/// Prompting's scores (each label word's probability at the blank) are `transformers`'
/// fill-mask probabilities of those words: the fill-mask cases' top-5 pieces that stand as whole
/// words, read back through a template holding the case's text. (The test RoBERTa's `<mask>`
/// does not take the space before it, which stays a token of its own, `Ġ`: a word in its place
/// changes the tokens around the blank, and is refused so.)
#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn prompting_scores_are_transformers_fill_mask_probabilities() {
    use bertbench_core::analysis::prompting::{self, Prompt};
    for name in ["bert-mlm", "xlm-roberta"] {
        let device = Device::flex();
        let (files, expected) = folder(name);
        let (model, tokenizer, _) = pretraining::load(files, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut compared = 0;
        for case in expected["fill_mask"].as_array().unwrap() {
            let [mask] = case["masks"].as_array().unwrap().as_slice() else { continue };
            let template = format!("{}{}", case["text"].as_str().unwrap().replace(&tokenizer.mask_token(), prompting::MASK), prompting::TEXT);
            // The top-5 pieces that are whole words, written as a user types them.
            let mut words = Vec::new();
            for (id, p) in ids(&mask["ids"]).into_iter().zip(floats(&mask["probs"])) {
                let piece = tokenizer.id_to_piece(id).unwrap();
                let word = piece.trim_start_matches(['Ġ', '▁']).to_string();
                let alone = Prompt { template: template.clone(), words: vec![word.clone(), word.clone()] };
                if !piece.starts_with("##") && alone.verbalize(&tokenizer).is_ok_and(|v| v[0].id == id) {
                    words.push((word, p));
                }
            }
            if words.is_empty() {
                continue;
            }
            if words.len() == 1 {
                // A prompt has two labels at least: the one word stands for both.
                words.push(words[0].clone());
            }
            let prompt = Prompt { template, words: words.iter().map(|(w, _)| w.clone()).collect() };
            let got = pollster::block_on(prompting::score(&model.bert, &model.cls.predictions, &tokenizer, &prompt, &[String::new()], &device)).unwrap();
            let want: Vec<f32> = words.iter().map(|(_, p)| *p).collect();
            close(&format!("{name}: prompt probabilities of {}", case["text"]), &got.probs[0], &want);
            compared += words.len();
        }
        assert!(compared >= 2, "{name}: no fill-mask case had a whole word among its top 5");
    }
    let (files, _) = folder("roberta");
    let (_, tokenizer, _) = pretraining::load(files, &Device::flex()).unwrap();
    let prompt = Prompt { template: "{text} It was {mask}.".into(), words: vec!["over".into(), "the".into()] };
    let refused = prompt.verbalize(&tokenizer).unwrap_err().to_string();
    assert!(refused.contains("changes the tokens around the blank"), "{refused}");
}
