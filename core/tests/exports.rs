//! Every export loaded back in PyTorch `transformers` the way a user would (classifiers of
//! every feature choice, taggers, question answering, MLM models, sentence encoders, on each
//! family's encoder from `tests/models/`), and the task metrics against their reference
//! scripts (SQuAD's official script, seqeval). The models need PyTorch to make, so these tests
//! are `#[ignore]`d in a plain `cargo test` (which says so); `cargo xtask test` makes the models
//! and runs them with `--include-ignored`.

mod common;

use bertbench_core::bert::checkpoint::{self, CheckpointFiles};
use bertbench_core::bert::model::BertInput;
use bertbench_core::burn::prelude::*;
use bertbench_core::tasks::{classification, pretraining};
use bertbench_core::tokenizer::Batch;
use common::{close, family_folder as folder, floats};
use serde_json::Value;

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
        // Which transformers line checked them (CI runs these with 5 and again with 4).
        let version = std::process::Command::new(python()).args(["-c", "import transformers; print(transformers.__version__)"]).output().unwrap();
        println!("{}: transformers {}", self.script, String::from_utf8_lossy(&version.stdout).trim());
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
    let specs = [
        FeatureSpec { pooling: Pooling::Mean, layers: FeatureLayers::Last, ..Default::default() },
        FeatureSpec { pooling: Pooling::Cls, layers: FeatureLayers::ConcatLastFour, ..Default::default() },
        FeatureSpec { pooling: Pooling::Pooler, layers: FeatureLayers::Last, ..Default::default() },
        FeatureSpec { pooling: Pooling::Mean, layers: FeatureLayers::SumLastFour, ..Default::default() },
        FeatureSpec { pooling: Pooling::Cls, layers: FeatureLayers::SecondToLast, ..Default::default() },
    ];
    // The `-spm` folders: their tokenizer.json is the one bertbench built from SentencePiece's own
    // file, which the exported folder carries and `transformers` reads back the same.
    for name in ["bert-mlm", "bert-classifier", "roberta", "distilbert", "electra", "xlm-roberta", "electra-small", "albert", "mpnet", "modernbert", "deberta", "albert-spm", "xlm-roberta-spm", "camembert-spm", "deberta-spm"] {
        let (files, _) = folder(name);
        let tokenizer_json = files.tokenizer_json.clone();
        let vocab_txt = files.vocab_txt.clone();
        let loaded = checkpoint::load(files, &device).unwrap();
        // On [CLS] + pooler, an encoder saved without a pooler (an MLM model, DistilBERT, ELECTRA's
        // discriminator, DeBERTa, ModernBERT) gets the layer its family's class puts there, as the
        // studio's run does: it exports as that class.
        let pooled = classification::with_sequence_pooler(loaded.model.clone(), &loaded.config, loaded.head_weights.as_deref(), 0, &device).unwrap();
        for spec in specs {
            spec.check(loaded.config.num_hidden_layers, true).unwrap();
            let width = spec.width(loaded.config.hidden_size, loaded.config.num_hidden_layers);
            let mut head = ClassificationHeadConfig::new(width, 3).with_dropout(0.0).init(&device);
            // Weights larger than a fresh head's, so the probabilities are far from a third each,
            // yet not saturated at 0 and 1 (where a wrong feature would go unseen).
            // Deterministic, so the test is the same every run.
            let values: Vec<f32> = (0..width * 3).map(|k| 0.3 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(values, [width, 3]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            let bert = if spec.pooling == Pooling::Pooler { pooled.clone() } else { loaded.model.clone() };
            let model = BertClassifier { bert, head, spec };
            let meta = ClassifierMeta { labels: vec!["neg".into(), "neu".into(), "pos".into()], spec, max_len: loaded.config.max_len(), scale: None, problem: None, threshold: None };
            let encoded: Vec<_> = texts.iter().map(|(t, p)| loaded.tokenizer.encode_text(t, *p).unwrap()).collect();
            let probs = pollster::block_on(classification::predict(&model, meta.scoring(), &encoded, loaded.tokenizer.pad_id, 1, &device)).unwrap();
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
            if spec.pooling == Pooling::Pooler {
                assert!(!exported.iter().any(|(f, _)| f == classification::MODELING_FILE), "{name}: [CLS] + pooler exports as the family's own class");
            }
            let dir = out.join(format!("{name}-{:?}-{:?}", spec.pooling, spec.layers));
            checks.add(&dir, exported, &rows, format!("{name}, {}", spec.label()));
            // The same head as a multi-label classifier: each label's sigmoid, in the model and
            // in the `text-classification` pipeline (the family's own class on [CLS] + pooler,
            // the exported code on the mean).
            if spec.layers == FeatureLayers::Last {
                let spec = FeatureSpec { level: classification::Level::MultiLabel, ..spec };
                let model = BertClassifier { spec, ..model };
                let meta = ClassifierMeta { spec, ..meta };
                assert_eq!(meta.scoring(), classification::Scoring::Sigmoid);
                let probs = pollster::block_on(classification::predict(&model, meta.scoring(), &encoded, loaded.tokenizer.pad_id, 1, &device)).unwrap();
                let rows: Vec<Value> = texts.iter().zip(&probs).map(|((t, p), probs)| serde_json::json!({ "text": t, "pair": p, "probs": probs })).collect();
                let exported = classification::export(&loaded.config, &model, &meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
                let dir = out.join(format!("{name}-{:?}-multi-label", spec.pooling));
                checks.add(&dir, exported, &rows, format!("{name}, multi-label, {}", spec.label()));
            }
        }
    }
    // The Hub's RoBERTa, DistilBERT, ELECTRA and CamemBERT classifiers, read and exported again:
    // their own `*ForSequenceClassification` classes, loaded as they are.
    for name in ["roberta-classifier", "distilbert-classifier", "electra-classifier", "camembert-classifier", "electra-small-classifier", "albert-classifier", "mpnet-classifier", "modernbert-classifier", "deberta-classifier"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = classification::load_classifier(files, None, &device).unwrap();
        let encoded: Vec<_> = texts.iter().map(|(t, p)| loaded.tokenizer.encode_text(t, *p).unwrap()).collect();
        let probs = pollster::block_on(classification::predict(&loaded.model, loaded.meta.scoring(), &encoded, loaded.tokenizer.pad_id, 1, &device)).unwrap();
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
    use bertbench_core::tasks::classification::{BertClassifier, ClassificationHeadConfig, ClassifierMeta, FeatureLayers, FeatureSpec, HeadTransform};
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
    for name in ["bert-mlm", "roberta", "distilbert", "electra", "xlm-roberta", "camembert-classifier", "electra-small", "albert", "mpnet", "modernbert", "deberta"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = checkpoint::load(files, &device).unwrap();
        for spec in [FeatureSpec::tokens(), FeatureSpec { layers: FeatureLayers::ConcatLastFour, ..FeatureSpec::tokens() }] {
            let width = spec.width(loaded.config.hidden_size, loaded.config.num_hidden_layers);
            let mut head = ClassificationHeadConfig::new(width, tags.len()).with_dropout(0.0).init(&device);
            let values: Vec<f32> = (0..width * tags.len()).map(|k| 0.3 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(values, [width, tags.len()]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            // ModernBERT's token class applies its `head` to every token first: the MLM head's,
            // as a run starts from it.
            head.transform = HeadTransform::for_run(&loaded.config, spec, loaded.head_weights.as_deref(), 7, &device).unwrap();
            assert_eq!(head.transform.is_some(), name == "modernbert" && spec.layers == FeatureLayers::Last, "{name}");
            let model = BertClassifier { bert: loaded.model.clone(), head, spec };
            let meta = ClassifierMeta { labels: tags.clone(), spec, max_len: loaded.config.max_len(), scale: None, problem: None, threshold: None };
            let rows = token_probs(&model, &loaded.tokenizer);
            let exported = classification::export(&loaded.config, &model, &meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
            // Last-layer tokens are what every family's own class reads (ModernBERT's through its
            // `head`, `head.*` beside `classifier.*`).
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
    // The Hub's NER models re-exported as they came (ModernBERT's with its `head`).
    for name in ["bert-ner", "modernbert-ner"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = classification::load_classifier(files, None, &device).unwrap();
        let rows = token_probs(&loaded.model, &loaded.tokenizer);
        let exported = classification::export(&loaded.config, &loaded.model, &loaded.meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
        assert!(!exported.iter().any(|(f, _)| f == classification::MODELING_FILE), "{name}: exported without modelling code");
        checks.add(&out.join(name), exported, &rows, format!("{name} re-exported"));
    }
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
    use bertbench_core::tasks::classification::{BertClassifier, ClassificationHeadConfig, ClassifierMeta, FeatureLayers, FeatureSpec, HeadTransform};
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
                let values = model.forward_tokens(BertInput::from_batch(&batch, &device)).unwrap().into_data().try_to_vec::<f32>().unwrap();
                let (starts, ends): (Vec<f32>, Vec<f32>) = values.chunks(2).map(|x| (x[0], x[1])).unzip();
                serde_json::json!({ "text": q, "pair": c, "input_ids": encoded.ids(), "start_logits": starts, "end_logits": ends })
            })
            .collect()
    };
    let flat = |rows: &[Value]| rows.iter().flat_map(|r| floats(&r["start_logits"]).into_iter().chain(floats(&r["end_logits"]))).collect::<Vec<f32>>();
    let labels: Vec<String> = LABELS.iter().map(|l| l.to_string()).collect();
    for name in ["bert-mlm", "roberta", "distilbert", "electra", "xlm-roberta", "camembert-classifier", "electra-small", "albert", "mpnet", "modernbert", "deberta"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = checkpoint::load(files, &device).unwrap();
        for spec in [FeatureSpec::spans(), FeatureSpec { layers: FeatureLayers::SumLastFour, ..FeatureSpec::spans() }] {
            let width = spec.width(loaded.config.hidden_size, loaded.config.num_hidden_layers);
            let mut head = ClassificationHeadConfig::new(width, 2).with_dropout(0.0).init(&device);
            let values: Vec<f32> = (0..width * 2).map(|k| 0.3 * (((k * 37) % 19) as f32 / 18.0 - 0.5)).collect();
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(values, [width, 2]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            // ModernBERT's answer-span class applies its `head` to every token first: a fresh one
            // here, as transformers initialises it (the tagger above starts from the MLM head's).
            head.transform = HeadTransform::for_run(&loaded.config, spec, None, 7, &device).unwrap();
            assert_eq!(head.transform.is_some(), name == "modernbert" && spec.layers == FeatureLayers::Last, "{name}");
            let model = BertClassifier { bert: loaded.model.clone(), head, spec };
            let meta = ClassifierMeta { labels: labels.clone(), spec, max_len: loaded.config.max_len(), scale: None, problem: None, threshold: None };
            let rows = logits(&model, &loaded.tokenizer);
            let exported = classification::export(&loaded.config, &model, &meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
            // Last-layer tokens are what every family's own class reads (ModernBERT's through its
            // `head`, `head.*` beside `classifier.*`).
            let native = spec.layers == FeatureLayers::Last;
            assert_eq!(!exported.iter().any(|(f, _)| f == classification::MODELING_FILE), native, "{name}: {}", spec.label());
            let again = classification::load_classifier(checkpoint_files(&exported), None, &device).unwrap();
            assert_eq!((again.meta.labels.clone(), again.meta.spec), (labels.clone(), spec));
            close(&format!("{name}: re-imported"), &flat(&logits(&again.model, &again.tokenizer)), &flat(&rows));
            checks.add(&out.join(format!("{name}-{:?}", spec.layers)), exported, &rows, format!("{name} question answering, {}", spec.label()));
        }
    }
    // The Hub's QA models re-exported as they came (ModernBERT's with its `head` and every bias).
    for name in ["bert-qa", "modernbert-qa"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = classification::load_classifier(files, None, &device).unwrap();
        let rows = logits(&loaded.model, &loaded.tokenizer);
        let exported = classification::export(&loaded.config, &loaded.model, &loaded.meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap();
        assert!(!exported.iter().any(|(f, _)| f == classification::MODELING_FILE), "{name}: exported without modelling code");
        checks.add(&out.join(name), exported, &rows, format!("{name} re-exported"));
    }
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
        ("mpnet", "MPNetForMaskedLM"),
        ("modernbert", "ModernBertForMaskedLM"),
        ("deberta", "DebertaV2ForMaskedLM"),
        // Tokenizers bertbench built from SentencePiece's own file (`<mask>` taking the space
        // before it in CamemBERT's), carried into the export.
        ("albert-spm", "AlbertForMaskedLM"),
        ("camembert-spm", "CamembertForMaskedLM"),
        ("deberta-spm", "DebertaV2ForMaskedLM"),
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
                serde_json::json!({ "text": text, "input_ids": tokenizer.encode(text).unwrap().ids(), "fills": fills_json(&fills) })
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
                serde_json::json!({ "text": text, "input_ids": tokenizer.encode(text).unwrap().ids(), "fills": fills_json(&fills) })
            })
            .collect();
        let name = format!("lab-{architecture}");
        checks.add(&out.join(&name), exported, &rows, name.clone());
    }
    // The lab's ELECTRA run keeps its discriminator: `ElectraForPreTraining`, whose logits say
    // per token whether it was replaced.
    {
        use bertbench_core::tasks::replaced_token::{self, ElectraForPreTraining};
        let config = bertbench_core::bert::config::Preset::Tiny.config(tokenizer.vocab_size()).with_max_position_embeddings(32).without_dropout();
        let model = ElectraForPreTraining::from_scratch(&config, &device).discriminator;
        let config = config.with_model_type(bertbench_core::bert::family::Family::Electra).with_embedding_size(Some(128));
        let exported = replaced_token::export(&model, &config, &tokenizer, None, Some(&vocab_txt)).unwrap();
        let rows: Vec<Value> = ["the cow eats grass in the green field.", "the goat eats the wide field."]
            .iter()
            .map(|text| {
                let encoded = tokenizer.encode(text).unwrap();
                let batch = Batch::from_encoded(std::slice::from_ref(&encoded), tokenizer.pad_id);
                let logits = model.forward(BertInput::from_batch(&batch, &device)).into_data().try_to_vec::<f32>().unwrap();
                serde_json::json!({ "text": text, "input_ids": encoded.ids(), "replaced_logits": logits })
            })
            .collect();
        checks.add(&out.join("lab-ElectraForPreTraining"), exported, &rows, "lab-ElectraForPreTraining".into());
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
    for name in ["bert-mlm", "roberta", "distilbert", "electra", "xlm-roberta", "electra-small", "albert", "mpnet", "modernbert", "deberta"] {
        let (files, _) = folder(name);
        let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
        let loaded = checkpoint::load(files, &device).unwrap();
        let hidden = loaded.config.hidden_size;
        let export = |model: &BertClassifier, meta: &ClassifierMeta| {
            classification::export(&loaded.config, model, meta, &loaded.tokenizer, tokenizer_json.as_deref(), vocab_txt.as_deref()).unwrap()
        };
        // Cross-encoders.
        for spec in [FeatureSpec::scores(Pooling::Pooler, FeatureLayers::Last), FeatureSpec::scores(Pooling::Mean, FeatureLayers::Last)] {
            // On [CLS] + pooler, a checkpoint without one gets its family's layer, as in the studio.
            let bert = if spec.pooling == Pooling::Pooler {
                classification::with_sequence_pooler(loaded.model.clone(), &loaded.config, loaded.head_weights.as_deref(), 0, &device).unwrap()
            } else {
                loaded.model.clone()
            };
            let mut head = ClassificationHeadConfig::new(hidden, 1).with_dropout(0.0).init(&device);
            let weight = Tensor::<2>::from_data(bertbench_core::burn::tensor::TensorData::new(weights(hidden, 0.6), [hidden, 1]), &device);
            head.classifier.weight = bertbench_core::burn::module::Param::from_tensor(weight);
            let model = BertClassifier { bert, head, spec };
            let meta = ClassifierMeta { labels: labels.clone(), spec, max_len: loaded.config.max_len(), scale: None, problem: None, threshold: None };
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
            let meta = ClassifierMeta { labels: labels.clone(), spec, max_len: loaded.config.max_len(), scale: None, problem: None, threshold: None };
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

/// Fill-mask results as `scripts/check_mlm_with_transformers.py` reads them:
/// `[{"position": p, "top": [[piece, probability], ...]}]`.
fn fills_json(fills: &[pretraining::MaskFill]) -> Value {
    fills.iter().map(|f| serde_json::json!({ "position": f.position, "top": f.top })).collect()
}
