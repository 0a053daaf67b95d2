//! What every tab of the page shares (`AppState`: the page's model, its loading, the backend
//! and its check, the sentence, the visible tab), and the flows that change it: loading a model,
//! switching backend, running the device check. The tabs' own state lives with them (`studio/`,
//! `lab/`); the page's layout is `shell/`.

use std::collections::VecDeque;
use std::rc::Rc;

use bertbench_core::bert::checkpoint::CheckpointFiles;
use bertbench_core::burn::prelude::Device;
use bertbench_core::device_check::{DeviceCheckReport, compare_devices};
use bertbench_core::tokenizer::{Encoded, Token};
use futures::channel::oneshot;
use leptos::prelude::*;

use crate::runs::Backend;
use crate::engine::{self, Engine, ModelSource};
use crate::fetch::yield_to_browser;
use crate::widgets::{DeviceHold, mark, mark_next_frame};

/// How far loading the model has got.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadState {
    /// Acquiring a device.
    Starting,
    /// Downloading `file`: `got` of `total` bytes.
    Downloading { file: String, got: u64, total: Option<u64> },
    /// Building the model on the device.
    Building(String),
    /// Ready to use.
    Ready,
    /// Could not load; the message says why.
    Failed(String),
}

/// Which backend is active and what we know about WebGPU.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BackendStatus {
    /// The backend the model is on, once loaded.
    pub active: Option<Backend>,
    /// The WebGPU adapter's name, if one was acquired.
    pub adapter: Option<String>,
    /// Why WebGPU is not used, if it is not.
    pub gpu_note: Option<String>,
    /// Whether `gpu_note` only says the browser offers no WebGPU (normal: the CPU is the
    /// fallback), rather than that WebGPU failed.
    pub gpu_absent: bool,
}

/// The WebGPU-vs-CPU check.
#[derive(Debug, Clone)]
pub enum CheckState {
    /// Not run (no WebGPU, or not yet).
    NotRun,
    /// Running.
    Running,
    /// Finished with a report.
    Done(DeviceCheckReport),
    /// Could not run; the message says why.
    Failed(String),
}

/// State shared by every panel (`Copy`: all handles).
#[derive(Clone, Copy)]
pub struct AppState {
    /// The loaded model, not reactive itself: `generation` changes whenever it does.
    pub engine: StoredValue<Option<Rc<Engine>>, LocalStorage>,
    /// Bumped on every engine change, so panels recompute.
    pub generation: RwSignal<u32>,
    /// Backend status.
    pub backend: RwSignal<BackendStatus>,
    /// Model loading status.
    pub load: RwSignal<LoadState>,
    /// Device check status.
    pub check: RwSignal<CheckState>,
    /// The selected model directory.
    pub model_id: RwSignal<String>,
    /// The model directories the server offers.
    pub models: RwSignal<Vec<String>>,
    /// True while a computation holds the model and its device ([`AppState::take_turn`]).
    pub busy: RwSignal<bool>,
    /// Computations waiting for the model, first in line first (dropping a [`Turn`] wakes it).
    pub waiting: StoredValue<VecDeque<oneshot::Sender<()>>, LocalStorage>,
    /// The sentence being explored.
    pub sentence_a: RwSignal<String>,
    /// An optional second sentence (a pair: `[CLS] a [SEP] b [SEP]`).
    pub sentence_b: RwSignal<String>,
    /// The token of the explored sentence (A, or the pair) selected in one view and shown
    /// selected in every view: tokens, input parts, attention, the map.
    pub token: RwSignal<Option<TokenChoice>>,
    /// The pretrained model, kept while a fine-tuned one is being explored.
    pub base: StoredValue<Option<Rc<Engine>>, LocalStorage>,
    /// The visible tab.
    pub tab: RwSignal<Tab>,
    /// The tokenizer and configuration of the model being downloaded, from the moment they
    /// arrive until its weights have (`None` after): the tokens views work from them while no
    /// model is loaded yet ([`AppState::reader`]).
    pub arriving: StoredValue<Option<Rc<Reader>>, LocalStorage>,
    /// Bumped when `arriving` changes.
    pub arrived: RwSignal<u32>,
}

