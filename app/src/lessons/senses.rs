//! Lesson 4: contextual embeddings. "bank" and "die" by layer: how well each layer's vectors of
//! the word tell its two senses apart, and how alike all vectors are (anisotropy).

use bertbench_core::analysis::inspect::find_word;
use bertbench_core::analysis::probe::{mean_random_cosine, nearest_centroid_accuracy};
use bertbench_core::analysis::samples::SENSES;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use super::check::{Answer, Check, Expected, best};
use super::{Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::compute::{Latest, claim_newest, each_states, encode_all};
use crate::widgets::{LineChart, Series};

pub const EXAMPLE: &str = "bank";
pub const CHECKS: [&str; 1] = ["senses-best-layer"];

#[derive(Clone, PartialEq)]
struct ByLayer {
    word: String,
    sentences: usize,
    /// Nearest-centroid accuracy of the senses, per layer (0 = input embeddings).
    accuracy: Vec<f32>,
    /// Mean cosine of random pairs of the word's vectors, per layer.
    cosine: Vec<f32>,
}

/// The lesson.
#[component]
pub fn SensesLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let word = expect_context::<Lessons>().input("senses");
    let result = RwSignal::new(None::<Result<ByLayer, String>>);
    let latest = Latest::new();
    Effect::new(move |_| {
        state.generation.get();
        let word = word.get();
        let ticket = latest.next();
        result.set(None);
        spawn_in_view(async move {
            let Some(preset) = SENSES.iter().find(|p| p.word == word) else {
                result.set(Some(Err(format!("No example sentences for “{word}”: choose bank or die."))));
                return;
            };
            let Some(engine) = claim_newest(state, latest, ticket).await else { return };
            let out = async {
                let texts: Vec<String> = preset.sentences.iter().map(|(_, s)| s.to_string()).collect();
                let senses: Vec<&str> = preset.sentences.iter().map(|(s, _)| *s).collect();
                let labels: Vec<usize> = senses.iter().map(|s| usize::from(*s != senses[0])).collect();
                let encoded = encode_all(&engine, &texts)?;
                let per_text = each_states(
                    &engine,
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
                let mut accuracy = Vec::with_capacity(layers);
                let mut cosine = Vec::with_capacity(layers);
                for l in 0..layers {
                    let vectors: Vec<Vec<f32>> = per_text.iter().map(|t| t[l].clone()).collect();
                    accuracy.push(nearest_centroid_accuracy(&vectors, &labels).unwrap_or(f32::NAN));
                    cosine.push(mean_random_cosine(&vectors, 200, 7).unwrap_or(f32::NAN));
                }
                Ok::<_, String>(ByLayer { word: preset.word.to_string(), sentences: texts.len(), accuracy, cosine })
            }
            .await;
            drop(engine);
            if latest.is(ticket) {
                result.set(Some(out));
            }
        });
    });
    let answer = Signal::derive(move || {
        result.get().map(|r| {
            r.map(|b| {
                let right = best(&b.accuracy);
                let options = (0..b.accuracy.len()).map(|l| if l == 0 { "layer 0 (input embeddings)".to_string() } else { format!("layer {l}") }).collect();
                let why = format!(
                    "Layer {} places {:.0}% of the “{}” vectors nearest their own sense's centre; the input embeddings ({:.0}%) cannot, since every “{}” starts from the same vector (only its position differs).",
                    right[0], b.accuracy[right[0]] * 100.0, b.word, b.accuracy[0] * 100.0, b.word
                );
                Answer { expected: Expected::Choice { options, right }, why }
            })
        })
    });
    let question = Signal::derive(move || format!("Which layer tells the two senses of “{}” apart best?", word.get()));
    view! {
        <p>"Before the first layer, a word has one vector whatever the sentence: “bank” of a river and “bank” of money "
            "start the same (the input embedding, plus position and segment). Each layer mixes in the context through "
            "attention, so the vectors of the two senses move apart: BERT's embeddings are "<em>"contextual"</em>"."</p>
        <p>"This view takes 16 sentences, 8 for each sense, and the word's vector in each at every layer. For each "
            "vector it asks: is it nearer the centre of its own sense's vectors or the other's (leaving itself out)? "
            "The share it gets right measures how well the layer separates the senses. The second line is the mean "
            "cosine of two random vectors of the word: near 1 means all vectors point the same way ("
            <em>"anisotropy"</em>"), which is why raw cosine similarities of BERT vectors all look high."</p>
        <Maths>
            <p>"Nearest centroid, leave-one-out: for vector v"<sub>"i"</sub>" with sense s"<sub>"i"</sub>", the centre of sense s "
                "is c"<sub>"s"</sub>" = mean of the other vectors of sense s; v"<sub>"i"</sub>" counts as right when "
                "cos(v"<sub>"i"</sub>", c"<sub>"s"<sub>"i"</sub></sub>") is the largest. A word split into pieces uses the mean of its pieces."</p>
            <p class="formula">"cos(u, v) = u·v / (‖u‖ ‖v‖)"</p>
        </Maths>
        <div class="row">
            <label class="small" for="lesson-senses-word">"Word"</label>
            <select id="lesson-senses-word" data-testid="lesson-input" on:change=move |ev| word.set(event_target_value(&ev))>
                {SENSES.iter().map(|p| view! { <option value=p.word selected=move || word.get() == p.word>{p.word}</option> }).collect_view()}
            </select>
        </div>
        {move || match result.get() {
            None => view! { <p class="small muted" role="status">"Computing the word's vectors in every layer…"</p> }.into_any(),
            Some(Err(e)) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Some(Ok(b)) => {
                let points = |v: &[f32]| v.iter().enumerate().map(|(l, a)| (l as f64, *a as f64)).collect::<Vec<_>>();
                let series = vec![
                    Series { name: "senses told apart".into(), color: "#4e79a7", points: points(&b.accuracy), dots: true },
                    Series { name: "mean cosine of random pairs".into(), color: "#e15759", points: points(&b.cosine), dots: false },
                ];
                let best_layer = best(&b.accuracy).first().copied().unwrap_or(0);
                view! {
                    <p class="small muted" data-testid="lesson-senses-summary">{format!(
                        "“{}” in {} sentences: the senses are told apart best at layer {} ({:.0}%), worst at the input embeddings ({:.0}%).",
                        b.word, b.sentences, best_layer, b.accuracy[best_layer] * 100.0, b.accuracy[0] * 100.0
                    )}</p>
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = input embeddings)" y_label="share" y_range=(0.0, 1.0) testid="lesson-senses-chart" />
                    <table class="plain small" data-testid="lesson-senses-table">
                        <caption>"By layer"</caption>
                        <tr><th scope="row">"layer"</th>{(0..b.accuracy.len()).map(|l| view! { <th scope="col">{l}</th> }).collect_view()}</tr>
                        <tr><th scope="row">"senses told apart"</th>{b.accuracy.iter().map(|a| view! { <td data-v=format!("{a:.6}")>{format!("{:.0}%", a * 100.0)}</td> }).collect_view()}</tr>
                        <tr><th scope="row">"mean cosine"</th>{b.cosine.iter().map(|c| view! { <td>{format!("{c:.2}")}</td> }).collect_view()}</tr>
                    </table>
                }
                .into_any()
            }
        }}
        <TryThis>
            <ul>
                <li>"Switch to “die” (to stop living, or a dice): is the best layer the same?"</li>
                <li>"The explorer's embedding map draws these vectors in 2-D, layer by layer."</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question=question answer=answer />
    }
}
