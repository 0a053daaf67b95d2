//! WebGPU against the CPU on a tiny model: forward outputs and one training step.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::app::{AppState, CheckState, run_device_check};

/// Shows the last check and runs it again on request.
#[component]
pub fn DeviceCheckPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let body = move || match state.check.get() {
        CheckState::NotRun => view! {
            <p class="small muted" data-testid="device-check-status">{move || match state.backend.get().gpu_note {
                Some(n) => format!("Not run: {n}."),
                None => "Runs automatically when the model is on WebGPU.".to_string(),
            }}</p>
        }.into_any(),
        CheckState::Running => view! { <p class="small muted" data-testid="device-check-status">"Running the tiny model on both backends…"</p> }.into_any(),
        CheckState::Failed(e) => view! { <p class="banner err small" data-testid="device-check-status">{e}</p> }.into_any(),
        CheckState::Done(r) => {
            let json = serde_json::to_string(&r).unwrap_or_default();
            let verdict = if r.passed {
                view! { <p class="banner ok small" data-testid="device-check-status">"WebGPU agrees with the CPU."</p> }.into_any()
            } else {
                view! { <p class="banner err small" data-testid="device-check-status">"WebGPU disagrees with the CPU; the model was moved to the CPU."</p> }.into_any()
            };
            let rows = r.forward.iter().chain(&r.gradients).map(|c| view! {
                <tr>
                    <td>{c.name.clone()}</td>
                    <td class="mono">{c.len}</td>
                    <td class="mono">{format!("{:.2e}", c.max_abs_diff)}</td>
                    <td class="mono">{format!("{:.2e}", c.max_abs_reference)}</td>
                    <td>{if c.ok { "✓" } else { "✗" }}</td>
                </tr>
            }).collect_view();
            view! {
                <div>
                    {verdict}
                    <p class="small">{format!("Training loss: CPU {:.6}, WebGPU {:.6}", r.loss_reference, r.loss_candidate)}</p>
                    <table class="plain">
                        <tr><th>"output"</th><th>"values"</th><th>"max |difference|"</th><th>"max |CPU value|"</th><th></th></tr>
                        {rows}
                    </table>
                    <pre hidden data-testid="device-check-report">{json}</pre>
                </div>
            }.into_any()
        }
    };
    view! {
        <section class="card" data-testid="device-check-panel">
            <h2>"Backend check"</h2>
            <p class="hint">"A GPU driver can compute wrong numbers. This runs a tiny random BERT on WebGPU and on the CPU with the same "
                "weights and inputs, and compares outputs, one training step's loss and its gradients (tolerance 1e-4)."</p>
            {body}
            <button class="secondary" data-testid="device-check-button"
                prop:disabled=move || matches!(state.check.get(), CheckState::Running) || state.backend.get().adapter.is_none()
                on:click=move |_| spawn_local(run_device_check(state))>
                "Run the check again"
            </button>
        </section>
    }
}
