//! Lesson 7: fine-tuning, head only versus everything. Both runs train in the studio's worker on
//! the built-in sentiment examples (they appear in the studio's runs table and saved work, as any
//! run does); after each, every layer of the trained encoder is compared with the pretrained one
//! (linear CKA), which shows what each recipe changes where.

use bertbench_core::train::{FineTuneConfig, TrainMode};
use leptos::prelude::*;


use super::check::{Answer, Check, Expected, best};
use super::forgetting::ForgettingSection;
use super::recipe_runs::Runs;
use super::prompting::PromptingSection;
use super::{Maths, TryThis};
use crate::app::AppState;
use crate::studio::{Studio, builtin_sentiment, where_moved};
use crate::widgets::{LineChart, Series};

pub const CHECKS: [&str; 2] = ["finetune-better", "finetune-moved"];

/// The two recipes compared, in the order they run.
const MODES: [TrainMode; 2] = [TrainMode::HeadOnly, TrainMode::Full];

fn config(mode: TrainMode) -> FineTuneConfig {
    let c = FineTuneConfig::new().with_mode(mode).with_batch_size(16).with_seed(42);
    match mode {
        TrainMode::HeadOnly => c.with_head_epochs(10),
        _ => c.with_epochs(2).with_learning_rate(5e-5),
    }
}

/// The texts both recipes are scored on, with their label ids and the labels' names.
fn held_out() -> Result<(Vec<String>, Vec<usize>, Vec<String>), String> {
    let dataset = builtin_sentiment()?;
    let split = dataset.split(0.25, 13).map_err(|e| e.to_string())?;
    let ids = dataset.label_ids();
    Ok((split.valid.iter().map(|&i| dataset.examples[i].text.clone()).collect(), split.valid.iter().map(|&i| ids[i]).collect(), dataset.labels.clone()))
}

/// What this pair of runs says about the two recipes, from their held-out accuracies on `count`
/// texts: which won and by how much, with what one text weighs.
fn which_won(head: f32, full: f32, count: usize) -> String {
    let points = (full - head) * 100.0;
    let one = if count > 0 { 100.0 / count as f32 } else { f32::NAN };
    if points.abs() < 0.05 {
        return format!("Both recipes scored {:.1}% here.", full * 100.0);
    }
    let (winner, loser) = if points > 0.0 { ("Full fine-tuning", "head only") } else { ("Head only", "full fine-tuning") };
    let close = if points.abs() <= 2.0 * one {
        format!(" That is {} text(s) of {count}: too few to call either recipe better.", (points.abs() / one).round())
    } else {
        String::new()
    };
    let why = if points < 0.0 && close.is_empty() {
        " These numbers do not say why. Possible causes: the pretrained features already suit the task, the run was too short or its learning rate too high for full fine-tuning to gain, or it forgot some of what pretraining gave; the layer-by-layer comparison (linear CKA) in this lesson shows how far each layer moved."
    } else {
        ""
    };
    format!("{winner} beat {loser} by {:.1} points on the held-out texts.{close}{why}", points.abs())
}

