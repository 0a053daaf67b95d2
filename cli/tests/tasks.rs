//! `bertbench finetune` on every task, run as a user runs it, on a tiny random BERT and the
//! built-in examples, with the studio's recipe for the task (the head alone on the frozen
//! encoder, 20 epochs: a fraction of a second here; question answering, which trains
//! everything, for one epoch): the table has the task's metric, the export names its class and labels,
//! and the export, loaded back through core, scores the validation data as the run said it
//! did. Files of the wrong kind and unknown tasks are refused with their cause.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::burn::prelude::Device;
use bertbench_core::data::{self, Dataset};
use bertbench_core::tasks::classification::{self, Level, LoadedClassifier};
use bertbench_core::tasks::metrics::argmax;
use bertbench_core::tasks::qa::{self, AnswerMetrics, SpanConfig};
use bertbench_core::tasks::similarity::{self, spearman};
use bertbench_core::tasks::tagging::{EntityMetrics, predict_words};

#[path = "tasks/choice.rs"]
mod choice;
#[path = "tasks/multi_label.rs"]
mod multi_label;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn example(name: &str) -> PathBuf {
    root().join("public/examples").join(name)
}

/// A fresh folder for one test's files, in the target folder's scratch space (each run
/// replaces the last one's, so nothing piles up).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-tasks").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tiny random BERT with MiniLM's tokenizer, made once by `bertbench init`.
fn tiny() -> &'static Path {
    static TINY: OnceLock<PathBuf> = OnceLock::new();
    TINY.get_or_init(|| {
        let source = root().join("public/models/all-MiniLM-L6-v2");
        assert!(source.join("tokenizer.json").exists(), "{} is missing: run `cargo xtask setup`", source.display());
        let out = scratch("tiny");
        let run = Command::new(env!("CARGO_BIN_EXE_bertbench"))
            .args(["init", "--preset", "tiny", "--seed", "5", "--tokenizer-from"])
            .arg(&source)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        out
    })
}

/// What a run printed: its table and summary (stdout) and its log (stderr).
struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn finetune(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_bertbench")).arg("finetune").arg("--model").arg(tiny()).args(args).output().unwrap();
    Run { ok: out.status.success(), stdout: String::from_utf8_lossy(&out.stdout).into(), stderr: String::from_utf8_lossy(&out.stderr).into() }
}

/// Runs `args`, which must succeed.
fn trained(args: &[&str]) -> Run {
    let run = finetune(args);
    assert!(run.ok, "bertbench finetune {args:?} failed:\n{}", run.stderr);
    run
}

impl Run {
    /// The number after `words` in the summary line ("best validation accuracy 52.00%").
    fn best(&self, words: &str) -> f32 {
        let line = self.stdout.lines().find(|l| l.starts_with("best validation")).unwrap_or_else(|| panic!("no summary in:\n{}", self.stdout));
        let at = line.find(words).unwrap_or_else(|| panic!("{words:?} is not in {line:?}")) + words.len();
        let number: String = line[at..].trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-').collect();
        number.parse().unwrap_or_else(|_| panic!("no number after {words:?} in {line:?}"))
    }

    /// The table's header row.
    fn header(&self) -> &str {
        self.stdout.lines().find(|l| l.starts_with("| stage |")).unwrap_or_else(|| panic!("no table in:\n{}", self.stdout))
    }

    /// The table's rows without their last cell (steps per second, a timing).
    fn rows(&self) -> Vec<String> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with("| Head |") || l.starts_with("| Full |"))
            .map(|l| l.trim_end_matches('|').rsplit_once('|').unwrap().0.to_string())
            .collect()
    }
}

fn config_json(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap()
}

fn labels(config: &serde_json::Value) -> Vec<String> {
    let map = config["id2label"].as_object().expect("id2label");
    (0..map.len()).map(|i| map[&i.to_string()].as_str().unwrap().to_string()).collect()
}

