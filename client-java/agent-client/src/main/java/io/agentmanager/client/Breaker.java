package io.agentmanager.client;

import io.agentmanager.client.wire.ErrorSummary;
import io.agentmanager.client.wire.RetryMath;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The per-launch-setting breaker (docs/concepts.md, Breaker): consecutive failures since the
 * last success; trips at N in a row of one error type or M of any. A message that already
 * failed in the run does not count again. Guarded by its own monitor.
 */
final class Breaker {
    private static final int LAST_ERRORS = 5;

    private long m;
    private long n;
    private long consecutive;
    private long sameType;
    private final ArrayDeque<ErrorSummary> last = new ArrayDeque<>();
    private final Set<Long> failedMessages = new HashSet<>();

    /** A trip: the streak that ended it. */
    record Trip(long consecutive, long sameType, List<ErrorSummary> lastErrors) {
    }

    Breaker(long m) {
        setThreshold(m);
    }

    synchronized void setThreshold(long m) {
        this.m = Math.max(1, m);
        this.n = RetryMath.sameTypeThreshold(this.m);
    }

    synchronized void success() {
        consecutive = 0;
        sameType = 0;
        last.clear();
        failedMessages.clear();
    }

    /** Counts one failure; returns the trip (and resets) when a threshold is reached. */
    synchronized Trip failure(String errorType, String message, Long dataMessage) {
        if (dataMessage != null && !failedMessages.add(dataMessage)) {
            return null;
        }
        boolean same = !last.isEmpty() && last.peekLast().errorType().equals(errorType);
        sameType = same ? sameType + 1 : 1;
        consecutive++;
        if (last.size() == LAST_ERRORS) {
            last.pollFirst();
        }
        last.addLast(new ErrorSummary(errorType, message));
        if (sameType >= n || consecutive >= m) {
            Trip trip = new Trip(consecutive, sameType, List.copyOf(last));
            success();
            return trip;
        }
        return null;
    }
}
