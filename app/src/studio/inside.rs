//! Studio step 4: look inside the fine-tuned model. Explore it with every view of the explorer,
//! and measure how much each layer changed from the pretrained model (linear CKA and the mean
//! cosine between the two models' vectors for the same texts).

use bertbench_core::analysis::samples::balanced_sample;
use bertbench_core::analysis::probe::linear_cka;
use bertbench_core::analysis::similarity::cosine;
use std::rc::Rc;

use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::{AppState, Tab};
use crate::engine::Engine;
use crate::compute::{claim, each_states, encode_all};
use crate::fetch::yield_to_browser;
use super::Studio;
use crate::widgets::{LineChart, Series, now_ms};

/// Texts compared between the two models.
const TEXTS: usize = 64;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    pub texts: usize,
    /// Per layer (0 = embeddings): `(linear CKA, mean cosine)` between base and tuned.
    pub by_layer: Vec<(f32, f32)>,
    pub millis: f64,
}

/// How far each layer of the worker's fine-tuned encoder moved from `base`, on `texts`: per
/// layer, the linear CKA and the mean cosine of the two models' mean-pooled vectors. The caller
/// holds the page's model (`compute::claim`); `progress` hears what is being computed.
pub(crate) async fn layer_change(studio: Studio, state: AppState, base: &Engine, texts: &[String], progress: impl Fn(String)) -> Result<Change, String> {
    let start = now_ms();
    let tuned = fine_tuned(studio, state).await?;
    let (bc, tc) = (&base.bert.config, &tuned.bert.config);
    if tc.num_hidden_layers < bc.num_hidden_layers && bc.hidden_size == tc.hidden_size {
        return Err(format!(
            "the fine-tuned model is a student of {} of {}'s {} layers: its layers are not the pretrained model's at the same depth, so they are not compared here",
            tc.num_hidden_layers, base.model_id, bc.num_hidden_layers
        ));
    }
    if bc.num_hidden_layers != tc.num_hidden_layers || bc.hidden_size != tc.hidden_size {
        return Err(format!(
            "the fine-tuned model ({} layers × {}) was not trained from {} ({} layers × {})",
            tc.num_hidden_layers, tc.hidden_size, base.model_id, bc.num_hidden_layers, bc.hidden_size
        ));
    }
    let mean_per_layer = |_: usize, s: &bertbench_core::analysis::inspect::TextStates| (0..s.layers.len()).map(|l| s.mean_of(l, 0..s.len())).collect::<Vec<_>>();
    let a = each_states(base, &encode_all(base, texts)?, mean_per_layer, |d, t| progress(format!("pretrained model: {d} / {t} texts")), || false).await?;
    let b = each_states(&tuned, &encode_all(&tuned, texts)?, mean_per_layer, |d, t| progress(format!("fine-tuned model: {d} / {t} texts")), || false).await?;
    let layers = a.first().map(Vec::len).unwrap_or(0);
    let mut by_layer = Vec::with_capacity(layers);
    for l in 0..layers {
        let xa: Vec<Vec<f32>> = a.iter().map(|v| v[l].clone()).collect();
        let xb: Vec<Vec<f32>> = b.iter().map(|v| v[l].clone()).collect();
        let cka = linear_cka(&xa, &xb).map_err(|e| e.to_string())?;
        let cos = xa.iter().zip(&xb).map(|(p, q)| cosine(p, q)).sum::<f32>() / xa.len().max(1) as f32;
        by_layer.push((cka, cos));
    }
    Ok(Change { texts: texts.len(), by_layer, millis: now_ms() - start })
}

/// Fetches the fine-tuned encoder from the worker and builds it on the current device.
async fn fine_tuned(studio: Studio, state: AppState) -> Result<Engine, String> {
    let (files, labels) = studio.client.encoder().await?;
    let current = state.engine().ok_or("no model is loaded")?;
    let name = format!("fine-tuned ({})", labels.join("/"));
    yield_to_browser().await;
    Engine::build(&name, files, current.device.clone(), current.backend)
}

