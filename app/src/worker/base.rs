//! The base model runs start from: loaded from the page's bytes, or read from the offline
//! cache when a run needs it, with everyone who asks meanwhile waiting for the one read.

use super::*;

/// Loads `files` as the base model runs start from.
pub(super) fn set_base(model_id: String, files: CheckpointFiles, downloadable: bool) {
    let (tokenizer_json, vocab_txt) = (files.tokenizer_json.clone(), files.vocab_txt.clone());
    match checkpoint::load(files, &Device::flex().autodiff()) {
        Ok(bert) => {
            let base = Base { id: model_id, downloadable, bert, tokenizer_json, vocab_txt };
            STATE.with(|s| s.borrow_mut().base = Some(Rc::new(base)));
        }
        Err(e) => post(&FromWorker::Error { message: format!("the training worker could not load {model_id}: {e}") }, &[]),
    }
}

/// The base model; one of the page's own models is read from `models/<id>/` (the offline
/// cache) when it is not in memory.
pub(super) async fn base_model() -> Option<Rc<Base>> {
    loop {
        let reading = STATE.with(|s| {
            s.borrow_mut().base_reading.as_mut().map(|waiters| {
                let (waiter, woken) = oneshot::channel();
                waiters.push(waiter);
                woken
            })
        });
        if let Some(woken) = reading {
            let _ = woken.await;
            continue;
        }
        let (base, to_read, generation) = STATE.with(|s| {
            let s = s.borrow();
            (s.base.clone(), s.base_to_read.clone(), s.base_generation)
        });
        let Some(model_id) = to_read.filter(|_| base.is_none()) else { return base };
        STATE.with(|s| s.borrow_mut().base_reading = Some(Vec::new()));
        let files = engine::download(&model_id, |_, _, _| {}, |_| {}).await;
        // A newer SetBase overtook this one: its own state stands.
        if STATE.with(|s| s.borrow().base_generation) == generation {
            STATE.with(|s| s.borrow_mut().base_to_read = None);
            match files {
                Ok(files) => set_base(model_id, files, true),
                Err(e) => post(&FromWorker::Error { message: format!("the training worker could not load {model_id}: {e}") }, &[]),
            }
            base_read_ended();
        }
    }
}

/// Wakes whoever waits for the base model's read (it ended, or a newer `SetBase` overtook it).
pub(super) fn base_read_ended() {
    for waiter in STATE.with(|s| s.borrow_mut().base_reading.take()).into_iter().flatten() {
        let _ = waiter.send(());
    }
}
