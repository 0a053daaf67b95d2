//! "Fine-tune each": what a lab run's pretraining gives a task. Each run of "Runs compared"
//! whose model the page kept (from scratch, up to [`MAX_KEPT_PARAMS`](super::compare::MAX_KEPT_PARAMS)) gets a head trained on
//! its frozen encoder over the built-in sentiment examples, in the studio's worker with one
//! recipe and seed for all (they show in the studio's runs table too); the table adds each
//! one's held-out accuracy and a sentence, computed from those numbers, says which pretraining
//! (MLM alone, + NSP, + SOP, a masking rate...) served the task best, and whether the
//! difference is more than two texts can tell.

use std::rc::Rc;

use bertbench_core::train::{FineTuneConfig, TrainMode};
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::compare::{Downstream, KeptFiles, KeptRun, differing};
use super::{Lab, LabRun, checkpoint_from};
use crate::app::AppState;
use crate::engine::Engine;
use crate::studio::{RunState, Studio};

/// The recipe every kept run is fine-tuned with: a head on the frozen encoder (what pretraining
/// put in its vectors, not what fine-tuning adds), one seed.
fn recipe() -> FineTuneConfig {
    FineTuneConfig::new().with_mode(TrainMode::HeadOnly).with_head_epochs(10).with_batch_size(16).with_seed(42)
}

/// The runs with a downstream result, with it, and the settings all the runs differ in; `None`
/// until two runs have one.
fn results(runs: &[KeptRun]) -> Option<(Vec<&'static str>, Vec<(&KeptRun, Downstream)>)> {
    let done: Vec<(&KeptRun, Downstream)> = runs.iter().filter_map(|r| r.downstream.map(|d| (r, d))).collect();
    (done.len() >= 2).then(|| (differing(runs), done))
}

/// What the runs' downstream accuracies show: the best and the worst, named by the settings
/// the runs differ in, and whether the gap is more than two held-out texts. `None` until two
/// runs have one.
pub fn downstream_sentence(runs: &[KeptRun]) -> Option<String> {
    let (differ, done) = results(runs)?;
    let best = done.iter().max_by(|a, b| a.1.accuracy.total_cmp(&b.1.accuracy))?;
    let worst = done.iter().min_by(|a, b| a.1.accuracy.total_cmp(&b.1.accuracy))?;
    let texts = best.1.texts.max(1);
    let one = 1.0 / texts as f32;
    let gap = best.1.accuracy - worst.1.accuracy;
    let pct = |a: f32| format!("{:.1}%", a * 100.0);
    let head = format!(
        "A head on each frozen encoder, trained on the sentiment examples: {} scored {} on the {texts} held-out texts, {} {}.",
        best.0.label(&differ),
        pct(best.1.accuracy),
        worst.0.label(&differ),
        pct(worst.1.accuracy)
    );
    let verdict = if gap <= 2.0 * one + 1e-6 {
        format!(" That is {} text(s) apart: too few to say one pretraining served the task better.", (gap / one).round())
    } else {
        format!(" {} more text(s) right: what {} learned in pretraining served this task better.", (gap / one).round(), best.0.name())
    };
    Some(head + &verdict)
}

/// The question lesson 5 asks of "Fine-tune each": which run's encoder served the task best.
/// The options are the runs with a result, named by the settings that differ; right is the
/// best and every run within two held-out texts of it. `None` until two runs have one.
pub fn best_downstream(runs: &[KeptRun]) -> Option<(Vec<String>, Vec<usize>, String)> {
    let (differ, done) = results(runs)?;
    let top = done.iter().map(|(_, d)| d.accuracy).fold(f32::MIN, f32::max);
    let two = 2.0 / done[0].1.texts.max(1) as f32;
    let right = done.iter().enumerate().filter(|(_, (_, d))| top - d.accuracy <= two + 1e-6).map(|(i, _)| i).collect();
    let options = done.iter().map(|(r, _)| r.label(&differ)).collect();
    let why = done.iter().map(|(r, d)| format!("{} {:.1}%", r.label(&differ), d.accuracy * 100.0)).collect::<Vec<_>>().join(", ");
    Some((options, right, format!("{why}; runs within two held-out texts of the best count as right.")))
}

