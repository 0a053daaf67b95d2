//! Lesson 6: contextual embeddings. "bank" and "die" by layer: how well each layer's vectors of
//! the word tell its two senses apart, and how alike the word's own vectors are (Ethayarajh's
//! self-similarity).

use bertbench_core::analysis::samples::SENSES;
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use super::check::{Answer, Check, Expected, best};
use super::analogy::Analogies;
use super::{Lessons, Maths, TryThis};
use crate::app::AppState;
use crate::compute::{Latest, claim_newest, word_senses};
use crate::widgets::{LineChart, Series};

pub const EXAMPLE: &str = "bank";
pub const CHECKS: [&str; 2] = ["senses-best-layer", super::analogy::CHECK];

#[derive(Clone, PartialEq)]
struct ByLayer {
    word: String,
    sentences: usize,
    /// Nearest-centroid accuracy of the senses, per layer (0 = input embeddings).
    accuracy: Vec<f32>,
    /// Mean cosine of random pairs of the word's vectors, per layer.
    cosine: Vec<f32>,
}

/// The best and the worst layer at telling the senses apart, from the live shares.
fn summary(word: &str, sentences: usize, accuracy: &[f32]) -> String {
    let name = |l: usize| if l == 0 { "the input embeddings (layer 0)".to_string() } else { format!("layer {l}") };
    let best_layer = best(accuracy).first().copied().unwrap_or(0);
    let worst = accuracy.iter().enumerate().filter(|(_, a)| !a.is_nan()).min_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(l, _)| l);
    format!(
        "“{word}” in {sentences} sentences: the senses are told apart best at {} ({:.0}%), worst at {} ({:.0}%).",
        name(best_layer),
        accuracy[best_layer] * 100.0,
        name(worst),
        accuracy[worst] * 100.0
    )
}

/// How often chance alone (each of `n` sentences placed right with probability one half, two
/// senses of equal size) places at least `k` right: the binomial tail.
fn chance_of_at_least(k: usize, n: usize) -> f64 {
    let mut choose = 1.0f64;
    let mut tail = 0.0;
    for i in 0..=n {
        if i >= k {
            tail += choose;
        }
        choose = choose * (n - i) as f64 / (i + 1) as f64;
    }
    tail / 2f64.powi(n as i32)
}

