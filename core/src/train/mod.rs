//! Training, below the page and the command line and above the tasks: the optimizer, the
//! learning-rate schedule, gradient clipping, the step every run shares ([`step`]), snapshots of
//! a run, the two runs that go a unit of work at a time, fine-tuning ([`FineTuner`]) and MLM
//! pretraining ([`Pretrainer`]), and the [`Session`] that drives either: pause, cancel,
//! checkpoint cadence, restarts keeping the best.

mod adamw;
mod finetune;
mod grads;
pub mod memory;
mod pretrain;
mod schedule;
pub mod session;
pub mod step;
pub mod stream;

pub use adamw::{AdamW, adamw};
pub use finetune::*;
pub use grads::{GradNorm, clip_grad_norm, clip_grad_norm_by_parameter};
pub use pretrain::{PretrainConfig, PretrainStep, Pretrainer, ShownToken, show_masking};
pub use schedule::{group_by_length, linear_schedule};
pub use session::{CheckpointPolicy, Ended, Host, Run, Session};
pub use step::{Schedule, StepValues, clip, read_back};
pub use stream::{FileSink, Files};