/// The lesson.
#[component]
pub fn FinetuneLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let runs = Runs::new();
    let Runs { results, status, running } = runs;
    let start = move |_| runs.start(studio, state, MODES.into_iter().map(config).collect(), "Both runs are done; their curves and mistakes are in the studio tab.");
    let both = move || results.with(|r| (r.len() == 2).then(|| r.clone()));
    let better = Signal::derive(move || {
        let Some(r) = both() else { return Some(Err("Train both recipes first (the button above).".into())) };
        let acc: Vec<f32> = r.iter().map(|t| t.summary.metrics.accuracy).collect();
        Some(Ok(Answer {
            expected: Expected::Choice { options: r.iter().map(|t| t.mode.label().to_string()).collect(), right: best(&acc) },
            why: format!("Head only: {:.1}%, full fine-tuning: {:.1}% on the held-out texts.", acc[0] * 100.0, acc[1] * 100.0),
        }))
    });
    let moved = Signal::derive(move || {
        let Some(r) = both() else { return Some(Err("Train both recipes first (the button above).".into())) };
        let cka: Vec<f32> = r[1].change.by_layer.iter().map(|v| -v.0).collect();
        let right = best(&cka);
        Some(Ok(Answer {
            expected: Expected::Choice {
                options: (0..cka.len()).map(|l| if l == 0 { "layer 0 (embeddings)".to_string() } else { format!("layer {l}") }).collect(),
                right: right.clone(),
            },
            why: format!(
                "Layer {}'s vectors moved most (CKA {:.3} with the pretrained model's); the embeddings kept {:.3}. {}",
                right[0],
                -cka[right[0]],
                -cka[0],
                where_moved(&r[1].change.by_layer.iter().map(|v| v.0).collect::<Vec<_>>())
            ),
        }))
    });
    view! {
        <p>"A pretrained BERT knows a lot about language but nothing about your task. "<em>"Fine-tuning"</em>" adds a small "
            "classifier (the "<em>"head"</em>") on top of its vectors and trains on your labelled examples. There are two "
            "common recipes. "<b>"Head only"</b>": the encoder is frozen, only the head learns; fast, and safe with few "
            "examples, but the features stay what pretraining made them. "<b>"Full fine-tuning"</b>": every weight learns, "
            "with a small learning rate; slower, often better when there is enough data, and it reshapes the encoder for "
            "the task. It can also lose what pretraining gave (“catastrophic forgetting”), most with a high learning rate "
            "and few examples: a fresh, random head sends large gradients into the encoder at first. Training the head "
            "alone first, then unfreezing everything (the studio's “freeze, then unfreeze”), limits that."</p>
        <p>"Below, both recipes train on the same built-in sentiment sentences (a quarter held out) with the loaded "
            "model, in the background worker, as the studio would. Then each trained encoder is compared with the "
            "pretrained one, layer by layer, by "<em>"linear CKA"</em>" (centred kernel alignment): how alike two sets "
            "of vectors for the same texts are, whatever rotation or scale lies between them; 1 means the layer still "
            "gives the same vectors up to those, 0 that nothing of them is left."</p>
        <Maths>
            <p>"The head is p(y | x) = softmax(W h(x) + b) with h(x) the mean of the last layer's token vectors. Both recipes "
                "minimise the cross-entropy −log p(y | x); head only updates W and b, full fine-tuning all of θ with AdamW:"</p>
            <p class="formula">"θ ← θ − η (m̂ / (√v̂ + ε) + λ θ)"</p>
            <p>"Linear CKA compares two sets of vectors for the same texts, X and Y (centred): "
                "CKA = ‖YᵀX‖²"<sub>"F"</sub>" / (‖XᵀX‖"<sub>"F"</sub>" ‖YᵀY‖"<sub>"F"</sub>"), 1 when one is a rotation and scaling of the other."</p>
        </Maths>
        <div class="row">
            <button data-testid="lesson-finetune-run" on:click=start prop:disabled=move || running.get() || !state.has_model()>
                "Train both recipes"
            </button>
            <span class="small muted">"A few seconds for the head, longer for the full run on a CPU."</span>
        </div>
        {move || status.get().map(|s| match s {
            Ok(m) => view! { <p class="small muted" role="status" data-testid="lesson-finetune-status">{m}</p> }.into_any(),
            Err(e) => view! { <p class="banner warn small" role="alert" data-testid="lesson-finetune-status">{e}</p> }.into_any(),
        })}
        {move || {
            let r = results.get();
            (!r.is_empty()).then(|| {
                let layers = r[0].change.by_layer.len();
                let series: Vec<Series> = r.iter().zip(["#2259c4", "#b35806"]).map(|(t, color)| Series {
                    name: t.mode.label().to_string(),
                    color,
                    points: t.change.by_layer.iter().enumerate().map(|(l, v)| (l as f64, v.0 as f64)).collect(),
                    dots: true,
                }).collect();
                // The lowest CKA sets the chart's floor, so a change of a few hundredths shows.
                let lowest = r.iter().flat_map(|t| t.change.by_layer.iter().map(|v| v.0 as f64)).fold(1.0, f64::min);
                let floor = ((lowest - 0.02) * 20.0).floor() / 20.0;
                view! {
                    <table class="plain small" data-testid="lesson-finetune-runs">
                        <caption>"The two runs"</caption>
                        <tr><th scope="col">"recipe"</th><th scope="col">"held-out accuracy"</th><th scope="col">"steps"</th><th scope="col">"seconds"</th></tr>
                        {r.iter().map(|t| view! {
                            <tr><th scope="row">{t.mode.label()}</th>
                                <td data-accuracy=t.summary.metrics.accuracy.to_string()>{format!("{:.1}%", t.summary.metrics.accuracy * 100.0)}</td>
                                <td>{t.summary.steps}</td><td>{format!("{:.1}", t.summary.seconds)}</td></tr>
                        }).collect_view()}
                    </table>
                    {(r.len() == 2).then(|| {
                        let (head, full) = (&r[0].summary.metrics, &r[1].summary.metrics);
                        let cka: Vec<f32> = r[1].change.by_layer.iter().map(|v| v.0).collect();
                        view! {
                            <p class="small" data-testid="lesson-finetune-conclusion">
                                {which_won(head.accuracy, full.accuracy, full.count)}" "{where_moved(&cka)}
                            </p>
                        }
                    })}
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = embeddings)" y_label="CKA with the pretrained model" y_range=(floor.clamp(0.0, 0.9), 1.0) testid="lesson-finetune-chart" />
                    <div class="scroll-x">
                    <table class="plain small" data-testid="lesson-finetune-change">
                        <caption>"Linear CKA of each layer with the pretrained model (1 = unchanged)"</caption>
                        <tr><th scope="col">"layer"</th>{(0..layers).map(|l| view! { <th scope="col">{l}</th> }).collect_view()}</tr>
                        {r.iter().map(|t| view! {
                            <tr data-mode=t.mode.label()><th scope="row">{t.mode.label()}</th>
                                {t.change.by_layer.iter().map(|v| view! { <td data-v=v.0.to_string()>{format!("{:.3}", v.0)}</td> }).collect_view()}</tr>
                        }).collect_view()}
                    </table>
                    </div>
                }
            })
        }}
        <PromptingSection held_out=Signal::derive(held_out)
            head=Signal::derive(move || results.with(|r| r.iter().find(|t| t.mode == TrainMode::HeadOnly).map(|t| t.summary.metrics.accuracy))) />
        <TryThis>
            <ul>
                <li>"Why is the head-only line flat at 1?"</li>
                <li>"Change the prompt's words or template (“{text} All in all, it was {mask}.”): how far does the prompt's accuracy move without any training?"</li>
                <li>"Open the studio tab: the runs table compares the two, and “Look inside” opens the fine-tuned encoder in the explorer; its “What did fine-tuning change?” shows which word senses it kept."</li>
                <li>"Below, train both ways at a high learning rate: which one forgets the senses pretraining taught?"</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question="Which recipe reached the higher held-out accuracy?".to_string() answer=better />
        <Check id=CHECKS[1] question="In full fine-tuning, which layer moved furthest from the pretrained model (the lowest CKA)?".to_string() answer=moved />
        <ForgettingSection />
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_winner_follows_the_accuracies() {
        assert!(which_won(0.70, 0.85, 100).starts_with("Full fine-tuning beat head only by 15.0 points"));
        let head = which_won(0.828, 0.812, 64);
        assert!(head.starts_with("Head only beat full fine-tuning by 1.6 points"), "{head}");
        assert!(head.contains("1 text(s) of 64"), "{head}");
        assert!(which_won(0.9, 0.6, 100).contains("forgot"), "a clear loss of full fine-tuning is explained");
        assert!(which_won(0.8, 0.8, 50).starts_with("Both recipes scored 80.0%"));
    }
}
