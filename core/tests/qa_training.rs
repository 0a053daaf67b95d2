//! Question-answering fine-tuning against PyTorch `transformers`' recipe (`run_qa.py`): from the
//! same weights (a tiny `BertForQuestionAnswering`, its `qa_outputs` included) and the same
//! windows, bertbench must make the same windows and answer positions, the same logits, loss and
//! gradients of every parameter (within 1e-4 of each tensor's scale), the same losses, gradient
//! norms and learning rates over a few optimizer steps of its `FineTuner` (dropout off), and,
//! with dropout on, losses spread as PyTorch's are over many masks.
//!
//! The same for a tiny `ModernBertForQuestionAnswering`, whose `head` (dense → GELU → LayerNorm,
//! before `classifier` on every token) trains with the output layer, its LayerNorms and biases
//! undecayed as the `Trainer` leaves them (no dropout: ModernBERT has none by default).
//!
//! `scripts/make_qa_training_reference.py` writes the models and what PyTorch computed into
//! `tests/models/qa-training/` and `tests/models/qa-training-modernbert/`; it needs PyTorch, so these tests are `#[ignore]`d in a plain
//! `cargo test` (which lists them as ignored) and `cargo xtask test` makes the folder and runs
//! them with `--include-ignored`. A missing folder fails the test: it never passes unchecked.

mod common;

use std::path::PathBuf;

use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::bert::model::BertInput;
use bertbench_core::burn::module::{Module, ModuleMapper, Param};
use bertbench_core::burn::nn::DropoutConfig;
use bertbench_core::burn::optim::GradientsParams;
use bertbench_core::burn::prelude::*;
use bertbench_core::burn::tensor::TensorData;
use bertbench_core::data::parse_qa;
use bertbench_core::nn::read_f32;
use bertbench_core::tasks::classification::{ClassificationHead, LoadedClassifier, export, load_classifier};
use bertbench_core::tasks::qa::{LABELS, SpanConfig};
use bertbench_core::tokenizer::Batch;
use bertbench_core::train::{Event, FineTuneConfig, FineTuner, LabeledText, StepPoint, TrainMode, encode_questions};
use common::{device_rng, floats, ints};
use serde_json::Value;

const TOLERANCE: f32 = 1e-4;

/// The two reference folders: BERT's and ModernBERT's.
const FOLDERS: [&str; 2] = ["qa-training", "qa-training-modernbert"];

fn folder(name: &str) -> PathBuf {
    let models = std::env::var_os("BERTBENCH_TEST_MODELS").map(PathBuf::from).unwrap_or_else(|| common::repo().join("tests/models"));
    let dir = models.join(name);
    assert!(dir.join("reference.json").is_file(), "{} is missing: run `python3 scripts/make_qa_training_reference.py {}`", dir.display(), models.display());
    dir
}

fn read(dir: &str, name: &str) -> Vec<u8> {
    let path = folder(dir).join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn reference(dir: &str) -> Value {
    serde_json::from_slice(&read(dir, "reference.json")).unwrap()
}

/// The reference model on `device`, with or without the encoder's dropout (the head's is the
/// caller's choice: `transformers`' `qa_outputs` has none).
fn model(dir: &str, dropout: bool, device: &Device) -> LoadedClassifier {
    let mut config: Value = serde_json::from_slice(&read(dir, "config.json")).unwrap();
    if !dropout {
        config["hidden_dropout_prob"] = 0.0.into();
        config["attention_probs_dropout_prob"] = 0.0.into();
    }
    let files = CheckpointFiles {
        config_json: serde_json::to_vec(&config).unwrap(),
        weights: read(dir, "model.safetensors"),
        tokenizer_json: Some(read(dir, "tokenizer.json")),
        vocab_txt: None,
    };
    let mut loaded = load_classifier(files, None, device).unwrap();
    loaded.model.head.dropout = DropoutConfig::new(0.0).init();
    loaded
}

fn spans(fx: &Value) -> SpanConfig {
    let n = |k: &str| fx[k].as_u64().unwrap() as usize;
    SpanConfig::new().with_max_len(n("window")).with_stride(n("stride"))
}

/// Every question's windows, as bertbench makes them for training.
fn windows(dir: &str, loaded: &LoadedClassifier, fx: &Value) -> Vec<LabeledText> {
    let data = parse_qa(&read(dir, "questions.json"), Some("questions.json")).unwrap();
    let (windows, lost) = encode_questions(&loaded.tokenizer, &data.items, &spans(fx)).unwrap();
    assert_eq!(lost, 0);
    windows
}

/// `got` against `want`, within [`TOLERANCE`] of `want`'s largest magnitude or of `floor`,
/// whichever is larger (a gradient that is zero in exact arithmetic, as the last LayerNorm's
/// bias is under a softmax over tokens, is rounding noise on both sides).
fn close(what: &str, got: &[f32], want: &[f32], floor: f32) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let scale = want.iter().fold(floor, |m, v| m.max(v.abs()));
    let (at, worst) = got.iter().zip(want).map(|(a, b)| (a - b).abs()).enumerate().fold((0, 0.0f32), |m, (i, d)| if d > m.1 { (i, d) } else { m });
    assert!(worst <= TOLERANCE * scale, "{what}: element {at} is {} against {} (scale {scale})", got[at], want[at]);
}

