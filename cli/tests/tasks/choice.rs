//! `bertbench finetune --task choice`: multiple choice's run, its export and its refusals.

use bertbench_core::burn::prelude::Device;
use bertbench_core::data;
use bertbench_core::tasks::choice;
use bertbench_core::tasks::classification::{Level, LoadedClassifier};
use bertbench_core::tasks::metrics::argmax;

use super::{close, config_json, example, load, refused, root, scratch, trained};

/// The percentage of `questions` whose right ending `loaded` gives the highest probability.
fn choice_accuracy(loaded: &LoadedClassifier, questions: &[choice::ChoiceItem]) -> f32 {
    let right = questions
        .iter()
        .filter(|q| {
            let probs = pollster::block_on(choice::predict(&loaded.model, &loaded.tokenizer, &q.premise, &q.choices, &Device::flex())).unwrap();
            assert!((probs.iter().sum::<f32>() - 1.0).abs() < 1e-5 && probs.len() == q.choices.len());
            argmax(&probs) == q.label
        })
        .count();
    100.0 * right as f32 / questions.len() as f32
}

#[test]
fn choice_reports_accuracy_over_questions_and_exports_a_multiple_choice_model_that_scores_as_the_run() {
    let dir = scratch("choice");
    let file = example("choices.jsonl");
    let out = dir.join("model");
    let run = trained(&["--task", "choice", "--train", file.to_str().unwrap(), "--epochs", "2", "--out", out.to_str().unwrap()]);
    assert!(run.header().contains("| valid accuracy | questions |"), "{}", run.header());
    assert!(run.stderr.contains("48 training / 12 validation questions") && run.stderr.contains("full fine-tuning"), "{}", run.stderr);
    assert!(run.stderr.contains("4 endings per question") && run.stderr.contains("exported to") && run.stderr.contains("(BertForMultipleChoice)"), "{}", run.stderr);
    assert_eq!(run.rows().len(), 2, "an evaluation per epoch:\n{}", run.stdout);
    let config = config_json(&out);
    assert_eq!(config["architectures"][0], "BertForMultipleChoice");
    let loaded = load(&out);
    assert_eq!((loaded.meta.spec.level, loaded.model.num_labels()), (Level::Choice, 1));
    // The command line's split: a fifth held out, seed 13.
    let all = choice::parse_choices(&std::fs::read(&file).unwrap(), file.to_str()).unwrap().items;
    let valid: Vec<_> = data::shuffled(all.len(), 13)[..12].iter().map(|&i| all[i].clone()).collect();
    let (reported, computed) = (run.best("best validation accuracy"), choice_accuracy(&loaded, &valid));
    assert!(close(reported, computed, valid.len(), 100.0), "the run reported {reported}%, its export scores {computed}%");

    // SWAG's own CSV as the validation file: its premise is sent1, each ending follows sent2.
    let swag = root().join("tests/fixtures/swag.csv");
    let run = trained(&["--task", "choice", "--train", file.to_str().unwrap(), "--valid", swag.to_str().unwrap(), "--epochs", "1"]);
    assert!(run.stderr.contains("60 training / 3 validation questions"), "{}", run.stderr);
    assert!(run.stdout.contains("(3 questions)"), "{}", run.stdout);
}

#[test]
fn files_of_another_task_and_options_of_another_task_are_refused_with_their_cause() {
    let path = |n: &str| example(n).to_str().unwrap().to_string();
    refused(&["--task", "choice", "--train", &path("sentiment.csv")], &["no header row naming SWAG's columns", "try --task classify"]);
    refused(&["--task", "qa", "--train", &path("choices.jsonl")], &["try --task choice"]);
    refused(&["--task", "choice", "--pooling", "mean", "--train", &path("choices.jsonl")], &["--pooling is not for --task choice"]);
}
