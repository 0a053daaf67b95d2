//! `bertbench`: the engine of the web page, natively.
//!
//! ```text
//! bertbench init --preset tiny --tokenizer-from DIR --out DIR [--seed N]
//!     a randomly initialised BERT of a preset size as a Hugging Face folder
//! bertbench embed --model DIR [--backend cpu|wgpu] [--pooling mean|cls] TEXT...
//!     one mean-pooled (or [CLS]) vector per text, as JSON lines
//! bertbench check-device
//!     the tiny-model comparison of wgpu against the CPU that the page runs, then the same on
//!     tiny ALBERT, MPNet, ModernBERT and DeBERTa-v3 models (their own blocks)
//! bertbench bench --model DIR --data TSV [--backend cpu|wgpu] [--n 256] [--batch 32] [--max-len 512]
//!     embedding throughput on the first N sentences of a TSV (first column), as a table
//! bertbench finetune --model DIR --train FILE [--valid FILE] [--task classify|multilabel|tag|qa|similarity|choice]
//!     [--encoder bi|cross] [--loss cosine|contrastive] [--pieces first|all] [--mode head|full|ftu]
//!     [--pooling mean|cls|pooler] [--layers last|second|sum4|cat4] [--max-len 64 (qa: 192)] [--stride max-len/3]
//!     [--batch 32] [--lr 5e-5] [--epochs 2] [--head-lr 5e-3] [--head-epochs 20]
//!     [--seed 42] [--dropout 0.1] [--group-by-length true|false] [--backend cpu|wgpu] [--out DIR] [--max-steps N]
//!     [--gradient-checkpointing true|false] [--checkpoint-dir DIR] [--resume true]
//!     [--keep-layers N] [--teacher DIR] [--temperature 2] [--soft-weight 0.5]
//!     [--label-columns a,b,c | --label-list COLUMN [--separator ;]] [--class-names README.md|dataset_info.json]
//!     the page's fine-tuning run, natively, driven by the same session (checkpoint cadence),
//!     starting from the studio's recipe for the task (qa: full fine-tuning, batch 16,
//!     lr 1.5e-4, 5 epochs; tag: full, batch 16, lr 1e-4, 5 epochs; choice: full, batch 16,
//!     3 epochs; pairs read together and similarity: full, batch 16, 2 epochs; single texts:
//!     the head alone on the frozen encoder, 20 epochs), which
//!     the options above change: a classifier of texts, or of pairs of texts when the table
//!     has pair columns (classify); any number of labels per text, from 0/1 columns or a list
//!     per text (multilabel; binary cross-entropy, micro and macro F1 at a threshold chosen on
//!     the validation set); a tagger of words, CoNLL or JSON Lines, scored by entity
//!     F1 (tag; --pieces: the pieces of a word the loss reads); extractive question answering
//!     on SQuAD files (qa; windows of --max-len tokens sharing --stride; exact match and F1);
//!     scored pairs of texts (similarity; --encoder bi, each text alone, or cross, the pair
//!     together; --loss contrastive for a bi-encoder on two-valued labels; Spearman and
//!     Pearson); multiple choice (choice; JSON Lines with question or context, endings and
//!     label, or SWAG's CSV; full fine-tuning, batch 16, 3 epochs; accuracy over questions).
//!     --class-names names integer labels (classify, multilabel, tag) from a Hub dataset's
//!     README front matter or the dataset_info.json `datasets` saves.
//!     Without --valid a fifth of the training file is held out (seed 13), as the
//!     studio does. Evaluations and timings as a table, and the model exported with --out
//!     as the page exports it (the family's own *ForSequenceClassification,
//!     *ForTokenClassification, *ForQuestionAnswering or *ForMultipleChoice where it computes the same, else with
//!     modelling code; a bi-encoder as a sentence-transformers folder); --max-steps N stops
//!     after N steps and prints the mean step time (after 2 warm-up steps), for benchmarks;
//!     --checkpoint-dir writes the run's snapshot there at each epoch's end (at most one per
//!     15 s) and every 2 minutes, and --resume true continues the snapshot found there;
//!     --keep-layers N trains a student of N of the model's layers, spaced evenly (DistilBERT's
//!     start), on the gold labels alone or, with --teacher (a classifier folder of the same
//!     labels), on the teacher's probabilities too (knowledge distillation; classify only)
//! bertbench pretrain --corpus TXT --tokenizer-from DIR [--preset tiny] [--epochs 3]
//!     [--batch 32] [--max-len 64] [--lr 1e-3] [--pair nsp|sop] [--objective mlm|electra]
//!     [--masking dynamic|static] [--minutes M] [--every 50] [--seed 42] [--backend cpu|wgpu]
//!     [PROBE TEXT WITH [MASK]...]
//!     masked-language-model pretraining from scratch with the tokenizer of DIR (or ELECTRA's
//!     replaced-token detection: a generator a quarter as wide fills the masks): MLM (and
//!     NSP/SOP or replaced-token) loss, accuracy and tokens/s every N steps as a table, and the probes' top-3
//! bertbench classify --model DIR TEXT...
//!     class probabilities from an exported classifier folder, as a JSON array
//!     (`scripts/check_classifier_with_transformers.py` reads it)
//! ```
//!
//! `--backend`: `cpu` is burn's `flex` backend (SIMD, all cores; it replaces the deprecated
//! ndarray backend), `wgpu` any GPU through Vulkan/Metal/DX12 (or Mesa's lavapipe on a CPU), and
//! `cuda` an NVIDIA GPU when built with `--features cuda`.
//!
//! This file holds the small commands and what they share; `finetune.rs` the fine-tuning run,
//! with one file per task in `finetune/`; `pretrain.rs` the MLM pretraining.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use bertbench_core::Pooling;
use bertbench_core::analysis::embed::EmbedOptions;
use bertbench_core::bert::checkpoint::{self, CheckpointFiles};
use bertbench_core::bert::config::Preset;
use bertbench_core::bert::folder;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::burn::prelude::Device;
use bertbench_core::device_check::{check_config, compare_devices_on, family_check_configs};
use bertbench_core::tasks::classification;

