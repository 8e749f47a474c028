//! Building blocks shared by pages.

pub mod classifier;
pub mod forms;
pub mod layout;
pub mod params;
pub mod status;