fn files(dir: &Path) -> CheckpointFiles {
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    CheckpointFiles { config_json: read("config.json"), weights: read("model.safetensors"), tokenizer_json: Some(read("tokenizer.json")), vocab_txt: None }
}

/// An exported classifier, tagger or question-answering model, loaded as the page loads it.
fn load(dir: &Path) -> LoadedClassifier {
    classification::load_classifier(files(dir), None, &Device::flex()).unwrap()
}

fn table(path: &Path) -> data::Table {
    data::parse_table(&std::fs::read(path).unwrap(), path.to_str()).unwrap()
}

/// The validation examples the command line holds out of a table (a fifth, seed 13, the
/// studio's split), read with its guessed columns.
fn held_out_examples(path: &Path) -> Vec<data::Example> {
    let t = table(path);
    let set: Dataset = data::to_examples(&t, &data::guess_columns(&t)).unwrap();
    set.split(0.2, 13).unwrap().valid.iter().map(|&i| set.examples[i].clone()).collect()
}

/// `loaded`'s accuracy on `examples`, in percent.
fn accuracy(loaded: &LoadedClassifier, examples: &[data::Example]) -> f32 {
    let tok = &loaded.tokenizer;
    let encoded: Vec<_> = examples
        .iter()
        .map(|e| match &e.text_pair {
            Some(b) => tok.encode_pair(&e.text, b).unwrap(),
            None => tok.encode(&e.text).unwrap(),
        })
        .collect();
    let probs = pollster::block_on(classification::predict(&loaded.model, loaded.meta.scoring(), &encoded, tok.pad_id, 32, &Device::flex())).unwrap();
    let right = examples.iter().zip(&probs).filter(|(e, p)| loaded.meta.labels[argmax(p)] == e.label).count();
    100.0 * right as f32 / examples.len() as f32
}

/// Within one validation unit of each other (a unit's prediction may differ in the last bit
/// between the run's batches and the loaded model's).
/// Runs `args`, which must be refused with every one of `says` in the message.
fn refused(args: &[&str], says: &[&str]) {
    let run = finetune(args);
    assert!(!run.ok, "{args:?} was not refused:\n{}", run.stdout);
    for s in says {
        assert!(run.stderr.contains(s), "{args:?}: {s:?} is not in {:?}", run.stderr);
    }
}

fn close(a: f32, b: f32, units: usize, scale: f32) -> bool {
    (a - b).abs() <= scale / units as f32 + 0.01
}

