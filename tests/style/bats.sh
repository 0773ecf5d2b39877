#!/bin/sh
# Assertions in the bats tests that can fail.  bats runs a test under
# `set -e`, which ignores the status of a command inverted with `!` and of
# every command of an && list but its last: `! grep -q bad out` followed by
# another line, or `[ "$a" = 1 ] && [ "$b" = 2 ]`, passes whatever the
# output (only a test's or a helper's last command sets its status).
# Two TAP lines, each offender named as FILE:LINE:
#   1. a `!` command that is not the last command of its @test or function
#      body, nor followed by `|| ...` (write `run ! cmd`, `run -1 cmd`,
#      `[ A != B ]` or `! cmd || false`);
#   2. an && chain of checks (`[ ]`, `[[ ]]`, test, grep, kill -0, jq -e,
#      cmp, diff, `!`) outside an if/while condition: split it into one
#      line per check.  Not an assertion: `CHECK && action` (a conditional
#      such as `[ -n "$p" ] && kill "$p"`), the `&& skip`, `&& return`,
#      `&& continue`, `&& break` and `&& exit` idioms, and a list with ||.
# Read: the bodies of @test blocks and of functions (one column-0 `}`
# closes them) in tests/integration/*.bats and *.bash, with line
# continuations joined and quoted strings, $(...), [[ ]] and heredocs
# skipped, so a script passed to `sh -c '...'` is not taken for bats code.
# Usage: bats.sh SRCDIR
set -u
cd "${1:-.}" || exit 1
files=$(ls tests/integration/*.bats tests/integration/*.bash 2> /dev/null)
echo "1..2"
# shellcheck disable=SC2086
out=$(awk '
  # scan(s): the characters of s at the top level of the shell (not in
  # quotes, $(...), ${...}, [[ ]] or a comment), with a Q for a quoted
  # string, an S for a substitution, ( ) and [[ ]] kept; the stack st[1..sd]
  # carries over to the next line.  Sets cont when the line ends in `\`.
  function scan(s,   i, c, n, top, o, w) {
    o = ""; n = length(s); cont = 0
    for (i = 1; i <= n; i++) {
      c = substr(s, i, 1); top = sd ? st[sd] : "N"
      w = (i == 1 || substr(s, i - 1, 1) ~ /[ \t;&|(]/)
      if (top == "Q") { if (c == "\047") sd--; continue }
      if (top == "A" || top == "B" || top == "D") {
        if (c == "\\") { i++; continue }
        if (top == "A" && c == "\047") { sd--; continue }
        if (top == "B" && c == "`") { sd--; continue }
        if (top == "D" && c == "\"") { sd--; continue }
        if (top == "D" && substr(s, i, 2) == "$(") { st[++sd] = "S"; i++; continue }
        if (top == "D" && substr(s, i, 2) == "${") { st[++sd] = "V"; i++; continue }
        if (top == "D" && c == "`") { st[++sd] = "B" }
        continue
      }
      # N (top), S and P ($(...) and (...)), V (${...}), T ([[ ]])
      if (c == "\\") { if (i == n) cont = 1; else if (!sd) o = o substr(s, i, 2); i++; continue }
      if (c == "#" && w && top != "V") break
      if (top == "V" && c == "}") { sd--; continue }
      if (top == "T" && substr(s, i, 2) == "]]" && w) { sd--; i++; if (!sd) o = o " ]]"; continue }
      if (c == "\047" || c == "\"" || c == "`" || substr(s, i, 2) == "$\047" || substr(s, i, 2) == "${" || substr(s, i, 2) == "$(") {
        if (!sd) o = o (substr(s, i, 2) == "$(" ? "S" : "Q")
        if (c == "$") { st[++sd] = substr(s, i + 1, 1) == "(" ? "S" : substr(s, i + 1, 1) == "{" ? "V" : "A"; i++ }
        else st[++sd] = c == "\047" ? "Q" : c == "\"" ? "D" : "B"
        continue
      }
      if (substr(s, i, 2) == "[[" && w && substr(s, i + 2, 1) ~ /[ \t]/) { if (!sd) o = o "[[ "; st[++sd] = "T"; i++; continue }
      if (c == "(") { if (!sd) o = o "("; st[++sd] = "P"; continue }
      if (c == ")" && (top == "S" || top == "P")) { sd--; if (!sd && top == "P") o = o ")"; continue }
      if (!sd) o = o c
    }
    return o
  }
  function first(e,   w) {
    sub(/^[ \t]+/, "", e)
    while (match(e, /^(then|do|else|\{|\(|time)([ \t]+|$)/)) { e = substr(e, RLENGTH + 1) }
    return e
  }
  function is_check(e) {
    e = first(e)
    return e ~ /^(\[|\[\[|test|!|grep|cmp|diff|\(\()([ \t]|$)/ || e ~ /^kill[ \t]+-0/ || e ~ /^jq[ \t]+(-[a-z]*e|--exit-status)/
  }
  function report(rule, ln, text) {
    gsub(/[ \t]+/, " ", text)
    print rule "\t" FILENAME ":" ln "\t" substr(text, 1, 120)
  }
  # one logical line (its skeleton sk, first line ln, raw text raw) of a body
  function logical(sk, ln, raw,   n, i, j, e, op, ops, el, ls, cond, hasor, k) {
    if (sk ~ /^[ \t]*$/) return
    # a new command after the pending `!`: it was not the last one
    for (k = 1; k <= npend; k++) report("bang", pend[k], pendt[k])
    npend = 0
    # split at ; & && || (not ;; nor >& &>)
    n = 0; e = ""
    for (i = 1; i <= length(sk); i++) {
      op = substr(sk, i, 2)
      if (op == "&&" || op == "||") { el[++n] = e; ops[n] = op; e = ""; i++; continue }
      op = substr(sk, i, 1)
      if (op == ";" && substr(sk, i + 1, 1) == ";") { e = e ";;"; i++; continue }
      if (op == ";" || (op == "&" && substr(sk, i - 1, 1) != ">" && substr(sk, i + 1, 1) != ">")) {
        el[++n] = e; ops[n] = ";"; e = ""; continue
      }
      e = e op
    }
    el[++n] = e; ops[n] = ";"
    # each and-or list: elements ls..j, the last one where ops[j] is ;
    ls = 1
    for (j = 1; j <= n; j++) {
      if (ops[j] != ";") continue
      cond = first(el[ls]) ~ /^(if|elif|while|until)([ \t]|$)/
      hasor = 0; for (i = ls; i < j; i++) if (ops[i] == "||") hasor = 1
      for (i = ls; i <= j && !cond; i++) {
        if (first(el[i]) !~ /^!([ \t]|$)/) continue
        k = 0; for (e = i; e < j; e++) if (ops[e] == "||") k = 1
        if (k) continue
        if (j == n) { pend[++npend] = ln; pendt[npend] = raw }
        else report("bang", ln, raw)
      }
      if (!cond && !hasor && j > ls && first(el[j]) !~ /^(skip|return|continue|break|exit)([ \t]|$)/ \
          && is_check(el[ls]) && is_check(el[j]))
        report("and", ln, raw)
      ls = j + 1
    }
  }
  FNR == 1 { body = 0; sd = 0; hd = ""; acc = ""; npend = 0 }
  # heredoc lines are not shell code
  hd != "" { t = $0; if (hdtab) sub(/^\t+/, "", t); if (t == hd) hd = ""; next }
  !body && /^(@test .*|(function[ \t]+)?[A-Za-z_][A-Za-z0-9_:-]*[ \t]*\(\))[ \t]*\{[ \t]*$/ { body = 1; next }
  !body && /^(function[ \t]+)?[A-Za-z_][A-Za-z0-9_:-]*[ \t]*\(\)[ \t]*\{.*\}[ \t]*$/ {
    s = $0; sub(/^[^{]*\{/, "", s); sub(/\}[ \t]*$/, "", s)
    sd = 0; logical(scan(s), FNR, $0); npend = 0; next
  }
  !body { next }
  sd == 0 && acc == "" && /^\}/ { npend = 0; body = 0; next }
  {
    if (acc == "" && sd == 0) { aln = FNR; araw = "" }
    wasin = sd
    if (sd == 0 && match($0, /(^|[^<])<<-?[ \t]*[\047"]?[A-Za-z_][A-Za-z0-9_]*/)) {
      h = substr($0, RSTART, RLENGTH); hdtab = h ~ /<<-/
      sub(/^[^<]*<<-?[ \t]*[\047"]?/, "", h); hd = h
    }
    sk = scan($0)
    araw = araw " " $0
    acc = acc " " sk
    if (sd > 0 || cont || sk ~ /(&&|\|\||\|)[ \t]*$/) next
    logical(acc, aln, araw); acc = ""
  }
' $files)
bang=$(printf '%s\n' "$out" | awk -F '\t' '$1 == "bang"')
and=$(printf '%s\n' "$out" | awk -F '\t' '$1 == "and"')
for rule in bang and; do
  if [ "$rule" = bang ]; then
    n=1 what="a \`!\` command that is not its test's or function's last command (use run !, run -N, [ A != B ] or || false)"
    hits=$bang
  else
    n=2 what="an && chain of checks, of which only the last is checked (one check a line)"
    hits=$and
  fi
  if [ -z "$hits" ]; then
    echo "ok $n - none: $what"
  else
    echo "not ok $n - $(printf '%s\n' "$hits" | wc -l) times $what:" \
      "$(printf '%s\n' "$hits" | cut -f2 | tr '\n' ' ')"
    printf '%s\n' "$hits" | awk -F '\t' '{ print "# " $2 ": " $3 }'
  fi
done
