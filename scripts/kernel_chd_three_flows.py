"""Three CHD flows at 0/20/40 s (Hayes & Armitage 2010 Fig. 5): goodput per flow, kernel run beside
simulator run, and Jain's index over the runs' measure window (45-60 s).

Usage: python scripts/kernel_chd_three_flows.py KERNEL_RUN SIM_RUN [OUT.png]
"""
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from ccsim.result import Result

fig, axes = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
for ax, (d, title) in zip(axes, [(sys.argv[1], "kernel twins (testbed)"), (sys.argv[2], "simulator, linux profile")]):
    r = Result.load(d)
    f = r.flows
    for flow, g in f.groupby("flow"):
        sm = g.set_index("time_s")["goodput_bps"].rolling(10, min_periods=1).mean() / 1e6
        ax.plot(sm.index, sm.values, label=r.summary.set_index("flow").loc[flow, "name"])
    x = r.summary["goodput_bps"].to_numpy()
    j = x.sum() ** 2 / (len(x) * (x ** 2).sum())
    ax.set_title(f"{title}: Jain's index 45-60 s = {j:.3f}")
    ax.set_ylabel("goodput (Mbit/s, 1 s mean)")
    ax.axvspan(45, 60, color="0.9")
    ax.legend(loc="upper right")
    print(d, "goodput 45-60 s (Mbit/s):", [round(v / 1e6, 3) for v in x], "Jain", round(j, 4))
axes[-1].set_xlabel("time (s)")
fig.tight_layout()
fig.savefig(sys.argv[3] if len(sys.argv) > 3 else "kernel_chd_three_flows.png", dpi=90)
