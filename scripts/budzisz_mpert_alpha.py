"""alpha, compete share and early-response/loss rates of the mPERT flows, both p' readings, 40 Mbit/s, 500 s, seed 2009."""
# Run: python scripts/budzisz_mpert_alpha.py  (about 5 s; docs/reproductions/budzisz.md)
import ccsim
from ccsim.experiments import budzisz as b
from ccsim.scenario import Scenario
for pp in ("realised", "probability"):
    r = ccsim.run(Scenario.from_dict(b.base_document(40, 500, "mpert", dict(b.MPERT_PARAMS, p_prime=pp))), seed=2009)
    m = r.cc_metrics
    m = m[m["time_s"] > 250]
    piv = m.groupby("name")["value"].mean()
    print(pp, {k: round(float(piv[k]), 4) for k in ("alpha", "compete", "p_response", "loss_rate", "response_rate", "qdelay_ms") if k in piv})
