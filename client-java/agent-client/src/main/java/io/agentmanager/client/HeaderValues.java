package io.agentmanager.client;

import com.rabbitmq.client.LongString;
import java.util.Date;
import java.util.Map;

/** Reading AMQP header values of whatever type a producer chose. */
final class HeaderValues {
    private HeaderValues() {
    }

    /** A value as text, for strings, numbers, booleans and timestamps; null otherwise. */
    static String text(Object v) {
        if (v instanceof LongString || v instanceof String) {
            return v.toString();
        }
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        if (v instanceof Date d) {
            return Long.toString(d.getTime() / 1000);
        }
        return null;
    }

    /** A value as a non-negative integer, whatever integer type or numeric text; null otherwise. */
    static Long integer(Object v) {
        if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) {
            long n = ((Number) v).longValue();
            return n >= 0 ? n : null;
        }
        if (v instanceof LongString || v instanceof String) {
            try {
                long n = Long.parseLong(v.toString());
                return n >= 0 ? n : null;
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }

    /** A header as an unsigned 32-bit count, or null when absent, unreadable or too large. */
    static Long count(Map<String, Object> headers, String name) {
        if (headers == null) {
            return null;
        }
        Long n = integer(headers.get(name));
        return n != null && n <= 0xFFFF_FFFFL ? n : null;
    }
}
