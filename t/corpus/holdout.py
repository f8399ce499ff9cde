#!/usr/bin/python3
"""holdout.py: a held-out corpus of invented bills, written apart from gen.py.

Never used to tune the field rules: it exists to measure how they generalise
to layouts, fonts, label wording and page structures they were not written
against (t/corpus/HOLDOUT.md). The ground truth has exactly the format of
t/corpus/README.md, so bench/extract-accuracy scores it unchanged.

    t/corpus/holdout.py --out DIR [--seed N] [--count N]

Debian's python3-reportlab and python3-pil, and mutool (mupdf-tools) for the
scans. Deterministic: document i depends only on the seed and i.
"""
import argparse
import calendar
import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal, ROUND_HALF_UP

from PIL import Image, ImageChops, ImageFilter
from reportlab.lib.pagesizes import A4, letter
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

GENERATOR = "t/corpus/holdout.py 1"
CENT = Decimal("0.01")

# --- fonts (none of them Helvetica or Times) -------------------------------------

TTF = "/usr/share/fonts/truetype/"
T1AFM = "/usr/share/fonts/type1/urw-base35/"
T1PFB = "/usr/share/fonts/X11/Type1/"
FAMILIES = {}


def register_fonts():
    ttf = {"serif": ("dejavu/DejaVuSerif.ttf", "dejavu/DejaVuSerif-Bold.ttf"),
           "condensed": ("dejavu/DejaVuSansCondensed.ttf", "dejavu/DejaVuSansCondensed-Bold.ttf"),
           "mono": ("dejavu/DejaVuSansMono.ttf", "dejavu/DejaVuSansMono-Bold.ttf"),
           "noto_mono": ("noto/NotoSansMono-Regular.ttf", "noto/NotoSansMono-Bold.ttf")}
    for fam, files in ttf.items():
        names = []
        for k, f in enumerate(files):
            name = "HO-%s-%d" % (fam, k)
            pdfmetrics.registerFont(TTFont(name, TTF + f))
            names.append(name)
        FAMILIES[fam] = tuple(names)
    t1 = {"gothic": ("URWGothic-Book", "URWGothic-Demi"),
          "narrow": ("NimbusSansNarrow-Regular", "NimbusSansNarrow-Bold"),
          "palatino": ("P052-Roman", "P052-Bold"),
          "bookman": ("URWBookman-Light", "URWBookman-Demi")}
    for fam, files in t1.items():
        names = []
        for f in files:
            face = pdfmetrics.EmbeddedType1Face(T1AFM + f + ".afm", T1PFB + f + ".pfb")
            pdfmetrics.registerTypeFace(face)
            name = "HO-" + f
            pdfmetrics.registerFont(pdfmetrics.Font(name, face.name, "WinAnsiEncoding"))
            names.append(name)
        FAMILIES[fam] = tuple(names)
    FAMILIES["courier"] = ("Courier", "Courier-Bold")


# --- money and dates ----------------------------------------------------------------

SYMBOL = {"USD": "$", "AUD": "$", "GBP": "\u00a3", "EUR": "\u20ac", "NZD": "$"}


def q(x):
    return Decimal(x).quantize(CENT, rounding=ROUND_HALF_UP)


def number(v, ns):
    s = "{:,.2f}".format(v)
    if ns == "en":
        return s
    if ns == "eu":
        return s.replace(",", "\x00").replace(".", ",").replace("\x00", ".")
    if ns == "eu_space":
        return s.replace(",", " ").replace(".", ",")
    return "{:.2f}".format(v)          # plain


class Money:
    """How one document writes amounts: the sign's place, the number style, credits."""

    def __init__(self, cur, place, ns, credit):
        self.cur, self.place, self.ns, self.credit = cur, place, ns, credit

    def __call__(self, v, bare=False):
        v = Decimal(v)
        n = number(abs(v), self.ns)
        sym = SYMBOL[self.cur]
        place = "bare" if bare else self.place
        body = {"pre": sym + n, "pre_space": sym + " " + n, "code_pre": self.cur + " " + n,
                "post": n + " " + sym, "code_post": n + " " + self.cur, "bare": n}[place]
        if v >= 0:
            return body
        if self.credit == "minus":
            return "-" + body
        if self.credit == "cr":
            return body + " CR"
        if self.credit == "paren":
            return "(" + body + ")"
        return body + "-"                # trailing minus, old mainframe statements

    def style(self):
        return "%s/%s/credit-%s" % (self.place, self.ns, self.credit)


MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def ordinal(n):
    return "%d%s" % (n, "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th"))


def fdate(d, style):
    m, mon, month = d.month, MON[d.month - 1], calendar.month_name[d.month]
    return {
        "us_slash": "%02d/%02d/%d" % (m, d.day, d.year),
        "us_slash_yy": "%02d/%02d/%02d" % (m, d.day, d.year % 100),
        "us_dash": "%02d-%02d-%d" % (m, d.day, d.year),
        "mon_dot": "%s%s %d, %d" % (mon, "" if mon == "May" else ".", d.day, d.year),
        "MON_DD_YYYY": "%s %02d %d" % (mon.upper(), d.day, d.year),
        "month_d_y": "%s %d, %d" % (month, d.day, d.year),
        "DD_MON_YYYY": "%02d %s %d" % (d.day, mon.upper(), d.year),
        "d_mon_y": "%d %s %d" % (d.day, mon, d.year),
        "wd_d_mon_y": "%s %d %s %d" % (d.strftime("%a"), d.day, mon, d.year),
        "au_slash": "%d/%d/%d" % (d.day, m, d.year),
        "uk_slash": "%02d/%02d/%d" % (d.day, m, d.year),
        "ordinal": "%s %s %d" % (ordinal(d.day), month, d.year),
        "weekday_long": "%s, %d %s %d" % (d.strftime("%A"), d.day, month, d.year),
        "dd_Mon_yyyy": "%02d-%s-%d" % (d.day, mon, d.year),
        "d_month_y": "%d %s %d" % (d.day, month, d.year),
        "iso": d.isoformat(),
        "eu_dot": "%02d.%02d.%d" % (d.day, m, d.year),
    }[style]


DATE_STYLES = {
    "US": ["us_slash", "us_slash_yy", "us_dash", "mon_dot", "MON_DD_YYYY", "month_d_y"],
    "AU": ["d_mon_y", "wd_d_mon_y", "au_slash", "uk_slash", "d_month_y"],
    "UK": ["ordinal", "uk_slash", "weekday_long", "dd_Mon_yyyy", "d_month_y"],
    "IE": ["DD_MON_YYYY", "iso", "uk_slash", "d_mon_y"],
    "EU": ["iso", "eu_dot", "DD_MON_YYYY", "d_month_y"],
}


def amt(v, cur):
    return {"value": "{:.2f}".format(v), "currency": cur}


# --- drawing ----------------------------------------------------------------------

class Page:
    """A reportlab canvas addressed from the top-left corner, in points."""

    def __init__(self, path, size, family):
        self.c = canvas.Canvas(path, pagesize=size, invariant=1)
        self.W, self.H = size
        self.reg, self.bold = FAMILIES[family]
        self.pages = 1

    def t(self, x, y, s, size=9, bold=False, align="l", gray=0.0):
        c = self.c
        c.setFillGray(gray)
        c.setFont(self.bold if bold else self.reg, size)
        if align == "r":
            c.drawRightString(x, self.H - y, s)
        elif align == "c":
            c.drawCentredString(x, self.H - y, s)
        else:
            c.drawString(x, self.H - y, s)
        c.setFillGray(0)

    def kv(self, x, y, w, label, value, size=9, bold=False):
        font = self.bold if bold else self.reg
        while size > 6 and pdfmetrics.stringWidth(label + "    " + value, font, size) > w:
            size -= 0.5                  # a long date range: smaller type, never overprinted
        self.t(x, y, label, size, bold)
        self.t(x + w, y, value, size, bold, "r")

    def box(self, x, y, w, h, fill=None, stroke=True, lw=0.8):
        c = self.c
        c.setLineWidth(lw)
        if fill is not None:
            c.setFillGray(fill)
        c.rect(x, self.H - y - h, w, h, stroke=1 if stroke else 0, fill=0 if fill is None else 1)
        c.setFillGray(0)

    def line(self, x0, y, x1, lw=0.6, dash=False):
        c = self.c
        c.setLineWidth(lw)
        if dash:
            c.setDash(4, 3)
        c.line(x0, self.H - y, x1, self.H - y)
        c.setDash()

    def para(self, x, y, lines, size=8, lead=None):
        lead = lead or size * 1.35
        for k, s in enumerate(lines):
            self.t(x, y + k * lead, s, size)
        return y + len(lines) * lead

    def rows(self, x, y, w, rows, size=9, step=13, bold_last=False):
        """Label/amount rows (an account summary); returns y below the last."""
        for k, (a, b) in enumerate(rows):
            self.kv(x, y, w, a, b, size, bold_last and k == len(rows) - 1)
            y += step
        return y

    def charges(self, y, w, items, M, label, total, size=8.5, step=12, rule=-7, gap=3, bare=False):
        """The itemised charges at x 40, a rule, the total row; returns y below the last item."""
        for d, a, _ in items:
            self.kv(40, y, w, d, M(a, bare=bare), size)
            y += step
        self.line(40, y + rule, 40 + w)
        self.kv(40, y + gap, w, label, M(total), 9, True)
        return y

    def new_page(self):
        self.c.showPage()
        self.pages += 1

    def save(self):
        self.c.save()


