/* dataset.h: datasets (one graph for node tasks, many for graph classification),
 * the builder API dataset plugins fill them with, and the dataset plugin vtable.
 *
 * All graphs of a dataset share one node numbering: graph g owns nodes
 * [graph_ptr[g], graph_ptr[g+1]) and its edges stay inside that range (the
 * adjacency is block diagonal). Node tasks have a single graph. Features are one
 * n_nodes x d matrix, dense or CSR. Labels are per node (node tasks) or per graph
 * (graph tasks); -1 means "no label". The core owns splits, normalisation and
 * statistics so every dataset plugin behaves the same.
 */
#pragma once

#include <ldpgnn/graph.h>
#include <ldpgnn/params.h>

G_BEGIN_DECLS

typedef enum {
  LDP_TASK_NODE = 1,  /* node classification on one graph */
  LDP_TASK_GRAPH      /* graph classification over many graphs */
} LdpTaskLevel;

/* Role of a labelled item (node or graph) in a split. */
typedef enum {
  LDP_ROLE_NONE = 0,  /* not used (e.g. unlabelled) */
  LDP_ROLE_TRAIN,
  LDP_ROLE_VAL,
  LDP_ROLE_TEST
} LdpRole;

typedef struct _LdpDataset LdpDataset;

/* ---- building (dataset plugins) ---- */

/* (transfer full): an empty dataset. */
LDP_API LdpDataset *ldp_dataset_new(LdpTaskLevel level, const char *name);
LDP_API void ldp_dataset_free(LdpDataset *ds);
/* (transfer full): deep copy. */
LDP_API LdpDataset *ldp_dataset_copy(const LdpDataset *ds);

/* Sets the node set and edges. @graph_ptr (n_graphs + 1 offsets, copied) may be NULL
 * for a single graph. Edge e goes src[e] -> dst[e] in global node ids (dst aggregates
 * from src); @undirected inserts both directions. Duplicates are merged; self-loops
 * are kept (see ldp_dataset_simplify). Fails with LDP_DATA_ERROR_INCONSISTENT on ids
 * >= n_nodes or edges between graphs. */
LDP_API gboolean ldp_dataset_set_structure(LdpDataset *ds, guint n_nodes, guint n_graphs,
                                           const guint *graph_ptr, const guint *src, const guint *dst,
                                           gsize n_edges, gboolean undirected, GError **error);
/* Replaces the whole adjacency (n_nodes x n_nodes, block diagonal). (transfer full) */
LDP_API void ldp_dataset_set_adjacency(LdpDataset *ds, LdpCsr *adj, gboolean undirected);
/* Node tasks: replaces the graph by @graph (transfer full), e.g. one with a
 * block-constant background (graph.h) that no CSR can hold. */
LDP_API void ldp_dataset_set_graph(LdpDataset *ds, LdpGraph *graph, gboolean undirected);
/* Features (transfer full); replaces any previous features. */
LDP_API void ldp_dataset_set_features_dense(LdpDataset *ds, LdpTensor *x);
LDP_API void ldp_dataset_set_features_sparse(LdpDataset *ds, LdpCsr *x);
LDP_API void ldp_dataset_clear_features(LdpDataset *ds);

/* Lazy "linear features" F = P^K (S + 1 c^T): S is n x d (dense or CSR), c an optional
 * per-column offset (d floats) added to every row, P the normalised graph the features
 * were last propagated on and K >= 0 steps. Mechanisms whose estimate is sparse plus a
 * constant (multi-bit) and calibrators that propagate (KProp) keep that structure so
 * the trainer can compute F W = P^K (S W + 1 (c^T W)) without ever forming F.
 * Sets S (transfer full) and the offset (transfer full, g_malloc'd, @s->cols floats;
 * nullable: no offset); replaces any previous features. */
LDP_API void ldp_dataset_set_features_affine(LdpDataset *ds, LdpCsr *s, float *offset);
/* The same with a dense S (transfer full). */
LDP_API void ldp_dataset_set_features_affine_dense(LdpDataset *ds, LdpTensor *s, float *offset);
/* Features <- P^steps features, P = ldp_graph_normalized(dataset graph, @norm), recorded
 * lazily (the dataset keeps a reference to the graph of this moment, so later structure
 * changes do not alter the features). Composes with a pending propagation of the same
 * norm on the same graph by adding steps; otherwise the pending one is materialised
 * first. steps = 0 is a no-op. Needs features and a graph. */
