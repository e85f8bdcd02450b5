#!/bin/sh
# test-audit-cli.sh: `ldpgnn audit` on every in-tree mechanism at two epsilons (no violation
# may be found), and on a fixture that spends twice the epsilon it claims (must fail).
# TAP output; the "# table" lines are the figures quoted in doc/privacy.md.
set -u
bin="$LDPGNN_BUILDDIR/ldpgnn"
fixture="$LDPGNN_BUILDDIR/tests/plugins/.libs/broken-budget.so"
tmp="$LDPGNN_BUILDDIR/test-audit-cli.tmp"
rm -rf "$tmp" && mkdir -p "$tmp"
mechs="grr rr dprr locallap laplace gaussian multibit onebit pgc piecewise blink symrr ldpgcn mpm"
trials=20000
. "$LDPGNN_SRCDIR/tests/tap.sh"
echo "1..34"
for m in $mechs; do
  for eps in 0.5 2; do
    out="$tmp/$m-$eps.out"
    if "$bin" audit "$m" --epsilon "$eps" --trials $trials --seed 11 >"$out" 2>&1; then
      ok "audit $m at epsilon $eps finds no violation"
      claimed=$(sed -n 's/^  claimed: epsilon \([^ ]*\).*/\1/p' "$out")
      bound=$(sed -n 's/^  lower bound on epsilon: \([^ ]*\).*/\1/p' "$out")
      echo "# table | $m | $eps | $claimed | $bound |"
    else
      not_ok "audit $m at epsilon $eps finds no violation" "$out"
    fi
  done
done
for eps in 0.5 1; do
  out="$tmp/broken-$eps.out"
  "$bin" audit "$fixture" --epsilon "$eps" --trials $trials --seed 11 >"$out" 2>&1
  rc=$?
  if [ $rc -eq 1 ] && grep -q "FAIL: the lower bound" "$out"; then
    ok "the fixture spending 2 x $eps while claiming $eps fails the audit"
    echo "# table | broken_budget (fixture) | $eps | $eps | $(sed -n 's/^  lower bound on epsilon: \([^ ]*\).*/\1/p' "$out") |"
  else
    not_ok "the fixture spending 2 x $eps while claiming $eps fails the audit (exit $rc)" "$out"
  fi
done
out="$tmp/by-name.out"
"$bin" --plugin-path "$LDPGNN_BUILDDIR/tests/plugins/.libs" audit broken_budget --trials 4000 >"$out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "A = label 0, B = label 1" "$out" && grep -q "FAIL: the lower bound" "$out"; then
  ok "a third-party mechanism found on --plugin-path is audited by name"
else
  not_ok "a third-party mechanism found on --plugin-path is audited by name (exit $rc)" "$out"
fi
out="$tmp/unknown.out"
if "$bin" audit no_such_mechanism >"$out" 2>&1; then
  not_ok "an unknown mechanism is an error" "$out"
else
  grep -q "no mechanism 'no_such_mechanism' (mechanisms: " "$out" && ok "an unknown mechanism is an error naming the known ones" || not_ok "an unknown mechanism is an error naming the known ones" "$out"
fi
# A plugin that declares its own worst-case pair (ABI 1.1 audit_pair): the leak sits
# between classes 2 and 3, which the default pair (0 vs 1) would never show.
out="$tmp/leaky.out"
"$bin" audit "$LDPGNN_BUILDDIR/tests/plugins/.libs/broken-pair.so" --epsilon 1 --trials 4000 --seed 11 >"$out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "declared by the plugin: label 2 vs label 3" "$out" && grep -q "FAIL: the lower bound" "$out"; then
  ok "a leak between the plugin's declared pair fails the audit"
else
  not_ok "a leak between the plugin's declared pair fails the audit (exit $rc)" "$out"
fi
# Blink releasing its exact degree (ABI 1.2 side release) while claiming delta epsilon
# for it: the side release is a coordinate of the audit, and gives it away.
out="$tmp/broken-blink.out"
"$bin" audit "$LDPGNN_BUILDDIR/tests/plugins/.libs/broken-blink.so" --epsilon 1 --trials $trials --seed 11 >"$out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "best event: side release noisy_degree" "$out" && grep -q "FAIL: the lower bound" "$out"; then
  ok "a Blink variant leaking the exact degree fails the audit"
  echo "# table | broken_blink (fixture) | 1 | 1 | $(sed -n 's/^  lower bound on epsilon: \([^ ]*\).*/\1/p' "$out") |"
else
  not_ok "a Blink variant leaking the exact degree fails the audit (exit $rc)" "$out"
fi
[ $fails -eq 0 ] && rm -rf "$tmp"
exit 0
