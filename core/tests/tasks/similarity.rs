//! Sentence similarity end to end on a toy problem: pairs of four-word texts whose score is the
//! share of words they have in common (0, ¼, ½, ¾, 1), read from a CSV file, trained as a
//! bi-encoder and as a cross-encoder, head-only and fully, scored by Spearman's correlation,
//! resumed from a checkpoint, exported and loaded back.
//!
//! Its tests hold `device_rng()`: burn's device generator (dropout, weight initialisation) is
//! shared by every thread of the process.

use crate::common::{device_rng, finish};

use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::bert::config::Preset;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::bert::pooling::Pooling;
use bertbench_core::burn::prelude::Device;
use bertbench_core::data::{PairData, guess_pair_columns, parse_table, to_pairs};
use bertbench_core::rng::Rng;
use bertbench_core::tasks::classification::{FeatureLayers, FeatureSpec, Level, export, load_classifier};
use bertbench_core::tasks::similarity::{DENSE_FILE, LABELS, SimilarityLoss, load_bi_encoder, score_pairs, sentence_transformer_modules};
use bertbench_core::tokenizer::BertTokenizer;
use bertbench_core::train::{EvalReport, Event, FineTuneConfig, FineTuner, Snapshot, TaskScores, TrainMode, encode_pairs};

/// Three topics of eight words.
const WORDS: [&str; 24] = [
    "dog", "cat", "horse", "bird", "fish", "cow", "goat", "duck", "oslo", "rome", "paris", "lima", "cairo", "delhi", "quito", "seoul", "bread", "rice", "soup",
    "cake", "tea", "milk", "egg", "corn",
];

fn vocab() -> String {
    let mut v = vec!["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
    v.extend(WORDS);
    v.join("\n")
}

fn tokenizer() -> BertTokenizer {
    BertTokenizer::from_vocab_txt(vocab().as_bytes(), true, 16).unwrap()
}

/// How the toy pairs are made.
#[derive(Clone, Copy, PartialEq)]
enum Toy {
    /// Scores 0–4.
    Graded,
    /// Scores 0–4, the first text always of the first topic (see the cross-encoder's test).
    OneTopic,
    /// Only `k` = 0 or 4, labelled `different` / `duplicate`.
    Binary,
}

/// `n` rows of `sentence1,sentence2,score`: four words of a topic, then `k` of them (in another
/// order) with `4 − k` of another topic, scored `k` on a 0–4 scale.
fn csv(n: usize, seed: u64, toy: Toy) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::from("sentence1,sentence2,score\n");
    for _ in 0..n {
        let topic = if toy == Toy::OneTopic { 0 } else { rng.below(3) };
        let other = (topic + 1 + rng.below(2)) % 3;
        let mut a: Vec<&str> = WORDS[topic * 8..topic * 8 + 8].to_vec();
        rng.shuffle(&mut a);
        a.truncate(4);
        let binary = toy == Toy::Binary;
        let k = if binary { 4 * rng.below(2) } else { rng.below(5) };
        let mut b: Vec<&str> = a[..k].to_vec();
        let mut others: Vec<&str> = WORDS[other * 8..other * 8 + 8].to_vec();
        rng.shuffle(&mut others);
        b.extend(&others[..4 - k]);
        rng.shuffle(&mut b);
        let score = if binary { ["different", "", "", "", "duplicate"][k].to_string() } else { k.to_string() };
        out.push_str(&format!("{},{},{score}\n", a.join(" "), b.join(" ")));
    }
    out
}

fn data(toy: Toy, n: usize) -> PairData {
    let table = parse_table(csv(n, 1, toy).as_bytes(), Some("toy.csv")).unwrap();
    to_pairs(&table, &guess_pair_columns(&table)).unwrap()
}

/// A run on 200 toy pairs (or `more`: 800 at a higher learning rate).
fn tuner(level: Level, mode: TrainMode, epochs: usize, toy: Toy, loss: SimilarityLoss) -> FineTuner {
    tuner_on(level, mode, epochs, toy, loss, false)
}

