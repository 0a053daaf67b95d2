//! One component per panel of the page.

mod attention;
mod device_check;
mod embedding;
mod header;
mod input_parts;
mod lab;
mod map;
mod model;
mod probe;
mod saved;
mod similarity;
mod studio_data;
mod studio_inside;
mod studio_results;
mod studio_train;
mod tokens;

pub use attention::AttentionPanel;
pub use device_check::DeviceCheckPanel;
pub use embedding::EmbeddingPanel;
pub use header::Header;
pub use input_parts::InputPartsPanel;
pub use lab::LabPanel;
pub use map::MapPanel;
pub use model::ModelPanel;
pub use probe::ProbePanel;
pub use saved::{ResumeBanner, SavedPanel};
pub use similarity::SimilarityPanel;
pub use studio_data::StudioDataPanel;
pub use studio_inside::StudioInsidePanel;
pub use studio_results::StudioResultsPanel;
pub use studio_train::StudioTrainPanel;
pub use tokens::TokensPanel;
