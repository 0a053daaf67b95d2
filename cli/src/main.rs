//! `bertbench`: the engine of the web page, natively.
//!
//! ```text
//! bertbench init --preset tiny --tokenizer-from DIR --out DIR [--seed N]
//!     a randomly initialised BERT of a preset size as a Hugging Face folder
//! bertbench embed --model DIR [--backend cpu|wgpu] [--pooling mean|cls] TEXT...
//!     one mean-pooled (or [CLS]) vector per text, as JSON lines
//! bertbench check-device
//!     the tiny-model comparison of wgpu against the CPU that the page runs
//! bertbench bench --model DIR --data TSV [--backend cpu|wgpu] [--n 256] [--batch 32] [--max-len 512]
//!     embedding throughput on the first N sentences of a TSV (first column), as a table
//! bertbench finetune --model DIR --train FILE [--valid FILE] [--task classify|qa] [--mode head|full|ftu]
//!     [--pooling mean|cls|pooler] [--layers last|second|sum4|cat4] [--max-len 64 (qa: 192)] [--stride max-len/3]
//!     [--batch 32] [--lr 5e-5] [--epochs 2] [--head-lr 1e-3] [--head-epochs 10]
//!     [--seed 42] [--dropout 0.1] [--group-by-length true|false] [--backend cpu|wgpu] [--out DIR] [--max-steps N]
//!     [--gradient-checkpointing true|false] [--checkpoint-dir DIR] [--resume true]
//!     the page's fine-tuning run, natively, driven by the same session (checkpoint cadence):
//!     a sentence classifier, or with --task qa extractive question answering on SQuAD files
//!     (windows of --max-len tokens sharing --stride; scored by exact match and F1);
//!     evaluations and timings as a table, and the classifier exported as a Hugging Face folder
//!     with --out; --max-steps N stops after N steps and prints the mean step time (after 2
//!     warm-up steps), for benchmarks; --checkpoint-dir writes the run's snapshot there at each
//!     epoch's end (at most one per 15 s) and every 2 minutes, and --resume true continues the
//!     snapshot found there
//! bertbench pretrain --corpus TXT --tokenizer-from DIR [--preset tiny] [--epochs 3]
//!     [--batch 32] [--max-len 64] [--lr 1e-3] [--pair nsp|sop] [--masking dynamic|static]
//!     [--minutes M] [--every 50] [--seed 42] [--backend cpu|wgpu] [PROBE TEXT WITH [MASK]...]
//!     masked-language-model pretraining from scratch with the tokenizer of DIR: MLM (and
//!     NSP/SOP) loss, accuracy and tokens/s every N steps as a table, and the probes' top-3
//! bertbench classify --model DIR TEXT...
//!     class probabilities from an exported classifier folder, as a JSON array
//!     (`scripts/check_classifier_with_transformers.py` reads it)
//! ```
//!
//! `--backend`: `cpu` is burn's `flex` backend (SIMD, all cores; it replaces the deprecated
//! ndarray backend), `wgpu` any GPU through Vulkan/Metal/DX12 (or Mesa's lavapipe on a CPU), and
//! `cuda` an NVIDIA GPU when built with `--features cuda`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use bertbench_core::burn::prelude::Device;
use bertbench_core::bert::checkpoint::{self, CheckpointFiles};
use bertbench_core::bert::folder;
use bertbench_core::bert::config::Preset;
use bertbench_core::device_check::compare_devices;
use bertbench_core::analysis::embed::EmbedOptions;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::Pooling;
use bertbench_core::tasks::classification::{self, FeatureLayers, FeatureSpec};
use bertbench_core::tasks::qa::{self, SpanConfig};
use bertbench_core::data;
use bertbench_core::train::{CheckpointPolicy, Ended, Event, FineTuneConfig, FineTuner, Host, Phase, Session, Snapshot, TrainMode, encode_examples, encode_questions};