fn tuner_on(level: Level, mode: TrainMode, epochs: usize, toy: Toy, loss: SimilarityLoss, more: bool) -> FineTuner {
    let data = data(toy, if more { 800 } else { 200 });
    let split = data.split(0.25, 3).unwrap();
    let device = Device::flex().autodiff();
    device.seed(2);
    let bert = BertModelConfig::new(Preset::Tiny.config(WORDS.len() + 5).with_max_position_embeddings(16)).init(&device);
    let features = match level {
        Level::Embedding => FeatureSpec::embeddings(Pooling::Mean),
        _ => FeatureSpec::scores(Pooling::Mean, FeatureLayers::Last),
    };
    let cfg = FineTuneConfig::new()
        .with_mode(mode)
        .with_features(features)
        .with_similarity_loss(loss)
        .with_score_scale(Some(data.scale))
        .with_batch_size(16)
        .with_learning_rate(if more { 2e-3 } else { 1e-3 })
        .with_epochs(epochs)
        .with_head_learning_rate(1e-2)
        .with_head_epochs(epochs)
        .with_seed(4);
    let pick = |idx: &[usize]| idx.iter().map(|&i| data.pairs[i].clone()).collect::<Vec<_>>();
    let train = encode_pairs(&tokenizer(), &pick(&split.train), level).unwrap();
    let valid = encode_pairs(&tokenizer(), &pick(&split.valid), level).unwrap();
    let labels = LABELS.iter().map(|l| l.to_string()).collect();
    FineTuner::new(bert, 0, 16, labels, train, valid, cfg, &device).unwrap()
}

fn spearman_of(tuner: &FineTuner) -> f32 {
    tuner.best_scores().and_then(TaskScores::similarity).expect("a similarity run is scored by correlations").spearman
}

#[test]
fn the_toy_file_reads_as_scores_from_0_to_4() {
    let d = data(Toy::Graded, 200);
    assert_eq!(d.pairs.len(), 200);
    assert_eq!((d.scale.low, d.scale.high), (0.0, 4.0));
    assert!(!d.binary);
    assert!(d.pairs.iter().all(|p| [0.0, 0.25, 0.5, 0.75, 1.0].contains(&p.score)));
    let b = data(Toy::Binary, 200);
    assert!(b.binary);
    assert!(b.pairs.iter().all(|p| p.score == 0.0 || p.score == 1.0));
}

#[test]
fn a_bi_encoder_learns_the_overlap_head_only_and_fully() {
    let _rng = device_rng();
    for (mode, epochs) in [(TrainMode::HeadOnly, 30), (TrainMode::Full, 12)] {
        let mut tuner = tuner(Level::Embedding, mode, epochs, Toy::Graded, SimilarityLoss::Cosine);
        let evals = finish(&mut tuner);
        assert!(evals.iter().all(|r| r.scores.similarity().is_some()));
        let best = spearman_of(&tuner);
        assert!(best >= 0.9, "{mode:?}: Spearman {best}, {:?}", tuner.best_scores());
        assert_eq!(tuner.best_score(), Some(best));
    }
}

/// Fully trained, a cross-encoder learns to match the words of one text against the other's.
/// Head-only, its frozen encoder here has random weights, whose attention is nearly uniform: the
/// features of a pair are about the mean of its words, from which no linear head can read which
/// words the two texts share. With the first text always of one topic the score is linear in that
/// mean (the pair holds `4 + k` words of that topic), and the head must learn that.
#[test]
fn a_cross_encoder_learns_the_overlap_fully_and_a_linear_pattern_head_only() {
    let _rng = device_rng();
    for (mode, epochs, toy) in [(TrainMode::HeadOnly, 40, Toy::OneTopic), (TrainMode::Full, 30, Toy::Graded)] {
        let mut tuner = tuner_on(Level::Score, mode, epochs, toy, SimilarityLoss::Cosine, mode == TrainMode::Full);
        finish(&mut tuner);
        let best = spearman_of(&tuner);
        println!("{mode:?}: Spearman {best}");
        assert!(best >= 0.9, "{mode:?}: Spearman {best}, {:?}", tuner.best_scores());
    }
}

#[test]
fn the_contrastive_loss_separates_duplicates_from_different_pairs() {
    let _rng = device_rng();
    let mut tuner = tuner(Level::Embedding, TrainMode::HeadOnly, 30, Toy::Binary, SimilarityLoss::Contrastive);
    finish(&mut tuner);
    let m = tuner.best_scores().and_then(TaskScores::similarity).unwrap();
    assert!(m.accuracy.is_some_and(|a| a >= 0.9), "{m:?}");
}

#[test]
fn a_similarity_run_resumed_from_a_checkpoint_ends_as_the_uninterrupted_one() {
    let _rng = device_rng();
    for (level, mode) in [(Level::Embedding, TrainMode::Full), (Level::Embedding, TrainMode::HeadOnly), (Level::Score, TrainMode::Full)] {
        let make = || tuner(level, mode, 2, Toy::Graded, SimilarityLoss::Cosine);
        let mut whole = make();
        let expected = finish(&mut whole);
        let mut first = make();
        let mut steps = 0;
        while steps < 5 {
            if let Event::Step(_) = pollster::block_on(first.advance()).unwrap() {
                steps += 1;
            }
        }
        let files = pollster::block_on(first.snapshot(true)).unwrap().into_files();
        let mut resumed = make().restore(Snapshot::from_files(files).unwrap()).unwrap();
        let got = finish(&mut resumed);
        let last = |r: &[EvalReport]| r.last().map(|r| (r.valid_loss, r.scores.clone()));
        assert_eq!(last(&got), last(&expected), "{level:?} {mode:?}");
        assert_eq!(resumed.best_scores(), whole.best_scores(), "{level:?} {mode:?}");
    }
}

