//! Small shared pieces: progress bars, banners, colour scales, number formatting.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::Poll;

use futures::task::AtomicWaker;

use leptos::prelude::*;

thread_local! {
    /// The [`spawn_in_view`] task being polled now (0: none).
    static POLLED: Cell<u64> = const { Cell::new(0) };
    /// The [`spawn_in_view`] task that holds the page's device now (0: none, or a task that is
    /// never stopped).
    static HOLDER: Cell<u64> = const { Cell::new(0) };
    static NEXT_TASK: Cell<u64> = const { Cell::new(1) };
}

/// Marks the task being polled as holding the page's device until this is dropped (the turn on
/// the model, `app::Turn`): [`spawn_in_view`] does not stop a task while it holds the device.
pub struct DeviceHold(u64);

impl DeviceHold {
    pub fn begin() -> Self {
        let task = POLLED.get();
        HOLDER.set(task);
        Self(task)
    }
}

impl Drop for DeviceHold {
    fn drop(&mut self) {
        if HOLDER.get() == self.0 {
            HOLDER.set(0);
        }
    }
}

/// Spawns `task` for the reactive scope running now: a component (its event handlers run in
/// it too) or an effect's run. The task stops at its next `.await` once that scope is cleaned up
/// (the view closed, or the effect ran again), so it never reads a signal or stored value the
/// view owned after the view is gone (reading a disposed one panics). Work that must finish
/// whatever the view does (loading a model, a training run, a save) belongs to state that lives
/// as long as the page and is spawned with `spawn_local`.
///
/// A task holding the page's device ([`DeviceHold`]) is not stopped until it lets the device
/// go: dropping a WebGPU readback in flight returns its staging buffer to cubecl's pool still
/// mapped, and the device's next submit that uses it fails ("used in submit while mapped").
pub fn spawn_in_view(task: impl Future<Output = ()> + 'static) {
    let id = NEXT_TASK.get();
    NEXT_TASK.set(id + 1);
    let stopped = Arc::new(AtomicBool::new(false));
    let waker = Arc::new(AtomicWaker::new());
    if Owner::current().is_some() {
        let (stopped, waker) = (Arc::clone(&stopped), Arc::clone(&waker));
        on_cleanup(move || {
            stopped.store(true, Ordering::Relaxed);
            // Woken, a task that does not hold the device ends at once.
            waker.wake();
        });
    }
    let mut task = Box::pin(task);
    leptos::task::spawn_local(std::future::poll_fn(move |cx| {
        let ends = || stopped.load(Ordering::Relaxed) && HOLDER.get() != id;
        if ends() {
            return Poll::Ready(());
        }
        let outer = POLLED.replace(id);
        let polled = task.as_mut().poll(cx);
        POLLED.set(outer);
        if polled.is_pending() {
            if ends() {
                return Poll::Ready(());
            }
            waker.register(cx.waker());
        }
        polled
    }));
}

/// After the next paint, focuses the element `selector` finds, if the focus is nowhere (on the
/// page's body, as when the focused button was disabled or redrawn).
pub fn focus_if_lost(selector: &'static str) {
    leptos::task::spawn_local(async move {
        crate::fetch::after_paint().await;
        let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
        let lost = document.active_element().is_none_or(|e| e.tag_name() == "BODY" || e.has_attribute("disabled"));
        if !lost {
            return;
        }
        if let Some(el) = document.query_selector(selector).ok().flatten().and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok()) {
            let _ = el.focus();
        }
    });
}

