//! Studio, after a sentence classifier's run: distil it into a smaller model, distillation (Hinton et al.; task-specific, as Tang et al. 2019)
//! (Sanh et al., 2019; Hinton et al., 2015). Two students of the same shape train one after the
//! other on the same data: one on the gold labels and the teacher's softened probabilities, one
//! on the gold labels alone. Each keeps some of the pretrained model's layers, spaced evenly from
//! the first to the last as DistilBERT's student was started. The table sets their size, speed
//! and accuracy beside the teacher's, and a sentence computed from those numbers says what they
//! show.

use bertbench_core::tasks::distillation::Distillation;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{RunState, Studio, Task};
use crate::app::AppState;
use crate::runs::RunSummary;

/// One model of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Model {
    pub layers: usize,
    /// Parameters of the encoder (its head is a few hundred more).
    pub params: u64,
    /// Validation accuracy, 0–1.
    pub accuracy: f32,
    /// Milliseconds per validation text in the worker, where measured.
    pub ms_per_text: Option<f64>,
}

/// The teacher and its two students.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Distilled {
    pub teacher: Model,
    /// Taught by the teacher's probabilities and the gold labels.
    pub taught: Model,
    /// The gold labels alone.
    pub alone: Model,
    /// Validation texts each was scored on.
    pub texts: usize,
    pub distillation: Distillation,
}

impl Distilled {
    /// What the numbers show, in sentences: the students' size and speed against the teacher's,
    /// whether the teacher's probabilities helped (more than one validation text's worth, or
    /// not), and how much of the teacher's accuracy the taught student kept.
    pub(crate) fn conclusion(&self) -> String {
        let (t, s, a) = (&self.teacher, &self.taught, &self.alone);
        let pct = |x: f32| format!("{:.1}%", x * 100.0);
        let share = 100.0 * s.params as f64 / t.params.max(1) as f64;
        let mut out = format!("Each student has {} of the teacher's {} layers and {share:.0}% of its parameters", s.layers, t.layers);
        match (t.ms_per_text, s.ms_per_text) {
            (Some(tm), Some(sm)) if sm > 0.0 && tm / sm >= 1.1 => out += &format!(", and classifies a text in {sm:.2} ms against {tm:.2} ms ({:.1}× as fast). ", tm / sm),
            (Some(tm), Some(sm)) => out += &format!("; it took {sm:.2} ms a text against the teacher's {tm:.2} ms, no faster as measured here. "),
            _ => out += ". ",
        }
        // One validation text moves the accuracy by this much: closer than that is a tie.
        let one = 1.0 / self.texts.max(1) as f32;
        let gain = s.accuracy - a.accuracy;
        // Either way, a lead of a text or two is said to be one: another seed could reverse it.
        let texts = (gain.abs() / one).round();
        let small = if texts <= 2.0 { format!(" That is {texts} validation text(s) of {}: another seed could reverse it.", self.texts) } else { String::new() };
        let within_one = gain.abs() / one < 0.999;
        out += &if !within_one && gain > 0.0 {
            format!("Learning from the teacher's probabilities gave the student {:.1} points more than the gold labels alone ({} against {}).{small}", gain * 100.0, pct(s.accuracy), pct(a.accuracy))
        } else if !within_one {
            format!("Here the gold labels alone did better, by {:.1} points ({} against {}): the teacher's probabilities did not help on this data.{small}", -gain * 100.0, pct(a.accuracy), pct(s.accuracy))
        } else {
            format!("The two students scored within one validation text of each other ({} and {}): on this data the teacher's probabilities made no difference that {} texts can show.", pct(s.accuracy), pct(a.accuracy), self.texts)
        };
        out += " ";
        out += &if s.accuracy >= t.accuracy {
            format!("The taught student matched or beat its teacher ({} against {}) with fewer layers.", pct(s.accuracy), pct(t.accuracy))
        } else {
            format!("It kept {:.0}% of the teacher's accuracy ({} against {}).", 100.0 * s.accuracy / t.accuracy.max(1e-6), pct(s.accuracy), pct(t.accuracy))
        };
        out
    }
}

/// The studio's last distillation, or why it failed: shown by its panel and read by lesson 9.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Distillations(pub RwSignal<Option<Result<Distilled, String>>>);

impl Distillations {
    pub fn new() -> Self {
        Self(RwSignal::new(None))
    }

    /// The last comparison that finished.
    pub fn last(self) -> Option<Distilled> {
        self.0.with(|d| d.as_ref().and_then(|r| r.as_ref().ok()).cloned())
    }
}