mod finetune;
mod pretrain;

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("init") => init(&args[1..]),
        Some("embed") => embed(&args[1..]),
        Some("check-device") => check_device(),
        Some("bench") => bench(&args[1..]),
        Some("finetune") => finetune::finetune(&args[1..]),
        Some("classify") => classify(&args[1..]),
        Some("pretrain") => pretrain::pretrain(&args[1..]),
        _ => Err("usage: bertbench <init | embed | check-device | bench | finetune | pretrain | classify> (see the source's header)".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bertbench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--name value` pairs and the remaining positional arguments.
pub(crate) struct Args {
    named: Vec<(String, String)>,
    positional: Vec<String>,
}

impl Args {
    pub(crate) fn parse(args: &[String]) -> Result<Self> {
        let (mut named, mut positional) = (Vec::new(), Vec::new());
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if let Some(name) = a.strip_prefix("--") {
                let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                named.push((name.to_string(), value.clone()));
            } else {
                positional.push(a.clone());
            }
        }
        Ok(Self { named, positional })
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.named.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub(crate) fn require(&self, name: &str) -> Result<&str> {
        self.get(name).ok_or_else(|| format!("--{name} is required"))
    }
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

pub(crate) fn read_optional(path: &Path) -> Option<Vec<u8>> {
    fs::read(path).ok()
}

fn init(args: &[String]) -> Result {
    let args = Args::parse(args)?;
    let preset = Preset::ALL
        .into_iter()
        .find(|p| p.name() == format!("bert-{}", args.get("preset").unwrap_or("tiny")))
        .ok_or("--preset must be one of tiny, mini, small, medium, base, large")?;
    let tokenizer_dir = PathBuf::from(args.require("tokenizer-from")?);
    let out = PathBuf::from(args.require("out")?);
    let seed: u64 = args.get("seed").unwrap_or("0").parse().map_err(|_| "--seed must be a number")?;

    let tokenizer_json = read(&tokenizer_dir.join("tokenizer.json"))?;
    let vocab_size = checkpoint_vocab_size(&tokenizer_dir)?;
    let config = preset.config(vocab_size);
    let device = Device::flex();
    device.seed(seed);
    let model = BertModelConfig::new(config.clone()).init(&device);
    let weights = checkpoint::save_weights(&model).map_err(|e| e.to_string())?;

    fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    fs::write(out.join("config.json"), config.to_hf_json()).map_err(|e| e.to_string())?;
    fs::write(out.join("model.safetensors"), weights).map_err(|e| e.to_string())?;
    fs::write(out.join("tokenizer.json"), tokenizer_json).map_err(|e| e.to_string())?;
    eprintln!(
        "{}: {} parameters, random weights (seed {seed}), written to {}",
        preset.name(),
        config.num_params(true),
        out.display()
    );
    Ok(())
}

fn checkpoint_vocab_size(dir: &Path) -> Result<usize> {
    let config = read(&dir.join("config.json"))?;
    let config = bertbench_core::BertConfig::from_json_bytes(&config).map_err(|e| e.to_string())?;
    Ok(config.vocab_size)
}

pub(crate) fn device(name: &str) -> Result<Device> {
    match name {
        "cpu" => Ok(Device::flex()),
        "wgpu" => Device::wgpu_options().init().map_err(|e| format!("no wgpu device: {e}")),
        #[cfg(feature = "cuda")]
        "cuda" => Ok(Device::cuda(0)),
        #[cfg(not(feature = "cuda"))]
        "cuda" => Err("this bertbench was built without CUDA: build it with `--features cuda`".into()),
        other => Err(format!("unknown backend {other}; use cpu, wgpu or cuda")),
    }
}

/// A Hugging Face model folder of any supported family and format (see
/// `bertbench_core::bert::folder`).
pub(crate) fn folder_files(dir: &Path) -> Result<CheckpointFiles> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_file() {
            files.push((path.file_name().unwrap_or_default().to_string_lossy().into_owned(), read(&path)?));
        }
    }
    folder::from_folder(files).map_err(|e| format!("{}: {e}", dir.display()))
}

pub(crate) fn load_dir(dir: &Path, device: &Device) -> Result<bertbench_core::LoadedModel> {
    checkpoint::load(folder_files(dir)?, device).map_err(|e| e.to_string())
}

fn bench(args: &[String]) -> Result {
    let args = Args::parse(args)?;
    let backend = args.get("backend").unwrap_or("cpu");
    let device = device(backend)?;
    let n: usize = args.get("n").unwrap_or("256").parse().map_err(|_| "--n must be a number")?;
    let batch: usize = args.get("batch").unwrap_or("32").parse().map_err(|_| "--batch must be a number")?;
    let data = fs::read_to_string(args.require("data")?).map_err(|e| e.to_string())?;
    let texts: Vec<String> = data.lines().skip(1).filter_map(|l| l.split('\t').next()).take(n).map(String::from).collect();

    let start = Instant::now();
    let mut bert = load_dir(Path::new(args.require("model")?), &device)?;
    let load = start.elapsed().as_secs_f64();
    if let Some(max_len) = args.get("max-len") {
        bert.tokenizer = bert.tokenizer.with_max_len(max_len.parse().map_err(|_| "--max-len must be a number")?);
    }
    let options = EmbedOptions { batch_size: batch, ..Default::default() };
    // One warm-up batch (kernel compilation on wgpu), then the timed run.
    pollster::block_on(bert.embed(&texts[..batch.min(texts.len())], options, &device)).map_err(|e| e.to_string())?;
    let start = Instant::now();
    pollster::block_on(bert.embed(&texts, options, &device)).map_err(|e| e.to_string())?;
    let secs = start.elapsed().as_secs_f64();
    println!("| backend | model load | sentences | batch | time | sentences/s |");
    println!("|---|---|---|---|---|---|");
    println!("| native {backend} | {load:.2} s | {} | {batch} | {secs:.2} s | {:.1} |", texts.len(), texts.len() as f64 / secs);
    Ok(())
}

fn embed(args: &[String]) -> Result {
    let args = Args::parse(args)?;
    let dir = PathBuf::from(args.require("model")?);
    let device = device(args.get("backend").unwrap_or("cpu"))?;
    let pooling = match args.get("pooling").unwrap_or("mean") {
        "mean" => Pooling::Mean,
        "cls" => Pooling::Cls,
        other => return Err(format!("unknown pooling {other}; use mean or cls")),
    };
    let bert = load_dir(&dir, &device)?;
    let options = EmbedOptions { pooling, ..Default::default() };
    let out = pollster::block_on(bert.embed(&args.positional, options, &device)).map_err(|e| e.to_string())?;
    for (text, v) in args.positional.iter().zip(out.vectors) {
        println!("{}", serde_json::json!({ "text": text, "embedding": v }));
    }
    Ok(())
}

fn check_device() -> Result {
    let gpu = device("wgpu")?;
    // BERT-tiny as the page checks it, then the tiny models of the families whose blocks it does
    // not exercise (shared layers, relative bias, rotary positions and local windows,
    // disentangled attention), each keyed by its `model_type`.
    let mut reports = serde_json::Map::new();
    let mut failed = Vec::new();
    for (i, config) in std::iter::once(check_config()).chain(family_check_configs()).enumerate() {
        let name = if i == 0 { "bert-tiny".to_string() } else { config.model_type.model_type().to_string() };
        let report = pollster::block_on(compare_devices_on(&Device::flex(), &gpu, 42, config)).map_err(|e| format!("{name}: {e}"))?;
        if !report.passed {
            failed.push(name.clone());
        }
        reports.insert(name, serde_json::to_value(&report).expect("report serialises"));
    }
    println!("{}", serde_json::to_string_pretty(&reports).expect("reports serialise"));
    if failed.is_empty() { Ok(()) } else { Err(format!("wgpu disagrees with the CPU on {}", failed.join(", "))) }
}

/// `--name`'s value, or `default` without one.
pub(crate) fn parse<T: std::str::FromStr>(args: &Args, name: &str, default: T) -> Result<T> {
    match args.get(name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| format!("--{name}: {v:?} is not a valid value")),
    }
}

fn classify(args: &[String]) -> Result {
    let args = Args::parse(args)?;
    let dir = PathBuf::from(args.require("model")?);
    let device = Device::flex();
    let files = folder_files(&dir)?;
    let loaded = classification::load_classifier(files, read_optional(&dir.join(classification::HEAD_FILE)), &device).map_err(|e| e.to_string())?;
    let encoded = args
        .positional
        .iter()
        .map(|t| loaded.tokenizer.encode(t).map_err(|e| format!("{t:?}: {e}")))
        .collect::<Result<Vec<_>>>()?;
    let logits = pollster::block_on(classification::predict(&loaded.model, classification::Scoring::Raw, &encoded, loaded.tokenizer.pad_id, 32, &device))
        .map_err(|e| e.to_string())?;
    // The scores transformers' text-classification pipeline gives, and which function made them;
    // a head of one output's raw score and its sigmoid beside them, whichever the pipeline gives.
    let scoring = loaded.meta.pipeline_scoring();
    let rows: Vec<_> = args
        .positional
        .iter()
        .zip(logits)
        .map(|(text, logits)| {
            let mut row = serde_json::json!({ "text": text, "pair": null, "labels": loaded.meta.labels, "function": scoring.name(), "probs": scoring.apply(&logits) });
            if let [score] = logits[..] {
                row["score"] = score.into();
                row["sigmoid"] = classification::sigmoid(score).into();
            }
            // A multi-label head's decision: the labels at its threshold (its run's, else 0.5).
            if loaded.meta.multi_label() {
                let threshold = loaded.meta.threshold.unwrap_or(0.5);
                let given: Vec<&String> = loaded.meta.labels.iter().zip(scoring.apply(&logits)).filter(|(_, p)| *p >= threshold).map(|(l, _)| l).collect();
                row["threshold"] = threshold.into();
                row["given"] = serde_json::json!(given);
            }
            row
        })
        .collect();
    println!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    Ok(())
}