LDP_API void ldp_dataset_propagate_features(LdpDataset *ds, LdpNorm norm, guint steps);
/* Lazy features (linear or polynomial, below) become plain dense features F, computed
 * once, in place (no second n x d copy); plain features are left as they are. For
 * calibrators that choose the dense form (kprop's form: dense). (1.3) */
LDP_API void ldp_dataset_materialize_features(LdpDataset *ds);

typedef struct {
  const LdpCsr *sparse;     /* S when sparse (else NULL) */
  const LdpTensor *dense;   /* S when dense (else NULL); exactly one of the two is set */
  const float *offset;      /* (nullable) c, d floats */
  LdpGraph *operator_graph; /* P (nullable when steps == 0); its csr holds the coefficients */
  guint steps;              /* K */
} LdpLinearFeatures;
/* Fills @out (all pointers transfer none, valid until the features change) and returns
 * TRUE when the features are lazy (an offset or steps > 0); FALSE (and @out zeroed)
 * for plain dense/sparse features or none, and for polynomial features (below), which
 * this struct cannot describe: such callers read the materialised dense features. */
LDP_API gboolean ldp_dataset_linear_features(const LdpDataset *ds, LdpLinearFeatures *out);

/* Lazy polynomial features F = sum_{k=0..K} a_k P^k (S + 1 c^T) (UPGNet's high-order
 * aggregator: a_0 = 0, a_k = 1/K). Features <- sum_k @coef[k] P^k features, with P the
 * stored values of @op (transfer none: a reference is kept; @op has the dataset's node
 * count) and @n_coef = K + 1 >= 1 coefficients (copied). S and c are kept; a pending
 * propagation or polynomial is materialised first. Node training then computes
 * F W = sum_k a_k P^k (S W + 1 (c^T W)): K products of P with an n x h matrix instead
 * of a dense n x d product. */
LDP_API void ldp_dataset_polynomial_features(LdpDataset *ds, LdpGraph *op, const float *coef, guint n_coef);

typedef struct {
  LdpLinearFeatures lin; /* S, c, P and K = lin.steps, as above */
  const float *coef;     /* (nullable) a_0..a_K (lin.steps + 1 floats); NULL: F = P^K (S + 1 c^T) */
} LdpPolyFeatures;
/* Every lazy form, polynomials included: fills @out (pointers transfer none, valid until
 * the features change) and returns TRUE when the features are lazy, FALSE (and @out
 * zeroed) otherwise. */
LDP_API gboolean ldp_dataset_poly_features(const LdpDataset *ds, LdpPolyFeatures *out);
/* Labels (transfer full, g_malloc'd): one per node (node task) or per graph. */
LDP_API void ldp_dataset_set_labels(LdpDataset *ds, gint *labels, guint n_classes);
/* Standard split shipped with the data (transfer full): one LdpRole per label item. */
LDP_API void ldp_dataset_set_standard_split(LdpDataset *ds, guint8 *roles);
/* Row-stochastic c x c matrix T[true][reported] of a label mechanism (transfer full);
 * NULL clears it (identity). */
LDP_API void ldp_dataset_set_label_transition(LdpDataset *ds, LdpTensor *t);

/* Side release @name of the mechanisms (ABI 1.2, mechanism.h): @values (transfer full,
 * g_malloc'd) holds one value per node, NaN where none was released; @n_users must be
 * the node count. Replaces a release of the same name. The core calls this after a
 * mechanism's estimate; tests and embedders may too. */
LDP_API void ldp_dataset_set_side_release(LdpDataset *ds, const char *name, double *values, guint n_users);

/* ---- reading ---- */

LDP_API LdpTaskLevel ldp_dataset_level(const LdpDataset *ds);
LDP_API const char *ldp_dataset_name(const LdpDataset *ds);
LDP_API guint ldp_dataset_n_nodes(const LdpDataset *ds);
LDP_API guint ldp_dataset_n_graphs(const LdpDataset *ds);
/* (transfer none): n_graphs + 1 node offsets. */
LDP_API const guint *ldp_dataset_graph_ptr(const LdpDataset *ds);
/* (transfer none): the whole (block-diagonal) graph. */
LDP_API LdpGraph *ldp_dataset_graph(const LdpDataset *ds);
LDP_API gboolean ldp_dataset_is_undirected(const LdpDataset *ds);
/* Undirected edges (pairs) for undirected datasets, stored entries otherwise;
 * self-loops count once. */
LDP_API gsize ldp_dataset_n_edges(const LdpDataset *ds);
LDP_API guint ldp_dataset_n_features(const LdpDataset *ds);
/* (transfer none, nullable): exactly one of the two is non-NULL when features exist.
 * Lazy features (see ldp_dataset_linear_features) read as dense: the first call
 * materialises them once into a cache inside the dataset (dropped by any feature
 * setter; not safe from two threads at once) and the sparse getter returns NULL. */