/// Which student scored higher, from the comparison's accuracies: `[taught, alone]`'s right
/// options (both within one validation text) and the numbers behind it.
pub(crate) fn better_student(d: &Distilled) -> (Vec<usize>, String) {
    let one = 1.0 / d.texts.max(1) as f32;
    let gain = d.taught.accuracy - d.alone.accuracy;
    // In validation texts, with room for the float error of the accuracies' difference.
    let within_one = gain.abs() / one < 0.999;
    let right = if within_one { vec![0, 1] } else if gain > 0.0 { vec![0] } else { vec![1] };
    let why = format!(
        "Taught by the teacher: {:.1}%, gold labels alone: {:.1}% on {} validation texts (one text is {:.1} points{}).",
        d.taught.accuracy * 100.0,
        d.alone.accuracy * 100.0,
        d.texts,
        one * 100.0,
        if right.len() == 2 { ": within one text, either answer counts" } else { "" }
    );
    (right, why)
}

/// Distil the last sentence classifier into two students and compare the three.
#[component]
pub fn StudioDistilPanel() -> impl IntoView {
    let studio = expect_context::<Studio>();
    let state = expect_context::<AppState>();
    let depth = move || {
        state.generation.get();
        state.engine().map_or(0, |e| e.bert.config.num_hidden_layers)
    };
    let keep = RwSignal::new(0usize);
    let temperature = RwSignal::new(2.0f64);
    let soft_weight = RwSignal::new(0.5f64);
    let working = RwSignal::new(false);
    let outcome = expect_context::<Distillations>().0;

    // A teacher: the last run's sentence classifier, itself no student.
    let teacher = move || {
        studio.summary.get().filter(|s| s.meta.spec.level == bertbench_core::tasks::classification::Level::Sentence && s.speed.is_none() && !s.cancelled)
    };
    let shown = move || studio.task.get() == Task::Classify && (teacher().is_some() || working.get() || outcome.with(Option::is_some));
    let busy = move || working.get() || matches!(studio.run.get(), RunState::Running { .. });
    let kept = move || match keep.get() {
        0 => (depth() / 2).max(1),
        n => n.min(depth().max(1)),
    };

    let distil = move |_| {
        let Some(t) = teacher() else { return };
        let Some(engine) = state.engine() else { return };
        let config = engine.bert.config.clone();
        let (n, d) = (kept(), Distillation::new().with_temperature(temperature.get_untracked()).with_soft_weight(soft_weight.get_untracked()));
        working.set(true);
        outcome.set(None);
        spawn_local(async move {
            let run = |distil: Option<Distillation>| async move {
                studio.start_classifier(state, Some((n, distil)))?;
                studio.run_end().await.map_err(|_| "the run was dropped".to_string())?
            };
            let result = async {
                let taught = run(Some(d.clone())).await?;
                let alone = run(None).await?;
                let with_pooler = engine.bert.model.pooler.is_some();
                let model = |s: &RunSummary, layers: usize, ms: Option<f64>| Model {
                    layers,
                    params: config.clone().with_num_hidden_layers(layers).num_params(with_pooler),
                    accuracy: s.metrics.accuracy,
                    ms_per_text: ms,
                };
                Ok::<_, String>(Distilled {
                    teacher: model(&t, config.num_hidden_layers, taught.speed.and_then(|s| s.teacher_ms_per_text)),
                    taught: model(&taught, n, taught.speed.map(|s| s.ms_per_text)),
                    alone: model(&alone, n, alone.speed.map(|s| s.ms_per_text)),
                    texts: t.metrics.count,
                    distillation: d,
                })
            }
            .await;
            outcome.set(Some(result));
            working.set(false);
        });
    };

    let set_temperature = move |ev: web_sys::Event| {
        if let Ok(t) = event_target_value(&ev).parse::<f64>() {
            temperature.set(t);
        }
    };
    let set_weight = move |ev: web_sys::Event| {
        if let Ok(w) = event_target_value(&ev).parse::<f64>() {
            soft_weight.set(w.clamp(0.0, 1.0));
        }
    };

    let table = move || {
        outcome.get().map(|r| match r {
            Err(e) => view! { <p class="error" data-testid="distil-error">{e}</p> }.into_any(),
            Ok(d) => {
                let row = |name: &'static str, m: &Model| view! {
                    <tr data-testid="distil-row">
                        <td>{name}</td>
                        <td>{m.layers}</td>
                        <td>{format!("{:.1} M", m.params as f64 / 1e6)}</td>
                        <td>{m.ms_per_text.map_or("—".to_string(), |ms| format!("{ms:.2} ms"))}</td>
                        <td data-testid="distil-accuracy" data-value=m.accuracy.to_string()>{format!("{:.1}%", m.accuracy * 100.0)}</td>
                    </tr>
                };
                view! {
                    <table class="plain small" data-testid="distil-table">
                        <tr><th>"model"</th><th>"layers"</th><th>"parameters"</th><th>"per text"</th><th>"validation accuracy"</th></tr>
                        {row("teacher (the last run)", &d.teacher)}
                        {row("student, taught by the teacher", &d.taught)}
                        {row("student, gold labels alone", &d.alone)}
                    </table>
                    <p data-testid="distil-conclusion">{d.conclusion()}</p>
                }
                .into_any()
            }
        })
    };

    view! {
        <section class="card" class:hidden=move || !shown() data-testid="distil-panel">
            <h2>"Distil it into a smaller model"</h2>
            <p class="hint">
                "Distillation (Hinton et al., 2015): a smaller student learns from a teacher's probabilities, which say how wrong each wrong label is, as well as from the gold labels. "
                "Here the teacher is the model fine-tuned on your data: task-specific distillation, as Tang et al. (2019) distilled a fine-tuned BERT. DistilBERT itself distilled the pretrained BERT, during pretraining. "
                "Each student starts from some of the pretrained model's layers, spaced evenly from the first to the last (DistilBERT's student was started from every other layer of BERT), and trains with the recipe above. "
                "A second student of the same shape learns the gold labels alone, so the table shows what the teacher added."
            </p>
            <div class="row">
                <label class="small">"layers kept "
                    <select data-testid="distil-layers" prop:disabled=busy on:change=move |ev| keep.set(event_target_value(&ev).parse().unwrap_or(0))>
                        {move || (1..depth().max(2)).map(|n| view! { <option value=n.to_string() selected=n == kept()>{format!("{n} of {}", depth())}</option> }).collect_view()}
                    </select>
                </label>
                <label class="small">" temperature "
                    <input type="number" min="0.5" max="10" step="0.5" data-testid="distil-temperature" prop:disabled=busy prop:value=move || temperature.get().to_string()
                        on:change=set_temperature />
                </label>
                <label class="small">" weight of the teacher's probabilities "
                    <input type="number" min="0" max="1" step="0.1" data-testid="distil-weight" prop:disabled=busy prop:value=move || soft_weight.get().to_string()
                        on:change=set_weight />
                </label>
                <button data-testid="distil-run" on:click=distil prop:disabled=move || busy() || teacher().is_none()>
                    {move || if working.get() { "Training the students…" } else { "Train both students" }}
                </button>
            </div>
            <p class="hint small">
                "The temperature softens both models' probabilities before they are compared (above 1, the teacher's small probabilities come out from under its top one); "
                "the loss is (1 − w) × cross-entropy on the gold labels + w × T² × the divergence from the teacher's softened probabilities."
            </p>
            {table}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(layers: usize, params: u64, accuracy: f32, ms: f64) -> Model {
        Model { layers, params, accuracy, ms_per_text: Some(ms) }
    }

    fn distilled(taught: f32, alone: f32) -> Distilled {
        Distilled {
            teacher: model(6, 22_000_000, 0.84, 8.0),
            taught: model(3, 11_000_000, taught, 4.0),
            alone: model(3, 11_000_000, alone, 4.0),
            texts: 50,
            distillation: Distillation::new(),
        }
    }

    /// The lesson's question: the better student, or either within one validation text.
    #[test]
    fn the_better_student_follows_the_accuracies() {
        assert_eq!(better_student(&distilled(0.82, 0.76)).0, vec![0]);
        assert_eq!(better_student(&distilled(0.70, 0.76)).0, vec![1]);
        let (right, why) = better_student(&distilled(0.77, 0.76));
        assert_eq!(right, vec![0, 1], "{why}");
        assert!(why.contains("on 50 validation texts (one text is 2.0 points: within one text"), "{why}");
    }

    /// The sentence follows the numbers: which student won, by how much, and against the teacher.
    #[test]
    fn the_conclusion_follows_the_numbers() {
        let helped = distilled(0.82, 0.76).conclusion();
        assert!(helped.contains("3 of the teacher's 6 layers and 50% of its parameters"), "{helped}");
        assert!(helped.contains("2.0× as fast"), "{helped}");
        let slow = Distilled { taught: model(3, 11_000_000, 0.82, 7.8), ..distilled(0.82, 0.76) }.conclusion();
        assert!(slow.contains("no faster as measured here") && !slow.contains("as fast"), "{slow}");
        assert!(helped.contains("gave the student 6.0 points more"), "{helped}");
        assert!(helped.contains("kept 98% of the teacher's accuracy"), "{helped}");

        let hurt = distilled(0.74, 0.80).conclusion();
        assert!(hurt.contains("the gold labels alone did better, by 6.0 points"), "{hurt}");
        assert!(!hurt.contains("gave the student") && !hurt.contains("could reverse"), "{hurt}");
        // A lead of one or two texts is said to be small, whichever student has it.
        let one_up = distilled(0.78, 0.76).conclusion();
        assert!(one_up.contains("gave the student 2.0 points more") && one_up.contains("That is 1 validation text(s) of 50: another seed could reverse it."), "{one_up}");
        let one_down = distilled(0.76, 0.78).conclusion();
        assert!(one_down.contains("did better, by 2.0 points") && one_down.contains("That is 1 validation text(s) of 50: another seed could reverse it."), "{one_down}");
        assert!(!helped.contains("could reverse"), "{helped}");

        // 1 text of 50 is 2 points: 1 point apart is a tie.
        let tie = distilled(0.80, 0.79).conclusion();
        assert!(tie.contains("within one validation text"), "{tie}");

        let better = distilled(0.86, 0.80).conclusion();
        assert!(better.contains("matched or beat its teacher"), "{better}");
    }
}
