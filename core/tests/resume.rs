//! A fine-tuning run interrupted, saved through files and resumed in a fresh tuner takes exactly
//! the steps of the uninterrupted run: same losses, same predictions at the end.
//!
//! A process of its own, its tests one at a time: burn's device generator (dropout, weight
//! initialisation) is shared by every thread of the process.

use std::sync::Mutex;

use bertbench_core::burn::prelude::Device;
use bertbench_core::tasks::classification::FeatureSpec;
use bertbench_core::bert::config::Preset;
use bertbench_core::bert::model::BertModelConfig;
use bertbench_core::bert::pooling::Pooling;
use bertbench_core::rng::Rng;
use bertbench_core::tokenizer::{Encoded, Token};
use bertbench_core::tasks::classification::predict;
use bertbench_core::train::{Event, FineTuneConfig, FineTuner, LabeledText, Snapshot, TrainMode};

static DEVICE_RNG: Mutex<()> = Mutex::new(());

/// Label 1 iff the sentence holds token 7, else it holds token 8; the rest is noise.
fn toy(n: usize, seed: u64) -> Vec<LabeledText> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let label = i % 2;
            let len = 3 + rng.below(6);
            let at = rng.below(len);
            let mut ids = vec![2u32];
            ids.extend((0..len).map(|j| if j == at { 7 + (1 - label as u32) } else { 10 + rng.below(50) as u32 }));
            ids.push(3);
            let tokens = ids
                .iter()
                .map(|&id| Token { piece: format!("t{id}"), id, type_id: 0, offsets: (0, 0), special: id < 5 })
                .collect();
            LabeledText::sentence(Encoded { tokens, truncated_from: None }, label)
        })
        .collect()
}

/// A fresh tuner whose encoder starts from the random weights of `init_seed`.
fn tuner(mode: TrainMode, init_seed: u64) -> FineTuner {
    tuner_on(Device::flex().autodiff(), mode, init_seed)
}

/// The same on `device` (an autodiff device, with gradient checkpointing or not).
fn tuner_on(device: Device, mode: TrainMode, init_seed: u64) -> FineTuner {
    device.seed(init_seed);
    let config = Preset::Tiny.config(64).with_max_position_embeddings(16);
    let bert = BertModelConfig::new(config).init(&device);
    let cfg = FineTuneConfig::new()
        .with_mode(mode)
        .with_features(FeatureSpec { pooling: Pooling::Cls, layers: Default::default(), ..Default::default() })
        .with_batch_size(8)
        .with_learning_rate(1e-3)
        .with_epochs(2)
        .with_head_learning_rate(1e-2)
        .with_head_epochs(2)
        .with_seed(5);
    FineTuner::new(bert, 0, 16, vec!["neg".into(), "pos".into()], toy(40, 1), toy(16, 2), cfg, &device).unwrap()
}

/// Advances `tuner` to its end; every step's loss, and the best weights' probabilities on
/// held-out examples.
fn finish(tuner: &mut FineTuner) -> (Vec<f32>, Vec<f32>) {
    let mut losses = Vec::new();
    loop {
        match pollster::block_on(tuner.advance()).unwrap() {
            Event::Finished => break,
            Event::Step(s) => losses.push(s.loss),
            _ => {}
        }
    }
    let held_out: Vec<Encoded> = toy(12, 3).into_iter().map(|t| t.encoded).collect();
    let device = Device::flex();
    let probs = pollster::block_on(predict(&tuner.best_model(), bertbench_core::tasks::classification::Scoring::Softmax, &held_out, 0, 8, &device)).unwrap();
    (losses, probs.concat())
}

