//! Lesson 9's distillation section: DistilBERT's idea on the user's own data. The studio's
//! "Distil it into a smaller model" panel trains two students of the same shape after a sentence
//! classifier's run, one taught by the teacher's probabilities and one on the gold labels alone;
//! this section shows its last comparison (`studio::Distillations`) with the sentence computed
//! from it, and asks which student did better, answered from those numbers.

use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use crate::app::{AppState, Tab};
use crate::studio::{Distillations, better_student};

/// The question's id: not among the lesson's counted questions, since it needs a studio run.
pub const CHECK: &str = "sizes-distillation";

/// The section.
#[component]
pub fn DistillationSection() -> impl IntoView {
    let state = expect_context::<AppState>();
    let distilled = expect_context::<Distillations>();
    let answer = Signal::derive(move || {
        let Some(d) = distilled.last() else {
            return Some(Err("Train the two students in the studio first (see above).".into()));
        };
        let (right, why) = better_student(&d);
        Some(Ok(Answer {
            expected: Expected::Choice { options: vec!["the student taught by the teacher".into(), "the student on the gold labels alone".into()], right },
            why,
        }))
    });
    let shown = move || {
        let Some(d) = distilled.last() else {
            return view! {
                <p class="small muted" data-testid="lesson-distil-none">
                    "Not run yet. In the studio, fine-tune a sentence classifier (the built-in sentiment examples will do), then press “Train both students” under “Distil it into a smaller model”; the numbers appear here."
                </p>
                <button class="secondary" data-testid="lesson-distil-studio" on:click=move |_| state.show(Tab::Studio)>"Open the studio"</button>
            }
            .into_any();
        };
        let millions = |p: u64| format!("{:.1} M", p as f64 / 1e6);
        let row = |name: &'static str, m: &crate::studio::DistilModel| view! {
            <tr><th scope="row">{name}</th><td>{m.layers}</td><td>{millions(m.params)}</td>
                <td>{m.ms_per_text.map_or("—".to_string(), |ms| format!("{ms:.2} ms"))}</td>
                <td data-accuracy=m.accuracy.to_string()>{format!("{:.1}%", m.accuracy * 100.0)}</td></tr>
        };
        view! {
            <table class="plain small" data-testid="lesson-distil-table">
                <caption>{format!("The studio's last distillation (temperature {}, weight of the teacher {})", d.distillation.temperature, d.distillation.soft_weight)}</caption>
                <tr><th scope="col">"model"</th><th scope="col">"layers"</th><th scope="col">"parameters"</th><th scope="col">"per text"</th><th scope="col">"validation accuracy"</th></tr>
                {row("teacher", &d.teacher)}
                {row("student, taught", &d.taught)}
                {row("student, gold labels alone", &d.alone)}
            </table>
            <p class="small" data-testid="lesson-distil-conclusion">{d.conclusion()}</p>
        }
        .into_any()
    };
    view! {
        <section class="screen-only" data-testid="lesson-distillation" aria-labelledby="lesson-distillation-title">
            <h3 id="lesson-distillation-title">"Distillation, on your data"</h3>
            <p>"DistilBERT (in the table) kept half of BERT-base's layers and was pretrained to give BERT-base's probabilities "
                "for each masked word, not only the right word (Sanh et al., 2019). The idea works on a task too: a teacher's "
                "“70% positive, 30% negative” says more than “positive”. Softened by a "<em>"temperature"</em>" T above 1, its "
                "small probabilities count too. The studio does this with the model you fine-tuned as the teacher, beside a "
                "student of the same size trained on the gold labels alone."</p>
            {shown}
            <Check id=CHECK question="Which student reached the higher validation accuracy?".to_string() answer=answer />
        </section>
    }
}
