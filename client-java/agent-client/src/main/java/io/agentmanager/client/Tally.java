package io.agentmanager.client;

import io.agentmanager.client.wire.Counters;
import java.util.concurrent.atomic.AtomicLong;

/** Message counters of a launch setting on this node or of one activation. Thread-safe. */
final class Tally {
    final AtomicLong processed = new AtomicLong();
    final AtomicLong failed = new AtomicLong();
    final AtomicLong retried = new AtomicLong();
    final AtomicLong deadLettered = new AtomicLong();

    Counters counters() {
        return new Counters(processed.get(), failed.get(), retried.get(), deadLettered.get());
    }
}
