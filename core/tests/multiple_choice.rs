//! Multiple choice against PyTorch `transformers`: on BERT, RoBERTa, XLM-RoBERTa, ALBERT, MPNet,
//! DeBERTa (v3's and v2's settings) and ModernBERT (its `head` from the MLM head's weights, and
//! from a mean-pooling classifier's) test models
//! (`scripts/make_test_models.py`), a dozen fine-tuning steps of the `FineTuner` on a tiny generated
//! set of questions, then the export, which `AutoModelForMultipleChoice` loads as the family's
//! own `*ForMultipleChoice` and which gives each ending the probability bertbench gives it, within
//! 1e-4 (`scripts/check_multiple_choice_with_transformers.py`). A `*ForMultipleChoice` folder
//! as `transformers` saves one (ModernBERT's) opens with `transformers`' probabilities.
//!
//! It needs the models and PyTorch, so it is `#[ignore]`d in a plain `cargo test`; `cargo xtask
//! test` runs it with `--include-ignored`.

mod common;

use bertbench_core::bert::checkpoint;
use bertbench_core::bert::folder::from_folder;
use bertbench_core::bert::pooling::Pooling;
use bertbench_core::burn::prelude::*;
use bertbench_core::tasks::choice::{self, ChoiceItem};
use bertbench_core::tasks::classification::{self, FeatureLayers, FeatureSpec, Level};
use bertbench_core::train::task::choice::{choice_labels, encode_choices};
use bertbench_core::train::{Event, FineTuneConfig, FineTuner, TrainMode};
use serde_json::Value;

