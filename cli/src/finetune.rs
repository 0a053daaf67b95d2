//! `bertbench finetune`: the page's fine-tuning run, natively. The same `FineTuner`, driven by
//! the same `Session` as the page's worker, on every task the studio trains: each task's file
//! reader, recipe, features and metrics are core's, as the studio sets them (one file per task
//! below); this file holds what they share: the options, the run, its table and the export.

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use bertbench_core::Pooling;
use bertbench_core::tasks::classification::{self, FeatureLayers, FeatureSpec, HeadTransform, Level};
use bertbench_core::tasks::qa::SpanConfig;
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::{CheckpointPolicy, Ended, EvalReport, Event, FineTuneConfig, FineTuner, Host, LabeledText, Phase, Session, Snapshot, TrainMode, start_encoder};

use crate::{Args, Result, device, load_dir, parse, read, read_optional};

mod answer;
mod choice;
mod classify;
mod distil;
mod multi_label;
mod similarity;
mod tag;

/// A task the command line trains, as the studio's task switch offers it: one file per task
/// below, each listed once in [`TASKS`].
trait CliTask: Sync {
    /// Its `--task` name.
    fn name(&self) -> &'static str;

    /// What its files hold, for a refusal that points to it ("questions over passages").
    fn holds(&self) -> &'static str;

    /// Whether its reader takes the file `path` holding `bytes`.
    fn reads(&self, bytes: &[u8], path: &str) -> bool;

    /// The options only it takes (any other task refuses them rather than ignore them).
    fn options(&self) -> &'static [&'static str] {
        &[]
    }

    /// What the model labels: the level whose recipe the run starts with (a similarity run's
    /// `--encoder` chooses it).
    fn level(&self, args: &Args) -> Result<Level>;

    /// The run's length in tokens unless `--max-len` says otherwise: the studio's.
    fn max_len(&self) -> usize {
        64
    }

    /// The features its head reads, given `--pooling` and `--layers`: the pooled text unless
    /// the task says otherwise.
    fn features(&self, _args: &Args, pooling: Pooling, layers: FeatureLayers) -> Result<FeatureSpec> {
        Ok(FeatureSpec { pooling, layers, ..Default::default() })
    }

    /// Reads and encodes its data (the training file, and `--valid` or a held-out share of
    /// it); the configuration as the data finishes it (a similarity run's kind and scale).
    fn units(&self, input: &Input, config: FineTuneConfig) -> Result<(FineTuneConfig, Units)>;

    /// Whether it trains students (`--keep-layers`, `--teacher`).
    fn students(&self) -> bool {
        false
    }

    /// The two metric columns of the table, and a row's values.
    fn columns(&self) -> [&'static str; 2];

    fn cells(&self, r: &EvalReport) -> [String; 2];

    /// What it says of each evaluation beyond its row.
    fn evaluated(&self, _r: &EvalReport) {}

    /// The best validation score, as a sentence.
    fn best(&self, tuner: &FineTuner) -> String;

    /// What it prints after the table, at the best weights.
    fn finished(&self, _tuner: &FineTuner) {}
}

/// The tasks, in the studio's order. A file one refuses is offered to the others from the last
/// to the first, so to classification last: the later tasks' files (pairs of texts with their
/// scores, say) are often also tables with a text column.
const TASKS: [&dyn CliTask; 6] = [&classify::Classify, &multi_label::MultiLabel, &tag::Tag, &answer::Answer, &similarity::Similarity, &choice::Choice];

/// The task `--task` names (classification without it), refusing another task's options.
fn task(args: &Args) -> Result<&'static dyn CliTask> {
    let name = args.get("task").unwrap_or("classify");
    let task = *TASKS.iter().find(|t| t.name() == name).ok_or_else(|| {
        let names: Vec<&str> = TASKS.iter().map(|t| t.name()).collect();
        let (last, first) = names.split_last().expect("tasks");
        format!("unknown task {name}; use {} or {last}", first.join(", "))
    })?;
    // An option of another task would be ignored: said instead.
    for other in TASKS.iter().filter(|t| t.name() != name) {
        if let Some(option) = other.options().iter().find(|o| args.get(o).is_some()) {
            return Err(format!("--{option} is for --task {}", other.name()));
        }
    }
    Ok(task)
}

