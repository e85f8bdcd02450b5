/* fuzz-pipeline.c: libFuzzer target for pipeline files and --set overrides.
 *
 * The input is a pipeline YAML file. Its lines that start with "#set " (YAML comments,
 * so the file stays a pipeline) are also passed as --set overrides, in order. A
 * pipeline that validates is serialised through the JSON writer, and the text must
 * parse back: summary.json is built from the same tree. */
#include "config.h"

#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  fuzz_fatal_criticals();
  fuzz_registry();
  fuzz_scratch_dir();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *path = g_build_filename(fuzz_scratch_dir(), "p.yaml", NULL);
  fuzz_write(fuzz_scratch_dir(), "p.yaml", (const char *)data, size);

  g_autofree char *text = g_strndup((const char *)data, size);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autoptr(GPtrArray) sets = g_ptr_array_new();
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix(*l, "#set "))
      g_ptr_array_add(sets, *l + strlen("#set "));
  g_ptr_array_add(sets, NULL);

  g_autoptr(GError) err = NULL;
  g_autoptr(LdpPipeline) p = ldp_pipeline_load(path, fuzz_registry(), (const char *const *)sets->pdata, &err);
  if (!p) {
    /* Every refusal is a located GError. */
    if (!err || !err->message || !*err->message)
      g_error("pipeline refused without a message");
    return 0;
  }
  g_autoptr(JsonNode) json = ldp_pipeline_to_json(p);
  g_autofree char *out = ldp_json_to_string(json, TRUE);
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_data(parser, out, -1, &err))
    g_error("the JSON of a valid pipeline does not parse: %s\n%s", err->message, out);
  return 0;
}