/// A determinate bar when `fraction` is known, an indeterminate one otherwise. `label` names it
/// for a screen reader ("Progress" unless given), which also hears the percentage when known.
#[component]
pub fn ProgressBar(#[prop(into)] fraction: Signal<Option<f64>>, #[prop(into, optional)] label: Option<String>) -> impl IntoView {
    let percent = move || fraction.get().map(|f| format!("{:.0}", (f * 100.0).clamp(0.0, 100.0)));
    view! {
        <div class="progress" class:indeterminate=move || fraction.get().is_none() role="progressbar"
            aria-label=label.unwrap_or_else(|| "Progress".into()) aria-valuemin="0" aria-valuemax="100" aria-valuenow=percent>
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

/// `75.0` → `"1m 15s"`.
pub fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
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

pub use crate::fetch::now_ms;


/// A `performance.mark` named `bertbench:{name}`, for the benchmark's start-up phases (and the
/// DevTools timeline).
/// Becomes true the first time `node` is on screen, and stays true: for the work a panel does
/// only once someone can see it (a first visit's page is usable sooner when what is below the
/// fold waits). True at once where the browser has no `IntersectionObserver`.
pub fn first_seen(node: NodeRef<leptos::html::Section>) -> ReadSignal<bool> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let (seen, set_seen) = signal(false);
    Effect::new(move |_| {
        let Some(element) = node.get() else { return };
        let on_change = Closure::<dyn FnMut(js_sys::Array, web_sys::IntersectionObserver)>::new(
            move |entries: js_sys::Array, observer: web_sys::IntersectionObserver| {
                if entries.iter().any(|e| e.unchecked_into::<web_sys::IntersectionObserverEntry>().is_intersecting()) {
                    set_seen.set(true);
                    observer.disconnect();
                }
            },
        );
        match web_sys::IntersectionObserver::new(on_change.as_ref().unchecked_ref()) {
            Ok(observer) => {
                observer.observe(&element);
                // Lives as long as the observer, which lets go of it once the panel is seen.
                on_change.forget();
            }
            Err(_) => set_seen.set(true),
        }
    });
    seen
}

pub fn mark(name: &str) {
    use wasm_bindgen::JsCast;
    if let Some(p) = js_sys::Reflect::get(&js_sys::global(), &"performance".into()).ok().and_then(|p| p.dyn_into::<web_sys::Performance>().ok()) {
        let _ = p.mark(&format!("bertbench:{name}"));
    }
}

/// [`mark`] at the start of the next frame, the one that paints what the page shows now.
pub fn mark_next_frame(name: &str) {
    use wasm_bindgen::JsCast;
    let name = name.to_string();
    let Some(window) = web_sys::window() else { return };
    let callback = wasm_bindgen::closure::Closure::once_into_js(move || mark(&name));
    let _ = window.request_animation_frame(callback.unchecked_ref());
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend name.
    pub name: String,
    /// CSS colour.
    pub color: &'static str,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
    /// Draw a dot at each point (for sparse series such as evaluations).
    pub dots: bool,
}

/// "Nice" tick values covering `[lo, hi]`.
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| span / s <= n as f64).unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    (0..=n * 2).map(|i| first + i as f64 * step).take_while(|v| *v <= hi + step * 1e-9).collect()
}

/// A tick's label: as many decimals as a "nice" step needs (0.925, not 0.93), no trailing zeros.
fn tick_label(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        return format!("{v:.0}");
    }
    let s = if v.abs() >= 1.0 { format!("{v:.2}") } else { format!("{v:.3}") };
    s.trim_end_matches('0').to_string()
}

/// The x axis of `pts` (finite): its range and ticks. Where every x is a whole number (steps,
/// epochs) the ticks are whole numbers too, and a single x gets one on each side of it
/// (epoch 15 alone: 14, 15, 16, not 14.6 … 15.4).
fn x_axis(pts: &[(f64, f64)]) -> (f64, f64, Vec<f64>) {
    let (mut x0, mut x1) = pts.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let whole = pts.iter().all(|p| p.0.fract() == 0.0);
    if x1 - x0 < 1e-9 {
        let pad = if whole { 1.0 } else { 0.5 };
        x0 -= pad;
        x1 += pad;
    }
    let mut xt = ticks(x0, x1, 5);
    if whole {
        xt.retain(|v| (v - v.round()).abs() < 1e-9);
        xt.iter_mut().for_each(|v| *v = v.round());
    }
    (x0, x1, xt)
}

