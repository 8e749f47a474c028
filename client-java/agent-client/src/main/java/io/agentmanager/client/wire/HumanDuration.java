package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Objects;

/**
 * A duration as operators write it and as it travels: humantime text such as {@code 500ms},
 * {@code 30s}, {@code 1h 30m}, {@code 1day}. Reads what Rust's {@code humantime} reads (units
 * {@code ns us ms s m h d w M y} and their long forms; {@code 1month} = 30.44 days =
 * 2 630 016 s, {@code 1year} = 365.25 days = 31 557 600 s) and also a JSON integer of
 * milliseconds; writes what {@code humantime::format_duration} writes.
 *
 * @param value the duration (never negative)
 */
public record HumanDuration(Duration value) implements Comparable<HumanDuration> {

    /** One year, as humantime counts it. */
    static final long YEAR_SECONDS = 31_557_600L;
    /** One month, as humantime counts it. */
    static final long MONTH_SECONDS = 2_630_016L;
    private static final long DAY_SECONDS = 86_400L;

    /**
     * A duration.
     *
     * @param value the duration; not negative
     */
    public HumanDuration {
        Objects.requireNonNull(value, "value");
        if (value.isNegative()) {
            throw new IllegalArgumentException("a duration cannot be negative: " + value);
        }
    }

    /**
     * A duration of whole milliseconds.
     *
     * @param millis milliseconds
     * @return the duration
     */
    public static HumanDuration ofMillis(long millis) {
        return new HumanDuration(Duration.ofMillis(millis));
    }

    /**
     * A duration of whole seconds.
     *
     * @param seconds seconds
     * @return the duration
     */
    public static HumanDuration ofSeconds(long seconds) {
        return new HumanDuration(Duration.ofSeconds(seconds));
    }

    /**
     * Reads humantime text ({@code 1h 30m}), or plain milliseconds ({@code 1500}).
     *
     * @param text the text
     * @return the duration
     * @throws IllegalArgumentException with a hint when the text is not a duration
     */
    public static HumanDuration parse(String text) {
        String t = text == null ? "" : text.trim();
        if (t.isEmpty()) {
            throw new IllegalArgumentException(
                    "a duration is required, e.g. `30s`, `5m` or `1h 30m`");
        }
        try {
            return new HumanDuration(parseHumantime(t));
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new IllegalArgumentException("`" + t + "` is not a duration (" + e.getMessage()
                    + "); write e.g. `30s`, `5m` or `1h 30m`", e);
        }
    }

    /**
     * Reads a JSON value: humantime text or an integer of milliseconds.
     *
     * @param node the JSON value
     * @return the duration
     */
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    public static HumanDuration fromJson(JsonNode node) {
        if (node != null && node.isIntegralNumber() && node.canConvertToLong() && node.asLong() >= 0) {
            return ofMillis(node.asLong());
        }
        if (node != null && node.isTextual()) {
            return parse(node.textValue());
        }
        throw new IllegalArgumentException("a duration is text such as `30s` or an integer of "
                + "milliseconds, not " + node);
    }

    private static Duration parseHumantime(String s) {
        if (s.chars().allMatch(Character::isDigit)) {
            long n = Long.parseLong(s);
            if (n == 0) {
                return Duration.ZERO;
            }
            throw new IllegalArgumentException("time unit needed, for example " + s + "sec or "
                    + s + "ms");
        }
        Duration total = Duration.ZERO;
        int i = 0;
        int n = s.length();
        while (i < n) {
            while (i < n && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
            if (i >= n) {
                break;
            }
            int start = i;
            while (i < n && Character.isDigit(s.charAt(i))) {
                i++;
            }
            if (start == i) {
                throw new IllegalArgumentException("expected number at " + start);
            }
            long amount = Long.parseLong(s.substring(start, i));
            while (i < n && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
            int unitStart = i;
            while (i < n && !Character.isDigit(s.charAt(i)) && !Character.isWhitespace(s.charAt(i))) {
                i++;
            }
            String unit = s.substring(unitStart, i);
            if (unit.isEmpty()) {
                throw new IllegalArgumentException("time unit needed, for example " + amount
                        + "sec or " + amount + "ms");
            }
            total = total.plus(unit(unit, amount));
        }
        return total;
    }

    private static Duration unit(String unit, long n) {
        switch (unit) {
            case "nanos": case "nsec": case "ns":
                return Duration.ofNanos(n);
            case "usec": case "us": case "µs":
                return Duration.ofNanos(Math.multiplyExact(n, 1_000L));
            case "millis": case "msec": case "ms":
                return Duration.ofMillis(n);
            case "seconds": case "second": case "secs": case "sec": case "s":
                return Duration.ofSeconds(n);
            case "minutes": case "minute": case "min": case "mins": case "m":
                return Duration.ofSeconds(Math.multiplyExact(n, 60L));
            case "hours": case "hour": case "hr": case "hrs": case "h":
                return Duration.ofSeconds(Math.multiplyExact(n, 3_600L));
            case "days": case "day": case "d":
                return Duration.ofSeconds(Math.multiplyExact(n, DAY_SECONDS));
            case "weeks": case "week": case "w":
                return Duration.ofSeconds(Math.multiplyExact(n, 7 * DAY_SECONDS));
            case "months": case "month": case "M":
                return Duration.ofSeconds(Math.multiplyExact(n, MONTH_SECONDS));
            case "years": case "year": case "y":
                return Duration.ofSeconds(Math.multiplyExact(n, YEAR_SECONDS));
            default:
                throw new IllegalArgumentException("unknown time unit `" + unit + "`, supported "
                        + "units: ns, us, ms, sec, min, hours, days, weeks, months, years "
                        + "(and few variations)");
        }
    }

    /**
     * Whole milliseconds, truncated (as Rust's {@code Duration::as_millis}).
     *
     * @return milliseconds
     */
    public long toMillis() {
        return value.toMillis();
    }

    /**
     * Whether the duration is zero.
     *
     * @return true for zero
     */
    public boolean isZero() {
        return value.isZero();
    }

    /**
     * The humantime text ({@code 1h 30m}, {@code 500ms}, {@code 0s}).
     *
     * @return the text
     */
    @JsonValue
    @Override
    public String toString() {
        if (value.isZero()) {
            return "0s";
        }
        long secs = value.getSeconds();
        int nanos = value.getNano();
        long years = secs / YEAR_SECONDS;
        long yRem = secs % YEAR_SECONDS;
        long months = yRem / MONTH_SECONDS;
        long mRem = yRem % MONTH_SECONDS;
        long days = mRem / DAY_SECONDS;
        long dRem = mRem % DAY_SECONDS;
        StringBuilder out = new StringBuilder();
        item(out, years, "year", true);
        item(out, months, "month", true);
        item(out, days, "day", true);
        item(out, dRem / 3_600, "h", false);
        item(out, dRem % 3_600 / 60, "m", false);
        item(out, dRem % 60, "s", false);
        item(out, nanos / 1_000_000, "ms", false);
        item(out, nanos / 1_000 % 1_000, "us", false);
        item(out, nanos % 1_000, "ns", false);
        return out.toString();
    }

    private static void item(StringBuilder out, long n, String unit, boolean plural) {
        if (n == 0) {
            return;
        }
        if (out.length() > 0) {
            out.append(' ');
        }
        out.append(n).append(unit);
        if (plural && n > 1) {
            out.append('s');
        }
    }

    @Override
    public int compareTo(HumanDuration o) {
        return value.compareTo(o.value);
    }
}
