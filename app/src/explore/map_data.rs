//! The embedding map's data: where its texts come from, what becomes a point, the vectors of
//! every point at every layer with the curves across layers (`compute_map`), its colour groups
//! and a point's nearest neighbours. The panel is `map.rs`.

use bertbench_core::analysis::inspect::{TextStates, find_word};
use bertbench_core::analysis::probe::{mean_random_cosine, nearest_centroid_accuracy, standardize};
use bertbench_core::analysis::projection::Method;
use bertbench_core::analysis::similarity::cosine;
use std::collections::HashMap;

use super::{OTHER, PALETTE};
use crate::compute::{computed_on, each_states, encode_all};
use crate::engine::Engine;
use crate::fetch::yield_to_browser;
use crate::widgets::now_ms;

/// Most texts a map embeds.
pub(super) const MAX_TEXTS: usize = 300;
/// Most points a map draws (token maps grow fast).
pub(super) const MAX_POINTS: usize = 1500;

/// Where the texts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// Lines typed in the box (`[label] text`).
    Typed,
    /// A word-sense preset (index into [`SENSES`]).
    Sense(usize),
    /// The studio's dataset, or the built-in sentiment examples.
    Dataset,
    /// Nine sentences, each in English, French, German and Spanish, coloured by meaning (see
    /// [`translations`](bertbench_core::analysis::translations)).
    Translations,
}

/// What one point stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Every (non-special) token.
    Tokens,
    /// The focus word in each text (the mean of its pieces).
    Word,
    /// The `[CLS]` vector of each text.
    Cls,
    /// The mean of each text's token vectors.
    Mean,
}

