//! Token tagging end to end on a toy named-entity task: a CoNLL file read, split, its words put
//! onto pieces, a tagger trained head-only and fully, scored by entities, saved mid-run and
//! resumed, and typed text tagged.
//!
//! Its tests hold `device_rng()`: burn's device generator (dropout, weight initialisation) is
//! shared by every thread of the process.

use crate::common::{device_rng, finish};

use bertbench_core::bert::config::Preset;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::burn::prelude::Device;
use bertbench_core::data::{TaggedData, parse_tagged};
use bertbench_core::rng::Rng;
use bertbench_core::tasks::classification::FeatureSpec;
use bertbench_core::tasks::tagging::{LabelPieces, encode_words, tag_text, tags_by_layer};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::{Event, EvalReport, FineTuneConfig, FineTuner, LabeledText, Snapshot, TaskScores, TrainMode};

const VOCAB: [&str; 22] = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "ann", "bob", "cy", "lee", "kim", "oslo", "rome", "paris", "the", "saw", "in",
    "and", "met", "today", "##ie", "##s", ".",
];

/// Sentences such as "annie lee saw bob in oslo ." in CoNLL columns: first names (one of them,
/// "annie", two pieces) are B-PER, a surname after one I-PER, cities B-LOC.
fn conll(n: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let person = |rng: &mut Rng, out: &mut String| {
        out.push_str(&format!("{} B-PER\n", ["ann", "bob", "cy", "annie"][rng.below(4)]));
        if rng.below(2) == 0 {
            out.push_str(&format!("{} I-PER\n", ["lee", "kim"][rng.below(2)]));
        }
    };
    for _ in 0..n {
        let city = ["oslo", "rome", "paris"][rng.below(3)];
        match rng.below(3) {
            0 => {
                person(&mut rng, &mut out);
                out.push_str("saw O\n");
                person(&mut rng, &mut out);
                out.push_str(&format!("in O\n{city} B-LOC\n"));
            }
            1 => {
                out.push_str("the O\n");
                person(&mut rng, &mut out);
                out.push_str("met O\n");
                person(&mut rng, &mut out);
                out.push_str("today O\n. O\n");
            }
            _ => {
                out.push_str(&format!("{city} B-LOC\nand O\n{} B-LOC\nsaw O\n", ["oslo", "rome", "paris"][rng.below(3)]));
                person(&mut rng, &mut out);
            }
        }
        out.push('\n');
    }
    out
}

fn tokenizer() -> BertTokenizer {
    BertTokenizer::from_vocab_txt(VOCAB.join("\n").as_bytes(), true, 32).unwrap()
}

fn encode(data: &TaggedData, indices: &[usize], pieces: LabelPieces) -> Vec<LabeledText> {
    let tokenizer = tokenizer();
    let ids = data.tag_ids();
    indices
        .iter()
        .map(|&i| {
            let s = &data.sentences[i];
            let (encoded, targets, lost) = encode_words(&tokenizer, &s.words, &ids[i], &data.tags, pieces).unwrap();
            assert_eq!(lost, 0);
            LabeledText::tagged(encoded, targets)
        })
        .collect()
}

fn tuner(mode: TrainMode, pieces: LabelPieces, epochs: usize) -> (FineTuner, TaggedData) {
    let data = parse_tagged(conll(120, 1).as_bytes()).unwrap();
    assert_eq!(data.tags, ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]);
    let split = data.split(0.25, 3).unwrap();
    let device = Device::flex().autodiff();
    device.seed(2);
    let bert = BertModelConfig::new(Preset::Tiny.config(VOCAB.len()).with_max_position_embeddings(32)).init(&device);
    let cfg = FineTuneConfig::new()
        .with_mode(mode)
        .with_features(FeatureSpec::tokens())
        .with_batch_size(8)
        .with_learning_rate(2e-3)
        .with_epochs(epochs)
        .with_head_learning_rate(3e-2)
        .with_head_epochs(epochs)
        .with_seed(4);
    let (train, valid) = (encode(&data, &split.train, pieces), encode(&data, &split.valid, pieces));
    (FineTuner::new(bert, 0, 32, data.tags.clone(), train, valid, cfg, &device).unwrap(), data)
}


