//! Lesson 7's forgetting section: why the studio freezes first. Two runs at a high learning rate
//! on the lesson's data, full fine-tuning from the first step and freeze-then-unfreeze (the head
//! trains alone first, so no random head's gradients reach the encoder); after each, lesson 6's
//! word-sense view on the tuned encoder beside the pretrained one (`studio::Senses`), and a
//! question answered from those numbers. On the screen only: a handout prints the lesson's own
//! two runs.

use bertbench_core::train::{FineTuneConfig, TrainMode};
use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use super::recipe_runs::Runs;
use crate::app::AppState;
use crate::studio::{Senses, Studio};
use crate::widgets::{LineChart, Series};

/// The question's id: not among the lesson's counted questions, since it takes two more runs.
pub const CHECK: &str = "finetune-forgetting";

/// Ten times the rate full fine-tuning uses by default.
const HIGH_LR: f64 = 5e-4;

/// The two recipes, in the order they run.
const MODES: [TrainMode; 2] = [TrainMode::Full, TrainMode::FreezeThenUnfreeze];

fn config(mode: TrainMode) -> FineTuneConfig {
    FineTuneConfig::new().with_mode(mode).with_batch_size(16).with_seed(42).with_epochs(2).with_learning_rate(HIGH_LR).with_head_epochs(10)
}

/// Which run kept more of the senses, from each one's mean share over the layers (full
/// fine-tuning's, then freeze-then-unfreeze's) on `sentences` sentences: the right options and
/// the verdict. Two sentences or less apart, both answers count.
fn which_kept(full: f32, freeze: f32, sentences: usize) -> (Vec<usize>, String) {
    let one = 1.0 / sentences.max(1) as f32;
    let points = (freeze - full) * 100.0;
    if (freeze - full).abs() <= 2.0 * one + 1e-6 {
        return (
            vec![0, 1],
            format!("The two kept about as much: {:.0}% and {:.0}% over the layers, within two of the {sentences} sentences.", full * 100.0, freeze * 100.0),
        );
    }
    if points > 0.0 {
        (vec![1], format!(
            "Freeze, then unfreeze kept {points:.0} points more of the senses ({:.0}% against {:.0}% over the layers): its head had learned before the encoder moved, so the first large gradients of a random head never reached the encoder.",
            freeze * 100.0, full * 100.0
        ))
    } else {
        (vec![0], format!(
            "Full fine-tuning kept {:.0} points more of the senses here ({:.0}% against {:.0}% over the layers): freezing first did not protect them in this run.",
            -points, full * 100.0, freeze * 100.0
        ))
    }
}

