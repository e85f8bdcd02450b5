/* test-guard.c: the training guards' scan for non-finite floats (core/train/guard.c),
 * a private function, so this program links the core statically. The guards' effect
 * on whole runs is tested in test-trainer (/trainer/guard/...). */
#include "config.h"

#include <float.h>
#include <math.h>

#include "train/train.h"

/* ldp_floats_all_finite at every position and length around the vector width. */
static void test_floats_all_finite(void)
{
  const float bad[] = { NAN, -NAN, INFINITY, -INFINITY };
  float x[67];
  for (guint n = 0; n <= G_N_ELEMENTS(x); n++) {
    for (guint i = 0; i < n; i++)
      x[i] = i % 3 == 0 ? FLT_MAX : i % 3 == 1 ? -FLT_TRUE_MIN : (float)i;
    g_assert_true(ldp_floats_all_finite(x, n));
    for (guint pos = 0; pos < n; pos++)
      for (guint b = 0; b < G_N_ELEMENTS(bad); b++) {
        float keep = x[pos];
        x[pos] = bad[b];
        g_assert_false(ldp_floats_all_finite(x, n));
        x[pos] = keep;
      }
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/guard/floats-all-finite", test_floats_all_finite);
  return g_test_run();
}
