#!/usr/bin/env python3
"""A plain PyTorch GIN of the shape of ldpgnn's GIN pipeline, to time against.

Shape (doc/algorithms.md §11.8): constant one-column input, 4 message-passing layers
s = (A + I) h, u = Linear(ReLU(BN(Linear(s)))), h' = ReLU(BN(u)); every layer,
the input included, maps its mean-pooled representation to the class scores
with dropout 0.5, summed. Training: batch 32 shuffled, last incomplete batch
dropped, Adam lr 0.01, cross entropy. One epoch = the training batches plus an
evaluation forward of the validation and test graphs (as ldpgnn's trainer does).

Usage: gin-reference.py [--epochs N] [--threads T] [--data DIR]
DIR defaults to $LDPGNN_DATA; the dataset is DIR/reddit_binary/REDDIT-BINARY.txt
(GIN text format). Prints one line per epoch and a summary in s/epoch. Exits 0
with a message when torch is not installed (optional tooling).
"""
import argparse
import os
import sys
import time


def load_gin_text(path):
    """Graphs as (n, label, edge list (row, col) with both directions)."""
    with open(path) as f:
        tokens = f.read().split()
    pos = 0

    def nxt():
        nonlocal pos
        pos += 1
        return int(tokens[pos - 1])

    graphs = []
    for _ in range(nxt()):
        n, label = nxt(), nxt()
        rows, cols = [], []
        for i in range(n):
            nxt()  # tag, always 0 here: the input is constant
            for _ in range(nxt()):
                rows.append(i)
                cols.append(nxt())
        graphs.append((n, label, rows, cols))
    labels = sorted({g[1] for g in graphs})
    remap = {l: k for k, l in enumerate(labels)}
    return [(n, remap[l], r, c) for n, l, r, c in graphs], len(labels)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", default=os.environ.get("LDPGNN_DATA", ""))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError:
        print("gin-reference: torch is not installed; skipping (apt-get install python3-torch)")
        return 0
    path = os.path.join(args.data, "reddit_binary", "REDDIT-BINARY.txt")
    if not args.data or not os.path.exists(path):
        print(f"gin-reference: no dataset at {path!r} (set LDPGNN_DATA); skipping")
        return 0
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    graphs, n_classes = load_gin_text(path)

    class Gin(nn.Module):
        def __init__(self, in_dim, hidden, classes, layers=5):
            super().__init__()
            self.lin1 = nn.ModuleList()
            self.lin2 = nn.ModuleList()
            self.bn_mlp = nn.ModuleList()
            self.bn_out = nn.ModuleList()
            for l in range(layers - 1):
                self.lin1.append(nn.Linear(in_dim if l == 0 else hidden, hidden))
                self.bn_mlp.append(nn.BatchNorm1d(hidden))
                self.lin2.append(nn.Linear(hidden, hidden))
                self.bn_out.append(nn.BatchNorm1d(hidden))
            self.preds = nn.ModuleList(
                nn.Linear(in_dim if l == 0 else hidden, classes) for l in range(layers))

        def forward(self, adj, x, pool):
            hs = [x]
            h = x
            for l in range(len(self.lin1)):
                s = torch.sparse.mm(adj, h) + h  # (A + I) h: sum over the list plus self
                u = self.lin2[l](F.relu(self.bn_mlp[l](self.lin1[l](s))))
                h = F.relu(self.bn_out[l](u))
                hs.append(h)
            score = 0
            for l, hl in enumerate(hs):
                score = score + F.dropout(self.preds[l](torch.sparse.mm(pool, hl)), 0.5, self.training)
            return score

    # Per-graph edge tensors once, so a batch is a few concatenations (batch
    # building is timed with the epoch, as in ldpgnn's trainer, and must be cheap).
    edge_t = [torch.tensor([r, c], dtype=torch.long) for _, _, r, c in graphs]

    def batch(ids):
        """Block-diagonal adjacency, mean-pooling matrix, labels of graphs @ids."""
        sizes = torch.tensor([graphs[g][0] for g in ids])
        offs = torch.cumsum(sizes, 0) - sizes
        n = int(sizes.sum())
        ei = torch.cat([edge_t[g] + offs[b] for b, g in enumerate(ids)], 1)
        adj = torch.sparse_coo_tensor(ei, torch.ones(ei.shape[1]), (n, n)).coalesce()
        owner = torch.repeat_interleave(torch.arange(len(ids)), sizes)
        pool = torch.sparse_coo_tensor(torch.stack([owner, torch.arange(n)]),
                                       (1.0 / sizes.float())[owner], (len(ids), n)).coalesce()
        labels = torch.tensor([graphs[g][1] for g in ids])
        return adj, torch.ones(n, 1), pool, labels

    # Stratified 75/10/15 split.
    g = torch.Generator().manual_seed(args.seed)
    train, val, test = [], [], []
    for c in range(n_classes):
        ids = [i for i, gr in enumerate(graphs) if gr[1] == c]
        ids = [ids[k] for k in torch.randperm(len(ids), generator=g).tolist()]
        a, b = int(0.75 * len(ids)), int(0.85 * len(ids))
        train += ids[:a]
        val += ids[a:b]
        test += ids[b:]
    model = Gin(1, 64, n_classes)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    evals = [batch(val[s:s + 32]) for s in range(0, len(val), 32)]
    evals += [batch(test[s:s + 32]) for s in range(0, len(test), 32)]
    times = []
    for epoch in range(1, args.epochs + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        model.train()
        order = [train[k] for k in torch.randperm(len(train), generator=g).tolist()]
        loss_sum, nb = 0.0, 0
        for s in range(0, len(order) - 31, 32):  # drop_last
            adj, x, pool, y = batch(order[s:s + 32])
            loss = F.cross_entropy(model(adj, x, pool), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item()
            nb += 1
        t1 = time.perf_counter()
        model.eval()
        with torch.no_grad():
            for adj, x, pool, y in evals:
                model(adj, x, pool)
        t2, c2 = time.perf_counter(), time.process_time()
        times.append((t1 - t0, t2 - t0, c2 - c0))
        print(f"epoch {epoch}: loss {loss_sum / nb:.4f}  train {t1 - t0:.3f} s  with eval {t2 - t0:.3f} s wall, "
              f"{c2 - c0:.3f} s cpu", flush=True)
    # The first epoch warms caches and allocators: the median leaves it aside when it can.
    kept = times[1:] if len(times) > 2 else times
    cpu = sorted(t[2] for t in kept)
    tot = sorted(t[1] for t in kept)
    med = cpu[len(cpu) // 2]
    n_nodes = sum(graphs[i][0] for i in train)
    print(f"pytorch {torch.__version__} threads {args.threads}: {med:.3f} cpu s/epoch median "
          f"(range {cpu[0]:.3f}-{cpu[-1]:.3f}; wall {tot[len(tot) // 2]:.3f} s), "
          f"{len(order) // 32 * 32 / med:.0f} graphs/s, {n_nodes} training nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
