//! Building blocks shared by pages.

pub mod classifier;
pub mod failures;
pub mod forms;
pub mod layout;
pub mod operation;
pub mod params;
pub mod replay;
pub mod rerun;
pub mod status;
