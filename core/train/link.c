/* link.c: link prediction (the PGC paper's VGAE task, and a plain GAE).
 *
 * The model is the run's encoder backbone (any node-level plugin, created with
 * out_dim = the hidden width) followed by what the link task owns: batch norm, ReLU,
 * dropout and two GCN heads (mu, log sigma) of the embedding width. Training is full
 * batch: one reparameterised sample z = mu + eps * sigma per epoch (eps from the run's
 * training stream), the inner-product decoder on the training positives and as many
 * sampled non-edges, loss = BCE(pos) + BCE(neg) + KL / n (PyG's VGAE recon_loss and
 * kl_loss; train.link_recon picks exact BCE on logits or PyG's float32 form). Evaluation uses z = mu and batch norm's running statistics. See
 * doc/link-prediction.md. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/host.h"
#include "train/train.h"

typedef struct {
  LdpParam *gamma, *beta, *w_mu, *b_mu, *w_ls, *b_ls;
  LdpTensor *run_mean, *run_var;
} LinkHeads;

static void heads_clear(LinkHeads *h)
{
  g_clear_pointer(&h->gamma, ldp_param_free);
  g_clear_pointer(&h->beta, ldp_param_free);
  g_clear_pointer(&h->w_mu, ldp_param_free);
  g_clear_pointer(&h->b_mu, ldp_param_free);
  g_clear_pointer(&h->w_ls, ldp_param_free);
  g_clear_pointer(&h->b_ls, ldp_param_free);
  g_clear_pointer(&h->run_mean, ldp_tensor_free);
  g_clear_pointer(&h->run_var, ldp_tensor_free);
}

/* GCNConv initialisation (PyG): Glorot weights, zero bias; batch norm gamma 1, beta 0. */
static void heads_init(LinkHeads *h, const LdpLinkConfig *l, LdpRng *init)
{
  h->gamma = ldp_param_new("link.bn.gamma", 1, l->hidden);
  ldp_tensor_fill(ldp_param_value(h->gamma), 1.0f);
  h->beta = ldp_param_new("link.bn.beta", 1, l->hidden);
  h->w_mu = ldp_param_new("link.mu.weight", l->hidden, l->embedding);
  ldp_param_init_glorot(h->w_mu, init);
  h->b_mu = ldp_param_new("link.mu.bias", 1, l->embedding);
  if (l->model == LDP_LINK_VGAE) {
    h->w_ls = ldp_param_new("link.logstd.weight", l->hidden, l->embedding);
    ldp_param_init_glorot(h->w_ls, init);
    h->b_ls = ldp_param_new("link.logstd.bias", 1, l->embedding);
  }
  h->run_mean = ldp_tensor_new(1, l->hidden);
  h->run_var = ldp_tensor_new(1, l->hidden);
  ldp_tensor_fill(h->run_var, 1.0f);
}

static void heads_parameters(LinkHeads *h, GPtrArray *out)
{
  LdpParam *all[] = { h->gamma, h->beta, h->w_mu, h->b_mu, h->w_ls, h->b_ls };
  for (guint i = 0; i < G_N_ELEMENTS(all); i++)
    if (all[i])
      g_ptr_array_add(out, all[i]);
}

typedef struct {
  const LdpTrainConfig *cfg;
  const LdpLinkConfig *lcfg;
  const LdpDataset *data;
  const LdpPluginDesc *bb;
  gpointer model;
  LinkHeads heads;
  LdpBatch batch;
  guint graph_ptr[2];
  LdpGraph *gcn;  /* normalised message-passing graph (borrowed from the dataset's cache) */
  LdpRng *rng;
} LinkRun;

/* The input features as a tape leaf (dense, sparse or lazy linear). */
static LdpVar *link_input(LinkRun *r, LdpTape *tape)
{
  LdpPolyFeatures lin;
  if (ldp_dataset_poly_features(r->data, &lin))
    return ldp_tape_poly_constant(tape, &lin);
  const LdpTensor *xd = ldp_dataset_features_dense(r->data);
  return xd ? ldp_tape_constant(tape, xd) : ldp_tape_sparse_constant(tape, ldp_dataset_features_sparse(r->data));
}

