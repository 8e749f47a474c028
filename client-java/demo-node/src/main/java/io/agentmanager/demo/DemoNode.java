package io.agentmanager.demo;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentmanager.client.AgentSpec;
import io.agentmanager.client.Classifier;
import io.agentmanager.client.Node;
import io.agentmanager.client.NodeBuilder;
import io.agentmanager.client.NodeConfigException;
import io.agentmanager.client.TraceSettings;
import io.agentmanager.client.wire.ClassifierValue;
import io.agentmanager.client.wire.Concurrency;
import io.agentmanager.client.wire.HumanDuration;
import io.agentmanager.client.wire.OverlapPolicy;
import io.agentmanager.client.wire.ParamSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code demo-node}: a Java node with the demo agents of {@code client-lib/src/bin/demo-node}
 * ({@code echo}, {@code flaky}, {@code poison}, {@code sleep}, {@code fail}) and the same
 * environment: {@code AM_APP} (default {@code demo}), {@code AM_HOST}, {@code AM_AMQP_URL} (one
 * URL or a comma-separated member list), {@code AM_PREFIX}, {@code AM_CAPACITY},
 * {@code AM_QUEUE_EXPIRY}, {@code AM_HEARTBEAT} (a duration such as {@code 500ms}),
 * {@code AM_DEMO_PRODUCE}, {@code AM_DEMO_EXCHANGES}; and {@code AM_RECORD} (a file: also the
 * scripted agents of the conformance suite, {@link ScriptAgents}); traces from the standard
 * OpenTelemetry variables, the service named {@code demo-node} unless they name it. SIGTERM or Ctrl-C stops it
 * gracefully: its runs end and are reported, then it exits with status 0.
 */
public final class DemoNode {
    private static final Logger LOG = LoggerFactory.getLogger(DemoNode.class);
    /**
     * How long a graceful stop may take before the process gives up and exits with status 1:
     * more than the node's own bound ({@code close()}: the 30 s shutdown timeout, 5 s of report
     * flushing, the connection's close), so that it is only reached when something hangs.
     */
    static final Duration STOP_LIMIT = Duration.ofSeconds(90);

    private DemoNode() {
    }

    /** A thousand organisations; the first three are those of demo/catalog.json. */
    static List<ClassifierValue> organisations() {
        List<ClassifierValue> out = new ArrayList<>(List.of(new ClassifierValue("acme", "ACME Corporation"),
                new ClassifierValue("globex", "Globex"), new ClassifierValue("initech", "Initech")));
        for (int i = 4; i <= 1000; i++) {
            out.add(new ClassifierValue(String.format("org-%04d", i), "Organisation " + i));
        }
        return out;
    }

    /**
     * The demo node as the environment describes it.
     *
     * @param builder the node's builder, every agent registered
     * @param scripts the conformance suite's scripted agents ({@code AM_RECORD}), or null
     */
    record Setup(NodeBuilder builder, ScriptAgents scripts) {
    }

