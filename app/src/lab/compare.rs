//! "Runs compared": every lab run that finished or was stopped is kept (in this browser, across
//! a reload: `saved.rs`) with its settings, its parameter count and its curves. The lab shows them as a
//! table of the settings that differ and the final numbers, overlays their curves on its charts,
//! and says in a sentence, computed from the numbers, what the comparison shows and what it
//! does not (MLM losses at different masking rates are not like for like).

use std::sync::Arc;

use bertbench_core::tasks::masking::PairTask;
use bertbench_core::train::PretrainStep;
use leptos::prelude::*;

use super::Lab;
use crate::runs::{LabSettings, LabVocab};
use crate::widgets::{Series, duration, human_count};

/// Runs of at most this many parameters keep their model in the page for "Fine-tune each"
/// (a lab model of the tiny presets is a few MB; a continued MiniLM is 90 MB).
pub const MAX_KEPT_PARAMS: usize = 12_000_000;

/// Steps the charts' curves and the final numbers average over.
pub const WINDOW: usize = 10;

/// A kept run's model files, as the worker wrote them.
pub type KeptFiles = Arc<Vec<(String, Vec<u8>)>>;

/// A head trained on a kept run's frozen encoder ("Fine-tune each", `downstream.rs`): its
/// held-out accuracy on `texts` texts.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Downstream {
    pub accuracy: f32,
    pub texts: usize,
}

/// A finished or stopped run of this tab, kept to compare.
#[derive(Debug, Clone)]
pub struct KeptRun {
    /// The run's number in this tab, as the lab model's name says it (`#2`).
    pub number: u32,
    /// Its settings when it started.
    pub settings: LabSettings,
    /// What it trained: the preset, or the model it continued.
    pub model: String,
    /// Layers deep.
    pub layers: usize,
    /// One layer's weights serve every layer (ALBERT).
    pub shared: bool,
    /// Parameters of the model it trained, heads included.
    pub params: usize,
    /// Every step it took.
    pub steps: Vec<PretrainStep>,
    /// Seconds it ran.
    pub seconds: f64,
    /// Stopped before its last step.
    pub cancelled: bool,
    /// Its model, where the page keeps it (see [`MAX_KEPT_PARAMS`]).
    pub files: Option<KeptFiles>,
    /// A head trained on its frozen encoder, once "Fine-tune each" has run.
    pub downstream: Option<Downstream>,
    /// The id of its saved lab model in this browser, where its weights are after a reload.
    pub saved_as: Option<String>,
}

impl KeptRun {
    /// `#2`.
    pub fn name(&self) -> String {
        format!("#{}", self.number)
    }

    /// Whether "Fine-tune each" can train on its encoder: its model is in the page, or it is a
    /// small one from scratch saved in this browser.
    pub fn fine_tunable(&self) -> bool {
        self.files.is_some() || (self.saved_as.is_some() && !self.settings.continue_pretrained && self.params <= MAX_KEPT_PARAMS)
    }

    /// Steps done.
    pub fn done(&self) -> usize {
        self.steps.last().map_or(0, |s| s.step)
    }

    /// Its settings as `(name, value)` pairs, the ones a comparison may differ in.
    pub fn facets(&self) -> Vec<(&'static str, String)> {
        let s = &self.settings;
        let m = &s.config.masking;
        let pct = |p: f64| format!("{:.0}%", p * 100.0);
        let vocabulary = match (s.continue_pretrained, s.vocab) {
            (true, _) | (false, LabVocab::Pretrained) => "the loaded model's".to_string(),
            (false, LabVocab::Train(n)) => format!("trained, {n} asked"),
        };
        let objective = match s.config.pair_task {
            None if s.config.electra() => "replaced tokens (ELECTRA)",
            None => "MLM",
            Some(PairTask::Nsp) => "MLM + NSP",
            Some(PairTask::Sop) => "MLM + SOP",
        };
        let layers = if self.shared { format!("{}, one shared (ALBERT)", self.layers) } else { format!("{}, each its own", self.layers) };
        vec![
            ("model", self.model.clone()),
            ("layers", layers),
            ("vocabulary", vocabulary),
            ("corpus", s.corpus_name.clone()),
            ("objective", objective.to_string()),
            ("masked", pct(m.pick_prob)),
            ("of which", format!("{} [MASK], {} random, {} kept", pct(m.mask_prob), pct(m.random_prob), pct((1.0 - m.mask_prob - m.random_prob).max(0.0)))),
            ("masking", if s.config.dynamic_masking { "new each epoch" } else { "fixed" }.to_string()),
            ("epochs", s.config.epochs.to_string()),
            ("learning rate", s.config.learning_rate.to_string()),
            ("trained on", s.backend.label().to_string()),
        ]
    }