/// A small SVG line chart with axes, ticks and a legend.
#[component]
pub fn LineChart(
    #[prop(into)] series: Signal<Vec<Series>>,
    #[prop(into)] x_label: String,
    #[prop(into)] y_label: String,
    /// Fixed y range (for example accuracy in `[0, 1]`); otherwise fitted to the data.
    #[prop(optional)] y_range: Option<(f64, f64)>,
    #[prop(into, optional)] testid: String,
) -> impl IntoView {
    const W: f64 = 460.0;
    const H: f64 = 220.0;
    const L: f64 = 46.0;
    const R: f64 = 10.0;
    const T: f64 = 10.0;
    const B: f64 = 34.0;
    let body = move || {
        let all = series.get();
        let pts: Vec<(f64, f64)> = all.iter().flat_map(|s| s.points.iter().copied()).filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
        if pts.is_empty() {
            return view! { <text x=W / 2.0 y=H / 2.0 text-anchor="middle" class="chart-empty">"no data yet"</text> }.into_any();
        }
        let (x0, x1, xt) = x_axis(&pts);
        let (mut y0, mut y1) = y_range.unwrap_or_else(|| pts.iter().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1))));
        if y1 - y0 < 1e-9 {
            y0 -= 0.5;
            y1 += 0.5;
        }
        if y_range.is_none() {
            y0 = y0.min(0.0);
        }
        let sx = move |x: f64| L + (x - x0) / (x1 - x0) * (W - L - R);
        let sy = move |y: f64| H - B - (y - y0) / (y1 - y0) * (H - T - B);
        let yt = ticks(y0, y1, 4);
        view! {
            <g>
                {yt.into_iter().map(|v| view! {
                    <line x1=L x2=W - R y1=sy(v) y2=sy(v) class="grid" />
                    <text x=L - 5.0 y=sy(v) + 4.0 text-anchor="end" class="tick">{tick_label(v)}</text>
                }).collect_view()}
                {xt.into_iter().map(|v| view! {
                    <text x=sx(v) y=H - B + 15.0 text-anchor="middle" class="tick">{tick_label(v)}</text>
                }).collect_view()}
                <line x1=L x2=W - R y1=H - B y2=H - B class="axis" />
                <line x1=L x2=L y1=T y2=H - B class="axis" />
                {all.into_iter().map(|s| {
                    let d: String = s.points.iter().filter(|(x, y)| x.is_finite() && y.is_finite())
                        .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y))).collect::<Vec<_>>().join(" ");
                    let dots = s.dots.then(|| s.points.iter().map(|&(x, y)| view! { <circle cx=sx(x) cy=sy(y) r="3" fill=s.color /> }).collect_view());
                    view! { <polyline points=d fill="none" stroke=s.color stroke-width="1.6" />{dots} }
                }).collect_view()}
            </g>
        }.into_any()
    };
    let legend = move || series.get().into_iter().map(|s| view! { <span><i style:background=s.color></i>{s.name}</span> }).collect_view();
    // Each series' y values as JSON, for the tests to read the numbers rather than the drawing.
    let values = move || {
        let ys: Vec<Vec<f64>> = series.get().iter().map(|s| s.points.iter().map(|p| p.1).collect()).collect();
        serde_json::to_string(&ys).unwrap_or_default()
    };
    // What a screen reader says of the chart: what it plots (the numbers are in data-values and,
    // where a view has one, its table).
    let (x_name, y_name) = (x_label.clone(), y_label.clone());
    let summary = move || {
        let names: Vec<String> = series.get().iter().map(|s| s.name.clone()).collect();
        format!("Chart of {y_name} against {x_name}: {}", names.join(", "))
    };
    view! {
        <figure class="chart" data-testid=testid data-values=values>
            <svg viewBox=format!("0 0 {W} {H}") role="img" aria-label=summary>
                {body}
                <text x=(W + L) / 2.0 y=H - 4.0 text-anchor="middle" class="axis-label">{x_label.clone()}</text>
                <text x="12" y=(H - B) / 2.0 text-anchor="middle" class="axis-label" transform=format!("rotate(-90 12 {})", (H - B) / 2.0)>{y_label.clone()}</text>
            </svg>
            <figcaption class="legend">{legend}</figcaption>
            <details class="chart-data">
                <summary>"Show the numbers"</summary>
                {move || chart_table(&series.get(), &x_label, &y_label)}
            </details>
        </figure>
    }
}

