#!/usr/bin/python3
"""Synthetic bill histories with planted anomalies and their ground truth.

    bench/insights/gen.py --users N --months 24 --seed S --out FILE

One JSON line per user: accounts, bills (monthly per account), payments, and
"truth": the insights a reader of these bills would expect ("expected":
true), and the natural consequences of a planted anomaly that a detector may
fairly report as well ("expected": false). Written from a description of
bills, not from any detector: it is the independent ground truth of
bench/insights-accuracy. Deterministic: the same arguments give the same
bytes. Standard library only.
"""

import argparse
import datetime
import json
import math
import random
import sys

KINDS = ("power", "gas", "water", "phone", "internet")

BILLERS = {
    "power": ["Northgrid Power", "Sunvale Electric", "Riverbend Energy",
              "Metro Light & Power"],
    "gas": ["Keystone Gas", "Bluefire Natural Gas", "Prairie Gas Co"],
    "water": ["City Water Works", "Clearbrook Water", "Lakeshore Utilities"],
    "phone": ["Cellwave Mobile", "Orbit Wireless", "TalkNet"],
    "internet": ["FiberLink", "Skyline Broadband", "NetHome Cable"],
}

USAGE = {
    "power": ("electricity", "kWh"),
    "gas": ("gas", "therm"),
    "water": ("water", "gal"),
}

# fee lines a biller may add one day; none of them is a recurring line below
NEW_FEES = ["Late payment fee", "Paper statement fee", "Reconnection fee",
            "Administrative fee", "Account maintenance fee",
            "Payment processing fee", "Returned payment fee"]
ONE_OFF = ["Equipment charge", "Field service visit", "Back-billing charge",
           "Meter replacement charge"]

MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]


def iso(d):
    return d.isoformat()


def add_months(y, m, k):
    n = y * 12 + (m - 1) + k
    return n // 12, n % 12 + 1


class Account:
    """One account at one biller: its plan, its prices, its season."""

    def __init__(self, rng, user, n, kind, biller_idx):
        self.kind = kind
        self.account_id = "%s-a%d" % (user, n)
        names = BILLERS[kind]
        self.biller_name = names[biller_idx % len(names)]
        self.biller_id = "b-%s-%d" % (kind, biller_idx % len(names) + 1)
        self.sday = rng.randint(5, 26)
        self.due_after = rng.randint(14, 25)
        self.noise = rng.uniform(0.05, 0.08)
        self.month_names = rng.random() < 0.3	# "Energy charge - March"
        self.autopay_credit = kind == "power" and rng.random() < 0.3
        if kind == "power":
            self.base_q = rng.uniform(400, 900)
            self.amp = rng.uniform(0.15, 0.40)
            self.peak = rng.choice([1, 7])		# winter or summer peak
            self.rate = rng.uniform(0.12, 0.25) * 100	# minor per kWh
            self.fixed = [("Service charge", "fee", rng.randint(900, 1500)),
                          ("Meter fee", "fee", rng.randint(250, 500))]
            self.usage_line = "Energy charge"
            self.tax = ("State energy tax", rng.uniform(0.04, 0.08))
        elif kind == "gas":
            self.base_q = rng.uniform(30, 90)
            self.amp = rng.uniform(0.30, 0.40)
            self.peak = 1
            self.rate = rng.uniform(0.9, 1.6) * 100
            self.fixed = [("Customer charge", "fee", rng.randint(1000, 1800))]
            self.usage_line = "Gas supply"
            self.tax = ("Sales tax", rng.uniform(0.04, 0.07))
        elif kind == "water":
            self.base_q = rng.uniform(3000, 8000)
            self.amp = rng.uniform(0.03, 0.08)
            self.peak = 7
            self.rate = rng.uniform(0.004, 0.008) * 100
            self.fixed = [("Service charge", "fee", rng.randint(800, 1500)),
                          ("Sewer charge", "fee", rng.randint(1500, 3000))]
            self.usage_line = "Water usage"
            self.tax = None
        elif kind == "phone":
            self.base_q = None
            self.fixed = [("Unlimited plan", "other", rng.choice(
                [4500, 5500, 6000, 6500, 7000, 8500])),
                ("Regulatory recovery fee", "fee", rng.randint(150, 350))]
            self.usage_line = None
            self.tax = ("Taxes and surcharges", rng.uniform(0.08, 0.12))
        else:
            self.base_q = None
            self.fixed = [("Internet service", "other", rng.choice(
                [4999, 5999, 6499, 7999, 8999])),
                ("Modem rental", "fee", rng.choice([1000, 1200, 1500]))]
            self.usage_line = None
            self.tax = None
        self.price = 1.0
        self.price_changes = {}
        self.start = 0		# the first month index it bills
        self.stop = None	# the month index it stops (exclusive)

    def plan_prices(self, rng, first, last):
        for _ in range(rng.randint(1, 2)):
            if last - first < 4:
                break
            m = rng.randint(first + 2, last - 1)
            f = rng.uniform(0.05, 0.15) * rng.choice([1, 1, -1])
            self.price_changes[m] = 1 + f

    def clean_bill(self, rng, y, mo, k):
        """The bill of calendar month (y, mo), the account's k-th month."""
        if k in self.price_changes:
            self.price *= self.price_changes[k]
        items, usage = [], []
        if self.base_q is not None:
            season = 1 + self.amp * math.cos(2 * math.pi * (mo - self.peak) / 12)
            q = self.base_q * season * (1 + rng.uniform(-self.noise, self.noise))
            q = round(q, 1) if self.kind != "water" else float(round(q))
            ut, unit = USAGE[self.kind]
            usage.append({"type": ut, "unit": unit, "quantity": q})
            desc = self.usage_line
            if self.month_names:
                desc = "%s - %s %d" % (desc, MONTHS[mo - 1], y)
            items.append({"description": desc, "category": "usage",
                          "minor": int(round(q * self.rate * self.price))})
        for desc, cat, minor in self.fixed:
            items.append({"description": desc, "category": cat,
                          "minor": int(round(minor * self.price))})
        if self.autopay_credit:
            items.append({"description": "Autopay discount",
                          "category": "credit", "minor": -200})
        return items, usage

    def add_tax(self, items):
        items = [i for i in items if i["category"] != "tax"]
        if self.tax:
            base = sum(i["minor"] for i in items
                       if i["category"] in ("usage", "fee", "other"))
            items.append({"description": self.tax[0], "category": "tax",
                          "minor": int(round(base * self.tax[1]))})
        return items


