//! Linear probes by layer: how well a linear classifier reads the labels from each layer's
//! mean-pooled vectors.

use bertbench_core::data::{Split, stratified_split};
use bertbench_core::analysis::samples::balanced_sample;
use bertbench_core::analysis::probe::{ProbeOptions, ProbeResult, linear_probe};
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::AppState;
use crate::compute::{claim, each_states, encode_all};
use crate::engine::Engine;
use crate::fetch::yield_to_browser;
use crate::studio::Studio;
use crate::widgets::{LineChart, Series, now_ms};

/// Most texts a probe uses.
const MAX_TEXTS: usize = 400;

#[derive(Debug, Clone, PartialEq)]
struct Probed {
    source: String,
    model: String,
    train: usize,
    test: usize,
    labels: usize,
    /// `(test accuracy, train accuracy)` per layer, 0 = input embeddings.
    by_layer: Vec<(f32, f32)>,
    majority: f32,
    millis: f64,
}

/// Every layer's mean-pooled vector of each text: `[text][layer][dim]`, layer 0 the input
/// embeddings.
pub(crate) async fn layer_vectors(
    engine: &Engine,
    texts: &[String],
    progress: impl Fn(usize, usize),
    cancelled: impl Fn() -> bool,
) -> Result<Vec<Vec<Vec<f32>>>, String> {
    let encoded = encode_all(engine, texts)?;
    each_states(engine, &encoded, |_, s| (0..s.layers.len()).map(|l| s.mean_of(l, 0..s.len())).collect::<Vec<_>>(), progress, cancelled).await
}

