//! Teacher tools for the lessons: a presentation mode for a projector (large type, high
//! contrast, the lesson alone on the screen, arrow keys to step) and a printable handout (the
//! browser's print to PDF, with `www/style.css`'s print rules and every maths fold open).

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::{LESSONS, Lessons};

/// Marks the page as presented (`html[data-present]` in the style sheet) or not.
fn set_presenting(on: bool) {
    let Some(root) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) else { return };
    let _ = if on { root.set_attribute("data-present", "") } else { root.remove_attribute("data-present") };
}

/// Whether a key press belongs to a field (typing an answer, choosing in a list), not to the
/// presentation.
fn in_field(ev: &web_sys::KeyboardEvent) -> bool {
    let tag = ev.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok()).map(|e| e.tag_name()).unwrap_or_default();
    matches!(tag.as_str(), "INPUT" | "SELECT" | "TEXTAREA")
}

/// Scrolls to the top of the page and focuses the lesson's title, once the new lesson is drawn.
fn show_title() {
    leptos::task::spawn_local(async {
        crate::fetch::after_paint().await;
        let Some(window) = web_sys::window() else { return };
        window.scroll_to_with_x_and_y(0.0, 0.0);
        let title = window.document().and_then(|d| d.query_selector("[data-testid=lesson-title]").ok().flatten());
        if let Some(title) = title.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = title.focus();
        }
    });
}

/// Opens every maths fold of the lesson, then the browser's print dialog (the print rules in
/// `www/style.css` fit the lesson on one A4 page; a chart's numbers stay for the screen).
fn print_handout() {
    let Some(window) = web_sys::window() else { return };
    if let Some(document) = window.document() {
        // One fold at a time: each opened one no longer matches.
        while let Ok(Some(fold)) = document.query_selector("[data-testid=lesson] details.maths:not([open])") {
            if fold.set_attribute("open", "").is_err() {
                break;
            }
        }
    }
    let _ = window.print();
}

/// The two buttons, and the keys of presentation mode: → or Page Down the next lesson, ← or
/// Page Up the previous one, Escape leaves.
#[component]
pub fn TeacherTools() -> impl IntoView {
    let lessons = expect_context::<Lessons>();
    let presenting = RwSignal::new(false);
    Effect::new(move |_| set_presenting(presenting.get()));
    // On a projector each lesson starts at its title: entering the mode and every step scroll
    // to the top and put the focus on the title (a screen reader reads it; the keys keep working).
    Effect::new(move |_| {
        lessons.current.track();
        if presenting.get() {
            show_title();
        }
    });
    on_cleanup(|| set_presenting(false));
    let handle = window_event_listener(leptos::ev::keydown, move |ev| {
        if !presenting.get_untracked() {
            return;
        }
        // Escape leaves from anywhere, a text field too (the field has no use for it); the
        // arrows and Page keys stay with a field that has the focus.
        if ev.key() == "Escape" {
            presenting.set(false);
            ev.prevent_default();
            return;
        }
        if in_field(&ev) {
            return;
        }
        let current = lessons.current.get_untracked();
        match ev.key().as_str() {
            "ArrowRight" | "PageDown" if current + 1 < LESSONS.len() => lessons.go(current + 1),
            "ArrowLeft" | "PageUp" if current > 0 => lessons.go(current - 1),
            _ => return,
        }
        ev.prevent_default();
    });
    on_cleanup(move || handle.remove());
    view! {
        <div class="row teacher-tools">
            <button class="secondary" data-testid="lesson-present" aria-pressed=move || presenting.get().to_string()
                on:click=move |_| presenting.update(|p| *p = !*p)>
                {move || if presenting.get() { "Leave presentation mode (Esc)" } else { "Presentation mode" }}
            </button>
            <button class="secondary" data-testid="lesson-print" on:click=move |_| print_handout()>"Print a handout"</button>
            <Show when=move || presenting.get()>
                <span class="small muted">"← → step through the lessons · Esc leaves"</span>
            </Show>
        </div>
    }
}