impl Lab {
    /// Fine-tunes a head on each kept run's encoder that has none yet, one after the other, and
    /// adds its accuracy to the run; `downstream_note` says what is happening, or why it stopped.
    pub fn fine_tune_each(self, state: AppState, studio: Studio) {
        // On the lab, not the button's component: the table (and the button with it) is drawn
        // again each time a run's result comes in.
        let say = move |m: Result<String, String>| self.downstream_note.set(Some(m));
        if matches!(self.run.get_untracked(), LabRun::Running { .. }) || matches!(studio.run.get_untracked(), RunState::Running { .. }) {
            say(Err("A run is in progress (here or in the studio): wait for it to end first.".into()));
            return;
        }
        let todo: Vec<(u32, Option<KeptFiles>, Option<String>)> = self.compared.with_untracked(|runs| {
            runs.iter().filter(|r| r.downstream.is_none() && r.fine_tunable()).map(|r| (r.number, r.files.clone(), r.saved_as.clone())).collect()
        });
        if todo.is_empty() {
            say(Err("No run here has its model kept to fine-tune (a continued pretraining of a large model is not kept in the page).".into()));
            return;
        }
        self.downstream_busy.set(true);
        spawn_local(async move {
            let out = async {
                let current = state.engine().ok_or("no model is loaded")?;
                for (i, (number, files, saved_as)) in todo.iter().enumerate() {
                    say(Ok(format!("Fine-tuning on the lab model of #{number} ({} of {})…", i + 1, todo.len())));
                    let files = match (files, saved_as) {
                        (Some(f), _) => f.clone(),
                        (None, Some(id)) => super::saved::saved_files(id).await.map_err(|e| format!("the model of #{number}: {e}"))?,
                        (None, None) => continue,
                    };
                    let engine = Rc::new(Engine::build(&format!("MLM lab run #{number}"), checkpoint_from(&files)?, current.device.clone(), current.backend)?);
                    let summary = studio.train_on_examples(&engine, recipe(), format!("lab #{number}: {}", crate::studio::recipe(&recipe()))).await?;
                    let done = Downstream { accuracy: summary.metrics.accuracy, texts: summary.metrics.count };
                    self.compared.update(|runs| {
                        if let Some(r) = runs.iter_mut().find(|r| r.number == *number) {
                            r.downstream = Some(done);
                        }
                    });
                }
                Ok::<_, String>(())
            }
            .await;
            self.downstream_busy.set(false);
            say(out.map(|()| "Each run's head is trained: see the table, and the studio's runs table.".into()));
        });
    }
}

/// Under "Runs compared": the sentence of the runs' downstream accuracies, the "Fine-tune each"
/// button and what it is doing.
#[component]
pub fn FineTuneEach() -> impl IntoView {
    let lab = expect_context::<Lab>();
    let (state, studio) = (expect_context::<AppState>(), expect_context::<Studio>());
    let note = lab.downstream_note;
    view! {
        {move || lab.compared.with(|runs| downstream_sentence(runs)).map(|d| view! { <p class="small" data-testid="lab-downstream-sentence">{d}</p> })}
        <div class="row">
            <button class="secondary small" data-testid="lab-fine-tune-each" prop:disabled=move || lab.downstream_busy.get() || !state.has_model()
                title="Trains a head on each run's frozen encoder over the built-in sentiment examples (same recipe and seed), in the studio's worker"
                on:click=move |_| lab.fine_tune_each(state, studio)>"Fine-tune each on the sentiment examples"</button>
            {move || note.get().map(|m| match m {
                Ok(t) => view! { <span class="small muted" role="status" data-testid="lab-downstream-status">{t}</span> }.into_any(),
                Err(t) => view! { <span class="banner warn small" role="alert" data-testid="lab-downstream-status">{t}</span> }.into_any(),
            })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bertbench_core::tasks::masking::PairTask;

    fn run(number: u32, pair: Option<PairTask>, accuracy: Option<f32>) -> KeptRun {
        let mut r = super::super::compare::tests::kept(number, 0.15, 30);
        r.settings.config.pair_task = pair;
        r.downstream = accuracy.map(|accuracy| Downstream { accuracy, texts: 40 });
        r
    }

    #[test]
    fn the_downstream_sentence_follows_the_accuracies() {
        assert_eq!(downstream_sentence(&[run(1, None, Some(0.7)), run(2, Some(PairTask::Nsp), None)]), None, "one result is no comparison");
        let runs = [run(1, None, Some(0.6)), run(2, Some(PairTask::Nsp), Some(0.75)), run(3, Some(PairTask::Sop), Some(0.65))];
        let said = downstream_sentence(&runs).unwrap();
        assert!(said.starts_with("A head on each frozen encoder, trained on the sentiment examples: #2 (objective MLM + NSP) scored 75.0% on the 40 held-out texts, #1 (objective MLM) 60.0%."), "{said}");
        assert!(said.ends_with("6 more text(s) right: what #2 learned in pretraining served this task better."), "{said}");
        // Two texts of 40 is 5 points: no closer gap carries.
        let close = downstream_sentence(&[run(1, None, Some(0.7)), run(2, Some(PairTask::Sop), Some(0.75))]).unwrap();
        assert!(close.ends_with("2 text(s) apart: too few to say one pretraining served the task better."), "{close}");
    }

    #[test]
    fn the_question_counts_every_run_within_two_texts_of_the_best() {
        assert_eq!(best_downstream(&[run(1, None, Some(0.7))]), None);
        let (options, right, why) = best_downstream(&[run(1, None, Some(0.6)), run(2, Some(PairTask::Nsp), None), run(3, Some(PairTask::Sop), Some(0.8)), run(4, Some(PairTask::Nsp), Some(0.76))]).unwrap();
        assert_eq!(options, ["#1 (objective MLM)", "#3 (objective MLM + SOP)", "#4 (objective MLM + NSP)"], "runs without a result are no option");
        assert_eq!(right, [1, 2], "0.76 is within two of 40 texts of 0.8");
        assert!(why.starts_with("#1 (objective MLM) 60.0%, #3 (objective MLM + SOP) 80.0%"), "{why}");
    }
}
