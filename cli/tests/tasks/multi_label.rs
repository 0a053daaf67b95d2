//! `bertbench finetune --task multilabel`: a multi-label run on 0/1 columns and on lists, its
//! export, and its refusals.

use bertbench_core::burn::prelude::Device;
use bertbench_core::data;
use bertbench_core::tasks::classification::{self, Level, LoadedClassifier};
use bertbench_core::tasks::multi_label::LabelSetMetrics;

use super::{config_json, example, labels, load, refused, scratch, trained};

/// `loaded`'s micro-F1 at `threshold` on the texts `held` of `set`.
fn micro_f1(loaded: &LoadedClassifier, set: &data::LabelSetData, held: &[usize], threshold: f32) -> f32 {
    let tok = &loaded.tokenizer;
    let encoded: Vec<_> = held.iter().map(|&i| tok.encode(&set.examples[i].text).unwrap()).collect();
    let probs = pollster::block_on(classification::predict(&loaded.model, loaded.meta.scoring(), &encoded, tok.pad_id, 32, &Device::flex())).unwrap();
    let truth: Vec<f32> = held.iter().flat_map(|&i| set.targets(&set.examples[i])).collect();
    LabelSetMetrics::new(&probs.concat(), &truth, &set.labels, threshold).micro_f1
}

/// The number after `words` in `text`.
fn number_after(text: &str, words: &str) -> f32 {
    let at = text.find(words).unwrap_or_else(|| panic!("{words:?} is not in {text:?}")) + words.len();
    text[at..].trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect::<String>().parse().unwrap()
}

#[test]
fn multilabel_reports_micro_and_macro_f1_and_exports_a_multi_label_classifier_that_scores_as_the_run() {
    let dir = scratch("multilabel");
    let file = example("topics.csv");
    let out = dir.join("model");
    let run = trained(&["--task", "multilabel", "--train", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(run.header().contains("| micro-F1 | macro-F1 |"), "{}", run.header());
    assert!(run.stderr.contains("5 labels (food 70, travel 70, sport 70, weather 70, money 70); 8 texts with none"), "{}", run.stderr);
    assert!(run.stderr.contains("174 training / 44 validation texts") && run.stderr.contains("threshold"), "{}", run.stderr);
    let config = config_json(&out);
    assert_eq!(config["problem_type"], "multi_label_classification");
    assert_eq!(labels(&config), ["food", "travel", "sport", "weather", "money"]);
    let loaded = load(&out);
    assert_eq!(loaded.meta.spec.level, Level::MultiLabel);
    assert!(loaded.meta.multi_label());
    // The command line's split: a fifth held out, seed 13; the export scores it as the run did.
    let table = data::parse_table(&std::fs::read(&file).unwrap(), file.to_str()).unwrap();
    let set = data::to_label_sets(&table, &data::guess_label_sets(&table).unwrap()).unwrap();
    let held: Vec<usize> = data::shuffled(set.examples.len(), 13)[..44].to_vec();
    let summary = run.stdout.lines().find(|l| l.starts_with("best validation")).unwrap();
    let (reported, threshold) = (number_after(summary, "micro-F1"), number_after(summary, "at threshold"));
    let computed = micro_f1(&loaded, &set, &held, threshold);
    assert!((reported - computed).abs() < 0.02, "the run reported micro-F1 {reported}, its export scores {computed}");
    // Topics said in so many words are learnt even by a tiny random encoder's frozen features.
    assert!(reported > 0.5, "{summary}");

    // The same data as JSON Lines lists, as `datasets` writes them, for validation.
    let lists: String = held
        .iter()
        .map(|&i| {
            let e = &set.examples[i];
            let names: Vec<&str> = e.labels.iter().map(|&l| set.labels[l].as_str()).collect();
            format!("{}\n", serde_json::json!({ "text": e.text, "labels": names }))
        })
        .collect();
    let valid = dir.join("valid.jsonl");
    std::fs::write(&valid, &lists).unwrap();
    let run = trained(&["--task", "multilabel", "--train", file.to_str().unwrap(), "--valid", valid.to_str().unwrap(), "--head-epochs", "2"]);
    assert!(run.stderr.contains("218 training / 44 validation texts"), "{}", run.stderr);
    // A label the training file lacks is refused by name.
    std::fs::write(&valid, lists.replacen("\"food\"", "\"cooking\"", 1)).unwrap();
    refused(&["--task", "multilabel", "--train", file.to_str().unwrap(), "--valid", valid.to_str().unwrap()], &["Its labels cooking are not among the training file's (food, travel, sport, weather, money)"]);
}

#[test]
fn lists_with_a_separator_are_read_when_named_and_other_files_are_refused_with_their_cause() {
    let dir = scratch("multilabel-lists");
    let base = [("I love this and it made me laugh", "joy;amusement"), ("This is so sad", "sadness"), ("Funny but a little sad", "amusement;sadness"), ("What a happy day", "joy")];
    let rows: String = (0..40).map(|i| format!("{} ({i})\t{}\n", base[i % 4].0, base[i % 4].1)).collect();
    let file = dir.join("emotions.tsv");
    std::fs::write(&file, format!("text\tlabels\n{rows}")).unwrap();
    let path = file.to_str().unwrap();
    refused(&["--task", "multilabel", "--train", path], &["--label-list COLUMN [--separator ;]"]);
    let run = trained(&["--task", "multilabel", "--train", path, "--label-list", "labels", "--separator", ";", "--epochs", "1", "--head-epochs", "2"]);
    assert!(run.stderr.contains("3 labels (amusement 20, joy 20, sadness 20)"), "{}", run.stderr);
    refused(&["--task", "multilabel", "--train", path, "--label-list", "labels", "--separator", ";;"], &["--separator is one character"]);
    refused(&["--task", "classify", "--train", path, "--separator", ";"], &["--separator is for --task multilabel"]);
    refused(&["--task", "multilabel", "--train", example("choices.jsonl").to_str().unwrap()], &["try --task choice"]);
}
