#!/usr/bin/env bash
# A virtual cluster on this machine, for tests and benchmarks across "nodes" (needs root):
#
#   scripts/vcluster.sh up K       K nodes vnode1..vnodeK: one network namespace and one UTS
#                                  namespace (its own host name) each, a veth link into the bridge
#                                  aclvc0, addresses 10.77.0.<i>/24 and fd77:10:77:0::<i>/64 (IPv6,
#                                  unique local), and "10.77.0.<i> vnode<i>" in /etc/hosts (the
#                                  namespaces share the file system)
#   scripts/vcluster.sh down       removes every node, the bridge and the /etc/hosts lines
#   scripts/vcluster.sh status     lists the nodes
#   scripts/vcluster.sh rsh NODE CMD...
#                                  the rsh agent: runs CMD (one shell command line, as ssh does)
#                                  on NODE (a name, or one of its addresses as written above); for `aclshmrun --hosts ... --rsh "scripts/vcluster.sh rsh"`
#                                  and Open MPI's `--mca plm_rsh_agent`
#
# Only private addresses on a bridge this script creates: no traffic leaves the machine. The node
# identity of libaclshmem is host name + boot id, so each namespace is a node of its own (they
# share /dev/shm, which does not matter: a node maps only its own PEs' heaps).
# ACLSHMEM_VC_PREFIX (node names, default vnode), ACLSHMEM_VC_NET (default 10.77.0) and
# ACLSHMEM_VC_BRIDGE (default aclvc0) let several clusters coexist (the tests use their own).
set -euo pipefail

PREFIX="${ACLSHMEM_VC_PREFIX:-vnode}"
NET="${ACLSHMEM_VC_NET:-10.77.0}"
# the IPv6 prefix of the nodes, from the IPv4 one: 10.77.0 -> fd77:10:77:0
NET6="fd77:${NET//./:}"
BRIDGE="${ACLSHMEM_VC_BRIDGE:-aclvc0}"
STATE="/run/aclshmem-vcluster-$BRIDGE"
MARK="# aclshmem-vcluster $BRIDGE"

die() { echo "vcluster: $*" >&2; exit 1; }

nodes() {
    [[ -d "$STATE" ]] || return 0
    for f in "$STATE"/*.uts; do
        [[ -e "$f" ]] && basename "$f" .uts
    done
    return 0
}

up() {
    local k="$1"
    [[ "$k" =~ ^[0-9]+$ && "$k" -ge 1 && "$k" -le 200 ]] || die "up: K must be 1..200"
    [[ ${#BRIDGE} -le 10 ]] || die "ACLSHMEM_VC_BRIDGE must be at most 10 characters"
    [[ "$(id -u)" -eq 0 ]] || die "needs root (network and UTS namespaces)"
    for tool in ip unshare nsenter; do
        command -v "$tool" >/dev/null || die "$tool is missing (apt-get install iproute2 util-linux)"
    done
    down >/dev/null 2>&1 || true
    # a cluster that cannot be completed is removed again (a later `up` must not find its parts)
    trap 'down >/dev/null 2>&1 || true' EXIT
    mkdir -p "$STATE"
    ip link add "$BRIDGE" type bridge || die "cannot create bridge $BRIDGE (no CAP_NET_ADMIN?)"
    ip addr add "$NET.254/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    # bridged frames must not be filtered by the host's firewall rules (docker sets FORWARD DROP)
    if [[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then
        echo 0 > /proc/sys/net/bridge/bridge-nf-call-iptables || true
    fi
    local i name
    for ((i = 1; i <= k; i++)); do
        name="$PREFIX$i"
        ip netns add "$name" || die "cannot create network namespace $name"
        ip link add "${BRIDGE:0:10}v$i" type veth peer name eth0 netns "$name"
        ip link set "${BRIDGE:0:10}v$i" master "$BRIDGE" up
        ip -n "$name" addr add "$NET.$i/24" dev eth0
        # nodad: usable at once (duplicate address detection would hold it for a second or two)
        ip -n "$name" addr add "$NET6::$i/64" dev eth0 nodad
        ip -n "$name" link set eth0 up
        ip -n "$name" link set lo up
        touch "$STATE/$name.uts"
        unshare --uts="$STATE/$name.uts" hostname "$name" || die "cannot create UTS namespace of $name"
        echo "$NET.$i $name $MARK" >> /etc/hosts
    done
    # every node reaches the next one (a refused connection proves the path; a timeout does not)
    local peer out
    for ((i = 1; i <= k; i++)); do
        peer="$NET.$(( i % k + 1 ))"
        out="$(ip netns exec "$PREFIX$i" timeout 5 bash -c "exec 3<>/dev/tcp/$peer/9" 2>&1 || true)"
        [[ "$out" == *refused* || -z "$out" ]] || die "node $PREFIX$i cannot reach $peer: $out"
    done
    trap - EXIT
    echo "vcluster: $k node(s) up: $(nodes | tr '\n' ' ')"
}

down() {
    local name
    for name in $(nodes); do
        umount "$STATE/$name.uts" 2>/dev/null || true
        rm -f "$STATE/$name.uts"
        ip netns del "$name" 2>/dev/null || true
    done
    # namespaces an interrupted `up` made before it recorded them
    for name in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${PREFIX}[0-9]+$" || true); do
        ip netns del "$name" 2>/dev/null || true
    done
    # the bridge's veth ends too: a namespace that some process still holds outlives its name,
    # and with it the host end of its link, which would make the next `up` fail ("File exists")
    local link
    for link in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
        grep -E "^${BRIDGE:0:10}v[0-9]+$" || true); do
        ip link del "$link" 2>/dev/null || true
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    if grep -q "$MARK" /etc/hosts 2>/dev/null; then
        # /etc/hosts may be a bind mount (containers): rewrite in place
        local kept
        kept="$(grep -v "$MARK" /etc/hosts)"
        printf '%s\n' "$kept" > /etc/hosts
    fi
    rmdir "$STATE" 2>/dev/null || true
    echo "vcluster: down"
}

rsh() {
    local node="$1" n
    shift
    # a node's address names it too (`aclshmrun --hosts [fd77:10:77:0::2]:1`)
    for n in $(nodes); do
        if [[ "$node" == "$NET.${n#"$PREFIX"}" || "$node" == "$NET6::${n#"$PREFIX"}" ]]; then
            node="$n"
        fi
    done
    [[ -e "$STATE/$node.uts" ]] || die "rsh: no node $node (scripts/vcluster.sh up K first)"
    # ssh semantics: the arguments form one shell command line run on the node
    exec nsenter --uts="$STATE/$node.uts" --net="/var/run/netns/$node" -- /bin/sh -c "$*"
}

case "${1:-}" in
    up) up "${2:?usage: vcluster.sh up K}" ;;
    down) down ;;
    status) nodes ;;
    rsh) shift; [[ $# -ge 2 ]] || die "usage: vcluster.sh rsh NODE CMD..."; rsh "$@" ;;
    *) echo "usage: $0 up K | down | status | rsh NODE CMD..." >&2; exit 2 ;;
esac
