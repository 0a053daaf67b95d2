//! The current similarity model at work: pairs of texts scored, and a list of texts searched
//! with a query. A bi-encoder's vectors of a list are kept, so the next query over the same list
//! takes one pass; a cross-encoder reads the query with every text each time. Both report what
//! a query cost, for the page's comparison of the two.

use std::hash::{Hash, Hasher};

use bertbench_core::tasks::similarity::{embed_texts, rank, score_pairs};

use super::*;
use crate::runs::SearchResult;

/// A bi-encoder's vectors of a list of texts, for the model they were computed with.
pub(super) struct SearchIndex {
    /// Which current model (its address while it is the current one).
    model: usize,
    /// The list's hash.
    texts: u64,
    vectors: Rc<Vec<Vec<f32>>>,
}

fn similarity_model(current: Option<Rc<Current>>) -> Result<Rc<Current>, String> {
    let current = current.ok_or("there is no similarity model yet: train or import one first")?;
    if !current.loaded.meta.spec.level.similarity() {
        return Err("the current model does not score pairs of texts; train a similarity model first".into());
    }
    Ok(current)
}

/// Each pair's similarity (0..1) by the current model.
pub(super) async fn similar(current: Option<Rc<Current>>, pairs: &[(String, String)]) -> Result<Vec<f32>, String> {
    let c = similarity_model(current)?;
    score_pairs(&c.loaded.model, &c.loaded.tokenizer, pairs, &c.device).await.map_err(|e| e.to_string())
}

/// The `top` texts most like `query`.
pub(super) async fn search(current: Option<Rc<Current>>, query: String, texts: Vec<String>, top: usize) -> Result<SearchResult, String> {
    let c = similarity_model(current)?;
    if texts.is_empty() {
        return Err("the list of texts to search is empty: write one text per line".into());
    }
    let (model, tokenizer, device) = (&c.loaded.model, &c.loaded.tokenizer, &c.device);
    let n = texts.len();
    if model.spec.level != Level::Embedding {
        let started = now_ms();
        let pairs: Vec<(String, String)> = texts.into_iter().map(|t| (query.clone(), t)).collect();
        let scores = score_pairs(model, tokenizer, &pairs, device).await.map_err(|e| e.to_string())?;
        let mut ranked: Vec<(usize, f32)> = scores.into_iter().enumerate().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(top);
        return Ok(SearchResult { ranked, texts: n, passes: n, seconds: (now_ms() - started) / 1000.0, index_seconds: None });
    }
    let key = {
        let mut h = std::hash::DefaultHasher::new();
        texts.hash(&mut h);
        h.finish()
    };
    let address = Rc::as_ptr(&c) as usize;
    let kept = STATE.with(|s| s.borrow().search_index.as_ref().filter(|i| i.model == address && i.texts == key).map(|i| i.vectors.clone()));
    let (vectors, index_seconds) = match kept {
        Some(v) => (v, None),
        None => {
            let started = now_ms();
            let v = Rc::new(embed_texts(model, tokenizer, &texts, device).await.map_err(|e| e.to_string())?);
            STATE.with(|s| s.borrow_mut().search_index = Some(SearchIndex { model: address, texts: key, vectors: v.clone() }));
            (v, Some((now_ms() - started) / 1000.0))
        }
    };
    let started = now_ms();
    let query = embed_texts(model, tokenizer, &[query], device).await.map_err(|e| e.to_string())?;
    let mut ranked = rank(&query[0], &vectors);
    ranked.truncate(top);
    Ok(SearchResult { ranked, texts: n, passes: 1, seconds: (now_ms() - started) / 1000.0, index_seconds })
}
