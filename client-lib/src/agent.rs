//! What application code implements ([`StandaloneAgent`], [`MessageAgent`]) and how it
//! describes itself to the manager ([`AgentSpec`], [`Classifier`]).

use crate::{AgentError, Context, Message};
use am_domain::{
    catalog::{ClassifierValue, Concurrency, InputKind, OverlapPolicy},
    params::ParamSpec,
    wire::{PublishedAgent, PublishedClassifier},
};
use futures_util::future::BoxFuture;
use serde::de::DeserializeOwned;
use std::{future::Future, sync::Arc, time::Duration};
use tokio_util::sync::CancellationToken;

/// An agent that runs on its own when a schedule fires: one `run` per activation.
///
/// Long runs should watch [`Context::cancelled`] and return [`AgentError::interrupted`].
///
/// ```
/// use agent_client::{AgentError, Context, StandaloneAgent};
///
/// #[derive(serde::Deserialize)]
/// struct Params { days: u32 }
///
/// struct Purge;
/// impl StandaloneAgent for Purge {
///     type Params = Params;
///     async fn run(&self, ctx: Context<Params>) -> Result<(), AgentError> {
///         if ctx.params().days == 0 {
///             return Err(AgentError::failed("BadInput", "days must be positive"));
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait StandaloneAgent: Send + Sync + 'static {
    /// The agent's parameters, deserialized from the launch setting's JSON values (after the
    /// schema's defaults are applied).
    type Params: DeserializeOwned + Send + Sync + 'static;

    /// One run. `Ok` ends the activation `succeeded`, an error `failed` (or `interrupted`).
    fn run(
        &self,
        ctx: Context<Self::Params>,
    ) -> impl Future<Output = Result<(), AgentError>> + Send;
}

/// An agent that handles the data messages of its launch setting's subscription, one at a
/// time per activation. A message is acknowledged only after `handle` returns `Ok`; an error
/// sends it back later (growing delay) or, after the last attempt, to the dead-letter queue.
/// Message order is not preserved across redeliveries.
///
/// ```
/// use agent_client::{AgentError, Context, Message, MessageAgent};
///
/// struct Echo;
/// impl MessageAgent for Echo {
///     type Params = serde_json::Value;
///     async fn handle(&self, ctx: &Context<Self::Params>, msg: &Message) -> Result<(), AgentError> {
///         tracing::info!(attempt = msg.attempt(), "{}", msg.body_str()?);
///         Ok(())
///     }
/// }
/// ```
pub trait MessageAgent: Send + Sync + 'static {
    /// The agent's parameters, as for [`StandaloneAgent::Params`].
    type Params: DeserializeOwned + Send + Sync + 'static;

    /// Handles one message.
    fn handle(
        &self,
        ctx: &Context<Self::Params>,
        message: &Message,
    ) -> impl Future<Output = Result<(), AgentError>> + Send;
}

/// How an agent presents itself: id, title, parameter schema and suggested defaults. The
/// manager creates the agent from the first publication and afterwards only updates what the
/// code owns (title, schema).
///
/// ```
/// use agent_client::AgentSpec;
/// use agent_client::domain::params::{ParamSpec, ParamType};
/// let spec = AgentSpec::new("invoice-export")
///     .title("Export invoices")
///     .param(ParamSpec::new("site", ParamType::Classifier("sites".into())))
///     .prefetch(20);
/// assert_eq!(spec.id(), "invoice-export");
/// ```
#[derive(Debug, Clone)]
pub struct AgentSpec {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) params: Vec<ParamSpec>,
    pub(crate) data_queue: Option<String>,
    pub(crate) concurrency: Option<Concurrency>,
    pub(crate) overlap: Option<OverlapPolicy>,
    pub(crate) prefetch: u16,
}

