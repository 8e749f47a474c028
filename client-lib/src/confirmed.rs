//! What the broker answered to a copy the node published mandatory with publisher confirms
//! (a retry, a parked or dead-lettered message, a quarantined command, a batch of reports):
//! the node lets go of the original only once this says the copy sits in a queue.

use lapin::Confirmation;

/// Why a copy did not reach a queue; the original stays where it was.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    /// The channel or connection failed while publishing or waiting for the confirm.
    #[error(transparent)]
    Broker(#[from] lapin::Error),
    /// The broker answered with a negative acknowledgement.
    #[error("the broker refused the message for `{0}`")]
    Refused(String),
    /// Published mandatory and returned: nothing is bound under that name.
    #[error("`{0}` routed the message to no queue")]
    Unrouted(String),
}

/// Reads a mandatory copy's confirmation: acknowledged and not returned is the only success
/// (an unroutable mandatory message is acknowledged *and* returned). `target` names the
/// exchange or queue it was sent to.
pub(crate) fn landed(confirmation: Confirmation, target: &str) -> Result<(), SendError> {
    if !confirmation.is_ack() {
        return Err(SendError::Refused(target.to_owned()));
    }
    if confirmation.take_message().is_some() {
        return Err(SendError::Unrouted(target.to_owned()));
    }
    Ok(())
}
