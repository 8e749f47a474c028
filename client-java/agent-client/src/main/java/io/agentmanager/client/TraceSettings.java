package io.agentmanager.client;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where and how the node exports its spans: OTLP over HTTP with the JSON encoding
 * ({@code http/json}). Immutable; {@link #off()} (the builder's default) exports nothing and
 * adds nothing to messages. {@link #fromEnvironment(String)} reads the standard OpenTelemetry
 * variables, as the Rust node does:
 *
 * <ul>
 *   <li>{@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} (the URL as is), else
 *       {@code OTEL_EXPORTER_OTLP_ENDPOINT} + {@code /v1/traces}; neither set, or
 *       {@code OTEL_SDK_DISABLED=true}: off;
 *   <li>{@code OTEL_SERVICE_NAME}, else {@code service.name} in {@code OTEL_RESOURCE_ATTRIBUTES}
 *       (whose other attributes go to the resource too), else the program's default;
 *   <li>{@code OTEL_EXPORTER_OTLP_[TRACES_]HEADERS}, {@code OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT};
 *   <li>{@code OTEL_BSP_SCHEDULE_DELAY}, {@code OTEL_BSP_MAX_QUEUE_SIZE},
 *       {@code OTEL_BSP_MAX_EXPORT_BATCH_SIZE}.
 * </ul>
 *
 * <p>A value that cannot be read is logged and replaced by its default (an unusable endpoint
 * turns traces off): as the OpenTelemetry specification asks, telemetry never stops the
 * application.
 */
public final class TraceSettings {
    private static final Logger LOG = LoggerFactory.getLogger(TraceSettings.class);
    private static final TraceSettings OFF = new TraceSettings(null, "", Map.of(), Map.of(),
            Duration.ofSeconds(10), 2048, 512, Duration.ofSeconds(5));

    private final URI endpoint;
    private final String serviceName;
    private final Map<String, String> resource;
    private final Map<String, String> headers;
    private final Duration exportTimeout;
    private final int maxQueueSize;
    private final int maxExportBatchSize;
    private final Duration scheduleDelay;

    private TraceSettings(URI endpoint, String serviceName, Map<String, String> resource, Map<String, String> headers,
            Duration exportTimeout, int maxQueueSize, int maxExportBatchSize, Duration scheduleDelay) {
        this.endpoint = endpoint;
        this.serviceName = serviceName;
        this.resource = Collections.unmodifiableMap(new LinkedHashMap<>(resource));
        this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        this.exportTimeout = exportTimeout;
        this.maxQueueSize = maxQueueSize;
        this.maxExportBatchSize = Math.min(maxExportBatchSize, maxQueueSize);
        this.scheduleDelay = scheduleDelay;
    }

    /**
     * No traces: nothing exported, no span kept, no trace header added to reports.
     *
     * @return the settings
     */
    public static TraceSettings off() {
        return OFF;
    }

    /**
     * Spans exported to {@code tracesEndpoint} (the full URL, such as
     * {@code http://collector:4318/v1/traces}) under the service {@code serviceName}, with the
     * default batching (5 s, 512 spans a request, 2048 waiting at most).
     *
     * @param tracesEndpoint an {@code http} or {@code https} URL
     * @param serviceName the resource's {@code service.name}
     * @return the settings
     * @throws IllegalArgumentException when the URL is not http(s)
     */
    public static TraceSettings to(URI tracesEndpoint, String serviceName) {
        Objects.requireNonNull(tracesEndpoint, "tracesEndpoint");
        String scheme = tracesEndpoint.getScheme() == null ? "" : tracesEndpoint.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || tracesEndpoint.getHost() == null) {
            throw new IllegalArgumentException("not an http(s) URL: " + tracesEndpoint);
        }
        return OFF.copy(tracesEndpoint, Objects.requireNonNull(serviceName, "serviceName"), OFF.resource,
                OFF.headers, OFF.exportTimeout, OFF.maxQueueSize, OFF.maxExportBatchSize, OFF.scheduleDelay);
    }

    /**
     * The settings the process's environment describes (see the class description).
     *
     * @param defaultServiceName the service's name when the variables do not give one
     * @return the settings, {@link #off()} unless an endpoint is set
     */
    public static TraceSettings fromEnvironment(String defaultServiceName) {
        return fromVariables(System::getenv, defaultServiceName);
    }

    /**
     * As {@link #fromEnvironment(String)}, reading each variable from {@code vars}; a blank value
     * counts as unset.
     *
     * @param vars variable name to value (null when unset)
     * @param defaultServiceName the service's name when the variables do not give one
     * @return the settings
     */
    public static TraceSettings fromVariables(Function<String, String> vars, String defaultServiceName) {
        Function<String, String> var = name -> {
            String v = vars.apply(name);
            return v == null || v.isBlank() ? null : v.trim();
        };
        if ("true".equalsIgnoreCase(var.apply("OTEL_SDK_DISABLED"))) {
            return OFF;
        }
        String variable = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
        String raw = var.apply(variable);
        String url = raw;
        if (raw == null && var.apply("OTEL_EXPORTER_OTLP_ENDPOINT") != null) {
            variable = "OTEL_EXPORTER_OTLP_ENDPOINT";
            raw = var.apply(variable);
            url = raw + (raw.endsWith("/") ? "v1/traces" : "/v1/traces");
        }
        if (raw == null) {
            return OFF;
        }
        URI endpoint;
        try {
            endpoint = new URI(url);
            to(endpoint, "");
        } catch (URISyntaxException | IllegalArgumentException e) {
            LOG.warn("{}: `{}` is not an http(s) URL; traces are not exported", variable, raw);
            return OFF;
        }
        String protocol = var.apply("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
        if (protocol == null) {
            protocol = var.apply("OTEL_EXPORTER_OTLP_PROTOCOL");
        }
        if (protocol != null && !protocol.equals("http/json")) {
            LOG.warn("OTEL_EXPORTER_OTLP_PROTOCOL: `{}` is not supported by the Java node, which sends http/json",
                    protocol);
        }
        Map<String, String> resource = pairs("OTEL_RESOURCE_ATTRIBUTES", var.apply("OTEL_RESOURCE_ATTRIBUTES"));
        String service = var.apply("OTEL_SERVICE_NAME");
        if (service == null) {
            service = resource.get("service.name");
        }
        resource.remove("service.name");
        Map<String, String> headers = pairs("OTEL_EXPORTER_OTLP_HEADERS", var.apply("OTEL_EXPORTER_OTLP_HEADERS"));
        headers.putAll(pairs("OTEL_EXPORTER_OTLP_TRACES_HEADERS", var.apply("OTEL_EXPORTER_OTLP_TRACES_HEADERS")));
        String timeoutVar = var.apply("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") != null
                ? "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT" : "OTEL_EXPORTER_OTLP_TIMEOUT";
        long timeout = number(var, timeoutVar, OFF.exportTimeout.toMillis(), 1);
        int queue = (int) number(var, "OTEL_BSP_MAX_QUEUE_SIZE", OFF.maxQueueSize, 1);
        int batch = (int) number(var, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", OFF.maxExportBatchSize, 1);
        long delay = number(var, "OTEL_BSP_SCHEDULE_DELAY", OFF.scheduleDelay.toMillis(), 0);
        return OFF.copy(endpoint, service != null ? service : Objects.requireNonNull(defaultServiceName),
                resource, headers, Duration.ofMillis(timeout), queue, batch, Duration.ofMillis(delay));
    }

    /** A whole number of at least {@code min}, or the default (logged) when it is not one. */
    private static long number(Function<String, String> var, String name, long dflt, long min) {
        String raw = var.apply(name);
        if (raw == null) {
            return dflt;
        }
        try {
            long n = Long.parseLong(raw);
            if (n >= min && n <= Integer.MAX_VALUE) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Reported below, with the default taken instead.
        }
        LOG.warn("{}: `{}` is not a whole number of at least {}; using {}", name, raw, min, dflt);
        return dflt;
    }

    /**
     * The {@code key=value,key=value} lists of {@code OTEL_RESOURCE_ATTRIBUTES} and the header
     * variables, values percent-decoded. The specification discards the whole list when any of
     * it cannot be read, so a half-read resource never mislabels spans.
     */
    static Map<String, String> pairs(String name, String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw == null) {
            return out;
        }
        for (String item : raw.split(",")) {
            if (item.isBlank()) {
                continue;
            }
            int eq = item.indexOf('=');
            String key = eq < 0 ? "" : item.substring(0, eq).trim();
            String value = eq < 0 ? null : percentDecode(item.substring(eq + 1).trim());
            if (key.isEmpty() || value == null) {
                LOG.warn("{}: `{}` is not a list of key=value; ignored", name, raw);
                return new LinkedHashMap<>();
            }
            out.put(key, value);
        }
        return out;
    }

    /** Percent-decoding of a UTF-8 value ('+' stays '+'); null when malformed. */
    private static String percentDecode(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= s.length()) {
                    return null;
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out.write(hi * 16 + lo);
                i += 2;
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                out.write(b, 0, b.length);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private TraceSettings copy(URI endpoint, String serviceName, Map<String, String> resource,
            Map<String, String> headers, Duration exportTimeout, int maxQueueSize, int maxExportBatchSize,
            Duration scheduleDelay) {
        return new TraceSettings(endpoint, serviceName, resource, headers, exportTimeout, maxQueueSize,
                maxExportBatchSize, scheduleDelay);
    }

    /**
     * These settings with one more resource attribute ({@code service.name} renames the service).
     *
     * @param key the attribute's key
     * @param value its value
     * @return new settings
     */
    public TraceSettings withResourceAttribute(String key, String value) {
        if ("service.name".equals(key)) {
            return copy(endpoint, Objects.requireNonNull(value), resource, headers, exportTimeout, maxQueueSize,
                    maxExportBatchSize, scheduleDelay);
        }
        Map<String, String> r = new LinkedHashMap<>(resource);
        r.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return copy(endpoint, serviceName, r, headers, exportTimeout, maxQueueSize, maxExportBatchSize,
                scheduleDelay);
    }

    /**
     * These settings with one more HTTP header on every export request (a collector's token).
     *
     * @param name the header's name
     * @param value its value
     * @return new settings
     */
    public TraceSettings withHeader(String name, String value) {
        Map<String, String> h = new LinkedHashMap<>(headers);
        h.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return copy(endpoint, serviceName, resource, h, exportTimeout, maxQueueSize, maxExportBatchSize,
                scheduleDelay);
    }

    /**
     * These settings with other batching: spans are sent every {@code delay}, or as soon as
     * {@code maxBatch} are waiting; beyond {@code maxQueue} waiting, new spans are dropped and
     * counted.
     *
     * @param delay the longest a span waits (at least 0)
     * @param maxBatch spans in one request (at most {@code maxQueue})
     * @param maxQueue spans waiting at most
     * @return new settings
     */
    public TraceSettings withBatching(Duration delay, int maxBatch, int maxQueue) {
        if (delay.isNegative() || maxBatch < 1 || maxQueue < 1) {
            throw new IllegalArgumentException("batching: a delay ≥ 0 and sizes ≥ 1");
        }
        return copy(endpoint, serviceName, resource, headers, exportTimeout, maxQueue, maxBatch, delay);
    }

    /**
     * These settings with another timeout for one export request (default 10 s).
     *
     * @param timeout the timeout
     * @return new settings
     */
    public TraceSettings withExportTimeout(Duration timeout) {
        return copy(endpoint, serviceName, resource, headers, Objects.requireNonNull(timeout), maxQueueSize,
                maxExportBatchSize, scheduleDelay);
    }

    /**
     * Whether spans are exported.
     *
     * @return true when an endpoint is set
     */
    public boolean enabled() {
        return endpoint != null;
    }

    /**
     * The URL spans are posted to, or null when off.
     *
     * @return the URL
     */
    public URI endpoint() {
        return endpoint;
    }

    /**
     * The resource's {@code service.name}.
     *
     * @return the name (empty when off)
     */
    public String serviceName() {
        return serviceName;
    }

    /**
     * The resource's other attributes.
     *
     * @return the attributes, in order
     */
    public Map<String, String> resourceAttributes() {
        return resource;
    }

    /**
     * Extra HTTP headers of every export request.
     *
     * @return the headers
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * The timeout of one export request.
     *
     * @return the timeout
     */
    public Duration exportTimeout() {
        return exportTimeout;
    }

    /**
     * Spans waiting at most; more are dropped and counted.
     *
     * @return the size
     */
    public int maxQueueSize() {
        return maxQueueSize;
    }

    /**
     * Spans in one request at most, and the number waiting that triggers an export at once.
     *
     * @return the size
     */
    public int maxExportBatchSize() {
        return maxExportBatchSize;
    }

    /**
     * The longest a span waits before it is sent.
     *
     * @return the delay
     */
    public Duration scheduleDelay() {
        return scheduleDelay;
    }

    @Override
    public String toString() {
        return enabled() ? "traces to " + endpoint + " as " + serviceName : "traces off";
    }
}
