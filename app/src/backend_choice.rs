//! The fastest correct backend by default. Where the browser offers a WebGPU adapter that passed
//! the device check, a short probe times the real work on each candidate (a forward pass of the
//! loaded model, and one full fine-tuning step, at 16 texts × 64 tokens): WebGPU, and the CPU
//! in the training worker on every core it has. The faster one becomes the default for
//! inference (the page's backend) and for training (the studio's "train on"); the page says
//! which and why, the user can still pick the other, and the result is remembered per adapter,
//! model and batch shape so the probe runs once.
//!
//! A run whose batch shape differs is decided by a probe at its own shape ([`BackendChoice::for_run`]:
//! a training step for a run that trains the encoder, a forward pass for one that trains only
//! its head on the encoder's features), measured when it starts unless remembered.

use std::collections::BTreeSet;

use futures::future::{Either, select};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};

use crate::app::{AppState, CheckState, switch_backend};
use crate::fetch::sleep_ms;
use crate::runs::{Backend, Timing};
use crate::worker_client::WorkerClient;

/// The first probe's batch shape (full fine-tuning's usual one).
const TEXTS: usize = 16;
const TOKENS: usize = 64;

/// The probe's timings: the CPU (with its thread count) and WebGPU (`None` where it failed or
/// did not finish in time), at one batch shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Texts in the probe's batch.
    pub texts: usize,
    /// Tokens per text.
    pub tokens: usize,
    pub cpu: Timing,
    pub cpu_threads: usize,
    pub webgpu: Option<Timing>,
}

/// The default backends the probe chose, and why, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub inference: Backend,
    pub training: Backend,
    pub why: String,
}

/// Sentences a second for `ms` per batch of `texts`.
fn rate(texts: usize, ms: f64) -> f64 {
    texts as f64 / (ms.max(1e-3) / 1000.0)
}

/// The faster backend for inference and for training, from `probe`. A WebGPU timing that is
/// missing counts as slower.
pub fn choose(probe: &Probe) -> Choice {
    let cpu_name = if probe.cpu_threads > 1 { format!("CPU {} threads", probe.cpu_threads) } else { "CPU 1 thread".to_string() };
    let inference_gpu = probe.webgpu.is_some_and(|g| g.forward_ms < probe.cpu.forward_ms);
    let training_gpu = match (probe.webgpu.and_then(|g| g.step_ms), probe.cpu.step_ms) {
        (Some(g), Some(c)) => g < c,
        (Some(_), None) => true,
        _ => false,
    };
    let speed = |ms: f64| format!("{:.0} sentences/s", rate(probe.texts, ms));
    let inference_why = match probe.webgpu {
        Some(g) => format!("inference: WebGPU {}, {cpu_name} {}", speed(g.forward_ms), speed(probe.cpu.forward_ms)),
        None => format!("inference: WebGPU did not finish, {cpu_name} {}", speed(probe.cpu.forward_ms)),
    };
    let step = |ms: Option<f64>| ms.map_or("did not finish".to_string(), |ms| format!("{:.2} s a step", ms / 1000.0));
    let training_why = format!("training: WebGPU {}, {cpu_name} {}", step(probe.webgpu.and_then(|g| g.step_ms)), step(probe.cpu.step_ms));
    Choice {
        inference: if inference_gpu { Backend::WebGpu } else { Backend::Cpu },
        training: if training_gpu { Backend::WebGpu } else { Backend::Cpu },
        why: format!("{inference_why}; {training_why} (batch {} × {} tokens).", probe.texts, probe.tokens),
    }
}

/// The key a probe is remembered under: per adapter, model and batch shape (a bigger model or
/// batch can favour the GPU).
pub fn key(adapter: &str, model_id: &str, texts: usize, tokens: usize) -> String {
    format!("bertbench-backend-probe:{adapter}:{model_id}:{texts}x{tokens}")
}