/// What cuts a text into the model's tokens: its tokenizer and configuration.
pub struct Reader {
    /// The model folder they are from.
    pub model_id: String,
    /// Its tokenizer.
    pub tokenizer: bertbench_core::tokenizer::BertTokenizer,
    /// Its `config.json`.
    pub config: bertbench_core::BertConfig,
}

impl Reader {
    /// The tokenizer and configuration of a model's small files (`weights` not read).
    pub fn of(model_id: &str, files: &CheckpointFiles) -> Result<Self, String> {
        let config = bertbench_core::BertConfig::from_json_bytes(&files.config_json).map_err(|e| e.to_string())?;
        let tokenizer = files.tokenizer(config.read_len()).map_err(|e| e.to_string())?;
        Ok(Self { model_id: model_id.to_string(), tokenizer, config })
    }
}

/// A token selected in the explorer: its position in the explored input, and what identifies it
/// in a view that tokenizes sentence A on its own (the map).
#[derive(Debug, Clone, PartialEq)]
pub struct TokenChoice {
    /// Position in the explored input (`[CLS]` is 0).
    pub position: usize,
    /// The WordPiece piece.
    pub piece: String,
    /// Segment: 0 for sentence A, 1 for B.
    pub segment: u32,
    /// Character range in its sentence.
    pub chars: (usize, usize),
}

impl AppState {
    /// Selects the token at `position` of the explored input in every view, or clears the
    /// selection when it is already selected.
    pub fn toggle_token(&self, choice: TokenChoice) {
        self.token.update(|t| *t = if t.as_ref().is_some_and(|c| c.position == choice.position) { None } else { Some(choice) });
    }

    /// The explored input (sentence A, or the pair A and B) as the model reads it.
    pub fn explored(&self) -> Option<Result<Encoded, String>> {
        let engine = self.engine()?;
        let (a, b) = (self.sentence_a.get_untracked(), self.sentence_b.get_untracked());
        let tok = &engine.bert.tokenizer;
        Some(if b.trim().is_empty() { tok.encode(&a) } else { tok.encode_pair(&a, &b) }.map_err(|e| e.to_string()))
    }

    /// Selects the first token of the explored input that `is` accepts (`(position, token)`), in
    /// every view; `toggle` clears it instead when it is already the selected one.
    pub fn select_token(&self, is: impl Fn(usize, &Token) -> bool, toggle: bool) {
        let Some(Ok(encoded)) = self.explored() else { return };
        let Some((position, t)) = encoded.tokens.iter().enumerate().find(|(i, t)| is(*i, t)) else { return };
        let choice = TokenChoice { position, piece: t.piece.clone(), segment: t.type_id, chars: t.offsets };
        if toggle {
            self.toggle_token(choice);
        } else {
            self.token.set(Some(choice));
        }
    }

    /// The selected token's position, if any (reactive).
    pub fn token_position(&self) -> Option<usize> {
        self.token.with(|t| t.as_ref().map(|c| c.position))
    }

    /// The current engine, if loaded.
    pub fn engine(&self) -> Option<Rc<Engine>> {
        self.engine.with_value(|e| e.clone())
    }

    /// Runs `f` on the tokenizer and configuration of the page's model, or, while no model is
    /// loaded yet, of the one whose weights are arriving (reactive). `None` before either.
    pub fn reader<R>(&self, f: impl FnOnce(&bertbench_core::tokenizer::BertTokenizer, &bertbench_core::BertConfig) -> R) -> Option<R> {
        self.generation.track();
        self.arrived.track();
        if let Some(e) = self.engine() {
            return Some(f(&e.bert.tokenizer, &e.bert.config));
        }
        self.arriving.with_value(|a| a.as_ref().map(|r| f(&r.tokenizer, &r.config)))
    }

