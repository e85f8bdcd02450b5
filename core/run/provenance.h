/* provenance.h (private): what determines a result, recorded with it (provenance.c). */
#pragma once

#include <json-glib/json-glib.h>

#include <ldpgnn/pipeline.h>

G_BEGIN_DECLS

/* The plugins @p uses (dataset, mechanisms, calibrators, backbone of every run), each
 * once, ordered by kind then name. (transfer container; element const LdpPlugin *) */
GPtrArray *ldp_provenance_plugins(const LdpPipeline *p);

/* The code a result of @p comes from: ldpgnn's version and commit, the SHA-256 of the
 * core library in use, and the name, version, ABI and SHA-256 of every plugin @p
 * uses, a line each. (transfer full) */
char *ldp_provenance_code_text(const LdpPipeline *p);

/* The text a sweep cell's identity hashes, besides its data files: the resolved
 * pipeline, ldpgnn's version and commit, the SHA-256 of the core library in use, and
 * the name, version, ABI and SHA-256 of every plugin @p uses. (transfer full) */
char *ldp_provenance_identity_text(const LdpPipeline *p);

/* Adds "provenance": {build, plugins, data_files} to the object being built in @b.
 * @data_files: LdpDataFile * (data/data-files.h), listed relative to @data_dir
 * (nullable) when they lie under it. Nothing in it depends on time, host or thread
 * count, so a rerun on the same build writes the same bytes. */
void ldp_provenance_add(JsonBuilder *b, const LdpPipeline *p, const GPtrArray *data_files, const char *data_dir);

/* SHA-256 of the file at @path, computed once per process for a given path, size,
 * inode and modification time (ns); NULL when the file cannot be read. (transfer full) */
char *ldp_provenance_file_sha256(const char *path);

G_END_DECLS
