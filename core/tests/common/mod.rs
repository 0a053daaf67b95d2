//! Shared by the integration tests: the default model, the PyTorch fixtures, a fine-tuning run
//! driven to its end.
#![allow(dead_code)]

use std::path::PathBuf;

use bertbench_core::burn::prelude::Device;
use bertbench_core::bert::checkpoint::{self, LoadedModel, CheckpointFiles};
use serde_json::Value;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Where `scripts/make_test_models.py` wrote the family and format test models
/// (`BERTBENCH_TEST_MODELS`, else `tests/models/`).
pub fn test_models_dir() -> PathBuf {
    std::env::var_os("BERTBENCH_TEST_MODELS").map(PathBuf::from).unwrap_or_else(|| repo().join("tests/models"))
}

/// Test model `name`'s files as a user's drop gives them (paths under the folder's name), its
/// `expected.json` left out.
pub fn test_model_drop(name: &str) -> Vec<(String, Vec<u8>)> {
    let dir = test_models_dir().join(name);
    assert!(dir.is_dir(), "{} is missing: run `python3 scripts/make_test_models.py {}`", dir.display(), test_models_dir().display());
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "expected.json")
        .map(|p| (format!("{name}/{}", p.file_name().unwrap().to_string_lossy()), std::fs::read(&p).unwrap()))
        .collect()
}

/// all-MiniLM-L6-v2 as `cargo xtask setup` leaves it in `public/models/`.
pub fn minilm_files() -> CheckpointFiles {
    model_files("all-MiniLM-L6-v2")
}

/// A model folder of `public/models/` that `cargo xtask setup` writes: `all-MiniLM-L6-v2`, or its
/// lighter copies `all-MiniLM-L6-v2-int8` (the page's default) and `all-MiniLM-L6-v2-f16`.
pub fn model_files(name: &str) -> CheckpointFiles {
    let dir = repo().join("public/models").join(name);
    let read = |f: &str| {
        std::fs::read(dir.join(f)).unwrap_or_else(|e| {
            panic!("{}/{f}: {e}. Run `cargo xtask setup` to fetch the default model.", dir.display())
        })
    };
    CheckpointFiles {
        config_json: read("config.json"),
        weights: read("model.safetensors"),
        tokenizer_json: Some(read("tokenizer.json")),
        vocab_txt: None,
    }
}

pub fn minilm(device: &Device) -> LoadedModel {
    checkpoint::load(minilm_files(), device).expect("the default model loads")
}

/// `tests/fixtures/minilm_parity.json`, written by `scripts/make_parity_fixtures.py`.
pub fn fixtures() -> Value {
    let path = repo().join("tests/fixtures/minilm_parity.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("fixture JSON")
}

pub fn floats(v: &Value) -> Vec<f32> {
    match v {
        Value::Array(items) => items.iter().flat_map(floats).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap() as f32],
        other => panic!("not a number array: {other}"),
    }
}

/// A test model's folder (`tests/models/<name>`) read as a user's drop is, and its
/// `expected.json` (what PyTorch computed).
pub fn family_folder(name: &str) -> (CheckpointFiles, Value) {
    let files = test_model_drop(name);
    let expected = serde_json::from_slice(&std::fs::read(test_models_dir().join(name).join("expected.json")).unwrap()).unwrap();
    (bertbench_core::bert::folder::from_folder(files).unwrap_or_else(|e| panic!("{name}: {e}")), expected)
}

/// Asserts `got` is within 1e-4 of `want` everywhere (and as long).
pub fn close(what: &str, got: &[f32], want: &[f32]) {
    const TOLERANCE: f32 = 1e-4;
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let worst = got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(worst <= TOLERANCE, "{what}: max error {worst} > {TOLERANCE}");
}

pub fn ints(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// Largest absolute difference; panics on a length mismatch.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs()))
}

/// Drives a fine-tuning run to its end; returns its evaluations.
pub fn finish(tuner: &mut bertbench_core::train::FineTuner) -> Vec<bertbench_core::train::EvalReport> {
    use bertbench_core::train::Event;
    let mut evals = Vec::new();
    loop {
        match pollster::block_on(tuner.advance()).unwrap() {
            Event::Finished => return evals,
            Event::Evaluated(r) => evals.push(*r),
            _ => {}
        }
    }
}

/// Held by every test that initialises or trains a model: burn's device generator (weight
/// initialisation, dropout) is shared by every thread of the process.
pub fn device_rng() -> std::sync::MutexGuard<'static, ()> {
    static DEVICE_RNG: std::sync::Mutex<()> = std::sync::Mutex::new(());
    DEVICE_RNG.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
