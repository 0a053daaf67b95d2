//! Lesson 8's word-level probes: part of speech and position read off each word's vector at every
//! layer of the loaded model (`bertbench_core::analysis::word_probe`), on the built-in sentences
//! tagged with Universal POS tags, beside the control task and the majority label, and a table of
//! which layer holds what, the sentence-level sentiment probe included. The questions' answers
//! are the live best layers. On screen only: the handout keeps lesson 8 to one page.

use bertbench_core::analysis::word_probe::{LayerScores, POSITIONS, WordProbe, word_vectors};
use bertbench_core::data::parse_tagged;
use bertbench_core::tasks::tagging::join_words;
use leptos::prelude::*;

use super::check::{Answer, Check, Expected, best};
use crate::app::AppState;
use crate::compute::{Latest, claim_newest, each_states};
use crate::examples::POS_CONLL;
use crate::fetch::yield_to_browser;
use crate::widgets::{LineChart, Series, spawn_in_view};

/// The checks' ids, listed in the lesson's `CHECKS`.
pub const CHECKS: [&str; 2] = ["probing-pos-layer", "probing-position-layer"];
/// The share of sentences held out, and the seeds of the split and of the control tasks.
const HELD_OUT: f32 = 0.3;
const SPLIT_SEED: u64 = 17;
const CONTROL_SEED: u64 = 23;

#[derive(Clone, PartialEq)]
struct Probed {
    sentences: usize,
    words: (usize, usize),
    tags: usize,
    layers: Vec<LayerScores>,
}

impl Probed {
    fn pos(&self) -> Vec<f32> {
        self.layers.iter().map(|s| s.pos.test_accuracy).collect()
    }
    fn position(&self) -> Vec<f32> {
        self.layers.iter().map(|s| s.position.test_accuracy).collect()
    }
}

fn percent(x: f32) -> String {
    format!("{:.1}", x * 100.0)
}

fn layer_name(l: usize) -> String {
    if l == 0 { "layer 0 (input embeddings)".to_string() } else { format!("layer {l}") }
}

/// "Which layer reads `what` best?", from `values` by layer.
fn best_layer(values: &[f32], what: &str, control: &[f32]) -> Answer {
    let right = best(values);
    let l = right[0];
    Answer {
        expected: Expected::Choice { options: (0..values.len()).map(layer_name).collect(), right },
        why: format!(
            "{}'s probe reads the {what} of {}% of the held-out words ({}% at layer 0); the control task reaches {}% there.",
            layer_name(l),
            percent(values[l]),
            percent(values[0]),
            percent(control[l])
        ),
    }
}