#[test]
fn head_only_tagging_learns_the_entities() {
    let _rng = device_rng();
    let (mut tuner, _) = tuner(TrainMode::HeadOnly, LabelPieces::First, 30);
    let evals = finish(&mut tuner);
    let best = tuner.best_scores().and_then(TaskScores::entities).expect("BIO tags give entity metrics");
    assert!(best.f1 >= 0.9, "entity F1 {best:?}");
    assert_eq!(best.per_type.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(), ["LOC", "PER"]);
    assert!(evals.iter().all(|r| r.scores.entities().is_some()));
    assert_eq!(tuner.best_score(), Some(best.f1));
    // Probabilities are kept per word: the validation set's words, in order.
    let (metrics, probs) = tuner.best().unwrap();
    assert_eq!(probs.len(), metrics.count);
    assert!(metrics.accuracy >= 0.9, "word accuracy {}", metrics.accuracy);
}

#[test]
fn full_tagging_learns_the_entities_reading_every_piece() {
    let _rng = device_rng();
    let (mut tuner, data) = tuner(TrainMode::Full, LabelPieces::All, 6);
    finish(&mut tuner);
    let best = tuner.best_scores().and_then(TaskScores::entities).unwrap();
    assert!(best.f1 >= 0.9, "entity F1 {best:?}");
    // Typed text: "annie" is two pieces, one word, one entity with its surname.
    let model = tuner.best_model();
    let words = pollster::block_on(tag_text(&model, &tokenizer(), &data.tags, "Annie Kim saw Bob in Rome.", &Device::flex())).unwrap();
    let tags: Vec<&str> = words.iter().map(|w| w.tag.as_deref().unwrap()).collect();
    assert_eq!(words.iter().map(|w| w.word.as_str()).collect::<Vec<_>>(), ["Annie", "Kim", "saw", "Bob", "in", "Rome", "."]);
    assert_eq!(tags, ["B-PER", "I-PER", "O", "B-PER", "O", "B-LOC", "O"]);
    assert_eq!(words[5].span, (21, 25));
    assert!(words.iter().all(|w| (w.probs.iter().sum::<f32>() - 1.0).abs() < 1e-4));
    // Read at every layer, the last row is the tagger's answer; the embeddings' row is not.
    let layers = pollster::block_on(tags_by_layer(&model, &tokenizer(), "Annie Kim saw Bob in Rome.", &Device::flex())).unwrap();
    assert_eq!(layers.probs.len(), 3, "the embeddings and two layers");
    for (w, p) in words.iter().zip(layers.probs.last().unwrap()) {
        assert!(w.probs.iter().zip(p).all(|(a, b)| (a - b).abs() < 1e-5), "{}: {:?} vs {p:?}", w.word, w.probs);
    }
    assert_ne!(layers.probs[0], layers.probs[2]);
}

#[test]
fn a_tagging_run_resumed_from_a_checkpoint_ends_as_the_uninterrupted_one() {
    let _rng = device_rng();
    for mode in [TrainMode::HeadOnly, TrainMode::Full] {
        let (mut whole, _) = tuner(mode, LabelPieces::First, 2);
        let expected = finish(&mut whole);
        let (mut first, _) = tuner(mode, LabelPieces::First, 2);
        let mut steps = 0;
        while steps < 5 {
            if let Event::Step(_) = pollster::block_on(first.advance()).unwrap() {
                steps += 1;
            }
        }
        let files = pollster::block_on(first.snapshot(true)).unwrap().into_files();
        let (fresh, _) = tuner(mode, LabelPieces::First, 2);
        let mut resumed = fresh.restore(Snapshot::from_files(files).unwrap()).unwrap();
        let got = finish(&mut resumed);
        let f1 = |r: &[EvalReport]| r.last().and_then(|r| r.scores.entities()).map(|e| e.f1);
        assert_eq!(f1(&got), f1(&expected), "{mode:?}");
        assert_eq!(got.last().unwrap().valid_loss, expected.last().unwrap().valid_loss, "{mode:?}");
    }
}
