#!/usr/bin/python3
"""fresh.py: a third, independent corpus of invented bills with ground truth.

Written apart from gen.py and holdout.py (from the ground-truth format in
README.md only), with its own layouts; never used for tuning (FRESH.md).

    t/corpus/fresh.py --out DIR [--seed N] [--count N]

Writes DIR/<name>.<pdf|png|jpg>, DIR/<name>.json and DIR/index.json.
Document i depends only on the seed and i.
"""
import argparse
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

from PIL import Image, ImageChops, ImageFilter
from reportlab.lib.pagesizes import A4, letter, landscape
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas as rlcanvas

GENERATOR = "fresh.py"
DEJAVU = "/usr/share/fonts/truetype/dejavu/"

FONTS = {
    "helvetica": ("Helvetica", "Helvetica-Bold"),
    "times": ("Times-Roman", "Times-Bold"),
    "courier": ("Courier", "Courier-Bold"),
    "dejavu_sans": ("FrDejaVuSans", "FrDejaVuSans-Bold"),
    "dejavu_serif": ("FrDejaVuSerif", "FrDejaVuSerif-Bold"),
}


def register_fonts():
    for name, fn in (("FrDejaVuSans", "DejaVuSans.ttf"),
                     ("FrDejaVuSans-Bold", "DejaVuSans-Bold.ttf"),
                     ("FrDejaVuSerif", "DejaVuSerif.ttf"),
                     ("FrDejaVuSerif-Bold", "DejaVuSerif-Bold.ttf")):
        pdfmetrics.registerFont(TTFont(name, DEJAVU + fn))


# ---------------------------------------------------------------- values

MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]
AP_MON = ["Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.",
          "Sept.", "Oct.", "Nov.", "Dec."]