/// Explore the fine-tuned model; how much fine-tuning changed each layer.
#[component]
pub fn StudioInsidePanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let message = RwSignal::new(None::<Result<String, String>>);
    let change = RwSignal::new(None::<Result<Change, String>>);
    let progress = RwSignal::new(None::<String>);
    let exploring = move || {
        state.generation.get();
        state.base.with_value(Option::is_some)
    };

    let explore = move |_| {
        message.set(Some(Ok("Loading the fine-tuned model…".into())));
        spawn_in_view(async move {
            let Some(held) = claim(state).await else { return };
            let out = fine_tuned(studio, state).await;
            let current = Rc::clone(&held);
            drop(held);
            match out {
                Ok(engine) => {
                    let name = engine.model_id.clone();
                    if state.base.with_value(Option::is_none) {
                        state.base.set_value(Some(current));
                    }
                    state.set_engine(engine);
                    message.set(Some(Ok(format!("Every view of the explorer now shows {name}."))));
                    state.show(Tab::Explore);
                }
                Err(e) => message.set(Some(Err(e))),
            }
        });
    };

    let back = move |_| {
        if let Some(base) = state.base.try_update_value(Option::take).flatten() {
            let name = base.model_id.clone();
            state.set_engine(base);
            message.set(Some(Ok(format!("Back to {name}."))));
        }
    };

    let compare = move |_| {
        spawn_in_view(async move {
            progress.set(Some("getting the fine-tuned model…".into()));
            let (dataset, _) = match studio.labeled_data().await {
                Ok(d) => d,
                Err(e) => {
                    progress.set(None);
                    change.set(Some(Err(e)));
                    return;
                }
            };
            let Some(current) = claim(state).await else {
                progress.set(None);
                return;
            };
            let start = now_ms();
            let out = async {
                let base = state.base.with_value(|b| b.clone()).unwrap_or_else(|| Rc::clone(&current));
                let texts: Vec<String> = balanced_sample(&dataset, TEXTS).into_iter().map(|i| dataset.examples[i].text.clone()).collect();
                let mut out = layer_change(studio, state, &base, &texts, |m| progress.set(Some(m))).await?;
                out.millis = now_ms() - start;
                Ok::<_, String>(out)
            }
            .await;
            drop(current);
            progress.set(None);
            change.set(Some(out));
        });
    };

    let chart = move || {
        change.get().map(|r| match r {
            Err(e) => view! { <p class="banner err small" data-testid="change-error">{e}</p> }.into_any(),
            Ok(c) => {
                let series = vec![
                    Series { name: "linear CKA".into(), color: "#4e79a7", points: c.by_layer.iter().enumerate().map(|(l, v)| (l as f64, v.0 as f64)).collect(), dots: true },
                    Series { name: "mean cosine, same text".into(), color: "#f28e2b", points: c.by_layer.iter().enumerate().map(|(l, v)| (l as f64, v.1 as f64)).collect(), dots: true },
                ];
                view! {
                    <p class="small muted">{format!(
                        "{} texts through both models in {:.1} s. 1 = unchanged. Fine-tuning usually changes the last layers most and the embeddings least.",
                        c.texts, c.millis / 1000.0
                    )}</p>
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = embeddings)" y_label="similarity to pretrained" y_range=(0.0, 1.0) testid="change-chart" />
                    <table class="plain small" data-testid="change-table">
                        <tr><th>"layer"</th>{(0..c.by_layer.len()).map(|l| view! { <th>{l}</th> }).collect_view()}</tr>
                        <tr><th>"CKA"</th>{c.by_layer.iter().map(|v| view! { <td>{format!("{:.3}", v.0)}</td> }).collect_view()}</tr>
                        <tr><th>"cosine"</th>{c.by_layer.iter().map(|v| view! { <td>{format!("{:.3}", v.1)}</td> }).collect_view()}</tr>
                    </table>
                }
                .into_any()
            }
        })
    };

    view! {
        <Show when=move || studio.classifier.get().is_some()>
            <section class="card" data-testid="inside-panel">
                <h2>"4 · Look inside"</h2>
                <p class="hint">"Open the fine-tuned encoder in the explorer (attention, maps, probes), or measure how far each layer moved from the pretrained model."</p>
                <div class="row">
                    <button data-testid="explore-tuned" on:click=explore prop:disabled=move || !state.idle()>"Explore the fine-tuned model"</button>
                    <Show when=exploring>
                        <button class="secondary" data-testid="explore-base" on:click=back prop:disabled=move || !state.idle()>"Back to the pretrained model"</button>
                    </Show>
                    <button class="secondary" data-testid="change-button" on:click=compare prop:disabled=move || !state.idle()>"What did fine-tuning change?"</button>
                    <span class="small muted">{move || progress.get()}</span>
                </div>
                {move || message.get().map(|m| match m {
                    Ok(t) => view! { <p class="banner ok small" data-testid="inside-message">{t}</p> }.into_any(),
                    Err(t) => view! { <p class="banner err small" data-testid="inside-message">{t}</p> }.into_any(),
                })}
                {chart}
            </section>
        </Show>
    }
}
