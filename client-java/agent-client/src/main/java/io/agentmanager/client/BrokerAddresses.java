package io.agentmanager.client;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The broker members a node may connect to: one AMQP URL or a cluster's members as a
 * comma-separated list. Each connection attempt goes to the next member; nodes start at
 * different members (by application and host). Thread-safe.
 */
public final class BrokerAddresses {
    private final List<String> urls;
    private final AtomicInteger next = new AtomicInteger();

    private BrokerAddresses(List<String> urls) {
        this.urls = List.copyOf(urls);
    }

    /**
     * Reads one URL or a comma-separated list ({@code amqp://} or {@code amqps://} each).
     *
     * @param list the text
     * @return the members
     * @throws IllegalArgumentException naming the first bad entry (password hidden)
     */
    public static BrokerAddresses parse(String list) {
        if (list == null || list.isBlank()) {
            throw new IllegalArgumentException(
                    "no broker address given (expected amqp://… or a comma-separated list of them)");
        }
        List<String> urls = new ArrayList<>();
        String[] parts = list.split(",", -1);
        for (int i = 0; i < parts.length; i++) {
            String raw = parts[i].trim();
            String where = "address " + (i + 1) + " of the list (`" + redact(raw) + "`): ";
            int sep = raw.indexOf("://");
            if (sep < 0) {
                throw new IllegalArgumentException(where + "not a URL (expected amqp://host:port/vhost)");
            }
            String scheme = raw.substring(0, sep);
            if (!scheme.equals("amqp") && !scheme.equals("amqps")) {
                throw new IllegalArgumentException(where + "scheme `" + scheme
                        + "` is not supported (expected amqp:// or amqps://)");
            }
            try {
                URI uri = new URI(raw);
                if (uri.getHost() == null || uri.getHost().isEmpty()) {
                    throw new IllegalArgumentException(where + "it names no host");
                }
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException(where + e.getMessage(), e);
            }
            urls.add(raw);
        }
        return new BrokerAddresses(urls);
    }

    /**
     * Starts at the member {@code key} picks, so clients spread over a cluster.
     *
     * @param key e.g. {@code app@host}
     * @return this
     */
    public BrokerAddresses spreadBy(String key) {
        next.set(Math.floorMod(key.hashCode(), urls.size()));
        return this;
    }

    /**
     * The member to try now; the next call gives the next member.
     *
     * @return a URL
     */
    public String nextUrl() {
        return urls.get(Math.floorMod(next.getAndIncrement(), urls.size()));
    }

    /**
     * The members, in the order given.
     *
     * @return the URLs
     */
    public List<String> urls() {
        return urls;
    }

    /**
     * The URL without its password, for logs.
     *
     * @param url a URL
     * @return {@code amqp://user:***@host...}
     */
    public static String redact(String url) {
        int sep = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (sep < 0 || at < sep) {
            return url;
        }
        String userinfo = url.substring(sep + 3, at);
        int colon = userinfo.indexOf(':');
        if (colon < 0) {
            return url;
        }
        return url.substring(0, sep + 3) + userinfo.substring(0, colon) + ":***" + url.substring(at);
    }
}
