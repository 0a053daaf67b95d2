//! Studio step 2: choose a recipe, train in the worker, watch the curves.

use bertbench_core::tasks::classification::FeatureLayers;
use bertbench_core::bert::pooling::Pooling;
use bertbench_core::train::{FineTuneConfig, Phase, TaskScores, TrainMode};
use leptos::prelude::*;

use crate::app::{AppState, BackendStatus, CheckState};
use crate::backend_choice::BackendChoice;
use crate::runs::Backend;
use super::task::Features;
use super::{RunState, Studio};
use crate::widgets::{LineChart, ProgressBar, Series, duration};

fn phase_label(p: Phase) -> &'static str {
    match p {
        Phase::Features => "computing frozen features",
        Phase::Head => "training the head",
        Phase::Full => "fine-tuning everything",
        Phase::Done => "done",
    }
}

/// A number input bound to one field of the config.
fn number_field(
    studio: Studio,
    label: &'static str,
    testid: &'static str,
    get: fn(&FineTuneConfig) -> f64,
    set: fn(&mut FineTuneConfig, f64),
    step: &'static str,
) -> impl IntoView {
    view! {
        <label class="small field-inline">{label}
            <input type="number" class="num" step=step data-testid=testid
                prop:value=move || format!("{}", studio.config.with(get))
                on:change=move |ev| {
                    if let Ok(v) = event_target_value(&ev).parse::<f64>() {
                        if v.is_finite() && v >= 0.0 {
                            studio.config.update(|c| set(c, v));
                        }
                    }
                } />
        </label>
    }
}