    /// Its numbers at step `step` (at most its last): the MLM loss and accuracy averaged over
    /// the [`WINDOW`] steps up to it, as the charts draw them, and the tokens it predicted per
    /// step up to it. `differ`: the settings the runs compared differ in.
    pub fn at_step(&self, step: usize, differ: &[&str]) -> AtStep {
        let upto: Vec<&PretrainStep> = self.steps.iter().filter(|s| s.step <= step).collect();
        let recent = &upto[upto.len().saturating_sub(WINDOW)..];
        let mean = |f: &dyn Fn(&PretrainStep) -> f64, of: &[&PretrainStep]| of.iter().map(|s| f(s)).sum::<f64>() / of.len().max(1) as f64;
        let but = |left_out: &str| self.facets().into_iter().filter(|(n, _)| *n != left_out).map(|(_, v)| v).collect::<Vec<_>>().join("|");
        AtStep {
            number: self.number,
            // The one setting that differs names the runs well; several make a long name.
            name: if differ.len() == 1 { self.label(differ) } else { self.name() },
            rate: self.settings.config.masking.pick_prob,
            layers: self.layers,
            shared: self.shared,
            params: self.params,
            picked: mean(&|s| s.picked as f64, &upto),
            tokens: mean(&|s| s.tokens as f64, &upto),
            electra: self.settings.config.electra(),
            seconds_per_step: self.seconds / self.done().max(1) as f64,
            loss: mean(&|s| s.mlm_loss as f64, recent),
            accuracy: mean(&|s| s.mlm_accuracy as f64, recent),
            but_rate: but("masked"),
            but_layers: but("layers"),
        }
    }

    /// `#2 (masked 40%)`: its name and its values of the settings `differ`.
    pub fn label(&self, differ: &[&str]) -> String {
        let values = self.differing(differ);
        if values.is_empty() { self.name() } else { format!("{} ({values})", self.name()) }
    }

    /// `masked 40% · layers 2, one shared (ALBERT)`: its values of the settings `differ`.
    pub fn differing(&self, differ: &[&str]) -> String {
        self.facets().into_iter().filter(|(n, _)| differ.contains(n)).map(|(n, v)| format!("{n} {v}")).collect::<Vec<_>>().join(" · ")
    }
}

/// The settings in which `runs` are not all the same, in [`KeptRun::facets`]' order.
pub fn differing(runs: &[KeptRun]) -> Vec<&'static str> {
    let all: Vec<Vec<(&'static str, String)>> = runs.iter().map(KeptRun::facets).collect();
    let Some(first) = all.first() else { return Vec::new() };
    first.iter().enumerate().filter(|(i, (_, v))| all.iter().any(|f| &f[*i].1 != v)).map(|(_, (n, _))| *n).collect()
}

/// What the comparison sentence reads of one run, at the step every run reached.
#[derive(Debug, Clone, PartialEq)]
pub struct AtStep {
    /// The run's number (`#2`).
    pub number: u32,
    /// How the sentence's opening names it (`#2 (masked 40%)`).
    pub name: String,
    /// Share of tokens picked for prediction.
    pub rate: f64,
    /// Layers deep.
    pub layers: usize,
    /// One layer's weights serve every layer.
    pub shared: bool,
    /// Parameters, heads included.
    pub params: usize,
    /// Tokens predicted per step, on average.
    pub picked: f64,
    /// Real tokens per step, on average.
    pub tokens: f64,
    /// Trained ELECTRA's replaced-token detection (its MLM numbers are its generator's).
    pub electra: bool,
    /// Seconds per step on this machine, over the whole run.
    pub seconds_per_step: f64,
    /// MLM loss, mean of the last [`WINDOW`] steps.
    pub loss: f64,
    /// Share of the predicted tokens guessed right, mean of the last [`WINDOW`] steps.
    pub accuracy: f64,
    /// Its other settings than the masking rate: two runs alike here differ in the rate alone.
    pub but_rate: String,
    /// Its other settings than the layers: two runs alike here differ in the sharing alone.
    pub but_layers: String,
}

