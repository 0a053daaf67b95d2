//! Training, below the page and the command line and above the tasks: the optimizer, the
//! learning-rate schedule, gradient clipping, snapshots of a run, and the two runs the page
//! drives a step at a time, fine-tuning ([`FineTuner`]) and MLM pretraining ([`Pretrainer`]).

mod adamw;
mod finetune;
mod grads;
mod pretrain;
mod schedule;
mod step;
pub mod stream;

pub use adamw::{AdamW, adamw};
pub use finetune::*;
pub use grads::{GradNorm, clip_grad_norm, clip_grad_norm_by_parameter};
pub use pretrain::{PretrainConfig, PretrainStep, Pretrainer, ShownToken};
pub use schedule::{group_by_length, linear_schedule};
pub use step::{Schedule, StepValues, clip, read_back};
pub use stream::{FileSink, Files};
