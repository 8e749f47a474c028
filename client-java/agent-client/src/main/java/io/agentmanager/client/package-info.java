/**
 * The Java node client of Agent Manager: {@link io.agentmanager.client.Node} makes an
 * application a node that runs agents launched by the manager over RabbitMQ.
 */
package io.agentmanager.client;
