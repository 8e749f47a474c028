package com.example.shop;

import io.agentmanager.client.AgentException;
import io.agentmanager.client.AgentSpec;
import io.agentmanager.client.Context;
import io.agentmanager.client.Message;
import io.agentmanager.client.MessageAgent;
import io.agentmanager.client.Node;
import io.agentmanager.client.NodeBuilder;
import io.agentmanager.client.StandaloneAgent;
import io.agentmanager.client.wire.ParamSpec;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The shop's node: {@code greet} takes messages from a data queue, {@code tally} runs when scheduled. */
public final class ShopNode {
    private static final Logger LOG = LoggerFactory.getLogger(ShopNode.class);

    private ShopNode() {
    }

    /** A message's body: {@code {"name": "Ada"}}. */
    record Greeting(String name) {
    }

    /** The parameters of {@code greet}, from its launch setting. */
    record GreetParams(String salutation) {
    }

    /** Greets whoever a message names. */
    static final class Greet implements MessageAgent<GreetParams> {
        @Override
        public void handle(Context<GreetParams> ctx, Message msg) throws Exception {
            // A body that is not a greeting fails the message: retried, then dead-lettered.
            Greeting greeting = msg.json(Greeting.class);
            if (greeting.name() == null) {
                throw new AgentException("NotAGreeting", "a greeting names someone: {\"name\": \"Ada\"}");
            }
            LOG.info("{}, {}", ctx.params().salutation(), greeting.name());
        }
    }

    /** The parameters of {@code tally}. */
    record TallyParams(int limit) {
    }

    /** Counts up to a limit, reporting progress. */
    static final class Tally implements StandaloneAgent<TallyParams> {
        @Override
        public void run(Context<TallyParams> ctx) throws Exception {
            int limit = ctx.params().limit();
            for (int i = 1; i <= limit; i++) {
                if (ctx.isCancelled()) {
                    throw new InterruptedException("tally interrupted at " + i);
                }
                ctx.progress((long) i, (long) limit, "counting");
            }
            LOG.info("counted to {}", limit);
        }
    }

    /**
     * Starts the node from the environment ({@code AM_APP}, {@code AM_HOST}, {@code AM_AMQP_URL},
     * {@code AM_PREFIX}…) and runs until the process is stopped.
     *
     * @param args unused
     * @throws InterruptedException when interrupted while running
     */
    public static void main(String[] args) throws InterruptedException {
        Node node = NodeBuilder.fromEnvironment()
                .version("1.0.0")
                .messages(AgentSpec.of("greet").title("Greet").suggestDataQueue("shop.greetings")
                        .param(ParamSpec.of("salutation", "string").withTitle("Salutation").withDefault("hello")),
                        GreetParams.class, new Greet())
                .standalone(AgentSpec.of("tally").title("Tally")
                        .param(ParamSpec.of("limit", "integer").withTitle("Count up to").withMin(1).withDefault(10)),
                        TallyParams.class, new Tally())
                .start();
        CountDownLatch closed = new CountDownLatch(1);
        // SIGTERM or Ctrl-C: a graceful, bounded stop (runs end and are reported, then the connection closes).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            node.close();
            closed.countDown();
        }, "shop-node-stop"));
        closed.await();
    }
}
