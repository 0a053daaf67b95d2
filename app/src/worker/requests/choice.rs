//! The worker's answer to multiple choice's request.

use bertbench_core::tasks::choice;
use bertbench_core::tasks::classification::Level;

use super::{Handle, current};
use crate::protocol as ask;

impl Handle for ask::Choose {
    async fn handle(self, _: Vec<Vec<u8>>) -> Result<(Vec<f32>, Vec<Vec<u8>>), String> {
        let current = current().ok_or("there is no multiple-choice model yet: train or import one first")?;
        let c = &current.loaded;
        if c.meta.spec.level != Level::Choice {
            return Err("the current model does not score endings (it is not a multiple-choice model); train one on questions with endings first".into());
        }
        let probs = choice::predict(&c.model, &c.tokenizer, &self.premise, &self.endings, &current.device).await.map_err(|e| e.to_string())?;
        Ok((probs, Vec::new()))
    }
}
