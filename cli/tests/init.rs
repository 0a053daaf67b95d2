//! The command line, run as a user runs it: `bertbench init` writes a Hugging Face folder that
//! the engine loads back with the preset's shape and the tokenizer it was given.

use std::path::Path;
use std::process::Command;

use bertbench_core::bert::checkpoint::{self, CheckpointFiles};
use bertbench_core::burn::prelude::Device;

#[test]
fn init_writes_a_tiny_bert_that_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let source = root.join("public/models/all-MiniLM-L6-v2");
    assert!(source.join("tokenizer.json").exists(), "{} is missing: run `cargo xtask setup`", source.display());
    let out = std::env::temp_dir().join(format!("bertbench-cli-init-{}", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_bertbench"))
        .args(["init", "--preset", "tiny", "--seed", "3", "--tokenizer-from"])
        .arg(&source)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stderr).contains("bert-tiny"), "{}", String::from_utf8_lossy(&run.stderr));
    let read = |f: &str| std::fs::read(out.join(f)).unwrap();
    let files = CheckpointFiles { config_json: read("config.json"), weights: read("model.safetensors"), tokenizer_json: Some(read("tokenizer.json")), vocab_txt: None };
    let loaded = checkpoint::load(files, &Device::flex()).unwrap();
    assert_eq!((loaded.config.num_hidden_layers, loaded.config.hidden_size, loaded.config.num_attention_heads), (2, 128, 2));
    assert_eq!(loaded.tokenizer.encode("hello world").unwrap().tokens.len(), 4);
    let bad = Command::new(env!("CARGO_BIN_EXE_bertbench")).args(["init", "--preset", "enormous", "--tokenizer-from"]).arg(&source).arg("--out").arg(&out).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--preset must be one of"), "{}", String::from_utf8_lossy(&bad.stderr));
    std::fs::remove_dir_all(&out).ok();
}