/// Whether an adapter is a software emulation of a GPU (it runs on the same CPU cores the CPU
/// backend has): no probe runs on its own there, since measuring would cost minutes of the CPU
/// it competes with; "Measure" still runs one.
pub fn is_software(adapter: &str) -> bool {
    let a = adapter.to_lowercase();
    ["swiftshader", "llvmpipe", "lavapipe", "software", "basic render"].iter().any(|s| a.contains(s))
}

/// The probe's `n` texts: the built-in sentiment examples joined until each has more words
/// than `tokens` (so more tokens: the worker cuts them), so every batch is `n × tokens`.
fn texts(n: usize, tokens: usize) -> Vec<String> {
    let lines: Vec<&str> = std::str::from_utf8(crate::examples::SENTIMENT_CSV).unwrap_or_default().lines().skip(1).collect();
    let mut next = (0..).map(|k| lines.get(k % lines.len().max(1)).copied().unwrap_or("a sentence"));
    (0..n)
        .map(|_| {
            let mut text = String::new();
            while text.split_whitespace().count() <= tokens {
                text.push_str(next.next().unwrap_or_default());
                text.push(' ');
            }
            text.trim_end().to_string()
        })
        .collect()
}

fn remembered(key: &str) -> Option<Probe> {
    serde_json::from_str(&crate::local_store::get(key)?).ok()
}

fn remember(key: &str, probe: &Probe) {
    // A full quota only means the probe runs again next time.
    if let Ok(json) = serde_json::to_string(probe) {
        crate::local_store::set(key, &json);
    }
}

/// Times the probe's work at `texts × tokens` (with a training step when `step`) on the CPU
/// worker, then on the WebGPU one, which gets at most twenty times the CPU's time (a slower GPU
/// loses without being waited for).
async fn measure(state: AppState, client: WorkerClient, texts: usize, tokens: usize, step: bool) -> Result<Probe, String> {
    let engine = state.engine().ok_or("no model is loaded")?;
    client.send_base(&engine, Backend::Cpu)?;
    client.send_base(&engine, Backend::WebGpu)?;
    let batch = self::texts(texts, tokens);
    let cpu = client.time_work(Backend::Cpu, batch.clone(), tokens, step).await?;
    let cap = (20.0 * (cpu.forward_ms + cpu.step_ms.unwrap_or(cpu.forward_ms))).max(10_000.0);
    let gpu = client.time_work(Backend::WebGpu, batch, tokens, step);
    let webgpu = match select(Box::pin(gpu), Box::pin(sleep_ms(cap as i32))).await {
        Either::Left((Ok(t), _)) => Some(t),
        Either::Left((Err(_), _)) | Either::Right(_) => None,
    };
    Ok(Probe { texts, tokens, cpu, cpu_threads: client.threads.get_untracked().0, webgpu })
}

/// The training backend for a run that trains the encoder (`full`) or only a head on its
/// features, from a probe at the run's batch shape, and why in words.
pub fn for_shape(probe: &Probe, full: bool) -> (Backend, String) {
    let c = choose(probe);
    let cpu_name = if probe.cpu_threads > 1 { format!("the CPU ({} threads)", probe.cpu_threads) } else { "the CPU (1 thread)".to_string() };
    let shape = format!("its batch of {} texts × {} tokens", probe.texts, probe.tokens);
    if full {
        let name = if c.training == Backend::WebGpu { "WebGPU" } else { "the CPU" };
        let step = |t: Option<Timing>| t.and_then(|t| t.step_ms).map_or("did not finish".to_string(), |ms| format!("{:.2} s", ms / 1000.0));
        (c.training, format!("This run trains on {name}: at {shape}, a training step takes {} on WebGPU, {} on {cpu_name}.", step(probe.webgpu), step(Some(probe.cpu))))
    } else {
        let backend = if c.inference == Backend::WebGpu { Backend::WebGpu } else { Backend::Cpu };
        let name = if backend == Backend::WebGpu { "WebGPU" } else { "the CPU" };
        let speed = |t: Option<Timing>| t.map_or("did not finish".to_string(), |t| format!("{:.0} sentences/s", rate(probe.texts, t.forward_ms)));
        (backend, format!(
            "This run trains its head on {name}, which computes the encoder's features faster: at {shape}, {} on WebGPU, {} on {cpu_name}.",
            speed(probe.webgpu), speed(Some(probe.cpu))
        ))
    }
}