fn relative(what: &str, got: f32, want: f32) {
    assert!((got - want).abs() <= TOLERANCE * want.abs().max(1e-6), "{what}: {got} against {want}");
}

#[test]
#[ignore = "needs tests/models/qa-training (scripts/make_qa_training_reference.py, PyTorch); cargo xtask test runs it"]
fn windows_and_answer_positions_are_transformers() {
    for dir in FOLDERS {
        let fx = reference(dir);
        let loaded = model(dir, false, &Device::flex());
        let got = windows(dir, &loaded, &fx);
        let want = fx["windows"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{dir}: windows");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(g.encoded.ids(), ints(&w["input_ids"]), "{dir}: window {i}: ids");
            assert_eq!(g.encoded.type_ids(), ints(&w["token_type_ids"]), "{dir}: window {i}: segments");
            let span = g.span.as_ref().unwrap();
            let at = |k: &str| w[k].as_u64().unwrap() as usize;
            assert_eq!((span.start, span.end), (at("start"), at("end")), "{dir}: window {i} of {}: answer tokens", w["question"]);
        }
    }
}

/// Replaces every parameter with its gradient (zeros where it has none), so the module's export
/// names each gradient as `transformers` names its parameter.
struct ToGrads<'a>(&'a GradientsParams);

impl ModuleMapper for ToGrads<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let id = param.id;
        let value = param.val();
        let grad = self.0.get::<D>(id).unwrap_or_else(|| value.inner().zeros_like());
        Param::initialized(id, Tensor::from_inner(grad))
    }
}

#[test]
#[ignore = "needs tests/models/qa-training (scripts/make_qa_training_reference.py, PyTorch); cargo xtask test runs it"]
fn one_training_pass_gives_transformers_logits_loss_and_gradients() {
    let _rng = device_rng();
    for dir in FOLDERS {
        one_training_pass(dir);
    }
}

/// [`one_training_pass_gives_transformers_logits_loss_and_gradients`] on one reference folder.
fn one_training_pass(dir: &str) {
    let fx = reference(dir);
    let want = &fx["batch"];
    let device = Device::flex().autodiff();
    let loaded = model(dir, false, &device);
    let windows = windows(dir, &loaded, &fx);
    let encoded: Vec<_> = windows.iter().map(|w| w.encoded.clone()).collect();
    let batch = Batch::from_encoded(&encoded, loaded.tokenizer.pad_id);
    // Each window's start row, then its end row, padding masked: what the FineTuner's loss reads.
    let rows = loaded.model.forward_units(BertInput::from_batch(&batch, &device), None).unwrap();
    let labels: Vec<i64> = windows.iter().flat_map(|w| w.span.as_ref().map(|s| [s.start as i64, s.end as i64]).unwrap()).collect();
    let n = labels.len();
    let loss = ClassificationHead::loss(rows.clone(), Tensor::from_data(TensorData::new(labels, [n]), &device));
    let values = pollster::block_on(read_f32(rows.clone().inner())).unwrap();
    let seq = batch.seq_len;
    for (i, w) in windows.iter().enumerate() {
        let len = w.encoded.tokens.len();
        close(&format!("{dir}: window {i}: start logits"), &values[2 * i * seq..2 * i * seq + len], &floats(&want["start_logits"][i]), 1e-6);
        close(&format!("{dir}: window {i}: end logits"), &values[(2 * i + 1) * seq..(2 * i + 1) * seq + len], &floats(&want["end_logits"][i]), 1e-6);
    }
    relative(&format!("{dir}: loss"), pollster::block_on(read_f32(loss.clone().inner())).unwrap()[0], want["loss"].as_f64().unwrap() as f32);

    let grads = GradientsParams::from_grads(loss.backward(), &loaded.model);
    let as_grads = loaded.model.clone().map(&mut ToGrads(&grads)).valid();
    let files = export(&loaded.config, &as_grads, &loaded.meta, &loaded.tokenizer, None, Some(&read(dir, "vocab.txt"))).unwrap();
    let weights = &files.iter().find(|(n, _)| n == "model.safetensors").unwrap().1;
    let st = safetensors::SafeTensors::deserialize(weights).unwrap();
    let reference = want["grads"].as_object().unwrap();
    let mut names: Vec<String> = st.names().into_iter().map(String::from).collect();
    names.sort();
    let mut theirs: Vec<&String> = reference.keys().collect();
    theirs.sort();
    assert_eq!(names.iter().collect::<Vec<_>>(), theirs, "{dir}: the same parameters");
    // The floor: a thousandth of the largest gradient of any parameter.
    let floor = 1e-3 * reference.values().flat_map(|g| floats(g)).fold(0.0f32, |m, v| m.max(v.abs()));
    for name in &names {
        let view = st.tensor(name).unwrap();
        let got: Vec<f32> = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        close(&format!("{dir}: gradient of {name}"), &got, &floats(&reference[name.as_str()]), floor);
    }
}