/// Most rows a chart's table shows: a long training curve is thinned evenly to this many x values.
const TABLE_ROWS: usize = 60;

/// The x values a chart's table lists: all the series' x values, in order, thinned evenly to
/// [`TABLE_ROWS`] (the first and last kept).
fn table_xs(series: &[Series]) -> Vec<f64> {
    let mut xs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|x| x.is_finite()).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    if xs.len() <= TABLE_ROWS {
        return xs;
    }
    let last = xs.len() - 1;
    (0..TABLE_ROWS).map(|i| xs[i * last / (TABLE_ROWS - 1)]).collect()
}

/// A chart's numbers as a table: one row per x value, one column per series (empty where a
/// series has no point at that x).
fn chart_table(series: &[Series], x_label: &str, y_label: &str) -> impl IntoView + use<> {
    let xs = table_xs(series);
    let total = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).count();
    let at = |s: &Series, x: f64| s.points.iter().find(|p| (p.0 - x).abs() < 1e-9).map(|p| tick_label_precise(p.1)).unwrap_or_default();
    let rows = xs.iter().map(|&x| view! {
        <tr><th scope="row">{tick_label_precise(x)}</th>{series.iter().map(|s| view! { <td>{at(s, x)}</td> }).collect_view()}</tr>
    }).collect_view();
    let thinned = (xs.len() < total && xs.len() == TABLE_ROWS).then(|| format!(" ({TABLE_ROWS} evenly spaced rows)"));
    view! {
        <table class="plain small">
            <caption>{format!("{y_label} by {x_label}{}", thinned.unwrap_or_default())}</caption>
            <tr><th scope="col">{x_label.to_string()}</th>{series.iter().map(|s| view! { <th scope="col">{s.name.clone()}</th> }).collect_view()}</tr>
            {rows}
        </table>
    }
}

/// A number for a table: whole numbers as they are, others to four decimals (trailing zeros dropped).
fn tick_label_precise(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 { format!("{v:.0}") } else { format!("{:.4}", v).trim_end_matches('0').to_string() }
}