# --- invented people, places and numbers -------------------------------------------

FIRST = ["Aroha", "Bernadette", "Colm", "Deepa", "Eamon", "Fiona", "Gustavo", "Hiroshi", "Imogen",
         "Jarrah", "Kwame", "Lorcan", "Marisol", "Niamh", "Oskar", "Priya", "Quentin", "Rosalind",
         "Siobhan", "Tariq", "Ulla", "Vikram", "Winifred", "Xavier", "Yusuf", "Zelda"]
LAST = ["Abernethy", "Brannigan", "Castellano", "Delacroix", "Eriksen", "Fitzgerald", "Gallagher",
        "Hollingsworth", "Iwasaki", "Jablonski", "Kowalczyk", "Lindqvist", "McAllister", "Nakamura",
        "O'Sullivan", "Pemberton", "Quinlan", "Rasmussen", "Szabo", "Thornbury", "Underhill",
        "Vasquez", "Whitlock", "Yamamoto"]
STREETS = ["Wattle", "Banksia", "Kestrel", "Juniper", "Larkspur", "Millbrook", "Ferndale", "Quarry",
           "Orchard", "Heron", "Blackthorn", "Sycamore", "Tamarind", "Copperfield", "Rowan"]
SUFFIX = {"US": ["St", "Ave", "Rd", "Blvd", "Ln", "Dr"], "AU": ["St", "Rd", "Cres", "Pde", "Ave"],
          "UK": ["Road", "Lane", "Close", "Gardens", "Way"], "IE": ["Road", "Park", "Avenue", "Grove"],
          "EU": ["Straat", "Laan", "Weg", "Strasse"]}
TOWNS = {"US": [("Cedar Rapids", "IA", "524"), ("Dayton", "OH", "454"), ("Boise", "ID", "837"),
                ("Fresno", "CA", "937"), ("Albany", "NY", "122"), ("Tulsa", "OK", "741")],
         "AU": [("Parramatta", "NSW", "2150"), ("Geelong", "VIC", "3220"), ("Toowoomba", "QLD", "4350"),
                ("Bunbury", "WA", "6230"), ("Launceston", "TAS", "7250")],
         "UK": [("Shrewsbury", "SY1"), ("Lancaster", "LA1"), ("Truro", "TR1"), ("Dundee", "DD1"),
                ("Swindon", "SN1")],
         "IE": [("Athlone", "N37"), ("Galway", "H91"), ("Kilkenny", "R95"), ("Sligo", "F91")],
         "EU": [("Utrecht", "3511"), ("Leuven", "3000"), ("Aarhus", "8000"), ("Graz", "8010")]}


def person(r):
    return "%s %s" % (r.choice(FIRST), r.choice(LAST))


def address(r, loc):
    n = r.randint(2, 480)
    street = "%s %s" % (r.choice(STREETS), r.choice(SUFFIX[loc]))
    t = r.choice(TOWNS[loc])
    if loc == "US":
        return ["%d %s" % (n, street), "%s, %s %s%02d" % (t[0], t[1], t[2], r.randint(1, 99))]
    if loc == "AU":
        return ["%d %s" % (n, street), "%s %s %s" % (t[0].upper(), t[1], t[2])]
    if loc == "UK":
        return ["%d %s" % (n, street), t[0], "%s %d%s%s" % (t[1], r.randint(1, 9), r.choice("ABDEFGHJ"),
                                                          r.choice("LNPQRSTUWXYZ"))]
    if loc == "IE":
        return ["%d %s" % (n, street), t[0], "%s %s%d%s%d" % (t[1], r.choice("ACDEFHKNPRTVWXY"),
                                                           r.randint(1, 9), r.choice("CDEFHKNPRTVWXY"),
                                                           r.randint(10, 99))]
    return ["%s %d" % (street, n), "%s %s" % (t[1], t[0])]


def digits(r, n):
    return "".join(str(r.randint(0, 9)) for _ in range(n - 1)) + str(r.randint(1, 9))


def grouped(r, groups, sep=" "):
    return sep.join(str(r.randint(1, 9)) + digits(r, g - 1) if g > 1 else str(r.randint(1, 9))
                    for g in groups)


def dates(r, monthly=True):
    """statement date, service period, due date (all in 2026-2027)."""
    end = datetime.date(2026, 1, 1) + datetime.timedelta(days=r.randint(0, 340))
    days = r.choice([28, 29, 30, 31]) if monthly else r.choice([59, 61, 90, 91, 92])
    start = end - datetime.timedelta(days=days - 1)
    stmt = end + datetime.timedelta(days=r.randint(2, 9))
    due = stmt + datetime.timedelta(days=r.choice([10, 14, 14, 18, 21, 21, 28]))
    return stmt, start, end, due


def balances(r, current, trap_allowed=True):
    """previous balance, payments received, the scenario."""
    kind = r.choice(["paid", "paid", "unpaid", "partial", "over", "new"])
    prev = q(current * Decimal(r.uniform(0.7, 1.3)))
    if kind == "paid":
        pay = prev
    elif kind == "unpaid":
        pay = Decimal("0.00")
    elif kind == "partial":
        pay = q(prev * Decimal(r.uniform(0.2, 0.8)))
    elif kind == "over":
        pay = q(prev + min(current * Decimal("0.5"), Decimal(r.randint(5, 40))))
    else:
        prev = pay = Decimal("0.00")
    return prev, pay, kind


# --- the layouts --------------------------------------------------------------------
# Each takes (r, doc, P, single) and fills doc (the ground truth) and draws on P.
# single: one page only (images).


def money_for(r, loc, cur):
    if loc == "EU":
        place, ns = r.choice([("post", "eu"), ("pre_space", "eu"), ("code_post", "eu"),
                              ("post", "eu_space")])
    elif loc == "IE":
        place, ns = r.choice([("pre", "en"), ("pre_space", "en"), ("code_pre", "en")])
    elif loc == "AU":
        place, ns = r.choice([("pre", "en"), ("pre", "en"), ("code_pre", "en")])
    else:
        place, ns = r.choice([("pre", "en"), ("pre", "en"), ("pre_space", "en")])
    credit = r.choice({"US": ["minus", "paren", "trail", "cr"], "AU": ["cr", "minus"],
                       "UK": ["cr", "minus"], "IE": ["cr", "minus"], "EU": ["minus"]}[loc])
    return Money(cur, place, ns, credit)


def finish_truth(doc, M, payee, account, bill_no, stmt, start, end, due, ds, prev, pay, items,
                 total, remit, url):
    cur = M.cur
    current = sum((a for _, a, _ in items), Decimal("0.00"))
    doc.update({
        "date_style": ds, "number_style": M.style(), "payee_name": payee,
        "account_number": account, "bill_number": bill_no,
        "total_amount": amt(total, cur), "currency": cur,
        "due_date_iso": due.isoformat(), "statement_date": stmt.isoformat(),
        "service_period": {"start_date": start.isoformat(), "end_date": end.isoformat()},
        "previous_balance": amt(prev, cur), "payments_received": amt(pay, cur),
        "current_charges": amt(current, cur),
        "line_items": [{"description": d, "amount": amt(a, cur), "category": c} for d, a, c in items],
        "remit_to_address": {"lines": remit, "text": ", ".join(remit)} if remit else None,
        "payment_url": url,
    })


