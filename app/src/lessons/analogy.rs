//! Lesson 6's static vectors: word2vec-style arithmetic (a − b + c) on the loaded model's input
//! embedding table, where every word has one vector whatever its sentence, beside the lesson's
//! contextual vectors. The question's answer is the live nearest word.

use bertbench_core::analysis::analogy::Neighbour;
use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use crate::app::AppState;
use crate::compute::{Latest, claim_newest};
use crate::widgets::spawn_in_view;

/// The check's id, listed in the lesson's `CHECKS`.
pub const CHECK: &str = "senses-analogy";
/// The words of the example, a − b + c.
const EXAMPLE: [&str; 3] = ["king", "man", "woman"];
/// How many neighbours are shown.
const SHOWN: usize = 5;

/// The question's options and answer from the live neighbours: the shown words in alphabetical
/// order, the nearest one right.
fn answer(words: &[String; 3], nearest: &[Neighbour]) -> Option<Answer> {
    let top = nearest.first()?;
    let mut options: Vec<String> = nearest.iter().map(|n| n.word.clone()).collect();
    options.sort();
    options.dedup();
    let right = options.iter().position(|o| *o == top.word)?;
    Some(Answer {
        expected: Expected::Choice { options, right: vec![right] },
        why: format!(
            "{} − {} + {} lands nearest “{}” (cosine {:.3}) in this model's input table.",
            words[0], words[1], words[2], top.word, top.cosine
        ),
    })
}

/// Three words, their arithmetic, and the rows nearest it.
#[component]
pub fn Analogies() -> impl IntoView {
    let state = expect_context::<AppState>();
    let words = RwSignal::new(EXAMPLE.map(String::from));
    let result = RwSignal::new(None::<Result<Vec<Neighbour>, String>>);
    let latest = Latest::new();
    Effect::new(move |_| {
        state.generation.get();
        let w = words.get();
        let ticket = latest.next();
        spawn_in_view(async move {
            let Some(engine) = claim_newest(state, latest, ticket).await else { return };
            let out = engine.bert.analogy([&w[0], &w[1], &w[2]], SHOWN, &engine.device).await.map_err(|e| e.to_string());
            drop(engine);
            if latest.is(ticket) {
                result.set(Some(out));
            }
        });
    });
    let check = Signal::derive(move || {
        result.get().map(|r| r.and_then(|n| answer(&words.get(), &n).ok_or_else(|| "no word is near".to_string())))
    });
    let question = Signal::derive(move || {
        let w = words.get();
        format!("Which word is nearest to {} − {} + {} in the input table (the three left out)?", w[0], w[1], w[2])
    });
    let field = move |i: usize, label: &'static str| {
        view! {
            <label class="small" for=format!("lesson-analogy-{i}")>{label}</label>
            <input id=format!("lesson-analogy-{i}") class="short" type="text" data-testid=format!("lesson-analogy-{i}")
                prop:value=move || words.get()[i].clone()
                on:change=move |ev| { let v = event_target_value(&ev); words.update(|w| w[i] = v.trim().to_lowercase()); } />
        }
    };
    view! {
        <section class="screen-only" data-testid="lesson-analogy">
            <h3>"Static vectors: arithmetic on the input table"</h3>
            <p>"Before any layer, each word is one row of the embedding table, the same in every sentence, as in "
                "word2vec. There, king − man + woman famously lands near queen: directions in the table can carry "
                "meaning. Try it on this model's table (cosine, the three words left out); the layers above then "
                "make each word's vector depend on its sentence, as the chart shows."</p>
            <div class="row">
                {field(0, "word")}<span aria-hidden="true">"−"</span>{field(1, "minus")}<span aria-hidden="true">"+"</span>{field(2, "plus")}
            </div>
            {move || match result.get() {
                None => view! { <p class="small muted" role="status">"Reading the table…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="banner warn small" data-testid="lesson-analogy-error">{e}</p> }.into_any(),
                Some(Ok(nearest)) => view! {
                    <ol class="small" data-testid="lesson-analogy-nearest" aria-live="polite">
                        {nearest.into_iter().map(|n| view! {
                            <li data-word=n.word.clone() data-cosine=n.cosine.to_string()>{format!("{} ({:.3})", n.word, n.cosine)}</li>
                        }).collect_view()}
                    </ol>
                }.into_any(),
            }}
            <Check id=CHECK question=question answer=check />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(words: &[(&str, f32)]) -> Vec<Neighbour> {
        words.iter().enumerate().map(|(i, (w, c))| Neighbour { word: w.to_string(), id: i as u32, cosine: *c }).collect()
    }

    #[test]
    fn the_answer_is_the_nearest_word_among_the_shown_in_alphabetical_order() {
        let words = EXAMPLE.map(String::from);
        let a = answer(&words, &near(&[("queen", 0.61), ("princess", 0.52), ("monarch", 0.50)])).unwrap();
        assert_eq!(a.expected, Expected::Choice { options: vec!["monarch".into(), "princess".into(), "queen".into()], right: vec![2] });
        assert!(a.why.contains("lands nearest “queen” (cosine 0.610)"), "{}", a.why);
        let b = answer(&words, &near(&[("kings", 0.7), ("queen", 0.61)])).unwrap();
        assert_eq!(b.expected, Expected::Choice { options: vec!["kings".into(), "queen".into()], right: vec![0] });
        assert!(answer(&words, &[]).is_none());
    }
}