/// A linear probe of each layer's vectors (`per_text` from [`layer_vectors`]) for `labels`,
/// fitted on `split.train` and scored on `split.valid`. Yields to the browser between layers;
/// `progress(layer, last layer)`.
pub(crate) async fn probe_layers(
    per_text: &[Vec<Vec<f32>>],
    labels: &[usize],
    num_labels: usize,
    split: &Split,
    progress: impl Fn(usize, usize),
    cancelled: impl Fn() -> bool,
) -> Result<Vec<ProbeResult>, String> {
    let layers = per_text.first().map(Vec::len).unwrap_or(0);
    let take = |rows: &[usize], l: usize| -> (Vec<Vec<f32>>, Vec<usize>) { rows.iter().map(|&r| (per_text[r][l].clone(), labels[r])).unzip() };
    let mut out = Vec::with_capacity(layers);
    for l in 0..layers {
        if cancelled() {
            return Err("cancelled".into());
        }
        progress(l, layers - 1);
        yield_to_browser().await;
        let (xs, ys) = take(&split.train, l);
        let (xt, yt) = take(&split.valid, l);
        out.push(linear_probe((&xs, &ys), (&xt, &yt), num_labels, ProbeOptions::default()).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// Probe accuracy by layer.
#[component]
pub fn ProbePanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let result = RwSignal::new(None::<Result<Probed, String>>);
    let progress = RwSignal::new(None::<String>);
    let cancel = RwSignal::new(false);

    let run = move |_| {
        cancel.set(false);
        spawn_in_view(async move {
            progress.set(Some("reading the data…".into()));
            let (dataset, source) = match studio.labeled_data().await {
                Ok(d) => d,
                Err(e) => {
                    progress.set(None);
                    result.set(Some(Err(e)));
                    return;
                }
            };
            let Some(engine) = claim(state).await else {
                progress.set(None);
                return;
            };
            let start = now_ms();
            let out = async {
                if dataset.labels.len() < 2 {
                    return Err(format!("{source} has {} label(s); a probe needs at least two.", dataset.labels.len()));
                }
                let picked = balanced_sample(&dataset, MAX_TEXTS);
                let all_ids = dataset.label_ids();
                let ids: Vec<usize> = picked.iter().map(|&i| all_ids[i]).collect();
                let split = stratified_split(&ids, dataset.labels.len(), 0.3, 17).map_err(|e| e.to_string())?;
                let texts: Vec<String> = picked.iter().map(|&i| dataset.examples[i].text.clone()).collect();
                let per_text = layer_vectors(&engine, &texts, |d, t| progress.set(Some(format!("embedding {d} / {t} texts"))), move || cancel.try_get_untracked().unwrap_or(true)).await?;
                let probed = probe_layers(&per_text, &ids, dataset.labels.len(), &split, |l, n| progress.set(Some(format!("probing layer {l} of {n}"))), move || cancel.try_get_untracked().unwrap_or(true)).await?;
                let majority = probed.first().map(|r| r.majority).unwrap_or(0.0);
                let by_layer = probed.iter().map(|r| (r.test_accuracy, r.train_accuracy)).collect();
                Ok(Probed {
                    source: source.clone(),
                    model: engine.model_id.clone(),
                    train: split.train.len(),
                    test: split.valid.len(),
                    labels: dataset.labels.len(),
                    by_layer,
                    majority,
                    millis: now_ms() - start,
                })
            }
            .await;
            drop(engine);
            progress.set(None);
            result.set(Some(out.map_err(|e| if e == "cancelled" { "Cancelled.".into() } else { e })));
        });
    };

    let body = move || {
        result.get().map(|r| match r {
            Err(e) => view! { <p class="banner warn small" data-testid="probe-error">{e}</p> }.into_any(),
            Ok(p) => {
                let best = p.by_layer.iter().enumerate().max_by(|a, b| a.1.0.total_cmp(&b.1.0)).map(|(l, a)| (l, a.0)).unwrap_or((0, 0.0));
                let series = vec![
                    Series { name: "held-out accuracy".into(), color: "#4e79a7", points: p.by_layer.iter().enumerate().map(|(l, a)| (l as f64, a.0 as f64)).collect(), dots: true },
                    Series { name: "training accuracy".into(), color: "#bab0ac", points: p.by_layer.iter().enumerate().map(|(l, a)| (l as f64, a.1 as f64)).collect(), dots: false },
                    Series { name: "always the majority label".into(), color: "#e15759", points: vec![(0.0, p.majority as f64), ((p.by_layer.len() - 1) as f64, p.majority as f64)], dots: false },
                ];
                view! {
                    <p class="small muted" data-testid="probe-summary">{format!(
                        "{} on {}: {} labels, {} training and {} held-out texts. Best layer {} at {:.0}% held-out accuracy (majority baseline {:.0}%). {:.1} s.",
                        p.model, p.source, p.labels, p.train, p.test, best.0, best.1 * 100.0, p.majority * 100.0, p.millis / 1000.0
                    )}</p>
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = input embeddings)" y_label="accuracy" y_range=(0.0, 1.0) testid="probe-chart" />
                    <table class="plain small" data-testid="probe-table">
                        <tr><th>"layer"</th>{(0..p.by_layer.len()).map(|l| view! { <th>{l}</th> }).collect_view()}</tr>
                        <tr><th>"held-out"</th>{p.by_layer.iter().map(|a| view! { <td>{format!("{:.0}%", a.0 * 100.0)}</td> }).collect_view()}</tr>
                    </table>
                }
                .into_any()
            }
        })
    };

    view! {
        <section class="card" data-testid="probe-panel">
            <h2>"7 · What each layer knows"</h2>
            <p class="hint">"A linear probe is a logistic regression trained on one layer's frozen, mean-pooled vectors. "
                "If it reads the labels well, that layer already separates them along a straight line. "
                "Uses the studio's dataset when one is loaded, else the built-in sentiment examples (up to 400 texts, 30% held out)."</p>
            <div class="row">
                <button data-testid="probe-button" on:click=run prop:disabled=move || !state.idle()>"Probe every layer"</button>
                <Show when=move || progress.get().is_some()>
                    <span class="small muted">{move || progress.get()}</span>
                    <button class="secondary small" on:click=move |_| cancel.set(true)>"Cancel"</button>
                </Show>
            </div>
            {body}
        </section>
    }
}
