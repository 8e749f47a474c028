//! Bulk actions on the launch settings or schedule groups an operator selected on a list:
//! what each does, and how many one call takes.

use crate::words::words;

/// Most entities one bulk action takes: a list page's largest.
pub const MAX_SELECTED: usize = 200;

words! {
    /// What a bulk action does to each selected launch setting or schedule group, as its row's
    /// own action would.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum BulkAction {
        RunNow = "run-now",
        /// Interrupts what it is running or waiting to run.
        Interrupt = "interrupt",
        Disable = "disable",
        Enable = "enable",
    }
}
