//! Building blocks shared by pages.

pub mod layout;