def lay_au_energy(r, doc, P, single):
    """Australian tax invoice: Total amount payable / Pay by, BPAY, NMI, GST."""
    loc, cur = "AU", "AUD"
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    payee = r.choice(["Brightwatts Energy", "Southern Cross Power", "Coral Coast Electricity",
                      "Eucalypt Energy Retail", "Red Gum Power & Gas"])
    abn = "ABN %s" % grouped(r, [2, 3, 3, 3])
    account = grouped(r, [4, 3, 3])
    invoice = digits(r, 9)
    nmi = "%s%s" % (r.choice(["4102", "6305", "3120"]), digits(r, 7))
    stmt, start, end, due = dates(r, monthly=r.random() < 0.4)
    days = (end - start).days + 1
    peak_kwh = Decimal(r.randint(180, 900)) + Decimal(r.randint(0, 9)) / 10
    peak_rate = Decimal(r.randint(2400, 3900)) / 100          # c/kWh
    items = [("Peak usage %s kWh @ %sc/kWh" % (peak_kwh, peak_rate), q(peak_kwh * peak_rate / 100), "usage")]
    if r.random() < 0.6:
        op = Decimal(r.randint(80, 500))
        rate = Decimal(r.randint(1300, 2200)) / 100
        items.append(("Off-peak usage %s kWh @ %sc/kWh" % (op, rate), q(op * rate / 100), "usage"))
    sup = Decimal(r.randint(8000, 13000)) / 100
    items.append(("Daily supply charge %d days @ %sc/day" % (days, sup), q(days * sup / 100), "supply"))
    if r.random() < 0.5:
        fi = Decimal(r.randint(40, 600))
        items.append(("Solar feed-in credit %s kWh @ 5.00c/kWh" % fi, -q(fi * 5 / 100), "credit"))
    if r.random() < 0.4:
        items.append(("Energy Bill Relief Fund credit", Decimal("-75.00"), "credit"))
    sub = sum(a for _, a, _ in items)
    gst = q(max(sub, Decimal("0")) / 10)
    items.append(("GST", gst, "tax"))
    current = sum(a for _, a, _ in items)
    if current <= 0:
        items.insert(0, ("Meter charge", Decimal("45.00"), "supply"))
        current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    total = prev - pay + current
    if total <= 0:
        pay = prev
        total = current
    lbl_total = r.choice(["Total amount payable", "Amount payable", "Total payable", "Amount due"])
    lbl_due = r.choice(["Pay by", "Due date", "Please pay by"])
    url = "https://www.%s.com.au/pay" % payee.split()[0].lower().replace("&", "")
    remit = None
    P.t(40, 50, payee, 18, True)
    P.t(40, 64, "%s Pty Ltd  %s" % (payee, abn), 7)
    P.t(P.W - 40, 44, "Tax invoice", 14, True, "r")
    cust = person(r)
    addr = address(r, loc)
    y = P.para(40, 100, [cust.upper()] + addr, 9)
    P.kv(330, 90, 225, "Account number", account)
    P.kv(330, 103, 225, "Invoice number", invoice)
    P.kv(330, 116, 225, "Issue date", fdate(stmt, ds))
    P.kv(330, 129, 225, "Billing period", "%s to %s" % (fdate(start, ds), fdate(end, ds)))
    P.kv(330, 142, 225, "NMI", nmi)
    # the amount box
    P.box(40, 165, 250, 78, fill=0.92)
    P.t(52, 185, lbl_total, 11, True)
    P.t(278, 214, M(total), 22, True, "r")
    P.t(52, 234, "%s  %s" % (lbl_due, fdate(due, ds)), 11, True)
    P.t(305, 180, "Your account summary", 10, True)
    rows = [("Opening balance", M(prev)), ("Payments received - thank you", M(-pay) if pay else M(0)),
            ("Balance carried forward", M(prev - pay)), ("New charges (incl. GST)", M(current))]
    for k, (a, b) in enumerate(rows):
        P.kv(305, 197 + k * 13, 250, a, b, 8.5)
    P.line(305, 197 + 4 * 13 - 8, 555)
    P.kv(305, 197 + 4 * 13 + 2, 250, lbl_total, M(total), 9, True)
    y = 275
    P.t(40, y, "Your charges this period", 11, True)
    P.t(555, y, "Amount", 8, True, "r")
    y += 16
    y = P.charges(y, 515, items, M, "Total new charges", current, step=13, rule=-6, gap=4)
    y += 24
    P.t(40, y, "Average daily usage %.1f kWh   Average daily cost %s" % (float(peak_kwh) / days,
                                                                      M(q(current / days))), 8)
    y += 12
    P.t(40, y, "Supply address: %s, %s" % (addr[0], addr[1]), 8)
    if r.random() < 0.5:
        y += 12
        P.t(40, y, "All amounts are in Australian dollars and include GST where shown.", 7)
    # how to pay
    y = max(y + 30, 560 if not single else y + 30)
    P.line(30, y - 10, P.W - 30, dash=True)
    P.t(40, y + 6, "How to pay", 11, True)
    ref = "%s%s" % (account.replace(" ", ""), r.randint(0, 9))
    P.t(40, y + 22, "BPAY  Biller code: %d   Ref: %s" % (r.randint(10000, 99999), ref), 8.5)
    P.t(40, y + 35, "Online  %s" % url, 8.5)
    P.t(40, y + 48, "Post Billpay  *%d %s" % (r.randint(200, 999), ref), 8.5)
    if r.random() < 0.7:
        remit = ["%s" % payee, "Locked Bag %d" % r.randint(1000, 9999),
                 "%s %s %s" % tuple(x.upper() if k == 0 else x
                                    for k, x in enumerate(r.choice(TOWNS["AU"])))]
        P.t(330, y + 22, "Mail cheques to:", 8.5, True)
        P.para(330, y + 35, remit, 8.5, 13)
    P.t(330, y + 80, "%s %s   %s %s" % (lbl_total, M(total), lbl_due, fdate(due, ds)), 9, True)
    finish_truth(doc, M, payee, account, invoice, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    doc["trap"] = "balance_carried_forward" if prev - pay else None


def lay_us_gas(r, doc, P, single):
    """US gas bill: an AMOUNT DUE header band right-aligned, PAST DUE previous balance, stub."""
    loc, cur = "US", "USD"
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    payee = r.choice(["Tri-County Gas & Light Co.", "Prairie Natural Gas", "Keystone Gas Service",
                      "Hearthstone Gas Company", "Blue Flame Utilities"])
    account = r.choice([grouped(r, [3, 4, 3], "-"), grouped(r, [10]), grouped(r, [4, 4, 2], "-")])
    stmt, start, end, due = dates(r)
    therms = Decimal(r.randint(12, 160))
    ccf = q(therms / Decimal("1.031")).quantize(Decimal(1))
    items = [("Customer Charge", Decimal(r.randint(1200, 1900)) / 100, "service"),
             ("Distribution Charge %s Therms x $%s" % (therms, Decimal(r.randint(3000, 5200)) / 10000),
              None, "delivery"),
             ("Gas Supply Charge %s Therms x $%s" % (therms, Decimal(r.randint(4000, 9000)) / 10000),
              None, "supply")]
    items = [(d, a if a is not None else q(therms * Decimal(d.split("$")[1])), c) for d, a, c in items]
    if r.random() < 0.6:
        items.append(("Pipeline Replacement Surcharge", Decimal(r.randint(150, 900)) / 100, "fee"))
    if r.random() < 0.5:
        items.append(("Energy Assistance Fund", Decimal(r.randint(20, 150)) / 100, "fee"))
    sub = sum(a for _, a, _ in items)
    items.append(("State Sales Tax", q(sub * Decimal("0.0425")), "tax"))
    if r.random() < 0.5:
        items.append(("Municipal Franchise Tax", q(sub * Decimal("0.02")), "tax"))
    current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    if r.random() < 0.5:
        scen, pay = "unpaid", Decimal("0.00")
        prev = prev or q(current * Decimal("0.9"))
    total = prev - pay + current
    if total <= 0:
        pay, total = prev, current
    past_due = prev - pay if scen in ("unpaid", "partial") and prev - pay > 0 else Decimal(0)
    P.t(40, 46, payee.upper(), 15, True)
    P.t(40, 60, "Customer Service 1-800-%03d-%04d   www.%s.com" % (r.randint(200, 999), r.randint(0, 9999),
                                                                   payee.split()[0].lower().strip("-")), 7.5)
    # the header band: labels above, values below, amount right-aligned
    bx, bw = 300, P.W - 340
    P.box(bx, 30, bw, 16, fill=0.8)
    P.box(bx, 46, bw, 26)
    cols = [("ACCOUNT NUMBER", account, bx + 6, "l"), ("DUE DATE", fdate(due, ds), bx + 118, "l"),
            ("AMOUNT DUE", M(total), bx + bw - 6, "r")]
    for lab, val, x, al in cols:
        P.t(x, 41, lab, 7.5, True, al)
        P.t(x, 63, val, 10 if lab != "AMOUNT DUE" else 12, True, al)
    cust = person(r)
    addr = address(r, loc)
    P.para(40, 95, [cust.upper()] + [a.upper() for a in addr], 9)
    P.kv(300, 92, bw, "Statement Date", fdate(stmt, ds), 8.5)
    P.kv(300, 105, bw, "Service Period", "%s - %s" % (fdate(start, ds), fdate(end, ds)), 8.5)
    meter = digits(r, 9)
    P.kv(300, 118, bw, "Meter Number", meter, 8.5)
    y = 150
    if past_due:
        P.box(40, y, P.W - 80, 30, fill=0.9, lw=1.5)
        P.t(50, y + 13, "PAST DUE  %s" % M(past_due), 11, True)
        P.t(50, y + 25, "Your account is past due. Please pay the past due amount immediately "
                        "to avoid a service interruption.", 7.5)
        y += 45
    P.t(40, y, "ACCOUNT ACTIVITY", 10, True)
    y += 15
    act = [("Previous Balance", M(prev))]
    act.append(("Payment Received - Thank You", M(-pay)) if pay else ("Payments Received", M(0)))
    act.append(("Balance Forward" if not past_due else "PAST DUE BALANCE", M(prev - pay)))
    act.append(("Current Gas Charges", M(current)))
    y = P.rows(40, y, 250, act, 8.5, 12)
    P.line(40, y - 7, 290)
    P.kv(40, y + 3, 250, "Total Amount Due", M(total), 9, True)
    # meter table on the right
    ty = y - 12 * len(act) - 15
    P.t(320, ty, "METER READING", 10, True)
    hdr = ["Read Dates", "Previous", "Present", "CCF", "Therms"]
    prv = r.randint(1000, 9000)
    vals = ["%d/%d-%d/%d" % (start.month, start.day, end.month, end.day), str(prv), str(prv + int(ccf)),
            str(ccf), str(therms)]
    for k, (h, v) in enumerate(zip(hdr, vals)):
        P.t(320 + k * 48, ty + 15, h, 7, True)
        P.t(320 + k * 48, ty + 27, v, 7.5)
    y += 30
    P.t(40, y, "CURRENT GAS CHARGES", 10, True)
    y += 15
    y = P.charges(y, 360, items, M, "Total Current Gas Charges", current)
    y += 20
    P.t(40, y, "A late payment charge of 1.5% per month applies to balances not paid by the due date.", 7)
    # stub
    y = max(y + 30, 600)
    P.line(20, y, P.W - 20, dash=True)
    P.t(P.W / 2, y + 12, "Please detach and return this portion with your payment", 7, False, "c")
    remit = [payee.upper(), "PO BOX %d" % r.randint(1000, 99999),
             "%s, %s %s%02d-%04d" % (lambda t: (t[0].upper(), t[1], t[2], r.randint(1, 99), r.randint(0, 9999)))(
                 r.choice(TOWNS["US"]))]
    sy = y + 32
    P.kv(330, sy, 230, "Account Number", account, 9)
    P.kv(330, sy + 14, 230, "Due Date", fdate(due, ds), 9)
    P.kv(330, sy + 28, 230, "Amount Due", M(total), 9, True)
    P.kv(330, sy + 46, 230, "Amount Enclosed", "$ ____________", 9)
    P.t(40, sy, "Make checks payable to:", 8)
    P.para(40, sy + 14, remit, 9, 12)
    url = None
    if r.random() < 0.6:
        url = "https://myaccount.%s.com/paybill" % payee.split()[0].lower().strip("-")
        P.t(40, sy + 60, "Pay online: %s" % url, 8)
    finish_truth(doc, M, payee, account, None, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    doc["trap"] = "past_due" if past_due else None


def lay_uk_water(r, doc, P, single):
    """UK water and sewerage bill: Balance to pay, instalment plan beside it."""
    loc, cur = "UK", "GBP"
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    payee = r.choice(["Severnside Water", "Pennine Water Services", "Wessex Vale Water",
                      "Anglian Fens Water", "Clyde & Forth Water"])
    account = grouped(r, [1, 4, 4, 2])
    cust_ref = digits(r, 8)
    bill_no = r.choice([None, "W" + digits(r, 8)])
    stmt, start, end, due = dates(r, monthly=False)
    items = []
    vol = Decimal(r.randint(18, 95))
    wr = Decimal(r.randint(15000, 22000)) / 10000
    sr = Decimal(r.randint(14000, 24000)) / 10000
    items.append(("Water supply - standing charge", Decimal(r.randint(2000, 4800)) / 100, "water"))
    items.append(("Water supply - volume %s m3 @ \u00a3%s" % (vol, wr), q(vol * wr), "water"))
    items.append(("Sewerage - standing charge", Decimal(r.randint(2000, 5200)) / 100, "sewer"))
    items.append(("Sewerage - volume %s m3 @ \u00a3%s" % (q(vol * Decimal("0.95")), sr),
                  q(q(vol * Decimal("0.95")) * sr), "sewer"))
    items.append(("Surface water drainage", Decimal(r.randint(1500, 4500)) / 100, "drainage"))
    if r.random() < 0.5:
        items.append(("Highway drainage", Decimal(r.randint(500, 1800)) / 100, "drainage"))
    if r.random() < 0.4:
        items.append(("Social tariff contribution", Decimal(r.randint(50, 400)) / 100, "fee"))
    if r.random() < 0.3:
        items.append(("WaterSure discount", -Decimal(r.randint(500, 3000)) / 100, "credit"))
    current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    total = prev - pay + current
    if total <= 0:
        pay, total = prev, current
    n_inst = r.choice([2, 4, 6, 8, 10])
    inst = q(total / n_inst)
    inst_date = due + datetime.timedelta(days=r.choice([15, 28, 31]))
    lbl_total = r.choice(["Balance to pay", "Balance to pay", "Amount to pay now", "Total balance to pay"])
    lbl_due = r.choice(["Please pay the balance by", "Payment due by", "Pay in full by"])
    P.t(40, 50, payee, 17, True)
    P.t(40, 66, "Your water and sewerage bill", 11)
    cust = person(r)
    addr = address(r, loc)
    P.para(40, 110, ["%s %s" % (r.choice(["Mr", "Mrs", "Ms", "Dr"]), cust)] + addr, 9.5, 13)
    rx = 330
    P.kv(rx, 95, 225, "Account reference", account, 9)
    P.kv(rx, 108, 225, "Customer number", cust_ref, 9)
    if bill_no:
        P.kv(rx, 121, 225, "Bill number", bill_no, 9)
    P.kv(rx, 134, 225, "Date of bill", fdate(stmt, ds), 9)
    P.kv(rx, 147, 225, "Charges from", fdate(start, ds), 9)
    P.kv(rx, 160, 225, "Charges to", fdate(end, ds), 9)
    P.box(40, 190, P.W - 80, 58, fill=0.93)
    P.t(52, 210, lbl_total, 13, True)
    P.t(P.W - 52, 212, M(total), 20, True, "r")
    P.t(52, 236, "%s %s" % (lbl_due, fdate(due, ds)), 10)
    y = 272
    P.t(40, y, "Your account", 11, True)
    y += 15
    rows = [("Previous balance", M(prev)), ("Amount paid since your last bill", M(-pay) if pay else M(0)),
            ("Charges on this bill", M(current)), (lbl_total, M(total))]
    y = P.rows(40, y, 260, rows, bold_last=True)
    P.t(330, 272, "Paying by instalments", 11, True)
    P.para(330, 287, ["Instalment due %s: %s" % (fdate(inst_date, ds), M(inst)),
                      "then %d further instalments of %s" % (n_inst - 1, M(inst)),
                      "on the same day of each month. Call us to set up", "a Direct Debit."], 8.5, 12)
    y += 20
    P.t(40, y, "Your charges explained", 11, True)
    y += 15
    y = P.charges(y, 515, items, M, "Total charges for this period", current, step=12.5)
    y += 22
    P.t(40, y, "Meter serial %s   Previous reading %d   Latest reading %d (actual)" % (
        "%02dM%06d" % (r.randint(10, 99), r.randint(0, 999999)), r.randint(100, 900), r.randint(901, 1500)), 8)
    y += 30
    P.line(30, y, P.W - 30, dash=True)
    P.t(40, y + 18, "Bank Giro Credit", 10, True)
    remit = None
    url = "https://www.%s.co.uk/pay" % payee.split()[0].lower()
    P.t(40, y + 32, "Pay online at %s or by Direct Debit." % url, 8)
    if r.random() < 0.6:
        remit = ["%s" % payee, "PO Box %d" % r.randint(100, 999), r.choice(TOWNS["UK"])[0],
                 "%s %d%s%s" % (r.choice(["SY99", "LA98", "TR99", "DD98"]), r.randint(1, 9),
                                r.choice("ABDEFG"), r.choice("LNPQRS"))]
        P.t(40, y + 48, "Cheques payable to %s, posted to:" % payee, 8)
        P.para(40, y + 60, remit, 8.5, 11)
    P.kv(330, y + 48, 225, "Reference", account, 9)
    P.kv(330, y + 61, 225, lbl_total, M(total), 9, True)
    P.kv(330, y + 74, 225, "Sort code", "%02d-%02d-%02d" % (r.randint(10, 99), r.randint(10, 99),
                                                           r.randint(10, 99)), 9)
    finish_truth(doc, M, payee, account, bill_no, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    doc["trap"] = "instalment"


ISP_FEES = [("Broadcast TV Fee", 1800, 2900, "fee"), ("Regional Sports Fee", 900, 1400, "fee"),
            ("HD Technology Fee", 900, 1000, "equipment"), ("Modem/Router Rental", 1000, 1500, "equipment"),
            ("TV Box Rental (2)", 1500, 2400, "equipment"), ("FCC Regulatory Recovery Fee", 30, 90, "fee"),
            ("Franchise Fee", 100, 400, "tax"), ("State & Local Sales Tax", 100, 500, "tax"),
            ("E911 Service Fee", 50, 150, "tax"), ("Network Access Fee", 150, 400, "fee"),
            ("Voice Line - Unlimited", 2000, 3000, "service"), ("Paper Bill Fee", 200, 300, "fee"),
            ("Universal Service Fund", 40, 180, "tax")]


def lay_isp_cable(r, doc, P, single):
    """Internet/cable bill: 'What you owe' summary, many small fees, adjustments."""
    loc = r.choice(["US", "US", "UK"])
    cur = "USD" if loc == "US" else "GBP"
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    payee = r.choice(["Northstar Broadband", "Riverlink Cable", "Fibrewave Communications",
                      "Cascade Cable & Internet", "Zenith Fiber"])
    account = grouped(r, [4, 3, 3, 4]) if r.random() < 0.5 else grouped(r, [8, 3], "-")
    stmt, start, end, due = dates(r)
    spd = r.choice([100, 300, 500, 940])
    items = [("Internet %d Mbps" % spd, Decimal(r.randint(4500, 8500)) / 100, "service")]
    if r.random() < 0.7:
        items.append(("TV %s" % r.choice(["Select", "Preferred Plus", "Basic"]),
                      Decimal(r.randint(3000, 9000)) / 100, "service"))
    items.append(("Promotional discount (month %d of 12)" % r.randint(1, 12),
                  -Decimal(r.randint(1000, 3000)) / 100, "credit"))
    for d, lo, hi, c in r.sample(ISP_FEES, r.randint(5, 9)):
        items.append((d, Decimal(r.randint(lo, hi)) / 100, c))
    if r.random() < 0.4:
        items.append(("Paperless & Auto Pay discount", Decimal("-5.00"), "credit"))
    current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    adj = Decimal(0)
    if r.random() < 0.45:
        adj = -Decimal(r.randint(300, 2500)) / 100
    total = prev - pay + adj + current
    if total <= 0:
        pay, adj = prev, Decimal(0)
        total = current
    lbl_total = r.choice(["What you owe", "What you owe now", "Total amount due"])
    lbl_new = r.choice(["New charges", "This month's charges"])
    P.t(40, 48, payee, 18, True)
    P.t(40, 62, "Your monthly statement", 9)
    P.kv(340, 40, 215, "Account number", account, 8.5)
    P.kv(340, 52, 215, "Statement date", fdate(stmt, ds), 8.5)
    P.kv(340, 64, 215, "Service period", "%s - %s" % (fdate(start, ds), fdate(end, ds)), 8.5)
    cust = person(r)
    P.para(40, 90, [cust] + address(r, loc), 9)
    # What you owe
    P.box(300, 85, P.W - 340, 150, fill=0.95)
    P.t(310, 102, "What you owe", 13, True)
    y = 120
    rows = [("Last bill", M(prev)), ("Payment - thank you", M(-pay) if pay else M(0))]
    if adj:
        rows.append(("Adjustments", M(adj)))
    rows.append(("Balance forward", M(prev - pay + adj)))
    rows.append((lbl_new, M(current)))
    y = P.rows(310, y, P.W - 360, rows, 8.5, 12)
    P.line(310, y - 7, P.W - 50)
    P.kv(310, y + 6, P.W - 360, lbl_total, M(total), 12, True)
    P.t(310, y + 22, "Due by %s" % fdate(due, ds), 10, True)
    y = 250
    P.t(40, y, "New charges in detail", 11, True)
    y += 15
    y = P.charges(y, 420, items, M, "Total %s" % lbl_new.lower(), current, 8, 11.5, -6, 4)
    y += 24
    nxt = q(current + Decimal(r.randint(500, 2000)) / 100)
    P.t(40, y, "Price change: from your next bill your monthly service will be %s." % M(nxt), 7.5)
    P.t(40, y + 11, "Auto Pay: if enrolled, %s will be charged on %s." % (M(total), fdate(due, ds)), 7.5)
    url = "https://www.%s.com/billpay" % payee.split()[0].lower()
    P.t(40, y + 22, "Pay at %s, in the app, or by mail." % url, 7.5)
    y = max(y + 50, 640)
    P.line(20, y, P.W - 20, dash=True)
    remit = ["%s" % payee, "PO Box %d" % r.randint(1000, 99999)] + (address(r, "US")[1:] if loc == "US"
                                                                   else address(r, "UK")[1:])
    P.t(40, y + 16, "Send payment to:", 8, True)
    P.para(40, y + 28, remit, 9, 12)
    P.kv(330, y + 16, 225, "Account number", account, 9)
    P.kv(330, y + 30, 225, "Pay by", fdate(due, ds), 9)
    P.kv(330, y + 44, 225, lbl_total, M(total), 9, True)
    finish_truth(doc, M, payee, account, None, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    doc["locale"] = loc
    doc["trap"] = "adjustment" if adj else "price_change"


def lay_ie_eu(r, doc, P, single):
    """Irish / EU electricity bill: Amount Due, MPRN, VAT, 04 DEC 2026 or ISO dates."""
    loc = r.choice(["IE", "IE", "EU"])
    cur = "EUR"
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    payee = r.choice(["Shannon Power", "Liffey Energy DAC", "Emerald Electric Ireland", "Noordzee Energie",
                      "Baltica Power", "Alpenstrom Energy"])
    account = grouped(r, [1, 3, 3, 3]) if loc == "IE" else grouped(r, [3, 3, 3, 3], "")
    bill_no = digits(r, 10)
    mprn = "10 %s" % grouped(r, [3, 3, 3])
    stmt, start, end, due = dates(r, monthly=r.random() < 0.5)
    days = (end - start).days + 1
    day_u = Decimal(r.randint(200, 900))
    nt_u = Decimal(r.randint(60, 400))
    dr, nr = Decimal(r.randint(2900, 4200)) / 10000, Decimal(r.randint(1600, 2400)) / 10000
    sc = Decimal(r.randint(5000, 9000)) / 10000
    items = [("Day units %s kWh @ \u20ac%s" % (day_u, dr), q(day_u * dr), "energy"),
             ("Night units %s kWh @ \u20ac%s" % (nt_u, nr), q(nt_u * nr), "energy"),
             ("Standing charge %d days @ \u20ac%s" % (days, sc), q(days * sc), "supply"),
             ("PSO Levy" if loc == "IE" else "Network charge", Decimal(r.randint(200, 1900)) / 100, "levy")]
    if r.random() < 0.4:
        items.append(("Government electricity credit", -Decimal(r.choice([5000, 10000, 12500])) / 100, "credit"))
    sub = sum(a for _, a, _ in items)
    if sub <= 0:
        items.append(("Meter service charge", q(-sub + Decimal("30.00")), "supply"))
        sub = sum(a for _, a, _ in items)
    vat_rate = Decimal("9") if loc == "IE" else Decimal("21")
    items.append(("VAT @ %s%% on %s" % (vat_rate, M(sub)), q(sub * vat_rate / 100), "tax"))
    current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    total = prev - pay + current
    if total <= 0:
        pay, total = prev, current
    lbl_total = "Amount Due" if loc == "IE" else r.choice(["Amount due", "Amount to be paid"])
    lbl_due = r.choice(["Due Date", "Payment due", "Direct Debit on or after"])
    P.t(40, 48, payee, 17, True)
    P.t(40, 62, "Electricity bill", 10)
    P.t(P.W - 40, 48, "VAT No. %s" % ("IE" + digits(r, 7) + "T" if loc == "IE" else "NL" + digits(r, 9) + "B01"),
        7.5, False, "r")
    cust = person(r)
    P.para(40, 100, [cust.upper()] + address(r, "IE" if loc == "IE" else "EU"), 9)
    P.kv(320, 90, 235, "Account No." if loc == "IE" else "Customer account", account, 9)
    P.kv(320, 103, 235, "Bill No." if loc == "IE" else "Invoice number", bill_no, 9)
    P.kv(320, 116, 235, "Date of issue" if loc == "IE" else "Invoice date", fdate(stmt, ds), 9)
    P.kv(320, 129, 235, "Billing period", "%s - %s" % (fdate(start, ds), fdate(end, ds)), 9)
    P.kv(320, 142, 235, "MPRN" if loc == "IE" else "EAN", mprn if loc == "IE" else "871" + digits(r, 15), 9)
    P.box(320, 160, 235, 52, fill=0.9)
    P.t(330, 178, lbl_total, 12, True)
    P.t(545, 178, M(total), 14, True, "r")
    P.t(330, 200, "%s %s" % (lbl_due, fdate(due, ds)), 9.5, True)
    y = 240
    P.t(40, y, "Summary of your account", 11, True)
    y += 15
    rows = [("Balance from last bill", M(prev)), ("Payments received since last bill", M(-pay) if pay else M(0)),
            ("Total this bill (incl. VAT)", M(current)), (lbl_total, M(total))]
    y = P.rows(40, y, 515, rows, bold_last=True)
    y += 14
    P.t(40, y, "Details of charges", 11, True)
    y += 15
    for k, (d, a, _) in enumerate(items):
        if k == len(items) - 1:
            P.line(40, y - 8, 555)
            P.kv(40, y, 515, "Subtotal excl. VAT", M(sub), 8.5)
            y += 13
        P.kv(40, y, 515, d, M(a), 8.5)
        y += 13
    P.line(40, y - 7, 555)
    P.kv(40, y + 4, 515, "Total this bill", M(current), 9, True)
    y += 26
    P.t(40, y, "Estimated annual consumption %d kWh. Compare tariffs at www.bonkers.example." % (
        r.randint(2500, 6000)), 7.5)
    url = "https://www.%s.ie/pay" % payee.split()[0].lower() if loc == "IE" else \
        "https://mijn.%s.eu/betalen" % payee.split()[0].lower()
    P.t(40, y + 12, "Pay online: %s" % url, 8)
    y += 30
    remit = None
    if r.random() < 0.5:
        remit = [payee, "Freepost F%d" % r.randint(1000, 9999), "PO Box %d" % r.randint(100, 999),
                 r.choice(TOWNS["IE"])[0]]
        P.t(40, y, "Payments by post to:", 8, True)
        P.para(40, y + 12, remit, 8.5, 11)
    P.t(320, y, "IBAN %s%02d %s" % ("IE" if loc == "IE" else "NL", r.randint(10, 99), grouped(r, [4, 4, 4, 4, 2])),
        8)
    finish_truth(doc, M, payee, account, bill_no, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    doc["locale"] = loc
    doc["trap"] = "vat_subtotal"


def lay_medical(r, doc, P, single):
    """Medical statement: charges, insurance paid, adjustments, patient responsibility."""
    loc, cur = "US", "USD"
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    payee = r.choice(["Riverside Medical Group", "Lakeview Orthopedic Associates", "St. Brendan Health Partners",
                      "Summit Family Medicine", "Harborview Imaging Center"])
    account = r.choice(["%d" % r.randint(1000000, 9999999), "G" + digits(r, 8), grouped(r, [3, 5], "-")])
    stmt, start, end, due = dates(r)
    patient = person(r)
    dob = datetime.date(r.randint(1940, 2010), r.randint(1, 12), r.randint(1, 28))
    n = r.randint(2, 4 if single else 9)
    services = ["Office visit, established patient", "Comprehensive metabolic panel", "X-ray, knee 3 views",
                "Physical therapy evaluation", "Lipid panel", "Venipuncture", "MRI lumbar spine w/o contrast",
                "Influenza vaccine", "Therapeutic exercise 15 min", "ECG 12-lead", "Urinalysis",
                "New patient visit, moderate"]
    rows = []
    for k in range(n):
        dt = start + datetime.timedelta(days=r.randint(0, (end - start).days))
        charge = Decimal(r.randint(4000, 180000)) / 100
        ins = q(charge * Decimal(r.uniform(0.3, 0.7)))
        adjv = q((charge - ins) * Decimal(r.uniform(0.2, 0.7)))
        resp = charge - ins - adjv
        rows.append((dt, r.choice(services), charge, ins, adjv, resp))
    rows.sort(key=lambda x: x[0])
    items = [(d, resp, "medical") for _, d, _, _, _, resp in rows]
    current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    total = prev - pay + current
    if total <= 0:
        pay, total = prev, current
    lbl_total = r.choice(["Amount Due", "Please pay this amount", "Balance due", "Patient balance due"])
    lbl_due = r.choice(["Payment due by", "Due date", "Please pay by"])
    sd = "%s - %s" % (fdate(start, ds), fdate(end, ds))
    P.t(40, 48, payee, 15, True)
    P.para(40, 62, address(r, loc), 8)
    P.t(P.W - 40, 48, "PATIENT STATEMENT", 13, True, "r")
    P.kv(340, 70, 215, "Statement Date", fdate(stmt, ds), 8.5)
    P.kv(340, 82, 215, "Guarantor Account #", account, 8.5)
    P.kv(340, 94, 215, "Dates of service", sd, 8.5)
    P.box(340, 108, 215, 40, fill=0.9)
    P.kv(348, 122, 199, lbl_total, M(total), 11, True)
    P.kv(348, 139, 199, lbl_due, fdate(due, ds), 9, True)
    P.t(40, 112, "Patient: %s   Date of birth: %s" % (patient, fdate(dob, ds)), 8.5)
    P.t(40, 124, "Insurance: %s  Member ID %s" % (r.choice(["Aetna Choice POS II", "BlueCross PPO",
                                                             "UnitedHealthcare", "Cigna Open Access"]),
                                                    "W" + digits(r, 9)), 8.5)
    y = 170
    cols = [(40, "Date", "l"), (100, "Description", "l"), (365, "Charges", "r"), (425, "Ins. Paid", "r"),
            (490, "Adjustments", "r"), (555, "Patient Resp.", "r")]

    def header(y):
        P.box(40, y - 10, 515, 14, fill=0.85, stroke=False)
        for x, h, al in cols:
            P.t(x, y, h, 7.5, True, al)
        return y + 15

    y = header(y)
    per_page = 30
    for k, (dt, d, ch, ins, adjv, resp) in enumerate(rows):
        vals = [fdate(dt, "us_slash" if "slash" in ds else ds), d, M(ch, bare=True), M(-ins, bare=True),
                M(-adjv, bare=True), M(resp, bare=True)]
        for (x, _, al), v in zip(cols, vals):
            P.t(x, y, v, 7.5, False, al)
        y += 12
        if k == per_page:
            break
    tot_ch = sum(x[2] for x in rows)
    tot_ins = sum(x[3] for x in rows)
    tot_adj = sum(x[4] for x in rows)
    P.line(40, y - 7, 555)
    for (x, _, al), v in zip(cols[2:], [M(tot_ch), M(-tot_ins), M(-tot_adj), M(current)]):
        P.t(x, y + 3, v, 7.5, True, al)
    P.t(100, y + 3, "Totals", 7.5, True)
    y += 25
    if not single and r.random() < 0.6:
        P.t(40, 760, "Continued on next page", 7.5)
        P.new_page()
        P.t(40, 48, payee, 12, True)
        P.t(P.W - 40, 48, "Page 2 of 2", 8, False, "r")
        y = 80
    P.t(40, y, "Account summary", 10, True)
    y += 14
    summ = [("Total charges", M(tot_ch)), ("Insurance paid", M(-tot_ins)), ("Insurance adjustments", M(-tot_adj)),
            ("Patient responsibility this statement", M(current)), ("Previous balance", M(prev)),
            ("Patient payments", M(-pay) if pay else M(0)), (lbl_total, M(total))]
    for k, (a, b) in enumerate(summ):
        P.kv(40, y, 300, a, b, 8.5, k == len(summ) - 1)
        y += 12.5
    y += 8
    P.t(40, y, "Questions about your bill? Call 1-888-%03d-%04d Mon-Fri 8am-5pm." % (r.randint(200, 999),
                                                                                     r.randint(0, 9999)), 7.5)
    url = None
    if r.random() < 0.7:
        url = "https://pay.%s.org/statement" % payee.split()[0].lower().replace(".", "")
        P.t(40, y + 11, "Pay securely online at %s" % url, 7.5)
    y = max(y + 40, 600)
    P.line(20, y, P.W - 20, dash=True)
    remit = [payee, "Dept %d" % r.randint(100, 9999), "PO Box %d" % r.randint(10000, 99999),
             address(r, "US")[1]]
    P.t(40, y + 16, "Remit payment to:", 8, True)
    P.para(40, y + 28, remit, 9, 12)
    P.kv(330, y + 16, 225, "Account #", account, 9)
    P.kv(330, y + 30, 225, "Statement date", fdate(stmt, ds), 9)
    P.kv(330, y + 44, 225, lbl_total, M(total), 9, True)
    P.kv(330, y + 58, 225, "Amount Enclosed", "$", 9)
    finish_truth(doc, M, payee, account, None, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    doc["trap"] = "insurance_paid"


def lay_municipal(r, doc, P, single):
    """City utility bill: services of several service locations summed; total on the last page."""
    loc = r.choice(["US", "US", "AU"])
    cur = "USD" if loc == "US" else "AUD"
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    town = r.choice(TOWNS[loc])
    payee = r.choice(["City of %s", "%s City Council", "Town of %s Utilities"]) % town[0]
    account = grouped(r, [6]) + "-" + grouped(r, [2])
    stmt, start, end, due = dates(r, monthly=r.random() < 0.5)
    nloc = r.randint(2, 3)
    svc = [("Water base charge", 1500, 3500, "water"), ("Water consumption %d kgal", 0, 0, "water"),
           ("Sewer service", 2500, 6000, "sewer"), ("Solid waste collection", 1800, 3200, "waste"),
           ("Recycling", 400, 900, "waste"), ("Stormwater utility fee", 500, 1500, "stormwater"),
           ("Street light fee", 100, 400, "fee")]
    locs = []
    items = []
    for k in range(nloc):
        sub_acct = "%s-%02d" % (account.split("-")[0], k + 1)
        where = address(r, loc)[0]
        lines = []
        for d, lo, hi, c in svc[:2] + r.sample(svc[2:], r.randint(2, 4)):
            if "%d" in d:
                kg = r.randint(2, 18)
                d, a = d % kg, q(kg * Decimal(r.randint(300, 700)) / 100)
            else:
                a = Decimal(r.randint(lo, hi)) / 100
            lines.append((d, a, c))
        locs.append((sub_acct, where, lines))
        items += lines
    current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    total = prev - pay + current
    if total <= 0:
        pay, total = prev, current
    lbl_total = r.choice(["TOTAL AMOUNT DUE", "Total due", "Amount due by due date", "Pay this amount"])
    lbl_due = r.choice(["Due date", "DUE DATE", "Payment due"])
    multipage = not single and r.random() < 0.75

    def head(pg, of):
        P.t(40, 46, payee, 15, True)
        P.t(40, 60, "Utility Billing Division - %s" % ", ".join(address(r, loc)), 7.5)
        P.t(P.W - 40, 46, "UTILITY BILL", 12, True, "r")
        if of > 1:
            P.t(P.W - 40, 60, "Page %d of %d" % (pg, of), 8, False, "r")

    of = 2 if multipage else 1
    head(1, of)
    P.kv(330, 82, 225, "Customer account", account, 9)
    P.kv(330, 95, 225, "Bill date", fdate(stmt, ds), 9)
    P.kv(330, 108, 225, "Billing period", "%s to %s" % (fdate(start, ds), fdate(end, ds)), 9)
    cust = person(r)
    P.para(40, 90, [cust.upper()] + address(r, loc), 9)
    y = 145
    for sub_acct, where, lines in locs:
        P.box(40, y - 10, 515, 14, fill=0.88, stroke=False)
        P.t(44, y, "Service location: %s    Sub-account %s" % (where, sub_acct), 8.5, True)
        y += 15
        for d, a, _ in lines:
            P.kv(56, y, 499, d, M(a), 8.5)
            y += 12
        P.kv(56, y, 499, "Location subtotal", M(sum(a for _, a, _ in lines)), 8.5, True)
        y += 20
    P.kv(40, y, 515, "Total current charges, all locations", M(current), 9.5, True)
    y += 25
    if multipage:
        P.t(40, y, "Conserve water: lawn watering is allowed on odd days only until further notice.", 8)
        P.t(40, 770, "Your account summary and payment coupon are on page 2.", 8)
        P.new_page()
        head(2, 2)
        y = 90
    P.t(40, y, "ACCOUNT SUMMARY", 10, True)
    y += 15
    rows = [("Previous balance", M(prev)), ("Payments received", M(-pay) if pay else M(0)),
            ("Current charges", M(current))]
    y = P.rows(40, y, 300, rows)
    P.line(40, y - 8, 340)
    P.kv(40, y + 3, 300, lbl_total, M(total), 11, True)
    P.kv(40, y + 18, 300, lbl_due, fdate(due, ds), 9.5, True)
    P.t(40, y + 34, "A 10% penalty is added to current charges unpaid after the due date.", 7.5)
    y += 70
    P.line(20, y, P.W - 20, dash=True)
    P.t(P.W / 2, y + 10, "RETURN THIS COUPON WITH YOUR PAYMENT", 7.5, True, "c")
    remit = [payee, "Utility Billing", "PO Box %d" % r.randint(100, 9999), ", ".join(address(r, loc)[1:])]
    P.para(40, y + 30, remit, 9, 12)
    P.kv(330, y + 30, 225, "Customer account", account, 9)
    P.kv(330, y + 44, 225, lbl_due, fdate(due, ds), 9)
    P.kv(330, y + 58, 225, lbl_total, M(total), 9, True)
    url = None
    if r.random() < 0.5:
        url = "https://www.%s.gov/utilities/pay" % town[0].lower().replace(" ", "")
        P.t(40, y + 85, "Pay online: %s" % url, 8)
    finish_truth(doc, M, payee, account, None, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    doc["locale"] = loc
    doc["trap"] = "location_subtotals"


def lay_statement3(r, doc, P, single):
    """Three pages: a letter, the itemised charges, then the summary and slip with the total."""
    loc = r.choice(["US", "UK", "AU"])
    cur = {"US": "USD", "UK": "GBP", "AU": "AUD"}[loc]
    M = money_for(r, loc, cur)
    ds = r.choice(DATE_STYLES[loc])
    payee = r.choice(["Meridian Home Services", "Greywater Property Management", "Kingfisher Security Systems",
                      "Oakridge Waste & Recycling", "Harbourside Strata Services"])
    account = r.choice(["%s-%s" % (r.choice(["HS", "KS", "OR", "MP"]), digits(r, 7)), grouped(r, [2, 4, 4])])
    stmt_no = "S" + digits(r, 7)
    stmt, start, end, due = dates(r, monthly=r.random() < 0.5)
    cats = [("Monitoring service", "service"), ("Equipment lease", "equipment"), ("Service call", "service"),
            ("Bin hire 240L", "equipment"), ("Collection - general waste", "service"),
            ("Collection - green waste", "service"), ("Administration fee", "fee"), ("Insurance levy", "fee"),
            ("Maintenance visit", "service"), ("Replacement parts", "parts"), ("Fuel surcharge", "fee"),
            ("Loyalty credit", "credit")]
    n = r.randint(4, 7) if single else r.randint(10, 22)
    items = []
    for k in range(n):
        d, c = r.choice(cats)
        dt = start + datetime.timedelta(days=r.randint(0, (end - start).days))
        a = Decimal(r.randint(500, 16000)) / 100
        if c == "credit":
            a = -Decimal(r.randint(500, 2500)) / 100
        items.append(("%s %s" % (fdate(dt, ds), d), a, c))
    current = sum(a for _, a, _ in items)
    if current <= 0:
        items.append(("%s Service call" % fdate(end, ds), q(-current + 50), "service"))
        current = sum(a for _, a, _ in items)
    prev, pay, scen = balances(r, current)
    total = prev - pay + current
    if total <= 0:
        pay, total = prev, current
    lbl_total = r.choice({"US": ["Total Amount Due", "Please Pay", "New Balance"],
                          "UK": ["Total now due", "Balance due", "Amount payable"],
                          "AU": ["Amount payable", "Total due", "Closing balance"]}[loc])
    lbl_due = r.choice(["Due date", "Payment due", "Pay by"])
    cust = person(r)
    pages = 1 if single else 3

    def head(pg):
        P.t(40, 46, payee, 14, True)
        P.t(P.W - 40, 46, "Statement %s" % stmt_no, 9, False, "r")
        if pages > 1:
            P.t(P.W - 40, 58, "Page %d of %d" % (pg, pages), 8, False, "r")
        P.t(P.W - 40, 70, "Account %s" % account, 9, False, "r")

    head(1)
    if not single:
        P.para(40, 100, [cust] + address(r, loc), 9.5, 13)
        P.t(40, 170, fdate(stmt, ds), 9.5)
        P.t(40, 195, "Dear %s," % cust.split()[0], 9.5)
        rise = Decimal(r.randint(150, 900)) / 100
        letter_lines = [
            "Thank you for being a customer. This statement covers %s to %s." % (fdate(start, ds), fdate(end, ds)),
            "From next month our standard plan rises by %s a month, to %s. Nothing changes" % (
                M(rise), M(q(Decimal(r.randint(3000, 9000)) / 100))),
            "for customers on a fixed plan. Customers who paid %s or more last year qualify" % M(
                Decimal(r.randint(300, 900))),
            "for our loyalty credit, which appears as a credit on your charges.",
            "",
            "Your itemised charges are on page 2 and your account summary and payment",
            "slip are on page 3.",
            "",
            "Yours sincerely,", "", "Customer Accounts Team", payee]
        P.para(40, 220, letter_lines, 9.5, 14)
        P.new_page()
        head(2)
        y = 100
    else:
        y = 95
        P.t(40, 85, "Statement date %s" % fdate(stmt, ds), 9)
    P.t(40, y, "Itemised charges", 11, True)
    P.t(555, y, "Amount (%s)" % cur, 8, True, "r")
    y += 15
    y = P.charges(y, 515, items, M, "Total charges this period", current, step=12.5, gap=4, bare=True)
    if not single:
        P.new_page()
        head(3)
        y = 100
    else:
        y += 25
    P.t(40, y, "Account summary", 11, True)
    y += 15
    rows = [("Opening balance" if loc != "US" else "Previous Balance", M(prev)),
            ("Payments and credits", M(-pay) if pay else M(0)), ("Charges this period", M(current))]
    y = P.rows(40, y, 300, rows)
    P.line(40, y - 8, 340)
    P.kv(40, y + 4, 300, lbl_total, M(total), 11, True)
    P.kv(40, y + 19, 300, lbl_due, fdate(due, ds), 9.5, True)
    y += 50
    P.line(20, y, P.W - 20, dash=True)
    P.t(40, y + 16, "Payment slip", 10, True)
    remit = [payee, "Accounts Receivable"] + address(r, loc)
    P.t(40, y + 32, "Please send your payment to:", 8)
    P.para(40, y + 44, remit, 9, 12)
    P.kv(330, y + 32, 225, "Account", account, 9)
    P.kv(330, y + 46, 225, "Statement", stmt_no, 9)
    P.kv(330, y + 60, 225, lbl_total, M(total), 9, True)
    P.kv(330, y + 74, 225, lbl_due, fdate(due, ds), 9)
    url = None
    if r.random() < 0.5:
        url = "https://portal.%s.com/pay" % payee.split()[0].lower()
        P.t(330, y + 92, "Or pay at %s" % url, 8)
    finish_truth(doc, M, payee, account, stmt_no, stmt, start, end, due, ds, prev, pay, items, total,
                 remit, url)
    if single:                           # the period is only in the letter
        doc["service_period"] = None
    doc["locale"] = loc
    doc["trap"] = "letter_amounts" if not single else None


LAYOUTS = [("ho_au_energy", lay_au_energy, "AU", A4, ["gothic", "narrow", "condensed"]),
           ("ho_us_gas", lay_us_gas, "US", letter, ["courier", "narrow", "bookman"]),
           ("ho_uk_water", lay_uk_water, "UK", A4, ["palatino", "gothic", "serif"]),
           ("ho_isp_cable", lay_isp_cable, "US", letter, ["condensed", "gothic", "narrow"]),
           ("ho_ie_eu", lay_ie_eu, "IE", A4, ["serif", "narrow", "palatino"]),
           ("ho_medical", lay_medical, "US", letter, ["mono", "bookman", "condensed"]),
           ("ho_municipal", lay_municipal, "US", letter, ["noto_mono", "courier", "serif"]),
           ("ho_statement3", lay_statement3, "US", A4, ["bookman", "palatino", "condensed"])]


# --- scans --------------------------------------------------------------------------

def scan_pages(r, pdf, tmp, dpi):
    """Render the text PDF in gray at dpi and age each page like a scan."""
    tmp = tempfile.mkdtemp(prefix="pages-", dir=tmp)     # this document's pages only
    pat = os.path.join(tmp, "pg-%d.png")
    subprocess.run(["mutool", "draw", "-q", "-r", str(dpi), "-c", "gray", "-o", pat, pdf],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    k, out, info = 1, [], {"dpi": dpi, "rotation": [], "blur": [], "noise": []}
    while os.path.exists(pat % k):
        im = Image.open(pat % k).convert("L")
        # paper tint and uneven toner: lift the white, darken the black a little
        lo, hi = r.randint(0, 40), r.randint(215, 250)
        im = im.point(lambda v, lo=lo, hi=hi: lo + v * (hi - lo) // 255)
        rot = round(r.choice([0, r.uniform(-1, 1), r.uniform(-5, 5)]), 2)
        if rot:
            im = im.rotate(rot, resample=Image.BICUBIC, expand=True, fillcolor=hi)
        blur = round(r.uniform(0.2, 0.9) * dpi / 300, 2)
        im = im.filter(ImageFilter.GaussianBlur(blur))
        amp = r.randint(6, 22)
        rnd = random.Random(r.random())
        im = add_noise(im, amp, rnd)
        out.append(im)
        info["rotation"].append(rot)
        info["blur"].append(blur)
        info["noise"].append(amp)
        k += 1
    return out, info


def add_noise(im, amp, rnd):
    """Uniform noise of +-amp, from a tiled block of seeded random bytes (fast, deterministic)."""
    w, h = im.size
    tile = Image.frombytes("L", (257, 263), bytes(rnd.getrandbits(8) for _ in range(257 * 263)))
    field = Image.new("L", (w, h))
    for x in range(0, w, 257):
        for y in range(0, h, 263):
            field.paste(tile, (x, y))
    # v + (n - 128) * amp / 128, as two saturating passes
    pos = field.point(lambda n: max(0, (n - 128) * amp // 128))
    neg = field.point(lambda n: max(0, (128 - n) * amp // 128))
    return ImageChops.subtract(ImageChops.add(im, pos), neg)


# --- one document -------------------------------------------------------------------

KINDS = ["scan_pdf", "image_png", "image_jpg"]


def make(i, seed, out, tmp):
    r = random.Random(seed * 100003 + i)
    # layout i mod 8; within every 16 documents each layout is once a text PDF, once a scan;
    # the scans go round image-only PDF, PNG, JPEG
    n = len(LAYOUTS)
    name, fn, loc, size, fams = LAYOUTS[i % n]
    if (i + i // n) % 2 == 0:
        kind = "text_pdf"
    else:
        kind = KINDS[(i // 2 + seed) % 3]
    single = kind.startswith("image")
    doc = {"layout": name, "locale": loc, "trap": None}
    pdf_text = os.path.join(tmp, "doc-%d.pdf" % i)
    P = Page(pdf_text, size, r.choice(fams))
    fn(r, doc, P, single)
    P.save()
    pages = P.pages
    base = "%03d-%s-%s" % (i, name.replace("_", "-"), doc["locale"].lower())
    if kind == "text_pdf":
        fname = base + ".pdf"
        shutil.copyfile(pdf_text, os.path.join(out, fname))
        scan = None
        ctype, tkind = "application/pdf", "text_pdf"
    else:
        dpi = r.choice([200, 225, 250, 300])
        ims, scan = scan_pages(r, pdf_text, tmp, dpi)
        quality = r.randint(65, 92)
        scan["jpeg_quality"] = quality if kind != "image_png" else None
        if kind == "scan_pdf":
            fname = base + "-scan.pdf"
            c = canvas.Canvas(os.path.join(out, fname), pagesize=size, invariant=1)
            here = os.getcwd()
            os.chdir(tmp)                # reportlab names an image after its path: keep it relative
            try:
                for k, im in enumerate(ims):
                    jp = "scan-%d-%d.jpg" % (i, k)
                    im.save(jp, "JPEG", quality=quality, dpi=(dpi, dpi))
                    w, h = im.size[0] * 72.0 / dpi, im.size[1] * 72.0 / dpi
                    c.setPageSize((w, h))
                    c.drawImage(jp, 0, 0, w, h)
                    c.showPage()
                c.save()
            finally:
                os.chdir(here)
            ctype, tkind = "application/pdf", "scan_pdf"
        elif kind == "image_png":
            fname = base + ".png"
            ims[0].save(os.path.join(out, fname), "PNG", dpi=(dpi, dpi))
            ctype, tkind = "image/png", "image"
        else:
            fname = base + ".jpg"
            ims[0].save(os.path.join(out, fname), "JPEG", quality=quality, dpi=(dpi, dpi))
            ctype, tkind = "image/jpeg", "image"
    truth = {"file": fname, "kind": tkind, "content_type": ctype, "layout": name, "locale": doc["locale"],
             "pages": pages, "multipage": pages > 1, "trap": doc["trap"], "scan": scan}
    for k in ("date_style", "number_style", "payee_name", "account_number", "bill_number", "total_amount",
              "currency", "due_date_iso", "statement_date", "service_period", "previous_balance",
              "payments_received", "current_charges", "line_items", "remit_to_address", "payment_url"):
        truth[k] = doc[k]
    tname = os.path.splitext(fname)[0] + ".json"
    with open(os.path.join(out, tname), "w") as f:
        json.dump(truth, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return {"file": fname, "truth": tname, "kind": tkind, "content_type": ctype, "layout": name,
            "locale": doc["locale"], "pages": pages, "trap": doc["trap"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--count", type=int, default=64)
    a = ap.parse_args()
    if a.count < 1:
        sys.exit("holdout.py: --count must be at least 1")
    if shutil.which("mutool") is None:
        sys.exit("holdout.py: mutool (mupdf-tools) is needed for the scans")
    register_fonts()
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    docs = []
    with tempfile.TemporaryDirectory(prefix="holdout-") as tmp:
        for i in range(a.count):
            docs.append(make(i, a.seed, a.out, tmp))
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump({"generator": GENERATOR, "seed": a.seed, "count": a.count, "documents": docs}, f, indent=1)
        f.write("\n")
    print("holdout.py: %d documents in %s" % (len(docs), a.out))


if __name__ == "__main__":
    main()