/// The page's backend choice: what the probe found (or why there is none yet), and the
/// probes applied in this page, so a user's own pick is not overridden again.
#[derive(Clone, Copy)]
pub struct BackendChoice {
    pub shown: RwSignal<Option<Result<Choice, String>>>,
    pub measuring: RwSignal<bool>,
    /// A run's own probe is measuring (the run starts when it ends).
    pub measuring_run: RwSignal<bool>,
    /// Why the last run trains where it does, when a probe at its shape chose (or why none could).
    pub run_note: RwSignal<Option<String>>,
    /// The training backend the probe chose last: while "train on" still says it, the user has
    /// not picked their own, and a run's own probe may change it.
    chosen_training: StoredValue<Option<Backend>>,
    applied: StoredValue<BTreeSet<String>>,
    /// The key of the adapter and model `shown` is about.
    current: StoredValue<String>,
    client: WorkerClient,
    training: RwSignal<Backend>,
    state: AppState,
}

impl BackendChoice {
    /// Applies a probe once the page's model is on WebGPU and its check passed, for the page's
    /// backend and the studio's `training` backend: a remembered one at once, a new one on a
    /// hardware adapter (the worker must be ready).
    pub fn new(state: AppState, client: WorkerClient, training: RwSignal<Backend>) -> Self {
        let choice = Self {
            shown: RwSignal::new(None),
            measuring: RwSignal::new(false),
            run_note: RwSignal::new(None),
            measuring_run: RwSignal::new(false),
            chosen_training: StoredValue::new(None),
            applied: StoredValue::new(BTreeSet::new()),
            current: StoredValue::new(String::new()),
            client,
            training,
            state,
        };
        Effect::new(move |_| {
            state.generation.track();
            let passed = matches!(state.check.get(), CheckState::Done(r) if r.passed);
            let (Some(engine), Some(adapter)) = (state.engine(), state.backend.get().adapter) else { return };
            let key = key(&adapter, &engine.model_id, TEXTS, TOKENS);
            // Another model (or adapter): what was said of the last one no longer holds.
            if choice.current.with_value(|c| *c != key) {
                choice.current.set_value(key.clone());
                if !choice.measuring.get_untracked() {
                    choice.shown.set(None);
                }
            }
            if !passed || !client.ready.get() || engine.backend != Backend::WebGpu {
                return;
            }
            if choice.applied.with_value(|a| a.contains(&key)) {
                return;
            }
            if let Some(probe) = remembered(&key) {
                choice.apply(state, key, probe);
            } else if !is_software(&adapter) {
                choice.run(state);
            }
        });
        choice
    }

    /// Measures now (the "Measure" button, or a hardware adapter's first visit) and applies it.
    pub fn run(self, state: AppState) {
        let (Some(engine), Some(adapter)) = (state.engine(), state.backend.get_untracked().adapter) else { return };
        if self.measuring.get_untracked() {
            return;
        }
        let key = key(&adapter, &engine.model_id, TEXTS, TOKENS);
        self.applied.update_value(|a| {
            a.insert(key.clone());
        });
        self.measuring.set(true);
        spawn_local(async move {
            match measure(state, self.client, TEXTS, TOKENS, true).await {
                Ok(probe) => {
                    remember(&key, &probe);
                    self.apply(state, key, probe);
                }
                Err(e) => self.shown.set(Some(Err(e))),
            }
            self.measuring.set(false);
        });
    }

