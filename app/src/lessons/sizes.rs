//! Lesson 9: model sizes and variants, tiny to large, DistilBERT and RoBERTa, with their
//! parameter counts computed from their configurations, next to the loaded model's.

use bertbench_core::BertConfig;
use bertbench_core::bert::config::Preset;
use bertbench_core::bert::family::Family;
use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use super::{Maths, TryThis};
use crate::app::AppState;

pub const CHECKS: [&str; 2] = ["sizes-loaded", "sizes-large"];

/// BERT's uncased vocabulary; RoBERTa's byte-level BPE.
const BERT_VOCAB: usize = 30_522;
const ROBERTA_VOCAB: usize = 50_265;

struct Row {
    name: String,
    note: &'static str,
    config: BertConfig,
    pooler: bool,
}

fn rows() -> Vec<Row> {
    let mut rows: Vec<Row> = Preset::ALL
        .iter()
        .map(|p| Row { name: p.name().to_string(), note: "Turc et al. 2019", config: p.config(BERT_VOCAB), pooler: true })
        .collect();
    rows[4].note = "the original BERT";
    rows[5].note = "the original BERT, large";
    rows.push(Row {
        name: "DistilBERT-base".into(),
        note: "half of BERT-base's layers, trained to imitate it; no segments, no pooler",
        config: Preset::Base.config(BERT_VOCAB).with_num_hidden_layers(6).with_type_vocab_size(0).with_model_type(Family::DistilBert),
        pooler: false,
    });
    rows.push(Row {
        name: "RoBERTa-base".into(),
        note: "BERT-base trained longer on more text, without next-sentence prediction; a larger vocabulary",
        config: Preset::Base.config(ROBERTA_VOCAB).with_max_position_embeddings(514).with_type_vocab_size(1).with_model_type(Family::Roberta),
        pooler: true,
    });
    rows
}

fn millions(n: u64) -> String {
    format!("{:.1} M", n as f64 / 1e6)
}

/// The lesson.
#[component]
pub fn SizesLesson() -> impl IntoView {
    let state = expect_context::<AppState>();
    let loaded = Signal::derive(move || {
        state.generation.get();
        state.engine().map(|e| (e.model_id.clone(), e.bert.config.clone(), e.bert.report.num_params, e.bert.report.with_pooler))
    });
    let loaded_answer = Signal::derive(move || {
        loaded.get().map(|(name, _, n, _)| {
            Ok(Answer {
                expected: Expected::Number { value: n as f64 / 1e6, tolerance: 0.5 },
                why: format!("{name} has {} parameters: {}.", millions(n as u64), n),
            })
        })
    });
    let large_answer = Signal::derive(move || {
        let (base, large) = (Preset::Base.config(BERT_VOCAB).num_params(true), Preset::Large.config(BERT_VOCAB).num_params(true));
        let ratio = large as f64 / base as f64;
        Some(Ok(Answer {
            expected: Expected::Number { value: ratio, tolerance: 0.15 },
            why: format!("{} / {} = {ratio:.2}: twice the layers, each a third wider.", millions(large), millions(base)),
        }))
    });
    let row = |name: String, note: String, c: &BertConfig, params: u64, testid: &'static str| {
        let embeddings = (c.vocab_size + c.max_position_embeddings + c.type_vocab_size) as u64 * c.hidden_size as u64;
        view! {
            <tr data-testid=testid>
                <th scope="row">{name}</th>
                <td>{c.num_hidden_layers}</td><td>{c.hidden_size}</td><td>{c.num_attention_heads}</td><td>{c.vocab_size}</td>
                <td data-params=params.to_string()>{millions(params)}</td>
                <td>{format!("{:.0}%", embeddings as f64 / params as f64 * 100.0)}</td>
                <td class="muted">{note}</td>
            </tr>
        }
    };
    view! {
        <p>"“BERT” names a recipe more than one model. The original came in two sizes, base (12 layers, 768 wide) and "
            "large (24 layers, 1024 wide); smaller ones followed for phones and classrooms, and variants changed the "
            "training (RoBERTa) or squeezed a big model into a small one (DistilBERT, MiniLM: "<em>"distillation"</em>")."</p>
        <p>"Where do the parameters live? In the embedding table (one row of hidden-size numbers per vocabulary entry) "
            "and in each layer: four attention matrices of hidden × hidden and a feed-forward block of two matrices, "
            "hidden × 4·hidden. Small models spend most of their parameters on the vocabulary; large ones on the layers."</p>
        <Maths>
            <p>"With hidden size h, feed-forward width i (4h), vocabulary v, p positions, t segment types and L layers:"</p>
            <p class="formula">"embeddings (v + p + t)·h + 2h; per layer 4(h² + h) + 2h + (h·i + i) + (i·h + h) + 2h; pooler h² + h"</p>
            <p>"The time of a forward pass grows with the layers' parameters times the tokens, plus attention's n²·h per layer for n tokens."</p>
        </Maths>
        <p class="small muted scroll-cue" aria-hidden="true">"The table is wider than the screen: scroll it sideways →"</p>
        <table class="plain small sizes" data-testid="lesson-sizes">
            <caption>"Sizes, from each configuration"</caption>
            <tr><th scope="col">"model"</th><th scope="col">"layers"</th><th scope="col">"hidden"</th><th scope="col">"heads"</th>
                <th scope="col">"vocabulary"</th><th scope="col">"parameters"</th><th scope="col">"in the embeddings"</th><th scope="col">""</th></tr>
            {rows().into_iter().map(|r| { let n = r.config.num_params(r.pooler); row(r.name, r.note.to_string(), &r.config, n, "lesson-size") }).collect_view()}
            {move || loaded.get().map(|(name, c, n, _)| row(format!("{name} (loaded)"), "the page's model, counted from its weights".into(), &c, n as u64, "lesson-size-loaded"))}
        </table>
        <TryThis>
            <ul>
                <li>"Which model spends the largest share of its parameters on the embedding table, and why?"</li>
                <li>"Open a model of your own (“Your own model: pick a folder” in the model panel) and find it in the table."</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question="How many million parameters does the loaded model have?".to_string() answer=loaded_answer />
        <Check id=CHECKS[1] question="How many times as many parameters as BERT-base does BERT-large have (to one decimal)?".to_string() answer=large_answer />
    }
}