impl AtStep {
    /// `#2`.
    fn short(&self) -> String {
        format!("#{}", self.number)
    }

    /// Tokens a step's loss learned from: every real token for ELECTRA's discriminator, the
    /// picked ones for MLM.
    pub fn learned_from(&self) -> f64 {
        if self.electra { self.tokens } else { self.picked }
    }
}

/// A loss as the table and the sentence write it.
pub fn loss_text(loss: f64) -> String {
    format!("{loss:.3}")
}

/// An accuracy as the table and the sentence write it.
pub fn accuracy_text(accuracy: f64) -> String {
    format!("{:.1}%", accuracy * 100.0)
}

/// Two of `runs`, `(a, b)` with `lower(a, b)`, to compare in one setting: of the pairs alike in
/// every other setting (`alike`), the one `gap` finds widest, with `true`; else the lowest and
/// the highest of all by `key`, with `false` (they differ in more than that setting).
fn pair<'a>(runs: &'a [AtStep], key: fn(&AtStep) -> f64, alike: fn(&AtStep, &AtStep) -> bool) -> Option<(&'a AtStep, &'a AtStep, bool)> {
    let clean = runs
        .iter()
        .flat_map(|a| runs.iter().map(move |b| (a, b)))
        .filter(|(a, b)| key(b) - key(a) > 1e-9 && alike(a, b))
        .fold(None::<(&AtStep, &AtStep)>, |best, (a, b)| match best {
            Some((x, y)) if key(y) / key(x).max(1e-12) >= key(b) / key(a).max(1e-12) => best,
            _ => Some((a, b)),
        });
    if let Some((a, b)) = clean {
        return Some((a, b, true));
    }
    let lo = runs.iter().min_by(|a, b| key(a).total_cmp(&key(b)))?;
    let hi = runs.iter().max_by(|a, b| key(a).total_cmp(&key(b)))?;
    (key(hi) - key(lo) > 1e-9).then_some((lo, hi, false))
}

