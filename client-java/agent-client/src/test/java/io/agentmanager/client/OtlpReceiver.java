package io.agentmanager.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * An OTLP/HTTP JSON receiver for tests, on a free local port: every request to
 * {@code /v1/traces} is parsed with a plain Jackson mapper (nothing shared with the exporter)
 * and kept with its headers; it answers {@link #status} (200 by default).
 */
final class OtlpReceiver implements AutoCloseable {
    /** A request as received. */
    record Request(Map<String, List<String>> headers, JsonNode body) {
    }

    final List<Request> requests = new CopyOnWriteArrayList<>();
    final AtomicInteger status = new AtomicInteger(200);
    /** Counted down as each request arrives, before it is answered. */
    volatile CountDownLatch arrived = new CountDownLatch(0);
    /** Each answer waits for it (at most 10 s): a receiver that is slow to answer. */
    volatile CountDownLatch hold = new CountDownLatch(0);
    private final HttpServer server;
    private final ObjectMapper mapper = new ObjectMapper();

    OtlpReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/traces", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                JsonNode body = mapper.readTree(in);
                if ("POST".equals(exchange.getRequestMethod())) {
                    // Headers: case-insensitive lookups, as HTTP header names are.
                    requests.add(new Request(exchange.getRequestHeaders(), body));
                }
                arrived.countDown();
                try {
                    hold.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                byte[] answer = "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(status.get(), answer.length);
                exchange.getResponseBody().write(answer);
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    /** The base URL, as {@code OTEL_EXPORTER_OTLP_ENDPOINT} would give it. */
    String base() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The traces URL, as {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} would give it. */
    URI traces() {
        return URI.create(base() + "/v1/traces");
    }

    /** Every span received so far, across requests. */
    List<JsonNode> spans() {
        List<JsonNode> out = new ArrayList<>();
        for (Request r : requests) {
            for (JsonNode rs : r.body().path("resourceSpans")) {
                for (JsonNode ss : rs.path("scopeSpans")) {
                    ss.path("spans").forEach(out::add);
                }
            }
        }
        return out;
    }

    /** Waits for a span matching {@code pred}. */
    JsonNode await(String what, Duration timeout, Predicate<JsonNode> pred) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (JsonNode s : spans()) {
                if (pred.test(s)) {
                    return s;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no span " + what + " within " + timeout + "; got " + spans());
            }
            Thread.sleep(20);
        }
    }

    /** A span's attributes as key → the value's JSON object ({@code {"stringValue": …}}). */
    static Map<String, JsonNode> attributes(JsonNode span) {
        Map<String, JsonNode> out = new java.util.LinkedHashMap<>();
        span.path("attributes").forEach(a -> out.put(a.get("key").asText(), a.get("value")));
        return out;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
