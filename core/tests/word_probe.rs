//! Word-level probes on the page's default model (all-MiniLM-L6-v2, 8-bit weights) and the
//! built-in part-of-speech sentences, as lesson 8 runs them: part of speech is read well above
//! its control task past the input embeddings, and position best near the bottom, where the
//! position embedding is added.

mod common;

use bertbench_core::analysis::word_probe::{WordProbe, word_vectors};
use bertbench_core::burn::prelude::*;
use bertbench_core::data::parse_tagged;
use bertbench_core::tasks::tagging::join_words;
use common::*;

#[test]
fn part_of_speech_and_position_by_layer_on_the_default_model() {
    let device = Device::flex();
    let bert = bertbench_core::bert::checkpoint::load(model_files("all-MiniLM-L6-v2-int8"), &device).expect("the default model loads");
    let data = parse_tagged(&std::fs::read(repo().join("public/examples/pos.conll")).unwrap()).unwrap();
    let joined: Vec<(String, Vec<(usize, usize)>)> = data.sentences.iter().map(|s| join_words(&s.words)).collect();
    let encoded: Vec<_> = joined.iter().map(|(t, _)| bert.tokenizer.encode(t).unwrap()).collect();
    let states = pollster::block_on(bert.text_states(&encoded, &device)).unwrap();
    let vectors = states.iter().zip(&joined).map(|(s, (_, spans))| word_vectors(s, spans)).collect();
    let split = data.split(0.3, 17).unwrap();
    let probe = WordProbe::new(&data, vectors, &split.valid, 23).unwrap();
    let scores: Vec<_> = (0..probe.layers()).map(|l| probe.layer(l).unwrap()).collect();
    for (l, s) in scores.iter().enumerate() {
        println!(
            "layer {l}: pos {:.3} (control {:.3}, train {:.3}), position {:.3} (control {:.3}), majority {:.3} / {:.3}",
            s.pos.test_accuracy, s.pos_control.test_accuracy, s.pos.train_accuracy, s.position.test_accuracy, s.position_control.test_accuracy, s.pos.majority, s.position.majority
        );
    }
    println!("words {:?}", probe.words());
    let best_pos = scores.iter().map(|s| s.pos.test_accuracy).fold(0.0, f32::max);
    assert!(best_pos > 0.85, "part of speech is read well at some layer");
    assert!(scores.iter().all(|s| s.pos.test_accuracy > s.pos_control.test_accuracy), "above the control task at every layer");
    assert!(scores[0].position.test_accuracy > scores[6].position.test_accuracy, "position fades upwards");
}
