/* mlp.c: multi-layer perceptron backbone (ignores the graph; the structure-free
 * baseline). Linear layers with torch.nn.Linear's default initialisation. */
#include "common.h"

#define MLP_NAME "mlp"
#define MLP_CAPS (LDP_BACKBONE_NODE)

typedef struct {
  BackboneCommon common;
  guint in_dim, out_dim;
  BackboneLinear *lins;  /* common.layers of them */
} Mlp;

static void mlp_destroy(gpointer inst)
{
  Mlp *m = inst;
  if (!m)
    return;
  for (guint l = 0; l < m->common.layers; l++)
    backbone_linear_clear(&m->lins[l]);
  g_free(m->lins);
  g_free(m);
}

static gpointer mlp_create(const LdpParams *params, guint in_dim, guint out_dim, LdpTaskLevel level,
                           LdpRng *init, GError **error)
{
  g_return_val_if_fail(params != NULL && init != NULL, NULL);
  if (!backbone_check_level(MLP_NAME, MLP_CAPS, level, error) ||
      !backbone_check_dims(MLP_NAME, in_dim, out_dim, error))
    return NULL;
  Mlp *m = g_new0(Mlp, 1);
  backbone_common_read(params, &m->common);
  m->in_dim = in_dim;
  m->out_dim = out_dim;
  m->lins = g_new0(BackboneLinear, m->common.layers);
  for (guint l = 0; l < m->common.layers; l++) {
    guint in = l == 0 ? in_dim : m->common.hidden;
    guint out = l + 1 == m->common.layers ? out_dim : m->common.hidden;
    g_autofree char *prefix = g_strdup_printf("mlp.%u", l);
    backbone_linear_init(&m->lins[l], prefix, in, out, TRUE, BACKBONE_INIT_TORCH, init);
  }
  return m;
}

static void mlp_parameters(gpointer inst, GPtrArray *out)
{
  Mlp *m = inst;
  for (guint l = 0; l < m->common.layers; l++)
    backbone_linear_parameters(&m->lins[l], out);
}

static LdpVar *mlp_forward(gpointer inst, LdpTape *tape, const LdpBatch *batch, LdpVar *x, LdpVar *edge_w,
                           LdpRng *rng, GError **error)
{
  Mlp *m = inst;
  if (!backbone_check_forward(MLP_NAME, batch, x, m->in_dim, edge_w, FALSE, FALSE, error))
    return NULL;
  LdpVar *h = x;
  for (guint l = 0; l < m->common.layers; l++) {
    h = backbone_linear_apply(&m->lins[l], tape, h);
    if (l + 1 < m->common.layers) {
      h = backbone_activate(tape, m->common.activation, h);
      h = ldp_op_dropout(tape, h, m->common.dropout, rng);
    }
  }
  return h;
}

static const LdpParamSpec mlp_params[] = {
  BACKBONE_PARAM_LAYERS("2", 1, 16, "number of linear layers (the last one maps to the classes)"),
  BACKBONE_PARAM_HIDDEN("16", 1, 65536, "width of every hidden layer"),
  BACKBONE_PARAM_ACTIVATION("selu"),
  BACKBONE_PARAM_DROPOUT,
};

static const LdpBackboneVTable mlp_vtable = {
  .capabilities = MLP_CAPS,
  .create = mlp_create,
  .destroy = mlp_destroy,
  .parameters = mlp_parameters,
  .forward = mlp_forward,
};

static const LdpPluginDesc mlp_desc = {
  LDP_PLUGIN_DESC_HEADER,
  .kind = LDP_PLUGIN_BACKBONE,
  .name = MLP_NAME,
  .version = "1.0",
  .summary = "multi-layer perceptron on node features (ignores the graph)",
  .params = mlp_params,
  .n_params = G_N_ELEMENTS(mlp_params),
  .vtable.backbone = &mlp_vtable,
};

LDP_PLUGIN_DEFINE(mlp_desc)
