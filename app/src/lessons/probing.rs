//! Lesson 8: probing, what each layer knows. A linear probe per layer on the built-in sentiment
//! examples, next to a baseline probe trained on the texts' labels shuffled: on held-out texts that
//! baseline scores about chance however much it memorised (texts do not recur between training and
//! test), so it is a chance line, not Hewitt and Liang's control task; the word-level section
//! (`word_probe`) has a control task, since word types do recur.

use bertbench_core::analysis::samples::balanced_sample;
use bertbench_core::data::{shuffled, stratified_split};
use leptos::prelude::*;

use crate::widgets::spawn_in_view;

use super::check::{Answer, Check, Expected, best};
use super::word_probe::WordProbing;
use super::{Maths, TryThis};
use crate::app::AppState;
use crate::compute::{Latest, claim_newest};
use crate::explore::probe::{layer_vectors, probe_layers};
use crate::studio::builtin_sentiment;
use crate::widgets::{LineChart, Series};

pub const CHECKS: [&str; 4] = ["probing-best-layer", "probing-selectivity", super::word_probe::CHECKS[0], super::word_probe::CHECKS[1]];

/// Texts probed: enough for a stable probe, few enough to take seconds on one CPU thread.
const TEXTS: usize = 160;

#[derive(Clone, PartialEq)]
struct Probed {
    train: usize,
    test: usize,
    /// Held-out accuracy per layer (0 = input embeddings): real labels, shuffled labels.
    real: Vec<f32>,
    control: Vec<f32>,
    majority: f32,
}

fn percent(x: f32) -> String {
    format!("{:.1}", x * 100.0)
}

