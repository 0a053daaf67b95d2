//! The browser side of the engine: which device, which model, loaded how.
//!
//! burn's wgpu runtime can be initialised once per page, so the WebGPU device is acquired once
//! and kept; switching backends re-loads the kept checkpoint bytes onto the other device.

use std::cell::RefCell;

use bertbench_core::burn::prelude::Device;
#[cfg(feature = "webgpu")]
use bertbench_core::burn::tensor::wgpu::wgpu;
use bertbench_core::bert::checkpoint::{self, CheckpointFiles, Head, LoadedModel};
use bertbench_core::tasks::pretraining::{self, MlmHead};

use crate::runs::Backend;
use crate::fetch::{fetch_bytes, fetch_model_file, fetch_optional};

/// Labels of the models we know; `models/index.json` (written at set-up) says which are present.
pub const MODELS: &[(&str, &str)] = &[
    ("all-MiniLM-L6-v2-int8", "all-MiniLM-L6-v2 (pretrained sentence encoder, 8-bit weights: 24 MB)"),
    ("all-MiniLM-L6-v2-f16", "all-MiniLM-L6-v2 with f16 weights (45 MB)"),
    ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2 with f32 weights (exactly PyTorch's: 91 MB)"),
    ("bert-tiny", "BERT-tiny (random weights, for testing)"),
];

/// The label for a model folder.
pub fn model_label(id: &str) -> String {
    MODELS.iter().find(|(m, _)| *m == id).map(|(_, l)| l.to_string()).unwrap_or_else(|| id.to_string())
}

/// The model folders the server has, from `models/index.json`; the default model alone if the
/// index is missing or unreadable.
pub async fn available_models() -> Vec<String> {
    let listed = fetch_optional("models/index.json")
        .await
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<Vec<String>>(&b).ok())
        .filter(|l| !l.is_empty());
    listed.unwrap_or_else(|| vec![DEFAULT_MODEL.to_string()])
}

/// The model loaded when the page opens: all-MiniLM-L6-v2 with each matrix stored in 8 bits
/// (a scale per 64 weights: 24 MB instead of 91), read as f32. The f32 and f16 folders are in the
/// model menu, downloaded when chosen.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2-int8";

/// What the lighter copies of the default model cost: the largest error of their hidden states
/// against PyTorch on the f32 weights, as `core/tests/parity.rs` bounds it, by model folder.
pub const STORED_ERROR: &[(&str, &str)] = &[("all-MiniLM-L6-v2-int8", "6e-2"), ("all-MiniLM-L6-v2-f16", "3e-3")];

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
    // `navigator.gpu`, in the page or in a worker.
    let has_api = js_sys::Reflect::get(&js_sys::global(), &"navigator".into())
        .map(|n| js_sys::Reflect::has(&n, &"gpu".into()).unwrap_or(false))
        .unwrap_or(false);
    #[cfg(not(feature = "webgpu"))]
    let result = if !has_api {
        Err("this browser has no WebGPU".to_string())
    } else {
        Err("this worker runs the threaded CPU build, which has no WebGPU".to_string())
    };
    #[cfg(feature = "webgpu")]
    let result = if !has_api {
        Err("this browser has no WebGPU".to_string())
    } else {
        match Device::wgpu_options().init_with_setup_async().await {
            Ok((device, setup)) => {
                let info = setup.adapter.get_info();
                let adapter = match adapter_description().await {
                    Some(d) => d,
                    None if !info.name.is_empty() => info.name,
                    None if info.device_type == wgpu::DeviceType::Cpu => "software adapter (CPU)".to_string(),
                    None => format!("{:?}", info.device_type),
                };
                Ok(Gpu { device, adapter })
            }
            Err(e) => Err(describe_gpu_error(&e.to_string())),
        }
    };
    GPU.with(|g| *g.borrow_mut() = Some(result.clone()));
    result
}

#[cfg(feature = "webgpu")]
fn describe_gpu_error(raw: &str) -> String {
    if raw.contains("No adapter") || raw.contains("no adapters") {
        "the browser has WebGPU but offers no adapter (no supported GPU, or WebGPU is disabled)".to_string()
    } else {
        format!("WebGPU could not start: {raw}")
    }
}

