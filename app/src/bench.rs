//! Entry points for the benchmark harness (`bench/run.mjs`), not used by the page itself.
//!
//! The harness calls these from JavaScript (`window.wasmBindings.BenchModel`) in the page it
//! loaded, so it times the same engine a click runs, on the same backend, without the UI's own
//! work around it. Timing stays in JavaScript; these only compute and return results.

use bertbench_core::burn::prelude::Device;
use bertbench_core::bert::checkpoint::{self, LoadedModel, CheckpointFiles};
use bertbench_core::data::Example;
use bertbench_core::analysis::embed::EmbedOptions;
use bertbench_core::train::{Event, FineTuneConfig, FineTuner, TrainMode, encode_examples};
use wasm_bindgen::prelude::*;

use crate::engine;
use crate::widgets::now_ms;

/// A model loaded for benchmarking.
#[wasm_bindgen]
pub struct BenchModel {
    /// The downloaded checkpoint, kept for `train_steps`' fresh copy.
    files: CheckpointFiles,
    bert: LoadedModel,
    device: Device,
    backend: String,
}

#[wasm_bindgen]
impl BenchModel {
    /// Downloads `models/<model_id>` from the page's origin and loads it on `backend` ("cpu" or
    /// "webgpu"); texts are cut to `max_len` tokens.
    pub async fn load(model_id: String, backend: String, max_len: usize) -> Result<BenchModel, JsError> {
        let device = device(&backend).await?;
        let files = engine::download(&model_id, |_, _, _| {}, |_| {}).await.map_err(|e| JsError::new(&e))?;
        let mut bert = checkpoint::load(files.clone(), &device).map_err(|e| JsError::new(&e.to_string()))?;
        bert.tokenizer = bert.tokenizer.with_max_len(max_len);
        Ok(BenchModel { files, bert, device, backend })
    }

    /// Mean-pooled last-layer vectors (not normalised), `batch` texts per forward pass, each
    /// batch padded to its longest text: `texts.len() × hidden_size`, flat.
    pub async fn embed(&self, texts: Vec<String>, batch: usize) -> Result<Vec<f32>, JsError> {
        let options = EmbedOptions { batch_size: batch, ..Default::default() };
        let out = self.bert.embed(&texts, options, &self.device).await.map_err(|e| JsError::new(&e.to_string()))?;
        Ok(out.vectors.concat())
    }

    /// Full fine-tuning (mean pooling + a linear head, AdamW, the studio's defaults) of a fresh
    /// copy of the model on `texts` with `labels`, for `steps` steps of `batch`: each step's
    /// wall time in ms, the read-back of its loss included.
    pub async fn train_steps(&self, texts: Vec<String>, labels: Vec<String>, batch: usize, steps: usize) -> Result<Vec<f64>, JsError> {
        // Random batches, as the PyTorch side takes them (grouping by length would make our
        // steps shorter than its steps, not faster).
        let config = FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(batch).with_epochs(1_000).with_group_by_length(false);
        let mut tuner = self.tuner(texts, labels, 0, config)?;
        let mut times = Vec::with_capacity(steps);
        let mut last = now_ms();
        while times.len() < steps {
            match tuner.advance().await.map_err(err)? {
                Event::Step(_) => times.push(now_ms() - last),
                Event::Finished => break,
                _ => {}
            }
            last = now_ms();
        }
        Ok(times)
    }

    /// One epoch of full fine-tuning (the studio's defaults, `batch` texts a step) of a fresh
    /// copy of the model on all but the last `held_out` texts, then its evaluation on those,
    /// with batches grouped by length or not: the steps taken. The harness times the call.
    pub async fn train_epoch(&self, texts: Vec<String>, labels: Vec<String>, held_out: usize, batch: usize, group: bool) -> Result<usize, JsError> {
        let config = FineTuneConfig::new().with_mode(TrainMode::Full).with_batch_size(batch).with_epochs(1).with_group_by_length(group);
        let mut tuner = self.tuner(texts, labels, held_out, config)?;
        let mut steps = 0;
        loop {
            match tuner.advance().await.map_err(err)? {
                Event::Step(_) => steps += 1,
                Event::Finished => return Ok(steps),
                _ => {}
            }
        }
    }

    /// "cpu" or "webgpu".
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        self.backend.clone()
    }

    /// The WebGPU adapter's name, or "CPU".
    pub async fn device_name(&self) -> String {
        match self.backend.as_str() {
            "webgpu" => engine::gpu().await.map(|g| g.adapter).unwrap_or_default(),
            _ => "CPU".into(),
        }
    }
}

/// The size of this wasm instance's linear memory in bytes: the most its allocator has ever
/// held, since a wasm memory only grows.
#[wasm_bindgen]
pub fn wasm_memory_bytes() -> f64 {
    #[cfg(target_arch = "wasm32")]
    {
        (core::arch::wasm32::memory_size(0) * 65_536) as f64
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        0.0
    }
}

impl BenchModel {
    /// A fine-tuning run of a fresh copy of the model: the last `held_out` texts validate (all
    /// of them, as well as training, when `held_out` is 0).
    fn tuner(&self, texts: Vec<String>, labels: Vec<String>, held_out: usize, config: FineTuneConfig) -> Result<FineTuner, JsError> {
        let examples: Vec<Example> = texts
            .into_iter()
            .zip(labels)
            .enumerate()
            .map(|(i, (text, label))| Example { line: i + 2, text, text_pair: None, label })
            .collect();
        let mut names: Vec<String> = examples.iter().map(|e| e.label.clone()).collect();
        names.sort();
        names.dedup();
        let ad = self.device.clone().autodiff();
        let bert = checkpoint::load(self.files.clone(), &ad).map_err(err)?;
        let encoded = encode_examples(&self.bert.tokenizer, &examples, &names).map_err(err)?;
        let split = encoded.len().saturating_sub(held_out);
        let (train, valid) = if held_out == 0 { (encoded.clone(), encoded) } else { (encoded[..split].to_vec(), encoded[split..].to_vec()) };
        let max_len = self.bert.tokenizer.max_len();
        FineTuner::new(bert.model, self.bert.tokenizer.pad_id, max_len, names, train, valid, config, &ad).map_err(err)
    }
}

fn err(e: bertbench_core::Error) -> JsError {
    JsError::new(&e.to_string())
}

async fn device(backend: &str) -> Result<Device, JsError> {
    match backend {
        "cpu" => Ok(Device::flex()),
        "webgpu" => engine::gpu().await.map(|g| g.device).map_err(|e| JsError::new(&e)),
        other => Err(JsError::new(&format!("unknown backend {other}; use cpu or webgpu"))),
    }
}

/// The names of the files in this origin's scratch folder (see `store::BlobWriter`), for the
/// tests: none should outlive the save that wrote them. `null` where there is no such folder
/// (nothing was ever written there).
#[wasm_bindgen]
pub async fn scratch_files() -> JsValue {
    match crate::store::scratch_files().await {
        Some(names) => names.into_iter().map(JsValue::from).collect::<js_sys::Array>().into(),
        None => JsValue::NULL,
    }
}