/// What a task's [`CliTask::units`] reads.
struct Input<'a> {
    tokenizer: &'a BertTokenizer,
    /// The training file, and the validation file if given.
    train: &'a str,
    valid: Option<&'a str>,
    args: &'a Args,
    /// The level of [`CliTask::level`].
    level: Level,
}

/// A run's encoded units (texts, sentences, windows or pairs) and their label names.
struct Units {
    labels: Vec<String>,
    train: Vec<LabeledText>,
    valid: Vec<LabeledText>,
    /// What a unit is, for the log: "examples", "windows", ….
    what: &'static str,
    /// Pairs of texts read together: the run starts from the pair classifier's recipe.
    pairs_recipe: bool,
}

/// The share of the training file held out when no `--valid` file is given, and the split's
/// seed: the studio's defaults.
const VALID_FRACTION: f32 = 0.2;
const SPLIT_SEED: u64 = 13;

/// Picks `idx` out of `all`.
fn pick<T: Clone>(all: &[T], idx: &[usize]) -> Vec<T> {
    idx.iter().map(|&i| all[i].clone()).collect()
}

/// A data file's bytes, with its class ids named from `--class-names` (a Hub dataset's
/// `README.md`, or the `dataset_info.json` `datasets` saves) where given, said on stderr.
fn data_file(path: &str, args: &Args) -> Result<Vec<u8>> {
    let bytes = crate::read(std::path::Path::new(path))?;
    let Some(info) = args.get("class-names") else { return Ok(bytes) };
    let names = bertbench_core::data::ClassNames::from_file(&crate::read(std::path::Path::new(info))?, info).map_err(|e| format!("--class-names {info}: {e}"))?;
    let named = names.apply(&bytes, Some(path)).map_err(|e| format!("{path}: {e}"))?;
    if named.columns.is_empty() {
        let listed: Vec<&str> = names.columns.iter().map(|(c, _)| c.as_str()).collect();
        return Err(format!("{path}: no column of it is one that {} names ({}), or it has no header row", names.source, listed.join(", ")));
    }
    eprintln!("{path}: the class names of {} from {}", named.columns.join(", "), names.source);
    Ok(named.bytes)
}

/// A core error as the command line says it.
fn core_error(e: impl ToString) -> String {
    e.to_string()
}

/// Why `task`'s reader refused the file at `path` (`e`), and the task whose reader takes it,
/// when another's does: a SQuAD file given to the classifier, a CoNLL file to the similarity
/// model.
fn refused(task: &dyn CliTask, path: &str, bytes: &[u8], e: impl std::fmt::Display) -> String {
    match TASKS.iter().rev().find(|other| other.name() != task.name() && other.reads(bytes, path)) {
        Some(other) => format!("{path}: {e} It reads as {}: try --task {}.", other.holds(), other.name()),
        None => format!("{path}: {e}"),
    }
}