LDP_API const LdpTensor *ldp_dataset_features_dense(const LdpDataset *ds);
LDP_API const LdpCsr *ldp_dataset_features_sparse(const LdpDataset *ds);
/* (transfer none, nullable) */
LDP_API const gint *ldp_dataset_labels(const LdpDataset *ds);
LDP_API guint ldp_dataset_n_labels(const LdpDataset *ds);
LDP_API guint ldp_dataset_n_classes(const LdpDataset *ds);
/* (transfer none, nullable) */
LDP_API const guint8 *ldp_dataset_standard_split(const LdpDataset *ds);
/* (transfer none, nullable): NULL means identity. */
LDP_API const LdpTensor *ldp_dataset_label_transition(const LdpDataset *ds);
/* The server's view of side release @name (ABI 1.2): one value per user (index = node
 * id), NaN for users who did not release it (users who did not report, public users).
 * (transfer none, nullable): NULL, with *@n_users = 0, when no mechanism released
 * @name. Valid until the release is replaced or the dataset freed. */
LDP_API const double *ldp_dataset_side_release(const LdpDataset *data, const char *name, guint *n_users);
/* (transfer full) NULL-terminated, sorted names of the side releases @ds holds. */
LDP_API char **ldp_dataset_side_release_names(const LdpDataset *ds);

/* ---- core-owned preprocessing (used by the pipeline runner, usable by plugins) ---- */

/* Undirected simplification: symmetrise, merge duplicates, drop self-loops. */
LDP_API void ldp_dataset_simplify(LdpDataset *ds);
/* Keeps the items of the @k most frequent classes (induced subgraph for node tasks),
 * relabelled by frequency rank (0 = most frequent, ties by lower class id). */
LDP_API gboolean ldp_dataset_keep_top_classes(LdpDataset *ds, guint k, GError **error);
/* Min-max normalises each feature column to [0, 1] over all nodes; constant columns
 * are deleted when @drop_constant, set to 0 otherwise. */
LDP_API void ldp_dataset_normalize_minmax(LdpDataset *ds, gboolean drop_constant);
/* Maps every feature value x to clamp((x - lo)/(hi - lo), 0, 1) with DECLARED public
 * bounds: unlike min-max it reads no statistic of other users' data. Sparse features
 * stay sparse when lo = 0 and become dense otherwise. FALSE (with @error) unless
 * lo < hi, both finite. */
LDP_API gboolean ldp_dataset_normalize_bounds(LdpDataset *ds, double lo, double hi, GError **error);

typedef enum {
  LDP_NODE_FEATURES_CONSTANT = 1,  /* a single column of ones */
  LDP_NODE_FEATURES_DEGREE         /* one-hot degree, clipped to max_degree */
} LdpNodeFeatures;
/* Replaces the features by structural ones (for unattributed graphs). */
LDP_API void ldp_dataset_set_structural_features(LdpDataset *ds, LdpNodeFeatures kind, guint max_degree);

/* Prints nodes, edges, classes, features, average degree and graphs. */
LDP_API char *ldp_dataset_describe(const LdpDataset *ds);

/* ---- the plugin vtable ---- */

typedef struct {
  const char *data_dir;  /* (nullable) data directory: pipeline data_dir, else $LDPGNN_DATA */
  guint64 seed;          /* run seed, for synthetic generators */
} LdpDatasetEnv;

/* Loaders call this for every data file they read, with its whole content: the host
 * records the file's SHA-256 in the run's provenance (summary.json) and in a sweep
 * cell's completion mark, so that a changed file makes the cell run again. Loaders
 * built on the in-tree text reader (plugins/dataset/textfile.c) do it already. */
LDP_API void ldp_data_file_read(const char *path, const void *data, gsize len);

typedef struct {
  /* Required. (transfer full) the loaded dataset; errors name file and line. */
  LdpDataset *(*load)(const LdpParams *params, const LdpDatasetEnv *env, GError **error);
  /* ---- ABI 1.3 ---- */
  /* Optional: the level of the dataset load() returns for @params (LDP_TASK_NODE or
   * LDP_TASK_GRAPH), so that validation can check what depends on it (attacks need a
   * node-level task) before any data is read; 0 when it cannot tell without loading.
   * NULL: unknown until loaded. */
  LdpTaskLevel (*level)(const LdpParams *params);
} LdpDatasetVTable;

G_END_DECLS