/// The part-of-speech sentences, each word's vector at every layer, and the probes layer by layer.
async fn probe(state: AppState, latest: Latest, ticket: u64, progress: RwSignal<String>) -> Option<Result<Probed, String>> {
    let engine = claim_newest(state, latest, ticket).await?;
    let out = async {
        let data = parse_tagged(POS_CONLL).map_err(|e| e.to_string())?;
        let joined: Vec<(String, Vec<(usize, usize)>)> = data.sentences.iter().map(|s| join_words(&s.words)).collect();
        let encoded = joined.iter().map(|(t, _)| engine.bert.tokenizer.encode(t)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
        let say = |d, t| progress.set(format!("reading {d} / {t} sentences"));
        let vectors = each_states(&engine, &encoded, |i, s| word_vectors(s, &joined[i].1), say, || false).await?;
        let split = data.split(HELD_OUT, SPLIT_SEED).map_err(|e| e.to_string())?;
        let probe = WordProbe::new(&data, vectors, &split.valid, CONTROL_SEED).map_err(|e| e.to_string())?;
        let mut layers = Vec::with_capacity(probe.layers());
        for l in 0..probe.layers() {
            progress.set(format!("probing the words at layer {l} of {}", probe.layers() - 1));
            yield_to_browser().await;
            layers.push(probe.layer(l).map_err(|e| e.to_string())?);
        }
        let tags = data.tags.iter().filter(|t| *t != "O" || data.sentences.iter().any(|s| s.tags.contains(t))).count();
        Ok::<_, String>(Probed { sentences: data.sentences.len(), words: probe.words(), tags, layers })
    }
    .await;
    drop(engine);
    latest.is(ticket).then_some(out)
}

/// The word-level probes; `sentiment` is the sentence-level probe's accuracy by layer (real
/// labels, shuffled labels), for the table of which layer holds what.
#[component]
pub fn WordProbing(#[prop(into)] sentiment: Signal<Option<(Vec<f32>, Vec<f32>)>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let result = RwSignal::new(None::<Result<Probed, String>>);
    let progress = RwSignal::new(String::new());
    let latest = Latest::new();
    Effect::new(move |_| {
        state.generation.get();
        let ticket = latest.next();
        result.set(None);
        spawn_in_view(async move {
            if let Some(out) = probe(state, latest, ticket, progress).await {
                result.set(Some(out));
            }
        });
    });
    let pos_layer = Signal::derive(move || {
        result.get().map(|r| r.map(|p| best_layer(&p.pos(), "part of speech", &p.layers.iter().map(|s| s.pos_control.test_accuracy).collect::<Vec<_>>())))
    });
    let position_layer = Signal::derive(move || {
        result.get().map(|r| r.map(|p| best_layer(&p.position(), "position", &p.layers.iter().map(|s| s.position_control.test_accuracy).collect::<Vec<_>>())))
    });
    view! {
        <section class="screen-only" data-testid="lesson-word-probe" aria-labelledby="lesson-word-probe-title">
        <h3 id="lesson-word-probe-title">"Inside the sentence: words"</h3>
        <p>"The same question for each word: does the word's vector at a layer say which part of speech it is (noun, verb, "
            "determiner, …) and where in the sentence it stands? The words of "{move || result.get().and_then(|r| r.ok()).map(|p| p.sentences.to_string()).unwrap_or_else(|| "the".into())}
            " short sentences written for this page, each tagged with its Universal POS tag, are read by the loaded model; "
            "each word's vector is its first piece's, and a linear probe per layer is trained on the words of 70% of the "
            "sentences and scored on the others. Here the baseline is a "<em>"control task"</em>": for part of speech Hewitt and "
            "Liang's own, each word type given a random tag, the same wherever it occurs; for position the same idea, made for this "
            "page, each word type given a random position. Since word types recur between training and test, the probe can score "
            "on a control task only by memorising words."</p>
        <p class="small muted">{move || {
            let layers = result.get().and_then(|r| r.ok()).map(|p| p.layers.len())
                .or_else(|| state.engine().map(|e| e.bert.config.num_hidden_layers + 1));
            let layers = layers.map_or("every layer".to_string(), |n| format!("{n} layers (the embeddings and each encoder layer)"));
            format!("These probes are fitted in closed form (least squares onto each label, the largest output read), so {layers} of hundreds of words take a moment; the sentence probe above takes gradient steps.")
        }}</p>
        {move || match result.get() {
            None => view! { <p class="small muted" role="status">{move || format!("Probing the words at every layer… {}", progress.get())}</p> }.into_any(),
            Some(Err(e)) => view! { <p class="banner warn small">{e}</p> }.into_any(),
            Some(Ok(p)) => {
                let pts = |v: Vec<f32>| v.iter().enumerate().map(|(l, a)| (l as f64, *a as f64)).collect::<Vec<_>>();
                let series = vec![
                    Series { name: "part of speech".into(), color: "#2259c4", points: pts(p.pos()), dots: true },
                    Series { name: "part of speech, control task".into(), color: "#7a9bd8", points: pts(p.layers.iter().map(|s| s.pos_control.test_accuracy).collect()), dots: false },
                    Series { name: "position".into(), color: "#b35806", points: pts(p.position()), dots: true },
                    Series { name: "position, control task".into(), color: "#d9a66e", points: pts(p.layers.iter().map(|s| s.position_control.test_accuracy).collect()), dots: false },
                ];
                let row = |name: &'static str, attr: &'static str, values: Vec<f32>| view! {
                    <tr><th scope="row">{name}</th>{values.into_iter().map(|a| view! { <td data-kind=attr data-v=a.to_string()>{percent(a)}</td> }).collect_view()}</tr>
                };
                let majority = (p.layers[0].pos.majority, p.layers[0].position.majority);
                view! {
                    <p class="small muted">{format!("{} words to train each probe, {} held out; {} tags, positions 0 to {} (the last for “{} or later”). Always guessing the most frequent label: {}% (part of speech), {}% (position).",
                        p.words.0, p.words.1, p.tags, POSITIONS - 1, POSITIONS - 1, percent(majority.0), percent(majority.1))}</p>
                    <LineChart series=Signal::derive(move || series.clone()) x_label="layer (0 = input embeddings)" y_label="held-out accuracy" y_range=(0.0, 1.0) testid="lesson-word-probe-chart" />
                    <div class="scroll-x">
                    <table class="plain small" data-testid="lesson-word-probe-table">
                        <caption>"Held-out accuracy (%) of each layer's word probes"</caption>
                        <tr><th scope="col">"layer"</th>{(0..p.layers.len()).map(|l| view! { <th scope="col">{l}</th> }).collect_view()}</tr>
                        {row("part of speech", "pos", p.pos())}
                        {row("its control task", "pos-control", p.layers.iter().map(|s| s.pos_control.test_accuracy).collect())}
                        {row("position", "position", p.position())}
                        {row("its control task", "position-control", p.layers.iter().map(|s| s.position_control.test_accuracy).collect())}
                    </table>
                    </div>
                    <WhichLayer words=p sentiment=sentiment />
                }.into_any()
            }
        }}
        <Check id=CHECKS[0] question="Which layer's probe reads the words' part of speech best?".to_string() answer=pos_layer />
        <Check id=CHECKS[1] question="Which layer's probe reads where each word stands in its sentence best?".to_string() answer=position_layer />
        </section>
    }
}

/// Which layer holds what: each property's best layer, its accuracy there and its baseline.
#[component]
fn WhichLayer(words: Probed, sentiment: Signal<Option<(Vec<f32>, Vec<f32>)>>) -> impl IntoView {
    let line = |what: &'static str, values: &[f32], baseline: &[f32], level: &'static str| {
        let l = best(values)[0];
        view! {
            <tr data-property=what data-layer=l.to_string()>
                <th scope="row">{what}</th><td>{level}</td><td>{l}</td><td>{percent(values[l])}</td><td>{percent(baseline[l])}</td>
            </tr>
        }
    };
    let pos_control: Vec<f32> = words.layers.iter().map(|s| s.pos_control.test_accuracy).collect();
    let position_control: Vec<f32> = words.layers.iter().map(|s| s.position_control.test_accuracy).collect();
    view! {
        <table class="plain small" data-testid="lesson-which-layer">
            <caption>"Which layer holds what: the best layer of each probe"</caption>
            <tr><th scope="col">"property"</th><th scope="col">"read from"</th><th scope="col">"best layer"</th><th scope="col">"accuracy (%)"</th><th scope="col">"baseline there (%)"</th></tr>
            {move || sentiment.get().map(|(real, control)| line("sentiment", &real, &control, "the whole text"))}
            {line("part of speech", &words.pos(), &pos_control, "each word")}
            {line("position", &words.position(), &position_control, "each word")}
        </table>
    }
}