/// The lesson.
#[component]
pub fn ProbingLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let result = RwSignal::new(None::<Result<Probed, String>>);
    let progress = RwSignal::new(String::new());
    let latest = Latest::new();
    Effect::new(move |_| {
        state.generation.get();
        let ticket = latest.next();
        result.set(None);
        spawn_in_view(async move {
            let data = builtin_sentiment();
            let Some(engine) = claim_newest(state, latest, ticket).await else { return };
            let out = async {
                let dataset = data?;
                let picked = balanced_sample(&dataset, TEXTS);
                let all_ids = dataset.label_ids();
                let ids: Vec<usize> = picked.iter().map(|&i| all_ids[i]).collect();
                let split = stratified_split(&ids, dataset.labels.len(), 0.3, 17).map_err(|e| e.to_string())?;
                let texts: Vec<String> = picked.iter().map(|&i| dataset.examples[i].text.clone()).collect();
                let per_text = layer_vectors(&engine, &texts, |d, t| progress.set(format!("embedding {d} / {t} texts")), || false).await?;
                let say = |l, n| progress.set(format!("probing layer {l} of {n}"));
                let real = probe_layers(&per_text, &ids, dataset.labels.len(), &split, say, || false).await?;
                // The shuffled-label baseline: the same texts and split, each text given another text's label.
                let order = shuffled(ids.len(), 29);
                let control_ids: Vec<usize> = order.iter().map(|&i| ids[i]).collect();
                let control = probe_layers(&per_text, &control_ids, dataset.labels.len(), &split, say, || false).await?;
                Ok::<_, String>(Probed {
                    train: split.train.len(),
                    test: split.valid.len(),
                    majority: real.first().map(|r| r.majority).unwrap_or(0.0),
                    real: real.iter().map(|r| r.test_accuracy).collect(),
                    control: control.iter().map(|r| r.test_accuracy).collect(),
                })
            }
            .await;
            drop(engine);
            if latest.is(ticket) {
                result.set(Some(out));
            }
        });
    });
    let best_layer = Signal::derive(move || {
        result.get().map(|r| {
            r.map(|p| {
                let right = best(&p.real);
                let options = (0..p.real.len()).map(|l| if l == 0 { "layer 0 (input embeddings)".to_string() } else { format!("layer {l}") }).collect();
                Answer {
                    expected: Expected::Choice { options, right: right.clone() },
                    why: format!("Layer {}'s probe reads the sentiment of {}% of the held-out texts; the input embeddings' {}%.", right[0], percent(p.real[right[0]]), percent(p.real[0])),
                }
            })
        })
    });
    let selectivity = Signal::derive(move || {
        result.get().map(|r| {
            r.map(|p| {
                let l = best(&p.real)[0];
                let gap = (p.real[l] - p.control[l]) * 100.0;
                Answer {
                    expected: Expected::Number { value: gap as f64, tolerance: 0.6 },
                    why: format!("{} − {} = {gap:.1} points: how far the layer's probe reads new texts above a probe that learned labels meaning nothing (about chance on texts it never saw).", percent(p.real[l]), percent(p.control[l])),
                }
            })
        })
    });
    view! {
        <p>"Does layer 3 already know whether a review is positive? A "<em>"probe"</em>" asks: freeze the model, take one "
            "layer's vectors of many labelled texts, and train the simplest classifier there is, a straight line (logistic "
            "regression), to read the label. If it reads it well on texts it was not trained on, the layer holds that "
            "information in an easy-to-read form."</p>
        <p>"A probe can also learn by heart: with hundreds of numbers per text and about a hundred texts to train on, "
            "even meaningless labels can be fitted on the training texts. On texts it never saw, a probe of meaningless labels "
            "scores about chance however much it memorised, so the probe is compared with that "<em>"baseline"</em>": the same probe on the "
            "same texts with their labels shuffled among them, scored on the same held-out texts. The gap between the two is how "
            "far the layer's reading beats chance on new texts."</p>
        <p class="small muted">"Hewitt and Liang (2019), who named "<em>"selectivity"</em>", used "<em>"control tasks"</em>" for word-level probes: "
            "each word type gets a random label, the same wherever it appears, and since word types recur between training and "
            "test a probe can score there by memorising words; selectivity is the real probe's lead over that. Whole texts do "
            "not recur, so the shuffled baseline here measures chance, not memorising; the word-level probes below have a "
            "control task."</p>
        <Maths>
            <p>"For the layer's mean-pooled, standardised vectors x and labels y, the probe fits"</p>
            <p class="formula">"p(y | x) = softmax(W x + b),  min −Σ log p(y"<sub>"i"</sub>" | x"<sub>"i"</sub>") + λ‖W‖²"</p>
            <p>"and is scored on 30% of the texts held out. The gap = accuracy(real labels) − accuracy(shuffled labels), both on the held-out texts. "
                "A probe that needs a deep network to read a property says little: the network might learn the property "
                "itself. That is why probes are kept linear."</p>
        </Maths>
        {move || match result.get() {
            None => view! { <p class="small muted" role="status">{move || format!("Probing every layer of the loaded model… {}", progress.get())}</p> }.into_any(),
            Some(Err(e)) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Some(Ok(p)) => {
                let points = |v: &[f32]| v.iter().enumerate().map(|(l, a)| (l as f64, *a as f64)).collect::<Vec<_>>();
                let last = (p.real.len() - 1) as f64;
                let series = vec![
                    Series { name: "real labels".into(), color: "#2259c4", points: points(&p.real), dots: true },
                    Series { name: "shuffled labels (baseline)".into(), color: "#b35806", points: points(&p.control), dots: true },
                    Series { name: "always the majority label".into(), color: "#767676", points: vec![(0.0, p.majority as f64), (last, p.majority as f64)], dots: false },
                ];
                view! {
                    <p class="small muted">{format!("Built-in sentiment examples: {} texts to train each probe, {} held out.", p.train, p.test)}</p>
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = input embeddings)" y_label="held-out accuracy" y_range=(0.0, 1.0) testid="lesson-probing-chart" />
                    <div class="scroll-x">
                    <table class="plain small" data-testid="lesson-probing-table">
                        <caption>"Held-out accuracy (%) of the probe of each layer"</caption>
                        <tr><th scope="col">"layer"</th>{(0..p.real.len()).map(|l| view! { <th scope="col">{l}</th> }).collect_view()}</tr>
                        <tr><th scope="row">"real labels"</th>{p.real.iter().map(|a| view! { <td data-real=a.to_string()>{percent(*a)}</td> }).collect_view()}</tr>
                        <tr><th scope="row">"shuffled labels"</th>{p.control.iter().map(|a| view! { <td data-control=a.to_string()>{percent(*a)}</td> }).collect_view()}</tr>
                    </table>
                    </div>
                }.into_any()
            }
        }}
        <TryThis>
            <ul>
                <li>"Where does the real curve jump? Is the input embeddings' probe already above the majority line, and why could it be (think of words like “awful”)?"</li>
                <li>"The explorer's “What each layer knows” view probes your own labelled data the same way."</li>
                <li>"Below, compare the words' two curves: where is position read best, where part of speech? Which of the two does the control task come closest to, and why would a word's identity alone give away its tag so often?"</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question="Which layer's probe reads the sentiment best?".to_string() answer=best_layer />
        <Check id=CHECKS[1] question="At that layer, how many percentage points does the probe read above the shuffled-label baseline?".to_string() answer=selectivity />
        <WordProbing sentiment=Signal::derive(move || result.get().and_then(Result::ok).map(|p| (p.real, p.control))) />
    }
}
