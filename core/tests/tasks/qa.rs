//! Extractive question answering end to end on a toy pattern: a JSON Lines file of questions
//! read and split by passage, passages longer than a window split with a stride, a model trained
//! head-only and fully, scored by SQuAD's exact match and F1, resumed from a checkpoint,
//! exported and loaded back, and typed questions answered.
//!
//! Its tests hold `device_rng()`: burn's device generator (dropout, weight initialisation) is
//! shared by every thread of the process.

use crate::common::{device_rng, finish};

use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::bert::config::Preset;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::burn::prelude::Device;
use bertbench_core::data::{QaData, parse_qa};
use bertbench_core::rng::Rng;
use bertbench_core::tasks::classification::{FeatureSpec, export, load_classifier};
use bertbench_core::tasks::qa::{LABELS, SpanConfig, answer};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::{EvalReport, Event, FineTuneConfig, FineTuner, Snapshot, TaskScores, TrainMode, encode_questions};

const VOCAB: [&str; 26] = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ann", "bob", "cy", "lee", "kim", "oslo", "rome", "paris", "the", "saw", "in",
    "and", "met", "today", "dog", "ran", "then", "who", "where", "?", ".",
];

/// Passages such as "the dog ran . bob kim met the dog in rome today ." with one person and one
/// city; "who ?" asks for the person (one or two words), "where ?" for the city. With
/// `who_too` false every question is "where ?".
fn jsonl(n: usize, seed: u64, who_too: bool) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let filler = ["the dog ran .", "then the dog saw the dog .", "today", "the dog ran and ran ."];
    for i in 0..n {
        let mut person = ["ann", "bob", "cy"][rng.below(3)].to_string();
        if rng.below(2) == 0 {
            person = format!("{person} {}", ["lee", "kim"][rng.below(2)]);
        }
        let city = ["oslo", "rome", "paris"][rng.below(3)];
        let before = filler[rng.below(filler.len())];
        let after = filler[rng.below(filler.len())];
        let context = format!("{before} {person} met the dog in {city} today . {after}");
        let (question, answer) = if who_too && rng.below(2) == 0 { ("who ?", person.as_str()) } else { ("where ?", city) };
        let start = context.find(&format!(" {answer} ")).unwrap() + 1;
        out.push_str(&format!(
            "{{\"id\": \"q{i}\", \"question\": \"{question}\", \"context\": \"{context}\", \"answers\": {{\"text\": [\"{answer}\"], \"answer_start\": [{start}]}}}}\n"
        ));
    }
    out
}

fn tokenizer() -> BertTokenizer {
    BertTokenizer::from_vocab_txt(VOCAB.join("\n").as_bytes(), true, 32).unwrap()
}

/// Windows of 20 tokens: the longer passages take two.
fn spans() -> SpanConfig {
    SpanConfig::new().with_max_len(20).with_stride(6)
}

fn tuner(mode: TrainMode, epochs: usize, who_too: bool) -> (FineTuner, QaData, Vec<usize>) {
    let data = parse_qa(jsonl(160, 1, who_too).as_bytes(), Some("toy.jsonl")).unwrap();
    let split = data.split(0.25, 3).unwrap();
    let device = Device::flex().autodiff();
    device.seed(2);
    let bert = BertModelConfig::new(Preset::Tiny.config(VOCAB.len()).with_max_position_embeddings(32)).init(&device);
    let cfg = FineTuneConfig::new()
        .with_mode(mode)
        .with_features(FeatureSpec::spans())
        .with_spans(spans())
        .with_batch_size(8)
        .with_learning_rate(2e-3)
        .with_epochs(epochs)
        .with_head_learning_rate(3e-2)
        .with_head_epochs(epochs)
        .with_seed(4);
    let pick = |idx: &[usize]| idx.iter().map(|&i| data.items[i].clone()).collect::<Vec<_>>();
    let (train, lost) = encode_questions(&tokenizer(), &pick(&split.train), &spans()).unwrap();
    assert_eq!(lost, 0);
    let (valid, _) = encode_questions(&tokenizer(), &pick(&split.valid), &spans()).unwrap();
    assert!(train.len() > split.train.len(), "some passages take two windows");
    let labels = LABELS.iter().map(|l| l.to_string()).collect();
    (FineTuner::new(bert, 0, 20, labels, train, valid, cfg, &device).unwrap(), data, split.valid)
}