/// The run's configuration: the task's recipe (`FineTuneConfig::recipe`, the studio's), each
/// setting given on the command line in its place, and the task's features.
fn config(args: &Args, task: &dyn CliTask, level: Level, max_len: usize, pairs: bool) -> Result<FineTuneConfig> {
    let recipe = FineTuneConfig::recipe_for_data(level, pairs);
    let mode = match args.get("mode") {
        None => recipe.mode,
        Some("head") => TrainMode::HeadOnly,
        Some("full") => TrainMode::Full,
        Some("ftu") => TrainMode::FreezeThenUnfreeze,
        Some(other) => return Err(format!("unknown mode {other}; use head, full or ftu")),
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
    let features = task.features(args, pooling, layers)?;
    // A question-answering run's windows share a third of their tokens by default, as the
    // studio's do.
    let spans = SpanConfig::new().with_max_len(max_len).with_stride(parse(args, "stride", max_len / 3)?);
    Ok(recipe
        .clone()
        .with_mode(mode)
        .with_features(features)
        .with_batch_size(parse(args, "batch", recipe.batch_size)?)
        .with_learning_rate(parse(args, "lr", recipe.learning_rate)?)
        .with_epochs(parse(args, "epochs", recipe.epochs)?)
        .with_head_learning_rate(parse(args, "head-lr", recipe.head_learning_rate)?)
        .with_head_epochs(parse(args, "head-epochs", recipe.head_epochs)?)
        .with_seed(parse(args, "seed", recipe.seed)?)
        .with_dropout(parse(args, "dropout", recipe.dropout)?)
        .with_group_by_length(parse(args, "group-by-length", recipe.group_by_length)?)
        .with_spans(spans))
}

pub fn finetune(args: &[String]) -> Result {
    let args = Args::parse(args)?;
    let task = task(&args)?;
    let level = task.level(&args)?;
    let backend = args.get("backend").unwrap_or("cpu");
    let mut device = device(backend)?.autodiff();
    // burn's gradient checkpointing: memory-bound operations are recomputed in the backward pass
    // instead of kept, for less memory at some speed.
    if parse(&args, "gradient-checkpointing", false)? {
        device = device.gradient_checkpointing();
    }
    // The studio's lengths: 64 tokens, a question-answering window 192.
    let max_len: usize = parse(&args, "max-len", task.max_len())?;
    let config = config(&args, task, level, max_len, false)?;
    let max_steps: usize = parse(&args, "max-steps", usize::MAX)?;

    let dir = PathBuf::from(args.require("model")?);
    let bert = load_dir(&dir, &device)?;
    let tokenizer = bert.tokenizer.clone().with_max_len(max_len);
    let input = Input { tokenizer: &tokenizer, train: args.require("train")?, valid: args.get("valid"), args: &args, level };
    let (config, Units { labels, train, valid, what, pairs_recipe }) = task.units(&input, config)?;
    // Pairs of texts read together start from the pair classifier's recipe (the studio's too).
    let config = if pairs_recipe { self::config(&args, task, level, max_len, true)? } else { config };
    let mode = config.mode;
    eprintln!("{} training / {} validation {what}, labels {:?}, {}", train.len(), valid.len(), labels, mode.label());
    let head_weights = bert.head_weights.as_deref();
    // What the task's class adds on the encoder where the checkpoint lacks it (a pooler, for a
    // classifier on `[CLS]` + pooler), as the studio starts it.
    let fresh = bert.model.pooler.is_none();
    let model = start_encoder(bert.model, &bert.config, &config.features, head_weights, config.seed, &device).map_err(core_error)?;
    if fresh && model.pooler.is_some() {
        eprintln!("the checkpoint has no pooler: a fresh one of {} is trained, started as transformers starts it", bert.config.model_type.base_architecture().replace("Model", ""));
    }
    let (model, model_config, train, config) = distil::student(&args, task, model, bert.config, train, &labels, config)?;
    // ModernBERT's token and span classes apply its `head` to every token: the MLM head's where
    // the checkpoint has one (as transformers loads it), else a fresh one.
    let transform = HeadTransform::for_run(&model_config, config.features, head_weights, config.seed, &device).map_err(core_error)?;
    let mut tuner = FineTuner::new(model, tokenizer.pad_id, max_len, labels, train, valid, config, &device)
        .and_then(|tuner| tuner.with_head_transform(transform))
        .map_err(core_error)?;
    let checkpoint_dir = args.get("checkpoint-dir").map(PathBuf::from);
    if parse(&args, "resume", false)? {
        let dir = checkpoint_dir.as_ref().ok_or("--resume needs --checkpoint-dir")?;
        tuner = tuner.restore(read_snapshot(dir)?).map_err(core_error)?;
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
    let host = Native { start: Instant::now(), stop: Cell::new(false) };
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
                    let [a, b] = task.cells(&r);
                    let [name_a, name_b] = task.columns();
                    eprintln!("{:?} epoch {:.2}: train loss {:.4}, valid loss {:.4}, {name_a} {a}, {name_b} {b}", r.phase, r.epoch, r.train_loss, r.valid_loss);
                    task.evaluated(&r);
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
    .map_err(core_error)?;
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
    let [name_a, name_b] = task.columns();
    println!("| stage | epoch | step | train loss | valid loss | {name_a} | {name_b} | steps/s |");
    println!("|---|---|---|---|---|---|---|---|");
    for (r, rate) in &rows {
        let [a, b] = task.cells(r);
        println!("| {:?} | {:.2} | {} | {:.4} | {:.4} | {a} | {b} | {rate:.2} |", r.phase, r.epoch, r.step, r.train_loss, r.valid_loss);
    }
    println!();
    println!("{} · features {feature_secs:.1} s · total {total:.1} s · native {backend}", task.best(&tuner));
    task.finished(&tuner);
    if let Some(out) = args.get("out") {
        let out = PathBuf::from(out);
        let files = classification::export(
            &model_config,
            &tuner.best_model(),
            &tuner.meta(),
            &bert.tokenizer,
            read_optional(&dir.join("tokenizer.json")).as_deref(),
            read_optional(&dir.join("vocab.txt")).as_deref(),
        )
        .map_err(core_error)?;
        let what = exported_as(&files);
        write_files(&out, files)?;
        eprintln!("exported to {} ({what})", out.display());
    }
    Ok(())
}

/// What an export is, from its files: "a sentence-transformers folder", or the class its
/// `config.json` names.
fn exported_as(files: &[(String, Vec<u8>)]) -> String {
    if files.iter().any(|(n, _)| n == "modules.json") {
        return "a sentence-transformers folder".into();
    }
    let config = files.iter().find(|(n, _)| n == "config.json").and_then(|(_, b)| serde_json::from_slice::<serde_json::Value>(b).ok());
    let class = config.as_ref().and_then(|c| c.pointer("/architectures/0")).and_then(serde_json::Value::as_str).unwrap_or("?").to_string();
    let remote = config.as_ref().is_some_and(|c| c.get("auto_map").is_some());
    if remote { format!("{class}, with its modelling code: load it with trust_remote_code=True") } else { class }
}

/// Writes `(path, bytes)` pairs under `dir`, making the folders a path names
/// (`1_Pooling/config.json`).
fn write_files(dir: &Path, files: Vec<(String, Vec<u8>)>) -> Result {
    for (name, bytes) in files {
        let path = dir.join(&name);
        let parent = path.parent().unwrap_or(dir);
        fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The command line as a session's host: a monotonic clock, never paused, stopped by
/// `--max-steps`.
struct Native {
    start: Instant,
    stop: Cell<bool>,
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
    let files = tuner.snapshot(true).await.map_err(core_error)?.into_files();
    let fresh = dir.with_extension("writing");
    let _ = fs::remove_dir_all(&fresh);
    fs::create_dir_all(&fresh).map_err(|e| format!("{}: {e}", fresh.display()))?;
    let mut names = Vec::new();
    for (name, bytes) in files {
        fs::write(fresh.join(&name), bytes).map_err(|e| format!("{name}: {e}"))?;
        names.push(name);
    }
    fs::write(fresh.join("files.txt"), names.join("\n")).map_err(core_error)?;
    let _ = fs::remove_dir_all(dir);
    fs::rename(&fresh, dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The snapshot [`write_snapshot`] left in `dir`.
fn read_snapshot(dir: &Path) -> Result<Snapshot> {
    let names = fs::read_to_string(dir.join("files.txt")).map_err(|e| format!("no snapshot in {}: {e}", dir.display()))?;
    let files = names.lines().map(|n| Ok((n.to_string(), read(&dir.join(n))?))).collect::<Result<Vec<_>>>()?;
    Snapshot::from_files(files).map_err(core_error)
}
