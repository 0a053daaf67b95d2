//! The fastest correct backend by default. Where the browser offers a WebGPU adapter that passed
//! the device check, a short probe times the real work on each candidate (a forward pass of the
//! loaded model, and one full fine-tuning step, at the studio's batch shape): WebGPU, and the
//! CPU in the training worker on every core it has. The faster one becomes the default for
//! inference (the page's backend) and for training (the studio's "train on"); the page says
//! which and why, the user can still pick the other, and the result is remembered per adapter
//! and model so the probe runs once.

use std::collections::BTreeSet;

use futures::future::{Either, select};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};

use crate::app::{AppState, CheckState, switch_backend};
use crate::engine::BackendKind;
use crate::fetch::sleep_ms;
use crate::runs::Backend;
use crate::worker_client::WorkerClient;

/// The probe's batch: the studio's default batch and length.
const TEXTS: usize = 16;
const TOKENS: usize = 64;

/// What one backend took for the probe's work, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// A forward pass of `texts` texts.
    pub forward_ms: f64,
    /// One full fine-tuning step on as many texts; `None` where it did not finish in time.
    pub step_ms: Option<f64>,
}

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
    pub inference: BackendKind,
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
        inference: if inference_gpu { BackendKind::WebGpu } else { BackendKind::Cpu },
        training: if training_gpu { Backend::WebGpu } else { Backend::Cpu },
        why: format!("{inference_why}; {training_why} (batch {} × {} tokens).", probe.texts, probe.tokens),
    }
}

/// The key a probe is remembered under: per adapter and model (a bigger model can favour the GPU).
pub fn key(adapter: &str, model_id: &str) -> String {
    format!("bertbench-backend-probe:{adapter}:{model_id}")
}

/// Whether an adapter is a software emulation of a GPU (it runs on the same CPU cores the CPU
/// backend has): no probe runs on its own there, since measuring would cost minutes of the CPU
/// it competes with; "Measure" still runs one.
pub fn is_software(adapter: &str) -> bool {
    let a = adapter.to_lowercase();
    ["swiftshader", "llvmpipe", "lavapipe", "software", "basic render"].iter().any(|s| a.contains(s))
}

