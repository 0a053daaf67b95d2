//! One component per panel of the page.

mod device_check;
mod embedding;
mod header;
mod model;
mod similarity;
mod studio_data;
mod studio_results;
mod studio_train;
mod tokens;

pub use device_check::DeviceCheckPanel;
pub use embedding::EmbeddingPanel;
pub use header::Header;
pub use model::ModelPanel;
pub use similarity::SimilarityPanel;
pub use studio_data::StudioDataPanel;
pub use studio_results::StudioResultsPanel;
pub use studio_train::StudioTrainPanel;
pub use tokens::TokensPanel;