    /// Whether the model's weights are still arriving while its tokenizer is here: the first
    /// visit's download (reactive).
    pub fn weights_arriving(&self) -> bool {
        self.generation.track();
        self.arrived.track();
        self.engine().is_none() && self.arriving.with_value(|a| a.is_some())
    }

    /// A model is loaded (reactive).
    pub fn has_model(&self) -> bool {
        self.generation.get();
        self.engine().is_some()
    }

    /// A model is loaded and nothing is computing (reactive).
    pub fn idle(&self) -> bool {
        self.generation.get();
        !self.busy.get() && self.engine().is_some()
    }

    /// Waits until no other computation holds the page's model and its device, then holds them
    /// until the returned [`Turn`] is dropped. The explorer's views take turns through
    /// `compute::claim`; the device check takes one too, since two readbacks from the WebGPU
    /// device at once fail ("staging buffer could not be mapped").
    pub async fn take_turn(self) -> Turn {
        loop {
            if !self.busy.get_untracked() {
                self.busy.set(true);
                return Turn(self, DeviceHold::begin());
            }
            // Queue up; a dropped turn wakes the first in line, which tries again (another request
            // may have taken the model in between, and then it queues up again).
            let (wake, woken) = oneshot::channel();
            self.waiting.update_value(|w| w.push_back(wake));
            let _ = woken.await;
        }
    }

    /// Makes `engine` the model every panel uses.
    pub fn set_engine(&self, engine: impl Into<Rc<Engine>>) {
        let engine = engine.into();
        let backend = engine.backend;
        self.engine.set_value(Some(engine));
        if self.arriving.with_value(|a| a.is_some()) {
            self.arriving.set_value(None);
            self.arrived.update(|n| *n += 1);
        }
        self.backend.update(|b| b.active = Some(backend));
        self.load.set(LoadState::Ready);
        self.generation.update(|g| *g += 1);
    }
}

impl AppState {
    /// Shows a tab and records it in the address (a history entry, so Back returns to the tab
    /// before) and in this browser, so a reload or a later visit comes back to it.
    pub fn show(&self, t: Tab) {
        self.tab.set(t);
        if let Some(w) = web_sys::window() {
            // The lessons tab writes its lesson's link over this (`lessons::Lessons::link`).
            let _ = w.location().set_hash(t.hash());
        }
        t.remember();
    }
}

/// The model the page last loaded from the server or from the user's own folder (kept in this
/// browser), remembered so that a reload opens it again.
#[derive(Debug, Clone, PartialEq)]
pub enum LastModel {
    /// One of the server's model folders, by id.
    Server(String),
    /// A model the user opened, kept in this browser under its name (`shell::open_model`).
    Yours(String),
}

const LAST_MODEL: &str = "bertbench.model";

impl LastModel {
    /// Keeps the model the user chose in the page (the model menu, a folder opened), to open
    /// again at the next visit. A model named by the address's `?model=` is not kept: a link
    /// does not change what a plain visit opens.
    pub fn remember(&self) {
        let value = match self {
            LastModel::Server(id) => format!("server:{id}"),
            LastModel::Yours(name) => format!("yours:{name}"),
        };
        crate::local_store::set(LAST_MODEL, &value);
    }

    /// The model to open at start, if the page loaded one before in this browser.
    pub fn recalled() -> Option<LastModel> {
        Self::parse(&crate::local_store::get(LAST_MODEL)?)
    }

    fn parse(value: &str) -> Option<LastModel> {
        match value.split_once(':')? {
            ("server", id) if !id.is_empty() => Some(LastModel::Server(id.to_string())),
            ("yours", name) if !name.is_empty() => Some(LastModel::Yours(name.to_string())),
            _ => None,
        }
    }
}

/// The address's `#…` part.
pub fn current_hash() -> String {
    web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default()
}

