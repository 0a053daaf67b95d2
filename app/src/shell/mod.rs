//! The page's frame, shared by every tab: the header, the model picker, the WebGPU check and
//! the list of saved work.

mod device_check;
mod header;
mod model;
pub(crate) mod saved;

pub use device_check::DeviceCheckPanel;
pub use header::Header;
pub use model::ModelPanel;
pub use saved::{ResumeBanner, SavedPanel};
