package io.agentmanager.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link Message#redelivered()} as the Rust node's {@code Message::redelivered}. */
class MessageTest {

    private static Message message(long attempt, long unavailable, boolean brokerFlag) {
        return new Message("{}".getBytes(), Map.of("x-am-attempt", attempt), "m-1", attempt, unavailable, brokerFlag);
    }

    @Test
    void redeliveredMeansDeliveredBeforeInAnyWay() {
        assertFalse(message(1, 0, false).redelivered(), "a first delivery");
        assertTrue(message(2, 0, false).redelivered(), "a retry copy");
        assertTrue(message(1, 1, false).redelivered(), "answered temporarily unavailable before");
        assertTrue(message(1, 0, true).redelivered(), "the broker's redelivery after a node died");
        assertFalse(message(2, 1, false).brokerRedelivered(), "the broker's flag alone");
        assertTrue(message(1, 0, true).brokerRedelivered());
        assertEquals(3, message(2, 1, false).deliveries());
    }
}