/// What layer 0 shows, from its share of the `n` sentences against chance (two senses of equal
/// size: 50%) and the best layer's: the input embeddings differ between sentences only by
/// position, so a share above chance there comes from where the word sits, not from its meaning.
/// Above chance means more sentences than chance alone places right in 5% of rolls.
fn input_layer(word: &str, n: usize, accuracy: &[f32]) -> String {
    let Some(&first) = accuracy.first() else { return String::new() };
    let top = best(accuracy).first().copied().unwrap_or(0);
    let gain = if top > 0 {
        format!(" The context, mixed in by attention, takes it to {:.0}% at layer {top}.", accuracy[top] * 100.0)
    } else {
        " No layer does better here: the context did not separate these sentences.".to_string()
    };
    let right = (first * n as f32).round() as usize;
    let p = chance_of_at_least(right, n);
    if right * 2 <= n || p >= 0.05 {
        format!(
            "At layer 0, {right} of {n} ({:.0}%), within what chance gives (50%; chance alone places {right} or more right in {:.0}% of rolls): \
             every “{word}” is the same token embedding there, plus a position embedding.{gain}",
            first * 100.0,
            p * 100.0
        )
    } else {
        format!(
            "Even layer 0 tells them apart for {right} of {n} ({:.0}%), above chance (chance alone does so in {:.1}% of rolls): the token \
             embedding of “{word}” is the same in every sentence, but the position embedding is not, and in these sentences the two senses \
             tend to sit at different places.{gain}",
            first * 100.0,
            p * 100.0
        )
    }
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
            let out = word_senses(&engine, preset)
                .await
                .map(|(accuracy, cosine)| ByLayer { word: preset.word.to_string(), sentences: preset.sentences.len(), accuracy, cosine });
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
                    "Layer {} places {:.0}% of the “{}” vectors nearest their own sense's centre. {}",
                    right[0], b.accuracy[right[0]] * 100.0, b.word, input_layer(&b.word, b.sentences, &b.accuracy)
                );
                Answer { expected: Expected::Choice { options, right }, why }
            })
        })
    });
    let question = Signal::derive(move || format!("Which layer tells the two senses of “{}” apart best?", word.get()));
    view! {
        <p>"Before the first layer, a word has one token embedding whatever the sentence: “bank” of a river and “bank” "
            "of money start from the same row of the table; only a position embedding (where the word sits) and the "
            "segment are added. Each layer mixes in the context through attention, so the vectors of the two senses "
            "move apart: BERT's embeddings are "<em>"contextual"</em>"."</p>
        <p>"This view takes 16 sentences, 8 for each sense, and the word's vector in each at every layer. For each "
            "vector it asks: is it nearer the centre (the "<em>"centroid"</em>", the mean) of its own sense's vectors or of "
            "the other's, leaving itself out? "
            "The share it gets right measures how well the layer separates the senses. The second line is the mean "
            "cosine between two of the word's own vectors, in different sentences: its "<em>"self-similarity"</em>" "
            "(Ethayarajh, 2019); the lower it is, the more the context changes the word's vector. It is not corrected for "
            "how alike the vectors of "<em>"different"</em>" words are at that layer ("<em>"anisotropy"</em>", high in BERT's "
            "upper layers, where even unrelated words' vectors point much the same way): the explorer's map shows that "
            "baseline by layer."</p>
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
                    Series { name: "self-similarity (mean cosine of two of its vectors)".into(), color: "#e15759", points: points(&b.cosine), dots: false },
                ];
                let summary = summary(&b.word, b.sentences, &b.accuracy);
                let input = input_layer(&b.word, b.sentences, &b.accuracy);
                view! {
                    <p class="small muted" data-testid="lesson-senses-summary">{summary}" "{input}</p>
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = input embeddings)" y_label="share" y_range=(0.0, 1.0) testid="lesson-senses-chart" />
                    <table class="plain small" data-testid="lesson-senses-table">
                        <caption>"By layer"</caption>
                        <tr><th scope="row">"layer"</th>{(0..b.accuracy.len()).map(|l| view! { <th scope="col">{l}</th> }).collect_view()}</tr>
                        <tr><th scope="row">"senses told apart"</th>{b.accuracy.iter().map(|a| view! { <td data-v=format!("{a:.6}")>{format!("{:.0}%", a * 100.0)}</td> }).collect_view()}</tr>
                        <tr><th scope="row">"self-similarity"</th>{b.cosine.iter().map(|c| view! { <td>{format!("{c:.2}")}</td> }).collect_view()}</tr>
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
        <Analogies />
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_layer_zero_shows_follows_its_share() {
        let chance = input_layer("bank", 16, &[0.5, 0.8, 0.94, 0.9]);
        assert!(chance.starts_with("At layer 0, 8 of 16 (50%), within what chance gives"), "{chance}");
        assert!(chance.contains("94% at layer 2"), "{chance}");
        // 10 of 16 is what chance alone gives in 23% of rolls: not above chance.
        let ten = input_layer("bank", 16, &[0.625, 0.8, 0.94]);
        assert!(ten.starts_with("At layer 0, 10 of 16 (62%), within what chance gives (50%; chance alone places 10 or more right in 23% of rolls)"), "{ten}");
        let leak = input_layer("bank", 16, &[0.75, 0.8, 0.94]);
        assert!(leak.starts_with("Even layer 0 tells them apart for 12 of 16 (75%), above chance (chance alone does so in 3.8% of rolls)"), "{leak}");
        assert!(leak.contains("position embedding is not"), "{leak}");
        assert!(input_layer("die", 16, &[0.9, 0.8, 0.7]).contains("No layer does better"));
        assert!((chance_of_at_least(0, 16) - 1.0).abs() < 1e-12 && (chance_of_at_least(16, 16) - 1.0 / 65536.0).abs() < 1e-15);
    }

    #[test]
    fn the_summary_names_the_layers_the_numbers_name() {
        assert_eq!(
            summary("bank", 16, &[0.75, 0.5, 0.94]),
            "“bank” in 16 sentences: the senses are told apart best at layer 2 (94%), worst at layer 1 (50%)."
        );
        assert!(summary("bank", 16, &[0.5, 0.6, 0.9]).contains("worst at the input embeddings (layer 0) (50%)"));
    }
}