/// The section.
#[component]
pub fn ForgettingSection() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let runs = Runs::new();
    let Runs { results, status, running } = runs;
    let start = move |_| runs.start(studio, state, MODES.into_iter().map(config).collect(), "Both runs are done.");
    let both = move || results.with(|r| (r.len() == 2).then(|| r.clone()));
    let answer = Signal::derive(move || {
        let Some(r) = both() else { return Some(Err("Train both at the high learning rate first (the button above).".into())) };
        let (right, why) = which_kept(Senses::mean(&r[0].change.senses.tuned), Senses::mean(&r[1].change.senses.tuned), r[0].change.senses.sentences);
        Some(Ok(Answer { expected: Expected::Choice { options: r.iter().map(|t| t.mode.label().to_string()).collect(), right }, why }))
    });
    let view_of = move || {
        let r = results.get();
        let first = r.first()?;
        let base = first.change.senses.base.clone();
        let points = |v: &[f32]| v.iter().enumerate().map(|(l, a)| (l as f64, *a as f64)).collect::<Vec<_>>();
        let mut series = vec![Series { name: "pretrained".into(), color: "#4e79a7", points: points(&base), dots: true }];
        series.extend(r.iter().zip(["#e15759", "#59a14f"]).map(|(t, color)| Series {
            name: t.mode.label().to_string(),
            color,
            points: points(&t.change.senses.tuned),
            dots: true,
        }));
        let share = |a: f32| format!("{:.0}%", a * 100.0);
        let verdict = (r.len() == 2).then(|| {
            which_kept(Senses::mean(&r[0].change.senses.tuned), Senses::mean(&r[1].change.senses.tuned), first.change.senses.sentences).1
        });
        Some(view! {
            <table class="plain small" data-testid="lesson-forgetting-runs">
                <caption>{format!("Runs at learning rate {HIGH_LR:e}, and the word senses each encoder keeps")}</caption>
                <tr><th scope="col">"model"</th><th scope="col">"held-out accuracy"</th><th scope="col">"senses, last layer"</th><th scope="col">"senses, mean over layers"</th></tr>
                <tr data-model="pretrained"><th scope="row">"pretrained"</th><td>"—"</td>
                    <td>{base.last().copied().map(share)}</td><td data-mean=Senses::mean(&base).to_string()>{share(Senses::mean(&base))}</td></tr>
                {r.iter().map(|t| {
                    let tuned = &t.change.senses.tuned;
                    view! {
                        <tr data-model=t.mode.label()><th scope="row">{t.mode.label()}</th>
                            <td data-accuracy=t.summary.metrics.accuracy.to_string()>{share(t.summary.metrics.accuracy)}</td>
                            <td>{tuned.last().copied().map(share)}</td>
                            <td data-mean=Senses::mean(tuned).to_string()>{share(Senses::mean(tuned))}</td></tr>
                    }
                }).collect_view()}
            </table>
            {verdict.map(|v| view! { <p class="small" data-testid="lesson-forgetting-conclusion">{v}</p> })}
            <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = input embeddings)" y_label="senses told apart" y_range=(0.0, 1.0) testid="lesson-forgetting-chart" />
        })
    };
    view! {
        <section class="screen-only" data-testid="lesson-forgetting" aria-labelledby="lesson-forgetting-title">
        <h3 id="lesson-forgetting-title">"Forgetting, and why the studio freezes first"</h3>
        <p>"At a learning rate ten times the usual, train both ways again: everything from the first step, and "
            "“freeze, then unfreeze”. Each tuned encoder then gets lesson 6's word-sense view (“bank”, “die”) beside the "
            "pretrained one: a share that falls is knowledge from pretraining the task run wrote over."</p>
        <div class="row">
            <button class="secondary" data-testid="lesson-forgetting-run" on:click=start prop:disabled=move || running.get() || !state.has_model()>
                {format!("Train both at {HIGH_LR:e}")}
            </button>
            {move || status.get().map(|s| match s {
                Ok(m) => view! { <span class="small muted" role="status" data-testid="lesson-forgetting-status">{m}</span> }.into_any(),
                Err(e) => view! { <span class="banner warn small" role="alert" data-testid="lesson-forgetting-status">{e}</span> }.into_any(),
            })}
        </div>
        {view_of}
        <Check id=CHECK question="At the high learning rate, which run kept more of the word senses (mean over the layers)?".to_string() answer=answer />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_follows_the_shares() {
        let (right, said) = which_kept(0.55, 0.85, 32);
        assert_eq!(right, vec![1]);
        assert!(said.starts_with("Freeze, then unfreeze kept 30 points more of the senses (85% against 55%"), "{said}");
        let (right, said) = which_kept(0.9, 0.7, 32);
        assert_eq!(right, vec![0]);
        assert!(said.starts_with("Full fine-tuning kept 20 points more"), "{said}");
        // Two sentences of 32 is 6.25 points: closer than that, either answer is right.
        let (right, said) = which_kept(0.8, 0.85, 32);
        assert_eq!(right, vec![0, 1]);
        assert!(said.starts_with("The two kept about as much: 80% and 85%"), "{said}");
    }
}