static LdpVar *gcn_head(LinkRun *r, LdpTape *tape, LdpVar *h, LdpParam *w, LdpParam *b)
{
  LdpVar *hw = ldp_op_matmul(tape, h, ldp_tape_param(tape, w));
  return ldp_op_bias_add(tape, ldp_op_propagate(tape, r->gcn, NULL, hw), ldp_tape_param(tape, b));
}

/* mu and (VGAE) log sigma of every node; the tape's mode picks dropout/batch norm. */
static gboolean link_encode(LinkRun *r, LdpTape *tape, LdpVar **mu, LdpVar **logstd, GError **error)
{
  LdpVar *h = ldp_host_backbone_forward(r->bb, r->model, tape, &r->batch, link_input(r, tape), NULL, r->rng, error);
  if (!h)
    return FALSE;
  if (ldp_var_cols(h) != r->lcfg->hidden || ldp_var_rows(h) != ldp_dataset_n_nodes(r->data)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "link prediction: the encoder returned %u x %u, expected one row of %u per node", ldp_var_rows(h),
                ldp_var_cols(h), r->lcfg->hidden);
    return FALSE;
  }
  LinkHeads *hd = &r->heads;
  h = ldp_op_batch_norm(tape, h, ldp_tape_param(tape, hd->gamma), ldp_tape_param(tape, hd->beta), hd->run_mean,
                        hd->run_var, 0.1f, 1e-5f);
  h = ldp_op_dropout(tape, ldp_op_relu(tape, h), (float)r->lcfg->dropout, r->rng);
  *mu = gcn_head(r, tape, h, hd->w_mu, hd->b_mu);
  *logstd = r->lcfg->model == LDP_LINK_VGAE ? gcn_head(r, tape, h, hd->w_ls, hd->b_ls) : NULL;
  return TRUE;
}

static gboolean csr_row_has(const LdpCsr *m, guint i, guint j)
{
  for (guint k = m->indptr[i]; k < m->indptr[i + 1]; k++)
    if (m->indices[k] == j)
      return TRUE;
  return FALSE;
}

/* Undirected pairs a < b of the server's graph, each once (the training positives). */
static guint graph_pairs(LdpGraph *g, guint **a, guint **b)
{
  const LdpCsr *m = ldp_graph_csr(g);
  GArray *ea = g_array_new(FALSE, FALSE, sizeof(guint)), *eb = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < m->rows; i++)
    for (guint k = m->indptr[i]; k < m->indptr[i + 1]; k++) {
      guint j = m->indices[k];
      /* from row min(i, j), or from row max when the reverse entry is missing */
      if (j != i && (i < j || !csr_row_has(m, j, i))) {
        guint lo = MIN(i, j), hi = MAX(i, j);
        g_array_append_val(ea, lo);
        g_array_append_val(eb, hi);
      }
    }
  guint n = ea->len;
  *a = (guint *)(void *)g_array_free(ea, FALSE);
  *b = (guint *)(void *)g_array_free(eb, FALSE);
  return n;
}

typedef struct {
  double auc, ap, loss;
} PairScores;

/* PyG's epsilon inside the logarithms (torch_geometric.nn.models.autoencoder.EPS) */
#define PYG_RECON_EPS 1e-15f

/* Reconstruction loss on the scores of positives @sp and negatives @sn. */
static LdpVar *recon_loss(LdpTape *tape, const LdpLinkConfig *lcfg, LdpVar *sp, LdpVar *sn)
{
  if (lcfg->recon_pyg)
    return ldp_op_add(tape, ldp_op_bce_prob(tape, sp, 1.0f, PYG_RECON_EPS),
                      ldp_op_bce_prob(tape, sn, 0.0f, PYG_RECON_EPS));
  return ldp_op_add(tape, ldp_op_bce_logits(tape, sp, 1.0f), ldp_op_bce_logits(tape, sn, 0.0f));
}

