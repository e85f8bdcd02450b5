#!/bin/sh
# test-quiet-core.sh: the library never prints and starts no process of its own
# (doc/architecture.md, "Observers"). No file under core/ writes to stdout or stderr
# (printf, puts, putchar, g_print, g_printerr, or any use of stdout, stderr,
# STDOUT_FILENO, STDERR_FILENO: fputs(..., stdout), fflush(stdout), ...), tests isatty,
# duplicates descriptors (dup, dup2) or starts processes (fork, exec*, posix_spawn,
# system, popen, g_spawn_*). Runs report to an observer; the ldpgnn command (cli/)
# prints, asks the terminal and starts processes. Comments and string literals are not
# code and are skipped. The allowances below name a file, the word it may use and why;
# an allowance that is no longer used fails too, so the list cannot go stale.
# The checker runs on the tree and, as a self-test, on a scratch tree with planted
# violations, which it must report. TAP output.
set -u
: "${LDPGNN_SRCDIR:?not set: run through make check}"

# file word: why
ALLOWED='
core/host/registry.c fork
core/host/registry.c dup2
core/host/registry.c STDOUT_FILENO
core/host/registry.c STDERR_FILENO
core/run/plot.c g_spawn_sync
core/run/plot.c g_spawn_check_wait_status
'
# registry.c: the plugin scan probes modules in a child process, so that a module that
#   crashes while loading is refused instead of killing the host; the child sends its
#   own output to /dev/null. It prints nothing and outlives no call.
# plot.c: ldp_plot_dir runs gnuplot on the figure scripts, only when a host asks for
#   the figures (the ldpgnn command's plot and sweep); ldp_plot_dir_scripts does not.

WORDS='printf|vprintf|puts|putchar|g_print|g_printerr|isatty|dup|dup2|dup3|fork|vfork|execv|execve|execvp|execvpe|execl|execle|execlp|posix_spawn|posix_spawnp|system|popen|g_spawn_[a-z_]+'
STREAMS='stdout|stderr|STDOUT_FILENO|STDERR_FILENO'

# strip FILE: the file without comments, string and character literals (replaced by
# empty ones), line breaks kept so that line numbers stay right.
strip() {
  awk '
  BEGIN { incomment = 0 }
  {
    line = $0; out = ""; i = 1; n = length(line)
    while (i <= n) {
      c = substr(line, i, 1); d = substr(line, i, 2)
      if (incomment) {
        if (d == "*/") { incomment = 0; i += 2 } else i++
        continue
      }
      if (d == "/*") { incomment = 1; i += 2; continue }
      if (d == "//") break
      if (c == "\"" || c == "\047") {
        q = c; out = out q q; i++
        while (i <= n) {
          e = substr(line, i, 1)
          if (e == "\\") { i += 2; continue }
          i++
          if (e == q) break
        }
        continue
      }
      out = out c; i++
    }
    print out
  }' "$1"
}