/// The probe's texts: the built-in sentiment examples joined five at a time, each longer than
/// [`TOKENS`] tokens (the worker cuts them), so every batch is `TEXTS × TOKENS`.
fn texts() -> Vec<String> {
    let lines: Vec<&str> = std::str::from_utf8(crate::studio::EXAMPLE_CSV).unwrap_or_default().lines().skip(1).collect();
    (0..TEXTS).map(|i| (0..5).map(|k| lines.get((i * 5 + k) % lines.len().max(1)).copied().unwrap_or("a sentence")).collect::<Vec<_>>().join(" ")).collect()
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

/// Times the probe's work on the CPU worker, then on the WebGPU one, which gets at most twenty
/// times the CPU's time (a slower GPU loses without being waited for).
async fn measure(state: AppState, client: WorkerClient) -> Result<Probe, String> {
    let engine = state.engine().ok_or("no model is loaded")?;
    client.send_base(&engine, Backend::Cpu)?;
    client.send_base(&engine, Backend::WebGpu)?;
    let cpu = client.time_work(Backend::Cpu, texts(), TOKENS).await?;
    let cap = (20.0 * (cpu.forward_ms + cpu.step_ms.unwrap_or(cpu.forward_ms))).max(10_000.0);
    let gpu = client.time_work(Backend::WebGpu, texts(), TOKENS);
    let webgpu = match select(Box::pin(gpu), Box::pin(sleep_ms(cap as i32))).await {
        Either::Left((Ok(t), _)) => Some(t),
        Either::Left((Err(_), _)) | Either::Right(_) => None,
    };
    Ok(Probe { texts: TEXTS, tokens: TOKENS, cpu, cpu_threads: client.threads.get_untracked().0, webgpu })
}

/// The page's backend choice: what the probe found (or why there is none yet), and the
/// probes applied in this page, so a user's own pick is not overridden again.
#[derive(Clone, Copy)]
pub struct BackendChoice {
    pub shown: RwSignal<Option<Result<Choice, String>>>,
    pub measuring: RwSignal<bool>,
    applied: StoredValue<BTreeSet<String>>,
    /// The key of the adapter and model `shown` is about.
    current: StoredValue<String>,
    client: WorkerClient,
    training: RwSignal<Backend>,
}

impl BackendChoice {
    /// Applies a probe once the page's model is on WebGPU and its check passed, for the page's
    /// backend and the studio's `training` backend: a remembered one at once, a new one on a
    /// hardware adapter (the worker must be ready).
    pub fn new(state: AppState, client: WorkerClient, training: RwSignal<Backend>) -> Self {
        let choice = Self {
            shown: RwSignal::new(None),
            measuring: RwSignal::new(false),
            applied: StoredValue::new(BTreeSet::new()),
            current: StoredValue::new(String::new()),
            client,
            training,
        };
        Effect::new(move |_| {
            state.generation.track();
            let passed = matches!(state.check.get(), CheckState::Done(r) if r.passed);
            let (Some(engine), Some(adapter)) = (state.engine(), state.backend.get().adapter) else { return };
            let key = key(&adapter, &engine.model_id);
            // Another model (or adapter): what was said of the last one no longer holds.
            if choice.current.with_value(|c| *c != key) {
                choice.current.set_value(key.clone());
                if !choice.measuring.get_untracked() {
                    choice.shown.set(None);
                }
            }
            if !passed || !client.ready.get() || engine.backend != BackendKind::WebGpu {
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
        let key = key(&adapter, &engine.model_id);
        self.applied.update_value(|a| {
            a.insert(key.clone());
        });
        self.measuring.set(true);
        spawn_local(async move {
            match measure(state, self.client).await {
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
        let to = choice.inference;
        self.shown.set(Some(Ok(choice)));
        if state.engine().is_some_and(|e| e.backend != to) {
            spawn_local(switch_backend(state, to));
        }
    }
}

/// The choice in words, under the backend status, with "Measure" (again).
#[component]
pub fn BackendChoiceNote() -> impl IntoView {
    let state = expect_context::<AppState>();
    let choice = expect_context::<BackendChoice>();
    let can_measure = move || state.backend.get().adapter.is_some() && matches!(state.check.get(), CheckState::Done(r) if r.passed);
    let name = |b: BackendKind| if b == BackendKind::WebGpu { "WebGPU" } else { "the CPU" };
    // Where this page remembers its probe (tests put their timings there).
    let remembered_at = move || {
        state.generation.get();
        match (state.backend.get().adapter, state.engine()) {
            (Some(adapter), Some(engine)) => key(&adapter, &engine.model_id),
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
        assert_eq!((c.inference, c.training), (BackendKind::WebGpu, Backend::Cpu));
        assert_eq!(c.why, "inference: WebGPU 160 sentences/s, CPU 2 threads 40 sentences/s; training: WebGPU 3.00 s a step, CPU 2 threads 1.10 s a step (batch 16 × 64 tokens).");
        let c = choose(&probe((400.0, Some(1100.0)), Some((800.0, Some(300.0)))));
        assert_eq!((c.inference, c.training), (BackendKind::Cpu, Backend::WebGpu));
    }

    #[test]
    fn software_adapters_are_told_apart() {
        assert!(is_software("Google SwiftShader (Vulkan)"));
        assert!(is_software("llvmpipe (LLVM 15.0.6, 256 bits)"));
        assert!(!is_software("NVIDIA GeForce RTX 4060"));
    }

    #[test]
    fn the_probe_batch_is_the_studios_shape() {
        let t = texts();
        assert_eq!(t.len(), TEXTS);
        assert!(t.iter().all(|t| t.split_whitespace().count() > TOKENS / 2), "each text is long enough to be cut to {TOKENS} tokens");
    }

    #[test]
    fn a_gpu_that_did_not_finish_loses() {
        let c = choose(&probe((400.0, Some(1100.0)), None));
        assert_eq!((c.inference, c.training), (BackendKind::Cpu, Backend::Cpu));
        assert!(c.why.contains("WebGPU did not finish"));
        let c = choose(&probe((400.0, Some(1100.0)), Some((100.0, None))));
        assert_eq!((c.inference, c.training), (BackendKind::WebGpu, Backend::Cpu));
    }
}
