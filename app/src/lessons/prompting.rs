//! Lesson 7's prompting section: the held-out texts the two recipes are scored on, classified
//! with no training at all by a cloze template and one word per label through the loaded
//! model's masked-language-model head (core `analysis::prompting`), beside the head trained on
//! the rest.

use bertbench_core::analysis::prompting::{self, Prompt, Prompted};
use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use crate::app::AppState;
use crate::compute::claim;
use crate::lab::Lab;
use crate::widgets::spawn_in_view;

/// The question's id: not among the lesson's counted questions, since a model without an MLM
/// head (the default sentence encoder) cannot answer it.
pub const CHECK: &str = "finetune-prompt";

/// The template offered first.
const TEMPLATE: &str = "{text} It was {mask}.";

/// The word offered for a label: the sentiment labels' usual verbalizer, else the label itself.
fn word_for(label: &str) -> String {
    match label.to_lowercase().as_str() {
        "negative" | "neg" => "terrible".into(),
        "positive" | "pos" => "great".into(),
        other => other.to_string(),
    }
}

/// Which of the two did better on the same held-out texts, from their accuracies.
pub fn prompt_or_head(prompt: f32, head: f32, count: usize) -> (Vec<usize>, String) {
    let points = (head - prompt) * 100.0;
    let one = 100.0 / count.max(1) as f32;
    // Two texts or fewer apart is too few to call either better: then either answer is right.
    let close = points.abs() <= 2.0 * one + 1e-3;
    let right = if close { vec![0, 1] } else if points > 0.0 { vec![1] } else { vec![0] };
    let verdict = if points.abs() < 1e-3 {
        "They classified exactly as many texts rightly.".to_string()
    } else if points > 0.0 {
        format!("The trained head was {points:.1} points better: the labelled texts it trained on taught it more than the prompt's words give.")
    } else {
        format!("The prompt was {:.1} points better with no training at all: what the MLM head learned in pretraining already separates these texts.", -points)
    };
    let tie = if close && points.abs() > 1e-3 { format!(" That is {} text(s) of {count}: too few to call either better.", (points.abs() / one).round()) } else { String::new() };
    (right, format!("{verdict}{tie}"))
}

