//! The page's frame: its layout (`page.rs`), and what every tab shares on screen: the header,
//! the model picker and opening one's own model, the WebGPU check and the list of saved work.

mod device_check;
mod header;
mod model;
mod open_model;
mod page;
mod saved;

pub use device_check::DeviceCheckPanel;
pub use header::Header;
pub use model::ModelPanel;
pub use open_model::open_kept;
pub use page::App;
pub use saved::SavedPanel;