    fn apply(self, state: AppState, key: String, probe: Probe) {
        self.applied.update_value(|a| {
            a.insert(key);
        });
        let choice = choose(&probe);
        self.training.set(choice.training);
        self.chosen_training.set_value(Some(choice.training));
        let to = choice.inference;
        self.shown.set(Some(Ok(choice)));
        if state.engine().is_some_and(|e| e.backend != to) {
            spawn_local(switch_backend(state, to));
        }
    }
}

impl BackendChoice {
    /// The backend a run of `texts × tokens` (training the encoder when `full`) should train
    /// on, where the probe chose "train on" and the user kept it: the probe at the run's shape
    /// decides (remembered, or measured now on a hardware adapter; a software one is measured
    /// only by "Measure"). `None`: the studio's "train on" stands. The reason is in `run_note`.
    pub async fn for_run(self, texts: usize, tokens: usize, full: bool) -> Option<Backend> {
        let state = self.state;
        self.run_note.set(None);
        let chosen = self.chosen_training.get_value()?;
        if self.training.get_untracked() != chosen {
            return None;
        }
        let (engine, adapter) = (state.engine()?, state.backend.get_untracked().adapter?);
        let key = key(&adapter, &engine.model_id, texts, tokens);
        let probe = match remembered(&key) {
            Some(probe) => probe,
            // The first probe measured this shape's training step already.
            None if full && (texts, tokens) == (TEXTS, TOKENS) => return None,
            None if is_software(&adapter) => {
                self.run_note.set(Some(format!(
                    "Trains on {}, as the probe at 16 × 64 chose: this run's batch ({texts} × {tokens}) is not measured on a software adapter.",
                    if chosen == Backend::WebGpu { "WebGPU" } else { "the CPU" }
                )));
                return None;
            }
            None => {
                self.measuring_run.set(true);
                let measured = measure(state, self.client, texts, tokens, full).await;
                self.measuring_run.set(false);
                match measured {
                    Ok(probe) => {
                        remember(&key, &probe);
                        probe
                    }
                    Err(e) => {
                        self.run_note.set(Some(format!("This run's batch shape could not be measured ({e}); it trains where the first probe chose.")));
                        return None;
                    }
                }
            }
        };
        let (backend, why) = for_shape(&probe, full);
        self.training.set(backend);
        self.chosen_training.set_value(Some(backend));
        self.run_note.set(Some(why));
        Some(backend)
    }
}

