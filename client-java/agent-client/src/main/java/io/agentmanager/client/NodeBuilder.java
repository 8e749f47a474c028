package io.agentmanager.client;

import io.agentmanager.client.wire.HumanDuration;
import io.agentmanager.client.wire.Names;
import io.agentmanager.client.wire.ParamSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Configures and starts a {@link Node}: one application on one host. Not thread-safe; build on
 * one thread, then {@link #start()}.
 */
public final class NodeBuilder {
    /** The default broker URL, as the manager's. */
    public static final String DEFAULT_AMQP_URL = "amqp://guest:guest@127.0.0.1:5672/%2f";

    private static final Pattern ID = Pattern.compile("[a-z0-9][a-z0-9._-]{0,127}");
    private static final Pattern HOST_LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");

    String application = "";
    String host = "";
    String version = "";
    String amqpUrl = DEFAULT_AMQP_URL;
    String prefix = Names.DEFAULT_PREFIX;
    Duration queueExpiry;
    int capacity = 8;
    Duration heartbeatEvery = Duration.ofSeconds(10);
    Duration interruptGrace = Duration.ofSeconds(30);
    Duration shutdownTimeout = Duration.ofSeconds(30);
    Duration defaultIdleTimeout = Duration.ofSeconds(30);
    int reportBuffer = 10_000;
    ThreadFactory threadFactory = Executors.defaultThreadFactory();
    ExecutorService executor;
    NodeListener listener = new NodeListener() { };
    javax.net.ssl.SSLContext sslContext;
    TraceSettings traces = TraceSettings.off();
    final Map<String, RegisteredAgent> agents = new LinkedHashMap<>();
    final List<Classifier> classifiers = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    NodeBuilder() {
    }

    /**
     * A node configured from the environment: {@code AM_APP} (required), {@code AM_HOST}
     * (default the machine's host name), {@code AM_AMQP_URL}, {@code AM_PREFIX},
     * {@code AM_CAPACITY}, {@code AM_QUEUE_EXPIRY} (tests and demos only); and traces from the
     * standard OpenTelemetry variables ({@link TraceSettings#fromVariables}), the service named
     * after the application unless they name it.
     *
     * @return the builder
     * @throws NodeConfigException listing every variable that is set but wrong
     */
    public static NodeBuilder fromEnvironment() {
        return fromVariables(System::getenv);
    }

    /**
     * As {@link #fromEnvironment()}, reading each variable from {@code vars}; an empty value
     * counts as unset.
     *
     * @param vars variable name to value (null when unset)
     * @return the builder
     * @throws NodeConfigException listing every problem, each by variable name
     */
    public static NodeBuilder fromVariables(Function<String, String> vars) {
        Function<String, String> var = name -> {
            String v = vars.apply(name);
            return v == null || v.isBlank() ? null : v;
        };
        List<String> problems = new ArrayList<>();
        String app = var.apply("AM_APP");
        if (app == null) {
            problems.add("AM_APP: required (the application's id in the manager's catalog)");
        }
        String host = var.apply("AM_HOST");
        if (host == null) {
            host = machineHostName();
            if (host == null) {
                problems.add("AM_HOST: not set, and the machine's host name cannot be read");
            }
        }
        Integer capacity = null;
        String rawCapacity = var.apply("AM_CAPACITY");
        if (rawCapacity != null) {
            try {
                capacity = Integer.parseInt(rawCapacity.trim());
                if (capacity < 1) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                problems.add("AM_CAPACITY: `" + rawCapacity + "` is not a whole number of at least 1");
                capacity = null;
            }
        }
        Duration expiry = null;
        String rawExpiry = var.apply("AM_QUEUE_EXPIRY");
        if (rawExpiry != null) {
            try {
                expiry = HumanDuration.parse(rawExpiry).value();
                if (expiry.isZero()) {
                    problems.add("AM_QUEUE_EXPIRY: must be longer than 0s");
                }
            } catch (IllegalArgumentException e) {
                problems.add("AM_QUEUE_EXPIRY: " + e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new NodeConfigException(problems);
        }
        NodeBuilder b = Node.builder().application(app).host(host);
        if (var.apply("AM_AMQP_URL") != null) {
            b.amqpUrl(var.apply("AM_AMQP_URL").trim());
        }
        if (var.apply("AM_PREFIX") != null) {
            b.prefix(var.apply("AM_PREFIX").trim());
        }
        if (expiry != null) {
            b.queueExpiry(expiry);
        }
        if (capacity != null) {
            b.capacity(capacity);
        }
        b.traces(TraceSettings.fromVariables(vars, app));
        return b;
    }

    private static String machineHostName() {
        try {
            String h = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim().toLowerCase(Locale.ROOT);
            if (!h.isEmpty()) {
                return h;
            }
        } catch (java.io.IOException | RuntimeException e) {
            // Not Linux, or no procfs: fall back on the environment.
        }
        String h = System.getenv("HOSTNAME");
        return h == null || h.isBlank() ? null : h.trim().toLowerCase(Locale.ROOT);
    }

    /**
     * The application's id in the manager's catalog.
     *
     * @param application {@code [a-z0-9][a-z0-9._-]*}
     * @return this
     */
    public NodeBuilder application(String application) {
        this.application = Objects.requireNonNull(application, "application");
        return this;
    }

    /**
     * This node's host, as listed in its pool (an RFC 1123 host name).
     *
     * @param host the host
     * @return this
     */
    public NodeBuilder host(String host) {
        this.host = Objects.requireNonNull(host, "host");
        return this;
    }

    /**
     * The application's version, shown in the manager.
     *
     * @param version free text
     * @return this
     */
    public NodeBuilder version(String version) {
        this.version = Objects.requireNonNull(version, "version");
        return this;
    }

    /**
     * The broker URL, or a RabbitMQ cluster's members as a comma-separated list (default
     * {@value #DEFAULT_AMQP_URL}).
     *
     * @param url the URL or list
     * @return this
     */
    public NodeBuilder amqpUrl(String url) {
        this.amqpUrl = Objects.requireNonNull(url, "url");
        return this;
    }

    /**
     * Prefix of every broker name: the manager's {@code AM_PREFIX} (default {@code am}).
     *
     * @param prefix the prefix
     * @return this
     */
    public NodeBuilder prefix(String prefix) {
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        return this;
    }

    /**
     * Tests and demos only: queues expire when unused this long ({@code x-expires}); must equal
     * the manager's {@code AM_QUEUE_EXPIRY}, or the broker refuses the declarations.
     *
     * @param expiry the expiry, or null for none
     * @return this
     */
    public NodeBuilder queueExpiry(Duration expiry) {
        this.queueExpiry = expiry;
        return this;
    }

    /**
     * Activations run at once (default 8); a launch that finds every slot busy is accepted and
     * waits for one.
     *
     * @param capacity at least 1
     * @return this
     */
    public NodeBuilder capacity(int capacity) {
        this.capacity = capacity;
        return this;
    }

    /**
     * How often the node heartbeats (default 10 s, at least 50 ms).
     *
     * @param every the interval
     * @return this
     */
    public NodeBuilder heartbeatEvery(Duration every) {
        this.heartbeatEvery = every.compareTo(Duration.ofMillis(50)) < 0 ? Duration.ofMillis(50) : every;
        return this;
    }

    /**
     * How long an agent may keep running after it was asked to stop before the node gives up on
     * it (default 30 s).
     *
     * @param grace the grace period
     * @return this
     */
    public NodeBuilder interruptGrace(Duration grace) {
        this.interruptGrace = Objects.requireNonNull(grace, "grace");
        return this;
    }

    /**
     * How long {@link Node#close()} waits for the activations it asked to stop (all of them, at
     * once) to end and be reported (default 30 s); a run still going then is left without a
     * {@code finished} report.
     *
     * @param timeout the timeout
     * @return this
     */
    public NodeBuilder shutdownTimeout(Duration timeout) {
        this.shutdownTimeout = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /**
     * Idle timeout of scheduled message activations whose launch gives none (default 30 s).
     *
     * @param timeout the timeout
     * @return this
     */
    public NodeBuilder defaultIdleTimeout(Duration timeout) {
        this.defaultIdleTimeout = Objects.requireNonNull(timeout, "timeout");
        return this;
    }

    /**
     * Reports waiting for the broker at most (default 10 000); beyond, the oldest are dropped
     * and counted.
     *
     * @param capacity the buffer size
     * @return this
     */
    public NodeBuilder reportBuffer(int capacity) {
        this.reportBuffer = capacity;
        return this;
    }

    /**
     * Where the node's own threads come from (connection, outbox, timers, and the default
     * executor): pass an application server's managed thread factory.
     *
     * @param factory the factory
     * @return this
     */
    public NodeBuilder threadFactory(ThreadFactory factory) {
        this.threadFactory = Objects.requireNonNull(factory, "factory");
        return this;
    }

    /**
     * Runs activations and agent code (default: a cached pool of the thread factory). Each
     * running activation needs two threads at once (its runner and its agent call), each
     * waiting one a runner: size a bounded pool at least {@code 2 × capacity + 2}. The node
     * does not shut down an executor it was given.
     *
     * @param executor the executor
     * @return this
     */
    public NodeBuilder executor(ExecutorService executor) {
        this.executor = Objects.requireNonNull(executor, "executor");
        return this;
    }

    /**
     * The TLS context of {@code amqps://} connections (your trust store). Without it an
     * {@code amqps://} URL gets amqp-client's default, which trusts every certificate: set it
     * in production.
     *
     * @param context the TLS context
     * @return this
     */
    public NodeBuilder sslContext(javax.net.ssl.SSLContext context) {
        this.sslContext = Objects.requireNonNull(context, "context");
        return this;
    }

    /**
     * Where the node's spans go (default {@link TraceSettings#off()}; {@link #fromEnvironment()}
     * reads them from the OpenTelemetry variables): an {@code activation} span per launch, a
     * child of the launch's {@code traceparent}, and a {@code message} span per data message;
     * reports carry the context of their span.
     *
     * @param settings the settings
     * @return this
     */
    public NodeBuilder traces(TraceSettings settings) {
        this.traces = Objects.requireNonNull(settings, "settings");
        return this;
    }

    /**
     * Callbacks for metrics and health checks.
     *
     * @param listener the listener
     * @return this
     */
    public NodeBuilder listener(NodeListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
        return this;
    }

    /**
     * Registers a standalone agent.
     *
     * @param spec how it presents itself
     * @param paramsType the record its parameters are read into ({@code JsonNode.class} for
     *     raw JSON)
     * @param agent its code
     * @param <P> the parameter type
     * @return this
     */
    @SuppressWarnings("unchecked")
    public <P> NodeBuilder standalone(AgentSpec spec, Class<P> paramsType, StandaloneAgent<P> agent) {
        register(spec, paramsType, (StandaloneAgent<Object>) agent, null);
        return this;
    }

    /**
     * Registers a message agent.
     *
     * @param spec how it presents itself (with its prefetch)
     * @param paramsType the record its parameters are read into
     * @param agent its code
     * @param <P> the parameter type
     * @return this
     */
    @SuppressWarnings("unchecked")
    public <P> NodeBuilder messages(AgentSpec spec, Class<P> paramsType, MessageAgent<P> agent) {
        register(spec, paramsType, null, (MessageAgent<Object>) agent);
        return this;
    }

    private void register(AgentSpec spec, Class<?> paramsType, StandaloneAgent<Object> s, MessageAgent<Object> m) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(paramsType, "paramsType");
        if (agents.containsKey(spec.id())) {
            problems.add("agent `" + spec.id() + "`: registered twice");
            return;
        }
        agents.put(spec.id(), new RegisteredAgent(spec.id(), spec, spec.params(), paramsType, s, m));
    }

    /**
     * Publishes a classifier with the node's agents.
     *
     * @param classifier the classifier
     * @return this
     */
    public NodeBuilder classifier(Classifier classifier) {
        classifiers.add(Objects.requireNonNull(classifier, "classifier"));
        return this;
    }

    /**
     * The host this node reports as.
     *
     * @return the host
     */
    public String hostName() {
        return host;
    }

    /**
     * Where the node's spans go.
     *
     * @return the settings ({@link TraceSettings#off()} unless set)
     */
    public TraceSettings traceSettings() {
        return traces;
    }

    /**
     * The broker URL or member list.
     *
     * @return the URL
     */
    public String brokerUrl() {
        return amqpUrl;
    }

    /**
     * Checks the configuration and every registration; lists every problem at once.
     *
     * @throws NodeConfigException with every problem
     */
    public void validate() {
        List<String> out = new ArrayList<>(problems);
        if (!ID.matcher(application).matches()) {
            out.add("application `" + application + "`: ids are 1–128 characters of a–z, 0–9, '.', '_' and '-', "
                    + "starting with a letter or digit");
        }
        if (host.isEmpty() || host.length() > 253
                || !java.util.Arrays.stream(host.split("\\.", -1)).allMatch(l -> HOST_LABEL.matcher(l).matches())) {
            out.add("host `" + host + "`: host names are dot-separated labels of 1–63 letters, digits and '-' "
                    + "(not starting or ending with '-'), 253 characters at most");
        }
        if (capacity < 1) {
            out.add("capacity: must be at least 1");
        }
        try {
            BrokerAddresses.parse(amqpUrl);
        } catch (IllegalArgumentException e) {
            out.add("amqp_url: " + e.getMessage());
        }
        if (prefix.isBlank()) {
            out.add("prefix: must not be empty");
        }
        for (RegisteredAgent a : agents.values()) {
            if (!ID.matcher(a.id()).matches()) {
                out.add("agent `" + a.id() + "`: not a valid id");
            }
            Set<String> names = new HashSet<>();
            for (ParamSpec p : a.params()) {
                String problem = p.problem();
                if (problem != null) {
                    out.add("agent `" + a.id() + "` parameters." + p.name() + ": " + problem);
                }
                if (!names.add(p.name())) {
                    out.add("agent `" + a.id() + "` parameters." + p.name() + ": declared twice");
                }
            }
        }
        Set<String> classifierNames = new HashSet<>();
        for (Classifier c : classifiers) {
            if (!classifierNames.add(c.name())) {
                out.add("classifier `" + c.name() + "`: registered twice");
            }
        }
        if (!out.isEmpty()) {
            throw new NodeConfigException(out);
        }
    }

    /**
     * Validates, then starts the node in the background: it connects (retrying with backoff),
     * declares its control queue, publishes itself and listens for launches. Use
     * {@link Node#awaitReady(Duration)} to wait until it listens.
     *
     * @return the running node
     * @throws NodeConfigException when the configuration is invalid
     */
    public Node start() {
        validate();
        return Node.start(this, BrokerAddresses.parse(amqpUrl).spreadBy(application + "@" + host));
    }
}
