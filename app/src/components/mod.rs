//! Building blocks shared by pages.

pub mod attention;
pub mod bulk_switch;
pub mod classifier;
pub mod disable;
pub mod failure_chart;
pub mod failures;
pub mod forms;
pub mod ids;
pub mod item_buttons;
pub mod layout;
pub mod live;
pub mod operation;
pub mod overview;
pub mod param_state;
pub mod params;
pub mod replay;
pub mod rerun;
pub mod row_switch;
pub mod run_actions;
pub mod sections;
pub mod status;
pub mod stream_health;
pub mod throughput_chart;
pub mod title;
pub mod webhook;
pub mod when;