#[test]
fn both_models_export_and_load_back_to_the_same_scores() {
    let _rng = device_rng();
    let pairs = [("dog cat horse bird".to_string(), "bird horse cat dog".to_string()), ("dog cat horse bird".to_string(), "rome tea lima egg".to_string())];
    let config = Preset::Tiny.config(WORDS.len() + 5).with_max_position_embeddings(16);
    let device = Device::flex();
    for level in [Level::Score, Level::Embedding] {
        let mut tuner = tuner(level, TrainMode::HeadOnly, 2, Toy::Graded, SimilarityLoss::Cosine);
        finish(&mut tuner);
        let model = tuner.best_model();
        let before = pollster::block_on(score_pairs(&model, &tokenizer(), &pairs, &device)).unwrap();
        let meta = tuner.meta();
        assert_eq!(meta.scale.map(|s| (s.low, s.high)), Some((0.0, 4.0)));
        let files = export(&config, &model, &meta, &tokenizer(), None, Some(vocab().as_bytes())).unwrap();
        let get = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, b)| b.clone());
        let config_json: serde_json::Value = serde_json::from_slice(&get("config.json").unwrap()).unwrap();
        let folder = CheckpointFiles { config_json: get("config.json").unwrap(), weights: get("model.safetensors").unwrap(), tokenizer_json: None, vocab_txt: get("vocab.txt") };
        let loaded = match level {
            Level::Score => {
                // transformers' regression: one label, `problem_type` regression.
                assert_eq!(config_json["problem_type"], "regression");
                assert_eq!(config_json["id2label"].as_object().unwrap().len(), 1);
                load_classifier(folder, None, &device).unwrap()
            }
            _ => {
                // A sentence-transformers folder: the encoder, its pooling, the dense layer.
                assert_eq!(config_json["architectures"][0], "BertModel");
                let modules = String::from_utf8(get("modules.json").unwrap()).unwrap();
                assert!(modules.contains("sentence_transformers.models.Dense"), "{modules}");
                let pooling = get("1_Pooling/config.json").unwrap();
                assert!(String::from_utf8_lossy(&pooling).contains("\"pooling_mode_mean_tokens\": true"));
                let modules = sentence_transformer_modules(modules.as_bytes()).unwrap();
                assert_eq!((modules.pooling.as_str(), modules.dense.as_deref()), ("1_Pooling", Some("2_Dense")));
                load_bi_encoder(folder, &pooling, Some((&get("2_Dense/config.json").unwrap(), &get(DENSE_FILE).unwrap())), &device).unwrap()
            }
        };
        assert_eq!(loaded.meta.spec.level, level);
        assert_eq!(loaded.meta.scale, meta.scale);
        let after = pollster::block_on(score_pairs(&loaded.model, &loaded.tokenizer, &pairs, &device)).unwrap();
        for (a, b) in before.iter().zip(&after) {
            assert!((a - b).abs() < 1e-5, "{level:?}: {before:?} vs {after:?}");
        }
        assert!(before[0] > before[1], "{level:?}: the same words score above other words: {before:?}");
        // One text alone: a cross-encoder's output for it (a regressor of single texts), as the
        // classifier's raw score; a bi-encoder needs both.
        let alone = [(pairs[0].0.clone(), String::new())];
        match level {
            Level::Score => {
                let one = pollster::block_on(score_pairs(&model, &tokenizer(), &alone, &device)).unwrap();
                let encoded = [tokenizer().encode(&pairs[0].0).unwrap()];
                let raw = pollster::block_on(bertbench_core::tasks::classification::predict(&model, bertbench_core::tasks::classification::Scoring::Raw, &encoded, 0, 1, &device)).unwrap();
                assert!((one[0] - raw[0][0]).abs() < 1e-6 && (one[0] - before[0]).abs() > 1e-6, "{one:?} vs {raw:?}, the pair {before:?}");
            }
            _ => {
                let e = pollster::block_on(score_pairs(&model, &tokenizer(), &alone, &device)).unwrap_err();
                assert!(e.to_string().contains("a bi-encoder compares two texts"), "{e}");
            }
        }
    }
}
