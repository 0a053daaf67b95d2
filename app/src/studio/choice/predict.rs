//! A typed question and its endings (one a line) scored by the current multiple-choice model:
//! each ending's probability (core's `choice::predict`, in the worker), the best one marked.

use leptos::prelude::*;

use crate::protocol::Choose;
use crate::studio::Studio;
use crate::widgets::spawn_in_view;

/// The endings typed one a line: the non-blank lines, trimmed.
pub fn endings_of(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_string).collect()
}

/// A question and its endings in, each ending's probability out.
#[component]
pub fn ChoicePredict() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let question = RwSignal::new("The milk smells sour when she opens the carton.".to_string());
    let endings = RwSignal::new("She pours it down the sink and buys a fresh carton.\nShe adds it to her coffee with a smile.\nShe gives it to the baby for breakfast.\nShe puts it back in the fridge for next week.".to_string());
    let result = RwSignal::new(None::<Result<(Vec<String>, Vec<f32>), String>>);
    let busy = RwSignal::new(false);
    // Answers so far: a new answer is told from an old one with the same numbers.
    let answers = RwSignal::new(0u32);
    let show = move |r| {
        answers.update(|n| *n += 1);
        result.set(Some(r));
    };
    let score = move |_| {
        let (q, list) = (question.get_untracked(), endings_of(&endings.get_untracked()));
        // Said on the page, with what was typed left as it is.
        if q.trim().is_empty() {
            return show(Err("Type a question (the premise) first.".into()));
        }
        if list.len() < 2 {
            return show(Err(format!("{} ending typed: give at least two, one a line.", list.len())));
        }
        busy.set(true);
        spawn_in_view(async move {
            let r = studio.client.request(Choose { premise: q, endings: list.clone() }, &[]).await.map(|(probs, _)| probs);
            busy.set(false);
            show(r.map(|p| (list, p)));
        });
    };
    view! {
        <label class="small" for="choice-question">"Question (the premise)"</label>
        <input type="text" id="choice-question" data-testid="choice-question" prop:value=move || question.get()
            on:input=move |ev| question.set(event_target_value(&ev)) />
        <label class="small" for="choice-endings">"Endings, one a line"</label>
        <textarea rows="4" id="choice-endings" data-testid="choice-endings-input" prop:value=move || endings.get()
            on:input=move |ev| endings.set(event_target_value(&ev))></textarea>
        <div class="row">
            <button data-testid="choice-button" on:click=score prop:disabled=move || busy.get()>"Score the endings"</button>
        </div>
        <div data-testid="choice-result" data-answer=move || answers.get()>
        {move || result.get().map(|r| match r {
            Ok((list, probs)) => {
                let best = bertbench_core::tasks::metrics::argmax(&probs);
                view! {
                    <div class="bars" data-testid="choice-prediction">
                        {list.into_iter().zip(probs).enumerate().map(|(i, (ending, p))| view! {
                            // Endings are sentences: a wider label column than a class name's.
                            <div class="bar-row" style="grid-template-columns: minmax(14rem, 2fr) 1fr 5rem">
                                <span class="bar-label" style:font-weight=(i == best).then_some("600")>{format!("{}. {ending}{}", i + 1, if i == best { " ✓" } else { "" })}</span>
                                <span class="bar"><span style:width=format!("{:.1}%", p * 100.0)></span></span>
                                <span class="bar-value" data-testid="choice-prob" data-value=p.to_string()>{format!("{p:.4}")}</span>
                            </div>
                        }).collect_view()}
                    </div>
                }
                .into_any()
            }
            Err(e) => view! { <p class="banner warn small" data-testid="predict-error">{e}</p> }.into_any(),
        })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_are_the_non_blank_lines_trimmed() {
        assert_eq!(endings_of(" one \n\n two\r\n  \nthree"), ["one", "two", "three"]);
        assert!(endings_of("  \n").is_empty());
    }
}
