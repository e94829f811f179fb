# SPDX-License-Identifier: MIT
"""The report every scripts/bench-* program prints: baseline and ours over N rounds.

Each round of a bench script gives one JSON object a side (a line of its output). A row compares
one figure of the two sides by two statistics:

- best: the fastest round of each side (the highest rate, the lowest cost). The host's other work
  and the broker's own background work (RabbitMQ drains a freshly filled queue at ~25k or ~70k
  msg/s from one round to the next, with the same client) only ever slow a round down, so the best
  round is the estimate least disturbed by them; targets are judged on it.
- median: the middle round of each side, shown beside it, with every round.
"""
import json
import statistics


def lines(text):
    """The JSON objects of a side, one a line; other lines (a failed round's output) skipped."""
    out = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def values(runs, key):
    return [float(r[key]) for r in runs if r.get(key) is not None]


def num(v):
    """A rate or cost as printed: thousands grouped; small values (waits per message) 3 digits."""
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def ratio(top, bottom):
    return top / bottom if top is not None and bottom else None


class Report:
    def __init__(self, baseline="baseline", unit="msg/s"):
        self.baseline = baseline
        self.unit = unit
        self.rows = []

    def row(self, pattern, base_runs, base_key, our_runs, our_key, target=None, *,
            faster=False, lower_is_better=False):
        """One figure; ratio = ours / baseline (baseline / ours when lower_is_better). A target
        is met by ratio >= target, or ratio > target when `faster`."""
        pick = min if lower_is_better else max
        b, o = values(base_runs, base_key), values(our_runs, our_key)
        row = {"pattern": pattern, "target": target, "faster": faster,
               "lower_is_better": lower_is_better}
        for name, stat in (("best", pick), ("median", statistics.median)):
            bs, os_ = (stat(b) if b else None), (stat(o) if o else None)
            row[name] = {"baseline": bs, "ours": os_,
                         "ratio": ratio(bs, os_) if lower_is_better else ratio(os_, bs)}
        r = row["best"]["ratio"]
        row["met"] = None if target is None or r is None else (r > target if faster
                                                                 else r >= target)
        self.rows.append(row)
        return row

    def failed(self):
        return [r["pattern"] for r in self.rows if r["met"] is False]

    def print_table(self, rounds):
        def times(v):
            return "" if v is None else f"{v:.3f}x"

        width = max(len(r["pattern"]) for r in self.rows) + 1
        print(f"{'pattern (' + self.unit + ')':<{width}} {'best: ' + self.baseline:>18} "
              f"{'ours':>9} {'ratio':>7} | {'median: ' + self.baseline:>20} {'ours':>9} "
              f"{'ratio':>7}  target (on best)")
        for r in self.rows:
            best, med = r["best"], r["median"]
            target = ""
            if r["target"] is not None:
                verdict = "?" if r["met"] is None else ("met" if r["met"] else "MISSED")
                target = f"{'>' if r['faster'] else '>='} {r['target']}x {verdict}"
            print(f"{r['pattern']:<{width}} {num(best['baseline']):>18} {num(best['ours']):>9} "
                  f"{times(best['ratio']):>7} | {num(med['baseline']):>20} {num(med['ours']):>9} "
                  f"{times(med['ratio']):>7}  {target}")
        print(f"best: the fastest of {rounds} round(s) of each side; median: the middle one.")

    @staticmethod
    def print_rounds(pairs):
        """pairs: (name, baseline runs, key, our runs, key); one line a round."""
        count = max(max(len(p[1]), len(p[3])) for p in pairs)
        print("Each round (baseline/ours):")
        for i in range(count):
            parts = []
            for name, base_runs, bk, our_runs, ok in pairs:
                b = base_runs[i].get(bk) if i < len(base_runs) else None
                o = our_runs[i].get(ok) if i < len(our_runs) else None
                parts.append(f"{name} {num(b)}/{num(o)}")
            print(f"  round {i + 1}: " + ", ".join(parts))
