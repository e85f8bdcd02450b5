#!/bin/sh
# test-algorithms-doc.sh: the project's algorithm reference is doc/algorithms.md, and
# every citation of it resolves:
#  - no file cites the external reference it replaced (whose name is in OLD below);
#  - every section a file cites after the document's name ("§3.1", "§11.8–11.9",
#    "§1, §5, §7", "section 10", bare numbers, a list continued on the next line)
#    is a numbered heading of doc/algorithms.md.
# The checker runs on the tree and, as a self-test, on a scratch tree with known good
# and bad citations, which it must tell apart. TAP output.
set -u
: "${LDPGNN_SRCDIR:?not set: run through make check}"
LC_ALL=C
export LC_ALL
# Both names are built from pieces so that this file cites neither.
OLD="ALGORITHMS"".md"
DOC="doc/algorithms"".md"

# list_files ROOT: the tree's source files, relative to ROOT: git's list in a
# checkout (tracked and new files), otherwise every file but build and test output.
list_files() {
  top=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) || top=
  if [ -n "$top" ] && [ "$top" = "$(cd "$1" && pwd -P)" ]; then
    git -C "$1" ls-files --cached --others --exclude-standard | grep -v -e '\.log$' -e '\.trs$'
  else
    (cd "$1" && find . -type d \( -name .git -o -name autom4te.cache -o -name .deps -o -name .libs \) -prune \
      -o -type f ! -name '*.log' ! -name '*.trs' -print) | sed 's|^\./||'
  fi
}

# sections DOCFILE: the numbers of its headings ("## 11. DPRR" -> 11, "### 11.8 GIN" -> 11.8).
sections() {
  sed -n 's/^##*[[:space:]]*\([0-9][0-9]*\(\.[0-9][0-9]*\)*\)[.[:space:]].*/\1/p' "$1"
}

# check_tree ROOT: prints one line per bad citation.
check_tree() {
  root=$1
  if [ ! -f "$root/$DOC" ]; then echo "$DOC: missing"; return; fi
  secs=$(sections "$root/$DOC" | tr '\n' ' ')
  list_files "$root" | while read -r f; do
    [ "$f" = "$DOC" ] && continue
    [ -f "$root/$f" ] || continue
    grep -Iq -e "$OLD" -e "$DOC" "$root/$f" 2>/dev/null || continue
    awk -v file="$f" -v old="$OLD" -v doc="$DOC" -v secs="$secs" '
      function strip(s) { sub(/^[ \t]*(\*|#+|\/\/|--)?[ \t]*/, "", s); return s }
      function check(num, ln) {
        if (!(num in known)) printf "%s:%d: cites %s §%s, which has no such section\n", file, ln, doc, num
      }
      # parse(s, ln): the section numbers at the start of s, after the name.
      function parse(s, ln,   r, a, n, k) {
        sub(/^`/, "", s)
        sub(/^[ \t]*\(?[ \t]*/, "", s)
        sub(/^section[ \t]+/, "", s)
        while (match(s, /^(§)?[0-9]+(\.[0-9]+)*((–|-)(§)?[0-9]+(\.[0-9]+)*)?/)) {
          r = substr(s, 1, RLENGTH)
          s = substr(s, RLENGTH + 1)
          gsub(/§/, "", r)
          gsub(/–/, "-", r)
          n = split(r, a, "-")
          for (k = 1; k <= n; k++) check(a[k], ln)
          sub(/^[ \t]*\([^)]*\)/, "", s)          # a gloss: "§3 (features)"
          if (!match(s, /^(,[ \t]*(and[ \t]+)?|[ \t]+and[ \t]+)/)) break
          s = substr(s, RLENGTH + 1)
        }
      }
      BEGIN { n = split(secs, a, " "); for (i = 1; i <= n; i++) known[a[i]] = 1 }
      { line[NR] = $0 }
      END {
        for (i = 1; i <= NR; i++) {
          if (index(line[i], old))
            printf "%s:%d: cites %s; the reference is %s\n", file, i, old, doc
          rest = line[i]
          while ((p = index(rest, doc)) > 0) {
            rest = substr(rest, p + length(doc))
            s = rest
            # the numbers may follow on the next line, or a list may continue there
            if (s ~ /^`?[ \t]*$/ || s ~ /,[ \t]*$/) s = s " " strip(line[i + 1])
            parse(s, i)
          }
        }
      }' "$root/$f"
  done
}

echo "1..2"
out=$(check_tree "$LDPGNN_SRCDIR")
if [ -z "$out" ]; then echo "ok 1 - every citation of $DOC names one of its sections"
else echo "not ok 1 - bad citations:"; echo "$out" | sed 's/^/# /'; status=1
fi

# Self-test: a reference with sections 1, 1.2, 3 and files citing it in each form.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/doc" "$tmp/src"
printf '# Title\n\n## 1. One\n\n### 1.2 Sub\n\n## 3. Three\n\n## Appendix\n' >"$tmp/$DOC"
{
  printf '/* good: %s §1.2, §3 (three) and §1 */\n' "$DOC"
  printf '# good: (%s section 3); `%s` §1–3; %s 1.2-3\n' "$DOC" "$DOC" "$DOC"
  printf ' * good, the numbers on the next line: (%s\n * §1.2, 3)\n' "$DOC"
  printf 'good, a list continued: (%s §1,\n   §3)\n' "$DOC"
  printf 'good, the document as a whole: %s.\n' "$DOC"
} >"$tmp/src/good.c"
{
  printf '/* bad: %s §1.3 */\n' "$DOC"
  printf '# bad range end: %s §1–2 (features)\n' "$DOC"
  printf 'bad in a list: %s §1, §4, and §3\n' "$DOC"
  printf 'bad on the next line: %s\n * 7.1)\n' "$DOC"
  printf 'bad, continued: %s §3,\n * §9\n' "$DOC"
  printf 'bad, the old name: %s §1\n' "$OLD"
} >"$tmp/src/bad.md"
got=$(check_tree "$tmp" | sed 's/^\([^:]*:[0-9]*\):.*§\([0-9.]*\),.*/\1:\2/; s/^\([^:]*:[0-9]*\): cites .*/\1:old/' | sort | tr '\n' ' ')
want="src/bad.md:1:1.3 src/bad.md:2:2 src/bad.md:3:4 src/bad.md:4:7.1 src/bad.md:6:9 src/bad.md:8:old "
if [ "$got" = "$want" ]; then echo "ok 2 - the checker finds each kind of bad citation and accepts the good ones"
else echo "not ok 2 - checker self-test: got '$got', want '$want'"; status=1
fi
exit ${status:-0}