    /**
     * Builds the demo node from environment variables.
     *
     * @param env variable name to value (null when unset; blank counts as unset)
     * @return the builder and the scripted agents
     * @throws IllegalArgumentException naming each variable that is wrong
     */
    static Setup configure(Function<String, String> env) {
        Function<String, String> var = name -> {
            String v = env.apply(name);
            return v == null || v.isBlank() ? null : v.trim();
        };
        NodeBuilder b = NodeBuilder.fromVariables(name -> {
            String v = var.apply(name);
            return v == null && name.equals("AM_APP") ? "demo" : v;
        });
        // Named as the Rust demo node's traces are, whatever the application.
        b.traces(TraceSettings.fromVariables(env, "demo-node"));
        String heartbeat = var.apply("AM_HEARTBEAT");
        if (heartbeat != null) {
            try {
                b.heartbeatEvery(HumanDuration.parse(heartbeat).value());
            } catch (IllegalArgumentException e) {
                throw new NodeConfigException(List.of("AM_HEARTBEAT: " + e.getMessage()));
            }
        }
        java.util.function.BiFunction<String, String, ParamSpec> rate = (name, title) -> ParamSpec.of(name, "decimal")
                .withTitle(title).withDefault(0).withMin(0).withMax(1);
        b.version(DemoNode.class.getPackage().getImplementationVersion() == null ? "0.1.0"
                        : DemoNode.class.getPackage().getImplementationVersion())
                .messages(AgentSpec.of("echo").title("Echo").suggestDataQueue("demo.events")
                        .suggestConcurrency(Concurrency.MANY)
                        .param(ParamSpec.classifier("organisations", "organisations").withTitle("Organisations")
                                .asArray()), JsonNode.class, new DemoAgents.Echo())
                .messages(AgentSpec.of("flaky").title("Flaky").suggestDataQueue("demo.later")
                        .param(rate.apply("temporary_rate", "Share of temporary failures"))
                        .param(rate.apply("failure_rate", "Share of failures")),
                        DemoAgents.FlakyParams.class, new DemoAgents.Flaky())
                .messages(AgentSpec.of("poison").title("Poison").suggestDataQueue("demo.events"), JsonNode.class,
                        new DemoAgents.Poison())
                .standalone(AgentSpec.of("sleep").title("Sleep").suggestOverlap(OverlapPolicy.SKIP)
                        .param(ParamSpec.of("duration", "duration").withTitle("Duration").withDefault("10s")),
                        DemoAgents.SleepParams.class, new DemoAgents.Sleep())
                .standalone(AgentSpec.of("fail").title("Fail").suggestConcurrency(Concurrency.ANY), JsonNode.class,
                        new DemoAgents.Fail())
                .classifier(Classifier.of("sites", "Sites").value("par", "Paris").value("lyo", "Lyon")
                        .value("mrs", "Marseille"))
                .classifier(Classifier.provider("organisations", "Organisations", DemoNode::organisations));
        String record = var.apply(ScriptAgents.RECORD_VARIABLE);
        ScriptAgents scripts = null;
        if (record != null) {
            scripts = ScriptAgents.open(Path.of(record));
            scripts.register(b);
        }
        return new Setup(b, scripts);
    }

    /**
     * A graceful stop, bounded: the producer stops, the node closes (every run is asked to stop
     * at once, scripted sleeps included, and ends reported; its reports are flushed), then the
     * record file closes.
     *
     * @param node the node
     * @param scripts the scripted agents, or null
     * @param stopProducer stops the demo producer, or null
     * @param limit how long to wait for the node to close
     * @return true when the node closed within {@code limit}
     */
    static boolean stop(Node node, ScriptAgents scripts, Runnable stopProducer, Duration limit) {
        if (stopProducer != null) {
            stopProducer.run();
        }
        Thread closer = new Thread(node::close, "am-demo-close");
        closer.start();
        try {
            closer.join(Math.max(1, limit.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        boolean closed = !closer.isAlive();
        if (closed && scripts != null) {
            scripts.close();
        }
        return closed;
    }

    /**
     * Runs the demo node until SIGTERM or Ctrl-C, then stops gracefully and exits with status 0
     * (1 when the stop did not end within {@link #STOP_LIMIT}; 2 for a wrong configuration).
     *
     * @param args unused
     * @throws InterruptedException when interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        Setup setup;
        DemoProducer producer;
        Node node;
        try {
            setup = configure(System::getenv);
            producer = DemoProducer.fromEnv(setup.builder().brokerUrl(), setup.builder().hostName());
            node = setup.builder().start();
        } catch (IllegalArgumentException e) {
            System.err.println("demo-node: " + e.getMessage());
            System.exit(2);
            return;
        }
        LOG.info("demo node started; Ctrl-C or SIGTERM stops it gracefully");
        Thread producing = null;
        if (producer != null) {
            producing = new Thread(producer, "am-demo-producer");
            producing.setDaemon(true);
            producing.start();
        }
        Thread producerThread = producing;
        Runnable stopProducer = producer == null ? null : () -> {
            producer.stop();
            producerThread.interrupt();
        };
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boolean closed = stop(node, setup.scripts(), stopProducer, STOP_LIMIT);
            if (closed) {
                LOG.info("demo node stopped");
            } else {
                LOG.error("demo node not stopped within {}; exiting anyway", STOP_LIMIT);
            }
            System.out.flush();
            System.err.flush();
            // A JVM ended by a signal exits with 128 + the signal's number once its hooks ran;
            // the node stopped as asked, so say so.
            Runtime.getRuntime().halt(closed ? 0 : 1);
        }, "am-demo-shutdown"));
        new CountDownLatch(1).await();
    }
}
