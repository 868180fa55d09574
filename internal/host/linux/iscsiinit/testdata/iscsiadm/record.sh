#!/usr/bin/env bash
# Re-records the samples in recorded/ from the real iscsiadm of this
# machine (open-iscsi 2.1.8 on Debian 12, a kernel without iscsi_tcp and
# without a running iscsid). Run as root on a scratch machine: it creates
# and deletes open-iscsi records for the example target and portals below,
# and removes /etc/iscsi/send_targets and /run/lock/iscsi if it created
# them.
set -u
cd "$(dirname "$0")/recorded"
IQN=iqn.2026-11.io.example:rec1
P=127.0.0.1:3260
had_st=$([ -e /etc/iscsi/send_targets ] && echo 1 || echo 0)
had_nodes=$([ -e /etc/iscsi/nodes ] && echo 1 || echo 0)
had_ifaces=$([ -e /etc/iscsi/ifaces ] && echo 1 || echo 0)
had_lock=$([ -e /run/lock/iscsi ] && echo 1 || echo 0)
rec() { # rec NAME ARGS...: run iscsiadm ARGS, keep argv, stdout, stderr, exit code
  local name=$1; shift
  printf '%s\n' "$@" > "$name.argv"
  LC_ALL=C iscsiadm "$@" > "$name.stdout" 2> "$name.stderr"
  echo $? > "$name.rc"
}
rec discoverydb_list_empty -m discoverydb
rec discoverydb_new -m discoverydb -t sendtargets -p $P -o new
iscsiadm -m discoverydb -t sendtargets -p '[::1]:3260' -o new >/dev/null 2>&1
iscsiadm -m discoverydb -t sendtargets -p 'Portal.Example.com:3261' -o new >/dev/null 2>&1
rec discoverydb_list -m discoverydb
iscsiadm -m discoverydb -t sendtargets -p '[::1]:3260' -o delete >/dev/null 2>&1
iscsiadm -m discoverydb -t sendtargets -p 'Portal.Example.com:3261' -o delete >/dev/null 2>&1
rec discoverydb_delete -m discoverydb -t sendtargets -p $P -o delete
rec discoverydb_delete_missing -m discoverydb -t sendtargets -p $P -o delete
rec node_new -m node -T $IQN -p $P -I default -o new
cp "/etc/iscsi/nodes/$IQN/127.0.0.1,3260" node_record_file
rec node_update_startup -m node -T $IQN -p $P -I default -o update -n node.startup -v manual
rec node_update_locate -m node -T $IQN -p $P -I default -o update -n node.session.auth.username -v csi-node-proxy-locate-0123456789abcdef
cp "/etc/iscsi/nodes/$IQN/127.0.0.1,3260" node_record_file_after_locate
rec node_login_iscsid_down -m node -T $IQN -p $P -I default --login
rec node_logout_no_session -m node -T $IQN -p $P -I default --logout
rec node_delete -m node -T $IQN -p $P -I default -o delete
rec node_delete_missing -m node -T $IQN -p $P -I default -o delete
rec node_login_no_record -m node -T $IQN -p $P -I default --login
rec session_list_none -m session
rec discovery_sendtargets_no_kernel -m discovery -t sendtargets -p $P
iscsiadm -m discoverydb -t sendtargets -p $P -o delete >/dev/null 2>&1
[ "$had_st" = 0 ] && rm -rf /etc/iscsi/send_targets
[ "$had_nodes" = 0 ] && rmdir /etc/iscsi/nodes 2>/dev/null
[ "$had_ifaces" = 0 ] && rmdir /etc/iscsi/ifaces 2>/dev/null
[ "$had_lock" = 0 ] && rm -rf /run/lock/iscsi
exit 0
