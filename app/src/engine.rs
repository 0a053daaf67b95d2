//! The browser side of the engine: which device, which model, loaded how.
//!
//! burn's wgpu runtime can be initialised once per page, so the WebGPU device is acquired once
//! and kept; switching backends re-loads the kept checkpoint bytes onto the other device.

use std::cell::RefCell;

use bertbench_core::burn::prelude::Device;
use bertbench_core::checkpoint::{self, Bert, CheckpointFiles};

use crate::fetch::{fetch_bytes, fetch_optional};

/// Models the page can load: directory under `models/`, and a label.
pub const MODELS: &[(&str, &str)] = &[
    ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2 (pretrained sentence encoder)"),
    ("bert-tiny", "BERT-tiny (random weights, for testing)"),
];

/// The model loaded when the page opens.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// Where the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// The browser's WebGPU adapter, through burn-wgpu.
    WebGpu,
    /// burn's pure-Rust `flex` backend compiled to WebAssembly.
    Cpu,
}

impl BackendKind {
    /// Name for the page.
    pub fn label(self) -> &'static str {
        match self {
            BackendKind::WebGpu => "WebGPU",
            BackendKind::Cpu => "CPU",
        }
    }
}

/// An acquired WebGPU device and its adapter's name.
#[derive(Clone)]
pub struct Gpu {
    /// The burn device.
    pub device: Device,
    /// What the adapter calls itself (for example "SwiftShader Device (Subzero)").
    pub adapter: String,
}

thread_local! {
    static GPU: RefCell<Option<Result<Gpu, String>>> = const { RefCell::new(None) };
}

/// Acquires the WebGPU device on first call; later calls return the same one (or the same
/// reason it is unavailable).
pub async fn gpu() -> Result<Gpu, String> {
    if let Some(known) = GPU.with(|g| g.borrow().clone()) {
        return known;
    }
    let has_api = web_sys::window()
        .map(|w| js_sys::Reflect::has(&w.navigator(), &"gpu".into()).unwrap_or(false))
        .unwrap_or(false);
    let result = if !has_api {
        Err("this browser has no WebGPU".to_string())
    } else {
        match Device::wgpu_options().init_with_setup_async().await {
            Ok((device, setup)) => {
                let info = setup.adapter.get_info();
                let adapter = if info.name.is_empty() { format!("{:?} adapter", info.device_type) } else { info.name };
                Ok(Gpu { device, adapter })
            }
            Err(e) => Err(describe_gpu_error(&format!("{e}"))),
        }
    };
    GPU.with(|g| *g.borrow_mut() = Some(result.clone()));
    result
}

fn describe_gpu_error(raw: &str) -> String {
    if raw.to_lowercase().contains("adapter") {
        format!("no WebGPU adapter ({raw})")
    } else {
        raw.to_string()
    }
}

/// Downloads a model's files from `models/<id>/`.
pub async fn download(model_id: &str, mut progress: impl FnMut(&str, u64, Option<u64>)) -> Result<CheckpointFiles, String> {
    let base = format!("models/{model_id}");
    let config_json = fetch_bytes(&format!("{base}/config.json"), |_, _| {}).await?;
    let tokenizer_json = fetch_optional(&format!("{base}/tokenizer.json")).await?;
    let vocab_txt = if tokenizer_json.is_none() { fetch_optional(&format!("{base}/vocab.txt")).await? } else { None };
    let weights = fetch_bytes(&format!("{base}/model.safetensors"), |got, total| progress("model.safetensors", got, total)).await?;
    Ok(CheckpointFiles { config_json, weights, tokenizer_json, vocab_txt })
}

/// A model loaded on a device.
pub struct Engine {
    /// Directory name under `models/`.
    pub model_id: String,
    /// The checkpoint bytes, kept to re-load on another device.
    pub files: CheckpointFiles,
    /// The model.
    pub bert: Bert,
    /// Where it runs.
    pub device: Device,
    /// Which backend that is.
    pub backend: BackendKind,
}

impl Engine {
    /// Loads `files` onto `device`.
    pub fn build(model_id: &str, files: CheckpointFiles, device: Device, backend: BackendKind) -> Result<Self, String> {
        let bert = checkpoint::load(files.clone(), &device).map_err(|e| e.to_string())?;
        Ok(Self { model_id: model_id.to_string(), files, bert, device, backend })
    }
}
