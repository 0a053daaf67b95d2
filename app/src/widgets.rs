//! Small shared pieces: progress bars, banners, colour scales, number formatting.

use leptos::prelude::*;

/// A determinate bar when `fraction` is known, an indeterminate one otherwise.
#[component]
pub fn ProgressBar(#[prop(into)] fraction: Signal<Option<f64>>) -> impl IntoView {
    view! {
        <div class="progress" class:indeterminate=move || fraction.get().is_none() role="progressbar">
            <div style:width=move || fraction.get().map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_default()></div>
        </div>
    }
}

/// Background colour for a value in `[-1, 1]`: white at 0, blue when positive, orange when
/// negative.
pub fn diverging(v: f32) -> String {
    let t = v.clamp(-1.0, 1.0);
    let (r, g, b) = if t >= 0.0 { (47.0, 111.0, 222.0) } else { (217.0, 115.0, 26.0) };
    let a = t.abs();
    let mix = |c: f32| (255.0 + (c - 255.0) * a).round() as u8;
    format!("rgb({}, {}, {})", mix(r), mix(g), mix(b))
}

/// Text colour readable on [`diverging`]`(v)`.
pub fn ink_on(v: f32) -> &'static str {
    if v.abs() > 0.6 { "#fff" } else { "#1c2430" }
}

/// `1234567` → `"1.23 M"`.
pub fn human_count(n: usize) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1} M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1} k", n as f64 / 1e3),
        n => n.to_string(),
    }
}

/// Bytes as MB with one decimal.
pub fn megabytes(n: u64) -> String {
    format!("{:.1} MB", n as f64 / 1_048_576.0)
}

/// Milliseconds since page load.
pub fn now_ms() -> f64 {
    web_sys::window().and_then(|w| w.performance()).map(|p| p.now()).unwrap_or(0.0)
}
