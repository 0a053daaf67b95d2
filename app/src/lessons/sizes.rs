//! Lesson 9: model sizes and variants, tiny to large, DistilBERT, RoBERTa, XLM-RoBERTa, ALBERT,
//! ELECTRA-small, MPNet, DeBERTa-v3 and ModernBERT, with their parameter counts computed from their configurations (the
//! released models' `config.json` values), next to the loaded model's and what sets it apart.

use bertbench_core::BertConfig;
use bertbench_core::bert::config::Preset;
use bertbench_core::bert::family::Family;
use leptos::prelude::*;

use super::check::{Answer, Check, Expected};
use super::distillation::DistillationSection;
use super::{Maths, TryThis};
use crate::app::AppState;

pub const CHECKS: [&str; 2] = ["sizes-loaded", "sizes-large"];

/// BERT's uncased vocabulary; RoBERTa's byte-level BPE.
const BERT_VOCAB: usize = 30_522;
const ROBERTA_VOCAB: usize = 50_265;
/// XLM-RoBERTa's SentencePiece pieces; ALBERT's; MPNet's WordPiece with its specials.
const XLMR_VOCAB: usize = 250_002;
const ALBERT_VOCAB: usize = 30_000;
const MPNET_VOCAB: usize = 30_527;
/// DeBERTa-v3-base's `config.json` (its sizes and relative positions), read as any folder's is.
const DEBERTA_V3_BASE: &str = r#"{"model_type": "deberta-v2", "vocab_size": 128100, "hidden_size": 768, "intermediate_size": 3072,
    "num_hidden_layers": 12, "num_attention_heads": 12, "max_position_embeddings": 512, "type_vocab_size": 0, "layer_norm_eps": 1e-7,
    "relative_attention": true, "position_buckets": 256, "norm_rel_ebd": "layer_norm", "share_att_key": true, "pos_att_type": "p2c|c2p",
    "max_relative_positions": -1, "position_biased_input": false}"#;
