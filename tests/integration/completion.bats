#!/usr/bin/env bats
# bash completion (contrib/hako.bash-completion, installed by make install):
# verbs and options come from hako's own --help, ids from `list -q`.

load helpers

setup_file () { hako_setup_file; }
setup () {
  hako_setup
  source "$BATS_TEST_DIRNAME/../../contrib/hako.bash-completion"
  PATH="$(dirname "$HAKO"):$PATH"
}
teardown () { hako_teardown; }

# complete WORD...: what the completion offers for the last word.
complete_words () {
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _hako
  echo "${COMPREPLY[*]}"
}

@test "completion: verbs, each verb's options, profiles, and ids under --root" {
  [ "$(complete_words hako ex)" = exec ]
  verbs=" $(complete_words hako '') "
  # (not the word r-u-n between spaces: bats rewrites it, even inside [[ ]])
  [[ "$verbs" == *" start "*" exec "*" delete "* ]]
  [ "$(complete_words hako exec --ti)" = --timeout ]
  [[ "$(complete_words hako run --)" == *--detach* ]]
  [ "$(complete_words hako spec --profile h)" = host ]
  # fs: its subcommand first, then its options (from hako fs --help).
  [ "$(complete_words hako fs wa)" = watch ]
  [ "$(complete_words hako fs ls --dep)" = --depth ]
  $H run --detach --profile host cmpl -- sleep 1000
  [ "$(complete_words hako --root "$STATE" exec cm)" = cmpl ]
  [ "$(complete_words hako --root "$STATE" kill cmpl KI)" = KILL ]
  # After -- the words belong to the command inside.
  [ -z "$(complete_words hako --root "$STATE" exec cmpl -- l)" ]
  # fork: the sandbox forked is an id; the NEW ids after it are new names.
  [ "$(complete_words hako fo)" = fork ]
  [ "$(complete_words hako --root "$STATE" fork cm)" = cmpl ]
  [ "$(complete_words hako --root "$STATE" fork --format json cm)" = cmpl ]
  [ -z "$(complete_words hako --root "$STATE" fork cmpl cm)" ]
  [ "$(complete_words hako fork --format j)" = json ]
}

@test "completion: -p is spec's profile, and run's published port (nothing to offer)" {
  [ "$(complete_words hako spec -p h)" = host ]
  [ -z "$(complete_words hako run -p h)" ]
  [[ "$(complete_words hako run --pu)" == --publish ]]
  [[ "$(complete_words hako port --)" == *--add* ]]
  [[ " $(complete_words hako po) " == *" port "* ]]
}

@test "completion: kept processes' verbs and options (stdin, resize, --process, --detached)" {
  verbs=" $(complete_words hako '') "
  [[ "$verbs" == *" stdin "* ]]
  [[ "$verbs" == *" resize "* ]]
  [[ " $(complete_words hako stdin --) " == *" --close "* ]]
  [[ " $(complete_words hako ps --) " == *" --detached "* ]]
  [[ " $(complete_words hako logs --) " == *" --process "* ]]
  # a process id is no file
  [ -z "$(complete_words hako logs --process '')" ]
  [ "$(complete_words hako exec --tty-size 24)" = 24x80 ]
}