/// A stored size in words ("–" for none, kB, MB).
pub fn size(bytes: u64) -> String {
    match bytes {
        0 => "–".into(),
        b if b < 1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

/// "3 min ago", from a saved time in ms since the epoch.
pub fn ago(saved_ms: f64) -> String {
    let seconds = ((js_sys::Date::now() - saved_ms) / 1000.0).max(0.0);
    format!("{} ago", duration(seconds))
}

/// A confusion matrix, `confusion[truth][predicted]`: right answers blue and marked ✓, wrong ones
/// orange and marked ✗, darker for more, and every count written.
pub fn confusion_matrix(labels: &[String], confusion: &[Vec<usize>], testid: &'static str) -> impl IntoView + use<> {
    let max = confusion.iter().flatten().copied().max().unwrap_or(1).max(1) as f32;
    view! {
        <table class="matrix" data-testid=testid>
            <tr><th class="corner">"true ↓ / predicted →"</th>{labels.iter().map(|l| view! { <th>{l.clone()}</th> }).collect_view()}</tr>
            {confusion.iter().enumerate().map(|(i, row)| view! {
                <tr>
                    <th class="rowhead">{labels.get(i).cloned().unwrap_or_default()}</th>
                    {row.iter().enumerate().map(|(j, &n)| {
                        let a = n as f32 / max;
                        // Blue and orange (safe for every common colour blindness), and a mark: the
                        // colour is never the only sign of a right or a wrong cell.
                        let bg = if i == j { format!("rgba(34,89,196,{:.2})", 0.10 + 0.45 * a) } else { format!("rgba(230,120,0,{:.2})", if n == 0 { 0.0 } else { 0.12 + 0.55 * a }) };
                        // The mark is the style sheet's (`td.right::before`), so the cell's text stays the count.
                        let (class, what) = match (i == j, n) {
                            (true, _) => ("right", "right"),
                            (false, 0) => ("", "wrong"),
                            (false, _) => ("wrong", "wrong"),
                        };
                        view! { <td class=class style:background=bg title=format!("{n} {what}")>{n}</td> }
                    }).collect_view()}
                </tr>
            }).collect_view()}
        </table>
    }
}

/// Precision, recall and F1 per class (or entity type), one row each; `columns` names the first
/// and the last column (what the rows are, what their count is).
pub fn scores_table(columns: [&'static str; 2], rows: &[bertbench_core::tasks::metrics::ClassMetrics], testid: &'static str) -> impl IntoView + use<> {
    view! {
        <table class="plain" data-testid=testid>
            <tr><th>{columns[0]}</th><th>"precision"</th><th>"recall"</th><th>"F1"</th><th>{columns[1]}</th></tr>
            {rows.iter().map(|c| view! {
                <tr><td>{c.label.clone()}</td><td>{format!("{:.3}", c.precision)}</td><td>{format!("{:.3}", c.recall)}</td><td>{format!("{:.3}", c.f1)}</td><td>{c.support}</td></tr>
            }).collect_view()}
        </table>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_whole_x_gets_whole_ticks_around_it() {
        let (x0, x1, ticks) = x_axis(&[(15.0, 0.3)]);
        assert_eq!((x0, x1, ticks), (14.0, 16.0, vec![14.0, 15.0, 16.0]));
        let (_, _, ticks) = x_axis(&[(1.0, 0.0), (3.0, 1.0)]);
        assert!(ticks.iter().all(|t| t.fract() == 0.0) && ticks.contains(&2.0), "{ticks:?}");
        let (x0, x1, _) = x_axis(&[(0.25, 1.0)]);
        assert_eq!((x0, x1), (-0.25, 0.75));
    }

    fn series(xs: impl Iterator<Item = f64>) -> Series {
        Series { name: "s".into(), color: "#000", points: xs.map(|x| (x, x * 2.0)).collect(), dots: false }
    }

    #[test]
    fn a_chart_table_lists_every_x_of_a_short_chart_once() {
        let xs = table_xs(&[series([0.0, 1.0, 2.0].into_iter()), series([1.0, 3.0].into_iter())]);
        assert_eq!(xs, [0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn a_long_curve_is_thinned_evenly_with_its_ends() {
        let xs = table_xs(&[series((0..1000).map(f64::from))]);
        assert_eq!(xs.len(), TABLE_ROWS);
        assert_eq!((xs[0], xs[TABLE_ROWS - 1]), (0.0, 999.0));
        assert!(xs.windows(2).all(|w| w[1] > w[0]));
    }

    #[test]
    fn tick_labels_show_the_steps_decimals() {
        assert_eq!([0.925, 0.95, 0.5, 2.5, 3.0, 250.0].map(tick_label), ["0.925", "0.95", "0.5", "2.5", "3", "250"]);
    }

    #[test]
    fn table_numbers_keep_whole_numbers_whole() {
        assert_eq!(tick_label_precise(3.0), "3");
        assert_eq!(tick_label_precise(0.8125), "0.8125");
        assert_eq!(tick_label_precise(0.5), "0.5");
    }
}
