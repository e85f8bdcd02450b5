/* data-files.h (private): recording the data files loaders read (data-files.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  char *path;    /* canonical absolute path */
  char *sha256;  /* of the content the loader read, lowercase hex */
} LdpDataFile;

/* Starts recording (dropping an unfinished recording). */
void ldp_data_files_begin(void);
/* Stops recording: the files read since ldp_data_files_begin, each once, in the order
 * first read. (transfer full; element LdpDataFile *) */
GPtrArray *ldp_data_files_end(void);
/* @path (canonical) relative to @data_dir (nullable) when it lies under it, else
 * @path itself. (transfer full) */
char *ldp_data_file_relative(const char *path, const char *data_dir);

G_END_DECLS
