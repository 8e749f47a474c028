/**
 * Every broker name and argument of the protocol ({@code am_domain::topology::Layout}) and
 * their declaration through amqp-client. Nodes declare only their control topology; the
 * manager declares the data topology, which tests declare themselves with {@link
 * io.agentmanager.client.topology.Layout#launchObjects}.
 */
package io.agentmanager.client.topology;