/* AUC, AP and reconstruction loss of fixed embeddings @z on positives and negatives. */
static PairScores score_pairs(const LdpLinkConfig *lcfg, const LdpTensor *z, const guint *pa, const guint *pb,
                              guint np, const guint *na, const guint *nb, guint nn)
{
  PairScores out = { NAN, NAN, NAN };
  if (np == 0 || nn == 0)
    return out;
  LdpTape *tape = ldp_tape_new(FALSE);
  LdpVar *zv = ldp_tape_constant(tape, z);
  LdpVar *sp = ldp_op_pair_dot(tape, zv, pa, pb, np), *sn = ldp_op_pair_dot(tape, zv, na, nb, nn);
  out.loss = ldp_var_value(recon_loss(tape, lcfg, sp, sn))->data[0];
  g_autofree float *s = g_new(float, np + nn);
  g_autofree gboolean *pos = g_new(gboolean, np + nn);
  memcpy(s, ldp_var_value(sp)->data, np * sizeof(float));
  memcpy(s + np, ldp_var_value(sn)->data, nn * sizeof(float));
  for (guint k = 0; k < np + nn; k++)
    pos[k] = k < np;
  out.auc = ldp_metric_roc_auc(s, pos, np + nn);
  out.ap = ldp_metric_average_precision(s, pos, np + nn);
  ldp_tape_free(tape);
  return out;
}