/// ModernBERT-base's `config.json` (its sizes and layer pattern), read as any folder's is.
const MODERNBERT_BASE: &str = r#"{"model_type": "modernbert", "vocab_size": 50368, "hidden_size": 768, "intermediate_size": 1152,
    "num_hidden_layers": 22, "num_attention_heads": 12, "global_attn_every_n_layers": 3, "local_attention": 128}"#;

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
    rows.push(Row {
        name: "XLM-RoBERTa-base".into(),
        note: "RoBERTa trained on 100 languages: most of its parameters are its 250,002-piece vocabulary",
        config: Preset::Base.config(XLMR_VOCAB).with_max_position_embeddings(514).with_type_vocab_size(1).with_pad_token_id(1).with_model_type(Family::XlmRoberta),
        pooler: true,
    });
    rows.push(Row {
        name: "ALBERT-base".into(),
        note: "one layer's parameters shared by all 12 layers, and 128-wide embeddings projected up: as deep as BERT-base, a tenth of its size (the compute is BERT-base's)",
        config: Preset::Base.config(ALBERT_VOCAB).with_embedding_size(Some(128)).with_model_type(Family::Albert),
        pooler: true,
    });
    rows.push(Row {
        name: "ELECTRA-small".into(),
        note: "trained to spot replaced tokens; 128-wide embeddings projected up to 256",
        config: Preset::Base.config(BERT_VOCAB).with_hidden_size(256).with_num_attention_heads(4).with_intermediate_size(1024).with_embedding_size(Some(128)).with_model_type(Family::Electra),
        pooler: false,
    });
    rows.push(Row {
        name: "MPNet-base".into(),
        note: "BERT-base's size with a learned bias for word distances in attention; all-mpnet-base-v2 is this size",
        config: Preset::Base.config(MPNET_VOCAB).with_max_position_embeddings(514).with_type_vocab_size(0).with_pad_token_id(1).with_model_type(Family::MpNet),
        pooler: true,
    });
    rows.push(Row {
        name: "DeBERTa-v3-base".into(),
        note: "BERT-base's layers with disentangled attention (content and relative position apart) and a 128,100-piece vocabulary; trained like ELECTRA",
        config: BertConfig::from_json_bytes(DEBERTA_V3_BASE.as_bytes()).expect("DeBERTa-v3-base's configuration reads"),
        pooler: false,
    });
    rows.push(Row {
        name: "ModernBERT-base".into(),
        note: "22 narrower pre-norm layers without biases, rotary positions, a gated feed-forward block and local attention in two layers of three: inputs up to 8,192 tokens",
        config: BertConfig::from_json_bytes(MODERNBERT_BASE.as_bytes()).expect("ModernBERT-base's configuration reads"),
        pooler: false,
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
    let large_answer = Signal::derive(move || Some(Ok(large_to_base())));
    let row = |name: String, note: String, c: &BertConfig, params: u64, testid: &'static str| {
        let embeddings = (c.vocab_size + c.max_position_embeddings + c.type_vocab_size) as u64 * c.embedding_width() as u64;
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
            <p>"ALBERT and ELECTRA-small embed in a narrower width e and project up: (v + p + t)·e + 2e + (e·h + h). ALBERT counts one layer whatever L is."</p>
            <p>"The time of a forward pass grows with the layers' parameters times the tokens, plus attention's n²·h per layer for n tokens."</p>
        </Maths>
        <p class="small muted scroll-cue" aria-hidden="true">"The table is wider than the screen: scroll it sideways →"</p>
        <table class="plain small sizes" data-testid="lesson-sizes">
            <caption>"Sizes, from each configuration"</caption>
            <tr><th scope="col">"model"</th><th scope="col">"layers"</th><th scope="col">"hidden"</th><th scope="col">"heads"</th>
                <th scope="col">"vocabulary"</th><th scope="col">"parameters"</th><th scope="col">"in the embeddings"</th><th scope="col">""</th></tr>
            {rows().into_iter().map(|r| { let n = r.config.num_params(r.pooler); row(r.name, r.note.to_string(), &r.config, n, "lesson-size") }).collect_view()}
            {move || loaded.get().map(|(name, c, n, _)| {
                let apart = c.distinctions();
                let note = if apart.is_empty() { "the page's model, counted from its weights: BERT's own architecture".to_string() } else { format!("the page's model, counted from its weights: {}", apart.join("; ")) };
                row(format!("{name} (loaded, {})", c.model_type.display_name()), note, &c, n as u64, "lesson-size-loaded")
            })}
        </table>
        <TryThis>
            <ul>
                <li>"Which model spends the largest share of its parameters on the embedding table, and why?"</li>
                <li>"ALBERT-base and BERT-base both run 12 layers of width 768 on every token: which is smaller to store, and which is faster to run?"</li>
                <li>"Open a model of your own (“Your own model: pick a folder” in the model panel) and find it in the table."</li>
                <li>"Distil your own classifier (below): keep 2 layers, then 4; how much accuracy does each size give up, and how much faster is it?"</li>
            </ul>
        </TryThis>
        <Check id=CHECKS[0] question="How many million parameters does the loaded model have?".to_string() answer=loaded_answer />
        <Check id=CHECKS[1] question="How many times as many parameters as BERT-base does BERT-large have (to one decimal)?".to_string() answer=large_answer />
        <DistillationSection />
    }
}

/// BERT-large's parameters over BERT-base's, "to one decimal": 3.1 (or the ratio itself, 3.06)
/// is right, 3 and 3.0 are not.
fn large_to_base() -> Answer {
    let (base, large) = (Preset::Base.config(BERT_VOCAB).num_params(true), Preset::Large.config(BERT_VOCAB).num_params(true));
    let ratio = large as f64 / base as f64;
    Answer {
        expected: Expected::Number { value: ratio, tolerance: 0.05 },
        why: format!("{} / {} = {ratio:.2}: twice the layers, each a third wider.", millions(large), millions(base)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_asked_to_one_decimal() {
        let a = large_to_base();
        assert!(a.accepts("3.1") && a.accepts("3,1") && a.accepts("3.06"), "{}", a.why);
        assert!(!a.accepts("3") && !a.accepts("3.0") && !a.accepts("3.2"), "{}", a.why);
    }

    /// Each row counts what its paper or model card says it has (within 5%: those give two
    /// figures, 12M for ALBERT-base's 11.7M): the rows are computed from configurations, so a
    /// family counted wrong shows here.
    #[test]
    fn the_rows_count_the_released_models_parameters() {
        let published = [
            ("bert-base", 110e6),
            ("bert-large", 340e6),
            ("DistilBERT-base", 66e6),
            ("RoBERTa-base", 125e6),
            ("XLM-RoBERTa-base", 278e6),
            ("ALBERT-base", 12e6),
            ("ELECTRA-small", 14e6),
            ("DeBERTa-v3-base", 184e6),
            ("ModernBERT-base", 149e6),
        ];
        let rows = rows();
        for (name, count) in published {
            let row = rows.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no row {name}"));
            let n = row.config.num_params(row.pooler) as f64;
            assert!((n / count - 1.0).abs() < 0.05, "{name}: {n} parameters counted, {count} published");
        }
    }
}