/// What `runs`' numbers at step `step` show, in a few sentences; `None` for fewer than two runs.
/// `differ` names the settings the runs differ in. It names the lowest MLM loss and the highest
/// masked-token accuracy. Where masking rates differ, it takes two runs that differ in the rate
/// alone if there are such: their losses are not like for like; their predictions per step; and
/// the cost of too little or too much masking only where their accuracies show it. Where the
/// parameter counts differ, two runs that differ in the sharing of layers alone if there are
/// such: by how much, and with what loss and accuracy.
pub fn sentence(step: usize, runs: &[AtStep], differ: &[&str]) -> Option<String> {
    if runs.len() < 2 {
        return None;
    }
    let lowest_loss = runs.iter().min_by(|a, b| a.loss.total_cmp(&b.loss))?;
    let best = runs.iter().max_by(|a, b| a.accuracy.total_cmp(&b.accuracy))?;
    let mut out = if lowest_loss.number == best.number {
        format!(
            "At step {step}, {} had both the lowest MLM loss ({}) and the highest masked-token accuracy ({}).",
            best.name,
            loss_text(best.loss),
            accuracy_text(best.accuracy)
        )
    } else {
        format!(
            "At step {step}, {} had the lowest MLM loss ({}), but {} the highest masked-token accuracy ({}).",
            lowest_loss.name,
            loss_text(lowest_loss.loss),
            best.name,
            accuracy_text(best.accuracy)
        )
    };
    let mut all_clean = true;
    if let Some((lo, hi, clean)) = pair(runs, |r| r.rate, |a, b| a.but_rate == b.but_rate) {
        all_clean &= clean;
        let pct = |r: &AtStep| format!("{:.0}%", r.rate * 100.0);
        let (a, b) = (accuracy_text(lo.accuracy), accuracy_text(hi.accuracy));
        out += &format!(
            " {} and {} differ in the masking rate{} ({} and {}): their losses are not like for like, as at {} more tokens are hidden and each \
             guess has less context, so read them with the accuracy. {} predicted {:.0} tokens per step, {} {:.0}",
            lo.short(),
            hi.short(),
            if clean { " alone" } else { " and in other settings" },
            pct(lo),
            pct(hi),
            pct(hi),
            lo.short(),
            lo.picked,
            hi.short(),
            hi.picked
        );
        out += &if lo.accuracy < hi.accuracy && lo.picked < hi.picked {
            format!(": fewer predictions to learn from and a lower accuracy by this step ({a} against {b}), which fits the point that too little masking is expensive.")
        } else if hi.accuracy < lo.accuracy {
            format!(
                "; {} guessed fewer of them right ({b} against {a}), which fits the other end of that point: with {} hidden, less context is left to \
                 predict from (and these runs do not show a cost of too little masking).",
                hi.short(),
                pct(hi)
            )
        } else {
            ".".to_string()
        };
    }
    if let Some((small, big, clean)) = pair(runs, |r| r.params as f64, |a, b| a.but_layers == b.but_layers) {
        all_clean &= clean;
        let ratio = big.params as f64 / small.params.max(1) as f64;
        let how = if clean && small.layers == big.layers && small.shared && !big.shared {
            format!("shares one layer across its {} layers: {ratio:.1}× fewer parameters than {} at the same depth", small.layers, big.short())
        } else {
            format!("has {ratio:.1}× fewer parameters than {}", big.short())
        };
        out += &format!(
            " {} {how} ({} against {}), for an MLM loss of {} against {} and an accuracy of {} against {}.",
            small.short(),
            human_count(small.params),
            human_count(big.params),
            loss_text(small.loss),
            loss_text(big.loss),
            accuracy_text(small.accuracy),
            accuracy_text(big.accuracy)
        );
    }
    out += &electra_sentence(runs).unwrap_or_default();
    match differ.len() {
        0 => out += " The runs have the same settings.",
        1 => {}
        n if all_clean => out += &format!(" The runs differ in {n} settings ({}); each comparison above is between two runs that differ in one of them alone.", differ.join(", ")),
        _ => out += &format!(" The runs differ in more than one setting ({}), so no one of them alone explains the difference.", differ.join(", ")),
    }
    Some(out)
}

/// The question lesson 5 asks of an ELECTRA run beside an MLM one: how many times more tokens
/// per step its discriminator learned from than the MLM run predicted (each over its whole run),
/// with the numbers it comes from; `None` until the lab has kept one of each.
pub fn electra_learned_from(runs: &[KeptRun]) -> Option<(f64, String)> {
    let e = runs.iter().find(|r| r.settings.config.electra() && r.done() > 0)?.at_step(usize::MAX, &[]);
    let m = runs.iter().find(|r| !r.settings.config.electra() && r.done() > 0)?.at_step(usize::MAX, &[]);
    let ratio = e.tokens / m.picked.max(1e-9);
    Some((
        ratio,
        format!(
            "{}'s discriminator learned from every token, {:.0} per step; {} predicted the {:.0} it picked per step: {ratio:.1}×.",
            e.short(),
            e.tokens,
            m.short(),
            m.picked
        ),
    ))
}

