#!/usr/bin/env bash
# A three-node RabbitMQ cluster on this machine, beside the system broker, for the fault tests
# (docs/operations.md, "Scaling out"). Each node keeps its data, logs and pid under DIR.
#
#   scripts/cluster.sh start DIR        start three nodes and join them (AMQP on 5781-5783, every
#                                       interface)
#   scripts/cluster.sh urls             the AM_AMQP_URL of the cluster (its three members)
#   scripts/cluster.sh kill DIR N       kill -9 node N (1-3), as a crash would
#   scripts/cluster.sh restart DIR N    start node N again; it rejoins with its data
#   scripts/cluster.sh leader DIR QUEUE the node number leading a quorum queue
#   scripts/cluster.sh queues PREFIX    the queues named PREFIX.*: ready, unacknowledged,
#                                       consumers, leader; then their consumers' channels
#   scripts/cluster.sh stop [DIR]       kill every node of the cluster and remove DIR
#
# AM_CLUSTER_PORT moves the ports (AMQP base+1..3, Erlang distribution base+20001..3) and
# AM_CLUSTER_NAME the node names (<name>1@localhost, ...), for two clusters on one machine.
. "$(dirname "$0")/lib.sh"

BASE="${AM_CLUSTER_PORT:-5780}"
NAME="${AM_CLUSTER_NAME:-amfault}"

node() { echo "${NAME}$1@localhost"; }
amqp_port() { echo $((BASE + $1)); }

ctl() { as_root rabbitmqctl -q -n "$(node "$1")" "${@:2}"; }

start_node() {
  local dir=$1 i=$2
  # The broker runs as user rabbitmq (Debian's wrapper switches to it): its files are its own.
  as_root env RABBITMQ_NODENAME="$(node "$i")" RABBITMQ_CONFIG_FILE="$dir/n$i/rabbitmq.conf" \
    RABBITMQ_DIST_PORT=$((BASE + 20000 + i)) RABBITMQ_MNESIA_BASE="$dir/n$i/mnesia" \
    RABBITMQ_LOG_BASE="$dir/n$i/log" RABBITMQ_PID_FILE="$dir/n$i/pid" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/n$i/plugins" \
    setsid rabbitmq-server >>"$dir/out$i.log" 2>&1 </dev/null &
}

await_node() {
  local i=$1
  # await_startup fails at once while the node is not registered yet: ask again.
  for _ in $(seq 1 60); do
    ctl "$i" await_startup --timeout 10 >/dev/null 2>&1 && port_open "$(amqp_port "$i")" && return 0
    sleep 1
  done
  echo "cluster node $(node "$i") did not start; see its log under its directory" >&2
  return 1
}

# The pids of node N's broker, found by the node name in their environment: the command line
# does not hold it, and a node started by an earlier run that was killed has its pid file in a
# directory this run does not know.
node_pids() {
  local p
  for p in /proc/[0-9]*; do
    as_root grep -qsxz "RABBITMQ_NODENAME=$(node "$1")" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
  done
  return 0
}

kill_node() {
  local dir=$1 i=$2 pid
  pid=$(cat "$dir/n$i/pid" 2>/dev/null || true)
  [ -n "$pid" ] && as_root kill -9 "$pid" 2>/dev/null || true
  for pid in $(node_pids "$i"); do as_root kill -9 "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    port_open "$(amqp_port "$i")" || return 0
    sleep 0.1
  done
}

case "${1:-}" in
  start)
    dir=${2:?usage: cluster.sh start DIR}
    command -v rabbitmq-server >/dev/null || [ -x /usr/sbin/rabbitmq-server ] || apt_install rabbitmq-server
    mkdir -p "$dir"
    for i in 1 2 3; do
      kill_node "$dir" "$i"
      mkdir -p "$dir/n$i/mnesia" "$dir/n$i/log"
      touch "$dir/n$i/plugins"
      # Every interface: a node in a network namespace of its own reaches it through its link.
      printf 'listeners.tcp.default = %s\nloopback_users = none\n' "$(amqp_port "$i")" >"$dir/n$i/rabbitmq.conf"
    done
    as_root chown -R rabbitmq:rabbitmq "$dir"
    for i in 1 2 3; do start_node "$dir" "$i"; done
    for i in 1 2 3; do await_node "$i"; done
    for i in 2 3; do
      ctl "$i" stop_app
      ctl "$i" join_cluster "$(node 1)"
      ctl "$i" start_app
    done
    ;;
  urls)
    echo "amqp://guest:guest@127.0.0.1:$(amqp_port 1)/%2f,amqp://guest:guest@127.0.0.1:$(amqp_port 2)/%2f,amqp://guest:guest@127.0.0.1:$(amqp_port 3)/%2f"
    ;;
  kill)
    kill_node "${2:?DIR}" "${3:?N}"
    ;;
  restart)
    start_node "${2:?DIR}" "${3:?N}"
    await_node "$3"
    ;;
  leader)
    dir=${2:?DIR} queue=${3:?QUEUE}
    # Asked of any node that answers; the leader is named as <name>N@localhost.
    for i in 1 2 3; do
      out=$(ctl "$i" list_queues --no-table-headers name leader 2>/dev/null) || continue
      leader=$(printf '%s\n' "$out" | awk -v q="$queue" -F'\t' '$1 == q { print $2 }')
      [ -n "$leader" ] || continue
      echo "${leader%@localhost}" | sed "s/^${NAME}//"
      exit 0
    done
    echo "no node names a leader of $queue" >&2
    exit 1
    ;;
  queues)
    prefix=${2:?PREFIX}
    for i in 1 2 3; do
      out=$(ctl "$i" list_queues --no-table-headers name messages_ready messages_unacknowledged \
        consumers leader 2>/dev/null) || continue
      printf '%s\n' "$out" | awk -v p="$prefix." -F'\t' 'index($1, p) == 1'
      ctl "$i" list_consumers --no-table-headers queue_name channel_pid prefetch_count active \
        2>/dev/null | awk -v p="$prefix." -F'\t' 'index($1, p) == 1 { print "consumer\t" $0 }'
      exit 0
    done
    echo "no node of the cluster answers" >&2
    exit 1
    ;;
  stop)
    # Without DIR: every node of this name, wherever an earlier run left it.
    dir=${2:-}
    for i in 1 2 3; do kill_node "$dir" "$i"; done
    [ -z "$dir" ] || as_root rm -rf "$dir"
    ;;
  *)
    sed -n '2,14p' "$0" >&2
    exit 2
    ;;
esac
