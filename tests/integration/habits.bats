#!/usr/bin/env bats
# What docker, podman and runc users type by habit (issue 36, item 12):
# several ids for delete, rm, exec -w and -it, run -it, --name, --json.

load helpers
bats_require_minimum_version 1.5.0

setup_file () { hako_setup_file; }
setup () { hako_setup; }
teardown () { hako_teardown; }

@test "delete takes several ids (each tried, 125 if any failed); rm is delete" {
  for id in a b c d; do $H run -d --profile host "$id"; done
  $H delete --force a b
  run -0 $H list -q
  [ "$output" = "$(printf 'c\nd')" ]
  # --force: a missing one is no error, as runc's delete --force.
  $H rm --force c nosuch-x
  run -0 $H list -q
  [ "$output" = d ]
  run -125 $H rm d nosuch-y
  [[ "$output" == *"delete d: cannot delete sandbox d: it is running"* ]]
  [[ "$output" == *"delete nosuch-y: sandbox nosuch-y does not exist"* ]]
  $H rm -f d
  run -0 $H list -q
  [ -z "$output" ]
  run -125 $H delete
  [[ "$output" == *"expects a sandbox ID"* ]]
  run -125 $H delete --regex a b
  [[ "$output" == *"--regex expects exactly one pattern"* ]]
}

@test "exec -w/--workdir is --cwd; exec -i passes stdin; --format json is --json" {
  $H run -d --profile host s
  run -0 $H exec -w /usr s pwd
  [ "$output" = /usr ]
  run -0 $H exec --workdir /tmp s pwd
  [ "$output" = /tmp ]
  run -0 $H exec -i s cat <<< "from stdin"
  [ "$output" = "from stdin" ]
  run -0 $H exec --format json s echo x
  [ "$(echo "$output" | jq -r .stdout)" = x ]
  [ "$(echo "$output" | jq -r .exit_code)" = 0 ]
  run -125 $H exec --format yaml s true
  [[ "$output" == *'--format "yaml": expected text or json'* ]]
  $H delete --force s
}

@test "exec -it and run -it without a terminal on stdin say so, as docker does; -t alone runs" {
  $H run -d --profile host s
  run -125 $H exec -it s true < /dev/null
  [[ "$output" == *"hako: exec: the input device is not a TTY"* ]]
  run -125 $H run --rm -it --profile host x -- true < /dev/null
  [[ "$output" == *"hako: run: the input device is not a TTY"* ]]
  [ ! -e "$STATE/x" ]
  # -t alone: a terminal inside (process.terminal), stdin a pipe outside.
  run -0 $H run --rm -t --profile host x -- sh -c 'test -t 0 && test -t 1 && echo a-tty'
  [[ "$output" == *a-tty* ]]
  run -0 $H exec -t s sh -c 'test -t 0 && echo a-tty' < /dev/null
  [[ "$output" == *a-tty* ]]
  $H delete --force s
}

@test "run and create take --name ID (docker's), refusing a different operand" {
  run -0 $H run --rm --profile host --name n1 -- echo named
  [ "$output" = named ]
  $H create --profile host --name n2
  [ "$($H state n2 | jq -r .status)" = created ]
  $H delete --force n2
  run -125 $H run --rm --profile host --name n3 n4 -- true
  [[ "$output" == *'--name "n3" and the ID "n4" differ'* ]]
  [ ! -e "$STATE/n3" ]
  [ ! -e "$STATE/n4" ]
  run -125 $H run --rm --profile host -- true
  [[ "$output" == *"expects exactly one sandbox ID (or --name ID"* ]]
}

@test "--json wherever --format json is (list, ps, doctor) and --format json where --json is (wait)" {
  $H run -d --profile host s
  run -0 $H list --json
  [ "$(echo "$output" | jq -r '.[0].id')" = s ]
  run -0 $H ps --json s
  [ "$(echo "$output" | jq -r 'length')" -ge 1 ]
  run -0 $H doctor --json
  echo "$output" | jq -e .checks > /dev/null
  $H kill s KILL
  run -137 $H wait --format json s
  [ "$(echo "$output" | jq -r .status)" = stopped ]
  $H delete s
}

@test "run/create --label K=V and list --filter label=K=V / label=K / status= / id= (podman's spelling)" {
  $H run -d --profile host --label app=web --label tier=1 --label app=api a
  $H run -d --profile host --label app=web b
  $H create --profile host c
  # The last --label of a key wins; labels are in the state's annotations.
  [ "$($H state a | jq -r '.annotations["io.hako.label.app"]')" = api ]
  run -0 $H list --filter label=app=web -q
  [ "$output" = b ]
  run -0 $H list --filter label=app -q
  [ "$output" = "$(printf 'a\nb')" ]
  run -0 $H list --filter status=created -q
  [ "$output" = c ]
  run -0 $H list --filter label=app --filter status=running --filter label=tier=1 --json
  [ "$(echo "$output" | jq -c '[.[] | [.id, .labels]]')" = '[["a",{"app":"api","tier":"1"}]]' ]
  run -0 $H list --filter id=c --json
  [ "$(echo "$output" | jq -c '.[0].labels')" = '{}' ]
  # Bad input: a label without =, a filter of no known kind, an unknown status.
  run -125 $H run -d --profile host --label noequals d
  [[ "$output" == *'--label "noequals": expected KEY=VALUE'* ]]
  [ ! -e "$STATE/d" ]
  run -125 $H list --filter color=red
  [[ "$output" == *'--filter "color=red": expected label=KEY=VALUE'* ]]
  run -125 $H list --filter status=sleeping
  [[ "$output" == *'--filter "status=sleeping"'* ]]
  $H delete --force a b c
}