/// Downloads `model_id` and loads it, on WebGPU if the browser has an adapter and `prefer`
/// allows, else on the CPU. Keeps the previous model if anything fails.
pub async fn load_model(state: AppState, model_id: String, prefer: Backend) {
    mark("load");
    state.load.set(LoadState::Starting);
    let gpu = find_gpu(state, prefer).await;
    // Said before the first byte comes, which on a slow link takes a while.
    state.load.set(LoadState::Downloading { file: "model.safetensors".to_string(), got: 0, total: None });
    let progress = move |file: &str, got: u64, total: Option<u64>| {
        state.load.set(LoadState::Downloading { file: file.to_string(), got, total });
    };
    // The tokenizer arrives long before the weights: on a first visit (no model yet) the tokens
    // views work from it meanwhile.
    let arrived = |small: &CheckpointFiles| {
        if state.engine().is_none() {
            if let Ok(reader) = Reader::of(&model_id, small) {
                state.arriving.set_value(Some(Rc::new(reader)));
                state.arrived.update(|n| *n += 1);
            }
        }
    };
    let files = match engine::download(&model_id, progress, arrived).await {
        Ok(f) => f,
        Err(e) => {
            failed(state, &model_id, e.to_string());
            return;
        }
    };
    mark("downloaded");
    let _ = build(state, &model_id, files, gpu, ModelSource::Server).await;
}

/// Makes a model the user opened (from the disk, or saved in this browser) the page's model,
/// on the backend in use. Keeps the previous model if it cannot be loaded; `Err` says why.
pub async fn open_model(state: AppState, name: &str, files: CheckpointFiles) -> Result<(), String> {
    check_fits(&files)?;
    let prefer = state.backend.get_untracked().active.unwrap_or(Backend::WebGpu);
    let gpu = find_gpu(state, prefer).await;
    build(state, name, files, gpu, ModelSource::Disk).await
}

/// Refuses a model too big for the tab, from its `config.json` alone: reading it holds its
/// file and its tensors at once, so it is refused before, not failed during.
pub fn check_fits(files: &CheckpointFiles) -> Result<(), String> {
    use bertbench_core::train::memory;
    match bertbench_core::BertConfig::from_json_bytes(&files.config_json) {
        Ok(config) => memory::check_memory(config.num_params(true), false, memory::WASM_MEMORY).map_err(|e| e.to_string()),
        // The loader says what is wrong with the configuration.
        Err(_) => Ok(()),
    }
}

/// The GPU, when `prefer` asks for it and the browser has one (the backend status says why not).
async fn find_gpu(state: AppState, prefer: Backend) -> Option<Result<engine::Gpu, String>> {
    let gpu = if prefer == Backend::WebGpu { Some(engine::gpu().await) } else { None };
    match &gpu {
        Some(Ok(g)) => state.backend.update(|b| {
            b.adapter = Some(g.adapter.clone());
            b.gpu_note = None;
            b.gpu_absent = false;
        }),
        Some(Err(reason)) => state.backend.update(|b| {
            b.gpu_note = Some(reason.clone());
            b.gpu_absent = true;
        }),
        None => {}
    }
    gpu
}

/// Names the model that failed and the one the page goes on using, if any. A model the user
/// opened from the disk says why where it was opened (`Err` of [`open_model`]), once: the model
/// panel goes back to the model in use.
fn failed_to_build(state: AppState, model_id: &str, e: String, source: ModelSource) {
    if source == ModelSource::Disk && state.engine().is_some() {
        state.load.set(LoadState::Ready);
    } else {
        failed(state, model_id, e);
    }
}

/// Names the model that failed and the one the page goes on using, if any.
fn failed(state: AppState, model_id: &str, e: String) {
    let kept = state.engine().map(|c| format!(" The page goes on using {}.", c.model_id)).unwrap_or_default();
    state.load.set(LoadState::Failed(format!("The model {model_id} could not be loaded: {e}{kept}")));
}

