//! Computing on the page's own model, shared by the explorer's views and the studio's look
//! inside: taking turns on it ([`claim`]), numbering requests so only the newest
//! answer shows ([`Latest`]), running many texts through it a few at a time so the tab keeps
//! drawing ([`each_states`]), and the one-input views' computations ([`attention_map`],
//! [`input_parts`], [`embed`]), and what a view that needs the model says while the first
//! model's weights still arrive ([`WeightsArriving`]). Where the page is isolated, the CPU worker runs on every core:
//! the heavier work goes there, with the same numbers.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use bertbench_core::analysis::embed::EmbedOptions;
use bertbench_core::analysis::inspect::{AttentionMap, InputParts, TextStates, find_word};
use bertbench_core::analysis::probe::{mean_random_cosine, nearest_centroid_accuracy};
use bertbench_core::analysis::samples::SensePreset;
use bertbench_core::bert::attention::AttentionMask;
use bertbench_core::tokenizer::Encoded;
use leptos::prelude::*;

use crate::app::{AppState, Turn};
use crate::engine::{Engine, ModelSource};
use crate::runs::Backend;
use crate::protocol::Inspecting;
use crate::worker_client::WorkerClient;
use crate::fetch::{after_paint, yield_to_browser};

/// While the first model's weights are still arriving (its tokenizer already here): says that
/// `what` needs them and how much has come; nothing otherwise. What needs them fills in by
/// itself when they are here.
#[component]
pub fn WeightsArriving(what: &'static str) -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let model = state.arriving.with_value(|a| a.as_ref().map(|r| r.model_id.clone()));
        state.weights_arriving().then(|| {
            let came = match state.load.get() {
                crate::app::LoadState::Downloading { got, total, .. } => format!(" ({}{} here)", crate::widgets::megabytes(got), total.map(|t| format!(" of {}", crate::widgets::megabytes(t))).unwrap_or_default()),
                _ => String::new(),
            };
            view! {
                <p class="banner small" data-testid="weights-arriving" role="status">
                    {format!("{what} the model's weights ({}), still arriving{came}: it fills in when they are here. The tokens already work.", model.unwrap_or_default())}
                </p>
            }
        })
    }
}

/// Texts per forward pass: small enough that one pass takes a fraction of a second on the CPU.
pub const BATCH: usize = 8;

/// The page's model, held by one computation until this is dropped (its [`Turn`]): every path
/// out of a computation lets the model go, including a computation cancelled because its view
/// closed.
pub struct Claim {
    _turn: Turn,
    engine: Rc<Engine>,
}

impl std::ops::Deref for Claim {
    type Target = Rc<Engine>;

    fn deref(&self) -> &Rc<Engine> {
        &self.engine
    }
}

/// Waits until no other computation holds the model, then holds it until the returned [`Claim`]
/// is dropped. `None` when no model is loaded.
pub async fn claim(state: AppState) -> Option<Claim> {
    // Let the page show what just changed (a model that is ready, a "working" state) first.
    after_paint().await;
    state.engine()?;
    let turn = state.take_turn().await;
    // The model in use when the turn comes (another may have been loaded meanwhile).
    Some(Claim { engine: state.engine()?, _turn: turn })
}

/// [`claim`] for request `ticket` of `latest`: `None` (and the model let go again) when a newer
/// request replaced this one while it waited, so only the newest inputs are computed.
pub async fn claim_newest(state: AppState, latest: Latest, ticket: u64) -> Option<Claim> {
    let engine = claim(state).await?;
    latest.is(ticket).then_some(engine)
}

/// Numbers a panel's requests so that only the newest one's answer is shown. Requests wait in
/// [`claim`] in no particular order, so an older one (the automatic run after a model loads)
/// can get the model after a newer one (the user's click) and would otherwise overwrite its
/// answer with one for inputs the user has since changed.
#[derive(Clone, Copy)]
pub struct Latest(StoredValue<u64>);

impl Latest {
    pub fn new() -> Self {
        Self(StoredValue::new(0))
    }

    /// A new request, newer than every earlier one.
    pub fn next(self) -> u64 {
        self.0.try_update_value(|n| {
            *n += 1;
            *n
        })
        .unwrap_or(u64::MAX)
    }

    /// Whether no request was made after `ticket` (never, once the view that made the requests
    /// has closed).
    pub fn is(self, ticket: u64) -> bool {
        self.0.try_get_value() == Some(ticket)
    }
}