/// Where an ELECTRA run is compared with an MLM one: what its MLM numbers are, how many tokens
/// each learned from per step, and what the same compute would take (from their times here).
fn electra_sentence(runs: &[AtStep]) -> Option<String> {
    let e = runs.iter().find(|r| r.electra)?;
    let m = runs.iter().find(|r| !r.electra)?;
    let ratio = e.seconds_per_step / m.seconds_per_step.max(1e-9);
    Some(format!(
        " {e_} trained ELECTRA's replaced-token detection: its MLM loss and accuracy are its generator's, a model a quarter as wide, so they do not \
         measure its discriminator (“Fine-tune each” compares the encoders). Its discriminator learned from all {:.0} tokens per step, {:.1}× the {:.0} \
         tokens {m_} predicted. A step of {e_} took {ratio:.1}× the time of one of {m_} here, so at the same compute {m_} would train {ratio:.1}× the steps.",
        e.tokens,
        e.tokens / m.picked.max(1e-9),
        m.picked,
        e_ = e.short(),
        m_ = m.short(),
    ))
}

/// The mean of `f` over the [`WINDOW`] steps up to each step, at each step: the charts' curves.
pub fn smooth(steps: &[PretrainStep], f: &dyn Fn(&PretrainStep) -> Option<f32>) -> Vec<(f64, f64)> {
    steps
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let lo = i.saturating_sub(WINDOW - 1);
            let vals: Vec<f32> = steps[lo..=i].iter().filter_map(f).collect();
            (!vals.is_empty()).then(|| (s.step as f64, vals.iter().sum::<f32>() as f64 / vals.len() as f64))
        })
        .collect()
}

/// Colours of the kept runs' curves, none of them the current run's (blue, orange, green).
const COLOURS: [&str; 6] = ["#e15759", "#76b7b2", "#b07aa1", "#9c755f", "#edc948", "#ff9da7"];

/// The kept runs' curves of `what` (`"MLM loss"`, `f` its value per step) to draw over the
/// current run's, but for run `current`'s own (drawn as the current run).
pub fn overlay(runs: &[KeptRun], current: u32, what: &str, f: &dyn Fn(&PretrainStep) -> Option<f32>) -> Vec<Series> {
    let differ = differing(runs);
    runs.iter()
        .filter(|r| r.number != current)
        .map(|r| Series {
            name: format!("{} {what}", r.label(&differ)),
            color: COLOURS[(r.number as usize) % COLOURS.len()],
            points: smooth(&r.steps, f),
            dots: false,
        })
        .collect()
}