/// The choice in words, under the backend status, with "Measure" (again).
#[component]
pub fn BackendChoiceNote() -> impl IntoView {
    let state = expect_context::<AppState>();
    let choice = expect_context::<BackendChoice>();
    let can_measure = move || state.backend.get().adapter.is_some() && matches!(state.check.get(), CheckState::Done(r) if r.passed);
    let name = |b: Backend| if b == Backend::WebGpu { "WebGPU" } else { "the CPU" };
    // Where this page remembers its probe (tests put their timings there).
    let remembered_at = move || {
        state.generation.get();
        match (state.backend.get().adapter, state.engine()) {
            (Some(adapter), Some(engine)) => key(&adapter, &engine.model_id, TEXTS, TOKENS),
            _ => String::new(),
        }
    };
    view! {
        <Show when=can_measure>
            <p class="small muted" data-testid="backend-choice" role="status" data-key=remembered_at>
                {move || match choice.shown.get() {
                    _ if choice.measuring.get() => "Measuring which backend is faster here (a forward pass and a training step on each)…".to_string(),
                    Some(Ok(c)) => format!(
                        "Fastest here: inference on {}, training on {}. {} Both can still be picked by hand.",
                        name(c.inference), if c.training == Backend::WebGpu { "WebGPU" } else { "the CPU" }, c.why
                    ),
                    Some(Err(e)) => format!("The backend probe failed: {e}"),
                    None => "Which backend is faster here has not been measured.".to_string(),
                }}
                " "
                <button class="link" data-testid="backend-probe" prop:disabled=move || choice.measuring.get() || !state.idle()
                    on:click=move |_| choice.run(state)>{move || if choice.shown.get().is_some() { "Measure again" } else { "Measure" }}</button>
            </p>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(cpu: (f64, Option<f64>), gpu: Option<(f64, Option<f64>)>) -> Probe {
        let t = |(forward_ms, step_ms)| Timing { forward_ms, step_ms };
        Probe { texts: 16, tokens: 64, cpu: t(cpu), cpu_threads: 2, webgpu: gpu.map(t) }
    }

    #[test]
    fn the_faster_backend_wins_each_kind_of_work_separately() {
        let c = choose(&probe((400.0, Some(1100.0)), Some((100.0, Some(3000.0)))));
        assert_eq!((c.inference, c.training), (Backend::WebGpu, Backend::Cpu));
        assert_eq!(c.why, "inference: WebGPU 160 sentences/s, CPU 2 threads 40 sentences/s; training: WebGPU 3.00 s a step, CPU 2 threads 1.10 s a step (batch 16 × 64 tokens).");
        let c = choose(&probe((400.0, Some(1100.0)), Some((800.0, Some(300.0)))));
        assert_eq!((c.inference, c.training), (Backend::Cpu, Backend::WebGpu));
    }

    #[test]
    fn software_adapters_are_told_apart() {
        assert!(is_software("Google SwiftShader (Vulkan)"));
        assert!(is_software("llvmpipe (LLVM 15.0.6, 256 bits)"));
        assert!(!is_software("NVIDIA GeForce RTX 4060"));
    }

    #[test]
    fn the_probe_batch_has_the_shape_asked() {
        for (n, tokens) in [(TEXTS, TOKENS), (32, 128), (1, 512)] {
            let t = texts(n, tokens);
            assert_eq!(t.len(), n);
            assert!(t.iter().all(|t| t.split_whitespace().count() > tokens), "each text is long enough to be cut to {tokens} tokens");
        }
    }

    #[test]
    fn a_run_follows_the_probe_at_its_shape_for_the_work_it_does() {
        // WebGPU computes features faster, the CPU takes training steps faster.
        let p = Probe { texts: 32, tokens: 128, ..probe((400.0, Some(1100.0)), Some((100.0, Some(3000.0)))) };
        let (backend, why) = for_shape(&p, true);
        assert_eq!(backend, Backend::Cpu);
        assert_eq!(why, "This run trains on the CPU: at its batch of 32 texts × 128 tokens, a training step takes 3.00 s on WebGPU, 1.10 s on the CPU (2 threads).");
        let (backend, why) = for_shape(&p, false);
        assert_eq!(backend, Backend::WebGpu);
        assert!(why.starts_with("This run trains its head on WebGPU"), "{why}");
        assert!(why.contains("320 sentences/s on WebGPU, 80 sentences/s on the CPU (2 threads)"), "{why}");
    }

    #[test]
    fn probes_are_remembered_per_shape() {
        assert_ne!(key("a", "m", 16, 64), key("a", "m", 32, 64));
        assert!(key("NVIDIA", "all-MiniLM-L6-v2", 16, 64).ends_with(":all-MiniLM-L6-v2:16x64"));
    }

    #[test]
    fn a_gpu_that_did_not_finish_loses() {
        let c = choose(&probe((400.0, Some(1100.0)), None));
        assert_eq!((c.inference, c.training), (Backend::Cpu, Backend::Cpu));
        assert!(c.why.contains("WebGPU did not finish"));
        let c = choose(&probe((400.0, Some(1100.0)), Some((100.0, None))));
        assert_eq!((c.inference, c.training), (Backend::WebGpu, Backend::Cpu));
    }
}
