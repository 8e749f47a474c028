package io.agentmanager.client.wire;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Breaker and retry arithmetic the manager and the nodes must compute identically
 * ({@code am_domain::policy}). The retry delay names a wait queue the manager declared: a
 * delay 1 ms off routes a retry to an exchange that does not exist, so the f64 arithmetic,
 * the conversion to a {@code Duration} (rounded to the nearest nanosecond, as Rust's
 * {@code Duration::try_from_secs_f64}) and the truncation to whole milliseconds are reproduced
 * exactly.
 */
public final class RetryMath {

    /** Most distinct delays of a ladder (the manager's {@code MAX_WAIT_LEVELS}). */
    public static final int MAX_WAIT_LEVELS = 64;
    /** Most attempts looked at when building a ladder. */
    private static final int MAX_ATTEMPTS_SCANNED = 10_000;
    private static final BigDecimal NANOS_PER_SECOND = BigDecimal.valueOf(1_000_000_000L);
    private static final BigInteger MAX_NANOS = BigInteger.valueOf(Long.MAX_VALUE);

    private RetryMath() {
    }

    /**
     * The breaker's N for a threshold M: {@code max(1, M / 3)} (integer division).
     *
     * @param m the failure threshold
     * @return N
     */
    public static long sameTypeThreshold(long m) {
        return Math.max(1, m / 3);
    }

    /**
     * Delay before retry number {@code attempt} (1 = the first retry).
     *
     * @param policy the retry policy
     * @param attempt the attempt that failed (an unsigned 32-bit count)
     * @return the delay, capped at {@code max_delay}
     */
    public static Duration retryDelay(RetryPolicy policy, long attempt) {
        Duration initial = policy.initialDelay().value();
        Duration cap = policy.maxDelay().value();
        long exponent = Math.max(0, attempt - 1);
        if (exponent == 0) {
            return min(initial, cap);
        }
        double m = policy.multiplier();
        // Rust's f64::max ignores NaN: a NaN multiplier counts as 1.
        double multiplier = Double.isNaN(m) ? 1.0 : Math.max(m, 1.0);
        double secs = secsF64(initial) * StrictMath.pow(multiplier, (double) exponent);
        if (!Double.isFinite(secs) || secs >= secsF64(cap)) {
            return cap;
        }
        Duration d = fromSecsF64(secs);
        if (d == null) {
            return cap;
        }
        return min(max(d, initial), cap);
    }

    /**
     * The wait before retry number {@code attempt} on a manager's ladder (a launch's
     * {@code retry_steps}, protocol version 3): the {@code delay_ms} of the last step, in the
     * ladder's order, whose {@code attempt} is at most {@code attempt}; the first step when
     * {@code attempt} is smaller than every step's. An attempt below 1 counts as 1.
     *
     * @param ladder the steps (the manager sends them in ascending {@code attempt} order)
     * @param attempt the retry number (1 = the first retry; also the n-th answer "temporarily
     *     unavailable")
     * @return the delay, or empty for an empty (or null) ladder: then the policy's formula
     *     ({@link #retryDelay}) applies
     */
    public static Optional<Duration> stepDelay(List<RetryStep> ladder, long attempt) {
        if (ladder == null || ladder.isEmpty()) {
            return Optional.empty();
        }
        long a = Math.max(1, attempt);
        RetryStep chosen = null;
        for (RetryStep s : ladder) {
            if (s.attempt() <= a) {
                chosen = s;
            }
        }
        if (chosen == null) {
            chosen = ladder.get(0);
        }
        return Optional.of(Duration.ofMillis(chosen.delayMs()));
    }

    /**
     * The ladder of a retry policy, as the manager computes it ({@code policy::retry_ladder}):
     * each distinct delay of {@link #retryDelay} in whole milliseconds with the first retry that
     * waits it, in order, up to the cap (the last rung holds for every later retry).
     *
     * @param policy the retry policy
     * @return the steps, ascending
     */
    public static List<RetryStep> retryLadder(RetryPolicy policy) {
        List<RetryStep> steps = new ArrayList<>();
        for (int attempt = 1; attempt <= MAX_ATTEMPTS_SCANNED; attempt++) {
            Duration delay = retryDelay(policy, attempt);
            long ms = delay.toMillis();
            if (steps.isEmpty() || steps.get(steps.size() - 1).delayMs() != ms) {
                steps.add(RetryStep.of(attempt, ms));
            }
            if (delay.compareTo(policy.maxDelay().value()) >= 0 || steps.size() > MAX_WAIT_LEVELS) {
                break;
            }
        }
        return List.copyOf(steps);
    }

    /**
     * Whether a message delivered {@code attempts} times leaves the retry loop.
     *
     * @param settings the dead-letter settings
     * @param retry the retry policy
     * @param attempts deliveries so far
     * @return true to dead-letter (or park)
     */
    public static boolean shouldDeadLetter(DeadLetterSettings settings, RetryPolicy retry, long attempts) {
        if (settings.policy() == DeadLetterPolicy.RETRY_FOREVER) {
            return false;
        }
        return attempts >= Math.max(1, retry.maxDeliveries());
    }

    /** Rust's {@code Duration::as_secs_f64}. */
    static double secsF64(Duration d) {
        return (double) d.getSeconds() + (double) d.getNano() / 1e9;
    }

    /** Rust's {@code Duration::try_from_secs_f64}: exact value, rounded to the nearest ns. */
    static Duration fromSecsF64(double secs) {
        if (secs < 0 || !Double.isFinite(secs)) {
            return null;
        }
        BigInteger nanos = new BigDecimal(secs).multiply(NANOS_PER_SECOND)
                .setScale(0, RoundingMode.HALF_EVEN).toBigIntegerExact();
        if (nanos.compareTo(MAX_NANOS) > 0) {
            BigInteger[] qr = nanos.divideAndRemainder(BigInteger.valueOf(1_000_000_000L));
            if (qr[0].bitLength() > 63) {
                return null;
            }
            return Duration.ofSeconds(qr[0].longValueExact(), qr[1].longValueExact());
        }
        return Duration.ofNanos(nanos.longValueExact());
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