type Result<T = ()> = std::result::Result<T, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("init") => init(&args[1..]),
        Some("embed") => embed(&args[1..]),
        Some("check-device") => check_device(),
        Some("bench") => bench(&args[1..]),
        Some("finetune") => finetune(&args[1..]),
        Some("classify") => classify(&args[1..]),
        Some("pretrain") => pretrain(&args[1..]),
        _ => Err("usage: bertbench <init | embed | check-device | bench | finetune | classify> (see the source's header)".into()),
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
struct Args {
    named: Vec<(String, String)>,
    positional: Vec<String>,
}

impl Args {
    fn parse(args: &[String]) -> Result<Self> {
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

    fn get(&self, name: &str) -> Option<&str> {
        self.named.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn require(&self, name: &str) -> Result<&str> {
        self.get(name).ok_or_else(|| format!("--{name} is required"))
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_optional(path: &Path) -> Option<Vec<u8>> {
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

fn device(name: &str) -> Result<Device> {
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
fn folder_files(dir: &Path) -> Result<CheckpointFiles> {
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

fn load_dir(dir: &Path, device: &Device) -> Result<bertbench_core::LoadedModel> {
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
    let report = pollster::block_on(compare_devices(&Device::flex(), &gpu, 42)).map_err(|e| e.to_string())?;
    println!("{}", serde_json::to_string_pretty(&report).expect("report serialises"));
    if report.passed { Ok(()) } else { Err("wgpu disagrees with the CPU".into()) }
}

fn parse<T: std::str::FromStr>(args: &Args, name: &str, default: T) -> Result<T> {
    match args.get(name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| format!("--{name}: {v:?} is not a valid value")),
    }
}

fn dataset(path: &str) -> Result<data::Dataset> {
    let bytes = read(Path::new(path))?;
    let table = data::parse_table(&bytes, Some(path)).map_err(|e| format!("{path}: {e}"))?;
    let map = data::guess_columns(&table);
    let set = data::to_examples(&table, &map).map_err(|e| format!("{path}: {e}"))?;
    if !set.skipped.is_empty() {
        eprintln!("{path}: skipped {} row(s), e.g. line {}: {}", set.skipped.len(), set.skipped[0].line, set.skipped[0].reason);
    }
    Ok(set)
}

/// A question-answering run's training and validation questions: `valid`'s, or a fifth of
/// `train`'s passages (seed 13), as the page splits them.
fn questions(train: &str, valid: Option<&str>) -> Result<(Vec<data::QaItem>, Vec<data::QaItem>)> {
    let read_qa = |path: &str| data::parse_qa(&read(Path::new(path))?, Some(path)).map_err(|e| format!("{path}: {e}"));
    let data = read_qa(train)?;
    if let Some(v) = valid {
        return Ok((data.items, read_qa(v)?.items));
    }
    let split = data.split(0.2, 13).map_err(|e| e.to_string())?;
    let pick = |idx: &[usize]| idx.iter().map(|&i| data.items[i].clone()).collect::<Vec<_>>();
    Ok((pick(&split.train), pick(&split.valid)))
}

fn finetune(args: &[String]) -> Result {
    let args = Args::parse(args)?;
    let backend = args.get("backend").unwrap_or("cpu");
    let mut device = device(backend)?.autodiff();
    // burn's gradient checkpointing: memory-bound operations are recomputed in the backward pass
    // instead of kept, for less memory at some speed.
    if parse(&args, "gradient-checkpointing", false)? {
        device = device.gradient_checkpointing();
    }
    let mode = match args.get("mode").unwrap_or("head") {
        "head" => TrainMode::HeadOnly,
        "full" => TrainMode::Full,
        "ftu" => TrainMode::FreezeThenUnfreeze,
        other => return Err(format!("unknown mode {other}; use head, full or ftu")),
    };
    let pooling = match args.get("pooling").unwrap_or("mean") {
        "mean" => Pooling::Mean,
        "cls" => Pooling::Cls,
        "pooler" => Pooling::Pooler,
        other => return Err(format!("unknown pooling {other}; use mean, cls or pooler")),
    };
    let layers = match args.get("layers").unwrap_or("last") {
        "last" => FeatureLayers::Last,
        "second" => FeatureLayers::SecondToLast,
        "sum4" => FeatureLayers::SumLastFour,
        "cat4" => FeatureLayers::ConcatLastFour,
        other => return Err(format!("unknown layers {other}; use last, second, sum4 or cat4")),
    };
    let qa = match args.get("task").unwrap_or("classify") {
        "classify" => false,
        "qa" => true,
        other => return Err(format!("unknown task {other}; use classify or qa")),
    };
    let features = if qa { FeatureSpec { layers, ..FeatureSpec::spans() } } else { FeatureSpec { pooling, layers, ..Default::default() } };
    let defaults = FineTuneConfig::new();
    let config = FineTuneConfig::new()
        .with_mode(mode)
        .with_features(features)
        .with_batch_size(parse(&args, "batch", defaults.batch_size)?)
        .with_learning_rate(parse(&args, "lr", defaults.learning_rate)?)
        .with_epochs(parse(&args, "epochs", defaults.epochs)?)
        .with_head_learning_rate(parse(&args, "head-lr", defaults.head_learning_rate)?)
        .with_head_epochs(parse(&args, "head-epochs", defaults.head_epochs)?)
        .with_seed(parse(&args, "seed", defaults.seed)?)
        .with_dropout(parse(&args, "dropout", defaults.dropout)?)
        .with_group_by_length(parse(&args, "group-by-length", defaults.group_by_length)?);
    // A question-answering run's window (the page's default, 192) and stride (a third of it).
    let max_len: usize = parse(&args, "max-len", if qa { 192 } else { 64 })?;
    let spans = SpanConfig::new().with_max_len(max_len).with_stride(parse(&args, "stride", max_len / 3)?);
    let config = config.with_spans(spans);
    let max_steps: usize = parse(&args, "max-steps", usize::MAX)?;

    let dir = PathBuf::from(args.require("model")?);
    let bert = load_dir(&dir, &device)?;
    let tokenizer = bert.tokenizer.with_max_len(max_len);
    let (labels, train, valid) = if qa {
        let (train, valid) = questions(args.require("train")?, args.get("valid"))?;
        let (train, lost) = encode_questions(&tokenizer, &train, &spans).map_err(|e| e.to_string())?;
        let (valid, _) = encode_questions(&tokenizer, &valid, &spans).map_err(|e| e.to_string())?;
        if lost > 0 {
            eprintln!("{lost} training question(s) have their answer in no window whole: they learn only \"no answer\"");
        }
        (qa::LABELS.iter().map(|l| l.to_string()).collect::<Vec<_>>(), train, valid)
    } else {
        let train_set = dataset(args.require("train")?)?;
        let (train, valid) = match args.get("valid") {
            Some(v) => (train_set.examples.clone(), dataset(v)?.examples),
            None => {
                let split = train_set.split(0.2, 13).map_err(|e| e.to_string())?;
                let pick = |idx: &[usize]| idx.iter().map(|&i| train_set.examples[i].clone()).collect::<Vec<_>>();
                (pick(&split.train), pick(&split.valid))
            }
        };
        let labels = train_set.labels.clone();
        let train = encode_examples(&tokenizer, &train, &labels).map_err(|e| e.to_string())?;
        let valid = encode_examples(&tokenizer, &valid, &labels).map_err(|e| e.to_string())?;
        (labels, train, valid)
    };
    let what = if qa { "windows" } else { "examples" };
    eprintln!("{} training / {} validation {what}, labels {:?}, {}", train.len(), valid.len(), labels, mode.label());
    let mut tuner = FineTuner::new(bert.model, tokenizer.pad_id, max_len, labels, train, valid, config, &device).map_err(|e| e.to_string())?;
    let checkpoint_dir = args.get("checkpoint-dir").map(PathBuf::from);
    if parse(&args, "resume", false)? {
        let dir = checkpoint_dir.as_ref().ok_or("--resume needs --checkpoint-dir")?;
        tuner = tuner.restore(read_snapshot(dir)?).map_err(|e| e.to_string())?;
        eprintln!("resumed at step {} from {}", tuner.progress().step, dir.display());
    }

    let start = Instant::now();
    let mut stage_start = Instant::now();
    let mut stage_steps = 0usize;
    let mut rows = Vec::new();
    let mut feature_secs = 0.0;
    let mut step_times = Vec::new();
    let mut step_losses = Vec::new();
    let mut last_step = Instant::now();
    let host = Native { start: Instant::now(), stop: std::cell::Cell::new(false) };
    let policy = if checkpoint_dir.is_some() { CheckpointPolicy::default() } else { CheckpointPolicy::NEVER };
    let ended = pollster::block_on(Session::new(policy).drive(
        &mut tuner,
        &host,
        async |_: &FineTuner, event: Event| {
            if let Event::Step(point) = &event {
                step_times.push(last_step.elapsed().as_secs_f64());
                step_losses.push(format!("{:.6}", point.loss));
                if step_times.len() >= max_steps {
                    host.stop.set(true);
                }
            }
            last_step = Instant::now();
            match event {
                Event::PhaseStarted { phase, .. } => {
                    if phase == Phase::Head {
                        feature_secs = start.elapsed().as_secs_f64();
                    }
                    stage_start = Instant::now();
                    stage_steps = 0;
                }
                Event::Step(_) => stage_steps += 1,
                Event::Evaluated(r) => {
                    let secs = stage_start.elapsed().as_secs_f64();
                    match &r.answers {
                        Some(a) => eprintln!(
                            "{:?} epoch {:.2}: train loss {:.4}, valid loss {:.4}, exact match {:.2}, F1 {:.2}",
                            r.phase, r.epoch, r.train_loss, r.valid_loss, a.all.exact * 100.0, a.all.f1 * 100.0
                        ),
                        None => eprintln!("{:?} epoch {:.2}: train loss {:.4}, valid loss {:.4}, valid accuracy {:.2}%", r.phase, r.epoch, r.train_loss, r.valid_loss, r.metrics.accuracy * 100.0),
                    }
                    rows.push((r, stage_steps as f64 / secs.max(1e-9)));
                }
                _ => {}
            }
        },
        async |tuner: &FineTuner| {
            let Some(dir) = &checkpoint_dir else { return };
            match write_snapshot(tuner, dir).await {
                Ok(()) => eprintln!("checkpoint at step {} in {}", tuner.progress().step, dir.display()),
                Err(e) => eprintln!("checkpoint failed: {e}"),
            }
        },
    ))
    .map_err(|e| e.to_string())?;
    if ended == Ended::Cancelled {
        let timed = &step_times[2.min(step_times.len() - 1)..];
        println!(
            "{}: mean step time {:.3} s over {} steps (after 2 warm-up steps), batch {}, max length {max_len}, native {backend}; losses {}",
            mode.label(),
            timed.iter().sum::<f64>() / timed.len() as f64,
            timed.len(),
            tuner.config().batch_size,
            step_losses.join(" ")
        );
        return Ok(());
    }
    let total = start.elapsed().as_secs_f64();
    if qa {
        println!("| stage | epoch | step | train loss | valid loss | exact match | F1 | steps/s |");
    } else {
        println!("| stage | epoch | step | train loss | valid loss | valid accuracy | macro-F1 | steps/s |");
    }
    println!("|---|---|---|---|---|---|---|---|");
    for (r, rate) in &rows {
        let (a, b) = match &r.answers {
            Some(a) => (format!("{:.2}", a.all.exact * 100.0), format!("{:.2}", a.all.f1 * 100.0)),
            None => (format!("{:.2}%", r.metrics.accuracy * 100.0), format!("{:.4}", r.metrics.macro_f1)),
        };
        println!("| {:?} | {:.2} | {} | {:.4} | {:.4} | {a} | {b} | {rate:.2} |", r.phase, r.epoch, r.step, r.train_loss, r.valid_loss);
    }
    println!();
    let best = match tuner.best_answers() {
        Some((a, _)) => format!("best validation exact match {:.2}, F1 {:.2}", a.all.exact * 100.0, a.all.f1 * 100.0),
        None => format!("best validation accuracy {:.2}%", tuner.best_accuracy().unwrap_or(0.0) * 100.0),
    };
    println!("{best} · features {feature_secs:.1} s · total {total:.1} s · native {backend}");
    if let Some(out) = args.get("out") {
        let out = PathBuf::from(out);
        let model = tuner.best_model();
        let files = classification::export(&bert.config, &model, &tuner.meta(), &bert.tokenizer, read_optional(&dir.join("tokenizer.json")).as_deref(), read_optional(&dir.join("vocab.txt")).as_deref())
            .map_err(|e| e.to_string())?;
        fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        for (name, bytes) in files {
            fs::write(out.join(&name), bytes).map_err(|e| format!("{name}: {e}"))?;
        }
        eprintln!("exported to {}", out.display());
    }
    Ok(())
}

/// The command line as a session's host: a monotonic clock, never paused, stopped by
/// `--max-steps`.
struct Native {
    start: Instant,
    stop: std::cell::Cell<bool>,
}

impl Host for Native {
    fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1000.0
    }
    fn cancelled(&self) -> bool {
        self.stop.get()
    }
    async fn until_resumed(&self) {}
    async fn breathe(&self) {}
}

/// Writes `tuner`'s snapshot (with AdamW's moments) into `dir`, replacing the last one: into a
/// fresh folder first, then renamed, so a crash mid-write leaves the older snapshot whole.
async fn write_snapshot(tuner: &FineTuner, dir: &Path) -> Result {
    let files = tuner.snapshot(true).await.map_err(|e| e.to_string())?.into_files();
    let fresh = dir.with_extension("writing");
    let _ = fs::remove_dir_all(&fresh);
    fs::create_dir_all(&fresh).map_err(|e| format!("{}: {e}", fresh.display()))?;
    let mut names = Vec::new();
    for (name, bytes) in files {
        fs::write(fresh.join(&name), bytes).map_err(|e| format!("{name}: {e}"))?;
        names.push(name);
    }
    fs::write(fresh.join("files.txt"), names.join("\n")).map_err(|e| e.to_string())?;
    let _ = fs::remove_dir_all(dir);
    fs::rename(&fresh, dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The snapshot [`write_snapshot`] left in `dir`.
fn read_snapshot(dir: &Path) -> Result<Snapshot> {
    let names = fs::read_to_string(dir.join("files.txt")).map_err(|e| format!("no snapshot in {}: {e}", dir.display()))?;
    let files = names.lines().map(|n| Ok((n.to_string(), read(&dir.join(n))?))).collect::<Result<Vec<_>>>()?;
    Snapshot::from_files(files).map_err(|e| e.to_string())
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
    let probs = pollster::block_on(bertbench_core::tasks::classification::predict(&loaded.model, &encoded, loaded.tokenizer.pad_id, 32, &device))
        .map_err(|e| e.to_string())?;
    let rows: Vec<_> = args
        .positional
        .iter()
        .zip(probs)
        .map(|(text, p)| serde_json::json!({ "text": text, "pair": null, "probs": p }))
        .collect();
    println!("{}", serde_json::to_string_pretty(&rows).expect("rows serialise"));
    Ok(())
}

fn pretrain(args: &[String]) -> Result {
    use bertbench_core::tasks::masking::PairTask;
    use bertbench_core::tasks::pretraining::BertForPreTraining;
    use bertbench_core::train::{PretrainConfig, Pretrainer};
    use bertbench_core::tokenizer::BertTokenizer;

    let args = Args::parse(args)?;
    let backend = args.get("backend").unwrap_or("cpu");
    let device = device(backend)?.autodiff();
    let corpus_path = args.require("corpus")?;
    let text = String::from_utf8(read(Path::new(corpus_path))?).map_err(|_| format!("{corpus_path} is not UTF-8 text"))?;
    let lines: Vec<String> = text.lines().map(String::from).collect();
    let tokenizer_dir = PathBuf::from(args.require("tokenizer-from")?);
    let max_len: usize = parse(&args, "max-len", 64)?;
    let tokenizer = BertTokenizer::from_tokenizer_json(&read(&tokenizer_dir.join("tokenizer.json"))?, max_len).map_err(|e| e.to_string())?;
    let preset = Preset::ALL
        .into_iter()
        .find(|p| p.name() == format!("bert-{}", args.get("preset").unwrap_or("tiny")))
        .ok_or("--preset must be one of tiny, mini, small, medium, base, large")?;
    let pair_task = match args.get("pair") {
        None | Some("none") => None,
        Some("nsp") => Some(PairTask::Nsp),
        Some("sop") => Some(PairTask::Sop),
        Some(other) => return Err(format!("--pair {other}: use nsp, sop or none")),
    };
    let config = preset.config(tokenizer.vocab_size()).with_max_position_embeddings(max_len.max(16));
    let seed: u64 = parse(&args, "seed", 42)?;
    device.seed(seed);
    let model = BertForPreTraining::from_scratch(&config, pair_task.is_some(), &device);
    let run = PretrainConfig::new()
        .with_epochs(parse(&args, "epochs", 3)?)
        .with_batch_size(parse(&args, "batch", 32)?)
        .with_max_len(max_len)
        .with_learning_rate(parse(&args, "lr", 1e-3)?)
        .with_pair_task(pair_task)
        .with_dynamic_masking(args.get("masking").unwrap_or("dynamic") != "static")
        .with_seed(seed);
    let every: usize = parse(&args, "every", 50)?;
    let minutes: f64 = parse(&args, "minutes", f64::INFINITY)?;
    let mut trainer = Pretrainer::new(model, &tokenizer, lines, run, &device).map_err(|e| e.to_string())?;
    eprintln!("{}: {} parameters, {} steps planned, native {backend}", preset.name(), config.num_params(true), trainer.progress().1);
    println!("| step | epoch | minutes | MLM loss | MLM accuracy | pair loss | tokens/s |");
    println!("|---|---|---|---|---|---|---|");
    let start = Instant::now();
    let (mut window_start, mut sums, mut tokens, mut n) = (Instant::now(), (0f64, 0f64, 0f64), 0usize, 0usize);
    let probes = &args.positional;
    let show_probes = |trainer: &Pretrainer| -> Result {
        for p in probes {
            let fills = pollster::block_on(trainer.fill_mask(p, 3)).map_err(|e| e.to_string())?;
            let guesses: Vec<String> = fills
                .iter()
                .map(|f| f.top.iter().map(|(w, p)| format!("{w} {:.0}%", p * 100.0)).collect::<Vec<_>>().join(", "))
                .collect();
            eprintln!("    {p} → {}", guesses.join(" | "));
        }
        Ok(())
    };
    while let Some(step) = pollster::block_on(trainer.step()).map_err(|e| e.to_string())? {
        sums.0 += step.mlm_loss as f64;
        sums.1 += step.mlm_accuracy as f64;
        sums.2 += step.pair_loss.unwrap_or(0.0) as f64;
        tokens += step.tokens;
        n += 1;
        let out_of_time = start.elapsed().as_secs_f64() / 60.0 >= minutes;
        if n == every || step.step == step.total_steps || out_of_time {
            let secs = window_start.elapsed().as_secs_f64();
            println!(
                "| {} | {:.2} | {:.1} | {:.3} | {:.1}% | {} | {:.0} |",
                step.step,
                step.epoch,
                start.elapsed().as_secs_f64() / 60.0,
                sums.0 / n as f64,
                sums.1 / n as f64 * 100.0,
                if pair_task.is_some() { format!("{:.3}", sums.2 / n as f64) } else { "–".into() },
                tokens as f64 / secs.max(1e-9)
            );
            show_probes(&trainer)?;
            (window_start, sums, tokens, n) = (Instant::now(), (0.0, 0.0, 0.0), 0, 0);
        }
        if out_of_time {
            eprintln!("stopped after {minutes} minutes");
            break;
        }
    }
    Ok(())
}
