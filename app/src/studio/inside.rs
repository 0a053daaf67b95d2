//! Studio step 4: look inside the fine-tuned model. Explore it with every view of the explorer,
//! measure how much each layer changed from the pretrained model (linear CKA and the mean
//! cosine between the two models' vectors for the same texts), and what it kept of what
//! pretraining gave: the word-sense view of lesson 6 on both models, layer by layer (forgetting).

use bertbench_core::analysis::samples::{SENSES, balanced_sample};
use bertbench_core::analysis::probe::linear_cka;
use bertbench_core::analysis::similarity::cosine;
use std::rc::Rc;

use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use crate::app::{AppState, Tab};
use crate::engine::Engine;
use crate::compute::{claim, each_states, encode_all, word_senses};
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
    /// The word senses each model tells apart, per layer: the pretrained model's and the tuned one's.
    pub senses: Senses,
    pub millis: f64,
}

/// The word-sense view on both models: per layer (0 = input embeddings), the share of the
/// sense sentences of every word in [`SENSES`] whose word vector lies nearest its own sense's
/// centroid (leave one out), averaged over the words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Senses {
    /// The words, as the page names them ("bank", "die").
    pub words: Vec<&'static str>,
    /// Sentences in all.
    pub sentences: usize,
    pub base: Vec<f32>,
    pub tuned: Vec<f32>,
}

impl Senses {
    /// Mean over the contextual layers (1 and up; layer 0 alone where there is no other).
    pub fn mean(by_layer: &[f32]) -> f32 {
        let layers = if by_layer.len() > 1 { &by_layer[1..] } else { by_layer };
        layers.iter().sum::<f32>() / layers.len().max(1) as f32
    }

    /// What the tuned encoder kept of the senses, from the two models' shares: their means over
    /// the layers and their last layers, and a verdict that a difference of two sentences or
    /// less does not carry.
    pub fn kept(&self) -> String {
        let (Some(&base_last), Some(&tuned_last)) = (self.base.last(), self.tuned.last()) else { return String::new() };
        let (base, tuned) = (Self::mean(&self.base), Self::mean(&self.tuned));
        let one = 1.0 / self.sentences.max(1) as f32;
        let words = self.words.iter().map(|w| format!("“{w}”")).collect::<Vec<_>>().join(" and ");
        let numbers = format!(
            "The pretrained model tells the senses of {words} apart in {:.0}% of {} sentences at its last layer, the fine-tuned one in {:.0}%; over every layer {:.0}% against {:.0}%.",
            base_last * 100.0,
            self.sentences,
            tuned_last * 100.0,
            base * 100.0,
            tuned * 100.0
        );
        let verdict = if tuned < base - 2.0 * one {
            "Fine-tuning lost part of what pretraining gave (forgetting): its vectors now serve the task more than the words' meanings."
        } else if tuned > base + 2.0 * one {
            "The fine-tuned encoder tells the senses apart better than the pretrained one here."
        } else {
            "It kept them: the two are within two sentences of each other."
        };
        format!("{numbers} {verdict}")
    }
}

/// Where fine-tuning changed the encoder, from each layer's CKA with the pretrained model
/// (index 0 the embeddings): the upper half of the layers against the lower half.
pub(crate) fn where_moved(cka: &[f32]) -> String {
    let layers = &cka[1.min(cka.len())..];
    if layers.len() < 2 {
        return String::new();
    }
    let half = layers.len() / 2;
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    let (lower, upper) = (mean(&layers[..half]), mean(&layers[layers.len() - half..]));
    if 1.0 - lower.min(upper) < 0.005 {
        return format!("No layer moved much (every CKA above {:.3}): the run changed the encoder very little.", lower.min(upper));
    }
    if upper < lower - 0.005 {
        format!("The upper layers, nearest the head, moved more than the lower ones (mean CKA {upper:.3} against {lower:.3}), as is usual in fine-tuning: the lower layers keep general features.")
    } else if lower < upper - 0.005 {
        format!("This time the lower layers moved more than the upper ones (mean CKA {lower:.3} against {upper:.3}), not the usual picture where the layers nearest the head change most.")
    } else {
        format!("The lower and upper layers moved about as much (mean CKA {lower:.3} and {upper:.3}).")
    }
}

