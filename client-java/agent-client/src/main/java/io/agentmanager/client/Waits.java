package io.agentmanager.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Sleeping that ends early when a signal completes. */
final class Waits {
    private Waits() {
    }

    /** Sleeps {@code d} unless {@code stop} completes first; true when the full time passed. */
    static boolean sleep(Duration d, CompletableFuture<?> stop) {
        try {
            stop.get(d.toMillis(), TimeUnit.MILLISECONDS);
            return false;
        } catch (TimeoutException e) {
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return false;
        }
    }
}