#[test]
fn classify_reports_accuracy_and_its_export_scores_the_held_out_texts_the_same() {
    let out = scratch("classify");
    let run = trained(&["--train", example("sentiment.csv").to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.header().contains("| valid accuracy | macro-F1 |"), "{}", run.header());
    assert!(run.stderr.contains("head only"), "the studio's recipe trains the head alone:\n{}", run.stderr);
    let config = config_json(&out);
    // Mean pooling is not what BertForSequenceClassification computes: the export carries its code.
    assert_eq!(config["architectures"][0], "BertbenchForSequenceClassification");
    assert!(out.join(classification::MODELING_FILE).exists());
    assert_eq!(labels(&config), ["negative", "positive"]);
    let loaded = load(&out);
    assert_eq!(loaded.meta.spec.level, Level::Sentence);
    let valid = held_out_examples(&example("sentiment.csv"));
    assert_eq!(valid.len(), 50);
    let reported = run.best("best validation accuracy");
    let computed = accuracy(&loaded, &valid);
    assert!(close(reported, computed, valid.len(), 100.0), "the run reported {reported}%, its export scores {computed}%");
}

/// Integer labels, as a Hub dataset's CSV export holds them, get the names its README's front
/// matter gives (`--class-names`); the export's labels are those names; a README without
/// `dataset_info` is refused by its cause.
#[test]
fn classify_names_integer_labels_from_a_dataset_readme() {
    let dir = scratch("class-names");
    let csv = std::fs::read_to_string(example("sentiment.csv")).unwrap();
    let ids: String = csv.lines().enumerate().map(|(i, l)| if i == 0 { format!("{l}\n") } else { format!("{}\n", l.replace(",negative", ",0").replace(",positive", ",1")) }).collect();
    assert!(!ids.contains(",positive") && ids.contains(",1\n"), "the example's labels are its last column");
    let train = dir.join("train.csv");
    std::fs::write(&train, ids).unwrap();
    let readme = dir.join("README.md");
    std::fs::write(&readme, "---\ndataset_info:\n  features:\n  - name: text\n    dtype: string\n  - name: label\n    dtype:\n      class_label:\n        names:\n          '0': neg\n          '1': pos\n---\n").unwrap();
    let out = dir.join("out");
    let run = trained(&["--train", train.to_str().unwrap(), "--class-names", readme.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.stderr.contains("the class names of label from README.md"), "{}", run.stderr);
    assert_eq!(labels(&config_json(&out)), ["neg", "pos"]);
    let bare = dir.join("bare.md");
    std::fs::write(&bare, "# A dataset\n").unwrap();
    refused(&["--train", train.to_str().unwrap(), "--class-names", bare.to_str().unwrap()], &["--class-names", "bare.md", "no YAML front matter"]);
}

/// A classifier on `[CLS]` + pooler from a checkpoint saved without a pooler (DistilBERT's MLM)
/// starts its family's sequence pooler fresh, as the studio does, rather than being refused,
/// and exports as the family's own class, scoring the held-out texts as the run did.
#[test]
fn classify_on_the_pooler_of_a_checkpoint_without_one_starts_its_familys_fresh() {
    let out = scratch("classify-fresh-pooler");
    let run = Command::new(env!("CARGO_BIN_EXE_bertbench"))
        .arg("finetune")
        .arg("--model")
        .arg(root().join("tests/models/distilbert"))
        .args(["--train", example("sentiment.csv").to_str().unwrap(), "--pooling", "pooler", "--mode", "full", "--epochs", "1", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("the checkpoint has no pooler: a fresh one of DistilBert is trained"), "{stderr}");
    assert_eq!(config_json(&out)["architectures"][0], "DistilBertForSequenceClassification");
    let loaded = load(&out);
    assert_eq!(loaded.meta.spec.level, Level::Sentence);
    let valid = held_out_examples(&example("sentiment.csv"));
    let reported = Run { ok: true, stdout: stdout.into(), stderr: stderr.into() }.best("best validation accuracy");
    let computed = accuracy(&loaded, &valid);
    assert!(close(reported, computed, valid.len(), 100.0), "the run reported {reported}%, its export scores {computed}%");
}

#[test]
fn classify_reads_a_pair_of_texts_from_pair_columns() {
    // Pairs labelled as MRPC's are (similar or not), from the similarity example.
    let dir = scratch("pairs");
    let pairs = table(&example("similarity.csv"));
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut csv = String::from("sentence1,sentence2,label\n");
    for row in &pairs.rows {
        let score: f32 = row.fields[2].parse().unwrap();
        csv += &format!("{},{},{}\n", quote(&row.fields[0]), quote(&row.fields[1]), if score >= 2.5 { "similar" } else { "different" });
    }
    let file = dir.join("pairs.csv");
    std::fs::write(&file, csv).unwrap();
    let out = dir.join("model");
    let run = trained(&["--train", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.stderr.contains("text \"sentence1\", second text \"sentence2\", label \"label\""), "{}", run.stderr);
    assert!(run.stderr.contains("validation pairs"), "{}", run.stderr);
    // Pairs read together start from the pair classifier's recipe: every weight trains.
    assert!(run.stderr.contains("full fine-tuning"), "{}", run.stderr);
    assert!(run.header().contains("| valid accuracy |"));
    let config = config_json(&out);
    assert_eq!(config["architectures"][0], "BertbenchForSequenceClassification");
    assert_eq!(labels(&config), ["different", "similar"]);
    let valid = held_out_examples(&file);
    assert!(valid.iter().all(|e| e.text_pair.is_some()));
    let (reported, computed) = (run.best("best validation accuracy"), accuracy(&load(&out), &valid));
    assert!(close(reported, computed, valid.len(), 100.0), "the run reported {reported}%, its export scores {computed}%");
}

#[test]
fn qa_trains_with_the_studio_recipe_and_its_export_answers_as_the_run_scored() {
    let out = scratch("qa");
    let file = example("questions.json");
    let run = trained(&["--task", "qa", "--train", file.to_str().unwrap(), "--epochs", "1", "--out", out.to_str().unwrap()]);
    assert!(run.header().contains("| exact match | F1 |"), "{}", run.header());
    assert!(run.stderr.contains("validation windows") && run.stderr.contains("full fine-tuning"), "{}", run.stderr);
    let config = config_json(&out);
    assert_eq!(config["architectures"][0], "BertForQuestionAnswering");
    let loaded = load(&out);
    assert_eq!((loaded.meta.spec.level, loaded.model.num_labels(), loaded.meta.max_len), (Level::Span, 2, 192));
    let data = data::parse_qa(&std::fs::read(&file).unwrap(), file.to_str()).unwrap();
    let split = data.split(0.2, 13).unwrap();
    let valid: Vec<_> = split.valid.iter().map(|&i| &data.items[i]).collect();
    let allow_null = data.items.iter().any(|q| q.answers.is_empty());
    let spans = SpanConfig::new().with_max_len(192).with_stride(64);
    let (mut gold, mut pred) = (Vec::new(), Vec::new());
    for q in &valid {
        let answered = pollster::block_on(qa::answer(&loaded.model, &loaded.tokenizer, &q.question, &q.context, &spans, allow_null)).unwrap();
        gold.push(q.answers.iter().map(|a| a.text.clone()).collect::<Vec<_>>());
        pred.push(answered.answer.map(|a| a.text).unwrap_or_default());
    }
    let computed = AnswerMetrics::new(&gold, &pred).all.f1 * 100.0;
    let reported = run.best("F1");
    assert!(close(reported, computed, valid.len(), 100.0), "the run reported F1 {reported}, its export {computed}");
}

#[test]
fn tag_reports_entity_f1_and_exports_a_token_classifier_that_tags_as_the_run_scored() {
    let out = scratch("tag");
    let file = example("entities.conll");
    let run = trained(&["--task", "tag", "--train", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.header().contains("| entity F1 | word accuracy |"), "{}", run.header());
    for kind in ["LOC", "MISC", "ORG", "PER"] {
        assert!(run.stdout.lines().any(|l| l.starts_with(&format!("{kind}: F1 "))), "no {kind} line in:\n{}", run.stdout);
    }
    let config = config_json(&out);
    assert_eq!(config["architectures"][0], "BertForTokenClassification");
    let data = data::parse_tagged(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(labels(&config), data.tags);
    assert_eq!(data.tags[0], "O");
    let loaded = load(&out);
    assert_eq!((loaded.meta.spec.level, loaded.model.num_labels()), (Level::Token, 9));
    let valid: Vec<_> = data.split(0.2, 13).unwrap().valid.iter().map(|&i| data.sentences[i].clone()).collect();
    let words: Vec<Vec<String>> = valid.iter().map(|s| s.words.clone()).collect();
    let probs = pollster::block_on(predict_words(&loaded.model, &loaded.tokenizer, &words, 32, &Device::flex())).unwrap();
    let (mut truth, mut pred) = (Vec::new(), Vec::new());
    for (s, p) in valid.iter().zip(&probs) {
        // Words past the length are neither learned nor scored.
        let scored: Vec<&Vec<f32>> = p.iter().map_while(Option::as_ref).collect();
        truth.push(s.tags[..scored.len()].to_vec());
        pred.push(scored.iter().map(|p| loaded.meta.labels[argmax(p)].clone()).collect::<Vec<_>>());
    }
    let computed = EntityMetrics::new(&truth, &pred).f1;
    let reported = run.best("entity F1");
    let entities: usize = valid.iter().map(|s| bertbench_core::tasks::tagging::entities(&s.tags).len()).sum();
    assert!(close(reported, computed, entities, 2.0), "the run reported entity F1 {reported}, its export {computed}");
}

/// The validation pairs held out of `file` and what `dir`'s model scores them; the run's
/// Spearman must be theirs.
fn check_pairs(run: &Run, file: &Path, loaded: &LoadedClassifier) {
    let t = table(file);
    let data = data::to_pairs(&t, &data::guess_pair_columns(&t)).unwrap();
    let valid: Vec<_> = data.split(0.2, 13).unwrap().valid.iter().map(|&i| data.pairs[i].clone()).collect();
    let texts: Vec<(String, String)> = valid.iter().map(|p| (p.text.clone(), p.text_pair.clone())).collect();
    let predicted = pollster::block_on(similarity::score_pairs(&loaded.model, &loaded.tokenizer, &texts, &Device::flex())).unwrap();
    let gold: Vec<f32> = valid.iter().map(|p| p.score).collect();
    let (reported, computed) = (run.best("Spearman"), spearman(&gold, &predicted));
    assert!((reported - computed).abs() < 2e-3, "the run reported Spearman {reported}, its export {computed}");
}

#[test]
fn similarity_as_a_bi_encoder_exports_a_sentence_transformers_folder_that_scores_as_the_run() {
    let out = scratch("bi");
    let file = example("similarity.csv");
    let run = trained(&["--task", "similarity", "--train", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.header().contains("| Spearman | Pearson |"), "{}", run.header());
    assert!(run.stdout.contains("bi-encoder") && run.stderr.contains("0–5"), "{}\n{}", run.stdout, run.stderr);
    let modules = std::fs::read(out.join("modules.json")).unwrap();
    let found = similarity::sentence_transformer_modules(&modules).unwrap();
    assert_eq!((found.pooling.as_str(), found.dense.as_deref()), ("1_Pooling", Some("2_Dense")));
    let read = |f: &str| std::fs::read(out.join(f)).unwrap();
    let loaded = similarity::load_bi_encoder(files(&out), &read("1_Pooling/config.json"), Some((&read("2_Dense/config.json"), &read(similarity::DENSE_FILE))), &Device::flex()).unwrap();
    assert_eq!(loaded.meta.spec.level, Level::Embedding);
    // The data's 0–5, kept with the model for the page to read scores back on it.
    assert_eq!(loaded.meta.scale.map(|s| (s.low, s.high)), Some((0.0, 5.0)));
    check_pairs(&run, &file, &loaded);
}

#[test]
fn similarity_as_a_cross_encoder_exports_a_regression_classifier_that_scores_as_the_run() {
    // [CLS] + pooler is what BertForSequenceClassification computes: it loads as it is.
    let out = scratch("cross");
    let file = example("similarity.csv");
    let run = trained(&["--task", "similarity", "--encoder", "cross", "--pooling", "pooler", "--train", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.header().contains("| Spearman | Pearson |") && run.stdout.contains("cross-encoder"), "{}", run.stdout);
    let config = config_json(&out);
    assert_eq!(config["architectures"][0], "BertForSequenceClassification");
    assert_eq!(config["problem_type"], "regression");
    assert_eq!(labels(&config), ["score"]);
    let loaded = load(&out);
    assert_eq!((loaded.meta.spec.level, loaded.model.num_labels()), (Level::Score, 1));
    check_pairs(&run, &file, &loaded);
}

#[test]
fn a_resumed_tagging_run_takes_the_steps_the_whole_run_takes() {
    let dir = scratch("resume");
    let (file, checkpoint) = (example("entities.conll"), dir.join("checkpoint"));
    let args = ["--task", "tag", "--train", file.to_str().unwrap(), "--mode", "full", "--epochs", "2", "--batch", "32"];
    let whole = trained(&args);
    // Stopped a step into the second epoch (9 steps an epoch): the first epoch's end was saved.
    let stopped = trained(&[&args[..], &["--checkpoint-dir", checkpoint.to_str().unwrap(), "--max-steps", "10"]].concat());
    assert!(stopped.stderr.contains("checkpoint at step 9"), "{}", stopped.stderr);
    let resumed = trained(&[&args[..], &["--checkpoint-dir", checkpoint.to_str().unwrap(), "--resume", "true"]].concat());
    assert!(resumed.stderr.contains("resumed at step 9"), "{}", resumed.stderr);
    assert_eq!(resumed.rows().last(), whole.rows().last(), "{}\n{}", resumed.stdout, whole.stdout);
    assert_eq!(whole.rows().len(), 2);
}

#[test]
fn unknown_tasks_and_files_of_another_task_are_refused_with_their_cause() {
    let path = |n: &str| example(n).to_str().unwrap().to_string();
    refused(&["--task", "summarise", "--train", &path("sentiment.csv")], &["unknown task summarise; use classify, multilabel, tag, qa, similarity or choice"]);
    refused(&["--task", "similarity", "--encoder", "both", "--train", &path("similarity.csv")], &["unknown encoder both"]);
    refused(&["--task", "tag", "--encoder", "cross", "--train", &path("entities.conll")], &["--encoder is for --task similarity"]);
    refused(&["--pieces", "all", "--train", &path("sentiment.csv")], &["--pieces is for --task tag"]);
    refused(&["--task", "tag", "--train", &path("sentiment.csv")], &["has no tag column", "try --task classify"]);
    refused(&["--task", "similarity", "--train", &path("entities.conll")], &["No score column", "try --task tag"]);
    refused(&["--task", "qa", "--train", &path("similarity.csv")], &["no question column", "try --task similarity"]);
    refused(&["--task", "classify", "--train", &path("questions.json")], &["not a JSON object", "try --task qa"]);
    refused(&["--task", "similarity", "--loss", "contrastive", "--train", &path("similarity.csv")], &["--loss contrastive needs a bi-encoder and pairs labelled similar or not"]);
}

#[test]
fn a_student_keeps_some_layers_learns_from_its_teacher_and_exports_its_depth() {
    let (teacher, student) = (scratch("teacher"), scratch("student"));
    let train = example("sentiment.csv");
    trained(&["--train", train.to_str().unwrap(), "--out", teacher.to_str().unwrap()]);
    let depth = config_json(&teacher)["num_hidden_layers"].as_u64().unwrap();
    assert!(depth >= 2, "the tiny model needs layers to drop");
    let run = trained(&["--train", train.to_str().unwrap(), "--keep-layers", "1", "--teacher", teacher.to_str().unwrap(), "--out", student.to_str().unwrap()]);
    assert!(run.stderr.contains(&format!("layers [{}] of {depth} kept", depth - 1)), "{}", run.stderr);
    assert!(run.stderr.contains("temperature 2 with weight 0.5"), "{}", run.stderr);
    assert_eq!(config_json(&student)["num_hidden_layers"], 1);
    let loaded = load(&student);
    assert_eq!(loaded.model.bert.num_layers(), 1);
    let valid = held_out_examples(&train);
    let (reported, computed) = (run.best("best validation accuracy"), accuracy(&loaded, &valid));
    assert!(close(reported, computed, valid.len(), 100.0), "the run reported {reported}%, its export scores {computed}%");

    // A teacher of other labels, a student of another task and too many layers are refused.
    let other = finetune(&["--train", example("similarity.csv").to_str().unwrap(), "--teacher", teacher.to_str().unwrap()]);
    assert!(!other.ok && other.stderr.contains("a teacher must label the same classes"), "{}", other.stderr);
    let tag = finetune(&["--task", "tag", "--train", example("entities.conll").to_str().unwrap(), "--keep-layers", "1"]);
    assert!(!tag.ok && tag.stderr.contains("use them with --task classify"), "{}", tag.stderr);
    let deep = finetune(&["--train", train.to_str().unwrap(), "--keep-layers", "9"]);
    assert!(!deep.ok && deep.stderr.contains(&format!("the model has {depth} layers")), "{}", deep.stderr);
}
