//! A tiny BERT pretrained from scratch on a corpus with a deterministic pattern learns it:
//! the MLM loss falls below a stated value and `[MASK]` after a pattern word is filled top-1.

use bertbench_core::burn::prelude::*;
use bertbench_core::bert::config::Preset;
use bertbench_core::tasks::pretraining::BertForPreTraining;
use bertbench_core::train::{PretrainConfig, Pretrainer};
use bertbench_core::rng::Rng;
use bertbench_core::tokenizer::BertTokenizer;

/// Each word of a pair always comes right before its partner.
const PAIRS: [(&str, &str); 6] = [("sun", "hot"), ("snow", "cold"), ("sugar", "sweet"), ("lemon", "sour"), ("night", "dark"), ("fire", "bright")];

fn corpus(lines: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    (0..lines)
        .map(|_| (0..4).map(|_| PAIRS[rng.below(PAIRS.len())]).map(|(a, b)| format!("{a} {b}")).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn a_tiny_bert_learns_the_pattern_by_masked_language_modelling() {
    let mut vocab = vec!["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
    vocab.extend(PAIRS.iter().flat_map(|(a, b)| [*a, *b]));
    let tokenizer = BertTokenizer::from_vocab_txt(vocab.join("\n").as_bytes(), true, 32).unwrap();
    let device = Device::flex().autodiff();
    let config = Preset::Tiny.config(tokenizer.vocab_size()).with_max_position_embeddings(32);
    let model = BertForPreTraining::from_scratch(&config, false, &device);
    let run = PretrainConfig::new().with_epochs(25).with_batch_size(32).with_learning_rate(2e-3).with_seed(7);
    let mut trainer = Pretrainer::new(model, &tokenizer, corpus(256, 1), run, &device).unwrap();
    let mut losses = Vec::new();
    while let Some(step) = pollster::block_on(trainer.step()).unwrap() {
        losses.push(step.mlm_loss);
    }
    assert_eq!(losses.len(), 200);
    let first: f32 = losses[..10].iter().sum::<f32>() / 10.0;
    let last: f32 = losses[losses.len() - 20..].iter().sum::<f32>() / 20.0;
    // Start: about ln(17) ≈ 2.8. Every word is given away by its partner (the word before or
    // after it), so a model that learnt the pattern approaches 0; picks whose partner is also
    // masked keep it above. Measured: 2.60 → 0.23.
    println!("MLM loss: first 10 steps {first:.3}, last 20 steps {last:.3}");
    assert!(first > 2.0, "first loss {first}");
    assert!(last < 0.6, "MLM loss after training {last} (started at {first})");
    for (a, b) in PAIRS {
        let text = format!("night dark {a} [MASK] sun hot");
        let fills = pollster::block_on(trainer.fill_mask(&text, 3)).unwrap();
        assert_eq!(fills[0].top[0].0, b, "{text}: {:?}", fills[0].top);
    }
}