def ordinal(n):
    if 10 <= n % 100 <= 20:
        return "%dth" % n
    return "%d%s" % (n, {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th"))


def fdate(d, style):
    if style == "mdy2":
        return d.strftime("%m/%d/%y")
    if style == "mdy4":
        return d.strftime("%m/%d/%Y")
    if style == "dmy4":
        return d.strftime("%d/%m/%Y")
    if style == "iso":
        return d.isoformat()
    if style == "ordinal":
        return "%s %s %d" % (ordinal(d.day), MONTHS[d.month - 1], d.year)
    if style == "ap":
        return "%s %d, %d" % (AP_MON[d.month - 1], d.day, d.year)
    if style == "d_mon_y":
        return "%d %s %d" % (d.day, MONTHS[d.month - 1][:3], d.year)
    raise ValueError(style)


def group(n, sep):
    s = str(n)
    out = []
    while len(s) > 3:
        out.insert(0, s[-3:])
        s = s[:-3]
    out.insert(0, s)
    return sep.join(out)


def num(cents, style):
    """A bare number: 1,234.56 or 1 234,56."""
    a = abs(cents)
    if style.startswith("fr"):
        return "%s,%02d" % (group(a // 100, " "), a % 100)
    return "%s.%02d" % (group(a // 100, ","), a % 100)


def money(cents, style, neg="minus"):
    """style: usd ($), gbp (£), eur_fr (1 234,56 €), eur_code (1 234,56 EUR)."""
    body = num(cents, style)
    if style == "fr_eur":
        s = body + " \u20ac"
    elif style == "fr_code":
        s = body + " EUR"
    elif style == "gbp":
        s = "\u00a3" + body
    else:
        s = "$" + body
    if cents < 0:
        if neg == "cr":
            s = s + " CR"
        elif neg == "paren":
            s = "(" + s + ")"
        else:
            s = "-" + s
    return s


def dec(cents):
    sign = "-" if cents < 0 else ""
    return "%s%d.%02d" % (sign, abs(cents) // 100, abs(cents) % 100)


def amt(cents, cur):
    return {"value": dec(cents), "currency": cur}


FIRST = ["Aroha", "James", "Priya", "Liam", "Sophie", "Mateo", "Chloe",
         "Noah", "Hannah", "Wiremu", "Olivia", "Ethan", "Amelie", "Lucas",
         "Grace", "Owen", "Isla", "Marcus", "Nadia", "Theo"]
LAST = ["Walker", "Ngata", "Okafor", "Dubois", "Kowalski", "Brennan",
        "Lefebvre", "MacLeod", "Patel", "Thompson", "Moreau", "Hughes",
        "Fraser", "Tanaka", "Ramirez", "O'Connell", "Singh", "Martin"]
STREETS = ["Kauri", "Maple", "Station", "Birch", "Harbour", "Mill", "Orchard",
           "Church", "Rue des Lilas", "Cedar", "Victoria", "Willow", "Ridge"]


def person(rng):
    return "%s %s" % (rng.choice(FIRST), rng.choice(LAST))


def street(rng):
    s = rng.choice(STREETS)
    if s.startswith("Rue"):
        return "%d %s" % (rng.randint(2, 140), s)
    return "%d %s %s" % (rng.randint(2, 2400), s,
                         rng.choice(["Road", "Street", "Lane", "Avenue", "Drive"]))


def split_total(rng, total, n):
    """n positive parts summing to total (cents)."""
    cuts = sorted(rng.sample(range(1, total), n - 1))
    parts, prev = [], 0
    for c in cuts + [total]:
        parts.append(c - prev)
        prev = c
    return parts


def balances(rng, current, lo=1500, hi=40000):
    """previous balance, payments received; total = prev - pay + current > 0."""
    r = rng.random()
    prev = rng.randint(lo, hi)
    if r < 0.42:
        pay = prev                      # paid in full
    elif r < 0.66:
        pay = rng.randint(lo // 3, prev - 100)   # part paid
    elif r < 0.82:
        pay = 0                         # unpaid
    elif r < 0.92:
        prev, pay = 0, 0                # first bill
    else:
        pay = prev + rng.randint(100, max(200, current // 2))  # overpaid
    if prev - pay + current <= 0:
        pay = prev
    return prev, pay


# ---------------------------------------------------------------- drawing

class Doc:
    """One bill: its canvas, fonts and ground truth."""

    def __init__(self, path, pagesize, font, rng):
        self.c = rlcanvas.Canvas(path, pagesize=pagesize, invariant=1,
                                 pageCompression=1)
        self.w, self.h = pagesize
        self.f, self.fb = FONTS[font]
        self.rng = rng
        self.pages = 1

    def t(self, x, y, s, size=9, bold=False, align="l"):
        self.c.setFont(self.fb if bold else self.f, size)
        if align == "r":
            self.c.drawRightString(x, y, s)
        elif align == "c":
            self.c.drawCentredString(x, y, s)
        else:
            self.c.drawString(x, y, s)

    def box(self, x, y, w, h, fill=None, lw=0.8):
        self.c.setLineWidth(lw)
        if fill is not None:
            self.c.setFillGray(fill)
            self.c.rect(x, y, w, h, stroke=1, fill=1)
            self.c.setFillGray(0)
        else:
            self.c.rect(x, y, w, h, stroke=1, fill=0)

    def line(self, x0, y0, x1, y1, lw=0.5, dash=None):
        self.c.setLineWidth(lw)
        if dash:
            self.c.setDash(*dash)
        self.c.line(x0, y0, x1, y1)
        if dash:
            self.c.setDash()

    def para(self, x, y, lines, size=8, lead=10.5):
        for s in lines:
            self.t(x, y, s, size)
            y -= lead
        return y

    def newpage(self):
        self.c.showPage()
        self.pages += 1

    def save(self):
        self.c.showPage()
        self.c.save()


def truth_base(layout, locale, cur, date_style, number_style):
    return {"layout": layout, "locale": locale, "currency": cur,
            "date_style": date_style, "number_style": number_style,
            "trap": None, "remit_to_address": None, "payment_url": None,
            "bill_number": None}


def finish_truth(T, prev, pay, items, cur, due, stmt, period):
    current = sum(a for _, a, _ in items)
    T["previous_balance"] = amt(prev, cur)
    T["payments_received"] = amt(pay, cur)
    T["current_charges"] = amt(current, cur)
    T["total_amount"] = amt(prev - pay + current, cur)
    T["line_items"] = [{"description": d, "amount": amt(a, cur), "category": k}
                       for d, a, k in items]
    T["due_date_iso"] = due.isoformat()
    T["statement_date"] = stmt.isoformat()
    T["service_period"] = ({"start_date": period[0].isoformat(),
                            "end_date": period[1].isoformat()}
                           if period else None)
    return prev - pay + current


def remit(lines):
    return {"lines": list(lines), "text": ", ".join(lines)}


def base_dates(rng):
    stmt = dt.date(2026, 1, 1) + dt.timedelta(days=rng.randint(0, 360))
    return stmt


# ---------------------------------------------------------------- layouts

def lay_hydro_landscape(path, rng, font, image_page):
    """Landscape power bill, three panels (New Zealand or Canada)."""
    locale = rng.choice(["NZ", "CA"])
    if locale == "NZ":
        cur, ds = "NZD", rng.choice(["ordinal", "dmy4"])
        payee = rng.choice(["Tui Power Limited", "Southern Lakes Energy",
                            "Kahikatea Electric Ltd"])
    else:
        cur, ds = "CAD", rng.choice(["ap", "iso"])
        payee = rng.choice(["Fraser Valley Hydro", "Northshore Hydro-Electric",
                            "Laurentian Power Corp."])
    T = truth_base("fr_hydro_landscape", locale, cur, ds, "usd_comma_dot")
    T["payee_name"] = payee
    stmt = base_dates(rng)
    end = stmt - dt.timedelta(days=rng.randint(1, 4))
    start = end - dt.timedelta(days=rng.choice([29, 30, 31, 32]) - 1)
    days = (end - start).days + 1
    due = stmt + dt.timedelta(days=rng.choice([14, 18, 20, 21]))
    acct = "%d %03d %03d" % (rng.randint(1000, 9999), rng.randint(0, 999),
                             rng.randint(0, 999))
    inv = "%s%07d" % (rng.choice(["INV", "B"]), rng.randint(0, 9999999))
    T["account_number"], T["bill_number"] = acct, inv
    items = []
    if locale == "NZ":
        daily = rng.choice([30, 60, 99, 120, 165])
        items.append(("Daily fixed charge %d days @ $%.4f" % (days, daily / 100),
                      days * daily, "fee"))
        kwh1 = rng.randint(180, 900)
        r1 = rng.choice([2650, 2840, 3012, 3290])
        items.append(("Anytime %d kWh @ %.2fc" % (kwh1, r1 / 100),
                      round(kwh1 * r1 / 100), "usage"))
        if rng.random() < 0.6:
            kwh2 = rng.randint(60, 300)
            r2 = rng.choice([1520, 1680, 1810])
            items.append(("Night %d kWh @ %.2fc" % (kwh2, r2 / 100),
                          round(kwh2 * r2 / 100), "usage"))
        items.append(("Electricity Authority levy", rng.randint(40, 140), "fee"))
        if rng.random() < 0.3:
            items.append(("Loyalty credit", -rng.choice([500, 1000, 1500]),
                          "credit"))
        pre = sum(a for _, a, _ in items)
        items.append(("GST 15%", round(pre * 0.15), "tax"))
    else:
        items.append(("Basic charge %d days" % days, days * rng.choice([21, 25, 29]),
                      "fee"))
        k1 = rng.randint(400, 1350)
        items.append(("Energy Step 1 %d kWh @ $0.%04d" % (k1, 1050),
                      round(k1 * 10.5), "usage"))
        if rng.random() < 0.5:
            k2 = rng.randint(50, 500)
            items.append(("Energy Step 2 %d kWh @ $0.%04d" % (k2, 1580),
                          round(k2 * 15.8), "usage"))
        items.append(("Delivery charge", rng.randint(1500, 4500), "fee"))
        items.append(("Regulatory charge", rng.randint(80, 400), "fee"))
        pre = sum(a for _, a, _ in items)
        tax = rng.choice([("GST 5%", 0.05), ("HST 13%", 0.13)])
        items.append((tax[0], round(pre * tax[1]), "tax"))
    current = sum(a for _, a, _ in items)
    prev, pay = balances(rng, current)
    total = finish_truth(T, prev, pay, items, cur, due, stmt, (start, end))
    neg = rng.choice(["minus", "cr"])
    M = lambda c: money(c, "usd", neg)  # noqa: E731
    d = Doc(path, landscape(A4), font, rng)
    W, H = d.w, d.h
    # left panel
    d.t(36, H - 58, payee, 17, True)
    d.t(36, H - 76, "Tax invoice" if locale == "NZ" else "Electricity statement", 11)
    d.t(36, H - 90, ("GST no. %d-%03d-%03d" % (rng.randint(10, 130), rng.randint(0, 999),
                                               rng.randint(0, 999)))
        if locale == "NZ" else
        "GST/HST Reg. %05d %04d RT0001" % (rng.randint(0, 99999), rng.randint(0, 9999)), 8)
    y = H - 130
    cust = person(rng)
    for s in (cust, street(rng),
              rng.choice(["Rotorua 3010", "Nelson 7011", "Timaru 7910"])
              if locale == "NZ" else rng.choice(["Abbotsford BC  V2S 4N1",
                                                  "Kamloops BC  V2C 1E3",
                                                  "Sudbury ON  P3E 2C6"])):
        d.t(36, y, s, 10)
        y -= 13
    y -= 18
    rows = [("Account no.", acct), ("Invoice no.", inv),
            ("Invoice date" if locale == "NZ" else "Statement date", fdate(stmt, ds))]
    if locale == "NZ":
        rows.append(("ICP", "%010dNR%s" % (rng.randint(0, 9999999999),
                                          rng.choice(["4A5", "7C2", "E91"]))))
        bank = "02-%04d-%07d-00" % (rng.randint(0, 9999), rng.randint(0, 9999999))
    else:
        rows.append(("Premise ID", "%07d" % rng.randint(0, 9999999)))
        bank = None
    rows.append(("Meter no.", "%s%06d" % (rng.choice(["M", "E", "K"]),
                                         rng.randint(0, 999999))))
    for k, v in rows:
        d.t(36, y, k, 9)
        d.t(130, y, v, 9, True)
        y -= 14
    y -= 14
    d.t(36, y, "Questions? Call us on %s" % (
        "0800 %03d %03d" % (rng.randint(0, 999), rng.randint(0, 999))
        if locale == "NZ" else "1-877-%03d-%04d" % (rng.randint(0, 999),
                                                     rng.randint(0, 9999))), 8)
    # middle panel: charges
    mx = 300
    d.line(mx - 12, 60, mx - 12, H - 40, 0.6)
    d.t(mx, H - 58, "Your electricity charges", 12, True)
    d.t(mx, H - 73, "for %s to %s" % (fdate(start, ds), fdate(end, ds)), 9)
    y = H - 100
    for desc, a, _ in items:
        d.t(mx, y, desc, 9)
        d.t(mx + 262, y, M(a), 9, align="r")
        y -= 15
    d.line(mx, y + 8, mx + 262, y + 8)
    y -= 6
    d.t(mx, y, "Total current charges", 9.5, True)
    d.t(mx + 262, y, M(current), 9.5, True, "r")
    y -= 34
    avg = round(current / days)
    d.t(mx, y, "Average daily cost this period: %s" % M(avg), 8)
    y -= 12
    d.t(mx, y, "Average daily use: %.1f kWh" % (rng.randint(80, 400) / 10), 8)
    if rng.random() < 0.5:
        T["trap"] = "estimate"
        y -= 12
        est = current + rng.randint(-3000, 6000)
        d.t(mx, y, "Your next bill is estimated at %s" % M(max(est, 2000)), 8)
    # right panel: summary
    rx = 590
    d.line(rx - 12, 60, rx - 12, H - 40, 0.6)
    d.box(rx, H - 250, 216, 200)
    d.t(rx + 10, H - 70, "Account summary", 11, True)
    y = H - 95
    srows = [("Previous balance" if locale == "CA" else "Opening balance", M(prev)),
             ("Payment received - thank you", M(-pay)),
             ("This bill's charges", M(current))]
    for k, v in srows:
        d.t(rx + 10, y, k, 9)
        d.t(rx + 206, y, v, 9, align="r")
        y -= 16
    d.box(rx + 6, H - 240, 204, 64, fill=0.88)
    d.t(rx + 14, H - 196, "Total due", 11, True)
    d.t(rx + 202, H - 196, M(total), 14, True, "r")
    d.t(rx + 14, H - 222, "Due date", 10, True)
    d.t(rx + 202, H - 222, fdate(due, ds), 10, True, "r")
    y = H - 280
    if locale == "NZ":
        url = "https://my.%s.co.nz/pay" % payee.split()[0].lower()
        lines = ["How to pay", "Online: %s" % url,
                 "Internet banking to %s" % bank,
                 "Reference: your account number"]
        T["payment_url"] = url
        d.para(rx, y, lines, 8.5, 12)
    else:
        rl = [payee, "PO Box %d Stn Terminal" % rng.randint(1000, 9999),
              rng.choice(["Vancouver BC  V6B 4G3", "Toronto ON  M5W 1P9"])]
        d.t(rx, y, "Remit payments to:", 8.5, True)
        d.para(rx, y - 12, rl, 8.5, 11)
        T["remit_to_address"] = remit(rl)
        T["currency_note"] = True
        d.t(rx, y - 60, "All amounts are in Canadian dollars (CAD).", 7.5)
        if rng.random() < 0.6:
            url = "https://www.%s.ca/billpay" % payee.split()[0].lower()
            d.t(rx, y - 74, "Pay online: %s" % url, 7.5)
            T["payment_url"] = url
    d.save()
    return T, d.pages


def lay_municipal_quarterly(path, rng, font, image_page):
    """US city trash / sewer bill billed by quarter, with a return stub."""
    cur, ds = "USD", rng.choice(["mdy2", "mdy2", "mdy4"])
    town = rng.choice(["Harlow Springs", "Brenton Lake", "Ashmere", "Quarry Hill"])
    kind = rng.choice(["City of", "Village of", "Town of"])
    payee = "%s %s" % (kind, town)
    T = truth_base("fr_municipal_quarterly", "US", cur, ds, "usd_comma_dot")
    T["payee_name"] = payee.upper() if rng.random() < 0.5 else payee
    q = rng.randint(0, 3)
    start = dt.date(2026, 1 + 3 * q, 1)
    end = (dt.date(2026, 4 + 3 * q, 1) if q < 3 else dt.date(2027, 1, 1)) - dt.timedelta(days=1)
    stmt = end + dt.timedelta(days=rng.randint(3, 12))
    due = stmt + dt.timedelta(days=rng.choice([20, 25, 30]))
    acct = "%03d-%04d-%02d" % (rng.randint(0, 999), rng.randint(0, 9999), rng.randint(0, 99))
    T["account_number"] = acct
    if rng.random() < 0.5:
        T["bill_number"] = "%07d" % rng.randint(0, 9999999)
    kgal = rng.randint(9, 40)
    rate = rng.choice([412, 455, 538])
    items = [("SEWER BASE CHARGE (QTR)", rng.choice([3600, 4250, 4875]), "fee"),
             ("SEWER USAGE %d KGAL @ $%.2f" % (kgal, rate / 100), kgal * rate, "usage"),
             ("REFUSE %d GAL CART" % rng.choice([64, 96]), rng.choice([5400, 6150, 7290]), "fee"),
             ("RECYCLING", rng.choice([1200, 1500, 1875]), "fee")]
    if rng.random() < 0.5:
        items.append(("YARD WASTE (SEASONAL)", rng.choice([1800, 2400]), "fee"))
    items.append(("STORMWATER UTILITY FEE", rng.choice([1650, 2100, 2430]), "fee"))
    if rng.random() < 0.3:
        items.append(("LATE PENALTY PRIOR QTR", rng.choice([500, 1000, 1250]), "fee"))
    if rng.random() < 0.25:
        items.append(("SENIOR DISCOUNT", -rng.choice([1000, 1500]), "credit"))
    current = sum(a for _, a, _ in items)
    prev, pay = balances(rng, current, 5000, 30000)
    total = finish_truth(T, prev, pay, items, cur, due, stmt, (start, end))
    neg = rng.choice(["minus", "paren"])
    M = lambda c: money(c, "usd", neg)  # noqa: E731
    d = Doc(path, letter, font, rng)
    W, H = d.w, d.h
    d.t(W / 2, H - 50, T["payee_name"], 16, True, "c")
    d.t(W / 2, H - 66, "Utility Billing Division", 10, align="c")
    d.t(W / 2, H - 80, "SOLID WASTE & SEWER QUARTERLY STATEMENT", 10, True, "c")
    # account grid
    d.box(36, H - 190, 300, 96)
    rows = [("Account No.", acct), ("Customer No.", "%06d" % rng.randint(0, 999999)),
            ("Service Address", street(rng).upper()),
            ("Parcel ID", "%02d-%02d-%03d-%03d" % (rng.randint(0, 99), rng.randint(0, 99),
                                                  rng.randint(0, 999), rng.randint(0, 999)))]
    if T["bill_number"]:
        rows.append(("Bill No.", T["bill_number"]))
    y = H - 110
    for k, v in rows:
        d.t(44, y, k, 8.5)
        d.t(140, y, v, 8.5, True)
        y -= 15 if len(rows) == 5 else 18
    d.box(356, H - 190, 220, 96)
    y = H - 110
    for k, v in (("Billing Date", fdate(stmt, ds)),
                 ("Service Period", "%s - %s" % (fdate(start, ds), fdate(end, ds))),
                 ("Due Date", fdate(due, ds))):
        d.t(364, y, k, 8.5)
        d.t(568, y, v, 8.5, True, "r")
        y -= 18
    d.t(364, y - 4, "Amount Due", 10, True)
    d.t(568, y - 4, M(total), 12, True, "r")
    # charges
    y = H - 220
    d.box(36, y - 4, 540, 16, fill=0.85)
    d.t(44, y, "CURRENT CHARGES", 9, True)
    d.t(568, y, "AMOUNT", 9, True, "r")
    y -= 20
    for desc, a, _ in items:
        d.t(44, y, desc, 9)
        d.t(568, y, M(a), 9, align="r")
        y -= 15
    d.line(440, y + 9, 576, y + 9)
    d.t(44, y - 2, "TOTAL CURRENT CHARGES", 9, True)
    d.t(568, y - 2, M(current), 9, True, "r")
    y -= 36
    d.t(44, y, "ACCOUNT SUMMARY", 9, True)
    y -= 16
    for k, v in (("Previous Balance", prev), ("Payments Received - Thank You", -pay),
                 ("Current Charges", current)):
        d.t(44, y, k, 9)
        d.t(300, y, M(v), 9, align="r")
        y -= 14
    d.t(44, y, "Amount Due", 9.5, True)
    d.t(300, y, M(total), 9.5, True, "r")
    y -= 26
    if rng.random() < 0.6:
        T["trap"] = "penalty_amount"
        late = total + round(current * 0.10)
        d.t(44, y, "A 10%% penalty is added to current charges not paid by the due date.", 8)
        d.t(44, y - 11, "If paid after %s, pay: %s" % (fdate(due, ds), M(late)), 8)
    y -= 30
    d.t(44, y, "Consumption history (KGAL):  %s" % "  ".join(
        str(rng.randint(8, 40)) for _ in range(4)), 8)
    # stub
    sy = 190
    d.line(36, sy, 576, sy, 0.6, (4, 3))
    d.t(W / 2, sy - 12, "Please detach and return this portion with your payment", 7.5,
        align="c")
    rl = ["%s Utility Billing" % payee, "PO Box %d" % rng.randint(100, 9999),
          "%s, %s %05d-%04d" % (town, rng.choice(["MN", "OH", "WI", "PA"]),
                               rng.randint(10000, 99999), rng.randint(0, 9999))]
    d.t(44, sy - 40, "Make checks payable to:", 8)
    d.para(44, sy - 54, rl, 9.5, 12)
    T["remit_to_address"] = remit(rl)
    d.box(356, sy - 120, 220, 92)
    y = sy - 44
    for k, v in (("Account No.", acct), ("Due Date", fdate(due, ds)),
                 ("Amount Due", M(total)), ("Amount Paid", "$__________")):
        d.t(364, y, k, 9)
        d.t(568, y, v, 9, True, "r")
        y -= 20
    if rng.random() < 0.5:
        url = "https://www.%s.gov/utilitypay" % town.replace(" ", "").lower()
        d.t(44, sy - 110, "Pay online: %s" % url, 8)
        T["payment_url"] = url
    d.save()
    return T, d.pages


def lay_uk_broadband(path, rng, font, image_page):
    """UK broadband and phone bill paid by Direct Debit."""
    cur, ds = "GBP", "ordinal"
    payee = rng.choice(["Nettle Fibre Ltd", "Skylark Broadband", "Hedgerow Telecom"])
    T = truth_base("fr_uk_broadband", "UK", cur, ds, "gbp_comma_dot")
    T["payee_name"] = payee
    stmt = base_dates(rng)
    end = stmt - dt.timedelta(days=rng.randint(0, 2))
    start = end - dt.timedelta(days=rng.choice([29, 30]))
    due = stmt + dt.timedelta(days=rng.choice([10, 12, 14]))
    acct = rng.choice(["%04d %04d %02d", "%04d%04d%02d"]) % (
        rng.randint(0, 9999), rng.randint(0, 9999), rng.randint(0, 99))
    bill = "B%010d" % rng.randint(0, 9999999999)
    T["account_number"], T["bill_number"] = acct, bill
    mb = rng.choice([150, 500, 900])
    items = [("Full Fibre %d - monthly charge" % mb, rng.choice([2800, 3200, 3999, 4500]), "fee")]
    if rng.random() < 0.6:
        items.append(("Home Phone line", rng.choice([800, 1050]), "fee"))
        mins = rng.randint(5, 120)
        items.append(("Calls to mobiles %d mins" % mins, mins * 14, "usage"))
    if rng.random() < 0.4:
        items.append(("Router delivery", rng.choice([499, 750]), "fee"))
    if rng.random() < 0.5:
        items.append(("Loyalty discount", -rng.choice([300, 500, 750]), "credit"))
    current = sum(a for _, a, _ in items)
    prev, pay = balances(rng, current, 2500, 6000)
    if rng.random() < 0.7:
        prev = pay = rng.randint(2500, 6000)
    total = finish_truth(T, prev, pay, items, cur, due, stmt, (start, end))
    M = lambda c: money(c, "gbp", "minus")  # noqa: E731
    d = Doc(path, A4, font, rng)
    W, H = d.w, d.h
    d.t(40, H - 60, payee, 20, True)
    d.t(40, H - 78, "Your bill", 13)
    d.t(40, H - 130, person(rng), 10)
    d.t(40, H - 143, street(rng), 10)
    d.t(40, H - 156, rng.choice(["Leeds LS6 2AB", "Bristol BS3 4QT", "Norwich NR2 1XX"]), 10)
    x = 360
    y = H - 100
    for k, v in (("Bill date", fdate(stmt, ds)), ("Account number", acct),
                 ("Bill number", bill),
                 ("Phone number", "01632 %06d" % rng.randint(0, 999999))):
        d.t(x, y, k, 9)
        d.t(W - 40, y, v, 9, True, "r")
        y -= 14
    # total panel
    d.box(40, H - 290, W - 80, 96, fill=0.92)
    d.t(56, H - 225, "Total to pay", 14, True)
    d.t(W - 56, H - 225, M(total), 22, True, "r")
    d.t(56, H - 252, "Direct Debit will be taken on or just after %s" % fdate(due, ds), 10)
    d.t(56, H - 266, "from your bank account ending %04d." % rng.randint(0, 9999), 10)
    d.t(56, H - 281, "Bill period: %s to %s" % (fdate(start, "d_mon_y"),
                                                fdate(end, "d_mon_y")), 8.5)
    T["date_style"] = "ordinal+d_mon_y"
    y = H - 320
    d.t(40, y, "Your bill at a glance", 12, True)
    y -= 20
    for k, v in (("Your last bill", prev),
                 ("Payment received %s - thank you" % fdate(stmt - dt.timedelta(
                     days=rng.randint(12, 20)), "d_mon_y"), -pay),
                 ("This bill's charges", current)):
        d.t(52, y, k, 10)
        d.t(W - 52, y, M(v), 10, align="r")
        y -= 16
    d.line(52, y + 10, W - 52, y + 10)
    d.t(52, y - 2, "Total to pay", 10, True)
    d.t(W - 52, y - 2, M(total), 10, True, "r")
    y -= 40
    d.t(40, y, "What you're paying for", 12, True)
    y -= 20
    for desc, a, _ in items:
        d.t(52, y, desc, 9.5)
        d.t(W - 52, y, M(a), 9.5, align="r")
        y -= 15
    d.line(52, y + 9, W - 52, y + 9)
    d.t(52, y - 3, "This bill's charges", 9.5, True)
    d.t(W - 52, y - 3, M(current), 9.5, True, "r")
    y -= 24
    vat = round(current - current / 1.2)
    d.t(52, y, "All charges include VAT at 20%%. VAT included: %s. VAT reg. no. GB %09d" %
        (M(vat), rng.randint(0, 999999999)), 8)
    y -= 30
    if rng.random() < 0.6:
        T["trap"] = "price_rise"
        new = items[0][1] + rng.choice([300, 350, 400])
        d.t(40, y, "Price change: from 1st April 2027 your monthly price will rise by %s to %s."
            % (M(new - items[0][1]), M(new)), 8.5)
        y -= 14
    if rng.random() < 0.6:
        url = "https://www.%s.co.uk/mybill" % payee.split()[0].lower()
        d.t(40, y, "See your bill online at %s" % url, 8.5)
        T["payment_url"] = url
    d.t(40, 50, "%s, registered in England and Wales no. %08d." % (payee, rng.randint(0, 99999999)), 7)
    d.save()
    return T, d.pages


def lay_fr_electricity(path, rng, font, image_page):
    """French-style electricity bill in English: HT / TVA / TTC table."""
    cur = "EUR"
    ds = "dmy4"
    payee = rng.choice(["Volta \u00c9nergies", "Helio Power France",
                        "\u00c9nergie Vall\u00e9e SAS"])
    nstyle = rng.choice(["fr_eur", "fr_code"])
    T = truth_base("fr_fr_electricity", "EU", cur, ds, "space_thousands_comma_decimal")
    T["payee_name"] = payee
    stmt = base_dates(rng)
    end = stmt - dt.timedelta(days=rng.randint(2, 8))
    start = end - dt.timedelta(days=rng.choice([29, 30, 60]))
    due = stmt + dt.timedelta(days=rng.choice([14, 15]))
    acct = "%d-%s%06d" % (rng.randint(1, 9), rng.choice(["AB", "KX", "LM"]), rng.randint(0, 999999))
    inv = "F%d-%07d" % (2026, rng.randint(0, 9999999))
    T["account_number"], T["bill_number"] = acct, inv
    rows = []   # (description, qty, unit, ht, rate)
    rows.append(("Subscription (abonnement) %d kVA" % rng.choice([6, 9, 12]), "1", "",
                 rng.choice([1234, 1588, 1912]), 0.20))
    hp = rng.randint(150, 700)
    rows.append(("Consumption peak hours (HP)", "%d kWh" % hp, "0,2068", round(hp * 20.68), 0.20))
    if rng.random() < 0.6:
        hc = rng.randint(80, 400)
        rows.append(("Consumption off-peak hours (HC)", "%d kWh" % hc, "0,1615",
                     round(hc * 16.15), 0.20))
    rows.append(("CTA (transport contribution)", "", "", rng.randint(200, 600), 0.20))
    kwh = hp
    rows.append(("Excise on electricity (accise)", "%d kWh" % kwh, "0,0337", round(kwh * 3.37), 0.20))
    items = []
    tab = []
    for desc, q, u, ht, r in rows:
        tva = round(ht * r)
        tab.append((desc, q, u, ht, "%d %%" % round(r * 100), tva, ht + tva))
        cat = "usage" if "Consumption" in desc else ("tax" if "Excise" in desc or "CTA" in desc else "fee")
        items.append((desc, ht + tva, cat))
    current = sum(a for _, a, _ in items)
    prev, pay = balances(rng, current, 3000, 25000)
    total = finish_truth(T, prev, pay, items, cur, due, stmt, (start, end))
    M = lambda c: money(c, nstyle, "minus")  # noqa: E731
    N = lambda c: num(c, "fr")  # noqa: E731
    d = Doc(path, A4, font, rng)
    W, H = d.w, d.h
    d.t(40, H - 56, payee, 18, True)
    d.t(40, H - 72, "Electricity invoice / Facture d'\u00e9lectricit\u00e9", 10)
    d.t(40, H - 86, "SIREN %03d %03d %03d - VAT no. FR%02d%09d" % (
        rng.randint(0, 999), rng.randint(0, 999), rng.randint(0, 999),
        rng.randint(0, 99), rng.randint(0, 999999999)), 7.5)
    y = H - 120
    for k, v in (("Invoice no.", inv), ("Invoice date", fdate(stmt, ds)),
                 ("Customer reference", acct),
                 ("Contract no.", "%010d" % rng.randint(0, 9999999999)),
                 ("PDL (delivery point)", "%014d" % rng.randint(0, 99999999999999))):
        d.t(40, y, k, 9)
        d.t(160, y, v, 9, True)
        y -= 14
    d.t(360, H - 120, person(rng), 10)
    d.t(360, H - 133, street(rng), 10)
    d.t(360, H - 146, rng.choice(["69003 Lyon", "31000 Toulouse", "44000 Nantes"]), 10)
    y -= 10
    d.t(40, y, "Consumption period from %s to %s" % (fdate(start, ds), fdate(end, ds)), 9.5, True)
    y -= 22
    # boxed table
    cols = [40, 220, 270, 318, 384, 420, 474]
    heads = ["Description", "Qty", "Unit price", "Montant HT", "TVA", "TVA amt",
             "Montant TTC"]
    top = y + 12
    d.box(40, y - 4, W - 80, 16, fill=0.85)
    for i, hd in enumerate(heads):
        if i == 0:
            d.t(cols[i] + 4, y, hd, 7.5, True)
        else:
            d.t((cols[i + 1] if i + 1 < len(cols) else W - 40) - 4, y, hd, 7.5, True, "r")
    y -= 18
    for desc, q, u, ht, r, tva, ttc in tab:
        vals = [q, u, N(ht), r, N(tva), N(ttc)]
        d.t(44, y, desc, 7.5)
        for i, v in enumerate(vals):
            right = (cols[i + 2] if i + 2 < len(cols) else W - 40) - 4
            d.t(right, y, v, 7.5, align="r")
        y -= 14
    tht = sum(r[3] for r in tab)
    ttva = sum(r[5] for r in tab)
    d.line(40, y + 9, W - 40, y + 9)
    for k, v in (("Total HT", N(tht)), ("Total TVA", N(ttva)),
                 ("Montant TTC of this invoice", M(current))):
        d.t(300, y, k, 8, True)
        d.t(W - 44, y, v, 8, True, "r")
        y -= 13
    d.box(40, y + 5, W - 80, top - y - 5)
    for x in cols[1:]:
        d.line(x, y + 5 + 3 * 13, x, top)
    T["trap"] = "total_ht"
    y -= 24
    # summary box
    d.box(300, y - 94, W - 340, 106)
    d.t(310, y, "Account summary", 10, True)
    y -= 18
    for k, v in (("Previous balance (solde ant\u00e9rieur)", prev),
                 ("Payments received (paiements re\u00e7us)", -pay),
                 ("Montant TTC of this invoice", current)):
        d.t(310, y, k, 8.5)
        d.t(W - 48, y, M(v), 8.5, align="r")
        y -= 14
    d.box(304, y - 30, W - 348, 36, fill=0.9)
    d.t(310, y - 10, "Montant total \u00e0 payer", 10, True)
    d.t(W - 48, y - 10, M(total), 12, True, "r")
    d.t(310, y - 24, "Amount to pay before %s" % fdate(due, ds), 8.5, True)
    yl = y + 56
    iban = "FR76 " + " ".join("%04d" % rng.randint(0, 9999) for _ in range(5)) + \
        " %03d" % rng.randint(0, 999)
    d.para(40, yl, ["Payment by direct debit from", "IBAN %s" % iban,
                    "Mandate ref. RUM%08d" % rng.randint(0, 99999999)], 7.5, 11)
    y -= 70
    if rng.random() < 0.5:
        rl = ["%s - Service Clients" % payee, "TSA %05d" % rng.randint(10000, 99999),
              "69901 Lyon Cedex 20"]
        d.t(40, y, "To pay by cheque, send it to:", 8.5)
        d.para(40, y - 12, rl, 8.5, 11)
        T["remit_to_address"] = remit(rl)
        y -= 48
    if rng.random() < 0.6:
        url = "https://espace-client.%s.fr" % {
            "Volta \u00c9nergies": "volta-energies", "Helio Power France": "heliopower",
            "\u00c9nergie Vall\u00e9e SAS": "energie-vallee"}[payee]
        d.t(40, y, "Your customer area: %s" % url, 8.5)
        T["payment_url"] = url
    d.save()
    return T, d.pages


def lay_cu_statement(path, rng, font, image_page):
    """US co-op statement laid out like a credit-union statement: side box."""
    cur, ds = "USD", "ap"
    payee = rng.choice(["Pinecrest Electric Cooperative", "Alder Creek Rural Electric",
                        "Blue Mesa Water & Light"])
    T = truth_base("fr_cu_statement", "US", cur, ds, "usd_comma_dot")
    T["payee_name"] = payee
    stmt = base_dates(rng)
    end = stmt - dt.timedelta(days=rng.randint(1, 6))
    start = end - dt.timedelta(days=rng.choice([29, 30, 31]))
    due = stmt + dt.timedelta(days=rng.choice([15, 20, 25]))
    acct = "%d-%05d-%03d" % (rng.randint(1, 99), rng.randint(0, 99999), rng.randint(0, 999))
    T["account_number"] = acct
    kwh = rng.randint(300, 1900)
    items = [("Facility Charge", rng.choice([2500, 3000, 3500]), "fee"),
             ("Electric Service %d kWh" % kwh, round(kwh * rng.choice([10.9, 11.6, 12.4])), "usage"),
             ("Power Cost Adjustment", rng.randint(-900, 1500), "adjustment")]
    if rng.random() < 0.5:
        items.append(("Security Light", rng.choice([950, 1200]), "fee"))
    if rng.random() < 0.3:
        items.append(("Late Payment Charge", rng.choice([500, 750, 1500]), "fee"))
    pre = sum(a for _, a, _ in items)
    items.append(("Sales Tax", round(pre * rng.choice([0.04, 0.05, 0.0625])), "tax"))
    current = sum(a for _, a, _ in items)
    prev, pay = balances(rng, current, 6000, 30000)
    total = finish_truth(T, prev, pay, items, cur, due, stmt, (start, end))
    M = lambda c: money(c, "usd", "minus")  # noqa: E731
    d = Doc(path, letter, font, rng)
    W, H = d.w, d.h
    d.t(36, H - 56, payee, 15, True)
    d.t(36, H - 71, "A member-owned cooperative", 8.5)
    d.t(36, H - 92, "MEMBER STATEMENT", 12, True)
    d.t(36, H - 130, person(rng).upper(), 9.5)
    d.t(36, H - 142, street(rng).upper(), 9.5)
    d.t(36, H - 154, rng.choice(["ALDER CREEK OR 97015", "DELTA CO 81416", "MOAB UT 84532"]), 9.5)
    # side box
    bx, bw = 396, 180
    d.box(bx, H - 300, bw, 250)
    d.box(bx, H - 70, bw, 20, fill=0.15)
    d.c.setFillGray(1)
    d.t(bx + bw / 2, H - 64, "Payment Information", 9.5, True, "c")
    d.c.setFillGray(0)
    y = H - 90
    member = "%07d" % rng.randint(0, 9999999)
    for k, v, big in (("Account Number", acct, False), ("Member Number", member, False),
                      ("Statement Date", fdate(stmt, ds), False),
                      ("New Balance", M(total), True),
                      ("Payment Due Date", fdate(due, ds), True)):
        d.t(bx + 8, y, k, 8.5)
        d.t(bx + bw - 8, y - 14, v, 12 if big else 9.5, True, "r")
        y -= 36
    d.t(bx + 8, y + 4, "AutoPay: %s" % rng.choice(["Not enrolled", "Not active"]), 8)
    # activity
    y = H - 200
    d.t(36, y, "Billing Period: %s - %s" % (fdate(start, ds), fdate(end, ds)), 9)
    y -= 22
    d.t(36, y, "ACCOUNT ACTIVITY", 10, True)
    y -= 4
    d.line(36, y, 380, y, 0.8)
    y -= 13
    d.t(36, y, "Date", 8, True)
    d.t(80, y, "Description", 8, True)
    d.t(380, y, "Amount", 8, True, "r")
    y -= 15
    pdate = stmt - dt.timedelta(days=rng.randint(10, 25))
    md = lambda x: x.strftime("%m/%d")  # noqa: E731
    d.t(36, y, md(start), 8.5)
    d.t(80, y, "Previous Balance", 8.5)
    d.t(380, y, M(prev), 8.5, align="r")
    y -= 14
    if pay:
        d.t(36, y, md(pdate), 8.5)
        d.t(80, y, "Payment - Thank You", 8.5)
        d.t(380, y, M(-pay), 8.5, align="r")
        y -= 14
    for desc, a, _ in items:
        d.t(36, y, md(end), 8.5)
        d.t(80, y, desc, 8.5)
        d.t(380, y, M(a), 8.5, align="r")
        y -= 14
    d.line(36, y + 9, 380, y + 9)
    d.t(80, y - 2, "Total New Charges", 8.5, True)
    d.t(380, y - 2, M(current), 8.5, True, "r")
    y -= 16
    d.t(80, y - 2, "New Balance", 9, True)
    d.t(380, y - 2, M(total), 9, True, "r")
    y -= 40
    T["trap"] = "year_to_date"
    d.t(36, y, "YEAR-TO-DATE SUMMARY", 9, True)
    y -= 14
    for k, v in (("Payments year to date", rng.randint(40000, 240000)),
                 ("Charges year to date", rng.randint(40000, 240000)),
                 ("Capital credits allocated 2026", rng.randint(800, 9000))):
        d.t(36, y, k, 8.5)
        d.t(300, y, M(v), 8.5, align="r")
        y -= 13
    y -= 20
    d.t(36, y, "Meter %d   Previous read %d   Present read %d" % (
        rng.randint(10000000, 99999999), 20000, 20000 + kwh), 8)
    # coupon
    sy = 150
    d.line(36, sy, 576, sy, 0.6, (2, 2))
    rl = [payee, "PO Box %d" % rng.randint(100, 9999),
          rng.choice(["Alder Creek, OR 97015-0220", "Delta, CO 81416-1187", "Moab, UT 84532-0410"])]
    d.t(36, sy - 20, "Make checks payable to:", 8)
    d.para(36, sy - 34, rl, 9, 11.5)
    T["remit_to_address"] = remit(rl)
    d.t(396, sy - 20, "Account Number  %s" % acct, 8.5)
    d.t(396, sy - 34, "New Balance  %s" % M(total), 8.5)
    d.t(396, sy - 48, "Amount Enclosed  $________", 8.5)
    if rng.random() < 0.5:
        url = "https://%s.smarthub.coop" % payee.split()[0].lower()
        d.t(36, sy - 90, "Manage your account and pay at %s" % url, 8)
        T["payment_url"] = url
    d.save()
    return T, d.pages


def lay_propane(path, rng, font, image_page):
    """Propane delivery invoice: Invoice Total less a prepayment is the Amount Due."""
    locale = rng.choice(["US", "US", "CA"])
    cur = "USD" if locale == "US" else "CAD"
    ds = rng.choice(["mdy2", "ap"]) if locale == "US" else rng.choice(["iso", "ap"])
    payee = rng.choice(["Ridgeline Propane Co.", "Heartland Gas & Oil",
                        "Northern Star Propane Ltd."])
    T = truth_base("fr_propane", locale, cur, ds, "usd_comma_dot")
    T["payee_name"] = payee
    ddate = base_dates(rng)
    stmt = ddate + dt.timedelta(days=rng.randint(0, 3))
    due = stmt + dt.timedelta(days=rng.choice([10, 15, 30]))
    acct = "%06d" % rng.randint(0, 999999)
    inv = "%d" % rng.randint(1000000, 9999999)
    T["account_number"], T["bill_number"] = acct, inv
    if locale == "US":
        qty = rng.randint(1100, 4999) / 10
        price = rng.choice([2199, 2499, 2899, 3149])
        unit = "GAL"
    else:
        qty = rng.randint(3000, 18000) / 10
        price = rng.choice([859, 929, 1049])
        unit = "L"
    # amount = qty * price per unit (price in tenths of a cent)
    items = [("Propane delivered", round(qty * price / 10), "usage"),
             ("Hazmat & safety compliance fee", rng.choice([595, 795, 999]), "fee")]
    if rng.random() < 0.5:
        items.append(("Tank rental (annual)", rng.choice([4500, 6000, 8900]), "fee"))
    if rng.random() < 0.4:
        items.append(("Fuel recovery surcharge", rng.choice([450, 650]), "fee"))
    pre = sum(a for _, a, _ in items)
    if locale == "US":
        items.append(("State sales tax", round(pre * rng.choice([0.0, 0.03, 0.05])), "tax"))
        if items[-1][1] == 0:
            items.pop()
    else:
        items.append(("GST 5%", round(pre * 0.05), "tax"))
    current = sum(a for _, a, _ in items)
    prev = 0 if rng.random() < 0.7 else rng.randint(2000, 20000)
    pay = rng.randint(current // 5, current * 4 // 5)
    T["trap"] = "invoice_total"
    total = finish_truth(T, prev, pay, items, cur, due, stmt, None)
    neg = rng.choice(["minus", "paren", "cr"])
    M = lambda c: money(c, "usd", neg)  # noqa: E731
    d = Doc(path, letter, font, rng)
    W, H = d.w, d.h
    d.t(36, H - 54, payee, 16, True)
    d.t(36, H - 68, street(rng), 8.5)
    d.t(36, H - 79, rng.choice(["Bemidji, MN 56601", "Athens, OH 45701"]
                               if locale == "US" else ["Orillia, ON L3V 1A1",
                                                       "Brandon, MB R7A 5Y2"]), 8.5)
    d.t(W - 36, H - 54, "DELIVERY INVOICE", 15, True, "r")
    d.box(372, H - 176, 204, 84)
    y = H - 106
    for k, v in (("Invoice #", inv), ("Invoice Date", fdate(stmt, ds)),
                 ("Customer #", acct),
                 ("Delivery Ticket #", "%06d" % rng.randint(0, 999999)),
                 ("Tank Serial #", "%s%07d" % (rng.choice(["TS", "AS"]), rng.randint(0, 9999999)))):
        d.t(380, y, k, 8.5)
        d.t(568, y, v, 8.5, True, "r")
        y -= 15
    nm = person(rng)
    d.t(36, H - 110, "BILL TO", 8, True)
    d.para(36, H - 122, [nm, street(rng)], 9, 11)
    d.t(200, H - 110, "DELIVERED TO", 8, True)
    d.para(200, H - 122, [nm, street(rng)], 9, 11)
    y = H - 210
    d.box(36, y - 4, 540, 16, fill=0.85)
    for x, hd, al in ((40, "Date", "l"), (100, "Description", "l"), (330, "Qty", "r"),
                      (370, "Unit", "l"), (460, "Price", "r"), (572, "Amount", "r")):
        d.t(x, y, hd, 8, True, al)
    y -= 18
    for n, (desc, a, _) in enumerate(items):
        d.t(40, y, fdate(ddate, "mdy2" if locale == "US" else "iso"), 8.5)
        d.t(100, y, desc, 8.5)
        if n == 0:
            d.t(330, y, "%.1f" % qty, 8.5, align="r")
            d.t(370, y, unit, 8.5)
            d.t(460, y, "$%.4f" % (price / 1000), 8.5, align="r")
        d.t(572, y, M(a), 8.5, align="r")
        y -= 15
    d.line(36, y + 8, 576, y + 8)
    y -= 10
    x0 = 380
    d.t(x0, y, "Invoice Total", 10, True)
    d.t(572, y, M(current), 10, True, "r")
    y -= 16
    if prev:
        d.t(x0, y, "Previous Balance", 9)
        d.t(572, y, M(prev), 9, align="r")
        y -= 15
    d.t(x0, y, rng.choice(["Less Prepayment", "Prepaid / Budget Credit", "Payment Received"]), 9)
    d.t(572, y, M(-pay), 9, align="r")
    y -= 6
    d.box(x0 - 6, y - 24, 202, 20, fill=0.88)
    d.t(x0, y - 18, "Amount Due", 11, True)
    d.t(572, y - 18, M(total), 11, True, "r")
    y -= 44
    d.t(x0, y, "Payment Due Date: %s" % fdate(due, ds), 9, True)
    d.t(36, y + 60, "Terms: Net %d days. A finance charge of 1.5%% per month" % (due - stmt).days, 8)
    d.t(36, y + 49, "(18%% APR) applies to past-due balances.", 8)
    d.t(36, y + 30, "Tank reading before %d%%  after %d%%" % (rng.randint(10, 30), rng.randint(75, 80)), 8)
    if locale == "CA":
        d.t(36, y + 16, "All amounts are in Canadian dollars (CAD). GST # %09d RT0001" % rng.randint(0, 999999999), 8)
        T["currency_note"] = True
    y -= 40
    rl = [payee, "Attn: Accounts Receivable", "PO Box %d" % rng.randint(100, 9999),
          rng.choice(["Bemidji, MN 56619", "Athens, OH 45701"] if locale == "US"
                     else ["Orillia, ON L3V 6J3", "Brandon, MB R7A 6A5"])]
    d.t(36, y, "Please remit to:", 8.5, True)
    d.para(36, y - 12, rl, 9, 11)
    T["remit_to_address"] = remit(rl)
    if rng.random() < 0.5:
        url = "https://pay.%s.com" % payee.split()[0].lower()
        d.t(36, y - 70, "Pay online at %s" % url, 8.5)
        T["payment_url"] = url
    d.t(W / 2, 40, "Thank you for your business!", 9, align="c")
    d.save()
    return T, d.pages


def lay_mobile(path, rng, font, image_page):
    """Three-page mobile bill; the total amount due is on page 2."""
    locale = rng.choice(["US", "UK", "CA"])
    cur = {"US": "USD", "UK": "GBP", "CA": "CAD"}[locale]
    ds = {"US": "iso", "UK": rng.choice(["iso", "ordinal"]), "CA": "iso"}[locale]
    sty = "gbp" if locale == "UK" else "usd"
    payee = rng.choice(["Orbit Mobile", "Cobalt Wireless", "Lumen Cellular"])
    T = truth_base("fr_mobile", locale, cur, ds, "gbp_comma_dot" if sty == "gbp" else "usd_comma_dot")
    T["payee_name"] = payee
    stmt = base_dates(rng)
    end = stmt - dt.timedelta(days=rng.randint(0, 3))
    start = end - dt.timedelta(days=rng.choice([29, 30]))
    due = stmt + dt.timedelta(days=rng.choice([14, 17, 21]))
    acct = "%04d %04d %02d" % (rng.randint(0, 9999), rng.randint(0, 9999), rng.randint(0, 99))
    inv = "%d" % rng.randint(10 ** 9, 10 ** 10 - 1)
    T["account_number"], T["bill_number"] = acct, inv
    nlines = rng.randint(2, 4)
    phones, groups, items = [], [], []
    for k in range(nlines):
        if locale == "UK":
            ph = "07%03d %06d" % (rng.randint(0, 999), rng.randint(0, 999999))
        else:
            ph = "(%03d) %03d-%04d" % (rng.randint(201, 989), rng.randint(200, 999), rng.randint(0, 9999))
        who = rng.choice(FIRST)
        g = [("%s - %s plan" % (ph, rng.choice(["Unlimited Essentials", "Talk & Text 5GB",
                                                 "Unlimited Plus"])),
              rng.choice([1500, 2500, 3500, 4500]), "fee")]
        if rng.random() < 0.5:
            n = rng.randint(3, 30)
            g.append(("%s - Device payment %d of 36" % (ph, n), rng.choice([1389, 2083, 2917]), "fee"))
        if rng.random() < 0.3:
            g.append(("%s - International roaming" % ph, rng.choice([500, 1000, 1500]), "usage"))
        if rng.random() < 0.25:
            g.append(("%s - Promotional credit" % ph, -rng.choice([500, 1000]), "credit"))
        phones.append((ph, who))
        groups.append(g)
        items.extend(g)
    acc = [("Account - Regulatory cost recovery fee", rng.randint(150, 450), "fee")]
    if locale != "UK":
        pre = sum(a for _, a, _ in items) + acc[0][1]
        acc.append(("Account - Taxes & surcharges", round(pre * rng.choice([0.06, 0.08, 0.11])), "tax"))
    items.extend(acc)
    current = sum(a for _, a, _ in items)
    prev, pay = balances(rng, current, 5000, 25000)
    total = finish_truth(T, prev, pay, items, cur, due, stmt, (start, end))
    T["trap"] = "line_subtotals"
    M = lambda c: money(c, sty, "minus")  # noqa: E731
    d = Doc(path, letter if locale != "UK" else A4, font, rng)
    W, H = d.w, d.h

    def header(n):
        d.t(40, H - 50, payee, 16, True)
        d.t(W - 40, H - 44, "Account %s" % acct, 8.5, align="r")
        d.t(W - 40, H - 56, "Bill date %s" % fdate(stmt, ds), 8.5, align="r")
        d.t(W - 40, H - 68, "Page %d of 3" % n, 8.5, align="r")
        d.line(40, H - 76, W - 40, H - 76, 1)
        d.t(W / 2, 30, "%s  |  Bill no. %s  |  Page %d of 3" % (payee, inv, n), 7, align="c")

    name = person(rng)
    # page 1
    header(1)
    y = H - 110
    d.t(40, y, "Hi %s," % name.split()[0], 12, True)
    y -= 18
    y = d.para(40, y, ["Here's your bill for %s to %s." % (fdate(start, ds), fdate(end, ds)),
                       "Your charges and the total amount due are on page 2;",
                       "usage details for each line are on page 3."], 10, 14)
    y -= 16
    d.t(40, y, "Since your last bill", 11, True)
    y -= 16
    for k, v in (("Previous bill", prev), ("Payment received - thank you", -pay)):
        d.t(52, y, k, 10)
        d.t(320, y, M(v), 10, align="r")
        y -= 14
    y -= 24
    d.box(40, y - 70, W - 80, 80, fill=0.94)
    up = rng.choice([1000, 1500, 2000])
    d.para(52, y - 8, ["Go bigger for less",
                       "Upgrade any line to Unlimited Max for only %s more a month," % M(up),
                       "or add a tablet line from %s a month." % M(rng.choice([1000, 1200]))], 10, 15)
    d.t(40, 120, "%s, %s" % (name, street(rng)), 8.5)
    d.newpage()
    # page 2
    header(2)
    y = H - 104
    d.t(40, y, "Your charges for %s - %s" % (fdate(start, ds), fdate(end, ds)), 11, True)
    y -= 22
    for (ph, who), g in zip(phones, groups):
        d.t(40, y, "%s  (%s)" % (ph, who), 9.5, True)
        y -= 14
        for desc, a, _ in g:
            d.t(56, y, desc, 8.5)
            d.t(W - 40, y, M(a), 8.5, align="r")
            y -= 12.5
        d.t(300, y, "Line subtotal", 8.5, True)
        d.t(W - 40, y, M(sum(a for _, a, _ in g)), 8.5, True, "r")
        y -= 20
    d.t(40, y, "Account charges", 9.5, True)
    y -= 14
    for desc, a, _ in acc:
        d.t(56, y, desc, 8.5)
        d.t(W - 40, y, M(a), 8.5, align="r")
        y -= 12.5
    y -= 4
    d.line(40, y + 8, W - 40, y + 8, 0.8)
    d.t(40, y - 4, "Total current charges", 9.5, True)
    d.t(W - 40, y - 4, M(current), 9.5, True, "r")
    y -= 34
    d.box(300, y - 96, W - 340, 104)
    yy = y - 8
    for k, v in (("Previous bill", prev), ("Payments", -pay),
                 ("Total current charges", current)):
        d.t(310, yy, k, 9)
        d.t(W - 48, yy, M(v), 9, align="r")
        yy -= 14
    d.line(310, yy + 8, W - 48, yy + 8)
    d.t(310, yy - 8, "Total amount due", 11, True)
    d.t(W - 48, yy - 8, M(total), 13, True, "r")
    d.t(310, yy - 26, "Due by %s" % fdate(due, ds), 10, True)
    if locale == "CA":
        d.t(40, y - 20, "All amounts are in Canadian dollars (CAD).", 8)
        T["currency_note"] = True
    d.newpage()
    # page 3
    header(3)
    y = H - 104
    d.t(40, y, "Usage details", 11, True)
    y -= 20
    for ph, who in phones:
        d.t(40, y, ph, 9, True)
        d.t(200, y, "Talk %d min" % rng.randint(20, 900), 8.5)
        d.t(300, y, "Text %d" % rng.randint(10, 2000), 8.5)
        d.t(400, y, "Data %.2f GB" % (rng.randint(50, 4000) / 100), 8.5)
        y -= 15
    y -= 20
    d.t(40, y, "Ways to pay", 11, True)
    y -= 16
    url = "https://www.%s.%s/pay" % (payee.split()[0].lower(),
                                     {"US": "com", "UK": "co.uk", "CA": "ca"}[locale])
    d.t(40, y, "Online: %s" % url, 9)
    y -= 14
    rl = None
    if locale != "UK":
        rl = [payee, "PO Box %d" % rng.randint(1000, 99999),
              rng.choice(["Carol Stream, IL 60197-1234", "Dallas, TX 75266-0345"])
              if locale == "US" else "Station A, Toronto ON M5W 2Z7"]
        d.t(40, y, "By mail, to:", 9)
        d.para(40, y - 12, rl, 9, 11)
        y -= 50
    d.para(40, y - 10, ["Important information",
                        "Late payments may incur a fee of %s." % M(rng.choice([500, 700, 1000])),
                        "Charges are billed one month in advance; usage in arrears."], 8, 11)
    if image_page is None:
        T["payment_url"] = url
        T["remit_to_address"] = remit(rl) if rl else None
    d.save()
    return T, d.pages


LAYOUTS = [("fr_hydro_landscape", lay_hydro_landscape, 0),
           ("fr_municipal_quarterly", lay_municipal_quarterly, 0),
           ("fr_uk_broadband", lay_uk_broadband, 0),
           ("fr_fr_electricity", lay_fr_electricity, 0),
           ("fr_cu_statement", lay_cu_statement, 0),
           ("fr_propane", lay_propane, 0),
           ("fr_mobile", lay_mobile, 1)]     # page index an image shows

KINDS = ["text", "scan_pdf", "text", "png", "text", "jpg", "text", "scan_pdf"]


# ---------------------------------------------------------------- scans

def degrade(png, rng, dpi):
    im = Image.open(png).convert("L")
    r = rng.random()
    rot = 0.0 if r < 0.25 else round(rng.uniform(-1.2, 1.2) if r < 0.65
                                     else rng.uniform(-5, 5), 2)
    if rot:
        im = im.rotate(rot, resample=Image.BICUBIC, expand=True, fillcolor=255)
    blur = round(rng.uniform(0.25, 1.0) * dpi / 300, 2)
    im = im.filter(ImageFilter.GaussianBlur(blur))
    lvl = rng.randint(5, 20)
    noise = Image.frombytes("L", im.size, rng.randbytes(im.size[0] * im.size[1]))
    noise = noise.point(lambda v: v * (2 * lvl + 1) // 256)
    im = ImageChops.add(im, noise, 1.0, -lvl)
    if rng.random() < 0.5:   # paper tint / toner
        lo, hi = rng.randint(0, 30), rng.randint(225, 255)
        im = im.point(lambda v: lo + v * (hi - lo) // 255)
    return im, rot, blur, lvl


def scan(pdf, out, kind, rng, pages, only_page, tmp):
    dpi = rng.choice([200, 240, 300])
    subprocess.run(["mutool", "draw", "-q", "-r", str(dpi), "-c", "gray",
                    "-o", os.path.join(tmp, "p%d.png"), pdf], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    idx = [only_page] if kind in ("png", "jpg") else list(range(pages))
    rots, blurs, noises, imgs = [], [], [], []
    for p in idx:
        im, rot, blur, lvl = degrade(os.path.join(tmp, "p%d.png" % (p + 1)), rng, dpi)
        rots.append(rot)
        blurs.append(blur)
        noises.append(lvl)
        imgs.append(im)
    q = None
    if kind == "png":
        im = imgs[0]
        if rng.random() < 0.5:   # a JPEG round trip leaves its artefacts
            q = rng.randint(45, 75)
            jp = os.path.join(tmp, "rt.jpg")
            im.save(jp, "JPEG", quality=q)
            im = Image.open(jp).convert("L")
        im.save(out, "PNG", dpi=(dpi, dpi))
    elif kind == "jpg":
        q = rng.randint(55, 88)
        imgs[0].save(out, "JPEG", quality=q, dpi=(dpi, dpi))
    else:
        q = rng.randint(60, 85)
        # reportlab names an image after its path: a relative one keeps the
        # bytes independent of the temporary directory's name
        here = os.getcwd()
        c = rlcanvas.Canvas(os.path.abspath(out), invariant=1)
        os.chdir(tmp)
        try:
            for n, im in enumerate(imgs):
                jp = "s%d.jpg" % n
                im.save(jp, "JPEG", quality=q)
                w, h = im.size[0] * 72.0 / dpi, im.size[1] * 72.0 / dpi
                c.setPageSize((w, h))
                c.drawImage(jp, 0, 0, w, h)
                c.showPage()
            c.save()
        finally:
            os.chdir(here)
    return {"dpi": dpi, "rotation": rots, "blur": blurs, "noise": noises,
            "jpeg_quality": q}


# ---------------------------------------------------------------- main

def make(i, seed, out, tmp):
    rng = random.Random("fresh:%d:%d" % (seed, i))
    li = i % len(LAYOUTS)
    lname, fn, img_page = LAYOUTS[li]
    kind = KINDS[(i // len(LAYOUTS) + li) % len(KINDS)]
    font = rng.choice(list(FONTS))
    pdf = os.path.join(tmp, "doc.pdf")
    T, pages = fn(pdf, rng, font, img_page if kind in ("png", "jpg") else None)
    T["font"] = font
    base = "%03d-%s-%s" % (i, lname.replace("_", "-"), T["locale"].lower())
    if kind == "text":
        name, ext, ctype, k = base, "pdf", "application/pdf", "text_pdf"
        shutil.copyfile(pdf, os.path.join(out, name + "." + ext))
        T["scan"] = None
    else:
        ext = {"scan_pdf": "pdf", "png": "png", "jpg": "jpg"}[kind]
        ctype = {"pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg"}[ext]
        k = "scan_pdf" if kind == "scan_pdf" else "image"
        name = base + ("-scan" if kind == "scan_pdf" else "")
        T["scan"] = scan(pdf, os.path.join(out, name + "." + ext), kind, rng, pages,
                         img_page, tmp)
        if k == "image":
            pages = 1
    T["pages"] = pages
    T["multipage"] = pages > 1
    T["file"] = name + "." + ext
    T["kind"] = k
    T["content_type"] = ctype
    order = ["file", "kind", "content_type", "layout", "locale", "pages", "multipage",
             "trap", "scan", "date_style", "number_style", "payee_name",
             "account_number", "bill_number", "total_amount", "currency",
             "due_date_iso", "statement_date", "service_period", "previous_balance",
             "payments_received", "current_charges", "line_items",
             "remit_to_address", "payment_url"]
    doc = {key: T[key] for key in order}
    for key in sorted(T):
        if key not in doc:
            doc[key] = T[key]
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return {"file": doc["file"], "truth": name + ".json", "kind": k,
            "content_type": ctype, "layout": lname, "locale": T["locale"],
            "pages": pages, "trap": T["trap"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--count", type=int, default=56)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    register_fonts()
    docs = []
    for i in range(a.count):
        with tempfile.TemporaryDirectory(prefix="fresh-") as tmp:
            docs.append(make(i, a.seed, a.out, tmp))
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump({"generator": GENERATOR, "seed": a.seed, "count": a.count,
                   "documents": docs}, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