# check_tree ROOT: one line per violation, "FILE:LINE: uses WORD".
check_tree() {
  root=$1
  find "$root/core" -name '*.[ch]' | LC_ALL=C sort | while read -r f; do
    rel=${f#$root/}
    strip "$f" |
      awk -v rel="$rel" -v words="$WORDS" -v streams="$STREAMS" '
      {
        line = $0
        # calls: WORD followed by "("; streams: the identifier anywhere
        while (match(line, "(^|[^A-Za-z0-9_])(" words ")[ \t]*\\(")) {
          hit = substr(line, RSTART, RLENGTH); sub(/^[^A-Za-z0-9_]/, "", hit); sub(/[ \t]*\($/, "", hit)
          print rel ":" NR ": uses " hit
          line = substr(line, RSTART + RLENGTH)
        }
        line = $0
        while (match(line, "(^|[^A-Za-z0-9_])(" streams ")([^A-Za-z0-9_]|$)")) {
          hit = substr(line, RSTART, RLENGTH); gsub(/[^A-Za-z0-9_]/, "", hit)
          print rel ":" NR ": uses " hit
          line = substr(line, RSTART + RLENGTH)
        }
      }'
  done
}

# report ROOT: the violations that no allowance covers, then the unused allowances.
report() {
  found=$(check_tree "$1")
  echo "$found" | while read -r loc uses word; do
    [ -n "$loc" ] || continue
    file=${loc%%:*}
    if ! printf '%s\n' "$ALLOWED" | grep -qx "$file $word"; then echo "$loc $uses $word"; fi
  done
  printf '%s\n' "$ALLOWED" | while read -r file word; do
    [ -n "$file" ] || continue
    [ -f "$1/$file" ] || { echo "$file: allowance for $word, but the file is gone"; continue; }
    echo "$found" | grep -q "^$file:[0-9]*: uses $word\$" || echo "$file: allowance for $word is no longer used"
  done
}

echo "1..3"
status=0
out=$(report "$LDPGNN_SRCDIR")
if [ -z "$out" ]; then echo "ok 1 - no file under core/ prints, asks the terminal or starts a process"
else echo "not ok 1 - the library prints or starts processes:"; echo "$out" | sed 's/^/# /'; status=1
fi

# Self-test: one violation of each kind in a scratch tree, and what must not count.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/core/run" "$tmp/core/train" "$tmp/core/host"
cat >"$tmp/core/run/a.c" <<'EOF'
static void f(int n)
{
  printf("%d\n", n);
  fflush(stdout);
  fputs("x", stderr);
  if (isatty(2))
    dup2(3, STDOUT_FILENO);
}
EOF
cat >"$tmp/core/train/b.c" <<'EOF'
static void g(char **argv)
{
  if (fork() == 0)
    execvp(argv[0], argv);
  g_spawn_async(NULL, argv, NULL, 0, NULL, NULL, NULL, NULL);
}
EOF
# not code: comments and strings; similar names
cat >"$tmp/core/run/c.c" <<'EOF'
/* printf("%d", n); fflush(stdout);
 * fork() */
static const char *s = "isatty(2) stdout";  // dup2(1, 2)
static int dup_count, my_printf(int), stdout_lines;
static void h(void) { g_string_append_printf(NULL, "x"); g_snprintf(NULL, 0, "y"); my_printf(stdout_lines); }
EOF
# an allowed word in its file counts only there and only for that word
cat >"$tmp/core/host/registry.c" <<'EOF'
static void k(void) { if (fork() == 0) dup2(0, STDOUT_FILENO); dup2(0, STDERR_FILENO); puts("scan"); }
EOF
cat >"$tmp/core/run/plot.c" <<'EOF'
static void p(void) { g_spawn_sync(0); g_spawn_check_wait_status(0, 0); }
EOF
got=$(report "$tmp" | sed 's/^\([^:]*\):[0-9]*: uses \(.*\)$/\1 \2/' | LC_ALL=C sort | tr '\n' ';')
want="core/host/registry.c puts;core/run/a.c STDOUT_FILENO;core/run/a.c dup2;core/run/a.c isatty;core/run/a.c printf;core/run/a.c stderr;core/run/a.c stdout;core/train/b.c execvp;core/train/b.c fork;core/train/b.c g_spawn_async;"
if [ "$got" = "$want" ]; then echo "ok 2 - the checker reports each kind of violation, and only those"
else echo "not ok 2 - checker self-test: got '$got', want '$want'"; status=1
fi
# An allowance whose use has gone is reported.
printf 'static void k(void) { if (fork() == 0) dup2(0, STDOUT_FILENO); dup2(0, STDERR_FILENO); }\n' \
  | sed 's/ dup2(0, STDOUT_FILENO);//' >"$tmp/core/host/registry.c"
got=$(report "$tmp" | grep 'no longer used' | tr '\n' ';')
if [ "$got" = "core/host/registry.c: allowance for STDOUT_FILENO is no longer used;" ]; then
  echo "ok 3 - an unused allowance is reported"
else echo "not ok 3 - stale allowance self-test: got '$got'"; status=1
fi
exit $status
