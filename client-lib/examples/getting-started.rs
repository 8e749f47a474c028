//! The node of `docs/getting-started.md`, as a program: the guide's Rust code, kept equal to it
//! by `client-lib/tests/it/getting_started.rs`. Run it with `AM_APP=shop AM_HOST=shop-1 cargo
//! run -p agent-client --example getting-started`.

use agent_client::domain::params::{ParamSpec, ParamType};
use agent_client::{
    AgentError, AgentSpec, Context, Message, MessageAgent, NodeBuilder, StandaloneAgent,
};

/// Greets whoever a message names: `{"name": "Ada"}`.
struct Greet;

impl MessageAgent for Greet {
    type Params = serde_json::Value;

    async fn handle(&self, _ctx: &Context<Self::Params>, msg: &Message) -> Result<(), AgentError> {
        #[derive(serde::Deserialize)]
        struct Greeting {
            name: String,
        }
        // A body that is not a greeting fails the message: retried, then dead-lettered.
        let greeting: Greeting = msg.json()?;
        tracing::info!(attempt = msg.attempt(), "hello, {}", greeting.name);
        Ok(())
    }
}

#[derive(serde::Deserialize)]
struct TallyParams {
    limit: u32,
}

/// Counts up to a limit, reporting progress.
struct Tally;

impl StandaloneAgent for Tally {
    type Params = TallyParams;

    async fn run(&self, ctx: Context<TallyParams>) -> Result<(), AgentError> {
        let limit = ctx.params().limit;
        for i in 1..=limit {
            if ctx.is_cancelled() {
                return Err(AgentError::interrupted());
            }
            ctx.progress(Some(u64::from(i)), Some(u64::from(limit)), "counting");
        }
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), agent_client::NodeError> {
    tracing_subscriber::fmt().init();
    let node = NodeBuilder::from_env()?
        .messages(
            AgentSpec::new("greet")
                .title("Greet")
                .suggest_data_queue("shop.greetings"),
            Greet,
        )
        .standalone(
            AgentSpec::new("tally").title("Tally").param(
                ParamSpec::new("limit", ParamType::Integer)
                    .title("Count up to")
                    .min(1)
                    .default(10),
            ),
            Tally,
        )
        .start()
        .await?;
    tokio::signal::ctrl_c().await.ok();
    node.shutdown().await;
    Ok(())
}
