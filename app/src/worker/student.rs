//! A student's run (the studio's distillation, `TrainRequest::keep_layers`): the teacher is the
//! worker's current classifier, the one the last run left; its probabilities on the training
//! texts go with each text, and it and the student are timed on the validation texts.

use bertbench_core::tasks::classification::Scoring;
use bertbench_core::tasks::distillation::spaced_layers;
use bertbench_core::tokenizer::Encoded;

use super::*;

/// The current classifier (the teacher) on `train`: each text with the teacher's probabilities,
/// and the teacher's milliseconds per validation text.
pub(super) async fn teach(train: Vec<LabeledText>, valid: &[LabeledText], labels: &[String]) -> Result<(Vec<LabeledText>, f64), String> {
    let Some(teacher) = STATE.with(|s| s.borrow().current.clone()) else {
        return Err("there is no teacher: the classifier a student learns from is the last run's, and the worker has none now (train or open one, then distil)".into());
    };
    let loaded = &teacher.loaded;
    if loaded.meta.spec.level != Level::Sentence {
        return Err("the teacher must be a sentence classifier: the last run trained another task".into());
    }
    if loaded.meta.multi_label() {
        return Err("the teacher is a multi-label classifier: a student learns one label per text from its teacher's softmax".into());
    }
    if loaded.meta.labels != labels {
        return Err(format!("the teacher labels {:?}, the data {labels:?}: a student learns the teacher's classes", loaded.meta.labels));
    }
    let encoded: Vec<Encoded> = train.iter().map(|t| t.encoded.clone()).collect();
    let probs = predict(&loaded.model, Scoring::Softmax, &encoded, loaded.tokenizer.pad_id, 32, &teacher.device).await.map_err(|e| format!("the teacher's probabilities: {e}"))?;
    let ms = ms_per_text(&loaded.model, valid, loaded.tokenizer.pad_id, &teacher.device).await?;
    Ok((train.into_iter().zip(&probs).map(|(t, p)| t.with_teacher(p)).collect(), ms))
}

/// Milliseconds per text `model` takes to classify `texts` (batches of 32, shortest first): the
/// fastest of at least two passes, and of as many as a third of a second takes, so a small
/// model's time is not one pass's noise or its first pass's warm-up.
pub(super) async fn ms_per_text(model: &classification::BertClassifier, texts: &[LabeledText], pad_id: u32, device: &Device) -> Result<f64, String> {
    let encoded: Vec<Encoded> = texts.iter().map(|t| t.encoded.clone()).collect();
    let (started, mut fastest, mut passes) = (now_ms(), f64::INFINITY, 0);
    while passes < 2 || (now_ms() - started < 300.0 && passes < 50) {
        let pass = now_ms();
        predict(model, Scoring::Raw, &encoded, pad_id, 32, device).await.map_err(|e| e.to_string())?;
        fastest = fastest.min(now_ms() - pass);
        passes += 1;
    }
    Ok(fastest / texts.len().max(1) as f64)
}

/// `keep` of the model's `depth` layers, spaced evenly (DistilBERT's), refused beyond its depth.
pub(super) fn kept_layers(depth: usize, keep: usize) -> Result<Vec<usize>, String> {
    if keep == 0 || keep > depth {
        return Err(format!("a student keeps 1 to {depth} of the model's {depth} layers (asked for {keep})"));
    }
    Ok(spaced_layers(depth, keep))
}
