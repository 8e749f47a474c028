package io.agentmanager.client;

import io.agentmanager.client.wire.ActivationResult;

/**
 * Callbacks for metrics and health checks. Every method has an empty default; they are called
 * on the node's threads and must return quickly and not throw (an exception is logged and
 * ignored).
 */
public interface NodeListener {
    /**
     * The node connected to a broker member and published itself.
     *
     * @param broker the member's URL, password hidden
     */
    default void connected(String broker) {
    }

    /**
     * The node lost its broker connection.
     *
     * @param reason why
     */
    default void disconnected(String reason) {
    }

    /**
     * An activation started running.
     *
     * @param launchSetting its launch setting
     * @param activationId the activation
     */
    default void activationStarted(String launchSetting, String activationId) {
    }

    /**
     * An activation ended.
     *
     * @param launchSetting its launch setting
     * @param activationId the activation
     * @param result how
     */
    default void activationFinished(String launchSetting, String activationId, ActivationResult result) {
    }

    /**
     * A data message was handled.
     *
     * @param launchSetting its launch setting
     * @param succeeded whether the agent succeeded
     * @param disposition on failure: {@code retry}, {@code park} or {@code dead-letter}; else null
     */
    default void messageHandled(String launchSetting, boolean succeeded, String disposition) {
    }
}