/// Builds `files` on the GPU when there is one (falling back to the CPU if the GPU refuses),
/// and makes it the page's model; `Err` (also shown in the model panel) says why it could not.
async fn build(state: AppState, model_id: &str, files: CheckpointFiles, gpu: Option<Result<engine::Gpu, String>>, source: ModelSource) -> Result<(), String> {
    let (device, kind) = match gpu {
        Some(Ok(g)) => (g.device, Backend::WebGpu),
        _ => (Device::flex(), Backend::Cpu),
    };
    state.load.set(LoadState::Building(format!("Building the model on the {}", kind.label())));
    yield_to_browser().await;
    // Building on WebGPU writes the weights to the page's device and submits work there: it waits
    // for the device check's or a view's readback to end, since a submit while one of their
    // buffers is mapped fails ("used in submit while mapped").
    let turn = if kind == Backend::WebGpu { Some(state.take_turn().await) } else { None };
    let built = Engine::try_build(model_id, files, device, kind);
    drop(turn);
    match built {
        Ok(mut engine) => {
            engine.source = source;
            mark("built");
            state.set_engine(engine);
            // The benchmark's "model ready": the frame that shows the loaded model.
            mark_next_frame("ready");
        }
        Err((e, files)) if kind == Backend::WebGpu => {
            // The GPU refused (out of memory, lost device): the CPU still works.
            state.backend.update(|b| {
                b.gpu_note = Some(format!("WebGPU failed to load the model ({e}); using the CPU"));
                b.gpu_absent = false;
            });
            match Engine::build(model_id, files, Device::flex(), Backend::Cpu) {
                Ok(mut engine) => {
                    engine.source = source;
                    state.set_engine(engine);
                    mark_next_frame("ready");
                }
                Err(e) => {
                    failed_to_build(state, model_id, e.clone(), source);
                    return Err(e);
                }
            }
        }
        Err((e, _)) => {
            failed_to_build(state, model_id, e.clone(), source);
            return Err(e);
        }
    }
    // The adapter is checked once per page; a later model load on it does not repeat the check.
    let checked = matches!(state.check.get_untracked(), CheckState::Done(_) | CheckState::Running);
    if kind == Backend::WebGpu && state.backend.get_untracked().active == Some(Backend::WebGpu) && !checked {
        run_device_check(state).await;
    }
    Ok(())
}

/// The page's model and its device, held by one computation until this is dropped: every path
/// out of a computation lets them go. A view's computation is not stopped while it holds them
/// (`widgets::spawn_in_view`): a WebGPU readback dropped in flight would leave the device unusable.
pub struct Turn(AppState, #[allow(dead_code)] DeviceHold);

impl Drop for Turn {
    fn drop(&mut self) {
        let state = self.0;
        state.busy.set(false);
        // A waiter whose future was dropped cannot be woken; the next one is.
        while let Some(wake) = state.waiting.try_update_value(|w| w.pop_front()).flatten() {
            if wake.send(()).is_ok() {
                break;
            }
        }
    }
}

/// Re-loads the current model's bytes onto another backend.
pub async fn switch_backend(state: AppState, to: Backend) {
    let Some(current) = state.engine() else { return };
    if current.backend == to {
        return;
    }
    let device = match to {
        Backend::Cpu => Device::flex(),
        Backend::WebGpu => match engine::gpu().await {
            Ok(g) => g.device,
            Err(reason) => {
                state.backend.update(|b| {
                    b.gpu_note = Some(reason);
                    b.gpu_absent = true;
                });
                return;
            }
        },
    };
    state.load.set(LoadState::Building(format!("Moving the model to the {}", to.label())));
    yield_to_browser().await;
    // As in `build`: writing to the page's WebGPU device waits for its readbacks to end.
    let turn = if to == Backend::WebGpu { Some(state.take_turn().await) } else { None };
    let built = current.files().and_then(|files| Engine::build(&current.model_id, files, device, to)).map(|mut e| {
        e.source = current.source;
        e
    });
    drop(turn);
    match built {
        Ok(engine) => state.set_engine(engine),
        Err(e) => {
            state.backend.update(|b| {
                b.gpu_note = Some(format!("could not move to the {}: {e}", to.label()));
                b.gpu_absent = false;
            });
            state.load.set(LoadState::Ready);
        }
    }
}

/// Runs the tiny-model comparison of WebGPU against the CPU; if WebGPU disagrees, moves the
/// model to the CPU and says why.
pub async fn run_device_check(state: AppState) {
    let gpu = match engine::gpu().await {
        Ok(g) => g,
        Err(reason) => {
            state.check.set(CheckState::Failed(format!("WebGPU is unavailable: {reason}")));
            return;
        }
    };
    state.check.set(CheckState::Running);
    yield_to_browser().await;
    let turn = state.take_turn().await;
    let compared = compare_devices(&Device::flex(), &gpu.device, 42).await;
    drop(turn);
    match compared {
        Ok(report) => {
            let passed = report.passed;
            state.check.set(CheckState::Done(report));
            if !passed {
                state.backend.update(|b| {
                    b.gpu_note = Some("WebGPU results differ from the CPU's on this adapter; the model runs on the CPU".into());
                    b.gpu_absent = false;
                });
                switch_backend(state, Backend::Cpu).await;
            }
        }
        Err(e) => state.check.set(CheckState::Failed(e.to_string())),
    }
}

/// The page's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Lessons,
    Explore,
    Studio,
    Lab,
}