/// A full fine-tuning run over every window as one batch (so the batch order cannot matter),
/// starting from the reference's head, `epochs` steps; returns its steps.
fn run(loaded: LoadedClassifier, windows: Vec<LabeledText>, fx: &Value, epochs: usize, learning_rate: f64, dropout: f64, device: &Device) -> Vec<StepPoint> {
    let config = FineTuneConfig::new()
        .with_mode(TrainMode::Full)
        .with_features(loaded.meta.spec)
        .with_spans(spans(fx))
        .with_batch_size(windows.len())
        .with_epochs(epochs)
        .with_learning_rate(learning_rate)
        .with_warmup_ratio(fx["warmup_ratio"].as_f64().unwrap())
        .with_weight_decay(fx["weight_decay"].as_f64().unwrap())
        .with_max_grad_norm(1.0)
        .with_dropout(dropout)
        .with_group_by_length(false)
        .with_seed(7);
    let labels = LABELS.iter().map(|l| l.to_string()).collect();
    let max_len = spans(fx).max_len;
    let mut tuner = FineTuner::new(loaded.model.bert, loaded.tokenizer.pad_id, max_len, labels, windows.clone(), windows, config, device)
        .unwrap()
        .with_head(loaded.model.head)
        .unwrap();
    let mut steps = Vec::new();
    loop {
        match pollster::block_on(tuner.advance()).unwrap() {
            Event::Finished => return steps,
            Event::Step(s) => steps.push(s),
            _ => {}
        }
    }
}

#[test]
#[ignore = "needs tests/models/qa-training (scripts/make_qa_training_reference.py, PyTorch); cargo xtask test runs it"]
fn fine_tuning_steps_follow_transformers_trainer() {
    let _rng = device_rng();
    for dir in FOLDERS {
        let fx = reference(dir);
        let device = Device::flex().autodiff();
        let loaded = model(dir, false, &device);
        let windows = windows(dir, &loaded, &fx);
        let want = fx["steps"].as_array().unwrap();
        let steps = run(loaded, windows, &fx, want.len(), fx["learning_rate"].as_f64().unwrap(), 0.0, &device);
        assert_eq!(steps.len(), want.len());
        for (i, (s, w)) in steps.iter().zip(want).enumerate() {
            eprintln!("{dir}: step {}: loss {} ({}), gradient norm {} ({}), lr {}", i + 1, s.loss, w["loss"], s.grad_norm, w["grad_norm"], s.lr);
            relative(&format!("{dir}: step {}: learning rate", i + 1), s.lr as f32, w["lr"].as_f64().unwrap() as f32);
            relative(&format!("{dir}: step {}: loss", i + 1), s.loss, w["loss"].as_f64().unwrap() as f32);
            relative(&format!("{dir}: step {}: gradient norm", i + 1), s.grad_norm, w["grad_norm"].as_f64().unwrap() as f32);
        }
    }
}

#[test]
#[ignore = "needs tests/models/qa-training (scripts/make_qa_training_reference.py, PyTorch); cargo xtask test runs it"]
fn dropout_spreads_the_loss_as_transformers_does() {
    // The run's own dropout (the encoder's, and the head's as the run's default configures it),
    // at learning rate 0: every step reads the initial weights through new masks.
    let _rng = device_rng();
    let dir = "qa-training";
    let fx = reference(dir);
    let want = &fx["dropout"];
    let draws = want["draws"].as_u64().unwrap() as usize;
    let device = Device::flex().autodiff();
    let loaded = model(dir, true, &device);
    let windows = windows(dir, &loaded, &fx);
    let steps = run(loaded, windows, &fx, draws, 0.0, FineTuneConfig::new().dropout, &device);
    let losses: Vec<f64> = steps.iter().map(|s| f64::from(s.loss)).collect();
    let n = losses.len() as f64;
    let mean = losses.iter().sum::<f64>() / n;
    let std = (losses.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let (their_mean, their_std) = (want["mean"].as_f64().unwrap(), want["std"].as_f64().unwrap());
    eprintln!("loss over {draws} masks: {mean:.5} ± {std:.5}; transformers {their_mean:.5} ± {their_std:.5}; without dropout {}", want["without"]);
    // Four standard errors of the difference of the means, and of the standard deviations
    // (≈ std / √(2(n − 1)) each).
    let se_mean = (std * std / n + their_std * their_std / n).sqrt();
    assert!((mean - their_mean).abs() <= 4.0 * se_mean, "mean loss {mean} against {their_mean} (standard error {se_mean})");
    let se_std = ((std * std + their_std * their_std) / (2.0 * (n - 1.0))).sqrt();
    assert!((std - their_std).abs() <= 4.0 * se_std, "spread {std} against {their_std} (standard error {se_std})");
}