/// The table of kept runs, the sentences, "Fine-tune each" and "Clear".
///
/// `fine_tune_each`: the "Fine-tune each" part (`downstream.rs`), drawn under the sentence.
#[component]
pub fn RunsCompared(fine_tune_each: ViewFn) -> impl IntoView {
    let lab = expect_context::<Lab>();
    move || {
        let runs = lab.compared.get();
        if runs.is_empty() {
            return None;
        }
        let differ = differing(&runs);
        let step = runs.iter().map(KeptRun::done).min().unwrap_or(0);
        let at: Vec<AtStep> = runs.iter().map(|r| r.at_step(step, &differ)).collect();
        let said = sentence(step, &at, &differ).unwrap_or_else(|| "Change a setting (the masking rate, say) and train again: each finished or stopped run is added here.".into());
        let rows = runs
            .iter()
            .map(|r| {
                let end = r.at_step(r.done(), &differ);
                let settings = match r.differing(&differ) {
                    s if !s.is_empty() => s,
                    _ if runs.len() == 1 => "the first run".to_string(),
                    _ => "the same settings".to_string(),
                };
                let steps = if r.cancelled { format!("{} (stopped)", r.done()) } else { r.done().to_string() };
                view! {
                    <tr data-testid="lab-compare-row" data-run=r.number.to_string() data-params=r.params.to_string() data-loss=loss_text(end.loss) data-accuracy=accuracy_text(end.accuracy)>
                        <th scope="row">{r.name()}</th>
                        <td>{settings}</td>
                        <td>{human_count(r.params)}</td>
                        <td>{steps}</td>
                        <td>{duration(r.seconds)}</td>
                        <td>{format!("{:.0}", end.picked)}</td>
                        <td data-learned=format!("{:.0}", end.learned_from())>{format!("{:.0}", end.learned_from())}</td>
                        <td>{loss_text(end.loss)}</td>
                        <td>{accuracy_text(end.accuracy)}</td>
                        <td data-downstream=r.downstream.map(|d| d.accuracy.to_string())>{match r.downstream {
                            Some(d) => accuracy_text(d.accuracy as f64),
                            None if r.fine_tunable() => "—".to_string(),
                            None => "not kept".to_string(),
                        }}</td>
                    </tr>
                }
            })
            .collect_view();
        Some(view! {
            <section data-testid="lab-compare" aria-labelledby="lab-compare-title">
                <h3 id="lab-compare-title">"Runs compared"</h3>
                <table class="plain small">
                    <caption class="small muted">{format!("The runs of this lab, kept in this browser until cleared; loss and accuracy are the means of the last {WINDOW} steps.")}</caption>
                    <tr>
                        <th scope="col">"run"</th>
                        <th scope="col">"settings that differ"</th>
                        <th scope="col">"parameters"</th>
                        <th scope="col">"steps"</th>
                        <th scope="col">"time"</th>
                        <th scope="col">"predicted per step"</th>
                        <th scope="col" title="MLM: the picked tokens; ELECTRA's discriminator: every real token">"tokens learned from per step"</th>
                        <th scope="col">"MLM loss"</th>
                        <th scope="col">"accuracy"</th>
                        <th scope="col">"fine-tuned: sentiment"</th>
                    </tr>
                    {rows}
                </table>
                <p class="small" data-testid="lab-compare-sentence">{said}</p>
                {fine_tune_each.run()}
                <button class="secondary small" data-testid="lab-compare-clear" prop:disabled=move || lab.downstream_busy.get() on:click=move |_| lab.compared.set(Vec::new())>"Clear the comparison"</button>
            </section>
        })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn run(number: u32, rate: f64, params: usize, picked: f64, loss: f64, accuracy: f64) -> AtStep {
        AtStep {
            number,
            name: format!("#{number} (masked {:.0}%)", rate * 100.0),
            rate,
            layers: 2,
            shared: false,
            params,
            picked,
            tokens: picked / rate,
            electra: false,
            seconds_per_step: 0.5,
            loss,
            accuracy,
            but_rate: "bert-tiny".into(),
            but_layers: format!("bert-tiny {rate}"),
        }
    }

    #[test]
    fn one_run_has_nothing_to_compare_with() {
        assert_eq!(sentence(100, &[run(1, 0.15, 1000, 40.0, 3.0, 0.4)], &[]), None);
    }

    /// The sentence follows the numbers it is given: which run is named for the lowest loss and
    /// for the highest accuracy, and which cost of masking it names, if any.
    #[test]
    fn the_sentence_follows_the_numbers() {
        let differ = ["masked"];
        // 5% and 40%: the 40% run has the higher loss (harder guesses) but the higher accuracy.
        let a = [run(1, 0.05, 1000, 30.0, 2.5, 0.30), run(2, 0.4, 1000, 180.0, 3.1, 0.42)];
        let said = sentence(120, &a, &differ).unwrap();
        assert!(said.starts_with("At step 120, #1 (masked 5%) had the lowest MLM loss (2.500), but #2 (masked 40%) the highest masked-token accuracy (42.0%)."), "{said}");
        assert!(said.contains(" #1 and #2 differ in the masking rate alone (5% and 40%): their losses are not like for like, as at 40% more tokens are hidden"), "{said}");
        assert!(
            said.contains("#1 predicted 30 tokens per step, #2 180: fewer predictions to learn from and a lower accuracy by this step (30.0% against 42.0%), which fits the point that too little masking is expensive."),
            "{said}"
        );
        assert!(!said.contains("less context is left"), "{said}");

        // Other numbers: now the low rate has both the lower loss and the higher accuracy.
        let b = [run(1, 0.05, 1000, 30.0, 2.5, 0.50), run(2, 0.4, 1000, 180.0, 3.1, 0.35)];
        let said_b = sentence(120, &b, &differ).unwrap();
        assert_ne!(said, said_b);
        assert!(said_b.starts_with("At step 120, #1 (masked 5%) had both the lowest MLM loss (2.500) and the highest masked-token accuracy (50.0%)."), "{said_b}");
        assert!(said_b.contains("#2 guessed fewer of them right (35.0% against 50.0%), which fits the other end of that point: with 40% hidden, less context is left"), "{said_b}");
        assert!(!said_b.contains("too little masking is expensive"), "{said_b}");

        // The same rates: nothing about masking, and the loss decides the lead.
        let c = [run(1, 0.15, 1000, 60.0, 2.9, 0.40), run(2, 0.15, 1000, 60.0, 2.7, 0.41)];
        let said_c = sentence(80, &c, &["learning rate"]).unwrap();
        assert!(said_c.starts_with("At step 80, #2 (masked 15%) had both the lowest MLM loss (2.700)"), "{said_c}");
        assert!(!said_c.contains("masking") && !said_c.contains("setting"), "{said_c}");

        // Rates that differ along with another setting are compared as such.
        let d = [run(1, 0.05, 1000, 30.0, 2.5, 0.30), AtStep { but_rate: "bert-mini".into(), ..run(2, 0.4, 1000, 180.0, 3.1, 0.42) }];
        let said_d = sentence(120, &d, &["model", "masked"]).unwrap();
        assert!(said_d.contains("#1 and #2 differ in the masking rate and in other settings (5% and 40%)"), "{said_d}");
        assert!(said_d.ends_with("The runs differ in more than one setting (model, masked), so no one of them alone explains the difference."), "{said_d}");
    }

    #[test]
    fn a_shared_layer_is_compared_by_its_parameters_at_the_same_depth() {
        let own = AtStep { layers: 4, but_layers: "same".into(), ..run(1, 0.15, 4_500_000, 60.0, 3.2, 0.35) };
        let shared = AtStep { number: 2, name: "#2".into(), shared: true, params: 1_500_000, loss: 3.5, accuracy: 0.31, ..own.clone() };
        let said = sentence(50, &[own.clone(), shared.clone()], &["layers"]).unwrap();
        assert!(
            said.contains(" #2 shares one layer across its 4 layers: 3.0× fewer parameters than #1 at the same depth (1.5 M against 4.5 M), for an MLM loss of 3.500 against 3.200 and an accuracy of 31.0% against 35.0%."),
            "{said}"
        );
        // A smaller model of another size is not "the same depth".
        let smaller = AtStep { layers: 2, shared: false, but_layers: "bert-tiny".into(), ..shared };
        let said = sentence(50, &[own, smaller], &["model", "layers"]).unwrap();
        assert!(said.contains(" #2 has 3.0× fewer parameters than #1 (1.5 M against 4.5 M)"), "{said}");
        assert!(said.contains("differ in more than one setting (model, layers)"), "{said}");
    }

    /// An ELECTRA run beside an MLM one: its MLM numbers are named the generator's, and the
    /// tokens each learned from and the compute ratio follow the numbers given.
    #[test]
    fn an_electra_run_is_compared_by_what_it_learned_from_and_its_time() {
        let mlm = run(1, 0.15, 1000, 60.0, 3.0, 0.40);
        let electra = AtStep { number: 2, name: "#2".into(), electra: true, tokens: 400.0, seconds_per_step: 0.65, ..run(2, 0.15, 1200, 60.0, 3.4, 0.30) };
        let said = sentence(100, &[mlm.clone(), electra.clone()], &["objective"]).unwrap();
        assert!(said.contains(" #2 trained ELECTRA's replaced-token detection: its MLM loss and accuracy are its generator's"), "{said}");
        assert!(said.contains("all 400 tokens per step, 6.7× the 60 tokens #1 predicted. A step of #2 took 1.3× the time of one of #1 here, so at the same compute #1 would train 1.3× the steps."), "{said}");
        let other = AtStep { tokens: 120.0, seconds_per_step: 1.0, ..electra };
        let said_other = sentence(100, &[mlm.clone(), other], &["objective"]).unwrap();
        assert!(said_other.contains("all 120 tokens per step, 2.0× the 60 tokens #1 predicted. A step of #2 took 2.0× the time"), "{said_other}");
        assert!(!sentence(100, &[mlm.clone(), run(3, 0.15, 1000, 60.0, 2.0, 0.5)], &["learning rate"]).unwrap().contains("ELECTRA"));
    }

    /// With three runs, each comparison takes the two that differ in its setting alone.
    #[test]
    fn each_comparison_takes_the_runs_that_differ_in_its_setting_alone() {
        let low = AtStep { but_layers: "5%".into(), ..run(1, 0.05, 4000, 40.0, 2.0, 0.80) };
        let high = AtStep { but_layers: "40%".into(), ..run(2, 0.4, 4000, 190.0, 1.9, 0.88) };
        let shared = AtStep { shared: true, but_rate: "shared".into(), ..AtStep { number: 3, params: 2500, loss: 1.8, accuracy: 0.87, ..high.clone() } };
        let said = sentence(24, &[low, high, shared], &["layers", "masked"]).unwrap();
        assert!(said.contains(" #1 and #2 differ in the masking rate alone (5% and 40%)"), "{said}");
        assert!(said.contains(" #3 shares one layer across its 2 layers: 1.6× fewer parameters than #2 at the same depth"), "{said}");
        assert!(said.ends_with(" The runs differ in 2 settings (layers, masked); each comparison above is between two runs that differ in one of them alone."), "{said}");
    }

    fn step(step: usize, loss: f32, accuracy: f32, picked: usize) -> PretrainStep {
        PretrainStep { step, total_steps: 30, epoch: 0.0, mlm_loss: loss, mlm_accuracy: accuracy, pair_loss: None, lr: 1e-3, tokens: 100, picked, rtd_loss: None, rtd_accuracy: None, replaced: 0 }
    }

    pub(in crate::lab) fn kept(number: u32, rate: f64, steps: usize) -> KeptRun {
        let mut config = bertbench_core::train::PretrainConfig::new();
        config.masking.pick_prob = rate;
        let settings = LabSettings {
            corpus_name: "farm.txt".into(),
            vocab: LabVocab::Train(1000),
            preset: "bert-tiny".into(),
            continue_pretrained: false,
            share_layers: false,
            config,
            probes: String::new(),
            probe_every: 10,
            backend: crate::runs::Backend::Cpu,
        };
        let steps = (1..=steps).map(|s| step(s, 5.0 - s as f32 * 0.1, s as f32 / 100.0, (rate * 100.0) as usize)).collect();
        KeptRun { number, settings, model: "bert-tiny".into(), layers: 2, shared: false, params: 1000, steps, seconds: 3.0, cancelled: false, files: None, downstream: None, saved_as: None }
    }

    /// The numbers come from the steps: the last 10 up to the step both runs reached, and only
    /// the settings that differ name the runs.
    #[test]
    fn kept_runs_are_read_at_the_step_both_reached() {
        let runs = [kept(1, 0.15, 30), kept(2, 0.4, 20)];
        let differ = differing(&runs);
        assert_eq!(differ, ["masked"]);
        let at = runs[0].at_step(20, &differ);
        assert_eq!(at.name, "#1 (masked 15%)");
        // Alike but for the rate; not alike but for the layers.
        let other = runs[1].at_step(20, &differ);
        assert!(at.but_rate == other.but_rate && at.but_layers != other.but_layers);
        // Steps 11..=20: losses 3.9 … 3.0, accuracies 0.11 … 0.20.
        assert!((at.loss - 3.45).abs() < 1e-5 && (at.accuracy - 0.155).abs() < 1e-6, "{at:?}");
        assert_eq!(at.picked, 15.0);
        assert_eq!(runs[1].at_step(runs[1].done(), &differ).loss, runs[1].at_step(20, &differ).loss);
        assert_eq!(differing(&runs[..1]), Vec::<&str>::new());
        // Curves: one per kept run but the current one, named by what differs.
        let drawn = overlay(&runs, 2, "MLM loss", &|s| Some(s.mlm_loss));
        assert_eq!(drawn.len(), 1);
        assert_eq!(drawn[0].name, "#1 (masked 15%) MLM loss");
        assert_eq!(drawn[0].points.len(), 30);
    }
}