/// Tokenizes every text; the error names the first text that fails.
pub fn encode_all(engine: &Engine, texts: &[String]) -> Result<Vec<Encoded>, String> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| engine.bert.tokenizer.encode(t).map_err(|e| format!("text {}: {e}", i + 1)))
        .collect()
}

/// Runs `encoded` through the model [`BATCH`] texts at a time, yielding to the browser between
/// batches, and keeps what `keep` takes from each text's states (so memory stays small).
/// `progress(done, total)` is called after each batch; `cancelled()` is checked before each.
/// Where the training worker computes on several threads and holds nothing else, the batches
/// run there (see [`offload`]); the numbers are the same.
pub async fn each_states<T>(
    engine: &Engine,
    encoded: &[Encoded],
    mut keep: impl FnMut(usize, &TextStates) -> T,
    progress: impl Fn(usize, usize),
    cancelled: impl Fn() -> bool,
) -> Result<Vec<T>, String> {
    let mut worker = offload(engine);
    let mut out = Vec::with_capacity(encoded.len());
    for (b, chunk) in encoded.chunks(BATCH).enumerate() {
        if cancelled() {
            return Err("cancelled".into());
        }
        let offloaded = match worker {
            Some(w) => w.states(&engine.model_id, chunk).await.ok(),
            None => None,
        };
        // The worker failed (it says so in the page's notices): the page computes from here on.
        worker = worker.filter(|_| offloaded.is_some());
        let states = match offloaded {
            Some(states) => states,
            None => engine.bert.text_states(chunk, &engine.device).await.map_err(|e| e.to_string())?,
        };
        for (i, s) in states.iter().enumerate() {
            out.push(keep(b * BATCH + i, s));
        }
        progress(out.len(), encoded.len());
        yield_to_browser().await;
    }
    COMPUTED_ON.with(|c| *c.borrow_mut() = where_computed(engine, worker));
    Ok(out)
}

/// One word's senses told apart by each layer of `engine` (index 0 the input embeddings), and
/// how alike the word's vectors are: per layer, the leave-one-out nearest-centroid accuracy of
/// the word's vector in each of `preset`'s sentences (the mean of its pieces) against the
/// sentences' senses, and the mean cosine of random pairs of those vectors. Shared by the senses
/// lesson and the studio's look at what fine-tuning kept.
pub async fn word_senses(engine: &Engine, preset: &SensePreset) -> Result<(Vec<f32>, Vec<f32>), String> {
    let texts: Vec<String> = preset.sentences.iter().map(|(_, s)| s.to_string()).collect();
    let first = preset.sentences.first().map(|(s, _)| *s).unwrap_or_default();
    let labels: Vec<usize> = preset.sentences.iter().map(|(s, _)| usize::from(*s != first)).collect();
    let encoded = encode_all(engine, &texts)?;
    let per_text = each_states(
        engine,
        &encoded,
        |i, s| {
            let range = find_word(&encoded[i], &texts[i], preset.word).unwrap_or(1..2);
            (0..s.layers.len()).map(|l| s.mean_of(l, range.clone())).collect::<Vec<_>>()
        },
        |_, _| {},
        || false,
    )
    .await?;
    let layers = per_text.first().map(Vec::len).unwrap_or(0);
    let (mut accuracy, mut cosine) = (Vec::with_capacity(layers), Vec::with_capacity(layers));
    for l in 0..layers {
        let vectors: Vec<Vec<f32>> = per_text.iter().map(|t| t[l].clone()).collect();
        accuracy.push(nearest_centroid_accuracy(&vectors, &labels).unwrap_or(f32::NAN));
        cosine.push(mean_random_cosine(&vectors, 200, 7).unwrap_or(f32::NAN));
    }
    Ok((accuracy, cosine))
}

/// Where work ran, in words: the worker's threads, or the page's backend.
fn where_computed(engine: &Engine, worker: Option<WorkerClient>) -> String {
    match worker {
        Some(w) => format!("CPU, {} threads, in the training worker", w.threads.get_untracked().0),
        None => format!("{}, in the page", engine.backend.label()),
    }
}

/// Inputs of at least this many tokens go to the worker (where [`offload`] allows): shorter
/// ones take the page a moment, less than the worker's first read of the model would.
pub const LONG_INPUT: usize = 64;