impl AgentSpec {
    /// A spec with the agent's id (`[a-z0-9][a-z0-9._-]*`, unique in the application).
    ///
    /// ```
    /// let spec = agent_client::AgentSpec::new("sleep");
    /// assert_eq!(spec.id(), "sleep");
    /// ```
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            title: String::new(),
            params: Vec::new(),
            data_queue: None,
            concurrency: None,
            overlap: None,
            prefetch: 10,
        }
    }

    /// The agent's id.
    ///
    /// ```
    /// assert_eq!(agent_client::AgentSpec::new("x").id(), "x");
    /// ```
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Title shown to operators.
    ///
    /// ```
    /// let spec = agent_client::AgentSpec::new("sleep").title("Sleep a while");
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Adds a parameter to the schema.
    ///
    /// ```
    /// use agent_client::domain::params::{ParamSpec, ParamType};
    /// let spec = agent_client::AgentSpec::new("sleep")
    ///     .param(ParamSpec::new("duration", ParamType::Duration));
    /// ```
    pub fn param(mut self, spec: ParamSpec) -> Self {
        self.params.push(spec);
        self
    }

    /// Suggests the data queue of a new catalog entry (messages agents).
    ///
    /// ```
    /// let spec = agent_client::AgentSpec::new("export").suggest_data_queue("invoices");
    /// ```
    pub fn suggest_data_queue(mut self, data_queue: impl Into<String>) -> Self {
        self.data_queue = Some(data_queue.into());
        self
    }

    /// Suggests the concurrency of a new catalog entry.
    ///
    /// ```
    /// use agent_client::domain::catalog::Concurrency;
    /// let spec = agent_client::AgentSpec::new("export").suggest_concurrency(Concurrency::Many);
    /// ```
    pub fn suggest_concurrency(mut self, concurrency: Concurrency) -> Self {
        self.concurrency = Some(concurrency);
        self
    }

    /// Suggests the overlap policy of a new catalog entry.
    ///
    /// ```
    /// use agent_client::domain::catalog::OverlapPolicy;
    /// let spec = agent_client::AgentSpec::new("sleep").suggest_overlap(OverlapPolicy::Skip);
    /// ```
    pub fn suggest_overlap(mut self, overlap: OverlapPolicy) -> Self {
        self.overlap = Some(overlap);
        self
    }

    /// How many messages the broker may hand this agent's consumer before they are
    /// acknowledged (messages agents; default 10). Higher is faster, lower spreads a backlog
    /// more evenly across nodes.
    ///
    /// ```
    /// let spec = agent_client::AgentSpec::new("export").prefetch(100);
    /// ```
    pub fn prefetch(mut self, prefetch: u16) -> Self {
        self.prefetch = prefetch.max(1);
        self
    }

    pub(crate) fn publish(&self, input: InputKind) -> PublishedAgent {
        PublishedAgent {
            id: self.id.clone(),
            title: self.title.clone(),
            input,
            parameters: self.params.clone(),
            suggested_data_queue: self.data_queue.clone(),
            suggested_concurrency: self.concurrency,
            suggested_overlap: self.overlap,
        }
    }
}

type Provider = Arc<dyn Fn() -> Vec<ClassifierValue> + Send + Sync>;

/// A list of (code, label) values that typed parameters pick from: static, or computed by a
/// provider function at every publication (start-up and reconnect).
///
/// ```
/// use agent_client::Classifier;
/// use agent_client::domain::catalog::ClassifierValue;
/// let sites = Classifier::new("sites", "Sites").value("par", "Paris").value("lyo", "Lyon");
/// let orgs = Classifier::provider("organisations", "Organisations", || {
///     (1..=3).map(|i| ClassifierValue { code: format!("org-{i}"), label: format!("Org {i}") })
///         .collect()
/// });
/// ```
#[derive(Clone)]
pub struct Classifier {
    pub(crate) name: String,
    title: String,
    values: Vec<ClassifierValue>,
    provider: Option<Provider>,
}

impl std::fmt::Debug for Classifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Classifier")
            .field("name", &self.name)
            .field("values", &self.values.len())
            .field("provider", &self.provider.is_some())
            .finish()
    }
}

