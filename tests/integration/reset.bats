#!/usr/bin/env bats
# reset (hako-reset(8)): a sandbox back to how create left it — every
# process of the last run gone, its writable state (the host profile's
# /work, an image's writable layer) new and empty, its log forgotten — and
# running again from its config, for the next user of a warm pool.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; image_fixtures; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "reset: host profile: /work comes back empty, no process of the last run survives, the sandbox runs again" {
  $H run --detach --profile host rs1
  $H exec rs1 -- sh -c 'echo secret > /work/f; mkdir /work/d; echo x > /work/d/g'
  # A background job of the last user, detached from its exec.
  $H exec rs1 -- sh -c 'setsid sleep 1000 > /dev/null 2>&1 < /dev/null &'
  pid=$(pgrep -f 'sleep 1000' | while read -r p; do
          [ "$(readlink /proc/$p/ns/pid)" = "$(readlink /proc/$($H state rs1 | jq .pid)/ns/pid)" ] && echo "$p"
        done | head -n 1)
  [ -n "$pid" ]
  first=$($H state rs1 | jq .pid)
  $H reset rs1
  [ "$($H state rs1 | jq -r .status)" = running ]
  [ "$($H state rs1 | jq .pid)" != "$first" ]
  pid_gone "$pid"
  pid_gone "$first"
  [ -z "$($H exec rs1 -- ls -A /work)" ]
  # The new /work is the sandbox's to write, as create made it.
  $H exec rs1 -- sh -c 'echo new > /work/h'
  [ "$($H exec rs1 -- cat /work/h)" = new ]
  # Nothing of the old state is left in the data dir but the new /work.
  [ "$(ls -A "$DATA/sandboxes/rs1")" = work ]
  $H delete --force rs1
}

@test "reset: image sandbox: the writable layer is new and empty, the image's files are there, what was deleted is back" {
  import_busybox
  $H run --detach --image busybox rs2 -- sleep 1000
  $H exec rs2 -- sh -c 'echo secret > /root.f; rm /bin/ls; mkdir -p /var/x; echo y > /var/x/y'
  run ! $H exec rs2 -- test -e /bin/ls
  $H reset rs2
  [ "$($H state rs2 | jq -r .status)" = running ]
  run ! $H exec rs2 -- test -e /root.f
  run ! $H exec rs2 -- test -e /var/x/y
  $H exec rs2 -- test -e /bin/ls
  # The upper dir is empty again, its old contents gone from the data dir.
  [ -z "$(ls -A "$DATA/sandboxes/rs2/rootfs/upper")" ]
  run ! compgen -G "$DATA/sandboxes/rs2/.reset.*"
  $H delete --force rs2
}

@test "reset: a detached sandbox's log is forgotten; a stopped sandbox is started" {
  # Each run prints a token of its own (the kernel's boot-unique uuid).
  $H run --detach --profile host rs3 -- sh -c 'echo run-$(cat /proc/sys/kernel/random/uuid); while :; do sleep 0.1; done'
  wait_for 10 sh -c "$H logs rs3 | grep -q run-"
  token=$($H logs rs3 | grep -o 'run-[0-9a-f-]*' | head -n 1)
  $H reset --time 5s rs3
  wait_for 10 sh -c "$H logs rs3 | grep -q run-"
  run ! sh -c "$H logs rs3 | grep -qF $token"
  [ "$($H state rs3 | jq -r .status)" = running ]
  $H stop --time 0 rs3
  [ "$($H state rs3 | jq -r .status)" = stopped ]
  $H reset rs3
  [ "$($H state rs3 | jq -r .status)" = running ]
  $H delete --force rs3
}

@test "attack: the next user of a reset sandbox reads nothing of the last one's kept processes or network decisions" {
  # The proxy refuses an unlisted name before any lookup: nothing leaves.
  $H run --detach --profile host --network allowlist --allow example.invalid rs5 -- sleep 1000
  p=$($H exec --detach rs5 sh -c 'echo last-user-output; exec sleep 1000')
  wait_for 10 sh -c "$H logs --process $p rs5 | grep -q last-user-output"
  $H exec rs5 -- sh -c 'curl -s -o /dev/null http://forbidden.example/last-user-path; true'
  wait_for 10 sh -c "$H logs --network rs5 | grep -q last-user-path"
  $H reset rs5
  run -0 $H ps --detached --format json rs5
  [ "$output" = "[]" ]
  run -125 $H logs --process "$p" rs5
  [[ "$output" == *"has no process $p"* ]]
  run -0 $H logs --network rs5
  [[ "$output" != *last-user-path* ]]
  [ ! -e "$STATE/rs5/procs" ]
  # The next user's own work is kept and logged as before.
  q=$($H exec --detach rs5 echo next-user)
  run -0 $H wait --process "$q" rs5
  [ "$($H logs --process "$q" rs5)" = next-user ]
  $H exec rs5 -- sh -c 'curl -s -o /dev/null http://forbidden.example/next-user-path; true'
  wait_for 10 sh -c "$H logs --network rs5 | grep -q next-user-path"
  $H delete --force rs5
}

@test "reset: no such sandbox, a bad duration, extra arguments: 125 and a clear error" {
  run -125 $H reset nope
  [[ $output == *"nope"* ]]
  $H run --detach --profile host rs4
  run -125 $H reset --time 5x rs4
  [[ $output == *"bad duration"* ]]
  run -125 $H reset rs4 extra
  [[ $output == *"exactly one sandbox ID"* ]]
  [ "$($H state rs4 | jq -r .status)" = running ]
  $H delete --force rs4
}
