package io.agentmanager.client.wire;

/** What a control message turned out to be ({@link WireCodec#decodeCommand}). */
public sealed interface DecodedCommand {

    /**
     * A command this node understands.
     *
     * @param command the command
     */
    record Understood(ToNode command) implements DecodedCommand {
    }

    /**
     * A launch whose identity is readable but whose content this node does not understand (an
     * unknown enum word of a newer manager, a value of the wrong shape): it is answered with an
     * {@code activation} report {@code skipped} with {@code reason}, never quarantined.
     *
     * @param activationId the activation
     * @param launchSetting its launch setting
     * @param fencingToken the launch's fencing token
     * @param agent the agent named, or null
     * @param reason what the node did not understand
     */
    record LaunchNotUnderstood(String activationId, String launchSetting, long fencingToken,
            String agent, String reason) implements DecodedCommand {
    }

    /**
     * Unreadable: quarantined with {@code reason}.
     *
     * @param reason why
     */
    record Unreadable(String reason) implements DecodedCommand {
    }
}