/// What the browser says about its adapter (`GPUAdapterInfo`): the description, or vendor and
/// architecture. wgpu's own adapter info has no name in browsers.
#[cfg(feature = "webgpu")]
async fn adapter_description() -> Option<String> {
    use js_sys::{Function, Promise, Reflect};
    use wasm_bindgen::JsCast;
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok()?;
    let gpu = Reflect::get(&navigator, &"gpu".into()).ok()?;
    let request: Function = Reflect::get(&gpu, &"requestAdapter".into()).ok()?.dyn_into().ok()?;
    let promise: Promise = request.call0(&gpu).ok()?.dyn_into().ok()?;
    let adapter = wasm_bindgen_futures::JsFuture::from(promise).await.ok()?;
    let info = Reflect::get(&adapter, &"info".into()).ok()?;
    let field = |name: &str| Reflect::get(&info, &name.into()).ok().and_then(|v| v.as_string()).filter(|s| !s.is_empty());
    field("description").or_else(|| {
        let parts: Vec<String> = [field("vendor"), field("architecture")].into_iter().flatten().collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    })
}

/// Downloads a model's files from `models/<id>/` (the weights and tokenizer gzipped where the build
/// stored them so, see [`fetch_model_file`]). `arrived` gets `config.json` and the tokenizer's
/// files (no weights) as soon as they are here, while the weights still stream.
pub async fn download(model_id: &str, mut progress: impl FnMut(&str, u64, Option<u64>), arrived: impl FnOnce(&CheckpointFiles)) -> Result<CheckpointFiles, String> {
    let base = format!("models/{model_id}");
    let [config_url, tokenizer_url, weights_url] = ["config.json", "tokenizer.json", "model.safetensors"].map(|f| format!("{base}/{f}"));
    // Side by side: the small files arrive while the weights stream (errors in file order).
    let small = async {
        let (config_json, tokenizer_json) = futures::join!(fetch_bytes(&config_url, |_, _| {}), fetch_model_file(&tokenizer_url, |_, _| {}));
        let (config_json, tokenizer_json) = (config_json?, tokenizer_json?);
        let vocab_txt = if tokenizer_json.is_none() { fetch_model_file(&format!("{base}/vocab.txt"), |_, _| {}).await? } else { None };
        let small = CheckpointFiles { config_json, weights: Vec::new(), tokenizer_json, vocab_txt };
        arrived(&small);
        Ok::<_, String>(small)
    };
    let (small, weights) = futures::join!(small, fetch_model_file(&weights_url, |got, total| progress("model.safetensors", got, total)));
    let small = small?;
    let weights = weights?.ok_or_else(|| format!("could not download {weights_url}: HTTP 404 (neither it nor {weights_url}.gz is on the server)"))?;
    Ok(CheckpointFiles { weights, ..small })
}

/// Weights' bytes from which a model on the CPU keeps them outside the wasm heap
/// ([`Engine::outside_weights`]); smaller ones are written from the tensors when needed.
const KEEP_OUTSIDE: usize = 256 << 20;

/// A model loaded on a device.
pub struct Engine {
    /// Directory name under `models/`.
    pub model_id: String,
    /// `config.json` and the tokenizer's files; `weights` is empty (see [`Engine::files`]).
    small_files: CheckpointFiles,
    /// The weights' bytes, kept only for a model on WebGPU: if the GPU is lost, they are what
    /// the model moves to the CPU from. A model on the CPU writes them from its tensors when
    /// they are needed, so the page does not hold the weights twice (90 MB for MiniLM).
    gpu_weights: Option<Vec<u8>>,
    /// The weights' bytes of a model over [`KEEP_OUTSIDE`] on the CPU, kept in a JavaScript
    /// buffer outside the wasm heap: handing such a model to the training worker then writes
    /// nothing in the page, where writing it from its tensors would need twice its size more in
    /// a heap that already holds it (XLM-RoBERTa-base: 1.1 GB of weights).
    outside_weights: Option<js_sys::Uint8Array>,
    /// The model.
    pub bert: LoadedModel,
    /// The masked-language-model head its checkpoint carries (fill-mask in the explorer), or
    /// why there is none.
    pub mlm: Result<MlmHead, String>,
    /// Where it runs.
    pub device: Device,
    /// Which backend that is.
    pub backend: Backend,
    /// Where the model came from.
    pub source: ModelSource,
}