impl Kind {
    pub(super) fn from_value(v: &str) -> Self {
        match v {
            "tokens" => Kind::Tokens,
            "word" => Kind::Word,
            "cls" => Kind::Cls,
            _ => Kind::Mean,
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Point {
    /// Index into [`Embedded::texts`].
    pub(super) text: usize,
    /// The characters of the text this point's token covers, for token and word points.
    pub(super) chars: Option<(usize, usize)>,
    /// The token (or word) itself, for token and word points.
    pub(super) word: Option<String>,
}

/// The vectors of one embedding run, every layer.
#[derive(Debug)]
pub(super) struct Embedded {
    pub(super) texts: Vec<String>,
    pub(super) labels: Vec<Option<String>>,
    pub(super) points: Vec<Point>,
    /// `[layer][point]` vectors.
    pub(super) layers: Vec<Vec<Vec<f32>>>,
    pub(super) kind: Kind,
    pub(super) model: String,
    pub(super) millis: f64,
    /// Where its vectors were computed ("CPU, 2 threads, in the training worker").
    pub(super) computed_on: String,
    /// Texts dropped because the focus word is not in them.
    pub(super) missing_word: usize,
    /// Points not drawn because of [`MAX_POINTS`].
    pub(super) over_cap: usize,
    /// Per layer: mean cosine of random pairs, raw and after z-scoring.
    pub(super) anisotropy: Vec<(f32, f32)>,
    /// Per layer: leave-one-out nearest-centroid accuracy by label, when there are labels.
    pub(super) centroid: Option<Vec<f32>>,
}

impl Embedded {
    /// A layer's vectors, z-scored (per dimension, over these points) if asked.
    pub(super) fn vectors(&self, layer: usize, z: bool) -> Vec<Vec<f32>> {
        let v = &self.layers[layer.min(self.layers.len() - 1)];
        if z { standardize(v) } else { v.clone() }
    }

    pub(super) fn label_of(&self, p: &Point) -> Option<&str> {
        self.labels[p.text].as_deref()
    }
}

/// A drawn map.
#[derive(Debug, Clone)]
pub(super) struct Drawn {
    pub(super) points: Vec<[f32; 2]>,
    pub(super) explained: Option<[f32; 2]>,
    pub(super) perplexity: Option<f32>,
    pub(super) method: Method,
    pub(super) layer: usize,
    pub(super) z: bool,
    pub(super) millis: f64,
}

/// Colour groups: the label when colouring by label, else the word; the most common groups get
/// the palette, the rest grey.
pub(super) fn groups(e: &Embedded, by_label: bool) -> (Vec<usize>, Vec<(String, &'static str)>) {
    let key = |p: &Point| -> String {
        if by_label {
            e.label_of(p).unwrap_or("(no label)").to_string()
        } else {
            p.word.clone().unwrap_or_else(|| format!("text {}", p.text + 1))
        }
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for p in &e.points {
        *counts.entry(key(p)).or_default() += 1;
    }
    let mut order: Vec<(String, usize)> = counts.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let index: HashMap<&str, usize> = order.iter().enumerate().map(|(i, (k, _))| (k.as_str(), i)).collect();
    let of_point = e.points.iter().map(|p| index[key(p).as_str()]).collect();
    let legend = order
        .iter()
        .enumerate()
        .map(|(i, (k, n))| (format!("{k} ({n})"), PALETTE.get(i).copied().unwrap_or(OTHER)))
        .collect();
    (of_point, legend)
}

/// The `k` nearest points to `i` by cosine, at the drawn layer.
pub(super) fn neighbours(vectors: &[Vec<f32>], i: usize, k: usize) -> Vec<(usize, f32)> {
    let mut all: Vec<(usize, f32)> = (0..vectors.len()).filter(|&j| j != i).map(|j| (j, cosine(&vectors[i], &vectors[j]))).collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.truncate(k);
    all
}

/// Embedding map with its controls and the layer curves.

/// The vectors a map draws: for each text (`labels` beside it, where it has one), the points
/// `kind` picks, at every layer, with anisotropy and sense accuracy by layer. `progress(done,
/// total)` after each batch; `cancelled()` is checked before each.
pub(super) async fn compute_map(
    engine: &Engine,
    texts: Vec<String>,
    labels: Vec<Option<String>>,
    kind_now: Kind,
    word: &str,
    progress: impl Fn(usize, usize),
    cancelled: impl Fn() -> bool,
) -> Result<Embedded, String> {
    let start = now_ms();
    let encoded = encode_all(engine, &texts)?;
    // Which tokens of each text become points.
    let picks: Vec<Vec<(std::ops::Range<usize>, Option<(usize, usize)>, Option<String>)>> = encoded
        .iter()
        .zip(&texts)
        .map(|(e, t)| match kind_now {
            Kind::Cls => vec![(0..1, None, None)],
            Kind::Mean => vec![(0..e.tokens.len(), None, None)],
            Kind::Tokens => e
                .tokens
                .iter()
                .enumerate()
                .filter(|(_, tk)| !tk.special)
                .map(|(i, tk)| (i..i + 1, Some(tk.offsets), Some(tk.piece.clone())))
                .collect(),
            Kind::Word => find_word(e, t, word)
                .map(|r| {
                    let chars = (e.tokens[r.start].offsets.0, e.tokens[r.end - 1].offsets.1);
                    vec![(r, Some(chars), Some(word.to_lowercase()))]
                })
                .unwrap_or_default(),
        })
        .collect();
    let missing_word = picks.iter().filter(|p| p.is_empty()).count();
    let total: usize = picks.iter().map(Vec::len).sum();
    let over_cap = total.saturating_sub(MAX_POINTS);
    let mut points = Vec::new();
    let mut budget = MAX_POINTS;
    let keep = |i: usize, s: &TextStates| -> Vec<Vec<Vec<f32>>> {
        // Per pick: one vector per layer.
        picks[i]
            .iter()
            .map(|(range, _, _)| {
                (0..s.layers.len())
                    .map(|l| if kind_now == Kind::Cls { s.token(l, 0).to_vec() } else { s.mean_of(l, range.clone()) })
                    .collect()
            })
            .collect()
    };
    let per_text = each_states(
        engine,
        &encoded,
        keep,
        progress,
        cancelled,
    )
    .await?;
    let num_layers = per_text.iter().flatten().next().map(Vec::len).unwrap_or(0);
    let mut layers: Vec<Vec<Vec<f32>>> = vec![Vec::new(); num_layers];
    for (t, picked) in per_text.into_iter().enumerate() {
        for (vectors, (_, chars, w)) in picked.into_iter().zip(&picks[t]) {
            if budget == 0 {
                break;
            }
            budget -= 1;
            points.push(Point { text: t, chars: *chars, word: w.clone() });
            for (l, v) in vectors.into_iter().enumerate() {
                layers[l].push(v);
            }
        }
    }
    if points.len() < 2 {
        return Err(if kind_now == Kind::Word {
            format!("“{word}” appears as a whole word in {} of the texts; a map needs at least two.", points.len())
        } else {
            "There are fewer than two points to draw.".to_string()
        });
    }
    // Curves across layers, a layer at a time so the page keeps drawing.
    let label_ids: Option<Vec<usize>> = {
        let mut names: Vec<&str> = points.iter().filter_map(|p| labels[p.text].as_deref()).collect();
        names.sort_unstable();
        names.dedup();
        let all_labeled = points.iter().all(|p| labels[p.text].is_some());
        (all_labeled && names.len() >= 2).then(|| {
            points.iter().map(|p| names.binary_search(&labels[p.text].as_deref().unwrap_or("")).unwrap_or(0)).collect()
        })
    };
    let mut anisotropy = Vec::new();
    let mut centroid = label_ids.as_ref().map(|_| Vec::new());
    for l in &layers {
        let raw = mean_random_cosine(l, 2000, 7).map_err(|e| e.to_string())?;
        let z = mean_random_cosine(&standardize(l), 2000, 7).map_err(|e| e.to_string())?;
        anisotropy.push((raw, z));
        if let (Some(ids), Some(c)) = (&label_ids, centroid.as_mut()) {
            c.push(nearest_centroid_accuracy(l, ids).unwrap_or(f32::NAN));
        }
        yield_to_browser().await;
    }
    Ok(Embedded {
        texts,
        labels,
        points,
        layers,
        kind: kind_now,
        model: engine.model_id.clone(),
        millis: now_ms() - start,
        computed_on: computed_on(),
        missing_word,
        over_cap,
        anisotropy,
        centroid,
    })
}
