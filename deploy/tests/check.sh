#!/usr/bin/env bash
# Checks the deployment files under deploy/ as far as one machine allows, one line per check,
# and exits non-zero when any fails. Installs what it needs (apt packages, a virtual environment
# under target/, a root file system cached under target/deploy-cache) and expects the manager
# and the demo node built (target/debug/agent-manager, target/debug/demo-node; AM_MANAGER_BIN
# and AM_NODE_BIN point elsewhere, e.g. at a release build), and two-replicas a PostgreSQL on
# 127.0.0.1:5432 that lets postgres or root in without a password. Everything it starts runs on
# a free port, under a broker prefix of its own whose queues expire (throwaway_manager_env), in a
# temporary directory (two-replicas: a database of its own, dropped afterwards), and is stopped
# by its process id on the way out.
#
#   deploy/tests/check.sh            every check
#   deploy/tests/check.sh NAME...    only those (names as printed)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

DEPLOY="$ROOT/deploy"
UNITS="$DEPLOY/systemd"
MANAGER_BIN="${AM_MANAGER_BIN:-$ROOT/target/debug/agent-manager}"
NODE_BIN="${AM_NODE_BIN:-$ROOT/target/debug/demo-node}"
# systemd-analyze takes the threshold in tenths of the 0-10 exposure it prints: 15 is 1.5, well
# inside its "OK" band (below 2.0). The units score 1.1; the rest is the network they need.
SECURITY_THRESHOLD=15
# The oldest Kubernetes the manifests are written for (the preStop sleep action is on by default
# from 1.30) and the newest the validator knows.
K8S_VERSIONS=(1.30.0 1.37.0)
# Each unit with the instance it is verified as and the executable its ExecStart names.
UNIT_INSTANCES=(agent-manager.service agent-node@demo.service agent-java-node@shop.service)

CHECK_DIR="$(mktemp -d -t am-deploy-check.XXXXXX)"
trap 'rm -rf "$CHECK_DIR"' EXIT
# Interrupted, the check under way gets to clean up after itself first.
CURRENT_CHECK=""
on_signal() {
  if [ -n "$CURRENT_CHECK" ]; then
    kill -TERM "$CURRENT_CHECK" 2>/dev/null || true
    wait "$CURRENT_CHECK" 2>/dev/null || true
  fi
  exit 130
}
trap on_signal INT TERM

# ---------------------------------------------------------------------------------------------
# Each check runs in a subshell of its own (so `set -e` holds inside it), with its output in
# $CHECK_DIR/NAME.log, shown only when it fails. `at_exit CMD` queues CMD for the end of the check,
# however it ends; `note TEXT` is what its line says besides ok.

at_exit() { CLEANUPS+=("$*"); }
run_cleanups() {
  local i
  for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do eval "${CLEANUPS[$i]}" || true; done
}
note() { printf '%s' "$*" > "$NOTE"; }
FAILED=()

run_check() {
  local name=$1 fn=$2 start=$SECONDS rc=0
  NOTE="$CHECK_DIR/$name.note"
  : > "$NOTE"
  (
    CLEANUPS=()
    trap run_cleanups EXIT
    trap 'exit 130' INT TERM
    "$fn"
  ) > "$CHECK_DIR/$name.log" 2>&1 &
  CURRENT_CHECK=$!
  wait "$CURRENT_CHECK" || rc=$?
  CURRENT_CHECK=""
  local took=$((SECONDS - start))
  if [ "$rc" -eq 0 ]; then
    printf 'ok    %-16s %4ss  %s\n' "$name" "$took" "$(cat "$NOTE")"
  else
    printf 'FAIL  %-16s %4ss  %s\n' "$name" "$took" "$(cat "$NOTE")"
    tail -n 40 "$CHECK_DIR/$name.log" | sed 's/^/      | /'
    FAILED+=("$name")
  fi
}

# Sends signal $2 to process $1 and fails unless it ends within $3 seconds; prints the seconds
# it took.
stop_process() {
  local pid=$1 signal=$2 limit=$3 start now
  start=$(date +%s%N)
  kill -s "${signal#SIG}" "$pid"
  while kill -0 "$pid" 2>/dev/null; do
    now=$(date +%s%N)
    if [ $(((now - start) / 1000000000)) -ge "$limit" ]; then
      echo "process $pid still running ${limit} s after $signal" >&2
      return 1
    fi
    sleep 0.02
  done
  now=$(date +%s%N)
  awk -v ns=$((now - start)) 'BEGIN { printf "%.2f", ns / 1e9 }'
}

# Seconds since $1 (a `date +%s%N`), to a tenth.
since() {
  local now
  now=$(date +%s%N)
  awk -v ns=$((now - $1)) 'BEGIN { printf "%.1f", ns / 1e9 }'
}

# unitfile.py's NUL-separated words into the array named $1 (a failure of unitfile.py fails
# the caller, which `mapfile < <(...)` would not).
unit_words() {
  local -n into=$1
  shift
  local words
  words=$(mktemp)
  python3 "$DEPLOY/tests/unitfile.py" "$@" > "$words" || { rm -f "$words"; return 1; }
  # shellcheck disable=SC2034 # a name reference: filling it fills the caller's array
  mapfile -d '' into < "$words"
  rm -f "$words"
}

