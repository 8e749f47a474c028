package io.agentmanager.client;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * The node's capacity: a launch takes a slot, or waits for one in arrival order. Waiting is a
 * future, so a waiting launch can be cancelled without a thread blocked on it. Thread-safe.
 */
final class SlotPool {
    private int free;
    private final ArrayDeque<CompletableFuture<Void>> waiters = new ArrayDeque<>();

    SlotPool(int capacity) {
        this.free = capacity;
    }

    /** A slot now, or false. */
    synchronized boolean tryTake() {
        if (free > 0 && waiters.isEmpty()) {
            free--;
            return true;
        }
        return false;
    }

    /** A slot when one frees (completed at once when one is free). */
    synchronized CompletableFuture<Void> take() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        if (free > 0 && waiters.isEmpty()) {
            free--;
            f.complete(null);
        } else {
            waiters.addLast(f);
        }
        return f;
    }

    /** Gives up a wait; a slot it got meanwhile is given back. */
    synchronized void abandon(CompletableFuture<Void> wait) {
        if (!waiters.remove(wait) && wait.isDone()) {
            give();
        }
    }

    /** Gives a slot back (to the first waiter, if any). */
    void give() {
        CompletableFuture<Void> next;
        synchronized (this) {
            next = waiters.pollFirst();
            if (next == null) {
                free++;
                return;
            }
        }
        next.complete(null);
    }
}
