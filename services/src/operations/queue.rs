//! Where started operations go to be run: the port the server's job queue implements.

use std::{future::Future, pin::Pin};
use uuid::Uuid;

/// Why the job queue did not take an operation.
#[derive(Debug, thiserror::Error)]
#[error("the job queue did not take the operation: {0}")]
pub struct QueueError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Where started operations go to be run: the server's background-job queue.
pub trait OperationQueue: Send + Sync {
    /// Queues the job of operation `id`. An error leaves the operation `queued`; the server's
    /// resume pass queues it again.
    fn enqueue(&self, id: Uuid) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send>>;
}

/// The queue of a process without a job worker (tools, tests): operations stay `queued` until
/// a manager's worker runs them.
#[derive(Debug, Default)]
pub struct NoQueue;

impl OperationQueue for NoQueue {
    fn enqueue(&self, _id: Uuid) -> Pin<Box<dyn Future<Output = Result<(), QueueError>> + Send>> {
        Box::pin(async { Ok(()) })
    }
}