fn resumes_exactly(mode: TrainMode, stop: usize) {
    let _guard = DEVICE_RNG.lock().unwrap_or_else(|e| e.into_inner());
    let mut whole = tuner(mode, 1);
    let (want_losses, want_probs) = finish(&mut whole);

    let mut first = tuner(mode, 1);
    let mut losses = Vec::new();
    while losses.len() < stop || !first.can_snapshot() {
        if let Event::Step(s) = pollster::block_on(first.advance()).unwrap() {
            losses.push(s.loss);
        }
    }
    let files = pollster::block_on(first.snapshot(true)).unwrap().into_files();
    drop(first);
    // Other random weights to start from: the checkpoint must replace all of them.
    let mut resumed = tuner(mode, 99).restore(Snapshot::from_files(files).unwrap()).unwrap();
    let (rest, got_probs) = finish(&mut resumed);
    losses.extend(rest);

    assert_eq!(losses.len(), want_losses.len());
    for (i, (a, b)) in losses.iter().zip(&want_losses).enumerate() {
        assert!((a - b).abs() <= 1e-5, "step {}: loss {a} resumed vs {b} uninterrupted", i + 1);
    }
    let diff = got_probs.iter().zip(&want_probs).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(diff <= 1e-5, "the final classifiers' probabilities differ by {diff}");
}

#[test]
fn a_full_run_resumed_mid_epoch_takes_the_same_steps() {
    // 40 examples at batch 8: 5 steps an epoch. Step 7 is inside the second epoch, after the
    // first evaluation, so weights, AdamW's moments, the best weights and the order all matter.
    resumes_exactly(TrainMode::Full, 7);
}

#[test]
fn a_head_only_run_resumed_keeps_its_cached_features() {
    resumes_exactly(TrainMode::HeadOnly, 3);
}

#[test]
fn a_freeze_then_unfreeze_run_resumed_between_its_stages_takes_the_same_steps() {
    // Two head epochs of 5 steps: the snapshot is taken after the head stage's last evaluation,
    // where the second stage has started but not yet been announced.
    resumes_exactly(TrainMode::FreezeThenUnfreeze, 10);
}

#[test]
fn without_the_optimizer_state_the_run_still_resumes() {
    // What a WebGPU run saves: weights and counters, AdamW's moments start afresh.
    let _guard = DEVICE_RNG.lock().unwrap_or_else(|e| e.into_inner());
    let mut first = tuner(TrainMode::Full, 1);
    let mut steps = 0;
    while steps < 6 || !first.can_snapshot() {
        if let Event::Step(_) = pollster::block_on(first.advance()).unwrap() {
            steps += 1;
        }
    }
    let snapshot = pollster::block_on(first.snapshot(false)).unwrap();
    assert!(!snapshot.state.with_optimizer && snapshot.optimizer.is_none());
    let mut resumed = tuner(TrainMode::Full, 99).restore(snapshot).unwrap();
    assert_eq!(resumed.progress().step, 6);
    let (rest, _) = finish(&mut resumed);
    assert_eq!(rest.len(), 10 - 6);
    assert!(rest.iter().all(|l| l.is_finite()));
}

#[test]
fn gradient_checkpointing_takes_the_same_steps() {
    // burn's gradient checkpointing recomputes memory-bound operations in the backward pass;
    // dropout and all, the run must not change. It also checks that AdamW's updates keep the
    // device's strategy: a parameter with the default one made the second step's forward pass
    // panic ("strategy mismatch").
    let _guard = DEVICE_RNG.lock().unwrap_or_else(|e| e.into_inner());
    let (want_losses, want_probs) = finish(&mut tuner(TrainMode::Full, 1));
    let (losses, probs) = finish(&mut tuner_on(Device::flex().autodiff().gradient_checkpointing(), TrainMode::Full, 1));
    assert_eq!(losses.len(), want_losses.len());
    for (i, (a, b)) in losses.iter().zip(&want_losses).enumerate() {
        assert!((a - b).abs() <= 1e-5, "step {}: loss {a} with checkpointing vs {b} without", i + 1);
    }
    let diff = probs.iter().zip(&want_probs).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(diff <= 1e-5, "the final classifiers' probabilities differ by {diff}");
}