gboolean ldp_train_link(const LdpTrainConfig *cfg, const LdpLinkConfig *lcfg, const LdpDataset *data,
                        const LdpEdgeSplit *split, const LdpPluginDesc *backbone, gpointer model, LdpRng *init,
                        LdpRng *rng, const LdpTrainWatch *watch, LdpTrainResult *result, GError **error)
{
  g_return_val_if_fail(cfg && lcfg && data && split && backbone && model && init && rng && result, FALSE);
  g_return_val_if_fail(backbone->kind == LDP_PLUGIN_BACKBONE, FALSE);
  memset(result, 0, sizeof *result);
  result->history = g_array_new(FALSE, TRUE, sizeof(LdpEpochStats));
  result->test_auc = result->test_ap = result->val_auc = NAN;
  result->test_f1_micro = result->test_f1_macro = NAN;

  const guint n = ldp_dataset_n_nodes(data);
  if (ldp_dataset_level(data) != LDP_TASK_NODE || n != ldp_edge_split_n_nodes(split) || n < 2) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "link prediction needs one graph of at least 2 nodes matching its edge split");
    return FALSE;
  }
  LdpPolyFeatures lin;
  if (!ldp_dataset_poly_features(data, &lin) && !ldp_dataset_features_dense(data) &&
      !ldp_dataset_features_sparse(data)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "the dataset has no node features");
    return FALSE;
  }

  LinkRun r = { .cfg = cfg, .lcfg = lcfg, .data = data, .bb = backbone, .model = model,
                .rng = rng };
  LdpGraph *g = ldp_dataset_graph(data);
  r.graph_ptr[1] = n;
  r.batch = (LdpBatch){ g, 1, r.graph_ptr };
  r.gcn = ldp_graph_normalized(g, LDP_NORM_GCN);
  heads_init(&r.heads, lcfg, init);

  g_autoptr(GPtrArray) params = g_ptr_array_new();
  ldp_host_backbone_parameters(r.bb, model, params);
  heads_parameters(&r.heads, params);
  LdpOptimizer *opt = cfg->sgd ? ldp_sgd_new(params, cfg->lr, cfg->weight_decay, cfg->momentum)
                               : ldp_adam_new(params, cfg->lr, cfg->weight_decay, 0.9, 0.999, 1e-8);

  g_autofree guint *pa = NULL, *pb = NULL;
  const guint np = graph_pairs(g, &pa, &pb);
  const guint *va, *vb, *vna, *vnb, *ta, *tb, *tna, *tnb;
  const guint nv = ldp_edge_split_positives(split, LDP_EDGES_VAL, &va, &vb);
  const guint nvn = ldp_edge_split_negatives(split, LDP_EDGES_VAL, &vna, &vnb);
  const guint nt = ldp_edge_split_positives(split, LDP_EDGES_TEST, &ta, &tb);
  const guint ntn = ldp_edge_split_negatives(split, LDP_EDGES_TEST, &tna, &tnb);
  g_autofree guint *na = g_new(guint, np + 1), *nb = g_new(guint, np + 1);
  g_autoptr(LdpTensor) noise = ldp_tensor_new(n, lcfg->embedding);

  const guint saved = ldp_train_flush_denormals_begin(cfg->flush_denormals);
  gint64 t0 = g_get_monotonic_time();
  gboolean ok = TRUE, have_sel = FALSE;
  double best_val = -INFINITY;
  guint since_best = 0;
  PairScores sel_val = { NAN, NAN, NAN }, sel_test = { NAN, NAN, NAN };
  LdpEpochStats sel_stats = { 0 };
  if (np == 0) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED, "link prediction: the training graph has no edge");
    ok = FALSE;
  }
  for (guint e = 1; ok && e <= cfg->epochs; e++) {
    /* one training step */
    LdpTape *tape = ldp_tape_new(TRUE);
    LdpVar *mu, *logstd;
    if (!link_encode(&r, tape, &mu, &logstd, error)) {
      ldp_tape_free(tape);
      ok = FALSE;
      break;
    }
    LdpVar *z = mu;
    if (logstd) {
      for (gsize k = 0; k < ldp_tensor_size(noise); k++)
        noise->data[k] = (float)ldp_rng_normal(rng);
      z = ldp_op_gaussian_sample(tape, mu, logstd, noise, lcfg->max_logstd);
    }
    ldp_edge_sample_non_edges(g, np, rng, na, nb);
    LdpVar *loss =
        recon_loss(tape, lcfg, ldp_op_pair_dot(tape, z, pa, pb, np), ldp_op_pair_dot(tape, z, na, nb, np));
    if (logstd)
      loss = ldp_op_add(tape, loss, ldp_op_scale(tape, ldp_op_kl_normal(tape, mu, logstd, lcfg->max_logstd),
                                                 1.0f / (float)n));
    LdpEpochStats st = { .epoch = e, .train_loss = ldp_var_value(loss)->data[0], .train_acc = NAN,
                         .val_acc = NAN, .test_acc = NAN };
    ldp_optimizer_zero_grad(opt);
    ldp_tape_backward(tape, loss);
    ldp_optimizer_step(opt);
    ldp_tape_free(tape);
    result->epochs_run = e;
    if (!(e % MAX(cfg->eval_every, 1) == 0 || e == cfg->epochs))
      continue;

    /* evaluation with z = mu */
    tape = ldp_tape_new(FALSE);
    if (!link_encode(&r, tape, &mu, &logstd, error)) {
      ldp_tape_free(tape);
      ok = FALSE;
      break;
    }
    PairScores vs = score_pairs(lcfg, ldp_var_value(mu), va, vb, nv, vna, vnb, nvn);
    PairScores ts = score_pairs(lcfg, ldp_var_value(mu), ta, tb, nt, tna, tnb, ntn);
    ldp_tape_free(tape);
    st.val_loss = vs.loss;
    st.test_loss = ts.loss;
    g_array_append_val(result->history, st);
    /* NaN (no validation pairs) never improves: training then runs to the end */
    const gboolean improved = vs.auc > best_val;
    if (cfg->selection == LDP_SELECT_LAST || improved || !have_sel) {
      sel_val = vs;
      sel_test = ts;
      sel_stats = st;
      have_sel = TRUE;
    }
    if (improved) {
      best_val = vs.auc;
      since_best = 0;
    } else {
      since_best += MAX(cfg->eval_every, 1);
    }
    if (watch) {
      const LdpEpochEvent ev = { .run = watch->run, .seed = watch->seed, .epochs = cfg->epochs, .stats = &st,
                                 .selected_epoch = sel_stats.epoch, .val_auc = vs.auc, .test_auc = ts.auc };
      LDP_OBSERVER_EMIT(watch->obs, epoch, &ev);
    }
    if (cfg->patience > 0 && since_best >= cfg->patience && e >= cfg->min_epochs)
      break;
  }
  ldp_train_flush_denormals_end(cfg->flush_denormals, saved);
  if (ok) {
    result->selected = sel_stats;
    result->test_auc = sel_test.auc;
    result->test_ap = sel_test.ap;
    result->val_auc = sel_val.auc;
    result->seconds = (g_get_monotonic_time() - t0) / 1e6;
  }
  ldp_optimizer_free(opt);
  heads_clear(&r.heads);
  return ok;
}
