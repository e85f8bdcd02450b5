/* common.h (private to the backbone plugins): parameter declarations, activations,
 * linear layers and input checks shared by mlp, gcn, sage, gat and gin.
 *
 * common.c is compiled into every backbone module; its symbols are not exported
 * (each module exports only ldp_plugin_query).
 */
#pragma once

#include <ldpgnn/ldpgnn.h>

G_BEGIN_DECLS

/* ---- parameter schema entries every backbone declares ---- */

/* NULL-terminated: selu, relu, elu, leaky_relu, none. */
extern const char *const backbone_activation_choices[];

#define BACKBONE_PARAM_LAYERS(def, lo, hi, docstr)                                                    \
  { .name = "layers", .type = LDP_PARAM_INTEGER, .doc = docstr, .default_value = def, .min = lo,      \
    .max = hi }
#define BACKBONE_PARAM_HIDDEN(def, lo, hi, docstr)                                                   \
  { .name = "hidden", .type = LDP_PARAM_INTEGER, .doc = docstr, .default_value = def, .min = lo,      \
    .max = hi }
#define BACKBONE_PARAM_ACTIVATION(def)                                                               \
  { .name = "activation", .type = LDP_PARAM_ENUM,                                                    \
    .doc = "non-linearity after each hidden layer (leaky_relu: slope 0.01, elu: alpha 1)",          \
    .default_value = def, .choices = backbone_activation_choices }
#define BACKBONE_PARAM_DROPOUT                                                                       \
  { .name = "dropout", .type = LDP_PARAM_NUMBER,                                                     \
    .doc = "dropout probability after each hidden layer's activation (never on the input)",          \
    .default_value = "0", .min = 0, .max = 1, .flags = LDP_PARAM_MAX_OPEN }

typedef enum {
  BACKBONE_ACT_SELU,
  BACKBONE_ACT_RELU,
  BACKBONE_ACT_ELU,
  BACKBONE_ACT_LEAKY_RELU,
  BACKBONE_ACT_NONE
} BackboneActivation;

/* The common parameters, read from validated params. */
typedef struct {
  guint layers;
  guint hidden;
  BackboneActivation activation;
  float dropout;
} BackboneCommon;

void backbone_common_read(const LdpParams *params, BackboneCommon *out);
/* Applies @act (identity for BACKBONE_ACT_NONE). */
LdpVar *backbone_activate(LdpTape *tape, BackboneActivation act, LdpVar *x);
/* backbone_activate(ldp_op_add_bias(a, bias, b)): the same bits, in one fused op for
 * SELU and ELU (ldp_op_add_bias_selu, ldp_op_add_bias_elu). */
LdpVar *backbone_add_bias_activate(LdpTape *tape, BackboneActivation act, LdpVar *a, LdpVar *bias, LdpVar *b);

/* ---- linear layers: y = x W (+ b), W is in x out ---- */

typedef enum {
  BACKBONE_INIT_TORCH,   /* torch.nn.Linear: W and b ~ U(+-1/sqrt(in)) */
  BACKBONE_INIT_GLOROT   /* Glorot-uniform W, zero b (PyG GCNConv / GATConv) */
} BackboneInit;

typedef struct {
  LdpParam *weight;  /* in x out, owned */
  LdpParam *bias;    /* 1 x out, owned, nullable */
  guint in, out;
} BackboneLinear;

/* Creates the parameters named "@prefix.weight" / "@prefix.bias" and initialises them
 * from @rng (weight first, then bias). */
void backbone_linear_init(BackboneLinear *lin, const char *prefix, guint in, guint out, gboolean bias,
                          BackboneInit init, LdpRng *rng);
void backbone_linear_clear(BackboneLinear *lin);
/* x W (+ b); @x may be a sparse constant (it is only the left operand of a matmul). */
LdpVar *backbone_linear_apply(const BackboneLinear *lin, LdpTape *tape, LdpVar *x);
/* Appends weight (and bias) to @out (transfer none). */
void backbone_linear_parameters(const BackboneLinear *lin, GPtrArray *out);

/* ---- checks (bad input becomes a GError, never a crash) ---- */

/* Refuses a task level the backbone cannot produce (LDP_RUN_ERROR_INCOMPATIBLE). */
gboolean backbone_check_level(const char *plugin, guint capabilities, LdpTaskLevel level,
                              GError **error);
/* Refuses zero input or output widths (LDP_RUN_ERROR_INCOMPATIBLE). */
gboolean backbone_check_dims(const char *plugin, guint in_dim, guint out_dim, GError **error);
/* Checks a forward call: @x has one row per node of batch->graph and @in_dim columns;
 * @edge_w (nullable) has one row per edge and one column, and is refused outright when
 * @edge_w_supported is FALSE; graph-level calls need a consistent graph_ptr. */
gboolean backbone_check_forward(const char *plugin, const LdpBatch *batch, LdpVar *x, guint in_dim,
                                LdpVar *edge_w, gboolean edge_w_supported, gboolean need_graphs,
                                GError **error);

/* Refuses a batch graph with a block-constant background (graph.h): for backbones
 * that have no propagation over its full dense W (LDP_RUN_ERROR_INCOMPATIBLE). */
gboolean backbone_refuse_background(const char *plugin, const LdpBatch *batch, GError **error);

G_END_DECLS
