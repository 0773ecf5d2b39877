# tests/style/bats.sh's walker.  Input: the bats file itself (to name lines),
# then bash's `declare -f` of it.  Output, one line each:
# FILE:LINE <tab> bang|chain <tab> FUNCTION: COMMAND
# A command is scanned character by character with a stack of contexts
# (C code, S $( ), P ( ), Q '', E $'', D "", V ${ }, K ``, B [[ ]],
# A (( ))); its "skeleton" keeps only what is at the top level, so `&&`,
# `||` and `;` inside quotes, substitutions or [[ ]] do not split it.

FNR == NR { src[FNR] = $0; nsrc = FNR; next }

function push(c) { st = st c }
function pop() { st = substr(st, 1, length(st) - 1) }
function top() { return substr(st, length(st), 1) }
function wordstart(s, i,   p) {
  if (i == 1) return 1
  p = substr(s, i - 1, 1)
  return p == " " || p == "\t" || p == ";" || p == "&" || p == "|" || p == "("
}
function wordend(s, i,   n) {
  n = substr(s, i, 1)
  return n == "" || n == " " || n == "\t" || n == ";" || n == "&" || n == "|" || n == ")"
}
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function nospace(s) { gsub(/[ \t\\]/, "", s); return s }

# scan LINE: add it to buf/skel, updating the context stack and queueing
# here-document delimiters.
function scan(s,   i, n, c, c2, c3, t, before, d, q, k) {
  n = length(s)
  for (i = 1; i <= n; i++) {
    c = substr(s, i, 1); c2 = substr(s, i, 2); c3 = substr(s, i, 3)
    t = top(); before = st; k = 1
    if (t == "Q") { if (c == "'") pop() }
    else if (t == "E") { if (c == "\\") k = 2; else if (c == "'") pop() }
    else if (t == "K") { if (c == "\\") k = 2; else if (c == "`") pop() }
    else if (t == "D") {
      if (c == "\\") k = 2
      else if (c == "\"") pop()
      else if (c3 == "$((") { push("A"); k = 3 }
      else if (c2 == "$(") { push("S"); k = 2 }
      else if (c2 == "${") { push("V"); k = 2 }
      else if (c == "`") push("K")
    } else {
      # code: C, S, P, V, B or A
      if (c == "\\") k = 2
      else if (c2 == "$'") { push("E"); k = 2 }
      else if (c == "'") push("Q")
      else if (c == "\"") push("D")
      else if (c3 == "$((") { push("A"); k = 3 }
      else if (c2 == "$(") { push("S"); k = 2 }
      else if (c2 == "${") { push("V"); k = 2 }
      else if (c == "`") push("K")
      else if (t == "V" && c == "}") pop()
      else if (t == "A" && c2 == "))") { pop(); k = 2 }
      else if (c == "(" && (t == "S" || t == "P" || t == "A")) push("P")
      else if (c == ")" && (t == "S" || t == "P")) pop()
      else if (t == "B" && c2 == "]]" && wordstart(s, i) && wordend(s, i + 2)) { pop(); k = 2 }
      else if (t != "B" && t != "A" && c2 == "[[" && wordstart(s, i) && wordend(s, i + 2)) { push("B"); k = 2 }
      else if (t != "B" && t != "A" && c2 == "((" && wordstart(s, i)) { push("A"); k = 2 }
      else if (t != "A" && c == "(" && t == "C") push("P")
      else if (c == "#" && wordstart(s, i) && (t == "C" || t == "S" || t == "P")) { k = n - i + 1 }
      else if (c3 == "<<<") k = 3
      else if (c2 == "<<" && t != "B" && t != "A") {
        d = substr(s, i + 2); k = 2
        if (substr(d, 1, 1) == "-") { d = substr(d, 2); k++ }
        while (substr(d, 1, 1) == " ") { d = substr(d, 2); k++ }
        q = substr(d, 1, 1)
        if (q == "'" || q == "\"") {
          d = substr(d, 2); d = substr(d, 1, index(d, q) - 1); k += length(d) + 2
        } else {
          match(d, /^[^ \t;&|)<>]*/); d = substr(d, 1, RLENGTH); k += RLENGTH
        }
        gsub(/\\/, "", d)
        heredocs[++nheredocs] = d
      }
    }
    buf = buf substr(s, i, k)
    skel = skel ((before == "C" && st == "C") ? substr(s, i, k) : substr("xxx", 1, k))
    i += k - 1
  }
}

