package io.agentmanager.client;

import java.util.List;

/** The node's configuration or an agent registration is invalid; lists every problem. */
public final class NodeConfigException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The problems, each naming what is wrong. */
    private final List<String> problems;

    /**
     * The problems.
     *
     * @param problems each problem
     */
    public NodeConfigException(List<String> problems) {
        super("invalid node configuration: " + String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    /**
     * Every problem.
     *
     * @return the problems
     */
    public List<String> problems() {
        return problems;
    }
}
