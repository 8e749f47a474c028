/**
 * The JSON messages between the manager and the nodes ({@code docs/protocol.md}), the header
 * names both sides read, the broker names of an installation and the retry arithmetic both
 * sides must compute identically. Mirrors {@code am_domain::wire} of the Rust code base.
 *
 * <p>Every message travels as {@code {"v": N, "type": "...", ...}}; {@link WireCodec} reads and
 * writes them. Fields a newer sender adds are ignored at every depth.
 */
package io.agentmanager.client.wire;