/// Recipe, run controls, progress and curves.
#[component]
pub fn StudioTrainPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    // The class a sentence classifier on [CLS] + pooler exports as: the loaded family's own
    // (the pooler, or the layer that class puts there, fresh where the checkpoint has none).
    let pooler_class = move || {
        state.generation.get();
        state.engine().map_or("BertForSequenceClassification".to_string(), |e| e.bert.config.model_type.base_architecture().replace("Model", "ForSequenceClassification"))
    };
    let studio = expect_context::<Studio>();
    let choice = expect_context::<BackendChoice>();
    // What the task lets the user choose of its head's features, for the loaded family.
    let features = move || {
        state.generation.get();
        studio.task.get().panel().features(studio, state.engine().map(|e| e.bert.config.model_type))
    };
    let pooled = move || matches!(features(), Features::Pooled { .. });
    let fixed = move || if let Features::Fixed(text) = features() { Some(text) } else { None };
    let client = studio.client;
    let start_error = RwSignal::new(None::<String>);
    let running = move || matches!(studio.run.get(), RunState::Running { .. });
    let gpu_ok = move || {
        let BackendStatus { adapter, .. } = state.backend.get();
        adapter.is_some() && matches!(state.check.get(), CheckState::Done(r) if r.passed)
    };

    // Data to train on, without a problem to fix first.
    let has_data = move || studio.task.get().panel().has_data(studio);
    let mode = move || studio.config.with(|c| c.mode);
    let set_mode = move |ev| {
        let m = match event_target_value(&ev).as_str() {
            "full" => TrainMode::Full,
            "ftu" => TrainMode::FreezeThenUnfreeze,
            _ => TrainMode::HeadOnly,
        };
        studio.config.update(|c| c.mode = m);
    };
    let set_pooling = move |ev| {
        let p = match event_target_value(&ev).as_str() {
            "cls" => Pooling::Cls,
            "pooler" => Pooling::Pooler,
            _ => Pooling::Mean,
        };
        studio.config.update(|c| {
            c.features.pooling = p;
            if p == Pooling::Pooler {
                c.features.layers = FeatureLayers::Last;
            }
        });
    };
    let set_layers = move |ev| {
        let l = match event_target_value(&ev).as_str() {
            "second" => FeatureLayers::SecondToLast,
            "sum4" => FeatureLayers::SumLastFour,
            "cat4" => FeatureLayers::ConcatLastFour,
            _ => FeatureLayers::Last,
        };
        studio.config.update(|c| c.features.layers = l);
    };
    let preset = move |batch: usize, lr: f64, epochs: usize| {
        studio.config.update(|c| {
            c.batch_size = batch;
            c.learning_rate = lr;
            c.epochs = epochs;
        });
    };
    let start = move |_| {
        start_error.set(studio.start(state).err());
    };
    // The Train button is disabled once the run starts, and Pause is redrawn as Resume: the
    // focus would fall back to the page's start, twenty Tabs from the run's controls. It moves
    // to Pause (or Resume) instead, whenever the run's buttons are redrawn with no focus left.
    Effect::new(move |_| {
        if matches!(studio.run.get(), RunState::Running { .. }) && !choice.measuring_run.get() {
            crate::widgets::focus_if_lost("[data-testid=train-pause]");
        }
    });

    let losses = Signal::derive(move || {
        let steps = studio.steps.get();
        let evals = studio.evals.get();
        let per_step: Vec<(f64, f64)> = steps.iter().map(|s| (s.step as f64, s.loss as f64)).collect();
        // A running mean makes the noisy per-batch loss readable.
        let window = (per_step.len() / 30).clamp(1, 25);
        let smooth: Vec<(f64, f64)> = per_step
            .iter()
            .enumerate()
            .map(|(i, &(x, _))| {
                let from = i.saturating_sub(window - 1);
                let slice = &per_step[from..=i];
                (x, slice.iter().map(|p| p.1).sum::<f64>() / slice.len() as f64)
            })
            .collect();
        vec![
            Series { name: "training loss (per batch, smoothed)".into(), color: "#2f6fde", points: smooth, dots: false },
            Series { name: "validation loss".into(), color: "#d9731a", points: evals.iter().map(|e| (e.step as f64, e.valid_loss as f64)).collect(), dots: true },
        ]
    });
    let accuracy = Signal::derive(move || {
        let evals = studio.evals.get();
        // A similarity model is scored by correlations with the gold scores.
        if evals.iter().any(|e| e.scores.similarity().is_some()) {
            let corr = |f: fn(&bertbench_core::tasks::similarity::SimilarityMetrics) -> f32| {
                evals.iter().filter_map(|e| Some((e.step as f64, f(e.scores.similarity()?) as f64))).collect()
            };
            return vec![
                Series { name: "training: pairs on the right side of 0.5".into(), color: "#2f6fde", points: evals.iter().map(|e| (e.step as f64, e.train_accuracy as f64)).collect(), dots: true },
                Series { name: "validation Spearman".into(), color: "#d9731a", points: corr(|m| m.spearman), dots: true },
                Series { name: "validation Pearson".into(), color: "#009e73", points: corr(|m| m.pearson), dots: true },
            ];
        }
        // A question-answering model is scored by its answers: exact match and F1.
        if evals.iter().any(|e| e.scores.answers().is_some()) {
            let answers = |f: fn(&bertbench_core::tasks::qa::AnswerMetrics) -> f32| {
                evals.iter().filter_map(|e| Some((e.step as f64, f(e.scores.answers()?) as f64))).collect()
            };
            return vec![
                Series { name: "training: start and end tokens right".into(), color: "#2f6fde", points: evals.iter().map(|e| (e.step as f64, e.train_accuracy as f64)).collect(), dots: true },
                Series { name: "validation exact match".into(), color: "#d9731a", points: answers(|a| a.all.exact), dots: true },
                Series { name: "validation F1".into(), color: "#009e73", points: answers(|a| a.all.f1), dots: true },
            ];
        }
        vec![
            Series { name: "training accuracy".into(), color: "#2f6fde", points: evals.iter().map(|e| (e.step as f64, e.train_accuracy as f64)).collect(), dots: true },
            Series { name: "validation accuracy".into(), color: "#d9731a", points: evals.iter().map(|e| (e.step as f64, e.metrics.accuracy as f64)).collect(), dots: true },
        ]
        .into_iter()
        // A tagger is also scored by whole entities.
        .chain(evals.iter().any(|e| e.scores.entities().is_some()).then(|| Series {
            name: "validation entity F1".into(),
            color: "#009e73",
            points: evals.iter().filter_map(|e| Some((e.step as f64, e.scores.entities()?.f1 as f64))).collect(),
            dots: true,
        }))
        .collect()
    });

    let progress = move || {
        let live = studio.live.get();
        let fraction = Signal::derive(move || {
            let l = studio.live.get();
            match (l.features, l.evaluating) {
                (Some((d, t)), _) if t > 0 => Some(d as f64 / t as f64),
                _ if l.total_steps > 0 => Some(l.step as f64 / l.total_steps as f64),
                _ => None,
            }
        });
        let phase = live.phase.map(phase_label).unwrap_or("starting");
        let detail = match (live.features, live.evaluating) {
            _ if choice.measuring_run.get() => "measuring which backend is faster at this run's batch shape…".to_string(),
            (Some((d, t)), _) => format!("{d} / {t} examples encoded"),
            (_, Some((d, t))) => format!("evaluating: {d} / {t}"),
            _ => {
                let rate = live.steps_per_second.map(|r| format!(" · {r:.2} steps/s")).unwrap_or_default();
                let eta = match (live.steps_per_second, live.total_steps) {
                    (Some(r), t) if r > 0.0 && t > live.step => format!(" · about {} left", duration((t - live.step) as f64 / r)),
                    _ => String::new(),
                };
                format!("step {} / {}{rate}{eta}", live.step, live.total_steps)
            }
        };
        let restart = live.restart.map(|(i, n)| format!("seed {} of {n} · ", i + 1)).unwrap_or_default();
        view! {
            <div data-testid="train-progress">
                <p class="small"><b>{format!("{restart}{phase}")}</b>" · "<span data-testid="train-detail">{detail}</span></p>
                <ProgressBar fraction=fraction />
            </div>
        }
    };

    view! {
        <section class="card" data-testid="studio-train">
            <h2>"2 · Train"</h2>
            <p class="hint">"Head only: the encoder is frozen, its features are computed once and a small classifier trains on them in seconds. "
                "Full fine-tuning trains every weight (slow on a CPU: minutes per epoch). Freeze, then unfreeze does the first and then the second."</p>
            <div class="row">
                <label class="small">"Mode "
                    // `prop:value` as well as each option's `selected`: once a person has picked an
                    // option, the browser no longer follows the `selected` attribute, and a recipe
                    // set for them (a task's default) must still show.
                    <select data-testid="train-mode" on:change=set_mode prop:disabled=running
                        prop:value=move || match mode() { TrainMode::HeadOnly => "head", TrainMode::Full => "full", TrainMode::FreezeThenUnfreeze => "ftu" }>
                        <option value="head" selected=move || mode() == TrainMode::HeadOnly>{TrainMode::HeadOnly.label()}</option>
                        <option value="full" selected=move || mode() == TrainMode::Full>{TrainMode::Full.label()}</option>
                        <option value="ftu" selected=move || mode() == TrainMode::FreezeThenUnfreeze>{TrainMode::FreezeThenUnfreeze.label()}</option>
                    </select>
                </label>
                <span class="small" class:hidden=move || features() != Features::PerToken>"Features: each token's vector from the"</span>
                <span class="small" data-testid="choice-features" class:hidden=move || fixed().is_none()>{move || fixed().unwrap_or_default()}</span>
                <label class="small" class:hidden=move || !pooled()>"Features "
                    <select data-testid="feature-pooling" on:change=set_pooling prop:disabled=running>
                        <option value="mean" selected=move || studio.config.with(|c| c.features.pooling == Pooling::Mean)>"mean of tokens"</option>
                        <option value="cls" selected=move || studio.config.with(|c| c.features.pooling == Pooling::Cls)>"[CLS] token"</option>
                        <option value="pooler" prop:disabled=move || matches!(features(), Features::Pooled { pooler: false, .. })
                            selected=move || studio.config.with(|c| c.features.pooling == Pooling::Pooler)>{move || format!("[CLS] + pooler (exports as {})", pooler_class())}</option>
                    </select>
                </label>
                <label class="small" class:hidden=move || matches!(features(), Features::Fixed(_) | Features::Pooled { layers: false, .. })>
                    <span class:hidden=move || !pooled()>"of "</span>
                    <select data-testid="feature-layers" on:change=set_layers
                        prop:disabled=move || running() || (matches!(features(), Features::Pooled { pooler_fixes_layers: true, .. }) && studio.config.with(|c| c.features.pooling == Pooling::Pooler))>
                        {[(FeatureLayers::Last, "last"), (FeatureLayers::SecondToLast, "second"), (FeatureLayers::SumLastFour, "sum4"), (FeatureLayers::ConcatLastFour, "cat4")].map(|(l, v)| view! {
                            <option value=v selected=move || studio.config.with(|c| c.features.layers == l)>{l.label()}</option>
                        }).collect_view()}
                    </select>
                </label>
            </div>
            <div class="row small">
                <label class="small" title="Same shape and vocabulary, random weights: what the encoder's pretraining is worth on your data">
                    <input type="checkbox" data-testid="from-scratch" prop:checked=move || studio.from_scratch.get() prop:disabled=running
                        on:change=move |ev| studio.from_scratch.set(event_target_checked(&ev)) />
                    " start the encoder from random weights (baseline without pretraining)"
                </label>
            </div>
            <div class="row small" data-testid="task-recipe">
                <span class="muted" data-testid="recipe-note">{move || {
                    let kind = studio.recipe_kind();
                    if studio.config.with(|c| kind.is_recipe(c)) {
                        format!("Recipe: this task's default, {}.", kind.note())
                    } else {
                        format!("Recipe: your own. This task's default: {}.", kind.note())
                    }
                }}</span>
                <button class="secondary small" data-testid="recipe-default" prop:disabled=move || running() || studio.config.with(|c| studio.recipe_kind().is_recipe(c))
                    on:click=move |_| { let kind = studio.recipe_kind(); studio.config.update(|c| *c = kind.with_recipe(c)) }>"Use the default recipe"</button>
            </div>
            // A recipe the task knows to be weak, said before anyone waits for it.
            {move || studio.task.get().panel().mode_warning(mode())}
            <div class="row small">
                <span class="muted">"BERT paper presets (full fine-tuning):"</span>
                {[(32usize, 5e-5f64, 2usize), (32, 3e-5, 3), (16, 2e-5, 4), (16, 5e-5, 2)].map(|(b, lr, e)| view! {
                    <button class="secondary small" prop:disabled=running on:click=move |_| preset(b, lr, e)>{format!("batch {b} · lr {lr:e} · {e} epochs")}</button>
                }).collect_view()}
            </div>
            <details>
                <summary>"All settings"</summary>
                <div class="settings">
                    {number_field(studio, "batch size", "batch-size", |c| c.batch_size as f64, |c, v| c.batch_size = (v as usize).max(1), "1")}
                    {number_field(studio, "learning rate (encoder)", "learning-rate", |c| c.learning_rate, |c, v| c.learning_rate = v, "any")}
                    {number_field(studio, "epochs (full)", "epochs", |c| c.epochs as f64, |c, v| c.epochs = v as usize, "1")}
                    {number_field(studio, "learning rate (head on frozen features)", "head-learning-rate", |c| c.head_learning_rate, |c, v| c.head_learning_rate = v, "any")}
                    {number_field(studio, "epochs (head)", "head-epochs", |c| c.head_epochs as f64, |c, v| c.head_epochs = v as usize, "1")}
                    {number_field(studio, "warmup (share of steps)", "warmup", |c| c.warmup_ratio, |c, v| c.warmup_ratio = v.min(1.0), "0.05")}
                    {number_field(studio, "weight decay", "weight-decay", |c| c.weight_decay, |c, v| c.weight_decay = v, "0.01")}
                    {number_field(studio, "clip gradient norm at (0 = off)", "clip", |c| c.max_grad_norm, |c, v| c.max_grad_norm = v, "0.5")}
                    {number_field(studio, "dropout before the head", "dropout", |c| c.dropout, |c, v| c.dropout = v.min(0.9), "0.05")}
                    {number_field(studio, "seed", "seed", |c| c.seed as f64, |c, v| c.seed = v as u64, "1")}
                    {number_field(studio, "evaluate every N steps (0 = each epoch)", "eval-every", |c| c.eval_every as f64, |c, v| c.eval_every = v as usize, "1")}
                    <label class="small field-inline" title="Full fine-tuning puts texts of similar length in the same batch (as transformers' group_by_length), so batches pad less and epochs take less time">
                        <input type="checkbox" data-testid="group-by-length" prop:checked=move || studio.config.with(|c| c.group_by_length) prop:disabled=running
                            on:change=move |ev| studio.config.update(|c| c.group_by_length = event_target_checked(&ev)) />
                        " batch texts of similar length together (faster full fine-tuning)"
                    </label>
                    <label class="small field-inline" class:hidden=move || studio.task.get().panel().sets_own_length()>"max tokens per example"
                        <input type="number" class="num" data-testid="max-len" prop:value=move || studio.max_len.get().to_string()
                            on:change=move |ev| {
                                if let Ok(v) = event_target_value(&ev).parse::<usize>() {
                                    studio.max_len.set(v.clamp(8, 512));
                                    studio.revalidate(state);
                                }
                            } />
                    </label>
                    <label class="small field-inline">"restarts (seeds tried, best kept)"
                        <input type="number" class="num" data-testid="restarts" prop:value=move || studio.restarts.get().to_string()
                            on:change=move |ev| {
                                if let Ok(v) = event_target_value(&ev).parse::<usize>() {
                                    studio.restarts.set(v.clamp(1, 10));
                                }
                            } />
                    </label>
                    <label class="small field-inline">"train on"
                        <select data-testid="train-backend" on:change=move |ev| studio.backend.set(if event_target_value(&ev) == "webgpu" { Backend::WebGpu } else { Backend::Cpu })>
                            <option value="cpu" data-testid="train-cpu" selected=move || studio.backend.get() == Backend::Cpu
                                data-fused-multiply-add=move || client.fused_multiply_add.get().to_string()
                                title=move || if client.fused_multiply_add.get() { "WebAssembly with relaxed SIMD: matrix products use fused multiply-add" } else { "WebAssembly with 128-bit SIMD" }>
                                {move || client.cpu_label()}
                            </option>
                            <option value="webgpu" prop:disabled=move || !gpu_ok() selected=move || studio.backend.get() == Backend::WebGpu>
                                {move || if gpu_ok() { "WebGPU".to_string() } else { "WebGPU (not available or failed its check)".to_string() }}
                            </option>
                        </select>
                    </label>
                </div>
            </details>
            <div class="row">
                <button data-testid="train-start" on:click=start
                    prop:disabled=move || running() || !has_data() || !client.ready.get() || state.backend.get().active.is_none()>
                    "Train"
                </button>
                {move || match studio.run.get() {
                    // The run starts once its probe ends.
                    RunState::Running { .. } if choice.measuring_run.get() => ().into_any(),
                    RunState::Running { paused } => view! {
                        <button class="secondary" data-testid="train-pause" on:click=move |_| client.pause(!paused)>{if paused { "Resume" } else { "Pause" }}</button>
                        <button class="secondary" data-testid="train-cancel" on:click=move |_| client.cancel()>"Cancel (keep best so far)"</button>
                        {paused.then(|| view! { <span class="badge warn" data-testid="paused">"paused"</span> })}
                    }.into_any(),
                    _ => ().into_any(),
                }}
                {move || (!client.ready.get()).then(|| view! { <span class="small muted">"starting the training worker…"</span> })}
                {move || {
                    let note = client.threads.with(|(_, note)| note.clone());
                    (client.ready.get() && !note.is_empty() && studio.backend.get() == Backend::Cpu)
                        .then(|| view! { <span class="small muted" data-testid="threads-note">{note}</span> })
                }}
                {move || (state.backend.get().active == Some(Backend::WebGpu) && studio.backend.get() == Backend::Cpu).then(|| view! {
                    <span class="small muted">"Training runs on the CPU in a background worker; the page stays usable."</span>
                })}
            </div>
            {move || choice.run_note.get().map(|why| view! { <p class="small muted" data-testid="run-backend-note">{why}</p> })}
            {move || start_error.get().map(|e| view! { <p class="banner err small" data-testid="train-start-error">{e}</p> })}
            {move || match studio.run.get() {
                RunState::Failed(msg) => Some(view! { <p class="banner err small" data-testid="train-error">{msg}</p> }.into_any()),
                RunState::Running { .. } => Some(progress().into_any()),
                RunState::Finished => studio.summary.get().map(|s| view! {
                    <p class="banner ok small" data-testid="train-done">
                        {match &s.scores {
                            TaskScores::Similarity(m) => format!("{} after {} steps in {} on the {}: validation Spearman {:.3}, Pearson {:.3}. The best weights are kept.",
                                if s.cancelled { "Cancelled" } else { "Finished" }, s.steps, duration(s.seconds), s.device, m.spearman, m.pearson),
                            TaskScores::Answers(a) => format!("{} after {} steps in {} on the {}: validation exact match {:.1}%, F1 {:.1}%. The best weights are kept.",
                                if s.cancelled { "Cancelled" } else { "Finished" }, s.steps, duration(s.seconds), s.device, a.all.exact * 100.0, a.all.f1 * 100.0),
                            TaskScores::Entities(e) => format!("{} after {} steps in {} on the {}: validation entity F1 {:.3}, words tagged right {:.1}%. The best weights are kept.",
                                if s.cancelled { "Cancelled" } else { "Finished" }, s.steps, duration(s.seconds), s.device, e.f1, s.metrics.accuracy * 100.0),
                            TaskScores::Labels(l) => format!("{} after {} steps in {} on the {}: validation micro-F1 {:.3}, macro-F1 {:.3} at threshold {:.2} (chosen on the validation set). The best weights are kept.",
                                if s.cancelled { "Cancelled" } else { "Finished" }, s.steps, duration(s.seconds), s.device, l.micro_f1, l.macro_f1, l.threshold),
                            TaskScores::Classes => format!("{} after {} steps in {} on the {}: validation accuracy {:.1}%, macro-F1 {:.3}. The best weights are kept.",
                                if s.cancelled { "Cancelled" } else { "Finished" }, s.steps, duration(s.seconds), s.device, s.metrics.accuracy * 100.0, s.metrics.macro_f1),
                        }}
                    </p>
                }.into_any()),
                RunState::Idle => None,
            }}
            {move || studio.checkpoint_note.get().map(|r| match r {
                Ok(m) => view! { <p class="small muted" data-testid="checkpoint-note">{m}</p> }.into_any(),
                Err(e) => view! { <p class="banner warn small" data-testid="checkpoint-error">{e}</p> }.into_any(),
            })}
            {move || (!studio.steps.with(Vec::is_empty) || !studio.evals.with(Vec::is_empty)).then(|| view! {
                <div class="grid2">
                    <LineChart series=losses x_label="step" y_label=studio.task.get_untracked().panel().loss_name() testid="loss-chart" />
                    <LineChart series=accuracy x_label="step" y_label="accuracy" y_range=(0.0, 1.0) testid="accuracy-chart" />
                </div>
            })}
        </section>
    }
}
