//! The backend probe's work in a worker (`backend_choice.rs` chooses from it): a forward pass of
//! the base model and (when asked) one full fine-tuning step, each timed after a warm-up (which
//! compiles WebGPU's shaders), on the CPU or on WebGPU, at the batch shape asked.

use bertbench_core::analysis::embed::EmbedOptions;
use bertbench_core::data::Example;
use bertbench_core::train::{Event, FineTuneConfig, FineTuner, TrainMode, encode_examples};

use super::*;
use crate::runs::Timing;

/// Times the probe's work on `backend`: `texts` cut to `max_len` tokens, labelled alternately
/// so the step has two classes; the step only with `step`.
pub(super) async fn time_work(backend: Backend, texts: Vec<String>, max_len: usize, step: bool) -> Result<Timing, String> {
    let base = base_model().await.ok_or("no model is loaded in the worker yet")?;
    let device = match backend {
        Backend::Cpu => Device::flex(),
        Backend::WebGpu => engine::gpu().await.map_err(|e| format!("WebGPU is unavailable in the worker: {e}"))?.device,
    };
    let ad = device.clone().autodiff();
    let loaded = base.on(&ad, backend).await?;
    let tokenizer = loaded.tokenizer.clone().with_max_len(max_len);
    let inference = LoadedModel { model: bertbench_core::burn::module::Module::valid(&loaded.model), tokenizer: tokenizer.clone(), ..loaded.clone() };
    let options = EmbedOptions { batch_size: texts.len(), ..Default::default() };
    let forward = || inference.embed(&texts, options, &device);
    forward().await.map_err(|e| e.to_string())?;
    let start = now_ms();
    forward().await.map_err(|e| e.to_string())?;
    let forward_ms = now_ms() - start;
    if !step {
        return Ok(Timing { forward_ms, step_ms: None });
    }

    let examples: Vec<Example> =
        texts.iter().enumerate().map(|(i, t)| Example { line: i + 2, text: t.clone(), text_pair: None, label: ["a", "b"][i % 2].to_string() }).collect();
    let names = vec!["a".to_string(), "b".to_string()];
    let encoded = encode_examples(&tokenizer, &examples, &names).map_err(|e| e.to_string())?;
    let config = FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(texts.len()).with_epochs(1_000).with_group_by_length(false);
    let mut tuner = FineTuner::new(loaded.model, tokenizer.pad_id, max_len, names, encoded.clone(), encoded, config, &ad).map_err(|e| e.to_string())?;
    let mut steps = Vec::new();
    let mut last = now_ms();
    while steps.len() < 2 {
        match tuner.advance().await.map_err(|e| e.to_string())? {
            Event::Step(_) => steps.push(now_ms() - last),
            Event::Finished => break,
            _ => {}
        }
        last = now_ms();
    }
    // The first step compiles and allocates; the second is the one a run repeats.
    Ok(Timing { forward_ms, step_ms: steps.get(1).copied() })
}