/// Where the last tab shown is kept in this browser.
const LAST_TAB: &str = "bertbench.tab";

impl Tab {
    /// Its address, without the `#`.
    pub fn hash(self) -> &'static str {
        match self {
            Tab::Lessons => "lessons",
            Tab::Explore => "explore",
            Tab::Studio => "studio",
            Tab::Lab => "lab",
        }
    }

    /// The tab an address (`#studio`, `#lesson=attention&input=…`) names, if any.
    pub fn from_hash(hash: &str) -> Option<Tab> {
        let hash = hash.trim_start_matches('#');
        [Tab::Lessons, Tab::Explore, Tab::Studio, Tab::Lab]
            .into_iter()
            .find(|t| t.hash() == hash)
            .or_else(|| hash.starts_with("lesson=").then_some(Tab::Lessons))
    }

    /// The tab a page opens on: the one its address names, else the last one shown in this
    /// browser, else (a first visit) the lessons.
    pub fn at_start(hash: &str) -> Tab {
        Tab::from_hash(hash)
            .or_else(|| crate::local_store::get(LAST_TAB).and_then(|t| Tab::from_hash(&t)))
            .unwrap_or(Tab::Lessons)
    }

    /// Keeps this tab as the one to open next time.
    pub fn remember(self) {
        crate::local_store::set(LAST_TAB, self.hash());
    }
}

#[cfg(test)]
mod tests {
    use super::Tab;

    #[test]
    fn the_last_model_is_read_back() {
        use super::LastModel;
        assert_eq!(LastModel::parse("server:all-MiniLM-L6-v2-f32"), Some(LastModel::Server("all-MiniLM-L6-v2-f32".into())));
        assert_eq!(LastModel::parse("yours:my: model"), Some(LastModel::Yours("my: model".into())));
        assert_eq!(LastModel::parse("yours:"), None);
        assert_eq!(LastModel::parse("garbage"), None);
    }

    #[test]
    fn an_address_names_its_tab() {
        assert_eq!(Tab::from_hash("#studio"), Some(Tab::Studio));
        assert_eq!(Tab::from_hash("lab"), Some(Tab::Lab));
        assert_eq!(Tab::from_hash("#lesson=attention&input=it%20was"), Some(Tab::Lessons));
        assert_eq!(Tab::from_hash("#lessons"), Some(Tab::Lessons));
        assert_eq!(Tab::from_hash("#explore"), Some(Tab::Explore));
        assert_eq!(Tab::from_hash(""), None);
        assert_eq!(Tab::from_hash("#studios"), None);
        for t in [Tab::Lessons, Tab::Explore, Tab::Studio, Tab::Lab] {
            assert_eq!(Tab::from_hash(t.hash()), Some(t));
        }
    }
}