fn python() -> String {
    std::env::var("BERTBENCH_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// `n` everyday questions of three endings, made from a few parts so that no two are alike: the
/// right ending follows from the premise, the two others are absurd.
fn questions(n: usize, offset: usize) -> Vec<ChoiceItem> {
    let scenes = [
        ("Tea is hot", "she waits"),
        ("It rains", "he gets wet"),
        ("A phone rings", "she answers"),
        ("Bread burns", "he bins it"),
        ("A baby cries", "dad holds her"),
        ("A door is shut", "she knocks"),
    ];
    // The test models' vocabularies are mostly single letters: short texts fit their 64 positions.
    let absurd = ["a moon eats", "fish drive", "a chair sings", "rivers read"];
    (0..n)
        .map(|k| {
            let i = k + offset;
            let (premise, right) = scenes[i % scenes.len()];
            let label = i % 3;
            let mut wrong = [absurd[i % 4], absurd[(i + 1) % 4]].into_iter();
            let choices = (0..3).map(|j| if j == label { right.to_string() } else { wrong.next().unwrap().to_string() }).collect();
            ChoiceItem { line: k + 1, premise: format!("{premise}, so"), choices, label }
        })
        .collect()
}

/// A `*ForMultipleChoice` folder from the Hub (ModernBERT's, whose class pools through its
/// `head`; made by `scripts/make_test_models.py`) opens as a multiple-choice model: each question's
/// endings, read with its premise and padded side by side, get `transformers`' probabilities,
/// from `AutoTokenizer`'s ids.
#[test]
#[ignore = "needs tests/models from scripts/make_test_models.py (PyTorch); cargo xtask test makes them and runs this"]
fn a_modernbert_multiple_choice_model_scores_endings_as_transformers() {
    let name = "modernbert-choice";
    let device = Device::flex();
    let (files, expected) = common::family_folder(name);
    let model = classification::load_classifier(files, None, &device).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(model.meta.spec.level, Level::Choice);
    for case in expected["choose"].as_array().unwrap() {
        let premise = case["premise"].as_str().unwrap();
        let endings: Vec<String> = case["endings"].as_array().unwrap().iter().map(|e| e.as_str().unwrap().to_string()).collect();
        let encoded = choice::encode_question(&model.tokenizer, premise, &endings).unwrap();
        for (e, want) in encoded.iter().zip(case["input_ids"].as_array().unwrap()) {
            assert_eq!(e.ids(), common::ints(want), "{name}: ids of {premise:?}");
        }
        let probs = pollster::block_on(choice::predict(&model.model, &model.tokenizer, premise, &endings, &device)).unwrap();
        common::close(&format!("{name}: ending probabilities of {premise:?}"), &probs, &common::floats(&case["probs"]));
    }
}

#[test]
#[ignore = "needs tests/models and PyTorch + transformers (BERTBENCH_PYTHON or python3); cargo xtask test runs it"]
fn a_trained_multiple_choice_export_loads_in_transformers_with_the_same_probabilities() {
    let python = python();
    let ready = std::process::Command::new(&python).args(["-c", "import torch, transformers, safetensors"]).status();
    assert!(matches!(ready, Ok(s) if s.success()), "{python} cannot import torch, transformers and safetensors: set BERTBENCH_PYTHON to a Python that has them");
    let _rng = common::device_rng();
    let out = std::env::temp_dir().join(format!("bertbench-choice-{}", std::process::id()));
    let mut command = std::process::Command::new(&python);
    command.arg(common::repo().join("scripts/check_multiple_choice_with_transformers.py")).env("TQDM_DISABLE", "1");
    // ModernBERT's class pools with its `head` (dense, GELU, LayerNorm): from the MLM head's
    // weights (`modernbert`), or the sequence classifier's, mean-pooled with every bias on
    // (`modernbert-classifier`), as transformers loads either into ModernBertForMultipleChoice.
    let names = ["bert-classifier", "roberta", "xlm-roberta", "albert-classifier", "mpnet-classifier", "deberta", "deberta-classifier", "modernbert", "modernbert-classifier"];
    for name in names {
        let files = from_folder(common::test_model_drop(name)).unwrap();
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let device = Device::flex().autodiff();
        let loaded = checkpoint::load(files, &device).unwrap();
        let bert = choice::with_pooler(loaded.model, &loaded.config, loaded.head_weights.as_deref(), 7, &device).unwrap();
        let max_len = 60;
        let tokenizer = loaded.tokenizer.clone().with_max_len(max_len);
        let train = encode_choices(&tokenizer, &questions(120, 0)).unwrap();
        let valid = encode_choices(&tokenizer, &questions(6, 12)).unwrap();
        let features = FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, level: Level::Choice };
        let config = FineTuneConfig::recipe(Level::Choice).with_mode(TrainMode::Full).with_features(features).with_batch_size(4).with_epochs(1).with_learning_rate(5e-3).with_seed(7);
        let mut tuner = FineTuner::new(bert, tokenizer.pad_id, max_len, choice_labels(), train, valid, config, &device).unwrap();
        while !matches!(pollster::block_on(tuner.advance()).unwrap(), Event::Finished) {}
        // One epoch, one evaluation: the kept weights are the trained ones (a first evaluation that
        // already scores every question right would be kept over every later one).
        assert_eq!(tuner.progress().step, 30, "{name}: 120 questions in batches of 4, one epoch");
        let model = tuner.best_model();
        let inner = device.clone().inner();
        let rows: Vec<Value> = questions(4, 20)
            .iter()
            .map(|q| {
                let encoded = choice::encode_question(&tokenizer, &q.premise, &q.choices).unwrap();
                assert!(encoded.iter().all(|e| e.truncated_from.is_none()), "{name}: {q:?} is cut to {max_len} tokens");
                let probs = pollster::block_on(choice::predict(&model, &tokenizer, &q.premise, &q.choices, &inner)).unwrap();
                assert!((probs.iter().sum::<f32>() - 1.0).abs() < 1e-5);
                let ids: Vec<Vec<u32>> = choice::encode_question(&tokenizer, &q.premise, &q.choices).unwrap().iter().map(|e| e.ids()).collect();
                serde_json::json!({ "premise": q.premise, "choices": q.choices, "input_ids": ids, "probs": probs })
            })
            .collect();
        let spread = rows.iter().flat_map(|r| r["probs"].as_array().unwrap().iter().map(|p| (p.as_f64().unwrap() - 1.0 / 3.0).abs())).fold(0.0, f64::max);
        assert!(spread > 1e-2, "{name}: every probability is within {spread} of a third; a wrong read would go unseen");
        let exported = classification::export(&loaded.config, &model, &tuner.meta(), &tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
        // Read back by the page, it is the same model.
        let get = |f: &str| exported.iter().find(|(n, _)| n == f).map(|(_, b)| b.clone());
        let files = checkpoint::CheckpointFiles { config_json: get("config.json").unwrap(), weights: get("model.safetensors").unwrap(), tokenizer_json: get("tokenizer.json"), vocab_txt: get("vocab.txt") };
        let again = classification::load_classifier(files, None, &inner).unwrap_or_else(|e| panic!("{name}: {e}"));
        for row in &rows {
            let choices: Vec<String> = row["choices"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
            let probs = pollster::block_on(choice::predict(&again.model, &again.tokenizer, row["premise"].as_str().unwrap(), &choices, &inner)).unwrap();
            common::close(&format!("{name}: re-imported"), &probs, &common::floats(&row["probs"]));
        }
        let folder = out.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        for (file, bytes) in exported {
            std::fs::write(folder.join(file), bytes).unwrap();
        }
        std::fs::write(folder.join("rows.json"), serde_json::to_vec(&rows).unwrap()).unwrap();
        command.arg(&folder).arg(folder.join("rows.json"));
    }
    let check = command.output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    assert!(check.status.success(), "transformers disagrees:\n{said}");
    println!("{said}");
    assert_eq!(said.matches("== ").count(), names.len(), "every export was checked:\n{said}");
    std::fs::remove_dir_all(&out).ok();
}
