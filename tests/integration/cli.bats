#!/usr/bin/env bats
# The CLI as scripts and people use it: errors a program can branch on
# (--log-format json, one object with a kind), "did you mean", usage
# messages naming the verb, --format json on every verb that prints a
# result, and a list that fits long ids.

bats_require_minimum_version 1.5.0

load helpers

setup_file () { hako_setup_file; image_fixtures; }
setup () { hako_setup; J="$H --log-format json"; }
teardown () { hako_teardown; }

# kind KIND VERB [ID]: the last `run` failed with 125 and printed exactly
# one line on stderr, a JSON object with that kind, verb and id (no id when
# ID is not given), whose msg is the text mode's line.
kind () {
  echo "status=$status stderr=$stderr" >&2
  [ "$status" -eq 125 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  echo "$stderr" | jq -e --arg k "$1" --arg v "$2" --arg id "${3-}" \
    '.level == "error" and .kind == $k and .verb == $v and (.msg | type == "string")
     and (if $id == "" then has("id") | not else .id == $id end)' >/dev/null
}

@test "errors: the mistakes a new user makes each have their kind" {
  # An id that does not exist, whatever the verb.
  for v in state delete kill pause ps events; do
    run --separate-stderr $J $v nosuch
    kind not_found $v nosuch
  done
  run --separate-stderr $J exec nosuch true
  kind not_found exec nosuch
  # The same id twice.
  b=$(new_bundle dup)
  set_args "$b" sleep 1000
  $H create --bundle "$b" dup
  run --separate-stderr $J create --bundle "$b" dup
  kind exists create dup
  # exec into a stopped sandbox (a created one takes it, as runc's).
  set_args "$b" true
  $H run --bundle "$b" done
  run --separate-stderr $J exec done true
  kind not_running exec done
  run --separate-stderr $J kill done KILL
  kind not_running kill done
  # A bad flag value, an unknown option, a missing operand, a bad id.
  run --separate-stderr $J list --format yaml
  kind invalid_argument list
  run --separate-stderr $J list --frmat json
  kind invalid_argument list
  run --separate-stderr $J stop --time soon dup
  kind invalid_argument stop
  run --separate-stderr $J state
  kind invalid_argument state
  run --separate-stderr $J run --profile host 'a/b' -- true
  kind invalid_argument run a/b
  run --separate-stderr $J run --profile nosuch x -- true
  kind invalid_argument run x
  # A malformed config.json, and one that parses but is wrong.
  b=$(new_bundle bad)
  echo '{"ociVersion": "1.0.2", "process": {' > "$b/config.json"
  run --separate-stderr $J create --bundle "$b" bad
  kind invalid_config create bad
  b=$(new_bundle wrong)
  edit_config "$b" '.process.args = []'
  run --separate-stderr $J run --bundle "$b" wrong
  kind invalid_config run wrong
  # A missing image, a missing bundle.
  run --separate-stderr $J run --image nosuch:1 img -- true
  kind not_found run img
  run --separate-stderr $J create --bundle "$TEST_ROOT/nowhere" nb
  kind not_found create nb
  # Nothing was left behind by any of them.
  [ "$(ls "$STATE" | sort | tr '\n' ' ')" = "done dup " ]
}

@test "errors: a full node pool is admission, a malformed node config invalid_config" {
  echo '{"memory_pool": "64M", "overcommit": 1}' > "$TEST_ROOT/node.json"
  b=$(new_bundle pool)
  edit_config "$b" '.linux.resources.memory = {"limit": 67108864}'
  set_args "$b" sleep 1000
  $H --node-config "$TEST_ROOT/node.json" create --bundle "$b" p1
  run --separate-stderr $J --node-config "$TEST_ROOT/node.json" create --bundle "$b" p2
  kind admission create p2
  [[ "$(echo "$stderr" | jq -r .msg)" == *"not enough memory in the node's pool"* ]]
  [ ! -e "$STATE/p2" ]
  echo '{"require_memory_limit": true}' > "$TEST_ROOT/node.json"
  # The profiles have a memory limit by default: a bundle without one.
  nb=$(new_bundle nolimit)
  edit_config "$nb" 'del(.linux.resources.memory)'
  run --separate-stderr $J --node-config "$TEST_ROOT/node.json" run --bundle "$nb" nolimit -- true
  kind admission run nolimit
  echo '{"memory_pool": "lots"}' > "$TEST_ROOT/node.json"
  run --separate-stderr $J --node-config "$TEST_ROOT/node.json" create --bundle "$b" p3
  kind invalid_config create p3
}

@test "errors: what this host cannot enforce is unsupported" {
  b=$(new_bundle huge)
  # No host has 3 MB huge pages: either the hugetlb controller is missing
  # or the page size is.
  edit_config "$b" '.linux.resources.hugepageLimits = [{"pageSize": "3MB", "limit": 1048576}]'
  run --separate-stderr $J create --bundle "$b" huge
  kind unsupported create huge
  [ ! -e "$STATE/huge" ]
}

@test "errors: a command that is missing or not executable keeps its status, with a kind" {
  $H run --detach --profile host box -- sleep 1000
  run -127 --separate-stderr $J exec box /no/such/command
  echo "$stderr" | jq -e '.kind == "not_found" and .verb == "exec" and .id == "box"'
  run -126 --separate-stderr $J exec box /etc/passwd
  echo "$stderr" | jq -e '.kind == "permission"'
}

@test "errors: HAKO_LOG_FORMAT=json gives the same line; text mode is unchanged" {
  run --separate-stderr $J state nosuch
  json=$stderr
  HAKO_LOG_FORMAT=json run --separate-stderr $H state nosuch
  [ "$status" -eq 125 ]
  [ "$stderr" = "$json" ]
  # The option wins over the environment.
  HAKO_LOG_FORMAT=json run --separate-stderr $H --log-format text state nosuch
  [ "$stderr" = "hako: state nosuch: sandbox nosuch does not exist" ]
  run --separate-stderr $H state nosuch
  [ "$status" -eq 125 ]
  [ "$stderr" = "hako: state nosuch: sandbox nosuch does not exist" ]
  [ "$(echo "$json" | jq -r .msg)" = "state nosuch: sandbox nosuch does not exist" ]
  HAKO_LOG_FORMAT=yaml run --separate-stderr $H state nosuch
  [ "$status" -eq 125 ]
  [[ "$stderr" == *"HAKO_LOG_FORMAT: \"yaml\" is not text or json"* ]]
  # --log FILE gets the same fields, with runc's time.
  run $J --log "$TEST_ROOT/log.json" state nosuch
  jq -e '.kind == "not_found" and .verb == "state" and .id == "nosuch" and (.time | test("Z$"))' \
    "$TEST_ROOT/log.json"
}

@test "errors: a message holding any bytes is still one valid JSON line" {
  id=$(printf 'bad\377\001"\\\n\342\200\250id')
  run --separate-stderr $J state "$id"
  [ "$status" -eq 125 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  echo "$stderr" | jq -e '.kind == "invalid_argument" and (.msg | contains("\ufffd\u0001\"\\\n\u2028"))'
  # An image verb names its operand "image", not "id".
  run --separate-stderr $J image inspect nosuch:1
  [ "$status" -eq 125 ]
  echo "$stderr" | jq -e '.kind == "not_found" and .verb == "image inspect" and .image == "nosuch:1" and (has("id") | not)'
}

@test "usage: a typo gets a suggestion, and the message names the verb" {
  run --separate-stderr $H ruun
  [ "$status" -eq 125 ]
  [ "$stderr" = 'hako: unknown verb "ruun"; did you mean "run"? (see `hako --help`)' ]
  run --separate-stderr $H lsit
  [[ "$stderr" == *'did you mean "list"?'* ]]
  run --separate-stderr $H frobnicate
  [ "$stderr" = 'hako: unknown verb "frobnicate" (see `hako --help`)' ]
  run --separate-stderr $H image ls --frmat json
  [ "$status" -eq 125 ]
  [ "$stderr" = "hako: image ls: unrecognized option '--frmat'; did you mean '--format'? (see \`hako image ls --help\`)" ]
  run --separate-stderr $H image lss
  [[ "$stderr" == *'image: unknown subcommand "lss"; did you mean "ls"?'* ]]
  run --separate-stderr $H exec --tiemout 1s box true
  [[ "$stderr" == "hako: exec: unrecognized option '--tiemout'; did you mean '--timeout'?"* ]]
  run --separate-stderr $H list -x
  [ "$stderr" = "hako: list: invalid option -- 'x' (see \`hako list --help\`)" ]
  run --separate-stderr $H list --format
  [ "$stderr" = "hako: list: option '--format' requires an argument (see \`hako list --help\`)" ]
  run --separate-stderr $H delete --force=yes x
  [ "$stderr" = "hako: delete: option '--force' doesn't allow an argument (see \`hako delete --help\`)" ]
  run --separate-stderr $H --bogus list
  [ "$status" -eq 125 ]
  [ "$stderr" = "hako: unrecognized option '--bogus' (see \`hako --help\`)" ]
  # One line each, never getopt's own on top.
  run --separate-stderr $H ps --frmat json box
  [ "${#stderr_lines[@]}" -eq 1 ]
}

@test "--format json: every verb that prints a table or a result prints valid JSON" {
  import_busybox
  $H run --detach --image busybox box -- sleep 1000
  # Something in its layer, for snapshot --image (an empty one is refused).
  $H exec box sh -c 'echo x > /made'
  # verb and arguments; each prints JSON on stdout and exits 0.
  while read -r cmd; do
    run --separate-stderr $H $cmd
    echo "$cmd: status=$status stderr=$stderr" >&2
    [ "$status" -eq 0 ]
    echo "$output" | jq -e . >/dev/null
  done <<EOF
list --format json
ps --format json box
ps --format json-full box
state --format json box
events --stats --format json box
features --format json
doctor --format json
image ls --format json
image inspect --format json busybox
image verify --format json
image export --format json busybox $TEST_ROOT/export
image import --format json --policy $TEST_ROOT/accept.json $IMG/layout --name again
snapshot --image snapped --format json box
exec --json box true
EOF
  [ "$($H list --format json | jq -r 'map(.id) | join(" ")')" = "box" ]
  $H image ls --format json | jq -e 'map(.name) | index("docker.io/library/snapped:latest") or index("snapped:latest")'
  $H image ls --format json | jq -e '.[0] | has("manifest") and has("config") and (.layers | type == "number")'
  [ "$($H image verify --format json | jq .blobs)" -gt 0 ]
  # Verbs that print JSON only say so when asked for text.
  run $H state --format text box
  [ "$status" -eq 125 ]
  [[ "$output" == *"prints json only"* ]]
}

@test "list: the ID column is as wide as the longest id" {
  long=$(printf 'a%.0s' $(seq 64))
  $H run --detach --profile host "$long" -- sleep 1000
  $H run --detach --profile host short -- sleep 1000
  run $H list
  [ "$status" -eq 0 ]
  # The columns after ID start at the same place on every line.
  [ "$(echo "$output" | awk '{print index($0, $2)}' | sort -u | wc -l)" -eq 1 ]
  [[ "${lines[1]}${lines[2]}" == *"$long "* ]]
}