PLANTS_USAGE = ["usage_spike", "usage_drop"]
PLANTS_ANY = ["line_jump", "bill_scale", "one_off_charge", "new_fee",
              "duplicate_bill", "duplicate_payment", "duplicate_line"]


def gen_user(rng, idx, months):
    user = "u%04d" % idx
    end_y, end_mo = 2026, 11
    today = datetime.date(end_y, end_mo, rng.randint(1, 28))
    first_y, first_mo = add_months(end_y, end_mo, -months)
    nacc = rng.choice([1, 2, 2, 3, 3])
    kinds = rng.sample(KINDS, nacc)
    accounts = []
    for n, kind in enumerate(kinds, 1):
        a = Account(rng, user, n, kind, rng.randrange(4))
        a.stop = months
        accounts.append(a)
    # moving house: one account's bills stop, a new biller's begin
    if rng.random() < 0.25:
        old = rng.choice(accounts)
        k = rng.randint(8, 16)
        old.stop = k
        names = BILLERS[old.kind]
        cur = names.index(old.biller_name)
        new = Account(rng, user, len(accounts) + 1, old.kind,
                      (cur + rng.randint(1, len(names) - 1)) % len(names))
        new.start, new.stop = k, months
        accounts.append(new)
    for a in accounts:
        a.plan_prices(rng, a.start, a.stop)

    clean = rng.random() < 0.20
    # the planted anomalies: (account, month index) -> kind, on bills with
    # at least 6 previous bills of the account, 7 months apart at least
    plants = {}
    if not clean:
        want = rng.randint(1, 3)
        tries = 0
        while len(plants) < want and tries < 50:
            tries += 1
            a = rng.choice(accounts)
            if a.stop - a.start < 7:
                continue
            k = rng.randint(a.start + 6, a.stop - 1)
            if any(b is a and abs(k2 - k) < 7 for (b, k2) in plants):
                continue
            kinds_ok = PLANTS_ANY + (PLANTS_USAGE if a.base_q else [])
            plants[(a, k)] = rng.choice(kinds_ok)

    bills, payments, truth = [], [], []
    pay_seq = []	# (day, order, payment) before ids are given
    used_fees = {}
    for a in accounts:
        nb = 0
        for k in range(a.start, a.stop):
            y, mo = add_months(first_y, first_mo, k)
            sday = min(28, max(1, a.sday + rng.randint(-2, 2)))
            st = datetime.date(y, mo, sday)
            if st > today:
                continue
            items, usage = a.clean_bill(rng, y, mo, k)
            items = a.add_tax(items)
            clean_items = [dict(i) for i in items]
            plant = plants.get((a, k))
            nb += 1
            bid = "%s-%02d" % (a.account_id, nb)
            labels = []
            dup_bill = dup_pay = False
            if plant == "usage_spike" or plant == "usage_drop":
                f = rng.uniform(2.5, 4.0) if plant == "usage_spike" \
                    else rng.uniform(0.10, 0.25)
                q = usage[0]["quantity"] * f
                usage[0]["quantity"] = round(q, 1) if a.kind != "water" \
                    else float(round(q))
                items[0]["minor"] = int(round(usage[0]["quantity"] * a.rate *
                                              a.price))
                items = a.add_tax(items)
                labels.append(("usage_anomaly", {"usage_type": usage[0]["type"]},
                               True))
            elif plant == "line_jump":
                cand = [i for i in items if i["category"] in ("fee", "other")]
                it = rng.choice(cand)
                old = it["minor"]
                it["minor"] = max(int(round(old * rng.uniform(2.0, 3.0))),
                                  old + rng.randint(1000, 2000))
                items = a.add_tax(items)
                labels.append(("line_item_spike",
                               {"description": it["description"]}, True))
            elif plant == "bill_scale":
                f = rng.uniform(1.8, 3.0)
                for i in items:
                    i["minor"] = int(round(i["minor"] * f))
                labels.append(("bill_anomaly", {}, True))
            elif plant == "one_off_charge":
                usual = sum(i["minor"] for i in items)
                items.insert(len(items) - (1 if a.tax else 0), {
                    "description": rng.choice(ONE_OFF), "category": "other",
                    "minor": int(round(usual * rng.uniform(1.0, 2.0)))})
                labels.append(("bill_anomaly", {}, True))
            elif plant == "new_fee":
                seen = used_fees.setdefault(a, set())
                desc = rng.choice([f for f in NEW_FEES if f not in seen])
                seen.add(desc)
                items.insert(len(items) - (1 if a.tax else 0), {
                    "description": desc, "category": "fee",
                    "minor": rng.randint(5, 25) * 100})
                labels.append(("new_fee", {"description": desc}, True))
            elif plant == "duplicate_line":
                cand = [i for i in items if i["category"] in ("usage", "fee", "other")
                        and i["minor"] > 0]
                it = dict(rng.choice(cand))
                items.insert(items.index(next(i for i in items
                    if i["description"] == it["description"])) + 1, it)
                items = a.add_tax(items)
                labels.append(("duplicate_charge",
                               {"description": it["description"]}, True))
            elif plant == "duplicate_bill":
                dup_bill = True
            elif plant == "duplicate_payment":
                dup_pay = True
            # a planted change's consequences: every line it changed may
            # fairly be called a spike; a bill it made larger, an anomaly
            if plant and plant not in ("duplicate_bill", "duplicate_payment"):
                before = {}
                for i in clean_items:
                    before[i["description"]] = max(before.get(i["description"],
                                                             i["minor"]), i["minor"])
                after = {}
                for i in items:
                    after[i["description"]] = max(after.get(i["description"],
                                                            i["minor"]), i["minor"])
                for d, m in after.items():
                    if d in before and m > before[d] and not any(
                            t == "line_item_spike" and h.get("description") == d
                            for t, h, _ in labels):
                        labels.append(("line_item_spike", {"description": d},
                                       False))
                if sum(i["minor"] for i in items) > sum(
                        i["minor"] for i in clean_items) and not any(
                        t == "bill_anomaly" for t, _, _ in labels):
                    labels.append(("bill_anomaly", {}, False))
            charges = sum(i["minor"] for i in items)
            due = st + datetime.timedelta(days=a.due_after)
            pend = st + datetime.timedelta(days=2)
            period_end = st - datetime.timedelta(days=2)
            b = {"id": bid, "account_id": a.account_id, "biller_id": a.biller_id,
                 "biller_name": a.biller_name, "currency": "USD",
                 "statement_date": iso(st), "due_date": iso(due),
                 "period_end": iso(period_end), "total_minor": charges,
                 "charges_minor": charges, "paid_at": None, "items": items,
                 "usage": usage}
            # paying: most early, some late, some in the last days, a few never
            r = rng.random()
            if r < 0.85:
                pd = st + datetime.timedelta(days=rng.randint(
                    1, max(1, a.due_after - 5)))
            elif r < 0.90:
                pd = due + datetime.timedelta(days=rng.randint(-2, 0))
            elif r < 0.98:
                pd = due + datetime.timedelta(days=rng.randint(1, 12))
            else:
                pd = None
            if pd is not None and pd <= today:
                b["paid_at"] = iso(pd)
                p = {"account_id": a.account_id,
                     "bill_id": bid if rng.random() < 0.9 else None,
                     "minor": charges, "currency": "USD", "day": iso(pd)}
                pay_seq.append((pd, len(pay_seq), p))
                if dup_pay:
                    qd = pd + datetime.timedelta(days=rng.randint(0, 5))
                    if qd <= today:
                        q = dict(p)
                        q["day"] = iso(qd)
                        q["bill_id"] = bid if rng.random() < 0.5 else None
                        pay_seq.append((qd, len(pay_seq), q))
                        q["_pair"] = p
            bills.append(b)
            for t, h, e in labels:
                truth.append({"type": t, "bill_id": bid, "subject_hint": h,
                              "expected": e, "planted": plant})
            if dup_bill:
                st2 = st + datetime.timedelta(days=rng.randint(0, 5))
                if st2 <= today:
                    nb += 1
                    b2 = json.loads(json.dumps(b))
                    b2["id"] = "%s-%02d" % (a.account_id, nb)
                    b2["statement_date"] = iso(st2)
                    b2["due_date"] = iso(st2 + datetime.timedelta(days=a.due_after))
                    b2["paid_at"] = None	# the user pays the bill once
                    bills.append(b2)
                    truth.append({"type": "duplicate_charge", "bill_id": b2["id"],
                                  "subject_hint": {"bills": [bid, b2["id"]]},
                                  "expected": True, "planted": plant})

    # payment ids in the order they were taken
    pay_seq.sort(key=lambda x: (x[0], x[1]))
    for n, (_, _, p) in enumerate(pay_seq, 1):
        p["id"] = "%s-p%03d" % (user, n)
    for _, _, p in pay_seq:
        pair = p.pop("_pair", None)
        if pair is not None:
            truth.append({"type": "duplicate_charge", "bill_id": p["bill_id"],
                          "subject_hint": {"payments": [pair["id"], p["id"]]},
                          "expected": True, "planted": "duplicate_payment"})
        payments.append(p)

    # natural insights: the first bill of each biller; every bill still
    # unpaid three days before its due date (on or before today)
    bills.sort(key=lambda b: (b["statement_date"], b["id"]))
    firsts = {}
    for b in bills:
        firsts.setdefault(b["biller_id"], b)
    for bid_, b in sorted(firsts.items(), key=lambda x: (x[1]["statement_date"],
                                                          x[1]["id"])):
        truth.append({"type": "new_biller", "bill_id": b["id"],
                      "subject_hint": {"biller_id": bid_}, "expected": True,
                      "planted": "natural"})
    for b in bills:
        d3 = datetime.date.fromisoformat(b["due_date"]) - datetime.timedelta(days=3)
        if d3 > today:
            continue
        if b["paid_at"] is None or b["paid_at"] > iso(d3):
            truth.append({"type": "overdue_risk", "bill_id": b["id"],
                          "subject_hint": {}, "expected": True,
                          "planted": "natural"})

    return {"user": user, "today": iso(today), "clean": clean,
            "accounts": [{"account_id": a.account_id, "biller_id": a.biller_id,
                          "biller_name": a.biller_name, "kind": a.kind}
                         for a in accounts],
            "bills": bills, "payments": payments, "truth": truth}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=2000)
    ap.add_argument("--months", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="-")
    o = ap.parse_args()
    out = sys.stdout if o.out == "-" else open(o.out, "w", encoding="utf-8")
    for i in range(1, o.users + 1):
        rng = random.Random("insights-gen:%d:%d" % (o.seed, i))
        out.write(json.dumps(gen_user(rng, i, o.months), sort_keys=True,
                             separators=(",", ":")) + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
