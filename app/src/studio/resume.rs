//! The offer to resume an interrupted run from its checkpoint.

use leptos::prelude::*;

use super::{Studio, recipe};
use crate::app::AppState;
use crate::widgets::duration;

/// The offer to resume a run that a reload (or a closed tab, or a failure) interrupted.
#[component]
pub fn ResumeBanner() -> impl IntoView {
    let state = expect_context::<AppState>();
    let studio = expect_context::<Studio>();
    let error = RwSignal::new(None::<String>);
    view! {
        {move || studio.resume_offer.get().map(|meta| {
            let stage = if meta.phase == bertbench_core::train::Phase::Head { "training the head" } else { "fine-tuning" };
            view! {
                <section class="card banner warn" data-testid="resume-offer">
                    <p>
                        <strong>"A training run was interrupted. "</strong>
                        {format!(
                            "{}, {} training examples, {}: {stage}, step {} of {} ({} epoch{} of this stage done, {} trained on the {}). Its checkpoint is saved in this browser.",
                            recipe(&meta.request.config),
                            meta.request.data.counts().0,
                            meta.base_model,
                            meta.step,
                            meta.total_steps,
                            meta.epoch,
                            if meta.epoch == 1 { "" } else { "s" },
                            duration(meta.seconds),
                            if meta.device.is_empty() { "CPU".into() } else { meta.device.clone() },
                        )}
                    </p>
                    <div class="row">
                        <button data-testid="resume-button" on:click=move |_| error.set(studio.resume(state).err())>
                            "Resume from the checkpoint"
                        </button>
                        <button class="secondary" data-testid="discard-checkpoint" on:click=move |_| studio.discard_checkpoint()>"Discard it"</button>
                        <span class="small muted">"It resumes on the backend chosen in step 2."</span>
                    </div>
                    {move || error.get().map(|e| view! { <p class="banner err small" data-testid="resume-error">{e}</p> })}
                </section>
            }
        })}
    }
}
