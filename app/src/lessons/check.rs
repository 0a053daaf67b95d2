//! A lesson's question, checked by the page against the live numbers of its view: the right
//! answer is computed from the loaded model (how many pieces, which layer, which token), not
//! written in the lesson.

use leptos::prelude::*;

use super::Lessons;

/// What counts as right.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// A number, right within `tolerance`.
    Number { value: f64, tolerance: f64 },
    /// One of `options`; any index in `right` is accepted (several where the live numbers tie).
    Choice { options: Vec<String>, right: Vec<usize> },
}

/// The right answer and why it is right (shown once answered).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub expected: Expected,
    pub why: String,
}

impl Answer {
    /// Whether `given` (the number typed, or the option's index) is right.
    pub fn accepts(&self, given: &str) -> bool {
        match &self.expected {
            Expected::Number { value, tolerance } => {
                given.trim().replace(',', ".").parse::<f64>().is_ok_and(|g| (g - value).abs() <= *tolerance)
            }
            Expected::Choice { right, .. } => given.parse::<usize>().is_ok_and(|g| right.contains(&g)),
        }
    }
}

/// The index of every largest value (ties within `1e-6` all count): for "which layer / which
/// token most" questions, where two live numbers can be equal.
pub fn best(values: &[f32]) -> Vec<usize> {
    let top = values.iter().copied().filter(|v| v.is_finite()).fold(f32::NEG_INFINITY, f32::max);
    values.iter().enumerate().filter(|(_, v)| (top - **v).abs() <= 1e-6).map(|(i, _)| i).collect()
}

/// A question with its answer field, "Check" button and feedback (announced to screen
/// readers). `answer` is `None` while the view computes, `Err` says what to do first.
#[component]
pub fn Check(
    id: &'static str,
    #[prop(into)] question: Signal<String>,
    #[prop(into)] answer: Signal<Option<Result<Answer, String>>>,
) -> impl IntoView {
    let lessons = expect_context::<Lessons>();
    let given = RwSignal::new(String::new());
    let feedback = RwSignal::new(None::<(bool, String)>);
    let field = format!("check-{id}-answer");
    // A new answer (the input changed) makes an old verdict stale.
    Effect::new(move |_| {
        answer.track();
        feedback.set(None);
    });
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let verdict = match answer.get_untracked() {
            None => (false, "The page is still computing the answer; try again in a moment.".to_string()),
            Some(Err(e)) => (false, e),
            Some(Ok(a)) if a.accepts(&given.get_untracked()) => {
                lessons.solve(id);
                (true, format!("Right. {}", a.why))
            }
            Some(Ok(_)) if given.get_untracked().trim().is_empty() => (false, "Give an answer first.".to_string()),
            Some(Ok(_)) => (false, "Not quite: look at the view again and try once more.".to_string()),
        };
        feedback.set(Some(verdict));
    };
    let input = {
        let field = field.clone();
        move || match answer.get() {
            Some(Ok(Answer { expected: Expected::Choice { options, .. }, .. })) => view! {
                <select id=field.clone() data-testid="check-answer" on:change=move |ev| given.set(event_target_value(&ev))>
                    <option value="" selected=true>"choose…"</option>
                    {options.iter().enumerate().map(|(i, o)| view! { <option value=i.to_string()>{o.clone()}</option> }).collect_view()}
                </select>
                // Paper has no drop-down: a handout lists the options to circle.
                <ol class="print-options" type="a" data-testid="check-print-options">
                    {options.into_iter().map(|o| view! { <li>{o}</li> }).collect_view()}
                </ol>
            }
            .into_any(),
            _ => view! {
                <input id=field.clone() type="text" inputmode="decimal" autocomplete="off" data-testid="check-answer"
                    prop:value=move || given.get() on:input=move |ev| given.set(event_target_value(&ev)) />
            }
            .into_any(),
        }
    };
    view! {
        <form class="check" data-testid=format!("check-{id}") on:submit=submit>
            <p>
                <strong>"Question: "</strong>{move || question.get()}
                {move || lessons.is_solved(id).then(|| view! { <span class="solved" data-testid="check-solved">" ✓ answered"</span> })}
            </p>
            <div class="row">
                <label class="small" for=field.clone()>"Your answer"</label>
                {input}
                <button type="submit" data-testid="check-submit">"Check"</button>
            </div>
            <p class="small" role="status" aria-live="polite" data-testid="check-feedback"
                class:ok=move || feedback.get().is_some_and(|f| f.0) class:warn=move || feedback.get().is_some_and(|f| !f.0)>
                {move || feedback.get().map(|f| f.1)}
            </p>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_right_within_the_tolerance_and_in_either_decimal_mark() {
        let a = Answer { expected: Expected::Number { value: 22.7, tolerance: 0.5 }, why: String::new() };
        assert!(a.accepts("23") && a.accepts(" 22,5 ") && a.accepts("22.7"));
        assert!(!a.accepts("24") && !a.accepts("") && !a.accepts("twenty"));
    }

    #[test]
    fn choices_accept_every_tied_option() {
        let a = Answer { expected: Expected::Choice { options: vec!["a".into(), "b".into(), "c".into()], right: best(&[0.5, 0.9, 0.9]) }, why: String::new() };
        assert!(a.accepts("1") && a.accepts("2"));
        assert!(!a.accepts("0") && !a.accepts(""));
    }

    #[test]
    fn best_skips_what_is_not_a_number() {
        assert_eq!(best(&[f32::NAN, 0.2, 0.1]), vec![1]);
        assert_eq!(best(&[]), Vec::<usize>::new());
    }
}