/// The word-sense view of lesson 6 on `base` and `tuned`, averaged over the words.
async fn senses(base: &Engine, tuned: &Engine, progress: &impl Fn(String)) -> Result<Senses, String> {
    let mut out = Senses { words: Vec::new(), sentences: 0, base: Vec::new(), tuned: Vec::new() };
    for preset in SENSES {
        progress(format!("word senses (“{}”) in both models…", preset.word));
        let (b, _) = word_senses(base, preset).await?;
        let (t, _) = word_senses(tuned, preset).await?;
        let add = |sum: &mut Vec<f32>, v: Vec<f32>| if sum.is_empty() { *sum = v } else { sum.iter_mut().zip(v).for_each(|(s, x)| *s += x) };
        add(&mut out.base, b);
        add(&mut out.tuned, t);
        out.words.push(preset.word);
        out.sentences += preset.sentences.len();
    }
    let words = out.words.len().max(1) as f32;
    out.base.iter_mut().chain(out.tuned.iter_mut()).for_each(|a| *a /= words);
    Ok(out)
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
    let senses = senses(base, &tuned, &progress).await?;
    Ok(Change { texts: texts.len(), by_layer, senses, millis: now_ms() - start })
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
                let by_layer = |v: &[f32]| v.iter().enumerate().map(|(l, a)| (l as f64, *a as f64)).collect::<Vec<_>>();
                let kept = vec![
                    Series { name: "pretrained".into(), color: "#4e79a7", points: by_layer(&c.senses.base), dots: true },
                    Series { name: "fine-tuned".into(), color: "#e15759", points: by_layer(&c.senses.tuned), dots: true },
                ];
                let moved = where_moved(&c.by_layer.iter().map(|v| v.0).collect::<Vec<_>>());
                let share = |a: &f32| format!("{:.0}%", a * 100.0);
                view! {
                    <p class="small muted">{format!("{} texts through both models in {:.1} s. 1 = unchanged.", c.texts, c.millis / 1000.0)}</p>
                    <p class="small" data-testid="change-summary">{moved}</p>
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = embeddings)" y_label="similarity to pretrained" y_range=(0.0, 1.0) testid="change-chart" />
                    <div class="scroll-x">
                    <table class="plain small" data-testid="change-table">
                        <tr><th>"layer"</th>{(0..c.by_layer.len()).map(|l| view! { <th>{l}</th> }).collect_view()}</tr>
                        <tr><th>"CKA"</th>{c.by_layer.iter().map(|v| view! { <td>{format!("{:.3}", v.0)}</td> }).collect_view()}</tr>
                        <tr><th>"cosine"</th>{c.by_layer.iter().map(|v| view! { <td>{format!("{:.3}", v.1)}</td> }).collect_view()}</tr>
                    </table>
                    </div>
                    <h3>"What it kept: word senses"</h3>
                    <p class="hint">"Lesson 6's view on both models: the share of sentences whose “bank” (of a river or of money) or “die” lies nearest its own sense's centre, at each layer. Pretraining taught the encoder these senses; fine-tuning on another task can keep them or lose them."</p>
                    <p class="small" data-testid="senses-kept">{c.senses.kept()}</p>
                    <LineChart series=Signal::derive(move || kept.clone()) x_label="layer (0 = input embeddings)" y_label="senses told apart" y_range=(0.0, 1.0) testid="senses-chart" />
                    <div class="scroll-x">
                    <table class="plain small" data-testid="senses-table">
                        <tr><th>"layer"</th>{(0..c.senses.base.len()).map(|l| view! { <th>{l}</th> }).collect_view()}</tr>
                        <tr data-model="pretrained"><th>"pretrained"</th>{c.senses.base.iter().map(|a| view! { <td data-v=a.to_string()>{share(a)}</td> }).collect_view()}</tr>
                        <tr data-model="fine-tuned"><th>"fine-tuned"</th>{c.senses.tuned.iter().map(|a| view! { <td data-v=a.to_string()>{share(a)}</td> }).collect_view()}</tr>
                    </table>
                    </div>
                }
                .into_any()
            }
        })
    };

    view! {
        <Show when=move || studio.classifier.get().is_some()>
            <section class="card" data-testid="inside-panel">
                <h2>"4 · Look inside"</h2>
                <p class="hint">"Open the fine-tuned encoder in the explorer (attention, maps, probes), or measure how far each layer moved from the pretrained model and what it kept of the word senses pretraining taught it."</p>
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

#[cfg(test)]
mod tests {
    use super::*;

    fn senses(base: Vec<f32>, tuned: Vec<f32>) -> Senses {
        Senses { words: vec!["bank", "die"], sentences: 32, base, tuned }
    }

    #[test]
    fn what_was_kept_follows_the_shares() {
        let lost = senses(vec![0.5, 0.9, 0.95, 1.0], vec![0.5, 0.7, 0.6, 0.55]).kept();
        assert!(lost.starts_with("The pretrained model tells the senses of “bank” and “die” apart in 100% of 32 sentences at its last layer, the fine-tuned one in 55%; over every layer 95% against 62%."), "{lost}");
        assert!(lost.ends_with("(forgetting): its vectors now serve the task more than the words' meanings."), "{lost}");
        // Two sentences of 32 is 6.25 points: a smaller difference does not carry.
        assert!(senses(vec![0.5, 0.9, 0.9], vec![0.5, 0.85, 0.9]).kept().ends_with("within two sentences of each other."));
        assert!(senses(vec![0.5, 0.7, 0.7], vec![0.5, 0.9, 0.9]).kept().ends_with("better than the pretrained one here."));
        assert_eq!(Senses::mean(&[0.2, 0.6, 1.0]), 0.8, "layer 0 is left out of the mean");
    }

    #[test]
    fn where_the_encoder_moved_follows_the_layers_numbers() {
        let upper = where_moved(&[0.99, 0.98, 0.97, 0.80, 0.70]);
        assert!(upper.starts_with("The upper layers, nearest the head, moved more"), "{upper}");
        let lower = where_moved(&[0.99, 0.70, 0.80, 0.97, 0.98]);
        assert!(lower.starts_with("This time the lower layers moved more"), "{lower}");
        assert!(where_moved(&[1.0, 0.999, 0.999, 0.998, 0.999]).starts_with("No layer moved much"));
        assert!(where_moved(&[0.99, 0.9, 0.9, 0.9, 0.9]).starts_with("The lower and upper layers moved about as much"));
    }
}
