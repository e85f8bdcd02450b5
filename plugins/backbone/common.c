/* common.c: helpers shared by the backbone plugins (see common.h). */
#include "common.h"

#include <math.h>
#include <string.h>

const char *const backbone_activation_choices[] = { "selu", "relu", "elu", "leaky_relu", "none", NULL };

void backbone_common_read(const LdpParams *params, BackboneCommon *out)
{
  out->layers = (guint)ldp_params_get_int(params, "layers");
  out->hidden = (guint)ldp_params_get_int(params, "hidden");
  out->dropout = (float)ldp_params_get_number(params, "dropout");
  const char *act = ldp_params_get_string(params, "activation");
  out->activation = BACKBONE_ACT_SELU;
  /* The schema has validated the value against backbone_activation_choices. */
  for (guint i = 0; act && backbone_activation_choices[i]; i++)
    if (strcmp(act, backbone_activation_choices[i]) == 0)
      out->activation = (BackboneActivation)i;
}

LdpVar *backbone_activate(LdpTape *tape, BackboneActivation act, LdpVar *x)
{
  switch (act) {
  case BACKBONE_ACT_SELU:
    return ldp_op_selu(tape, x);
  case BACKBONE_ACT_RELU:
    return ldp_op_relu(tape, x);
  case BACKBONE_ACT_ELU:
    return ldp_op_elu(tape, x, 1.0f);         /* torch.nn.ELU default */
  case BACKBONE_ACT_LEAKY_RELU:
    return ldp_op_leaky_relu(tape, x, 0.01f); /* torch.nn.LeakyReLU default */
  case BACKBONE_ACT_NONE:
  default:
    return x;
  }
}

LdpVar *backbone_add_bias_activate(LdpTape *tape, BackboneActivation act, LdpVar *a, LdpVar *bias, LdpVar *b)
{
  switch (act) {
  case BACKBONE_ACT_SELU:
    return ldp_op_add_bias_selu(tape, a, bias, b);
  case BACKBONE_ACT_ELU:
    return ldp_op_add_bias_elu(tape, a, bias, b, 1.0f); /* as backbone_activate */
  default:
    return backbone_activate(tape, act, ldp_op_add_bias(tape, a, bias, b));
  }
}

void backbone_linear_init(BackboneLinear *lin, const char *prefix, guint in, guint out, gboolean bias,
                          BackboneInit init, LdpRng *rng)
{
  g_autofree char *wname = g_strdup_printf("%s.weight", prefix);
  lin->in = in;
  lin->out = out;
  lin->weight = ldp_param_new(wname, in, out);
  lin->bias = NULL;
  float bound = 1.0f / sqrtf((float)in);
  if (init == BACKBONE_INIT_GLOROT)
    ldp_param_init_glorot(lin->weight, rng);
  else
    ldp_param_init_uniform(lin->weight, rng, bound);
  if (bias) {
    g_autofree char *bname = g_strdup_printf("%s.bias", prefix);
    lin->bias = ldp_param_new(bname, 1, out);  /* zero-initialised */
    if (init == BACKBONE_INIT_TORCH)
      ldp_param_init_uniform(lin->bias, rng, bound);
  }
}

void backbone_linear_clear(BackboneLinear *lin)
{
  g_clear_pointer(&lin->weight, ldp_param_free);
  g_clear_pointer(&lin->bias, ldp_param_free);
}

LdpVar *backbone_linear_apply(const BackboneLinear *lin, LdpTape *tape, LdpVar *x)
{
  LdpVar *y = ldp_op_matmul(tape, x, ldp_tape_param(tape, lin->weight));
  if (lin->bias)
    y = ldp_op_bias_add(tape, y, ldp_tape_param(tape, lin->bias));
  return y;
}

void backbone_linear_parameters(const BackboneLinear *lin, GPtrArray *out)
{
  g_ptr_array_add(out, lin->weight);
  if (lin->bias)
    g_ptr_array_add(out, lin->bias);
}

gboolean backbone_check_level(const char *plugin, guint capabilities, LdpTaskLevel level,
                              GError **error)
{
  if (level == LDP_TASK_NODE && (capabilities & LDP_BACKBONE_NODE))
    return TRUE;
  if (level == LDP_TASK_GRAPH && (capabilities & LDP_BACKBONE_GRAPH))
    return TRUE;
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
              "backbone %s: %s-level output is not supported (it produces %s-level logits)", plugin,
              level == LDP_TASK_GRAPH ? "graph" : "node",
              (capabilities & LDP_BACKBONE_GRAPH) ? "graph" : "node");
  return FALSE;
}

gboolean backbone_check_dims(const char *plugin, guint in_dim, guint out_dim, GError **error)
{
  if (in_dim > 0 && out_dim > 0)
    return TRUE;
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
              "backbone %s: needs at least one input feature and one output class (got %u features, "
              "%u outputs)",
              plugin, in_dim, out_dim);
  return FALSE;
}

gboolean backbone_check_forward(const char *plugin, const LdpBatch *batch, LdpVar *x, guint in_dim,
                                LdpVar *edge_w, gboolean edge_w_supported, gboolean need_graphs,
                                GError **error)
{
  if (!batch || !batch->graph || !x) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "backbone %s: forward needs a batch with a graph and an input", plugin);
    return FALSE;
  }
  guint n = ldp_graph_n_nodes(batch->graph);
  if (ldp_var_rows(x) != n || ldp_var_cols(x) != in_dim) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "backbone %s: input is %u x %u, expected %u x %u (nodes x features)", plugin,
                ldp_var_rows(x), ldp_var_cols(x), n, in_dim);
    return FALSE;
  }
  if (edge_w && !edge_w_supported) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
                "backbone %s: learnable edge weights are not supported by this architecture; "
                "use gcn, sage, gat or gin, or drop the calibrator that provides them",
                plugin);
    return FALSE;
  }
  if (edge_w && (ldp_var_rows(edge_w) != ldp_graph_n_edges(batch->graph) || ldp_var_cols(edge_w) != 1)) {
    g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                "backbone %s: edge weights are %u x %u, expected %u x 1 (one per stored edge)", plugin,
                ldp_var_rows(edge_w), ldp_var_cols(edge_w), ldp_graph_n_edges(batch->graph));
    return FALSE;
  }
  if (need_graphs) {
    if (batch->n_graphs == 0 || !batch->graph_ptr || batch->graph_ptr[0] != 0 ||
        batch->graph_ptr[batch->n_graphs] != n) {
      g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                  "backbone %s: graph-level forward needs graph_ptr with n_graphs + 1 offsets "
                  "from 0 to the %u nodes of the batch",
                  plugin, n);
      return FALSE;
    }
    for (guint g = 0; g < batch->n_graphs; g++)
      if (batch->graph_ptr[g] > batch->graph_ptr[g + 1]) {
        g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_FAILED,
                    "backbone %s: graph_ptr decreases at graph %u (%u > %u)", plugin, g,
                    batch->graph_ptr[g], batch->graph_ptr[g + 1]);
        return FALSE;
      }
  }
  return TRUE;
}

gboolean backbone_refuse_background(const char *plugin, const LdpBatch *batch, GError **error)
{
  if (!batch || !batch->graph || !ldp_graph_has_background(batch->graph))
    return TRUE;
  g_set_error(error, LDP_RUN_ERROR, LDP_RUN_ERROR_INCOMPATIBLE,
              "backbone %s: the graph has a dense weighted background (Blink's soft posterior, %u nodes), "
              "which only gcn, sage and gat propagate over; use variant hard or hybrid with %s",
              plugin, ldp_graph_n_nodes(batch->graph), plugin);
  return FALSE;
}