/// The section; `held_out` gives the texts and label ids the recipes are scored on, with the
/// labels' names; `head` the head-only run's held-out accuracy once it has run.
#[component]
pub fn PromptingSection(
    held_out: Signal<Result<(Vec<String>, Vec<usize>, Vec<String>), String>>,
    #[prop(into)] head: Signal<Option<f32>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let lab = expect_context::<Lab>();
    let template = RwSignal::new(TEMPLATE.to_string());
    let labels = Memo::new(move |_| held_out.with(|h| h.as_ref().map(|h| h.2.clone()).unwrap_or_default()));
    let words = RwSignal::new(Vec::<String>::new());
    Effect::new(move |_| words.set(labels.get().iter().map(|l| word_for(l)).collect()));
    let can_play = Memo::new(move |_| {
        state.generation.get();
        state.engine().map(|e| e.mlm.is_ok())
    });
    let result = RwSignal::new(None::<Result<(Prompted, f32, usize), String>>);
    let busy = RwSignal::new(false);
    // A new model or a new prompt makes an old score stale.
    Effect::new(move |_| {
        state.generation.track();
        template.track();
        words.track();
        result.set(None);
    });
    let score = move |_| {
        let (texts, ids) = match held_out.get_untracked() {
            Ok((t, i, _)) => (t, i),
            Err(e) => return result.set(Some(Err(e))),
        };
        let prompt = Prompt { template: template.get_untracked(), words: words.get_untracked() };
        busy.set(true);
        spawn_in_view(async move {
            let out = match claim(state).await {
                None => Err("no model is loaded".to_string()),
                Some(engine) => match &engine.mlm {
                    Ok(head) => prompting::score(&engine.bert.model, head, &engine.bert.tokenizer, &prompt, &texts, &engine.device)
                        .await
                        .map(|p| {
                            let accuracy = p.accuracy(&ids);
                            (p, accuracy, ids.len())
                        })
                        .map_err(|e| e.to_string()),
                    Err(e) => Err(e.clone()),
                },
            };
            result.set(Some(out));
            busy.set(false);
        });
    };
    let use_lab = move |_| {
        spawn_in_view(async move {
            if let Err(e) = lab.load_on_page(state).await {
                result.set(Some(Err(e)));
            }
        });
    };
    let answer = Signal::derive(move || {
        if can_play.get() == Some(false) {
            return Some(Err("This question needs a model that kept its masked-language-model head (see above), so it is not one of \
                the lessons' counted questions; open such a model, or let the lab's model try, to answer it."
                .into()));
        }
        let Some(Ok((_, prompt, count))) = result.get() else { return Some(Err("Score the prompt first (the button above).".into())) };
        let Some(head) = head.get() else { return Some(Err("Train the two recipes too: the head-only run is the other side.".into())) };
        let (right, why) = prompt_or_head(prompt, head, count);
        Some(Ok(Answer {
            expected: Expected::Choice { options: vec!["the prompt (no training)".into(), "the trained head".into()], right },
            why: format!("Prompt: {:.1}%, head only: {:.1}% on the same {count} held-out texts. {why}", prompt * 100.0, head * 100.0),
        }))
    });
    // On screen only: the handout keeps lesson 7 to one page.
    view! {
        <section class="screen-only" data-testid="lesson-prompting" aria-labelledby="lesson-prompting-title">
        <h3 id="lesson-prompting-title">"Prompting instead of a head"</h3>
        <p>"A model that kept its masked-language-model head can classify with no training at all: put the text in a "
            <em>"template"</em>" with a blank, and compare how likely the head finds one word per label in the blank "
            "(“great” for positive, “terrible” for negative). Whatever pretraining taught the head decides; nothing "
            "is learned from your labels. Here it is scored on the same held-out texts as the two recipes above."</p>
        {move || match can_play.get() {
            None => view! { <p class="small muted">"The model is still loading."</p> }.into_any(),
            Some(false) => view! {
                <p class="small muted" data-testid="lesson-prompt-unavailable">
                    "This model was saved without its masked-language-model head (a sentence encoder), so it has no words to "
                    "fill a blank with. Open a model saved with its head (BertForMaskedLM, RobertaForMaskedLM), or let the "
                    "MLM lab's model (pretrained in this tab) try."
                </p>
                {move || lab.has_model.get().then(|| view! {
                    <button class="secondary" data-testid="lesson-prompt-use-lab" on:click=use_lab>"Let the lab's model try"</button>
                })}
            }.into_any(),
            Some(true) => view! {
                <label class="field" for="lesson-prompt-template">"Template ({text} is the text, {mask} the blank)"</label>
                <input id="lesson-prompt-template" type="text" data-testid="lesson-prompt-template" prop:value=move || template.get()
                    on:change=move |ev| template.set(event_target_value(&ev)) />
                <div class="row">
                    {move || labels.get().into_iter().enumerate().map(|(i, label)| {
                        let id = format!("lesson-prompt-word-{i}");
                        view! {
                            <label class="small" for=id.clone()>{format!("word for “{label}”")}</label>
                            <input id=id type="text" size="12" data-testid="lesson-prompt-word"
                                prop:value=move || words.with(|w| w.get(i).cloned().unwrap_or_default())
                                on:change=move |ev| { let v = event_target_value(&ev); words.update(|w| if let Some(x) = w.get_mut(i) { *x = v; }); } />
                        }
                    }).collect_view()}
                    <button data-testid="lesson-prompt-score" on:click=score prop:disabled=move || busy.get()>"Score the prompt"</button>
                </div>
            }.into_any(),
        }}
        {move || result.get().map(|r| match r {
            Err(e) => view! { <p class="banner warn small" role="alert" data-testid="lesson-prompt-error">{e}</p> }.into_any(),
            Ok((p, accuracy, count)) => view! {
                <table class="plain small" data-testid="lesson-prompt">
                    <caption>{format!("The same {count} held-out texts, two ways")}</caption>
                    <tr><th scope="col">"classified by"</th><th scope="col">"held-out accuracy"</th></tr>
                    <tr><th scope="row">{format!("the prompt ({})", p.words.iter().map(|w| format!("{} = {}", w.word, w.piece)).collect::<Vec<_>>().join(", "))}</th>
                        <td data-testid="lesson-prompt-accuracy" data-accuracy=accuracy.to_string()>{format!("{:.1}%", accuracy * 100.0)}</td></tr>
                    <tr><th scope="row">"the head trained on the rest (head only)"</th>
                        <td>{move || head.get().map_or("train the recipes above".to_string(), |h| format!("{:.1}%", h * 100.0))}</td></tr>
                </table>
                {(p.shortened > 0).then(|| view! { <p class="small muted">{format!("{} text(s) were cut short to fit the model with the template.", p.shortened)}</p> })}
            }.into_any(),
        })}
        <Check id=CHECK question="On the same held-out texts, which classified better: the prompt with no training, or the trained head?".to_string() answer=answer />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_follows_the_two_accuracies() {
        let (right, why) = prompt_or_head(0.55, 0.85, 40);
        assert_eq!(right, vec![1]);
        assert!(why.starts_with("The trained head was 30.0 points better"), "{why}");
        let (right, why) = prompt_or_head(0.80, 0.75, 40);
        assert_eq!(right, vec![0, 1], "two texts apart: either answer is right, as the sentence says");
        assert!(why.starts_with("The prompt was 5.0 points better") && why.contains("2 text(s) of 40: too few"), "{why}");
        let (right, why) = prompt_or_head(0.90, 0.75, 40);
        assert_eq!(right, vec![0]);
        assert!(why.starts_with("The prompt was 15.0 points better") && !why.contains("too few"), "{why}");
        assert_eq!(prompt_or_head(0.5, 0.5, 10).0, vec![0, 1]);
    }

    #[test]
    fn sentiment_labels_get_the_usual_words_and_others_their_name() {
        assert_eq!((word_for("positive"), word_for("Negative"), word_for("sport")), ("great".into(), "terrible".into(), "sport".into()));
    }
}