/// `what`'s arrays from the worker, and where they were computed, when `tokens` tokens are
/// worth sending there and it answers; `None` means the page computes.
async fn in_worker(engine: &Engine, tokens: usize, what: impl FnOnce() -> Inspecting) -> Option<(Vec<Vec<f32>>, String)> {
    // Checked first: `offload` hands the worker the model, which a short input does not need.
    if tokens < LONG_INPUT {
        return None;
    }
    let worker = offload(engine)?;
    // A failure is shown in the page's notices by the client; the page computes instead.
    let arrays = worker.inspect(&engine.model_id, what()).await.ok()?;
    Some((arrays, where_computed(engine, Some(worker))))
}

/// Every layer's and head's attention for `encoded`, and where it was computed.
pub async fn attention_map(engine: &Engine, encoded: &Encoded, mask: AttentionMask) -> Result<(AttentionMap, String), String> {
    let heads = engine.bert.config.num_attention_heads;
    let causal = mask == AttentionMask::Causal;
    if let Some((arrays, on)) = in_worker(engine, encoded.tokens.len(), || Inspecting::Attention { encoded: encoded.clone().into(), causal }).await {
        if let Some(Ok(map)) = arrays.into_iter().next().map(|w| AttentionMap::new(encoded, heads, w)) {
            return Ok((map, on));
        }
    }
    let map = engine.bert.attention_map(encoded, mask, &engine.device).await.map_err(|e| e.to_string())?;
    Ok((map, where_computed(engine, None)))
}

/// The input representation of `encoded`, part by part, and where it was computed.
pub async fn input_parts(engine: &Engine, encoded: &Encoded) -> Result<(InputParts, String), String> {
    let width = engine.bert.config.hidden_size;
    if let Some((arrays, on)) = in_worker(engine, encoded.tokens.len(), || Inspecting::InputParts { encoded: encoded.clone().into() }).await {
        if let Some(Ok(parts)) = <[Vec<f32>; 5]>::try_from(arrays).ok().map(|a| InputParts::new(encoded, width, a)) {
            return Ok((parts, on));
        }
    }
    let parts = engine.bert.input_parts(encoded, &engine.device).await.map_err(|e| e.to_string())?;
    Ok((parts, where_computed(engine, None)))
}

/// Sentence vectors of `texts`, and where they were computed.
pub async fn embed(engine: &Engine, texts: &[String], options: EmbedOptions) -> Result<(Vec<Vec<f32>>, String), String> {
    let encoded = encode_all(engine, texts)?;
    let tokens = encoded.iter().map(|e| e.tokens.len()).sum();
    let what = || Inspecting::Embed { texts: texts.to_vec(), pooling: options.pooling, normalize: options.normalize };
    if let Some((vectors, on)) = in_worker(engine, tokens, what).await {
        let width = engine.bert.config.hidden_size;
        if vectors.len() == texts.len() && vectors.iter().all(|v| v.len() == width && v.iter().all(|x| x.is_finite())) {
            return Ok((vectors, on));
        }
    }
    let e = engine.bert.embed(texts, options, &engine.device).await.map_err(|e| e.to_string())?;
    Ok((e.vectors, where_computed(engine, None)))
}

thread_local! {
    /// The training worker, once the page has one (`use_worker`).
    static WORKER: Cell<Option<WorkerClient>> = const { Cell::new(None) };
    /// Where the last [`each_states`] computed, in words.
    static COMPUTED_ON: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Lets [`each_states`] run its batches in `client`'s worker where that is faster.
pub fn use_worker(client: WorkerClient) {
    WORKER.with(|w| w.set(Some(client)));
}

/// Where the last many-text computation ran ("CPU, 2 threads, in the training worker").
pub fn computed_on() -> String {
    COMPUTED_ON.with(|c| c.borrow().clone())
}

/// The worker, when it should compute `engine`'s states: the page computes on the CPU on one
/// thread, the worker on several (the threaded build, in a cross-origin isolated page) and is
/// not training, and the model is one of the page's own, which the worker reads by its name (a
/// model opened from a folder or fine-tuned here stays in the page: its name does not identify
/// its weights). The worker is given the model first.
fn offload(engine: &Engine) -> Option<WorkerClient> {
    let client = WORKER.with(Cell::get)?;
    let threads = client.threads.get_untracked().0;
    let worth = engine.backend == Backend::Cpu && engine.source == ModelSource::Server && threads > 1 && !client.run_in_progress();
    (worth && client.send_base(engine, Backend::Cpu).is_ok()).then_some(client)
}