impl Classifier {
    /// A classifier with static values (add them with [`Classifier::value`]).
    ///
    /// ```
    /// let c = agent_client::Classifier::new("sites", "Sites");
    /// ```
    pub fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: title.into(),
            values: Vec::new(),
            provider: None,
        }
    }

    /// A classifier whose values a function computes at each publication.
    ///
    /// ```
    /// let c = agent_client::Classifier::provider("sites", "Sites", Vec::new);
    /// ```
    pub fn provider(
        name: impl Into<String>,
        title: impl Into<String>,
        provider: impl Fn() -> Vec<ClassifierValue> + Send + Sync + 'static,
    ) -> Self {
        Self {
            provider: Some(Arc::new(provider)),
            ..Self::new(name, title)
        }
    }

    /// Adds a static value.
    ///
    /// ```
    /// let c = agent_client::Classifier::new("sites", "Sites").value("par", "Paris");
    /// ```
    pub fn value(mut self, code: impl Into<String>, label: impl Into<String>) -> Self {
        self.values.push(ClassifierValue {
            code: code.into(),
            label: label.into(),
        });
        self
    }

    pub(crate) fn publish(&self) -> PublishedClassifier {
        let mut values = self.values.clone();
        if let Some(p) = &self.provider {
            values.extend(p());
        }
        PublishedClassifier {
            name: self.name.clone(),
            title: self.title.clone(),
            values,
        }
    }
}

// ---------------------------------------------------------------- type erasure

/// A standalone agent with its parameter type erased.
pub(crate) trait ErasedStandalone: Send + Sync {
    fn run(
        &self,
        ctx: Arc<crate::context::RunInfo>,
        params: serde_json::Value,
    ) -> Result<BoxFuture<'static, Result<(), AgentError>>, AgentError>;
}

impl<A: StandaloneAgent> ErasedStandalone for Arc<A> {
    fn run(
        &self,
        info: Arc<crate::context::RunInfo>,
        params: serde_json::Value,
    ) -> Result<BoxFuture<'static, Result<(), AgentError>>, AgentError> {
        let ctx = Context::<A::Params>::new(info, params)?;
        let agent = Arc::clone(self);
        Ok(Box::pin(async move {
            StandaloneAgent::run(agent.as_ref(), ctx).await
        }))
    }
}

/// A message agent bound to one activation's parameters.
pub(crate) trait BoundHandler: Send + Sync {
    fn handle<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<(), AgentError>>;
}

struct Bound<A: MessageAgent> {
    agent: Arc<A>,
    ctx: Context<A::Params>,
}

impl<A: MessageAgent> BoundHandler for Bound<A> {
    fn handle<'a>(&'a self, message: &'a Message) -> BoxFuture<'a, Result<(), AgentError>> {
        Box::pin(MessageAgent::handle(
            self.agent.as_ref(),
            &self.ctx,
            message,
        ))
    }
}

/// A message agent with its parameter type erased.
pub(crate) trait ErasedMessages: Send + Sync {
    fn bind(
        &self,
        ctx: Arc<crate::context::RunInfo>,
        params: serde_json::Value,
    ) -> Result<Box<dyn BoundHandler>, AgentError>;
}

impl<A: MessageAgent> ErasedMessages for Arc<A> {
    fn bind(
        &self,
        info: Arc<crate::context::RunInfo>,
        params: serde_json::Value,
    ) -> Result<Box<dyn BoundHandler>, AgentError> {
        Ok(Box::new(Bound {
            agent: Arc::clone(self),
            ctx: Context::<A::Params>::new(info, params)?,
        }))
    }
}

/// A registered agent.
#[derive(Clone)]
pub(crate) enum Registered {
    Standalone(Arc<dyn ErasedStandalone>),
    Messages(Arc<dyn ErasedMessages>),
}

impl Registered {
    pub(crate) fn input(&self) -> InputKind {
        match self {
            Registered::Standalone(_) => InputKind::Standalone,
            Registered::Messages(_) => InputKind::Messages,
        }
    }
}

/// Runs an agent's future; once cancelled it gets `grace` to finish before it is dropped.
pub(crate) async fn with_grace<F>(
    fut: F,
    cancel: &CancellationToken,
    grace: Duration,
) -> Result<(), AgentError>
where
    F: Future<Output = Result<(), AgentError>>,
{
    tokio::select! {
        biased;
        r = fut => r,
        () = async { cancel.cancelled().await; tokio::time::sleep(grace).await } => {
            tracing::warn!(?grace, "the agent ignored the interruption; abandoned");
            Err(AgentError::interrupted())
        }
    }
}
