/* fuzz-dataset.c: libFuzzer target for one dataset loader (LDP_FUZZ_PLUGIN), through
 * the plugin's own load path on files in a scratch directory.
 *
 * Input: parts separated by lines "----". The first part is extra parameters
 * ("key=value" words, as `ldpgnn datasets PLUGIN key=value...`); the following parts
 * are the contents of the loader's files, in the order of the table below (a part
 * that is absent leaves its file missing). Parameters naming files are fixed by the
 * harness. A loaded dataset also goes through the core's preprocessing and
 * statistics, which trust the loader's output. */
#include "config.h"

#include <string.h>

#include "fuzz-common.h"

#ifndef LDP_FUZZ_PLUGIN
#error "define LDP_FUZZ_PLUGIN"
#endif

typedef struct {
  const char *plugin;
  const char *fixed;            /* parameters set by the harness */
  const char *files[6];         /* relative paths, in input order */
} Target;

static const Target targets[] = {
  { "gin_text", "dir=. file=g.txt",
    { "g.txt", "10fold_idx/train_idx-1.txt", "10fold_idx/test_idx-1.txt" } },
  { "linqs", "dir=. prefix=p",
    { "p.content", "p.cites", "planetoid_split/train_ids.txt", "planetoid_split/val_ids.txt",
      "planetoid_split/test_ids.txt" } },
  { "musae", "dir=. target=t.csv edges=e.csv features=f.json", { "t.csv", "e.csv", "f.json" } },
  { "pubmed", "dir=.",
    { "Pubmed-Diabetes.NODE.paper.tab", "Pubmed-Diabetes.DIRECTED.cites.tab", "planetoid/planetoid_labels.txt",
      "planetoid/planetoid_edges.txt", "planetoid/ind.pubmed.test.index" } },
  { "tu", "dir=. prefix=P", { "P_A.txt", "P_graph_indicator.txt", "P_graph_labels.txt", "P_node_labels.txt" } },
};

static const Target *target;
static const LdpPluginDesc *desc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  fuzz_fatal_criticals();
  for (gsize i = 0; i < G_N_ELEMENTS(targets); i++)
    if (strcmp(targets[i].plugin, LDP_FUZZ_PLUGIN) == 0)
      target = &targets[i];
  const LdpPlugin *p = ldp_registry_lookup(fuzz_registry(), LDP_FUZZ_PLUGIN);
  if (!target || !p)
    g_error("fuzz: no dataset plugin '%s' in this build", LDP_FUZZ_PLUGIN);
  desc = ldp_plugin_desc(p);
  fuzz_scratch_dir();
  return 0;
}

/* Removes the files a previous input wrote. */
static void clear_files(const char *dir)
{
  for (guint k = 0; k < G_N_ELEMENTS(target->files) && target->files[k]; k++) {
    g_autofree char *path = g_build_filename(dir, target->files[k], NULL);
    g_unlink(path);
  }
}

static gboolean fixed_key(const char *word)
{
  static const char *const keys[] = { "dir=", "file=", "prefix=", "target=", "edges=", "features=" };
  for (gsize i = 0; i < G_N_ELEMENTS(keys); i++)
    if (g_str_has_prefix(word, keys[i]))
      return TRUE;
  return FALSE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *dir = fuzz_scratch_dir();
  clear_files(dir);

  /* Split at "\n----\n" (the first part may also end at a leading "----\n"). */
  g_autoptr(GPtrArray) parts = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
  const char *p = (const char *)data, *end = p + size;
  while (TRUE) {
    const char *sep = NULL;
    for (const char *q = p; q + 5 <= end; q++)
      if ((q == p || q[-1] == '\n') && memcmp(q, "----\n", 5) == 0) {
        sep = q;
        break;
      }
    if (!sep) {
      g_ptr_array_add(parts, g_bytes_new(p, end - p));
      break;
    }
    g_ptr_array_add(parts, g_bytes_new(p, sep - p));
    p = sep + 5;
  }

  /* Parameters: the harness's fixed ones, then the input's words. */
  g_autoptr(GPtrArray) assign = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) fixed = g_strsplit(target->fixed, " ", -1);
  for (char **w = fixed; *w; w++)
    g_ptr_array_add(assign, g_strdup(*w));
  gsize plen;
  const char *ptext = g_bytes_get_data(parts->pdata[0], &plen);
  g_autofree char *params_text = g_strndup(ptext ? ptext : "", plen);
  g_auto(GStrv) words = g_strsplit_set(params_text, " \t\n", -1);
  for (char **w = words; *w; w++)
    if (**w && !fixed_key(*w))
      g_ptr_array_add(assign, g_strdup(*w));
  g_ptr_array_add(assign, NULL);
  g_autoptr(GError) err = NULL;
  LdpParams *params =
    ldp_params_new_from_strings(desc->params, desc->n_params, (const char *const *)assign->pdata, &err);
  if (!params)
    return 0;

  for (guint k = 1; k < parts->len && k - 1 < G_N_ELEMENTS(target->files) && target->files[k - 1]; k++) {
    gsize len;
    const char *bytes = g_bytes_get_data(parts->pdata[k], &len);
    fuzz_write(dir, target->files[k - 1], bytes ? bytes : "", len);
  }

  LdpDatasetEnv env = { .data_dir = dir, .seed = 1 };
  LdpDataset *ds = desc->vtable.dataset->load(params, &env, &err);
  ldp_params_free(params);
  if (!ds) {
    if (!err || !err->message || !*err->message)
      g_error("load failed without a message");
    return 0;
  }
  g_free(ldp_dataset_describe(ds));
  ldp_dataset_simplify(ds);
  ldp_dataset_normalize_minmax(ds, TRUE);
  g_free(ldp_dataset_describe(ds));
  ldp_dataset_free(ds);
  return 0;
}
