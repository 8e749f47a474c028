package io.agentmanager.client;

import io.agentmanager.client.wire.Launch;

/** Counters and breaker of one launch setting on this node. Thread-safe. */
final class LaunchSettingStats {
    final Tally tally = new Tally();
    final Breaker breaker = new Breaker(Launch.DEFAULT_FAILURE_THRESHOLD);
}
