//! wgpu natively (Vulkan; on a machine without a GPU, Mesa's lavapipe) against the CPU backend.
//! `cargo xtask test` installs lavapipe; without any Vulkan driver these tests fail, loudly.

mod common;

use std::sync::OnceLock;

use bertbench_core::burn::prelude::Device;
use bertbench_core::device_check::compare_devices;
use common::*;

fn gpu() -> Device {
    static GPU: OnceLock<Device> = OnceLock::new();
    GPU.get_or_init(|| {
        Device::wgpu_options()
            .init()
            .unwrap_or_else(|e| panic!("no wgpu adapter ({e}); install a Vulkan driver (Debian: mesa-vulkan-drivers)"))
    })
    .clone()
}

#[test]
fn wgpu_tiny_model_forward_and_training_step_match_cpu() {
    let report = pollster::block_on(compare_devices(&Device::flex(), &gpu(), 42)).unwrap();
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    assert!(report.passed, "{report:#?}");
}

#[test]
fn wgpu_minilm_matches_pytorch() {
    let device = gpu();
    let bert = minilm(&device);
    let fx = fixtures();
    let examples: Vec<_> = fx["examples"].as_array().unwrap().iter().filter(|e| e["pair"].is_null()).collect();
    let texts: Vec<String> = examples.iter().map(|e| e["text"].as_str().unwrap().to_string()).collect();
    let out = pollster::block_on(bert.embed(&texts, Default::default(), &device)).unwrap();
    for (v, ex) in out.vectors.iter().zip(&examples) {
        let err = max_abs_diff(v, &floats(&ex["mean_pooled"]));
        assert!(err <= 1e-4, "{}: max abs error {err:e}", ex["text"]);
    }
}