#[test]
fn head_only_finds_the_answer_span() {
    let _rng = device_rng();
    let (mut tuner, data, valid) = tuner(TrainMode::HeadOnly, 30, false);
    let evals = finish(&mut tuner);
    let scores = tuner.best_scores().and_then(TaskScores::answers).expect("a question-answering run is scored by answers");
    let answers = tuner.best_predictions();
    assert!(scores.all.exact >= 0.9, "{scores:?}");
    assert_eq!(scores.all.count, valid.len());
    assert_eq!(answers.len(), valid.len());
    assert!(evals.iter().all(|r| r.scores.answers().is_some()));
    assert_eq!(tuner.best_score(), Some(scores.all.f1));
    let right = valid.iter().zip(answers).filter(|(i, a)| data.items[**i].answers[0].text == **a).count();
    assert!(right as f32 >= 0.9 * valid.len() as f32, "{right} of {}", valid.len());
}

#[test]
fn full_fine_tuning_answers_who_and_where_exports_and_loads_back() {
    let _rng = device_rng();
    let (mut tuner, _, _) = tuner(TrainMode::Full, 25, true);
    finish(&mut tuner);
    let scores = tuner.best_scores().and_then(TaskScores::answers).unwrap();
    assert!(scores.all.exact >= 0.9, "{scores:?}");
    let model = tuner.best_model();
    let passage = "The dog ran. Cy Lee met the dog in Paris today. Then the dog saw the dog.";
    let ask = |q: &str| pollster::block_on(answer(&model, &tokenizer(), q, passage, &spans(), false)).unwrap();
    let (who, whereto) = (ask("Who?"), ask("Where?"));
    assert_eq!(who.answer.as_ref().map(|a| a.text.as_str()), Some("Cy Lee"));
    assert_eq!(whereto.answer.as_ref().map(|a| a.text.as_str()), Some("Paris"));
    assert!(whereto.windows >= 2, "the passage is longer than a window");
    let best = whereto.answer.clone().unwrap();
    assert_eq!(&passage[best.start..best.end], "Paris");
    assert!(best.probability > 0.5 && whereto.spans.len() > 1);
    assert!(whereto.spans.windows(2).all(|w| w[0].score >= w[1].score));
    // Exported as transformers' BertForQuestionAnswering, loaded back: the same answer.
    let config = Preset::Tiny.config(VOCAB.len()).with_max_position_embeddings(32);
    let files = export(&config, &model, &tuner.meta(), &tokenizer(), None, Some(VOCAB.join("\n").as_bytes())).unwrap();
    let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
    let config_json = String::from_utf8(get("config.json").unwrap()).unwrap();
    assert!(config_json.contains("\"BertForQuestionAnswering\""), "{config_json}");
    let st = safetensors::SafeTensors::deserialize(Box::leak(get("model.safetensors").unwrap().into_boxed_slice())).unwrap();
    assert!(st.names().iter().any(|n| *n == "qa_outputs.weight"));
    assert!(!st.names().iter().any(|n| n.starts_with("bert.pooler")));
    let folder = CheckpointFiles { config_json: config_json.into_bytes(), weights: get("model.safetensors").unwrap(), tokenizer_json: None, vocab_txt: get("vocab.txt") };
    let loaded = load_classifier(folder, None, &Device::flex()).unwrap();
    assert_eq!(loaded.meta.labels, LABELS);
    let again = pollster::block_on(answer(&loaded.model, &loaded.tokenizer, "Where?", passage, &spans(), false)).unwrap();
    assert_eq!(again.answer.as_ref().map(|a| a.text.as_str()), Some("Paris"));
    assert!((again.answer.unwrap().score - best.score).abs() < 1e-4);
}

#[test]
fn a_question_answering_run_resumed_from_a_checkpoint_ends_as_the_uninterrupted_one() {
    let _rng = device_rng();
    for mode in [TrainMode::HeadOnly, TrainMode::Full] {
        let (mut whole, _, _) = tuner(mode, 2, true);
        let expected = finish(&mut whole);
        let (mut first, _, _) = tuner(mode, 2, true);
        let mut steps = 0;
        while steps < 5 {
            if let Event::Step(_) = pollster::block_on(first.advance()).unwrap() {
                steps += 1;
            }
        }
        let files = pollster::block_on(first.snapshot(true)).unwrap().into_files();
        let (fresh, _, _) = tuner(mode, 2, true);
        let mut resumed = fresh.restore(Snapshot::from_files(files).unwrap()).unwrap();
        let got = finish(&mut resumed);
        let f1 = |r: &[EvalReport]| r.last().and_then(|r| r.scores.answers()).map(|a| a.all.f1);
        assert_eq!(f1(&got), f1(&expected), "{mode:?}");
        assert_eq!(got.last().unwrap().valid_loss, expected.last().unwrap().valid_loss, "{mode:?}");
        assert_eq!(resumed.best_predictions(), whole.best_predictions(), "{mode:?}");
        assert!(!whole.best_predictions().is_empty());
    }
}