# check E: is the command E a check (what an assertion chain ends in)?
function check(e,   w) {
  e = trim(e)
  if (e ~ /^!([ \t]|$)/) return 1
  split(e, w, /[ \t]+/)
  if (w[1] == "[" || w[1] == "[[" || w[1] == "test" || w[1] ~ /^\(\(/) return 1
  if (w[1] == "cmp" || w[1] == "diff") return 1
  if (w[1] == "kill" && w[2] == "-0") return 1
  if (w[1] == "jq" && e ~ /[ \t]-[a-zA-Z]*e/) return 1
  if (w[1] == "grep" && e ~ /[ \t]-[a-zA-Z]*q/) return 1
  return 0
}

# command TEXT SKELETON: one command (between top-level `;`): "bang",
# "chain" or "".
function command(text, sk,   i, n, first, last, ors, ands, w) {
  first = trim(text)
  split(first, w, /[ \t]+/)
  if (w[1] ~ /^(if|elif|while|until|for|case|select|function|then|do|else|fi|done|esac|\{|\}|\(|\))$/) return ""
  ors = index(sk, "||") > 0
  if (ors) return ""
  n = 0; last = 1; ands = 0
  for (i = 1; i < length(sk); i++)
    if (substr(sk, i, 2) == "&&") { ands++; last = i + 2; i++ }
  if (ands == 0) return first ~ /^!([ \t]|$)/ ? "bang" : ""
  if (!check(substr(text, last))) return ""
  return substr(trim(substr(text, last)), 1, 1) == "!" ? "bang" : "chain"
}

# logical END: a whole command line is in buf: record its commands.
function logical(   i, start, ind, text, sk, kind, pattern) {
  if (trim(buf) == "") { buf = skel = ""; return }
  match(buf, /^ */); ind = RLENGTH
  pattern = casearm
  casearm = 0
  if (trim(buf) ~ /^case .* in$/ || trim(buf) == ";;") casearm = 1
  if (nf > 0 && ind == fbody[nf]) lastbody[nf] = ++nstmt
  if (nf > 0 && !pattern && fname[nf] != "__file__") {
    start = 1
    for (i = 1; i <= length(skel) + 1; i++) {
      if (i <= length(skel) && substr(skel, i, 1) != ";" && !(substr(skel, i, 1) == "&" && substr(skel, i - 1, 3) !~ /&&|>&|&>/)) continue
      text = substr(buf, start, i - start); sk = substr(skel, start, i - start)
      start = i + 1
      if (substr(skel, i, 2) == ";;") i++
      kind = command(text, sk)
      if (kind == "") continue
      nfound++
      fkind[nfound] = kind; ftext[nfound] = trim(text); ffunc[nfound] = nf
      fstmt[nfound] = nstmt; fbodylevel[nfound] = (ind == fbody[nf])
      flastpart[nfound] = (trim(substr(buf, i + 1)) == "" || trim(substr(buf, i + 1)) == ";")
    }
  }
  buf = skel = ""
}

# lineof N: the source line of finding N, searched from its function's line.
# (Its first 24 characters but blanks; fewer when a continuation split it.)
function lineof(n,   key, j, from, len) {
  from = fline[ffunc[n]]
  if (from > searched[ffunc[n]] + 0) searched[ffunc[n]] = from
  for (len = 24; len >= 6; len = int(len / 2)) {
    key = substr(nospace(ftext[n]), 1, len)
    for (j = searched[ffunc[n]]; j <= nsrc; j++)
      if (index(nospace(src[j]), key) > 0) { searched[ffunc[n]] = j + 1; return j }
  }
  return from
}

# close_function: report its findings but its last command.
function close_function(   n, name) {
  for (n = 1; n <= nfound; n++) {
    if (ffunc[n] != nf || fdone[n]) continue
    fdone[n] = 1
    if (fbodylevel[n] && fstmt[n] == lastbody[nf] && flastpart[n]) continue
    name = fname[nf] ~ /^__t_/ ? "@test " ftestname[nf] : fname[nf] "()"
    gsub(/\t/, " ", ftext[n])
    printf "%s:%d\t%s\t%s: %s\n", file, lineof(n), fkind[n], name, substr(ftext[n], 1, 160)
  }
  nf--
}

{
  line = $0
  if (skipto != "") {
    if (line == skipto || (substr(line, 1, 1) == "\t" && trim(line) == skipto)) {
      skipto = (hd < nheredocs) ? heredocs[++hd] : ""
    }
    next
  }
  if (st == "") st = "C"
  if (st == "C" && buf == "") {
    if (match(line, /^ *(function )?[^ ]+ \(\) $/)) {
      header = line; sub(/^ *(function )?/, "", header); sub(/ \(\) $/, "", header)
      match(line, /^ */); hind = RLENGTH; pending = 1
      next
    }
    if (pending && line ~ /^ *\{ $/) {
      pending = 0; nf++; fname[nf] = header; fbody[nf] = hind + 4; findent[nf] = hind
      lastbody[nf] = 0
      fline[nf] = 1
      if (header ~ /^__t_[0-9]+$/) {
        fline[nf] = substr(header, 5) + 0
        ftestname[nf] = src[fline[nf]]
        sub(/^[ \t]*@test[ \t]+/, "", ftestname[nf]); sub(/[ \t]*\{[ \t]*$/, "", ftestname[nf])
      } else {
        for (j = 1; j <= nsrc; j++)
          if (index(src[j], header) && src[j] ~ ("^[ \t]*(function[ \t]+)?" header "[ \t]*(\\(\\))?[ \t]*(\\{.*)?$")) { fline[nf] = j; break }
      }
      next
    }
    pending = 0
    if (nf > 0 && match(line, /^ *\}/) && RLENGTH - 1 == findent[nf]) {
      close_function()
      if (nf > 0 && findent[nf + 1] == fbody[nf]) lastbody[nf] = ++nstmt
      next
    }
  }
  scan(line)
  if (st == "C") logical()
  else { buf = buf " "; skel = skel "x" }
  if (hd < nheredocs) skipto = heredocs[++hd]
}