# Once the throw-away manager under prefix $1 has stopped: its control exchange, which would
# outlive its expiring queues (deploy/tests/broker_cleanup.py).
leave_no_exchange() {
  "$DEPLOY_VENV/bin/python" "$DEPLOY/tests/broker_cleanup.py" \
    "amqp://guest:guest@127.0.0.1:5672/%2f" "$1"
}

# A time setting $2 of unit $1 in whole seconds (the units write them as Ns).
unit_seconds() {
  local v
  v=$(python3 "$DEPLOY/tests/unitfile.py" get "$1" "$2")
  [[ "$v" =~ ^([0-9]+)s?$ ]] || { echo "$1: $2=$v is not whole seconds" >&2; return 1; }
  echo "${BASH_REMATCH[1]}"
}

# TimeoutStopSec= in whole seconds.
stop_timeout() { unit_seconds "$1" TimeoutStopSec; }

# The file of a unit name: agent-node@demo.service is agent-node@.service.
unit_file() {
  local unit=$1
  [[ "$unit" == *@* ]] && unit="${unit%%@*}@.${unit##*.}"
  echo "$UNITS/$unit"
}

# ---------------------------------------------------------------------------------------------
# units-verify: systemd-analyze verify of each unit as shipped, in a root directory of its own
# holding the unit files unchanged, systemd's own units (for the targets they name) and a
# stand-in executable at each ExecStart path (verify requires one; it does not run it). Verify
# exits 0 on unknown keys and bad values, so any output on stderr fails the check.
check_units_verify() {
  local root="$CHECK_DIR/verify-root" unit exe
  mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd"
  cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
  cp "$UNITS"/*.service "$root/etc/systemd/system/"
  for unit in "${UNIT_INSTANCES[@]}"; do
    exe=$(python3 "$DEPLOY/tests/unitfile.py" argv "$(unit_file "$unit")" | head -z -n 1 | tr -d '\0')
    mkdir -p "$root$(dirname "$exe")"
    printf '#!/bin/sh\nexit 0\n' > "$root$exe"
    chmod +x "$root$exe"
  done
  systemd-analyze verify --root="$root" "${UNIT_INSTANCES[@]}" 2> "$CHECK_DIR/verify.err"
  if [ -s "$CHECK_DIR/verify.err" ]; then
    cat "$CHECK_DIR/verify.err"
    return 1
  fi
  # Every unit file is one of those verified.
  local f listed
  for f in "$UNITS"/*.service; do
    listed=no
    for unit in "${UNIT_INSTANCES[@]}"; do
      [ "$(unit_file "$unit")" = "$f" ] && listed=yes
    done
    [ "$listed" = yes ] || { echo "$f is not in UNIT_INSTANCES" >&2; return 1; }
  done
  note "${UNIT_INSTANCES[*]}: no warning"
}

# units-security: systemd-analyze security --offline under the threshold, for each unit.
check_units_security() {
  local root="$CHECK_DIR/security-root" unit scores=() score
  mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd"
  cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
  cp "$UNITS"/*.service "$root/etc/systemd/system/"
  for unit in "${UNIT_INSTANCES[@]}"; do
    systemd-analyze security --offline=yes --root="$root" --threshold="$SECURITY_THRESHOLD" \
      --no-pager "$unit" > "$CHECK_DIR/security-$unit.txt" 2>&1 \
      || { grep -E '✗|Overall' "$CHECK_DIR/security-$unit.txt"; return 1; }
    score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' \
      "$CHECK_DIR/security-$unit.txt")
    scores+=("${unit%%.service} $score")
  done
  note "$(printf '%s, ' "${scores[@]}")threshold $SECURITY_THRESHOLD (1.5)"
}

# The shell check: this script and the container's staging script.
check_shellcheck() {
  local scripts=("$DEPLOY/tests/check.sh" "$DEPLOY/container/stage.sh")
  shellcheck -x -P "$ROOT" "${scripts[@]}"
  note "${scripts[*]#"$ROOT/"}"
}

# unit-env: the manager and the demo node run here with exactly the environment and command line
# their units give them (Environment= lines, then the example environment files, which win as
# EnvironmentFile= does), but for what must point at this machine: the state directory is a
# temporary one (so the unit's default SQLite database lands there), the broker is the local
# one under a prefix of their own, and the manager listens on a free port. The example files'
# other values (admin password, allowed hosts, public URL, capacity...) are taken as they are,
# so a value the programs refuse fails the check. Then each is stopped with its unit's
# KillSignal and must exit cleanly within its TimeoutStopSec.
check_unit_env() {
  [ -x "$MANAGER_BIN" ] || { echo "$MANAGER_BIN is not built" >&2; return 1; }
  [ -x "$NODE_BIN" ] || { echo "$NODE_BIN is not built" >&2; return 1; }
  local unit="$UNITS/agent-manager.service" node_unit="$UNITS/agent-node@.service"
  # PORT, WORK, AM_PREFIX and AM_QUEUE_EXPIRY; the rest of what it sets is not passed on.
  throwaway_manager_env deploy-check
  at_exit "rm -rf '$WORK'"
  at_exit "leave_no_exchange '$AM_PREFIX'"
  local port=$PORT state="$WORK/state" node_state="$WORK/node-state"
  mkdir -p "$state" "$node_state"
  local common=(--set "AM_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/%2f" --set "AM_PREFIX=$AM_PREFIX"
    --set "AM_QUEUE_EXPIRY=$AM_QUEUE_EXPIRY")
  local manager_env manager_argv node_env node_argv
  local manager_opts=(--env-file "$UNITS/agent-manager.env.example" --ignore AM_DATABASE_URL
    "${common[@]}" --set "AM_LISTEN=127.0.0.1:$port" --map "/var/lib/agent-manager=$state"
    --map "/usr/local/share/agent-manager/site=$ROOT/target/site"
    --map "/usr/local/bin/agent-manager=$MANAGER_BIN")
  local node_opts=(--instance deploy-check --env-file "$UNITS/agent-node.env.example" "${common[@]}"
    --set "AM_HOST=deploy-check-$port" --map "/var/lib/agent-node/deploy-check=$node_state"
    --map "/usr/local/bin/demo-node=$NODE_BIN")
  unit_words manager_env env "$unit" "${manager_opts[@]}"
  unit_words manager_argv argv "$unit" "${manager_opts[@]}"
  unit_words node_env env "$node_unit" "${node_opts[@]}"
  unit_words node_argv argv "$node_unit" "${node_opts[@]}"
  # What systemd gives a service besides the unit's own variables.
  local base=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

  # In the unit's WorkingDirectory, which is its state directory.
  (cd "$state" && exec env -i "${base[@]}" "${manager_env[@]}" "${manager_argv[@]}") \
    > "$WORK/manager.log" 2>&1 &
  local manager=$!
  at_exit "kill $manager 2>/dev/null; wait $manager 2>/dev/null"
  wait_url "http://127.0.0.1:$port/healthz" 60 || { cat "$WORK/manager.log"; return 1; }
  [ -f "$state/agent-manager.sqlite" ] || { echo "no database in the state directory" >&2; return 1; }
  wait_url "http://127.0.0.1:$port/readyz" 30

  (cd "$node_state" && exec env -i "${base[@]}" "${node_env[@]}" "${node_argv[@]}") \
    > "$WORK/node.log" 2>&1 &
  local node=$!
  at_exit "kill $node 2>/dev/null; wait $node 2>/dev/null"
  # The node is heard by the manager: both units' environments agree on broker and prefix.
  local token
  token=$(cd "$state" && env -i "${base[@]}" "${manager_env[@]}" "$MANAGER_BIN" token create \
    --user admin --name deploy-check)
  local deadline=$((SECONDS + 30))
  until curl -fsS -H "Authorization: Bearer $token" \
      "http://127.0.0.1:$port/api/v1/nodes?include_lost=true" | grep -q "\"deploy-check-$port\""; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the node never reached the manager; its log:" >&2
      cat "$WORK/node.log" >&2
      return 1
    fi
    sleep 0.5
  done

  local signal node_took manager_took java_note=""
  signal=$(python3 "$DEPLOY/tests/unitfile.py" get "$node_unit" KillSignal)
  node_took=$(stop_process "$node" "$signal" "$(stop_timeout "$node_unit")")
  wait "$node" || { echo "the node exited $? on $signal" >&2; cat "$WORK/node.log"; return 1; }

  # The Java node's unit the same way, when the Java demo node has been built.
  local jar java_unit="$UNITS/agent-java-node@.service"
  if jar=$(java_demo_node_jar 2>/dev/null); then
    local java_env java_argv java_state="$WORK/java-state"
    mkdir -p "$java_state"
    local java_opts=(--instance deploy-check --env-file "$UNITS/agent-node.env.example"
      "${common[@]}" --set "AM_HOST=deploy-check-java-$port" --set "AM_NODE_JAR=$jar"
      --map "/var/lib/agent-node/deploy-check=$java_state")
    unit_words java_env env "$java_unit" "${java_opts[@]}"
    unit_words java_argv argv "$java_unit" "${java_opts[@]}"
    (cd "$java_state" && exec env -i "${base[@]}" "${java_env[@]}" "${java_argv[@]}") \
      > "$WORK/java-node.log" 2>&1 &
    local java=$!
    at_exit "kill $java 2>/dev/null; wait $java 2>/dev/null"
    deadline=$((SECONDS + 60))
    until curl -fsS -H "Authorization: Bearer $token" \
        "http://127.0.0.1:$port/api/v1/nodes?include_lost=true" | grep -q "\"deploy-check-java-$port\""; do
      if [ "$SECONDS" -ge "$deadline" ]; then
        echo "the Java node never reached the manager; its log:" >&2
        cat "$WORK/java-node.log" >&2
        return 1
      fi
      sleep 0.5
    done
    signal=$(python3 "$DEPLOY/tests/unitfile.py" get "$java_unit" KillSignal)
    local java_took java_code=0 success
    java_took=$(stop_process "$java" "$signal" "$(stop_timeout "$java_unit")")
    wait "$java" || java_code=$?
    success=$(python3 "$DEPLOY/tests/unitfile.py" get "$java_unit" SuccessExitStatus)
    if [ "$java_code" -ne 0 ] && [ "$java_code" != "$success" ]; then
      echo "the Java node exited $java_code on $signal" >&2
      cat "$WORK/java-node.log"
      return 1
    fi
    java_note=", Java node exited $java_code in ${java_took} s"
  else
    java_note="; Java node not run (its jar is not built)"
  fi
  signal=$(python3 "$DEPLOY/tests/unitfile.py" get "$unit" KillSignal)
  manager_took=$(stop_process "$manager" "$signal" "$(stop_timeout "$unit")")
  wait "$manager" || { echo "the manager exited $? on $signal" >&2; cat "$WORK/manager.log"; return 1; }
  note "healthz, readyz, node listed; $signal: node exited 0 in ${node_took} s, manager in ${manager_took} s$java_note"
}

# two-replicas: the production shape of docs/operations.md, two manager replicas on one
# PostgreSQL database, from the manager's unit as shipped. Two processes start at once (as
# `systemctl enable --now` on two machines), each with exactly the environment and command line
# the unit and the example environment file give it (as unit-env), but for a database created
# for the check on the local PostgreSQL (dropped afterwards), the local broker under one
# throw-away prefix they share, a free port and a state directory each. Both answer /healthz and
# /readyz; the catalog is imported and a token created once, by the command line against the
# shared database; a demo node connects (as scripts/run.sh starts one); Run now on replica A's
# API is read back on replica B's until it has succeeded, and both count the node in /metrics.
# Each replica is then stopped with the unit's KillSignal and must exit 0 within its
# TimeoutStopSec.
check_two_replicas() {
  [ -x "$MANAGER_BIN" ] || { echo "$MANAGER_BIN is not built" >&2; return 1; }
  [ -x "$NODE_BIN" ] || { echo "$NODE_BIN is not built" >&2; return 1; }
  local unit="$UNITS/agent-manager.service"
  port_open 5432 || { echo "no PostgreSQL on 127.0.0.1:5432" >&2; return 1; }
  # Whichever of the usual superusers the local server lets in without a password.
  local pg_user="" user
  for user in postgres root; do
    if psql -w -h 127.0.0.1 -U "$user" -d postgres -qAtc 'select 1' > /dev/null 2>&1; then
      pg_user=$user
      break
    fi
  done
  [ -n "$pg_user" ] \
    || { echo "PostgreSQL on 127.0.0.1:5432 lets neither postgres nor root in without a password" >&2; return 1; }
  # PORT, WORK, AM_PREFIX and AM_QUEUE_EXPIRY; the rest of what it sets is not passed on.
  throwaway_manager_env deploy-check
  at_exit "rm -rf '$WORK'"
  at_exit "leave_no_exchange '$AM_PREFIX'"
  local db="deploycheck_$$"
  createdb -w -h 127.0.0.1 -U "$pg_user" "$db"
  # --force: the connections of a replica killed on a failure do not keep it.
  at_exit "dropdb -w -h 127.0.0.1 -U '$pg_user' --if-exists --force '$db'"
  local url="postgres://$pg_user@127.0.0.1:5432/$db"
  local port_a=$PORT port_b
  port_b=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  local state_a="$WORK/state-a" state_b="$WORK/state-b"
  mkdir -p "$state_a" "$state_b"
  local common=(--env-file "$UNITS/agent-manager.env.example" --set "AM_DATABASE_URL=$url"
    --set "AM_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/%2f" --set "AM_PREFIX=$AM_PREFIX"
    --set "AM_QUEUE_EXPIRY=$AM_QUEUE_EXPIRY"
    --map "/usr/local/share/agent-manager/site=$ROOT/target/site"
    --map "/usr/local/bin/agent-manager=$MANAGER_BIN")
  local opts_a=("${common[@]}" --set "AM_LISTEN=127.0.0.1:$port_a" --map "/var/lib/agent-manager=$state_a")
  local opts_b=("${common[@]}" --set "AM_LISTEN=127.0.0.1:$port_b" --map "/var/lib/agent-manager=$state_b")
  # shellcheck disable=SC2034 # read through name references (launch, below)
  local env_a argv_a env_b argv_b
  unit_words env_a env "$unit" "${opts_a[@]}"
  unit_words argv_a argv "$unit" "${opts_a[@]}"
  unit_words env_b env "$unit" "${opts_b[@]}"
  unit_words argv_b argv "$unit" "${opts_b[@]}"
  # What systemd gives a service besides the unit's own variables.
  local base=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
  # The command line as an operator runs it on replica A's machine, with its unit's environment.
  manager_cli() { (cd "$state_a" && env -i "${base[@]}" "${env_a[@]}" "$MANAGER_BIN" "$@"); }

  # Starts replica $1 (a or b) in the background as its unit does, in its WorkingDirectory;
  # sets manager_$1 to its process id.
  launch() {
    local side=$1
    local -n words_env="env_$1" words_argv="argv_$1"
    (cd "$WORK/state-$side" && exec env -i "${base[@]}" "${words_env[@]}" "${words_argv[@]}") \
      >> "$WORK/manager-$side.log" 2>&1 &
    local pid=$!
    printf -v "manager_$side" '%s' "$pid"
    at_exit "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
  }
  # Both at once: they migrate the empty database, one after the other (the migrations take a
  # lock); a replica that exits instead fails the check, whatever the unit's Restart= would do.
  local start manager_a manager_b
  start=$(date +%s%N)
  launch a
  launch b
  # Up to 60 s each for /healthz then /readyz.
  local side pid port probe deadline code
  for side in a b; do
    port="port_$side"
    for probe in healthz readyz; do
      deadline=$((SECONDS + 60))
      until curl -fsS -o /dev/null "http://127.0.0.1:${!port}/$probe" 2>/dev/null; do
        pid="manager_$side"
        if ! kill -0 "${!pid}" 2>/dev/null; then
          code=0
          wait "${!pid}" || code=$?
          echo "replica $side exited $code before answering /$probe; its log:" >&2
          cat "$WORK/manager-$side.log" >&2
          return 1
        elif [ "$SECONDS" -ge "$deadline" ]; then
          echo "replica $side: no /$probe within 60 s; its log:" >&2
          cat "$WORK/manager-$side.log" >&2
          return 1
        fi
        sleep 0.2
      done
    done
  done
  local up
  up=$(since "$start")
  # On PostgreSQL, not on the unit's default SQLite database.
  if [ -e "$state_a/agent-manager.sqlite" ] || [ -e "$state_b/agent-manager.sqlite" ]; then
    echo "a replica made a SQLite database in its state directory" >&2
    return 1
  fi

  # Once, for both: a catalog of one application whose pool is the node below, one agent of the
  # demo node (sleep) and a launch setting that ends within a second, in a group that fires once
  # a year (a scheduled launch setting needs one). No data queue, so nothing is declared on the
  # broker outside the prefix.
  manager_cli catalog import - > /dev/null <<'JSON'
{
  "version": 1,
  "applications": [{"id": "demo", "title": "Demo application", "default_pool": "demo-pool"}],
  "pools": [{"id": "demo-pool", "title": "Demo hosts", "hosts": ["demo-a"]}],
  "agents": [{"application": "demo", "id": "sleep", "title": "Sleep", "input": "standalone",
    "concurrency": "ANY", "overlap": "skip",
    "parameters": [{"name": "duration", "title": "Duration", "type": "duration", "default": "10s"}]}],
  "launch_settings": [{"id": "demo.sleep.check", "title": "Sleep 1 s", "application": "demo",
    "agent": "sleep", "kind": "scheduled", "parameters": {"duration": "1s"}}],
  "schedule_groups": [{"id": "demo.yearly", "title": "Once a year", "application": "demo",
    "cron": "0 0 3 1 1 *", "time_zone": "UTC", "members": ["demo.sleep.check"]}]
}
JSON
  local token
  token=$(manager_cli token create --user admin --name deploy-check)
  api() {
    local port=$1 path=$2
    shift 2
    curl -fsS -H "Authorization: Bearer $token" "$@" "http://127.0.0.1:$port$path"
  }

  # A demo node as scripts/run.sh starts one: application demo, host demo-a, the replicas' prefix.
  env -i "${base[@]}" NO_COLOR=1 AM_APP=demo AM_HOST=demo-a AM_DEMO_PRODUCE=0 \
    "AM_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/%2f" "AM_PREFIX=$AM_PREFIX" \
    "AM_QUEUE_EXPIRY=$AM_QUEUE_EXPIRY" "$NODE_BIN" > "$WORK/node.log" 2>&1 &
  local node=$!
  at_exit "kill $node 2>/dev/null; wait $node 2>/dev/null"
  deadline=$((SECONDS + 30))
  until [[ "$(api "$port_b" "/api/v1/nodes?application=demo" 2>/dev/null)" == *'"host":"demo-a"'* ]]; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the node never reached the replicas; its log:" >&2
      cat "$WORK/node.log" >&2
      return 1
    fi
    sleep 0.3
  done

  # Run now on A, read on B until it has finished.
  local activation status ran_at
  ran_at=$(date +%s%N)
  activation=$(api "$port_a" /api/v1/launch-settings/demo.sleep.check/run -X POST \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["activation"])')
  deadline=$((SECONDS + 60))
  while :; do
    status=$(api "$port_b" "/api/v1/activations/$activation" \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["activation"]["status"])')
    case "$status" in
      waiting | dispatched | running) ;;
      succeeded) break ;;
      *) echo "activation $activation ended $status (read on replica B):" >&2
         api "$port_b" "/api/v1/activations/$activation" >&2
         return 1 ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "activation $activation still $status on replica B after 60 s" >&2
      return 1
    fi
    sleep 0.3
  done
  local ran
  ran=$(since "$ran_at")
  for side in a b; do
    port="port_$side"
    api "${!port}" /metrics > "$WORK/metrics-$side.txt"
    grep -qxF 'am_live_nodes{application="demo"} 1' "$WORK/metrics-$side.txt" \
      || { echo "replica $side's /metrics:" >&2; grep '^am_live_nodes' "$WORK/metrics-$side.txt" >&2; return 1; }
  done

  kill -TERM "$node"
  wait "$node" || { echo "the node exited $?" >&2; cat "$WORK/node.log" >&2; return 1; }
  # The catalog emptied and the broker in sync again, as every throw-away manager leaves it.
  leave_the_broker_clean manager_cli "$port_a"
  local signal limit took_a took_b
  signal=$(python3 "$DEPLOY/tests/unitfile.py" get "$unit" KillSignal)
  limit=$(stop_timeout "$unit")
  took_a=$(stop_process "$manager_a" "$signal" "$limit")
  wait "$manager_a" || { echo "replica a exited $? on $signal" >&2; cat "$WORK/manager-a.log"; return 1; }
  took_b=$(stop_process "$manager_b" "$signal" "$limit")
  wait "$manager_b" || { echo "replica b exited $? on $signal" >&2; cat "$WORK/manager-b.log"; return 1; }
  note "PostgreSQL, both started at once: healthz, readyz in ${up} s; run on A succeeded on B in ${ran} s; am_live_nodes 1 on both; $signal: A exited 0 in ${took_a} s, B in ${took_b} s"
}

# systemd-boot: the units as shipped, under a real systemd (PID 1 of a systemd-nspawn container
# booted from a cached Debian root, read-only with a throw-away overlay, sharing this machine's
# network): the sandbox of each unit (dynamic user, state directory, system call filter, no
# write-execute memory...) is set up by systemd and the programs run in it. The manager listens
# on a free port and reaches the local broker; the demo node runs as agent-node@deploy-check.
# Then the container is powered off, which stops each unit as systemd does (KillSignal, then
# SIGKILL after TimeoutStopSec), and the journal must show both deactivated without a kill.
check_systemd_boot() {
  [ -x "$MANAGER_BIN" ] || { echo "$MANAGER_BIN is not built" >&2; return 1; }
  [ -x "$NODE_BIN" ] || { echo "$NODE_BIN is not built" >&2; return 1; }
  local rootfs machine port dir
  rootfs=$(ensure_deploy_rootfs)
  throwaway_manager_env deploy-check
  at_exit "rm -rf '$WORK'"
  at_exit "leave_no_exchange '$AM_PREFIX'"
  port=$PORT dir=$WORK
  machine="am-deploy-check-$$"
  mkdir -p "$dir/etc-manager" "$dir/etc-node" "$dir/journal"
  # The example file, but for the broker and the database: the unit's default SQLite database
  # in its state directory is what runs here.
  grep -v -E '^(AM_DATABASE_URL|AM_AMQP_URL|AM_LISTEN)=' "$UNITS/agent-manager.env.example" \
    > "$dir/etc-manager/agent-manager.env"
  printf '%s\n' "AM_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/%2f" "AM_LISTEN=127.0.0.1:$port" \
    "AM_PREFIX=$AM_PREFIX" "AM_QUEUE_EXPIRY=$AM_QUEUE_EXPIRY" >> "$dir/etc-manager/agent-manager.env"
  grep -v -E '^AM_AMQP_URL=' "$UNITS/agent-node.env.example" > "$dir/etc-node/deploy-check.env"
  printf '%s\n' "AM_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/%2f" "AM_PREFIX=$AM_PREFIX" \
    "AM_QUEUE_EXPIRY=$AM_QUEUE_EXPIRY" "AM_HOST=deploy-check-$port" >> "$dir/etc-node/deploy-check.env"
  printf '[Unit]\nDescription=deploy check\nWants=agent-manager.service agent-node@deploy-check.service\nAfter=agent-manager.service agent-node@deploy-check.service\nAllowIsolate=yes\n' \
    > "$dir/deploy-check.target"
  local site=()
  [ -d "$ROOT/target/site" ] && site=(--bind-ro="$ROOT/target/site:/usr/local/share/agent-manager/site")

  # What nspawn keeps under /run, removed once it has stopped (cleanups run last first).
  [ -d /run/systemd/nspawn ] \
    || at_exit "rmdir /run/systemd/nspawn/propagate /run/systemd/nspawn/locks /run/systemd/nspawn 2>/dev/null"
  at_exit "rm -rf /run/systemd/nspawn/propagate/$machine"
  systemd-nspawn --quiet --directory="$rootfs" --machine="$machine" --register=no --keep-unit \
    --volatile=overlay \
    --bind-ro="$MANAGER_BIN:/usr/local/bin/agent-manager" \
    --bind-ro="$NODE_BIN:/usr/local/bin/demo-node" \
    --bind-ro="$UNITS/agent-manager.service:/etc/systemd/system/agent-manager.service" \
    --bind-ro="$UNITS/agent-node@.service:/etc/systemd/system/agent-node@.service" \
    --bind-ro="$dir/deploy-check.target:/etc/systemd/system/deploy-check.target" \
    --bind-ro="$dir/etc-manager:/etc/agent-manager" \
    --bind-ro="$dir/etc-node:/etc/agent-node" \
    --bind="$dir/journal:/var/log/journal" \
    "${site[@]}" \
    --boot -- systemd.unit=deploy-check.target > "$dir/console.log" 2>&1 &
  local nspawn=$!
  # One SIGTERM asks the container to power off (a second would kill it at once).
  at_exit "kill -0 $nspawn 2>/dev/null && { stop_process $nspawn SIGTERM 90 >/dev/null || kill -9 $nspawn; }; wait $nspawn 2>/dev/null"

  local journal=(journalctl --directory="$dir/journal" --no-pager -o short-precise)
  wait_url "http://127.0.0.1:$port/healthz" 60 || {
    tail -20 "$dir/console.log"; "${journal[@]}" -u agent-manager.service; return 1; }
  wait_url "http://127.0.0.1:$port/readyz" 30
  # The sandbox as the kernel sees it: the process listening on the port.
  local pid status
  pid=$(ss -Htlnp "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
  status=$(cat "/proc/$pid/status")
  local uid
  uid=$(awk '/^Uid:/ { print $2 }' <<< "$status")
  # systemd's dynamic users are 61184-65519.
  if [ "$uid" -lt 61184 ] || [ "$uid" -gt 65519 ]; then
    echo "the manager runs as uid $uid" >&2
    return 1
  fi
  grep -q -P '^CapEff:\t0+$' <<< "$status" || { echo "the manager has capabilities" >&2; return 1; }
  grep -q -P '^NoNewPrivs:\t1$' <<< "$status" || { echo "NoNewPrivileges not applied" >&2; return 1; }
  grep -q -P '^Seccomp:\t2$' <<< "$status" || { echo "no system call filter" >&2; return 1; }
  [ -f "/proc/$pid/root/var/lib/private/agent-manager/agent-manager.sqlite" ] \
    || { echo "no database in the state directory" >&2; return 1; }
  local deadline=$((SECONDS + 30))
  until "${journal[@]}" -u agent-node@deploy-check.service | grep -q 'connected to the broker'; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      "${journal[@]}" -u agent-node@deploy-check.service >&2
      return 1
    fi
    sleep 0.3
  done

  # Power off: nspawn asks the container's systemd to; wait longer than both stop timeouts.
  local limit=$(( $(stop_timeout "$UNITS/agent-manager.service") + $(stop_timeout "$UNITS/agent-node@.service") + 20 ))
  stop_process "$nspawn" SIGTERM "$limit" > /dev/null
  wait "$nspawn" || { echo "systemd-nspawn exited $?" >&2; tail -20 "$dir/console.log"; return 1; }
  local unit log took=()
  for unit in agent-manager.service agent-node@deploy-check.service; do
    log=$("${journal[@]}" -u "$unit")
    if ! grep -q "$unit: Deactivated successfully" <<< "$log" \
        || grep -q -E "timed out|Killing process|Failed with result|status=(226|31)/" <<< "$log"; then
      echo "$unit did not stop cleanly:" >&2
      echo "$log" >&2
      return 1
    fi
    if grep -q $'\e\[' <<< "$log"; then
      echo "$unit logs colour codes into the journal" >&2
      return 1
    fi
    took+=("${unit%%.service} $(awk '
      / systemd\[1\]: Stopping / { split($3, t, ":"); from = t[1] * 3600 + t[2] * 60 + t[3] }
      / systemd\[1\]: Stopped / { split($3, t, ":"); to = t[1] * 3600 + t[2] * 60 + t[3] }
      END { printf "%.2f s", to - from }' <<< "$log")")
  done
  note "manager as dynamic user $uid, no capability, seccomp, SQLite in its state directory: healthz, readyz; node connected; plain logs; stopped cleanly: $(printf '%s, ' "${took[@]}" | sed 's/, $//')"
}

# hadolint: the Containerfile.
check_hadolint() {
  "$DEPLOY_VENV/bin/hadolint" --failure-threshold info "$DEPLOY/container/Containerfile"
  note "$("$DEPLOY_VENV/bin/hadolint" --version | head -1)"
}

# container: the image built from deploy/container/Containerfile with podman (from the context
# stage.sh lays out), run as docs/operations.md says (read-only root, every capability dropped,
# no new privileges, its own non-root user, the example environment file) but against the local
# broker and a SQLite database in a volume, answering /healthz and /readyz, then stopped
# (STOPSIGNAL) and exiting 0.
#
# Why podman runs as it does (deploy_podman in scripts/lib.sh): on machines like the one this
# was written on (a VM whose cgroups are hybrid, v1 controllers beside a v2 hierarchy, and whose
# root lacks CAP_SYS_RESOURCE), the defaults fail with
#   Error: OCI runtime error: crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2
# hence runc, and podman's default limits (nofile 1048576) cannot be set:
#   Error: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied
# (runc: "error setting rlimits for ready process: error setting rlimit type 7"), hence the
# explicit --ulimit at or below this machine's. Elsewhere both are harmless.
check_container() {
  [ -x "$MANAGER_BIN" ] || { echo "$MANAGER_BIN is not built" >&2; return 1; }
  local dir port image name
  throwaway_manager_env deploy-check
  at_exit "rm -rf '$WORK'"
  at_exit "leave_no_exchange '$AM_PREFIX'"
  port=$PORT dir=$WORK
  image="localhost/agent-manager-deploy-check:$$"
  name="am-deploy-check-$$"
  # Root's podman keeps two things outside its --root whatever it is told (the network run
  # directory and an image blob cache): removed afterwards unless they were there before.
  local system_dir
  for system_dir in /run/containers /var/lib/containers; do
    [ -e "$system_dir" ] || at_exit "rm -rf $system_dir"
  done
  "$DEPLOY/container/stage.sh" "$MANAGER_BIN" "$ROOT/target/site" "$dir/context"
  at_exit "deploy_podman '$dir/podman' rm --force --ignore '$name' >/dev/null"
  at_exit "deploy_podman '$dir/podman' rmi --force '$image' >/dev/null"
  deploy_podman "$dir/podman" build --quiet --isolation chroot --network host \
    -f "$DEPLOY/container/Containerfile" -t "$image" "$dir/context" > /dev/null
  mkdir -p "$dir/data"
  chown 65532:65532 "$dir/data"
  deploy_podman "$dir/podman" run --detach --name "$name" --network host --read-only \
    --cap-drop all --security-opt no-new-privileges \
    --ulimit "nofile=1024:1024" --ulimit "nproc=4096:4096" \
    --volume "$dir/data:/var/lib/agent-manager" \
    --env-file "$UNITS/agent-manager.env.example" \
    --env "AM_DATABASE_URL=sqlite:///var/lib/agent-manager/agent-manager.sqlite?mode=rwc" \
    --env "AM_LISTEN=127.0.0.1:$port" \
    --env "AM_AMQP_URL=amqp://guest:guest@127.0.0.1:5672/%2f" \
    --env "AM_PREFIX=$AM_PREFIX" --env "AM_QUEUE_EXPIRY=$AM_QUEUE_EXPIRY" \
    "$image" > /dev/null
  wait_url "http://127.0.0.1:$port/healthz" 60 || { deploy_podman "$dir/podman" logs "$name"; return 1; }
  wait_url "http://127.0.0.1:$port/readyz" 30
  [ -f "$dir/data/agent-manager.sqlite" ] || { echo "no database in the volume" >&2; return 1; }
  local user start end code
  user=$(deploy_podman "$dir/podman" top "$name" user | tail -1)
  start=$(date +%s%N)
  deploy_podman "$dir/podman" stop --time 30 "$name" > /dev/null
  end=$(date +%s%N)
  code=$(deploy_podman "$dir/podman" inspect --format '{{.State.ExitCode}}' "$name")
  [ "$code" = 0 ] || { echo "the manager exited $code" >&2; deploy_podman "$dir/podman" logs "$name"; return 1; }
  if deploy_podman "$dir/podman" logs "$name" 2>&1 | grep -q $'\e\['; then
    echo "the manager logs colour codes" >&2
    return 1
  fi
  local size
  size=$(deploy_podman "$dir/podman" image inspect --format '{{.Size}}' "$image")
  note "$(awk -v s="$size" 'BEGIN { printf "%d MB", s / 1e6 }') image, user $user, read-only: healthz, readyz; stopped, exit 0 in $(awk -v ns=$((end - start)) 'BEGIN { printf "%.1f", ns / 1e9 }') s"
}

# kubernetes: every manifest against the pinned Kubernetes versions' schemas, strict (an unknown
# field fails), then the rules the manifests are meant to keep (deploy/tests/k8s_rules.py).
check_kubernetes() {
  local v files
  mapfile -t files < <(find "$DEPLOY/kubernetes" -name '*.yaml' | sort)
  for v in "${K8S_VERSIONS[@]}"; do
    "$DEPLOY_VENV/bin/kubernetes-validate" --quiet --strict -k "$v" "${files[@]}"
  done
  "$DEPLOY_VENV/bin/python" "$DEPLOY/tests/k8s_rules.py" "${files[@]}"
  note "${#files[@]} files, strict, Kubernetes ${K8S_VERSIONS[*]}; rules held"
}

# ---------------------------------------------------------------------------------------------
ALL=(units-verify units-security shellcheck unit-env two-replicas systemd-boot hadolint container kubernetes)
selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=("${ALL[@]}")

ensure_deploy_tools
ensure_rabbitmq
for name in "${selected[@]}"; do
  case "$name" in
    units-verify) run_check "$name" check_units_verify ;;
    units-security) run_check "$name" check_units_security ;;
    shellcheck) run_check "$name" check_shellcheck ;;
    unit-env) run_check "$name" check_unit_env ;;
    two-replicas) run_check "$name" check_two_replicas ;;
    systemd-boot) run_check "$name" check_systemd_boot ;;
    hadolint) run_check "$name" check_hadolint ;;
    container) run_check "$name" check_container ;;
    kubernetes) run_check "$name" check_kubernetes ;;
    *) echo "no check named $name (${ALL[*]})" >&2; exit 2 ;;
  esac
done
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "deployment checks failed: ${FAILED[*]}"
  exit 1
fi
echo "deployment checks passed (${#selected[@]})"
