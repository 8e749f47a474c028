package io.agentmanager.client.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/**
 * One error a node caught.
 *
 * @param application the application
 * @param host the host
 * @param activationId the activation
 * @param launchSetting its launch setting
 * @param agent the agent
 * @param errorType what the breaker compares
 * @param message the human message
 * @param details details (omitted when empty)
 * @param dataMessageId the data message's AMQP message id (omitted when null)
 * @param attempt delivery attempt (1 for standalone runs)
 * @param temporary the agent said the condition is temporary
 * @param disposition {@code retry}, {@code park} or {@code dead-letter} (omitted when null)
 * @param at when
 * @param reportId unique per report, kept when it is sent again (omitted when null)
 * @param replay the replay token of a replayed dead letter (omitted when null)
 */
public record FailureReport(
        @JsonProperty("application") String application,
        @JsonProperty("host") String host,
        @JsonProperty("activation_id") String activationId,
        @JsonProperty("launch_setting") String launchSetting,
        @JsonProperty("agent") String agent,
        @JsonProperty("error_type") String errorType,
        @JsonProperty("message") String message,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) @JsonProperty("details") String details,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("data_message_id") String dataMessageId,
        @JsonProperty("attempt") long attempt,
        @JsonProperty("temporary") boolean temporary,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("disposition") String disposition,
        @JsonProperty("at") Instant at,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("report_id") String reportId,
        @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("replay") ReplayToken replay)
        implements ToManager {

    /** What a node did with a failed data message. */
    public static final class Disposition {
        /** Sent to wait and be delivered again. */
        public static final String RETRY = "retry";
        /** Set aside for the park cool-down. */
        public static final String PARK = "park";
        /** Given up on: sent to the dead-letter queue. */
        public static final String DEAD_LETTER = "dead-letter";

        private Disposition() {
        }
    }
}