/// Where the page's model came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// One of the page's own models, read from `models/<model_id>/` (the training worker can
    /// read it there too).
    Server,
    /// A folder the user opened from the disk (or reopened from this browser's storage).
    Disk,
    /// Trained or pretrained in this tab.
    Page,
}

impl Engine {
    /// Loads `files` onto `device`.
    pub fn build(model_id: &str, files: CheckpointFiles, device: Device, backend: Backend) -> Result<Self, String> {
        Self::try_build(model_id, files, device, backend).map_err(|(e, _)| e)
    }

    /// [`Engine::build`], giving the files back when it fails on WebGPU (to try the CPU without
    /// keeping a second copy of the weights meanwhile). On the CPU the weights' bytes go into
    /// the model and are not copied first: a failure there gives back the small files only.
    pub fn try_build(model_id: &str, files: CheckpointFiles, device: Device, backend: Backend) -> Result<Self, (String, CheckpointFiles)> {
        let CheckpointFiles { config_json, weights, tokenizer_json, vocab_txt } = files;
        let small_files = CheckpointFiles { config_json, weights: Vec::new(), tokenizer_json, vocab_txt };
        let gpu_weights = (backend == Backend::WebGpu).then(|| weights.clone());
        let outside_weights = (backend == Backend::Cpu && weights.len() >= KEEP_OUTSIDE && cfg!(target_arch = "wasm32"))
            .then(|| js_sys::Uint8Array::from(&weights[..]));
        match checkpoint::load(CheckpointFiles { weights, ..small_files.clone() }, &device) {
            Ok(bert) => {
                let mlm = if bert.report.heads.contains(&Head::MaskedLm) {
                    pretraining::load_heads(&bert, &device).map(|h| h.predictions).map_err(|e| format!("its masked-language-model head cannot be read: {e}"))
                } else {
                    Err("it has no masked-language-model head".to_string())
                };
                Ok(Self { model_id: model_id.to_string(), small_files, gpu_weights, outside_weights, bert, mlm, device, backend, source: ModelSource::Page })
            }
            Err(e) => Err((e.to_string(), CheckpointFiles { weights: gpu_weights.unwrap_or_default(), ..small_files })),
        }
    }

    /// `config.json` and the tokenizer's files, with the weights' bytes where the page keeps
    /// them outside the wasm heap (else `None`: [`Engine::files`] writes them).
    pub fn outside_files(&self) -> Option<(&CheckpointFiles, &js_sys::Uint8Array)> {
        self.outside_weights.as_ref().map(|w| (&self.small_files, w))
    }

    /// Its `config.json` as the checkpoint has it.
    pub fn config_json(&self) -> &[u8] {
        &self.small_files.config_json
    }

    /// The model as checkpoint files (to load it on another device, or in the training
    /// worker): on the CPU the weights are written from the model's tensors, with the head
    /// tensors its checkpoint carried.
    pub fn files(&self) -> Result<CheckpointFiles, String> {
        let written = |e: bertbench_core::Error| format!("the model's weights could not be written: {e}");
        let weights = match (&self.gpu_weights, &self.bert.head_weights) {
            (Some(w), _) => w.clone(),
            (None, None) => checkpoint::save_weights(&self.bert.model).map_err(written)?,
            (None, Some(heads)) => {
                let encoder = checkpoint::save_weights(&self.bert.model).map_err(written)?;
                checkpoint::with_heads(&encoder, heads, self.bert.config.model_type).map_err(written)?
            }
        };
        Ok(CheckpointFiles { weights, ..self.small_files.clone() })
    }
}
