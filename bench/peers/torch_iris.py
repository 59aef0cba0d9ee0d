"""PyTorch peer of BM_IrisTrainStep: the Iris DNNClassifier (4 features, hidden 10-10, 3 classes,
Adagrad 0.05, batch 100 drawn from the shuffled training set), time per training step.

The data is read once into tensors; each step takes the next 100 rows of a shuffled epoch order
(reshuffled every epoch), as the input pipeline of the dflow job does. Tries 1 and 2 threads and
reports the best. Prints one JSON line:
{"name": "torch_iris", "us_per_step": ..., "threads": ...}.
"""
import json
import os
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
csv = os.path.join(here, "..", "..", "data", "iris", "iris_training.csv")


def load():
    rows = []
    with open(csv) as f:
        next(f)  # header: 120,4,setosa,versicolor,virginica
        for line in f:
            if line.strip():
                rows.append([float(v) for v in line.strip().split(",")])
    t = torch.tensor(rows)
    return t[:, :4].contiguous(), t[:, 4].long()


def run(threads, steps=3000):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    x_all, y_all = load()
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 10), torch.nn.ReLU(),
        torch.nn.Linear(10, 10), torch.nn.ReLU(),
        torch.nn.Linear(10, 3))
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05, initial_accumulator_value=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    order, pos = torch.randperm(len(x_all)), 0

    def step():
        nonlocal order, pos
        if pos + 100 > len(order):
            idx = order[pos:]
            order, pos = torch.randperm(len(x_all)), 100 - len(idx)
            idx = torch.cat([idx, order[:pos]])
        else:
            idx = order[pos:pos + 100]
            pos += 100
        x, y = x_all[idx], y_all[idx]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(200):  # warm up
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - t0) / steps * 1e6


best = min((run(t), t) for t in (1, 2))
print(json.dumps({"name": "torch_iris", "us_per_step": best[0], "threads": best[1]}))
