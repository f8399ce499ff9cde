#!/usr/bin/python3
"""Generate a corpus of bills with their ground truth, for bench/extract-accuracy.

    t/corpus/gen.py --out DIR [--seed N] [--count N]

Writes DIR/<name>.pdf|png|jpg, DIR/<name>.json (the ground truth of that
document) and DIR/index.json (every document). The same seed and count give
the same bytes. Text PDFs come from reportlab; scans are those PDFs rendered
by mutool (mupdf-tools) at 150-300 dpi, rotated, blurred and speckled with PIL,
written as PNG, JPEG or an image-only PDF (no text layer). Debian's
python3-reportlab and python3-pil only: run it with /usr/bin/python3.

The bills are invented: payees, accounts and addresses are made up, URLs are
under .example. t/corpus/README.md describes the layouts and the format.
"""
import argparse
import datetime
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal

from PIL import Image, ImageChops, ImageFilter
from reportlab.lib.pagesizes import A4, letter
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

EXPONENT = {"USD": 2, "CAD": 2, "GBP": 2, "EUR": 2, "JPY": 0}
LOCALE_CURRENCY = {"US": "USD", "CA": "CAD", "UK": "GBP", "EU": "EUR", "JP": "JPY"}
CONTENT_TYPE = {"text_pdf": "application/pdf", "scan_pdf": "application/pdf",
                "png": "image/png", "jpg": "image/jpeg"}
MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
DEJAVU_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
FONTS = [("Helvetica", "Helvetica-Bold"), ("Times-Roman", "Times-Bold")]
if os.path.exists(DEJAVU) and os.path.exists(DEJAVU_BOLD):
    pdfmetrics.registerFont(TTFont("DejaVu", DEJAVU))
    pdfmetrics.registerFont(TTFont("DejaVu-Bold", DEJAVU_BOLD))
    FONTS.append(("DejaVu", "DejaVu-Bold"))

# --- people, places, billers -------------------------------------------------

PAYEES = {
    ("electric", "US"): ["Northwind Electric", "Cedar Valley Power", "Lakeshore Light and Power",
                         "Summit Energy Cooperative", "Prairie Gas and Electric"],
    ("electric", "CA"): ["Maple Hydro", "Northern Lights Energy", "Fraser Valley Hydro"],
    ("electric", "JP"): ["Sakura Electric Power", "Kanto Energy Service"],
    ("energy", "UK"): ["Albion Energy", "Thames Valley Power", "Heathland Gas and Electric",
                       "Northern Isles Energy", "Pennine Power"],
    ("energy", "EU"): ["Rheinland Energie", "Solaris Energie", "Alpenstrom Versorgung",
                       "Lumen Energies", "Nordsee Strom"],
    ("telecom", "US"): ["Bluewave Mobile", "Skyline Telecom", "Meridian Wireless"],
    ("telecom", "CA"): ["Rideau Telecom", "Aurora Wireless"],
    ("telecom", "UK"): ["Orbit Broadband", "Kestrel Mobile"],
    ("telecom", "EU"): ["Telenova", "Vialink Mobil"],
    ("telecom", "JP"): ["Hikari Mobile", "Fuji Net Telecom"],
    ("water", "US"): ["Clearwater Utilities", "Riverbend Water District", "Oak Hollow Water"],
    ("water", "CA"): ["Maple Creek Water and Sewer", "Lakehead Water"],
    ("water", "UK"): ["Ashford Water", "Severnside Water"],
}
PEOPLE = ["Jordan Smith", "Alex Morgan", "Priya Patel", "Chris Okafor", "Maria Garcia",
          "Sam Lee", "Taylor Brooks", "Hannah Weber", "Luca Rossi", "Emma Dubois",
          "Kenji Tanaka", "Olivia Brown", "Noah Williams", "Aisha Khan"]
STREETS = {
    "US": ["Maple Avenue", "Oak Street", "Elm Road", "Birch Lane", "Harbor View Drive"],
    "CA": ["Queen Street", "Rideau Street", "Maple Avenue", "Harbour Road"],
    "UK": ["Station Road", "High Street", "Church Lane", "Mill Road"],
    "EU": ["Lindenstrasse", "Rue des Lilas", "Hauptstrasse", "Via Roma"],
    "JP": ["Sakura Dori", "Chuo Dori", "Meiji Dori"],
}
CITIES = {
    "US": [("Springfield", "IL 62704"), ("Fairview", "OR 97024"), ("Madison", "WI 53703"),
           ("Greenville", "SC 29601")],
    "CA": [("Ottawa", "ON K1P 5J9"), ("Kelowna", "BC V1Y 6H2"), ("Halifax", "NS B3H 1A1")],
    "UK": [("Reading", "RG1 2LU"), ("York", "YO1 7HH"), ("Bristol", "BS1 4DJ")],
    "EU": [("Koeln", "50667"), ("Lyon", "69002"), ("Graz", "8010"), ("Bremen", "28195")],
    "JP": [("Chiyoda-ku, Tokyo", "100-0001"), ("Naka-ku, Yokohama", "231-0001")],
}


def slug(name):
    return "".join(ch for ch in name.lower().replace(" and ", "-") if ch.isalnum() or ch == "-")


def street_address(rng, locale):
    city, post = rng.choice(CITIES[locale])
    street = "%d %s" % (rng.randint(2, 980), rng.choice(STREETS[locale]))
    if locale == "EU":
        street = "%s %d" % (rng.choice(STREETS[locale]), rng.randint(2, 120))
    if locale == "EU":
        return [street, "%s %s" % (post, city)]
    if locale == "JP":
        return [street, "%s %s" % (city, post)]
    if locale == "UK":
        return [street, city, post]
    return [street, "%s, %s" % (city, post)]


def remit_address(rng, locale, payee):
    city, post = rng.choice(CITIES[locale])
    box = rng.randint(1000, 99999)
    if locale == "US" or locale == "CA":
        first = "PO Box %d" % box
        return [payee, first, "%s, %s" % (city, post)]
    if locale == "UK":
        return [payee, "PO Box %d" % box, city, post]
    if locale == "EU":
        return [payee, "Postfach %d" % box, "%s %s" % (post, city)]
    return [payee, "PO Box %d" % box, "%s %s" % (city, post)]


# --- money and dates ----------------------------------------------------------

def money(cur, value):
    return Decimal(value).quantize(Decimal(1).scaleb(-EXPONENT[cur]))


def dec(cur, value):
    return format(money(cur, value), "f")


def group(digits, sep):
    out = []
    while len(digits) > 3:
        out.insert(0, digits[-3:])
        digits = digits[:-3]
    out.insert(0, digits)
    return sep.join(out)


class Fmt:
    """How one document writes amounts and dates."""

    def __init__(self, rng, locale, cur):
        self.cur = cur
        self.locale = locale
        self.num = {"EU": rng.choice(["de", "de", "fr"])}.get(locale, "en")
        self.neg = rng.choice(["minus", "minus", "cr", "paren"])
        if cur == "USD":
            self.sym = ("$", "")
        elif cur == "CAD":
            self.sym = rng.choice([("$", ""), ("CA$", ""), ("", " CAD")])
        elif cur == "GBP":
            self.sym = ("£", "")
        elif cur == "EUR":
            self.sym = rng.choice([("", " €"), ("", " €"), ("€ ", ""), ("EUR ", "")])
        else:
            self.sym = rng.choice([("¥", ""), ("", " JPY"), ("JPY ", "")])
        styles = {
            "US": ["us_num", "us_num", "us_short", "us_long", "iso"],
            "CA": ["iso", "us_short", "us_long"],
            "UK": ["uk_num", "uk_num", "uk_long", "uk_short"],
            "EU": ["eu_num", "eu_num", "eu_num", "uk_long", "iso"],
            "JP": ["iso", "jp_slash", "us_short"],
        }[locale]
        self.date_style = rng.choice(styles)

    def number(self, value):
        v = money(self.cur, value)
        s = format(abs(v), "f")
        whole, _, frac = s.partition(".")
        gsep, dsep = {"en": (",", "."), "de": (".", ","), "fr": (" ", ",")}[self.num]
        out = group(whole, gsep)
        if frac:
            out += dsep + frac
        return out

    def amount(self, value, negative=False, bare=False):
        """value >= 0 written as an amount; negative: written as a credit."""
        body = self.number(value)
        if not bare:
            body = self.sym[0] + body + self.sym[1]
        if not negative:
            return body
        if self.neg == "cr":
            return body + " CR"
        if self.neg == "paren":
            return "(" + body + ")"
        return "-" + body

    def date(self, d, style=None):
        style = style or self.date_style
        if style == "us_num":
            return "%02d/%02d/%04d" % (d.month, d.day, d.year)
        if style == "uk_num":
            return "%02d/%02d/%04d" % (d.day, d.month, d.year)
        if style == "eu_num":
            return "%02d.%02d.%04d" % (d.day, d.month, d.year)
        if style == "jp_slash":
            return "%04d/%02d/%02d" % (d.year, d.month, d.day)
        if style == "us_short":
            return "%s %d, %d" % (MONTHS[d.month - 1][:3], d.day, d.year)
        if style == "us_long":
            return "%s %d, %d" % (MONTHS[d.month - 1], d.day, d.year)
        if style == "uk_long":
            return "%d %s %d" % (d.day, MONTHS[d.month - 1], d.year)
        if style == "uk_short":
            return "%d %s %d" % (d.day, MONTHS[d.month - 1][:3], d.year)
        return d.isoformat()


# --- the bill ------------------------------------------------------------------

ITEMS = {
    "electric": [("Energy charge {q} kWh @ {r}/kWh", "usage"), ("Delivery charge", "usage"),
                 ("Basic service charge", "fee"), ("Transmission charge", "usage"),
                 ("Renewable energy surcharge", "fee"), ("State sales tax", "tax"),
                 ("Municipal franchise fee", "tax"), ("Fuel cost adjustment", "adjustment"),
                 ("Paperless billing credit", "credit")],
    "energy": [("Electricity {q} kWh @ {r}p/kWh", "usage"), ("Gas {q2} kWh @ {r}p/kWh", "usage"),
               ("Standing charge 31 days", "fee"), ("Gas standing charge", "fee"),
               ("VAT at 5%", "tax"), ("Climate levy", "tax"), ("Direct debit discount", "credit"),
               ("Meter reading correction", "adjustment")],
    "telecom": [("Monthly plan Unlimited 5G", "fee"), ("Additional line", "fee"),
                ("Data add-on 10 GB", "usage"), ("International calls 42 min", "usage"),
                ("Roaming charges", "usage"), ("Device instalment 14 of 24", "other"),
                ("Regulatory recovery fee", "fee"), ("Sales and excise taxes", "tax"),
                ("Loyalty discount", "credit"), ("Service credit outage", "adjustment")],
    "water": [("Water usage {q3} gallons", "usage"), ("Sewer usage", "usage"),
              ("Water base charge", "fee"), ("Sewer base charge", "fee"),
              ("Stormwater fee", "fee"), ("Water quality surcharge", "tax"),
              ("Leak adjustment", "adjustment")],
}
SECTOR = {"us_utility": "electric", "uk_energy": "energy", "eu_energy": "energy",
          "telecom": "telecom", "water": "water", "stub": "electric", "two_column": "electric",
          "table_heavy": "telecom", "letter_multipage": "energy"}
LAYOUT_LOCALES = {
    "us_utility": ["US", "US", "US", "CA", "JP"],
    "uk_energy": ["UK"],
    "eu_energy": ["EU"],
    "telecom": ["US", "UK", "EU", "CA", "JP"],
    "water": ["US", "US", "UK", "CA"],
    "stub": ["US", "US", "CA"],
    "two_column": ["US", "UK", "EU", "JP"],
    "table_heavy": ["US", "UK", "EU", "CA"],
    "letter_multipage": ["US", "UK", "EU"],
}
LAYOUTS = list(LAYOUT_LOCALES)
TRAPS = ["late_amount", "budget", "items_total", "big_current", "minimum_payment",
         "prior_bill_amount"]


def payee_for(rng, sector, locale):
    key = (sector, locale)
    if key not in PAYEES:
        if sector == "energy":
            key = ("electric", locale) if ("electric", locale) in PAYEES else ("energy", "UK")
        elif sector == "electric":
            key = ("energy", locale) if ("energy", locale) in PAYEES else ("electric", "US")
        elif sector == "water":
            key = ("water", "US")
        else:
            key = ("telecom", "US")
    return rng.choice(PAYEES[key])


def rand_amount(rng, cur, lo, hi):
    if cur == "JPY":
        return Decimal(rng.randint(int(lo * 100), int(hi * 100)))
    return Decimal(rng.randint(int(lo * 100), int(hi * 100))) / 100


def make_items(rng, sector, cur, n):
    pool = ITEMS[sector]
    chosen = [pool[0]] + rng.sample(pool[1:], min(n - 1, len(pool) - 1))
    while len(chosen) < n:                   # long tables repeat with a month or line suffix
        d, c = rng.choice(pool)
        chosen.append(("%s (line %d)" % (d.split(" {")[0], len(chosen) + 1), c))
    items = []
    for desc, cat in chosen:
        d = desc.format(q=rng.randint(180, 1400), q2=rng.randint(300, 2500),
                        q3=group(str(rng.randint(2, 18) * 1000), ","),
                        r=rng.choice(["0.1342", "0.1189", "0.2150", "24.50", "7.12"]))
        if cat == "credit":
            amt = -rand_amount(rng, cur, 1, 12)
        elif cat == "adjustment":
            amt = rand_amount(rng, cur, 1, 15) * rng.choice([1, -1])
        elif cat == "tax":
            amt = rand_amount(rng, cur, 1, 20)
        elif cat == "usage":
            amt = rand_amount(rng, cur, 15, 180)
        else:
            amt = rand_amount(rng, cur, 4, 60)
        items.append({"description": d, "amount": money(cur, amt), "category": cat})
    return items


def make_bill(rng, idx, layout, kind, trap):
    locale = rng.choice(LAYOUT_LOCALES[layout])
    cur = LOCALE_CURRENCY[locale]
    sector = SECTOR[layout]
    payee = payee_for(rng, sector, locale)
    base = datetime.date(2026, 1, 5) + datetime.timedelta(days=rng.randint(0, 420))
    period_end = base - datetime.timedelta(days=rng.randint(1, 5))
    period_start = period_end - datetime.timedelta(days=rng.randint(27, 32))
    due = base + datetime.timedelta(days=rng.randint(14, 28))
    multipage = kind in ("text_pdf", "scan_pdf") and (
        layout == "letter_multipage" or (layout == "table_heavy" and rng.random() < 0.7))
    if layout == "table_heavy":
        nitems = rng.randint(44, 64) if multipage else rng.randint(8, 14)
    else:
        nitems = rng.randint(3, 6)
    items = make_items(rng, "telecom" if sector == "telecom" else sector, cur, nitems)
    current = sum((i["amount"] for i in items), Decimal(0))
    if current <= 0:
        items[0]["amount"] += -current + money(cur, rand_amount(rng, cur, 20, 60))
        current = sum((i["amount"] for i in items), Decimal(0))
    prev = money(cur, rand_amount(rng, cur, 20, 260))
    r = rng.random()
    if trap in ("items_total", "big_current", "prior_bill_amount"):
        r = 0.6                              # the trap needs a carried balance
    if r < 0.5:
        paid = prev
    elif r < 0.75:
        paid = money(cur, prev * Decimal(rng.choice([25, 40, 50, 60])) / 100)
    elif r < 0.88:
        paid = Decimal(0)
    else:
        paid = money(cur, prev + rand_amount(rng, cur, 1, 10))
        if prev - paid + current <= 0:
            paid = prev
    total = prev - paid + current
    acct_style = rng.randrange(5)
    if acct_style == 0:
        acct = "%04d %04d %02d" % (rng.randint(1000, 9999), rng.randint(0, 9999), rng.randint(0, 99))
    elif acct_style == 1:
        acct = "%010d" % rng.randint(10 ** 8, 10 ** 10 - 1)
    elif acct_style == 2:
        acct = "AC-%08d" % rng.randint(0, 10 ** 8 - 1)
    elif acct_style == 3:
        acct = "%03d %03d %03d %d" % (rng.randint(100, 999), rng.randint(0, 999),
                                      rng.randint(0, 999), rng.randint(0, 9))
    else:
        acct = "%d-%05d-%d" % (rng.randint(10, 99), rng.randint(0, 99999), rng.randint(1, 9))
    bill_no = None
    if layout in ("telecom", "table_heavy", "eu_energy") or rng.random() < 0.4:
        bill_no = rng.choice(["INV-%d-%06d" % (base.year, rng.randint(0, 999999)),
                              "%09d" % rng.randint(10 ** 8, 10 ** 9 - 1),
                              "B%07d" % rng.randint(0, 10 ** 7 - 1)])
    url = None
    if rng.random() < 0.8:
        url = "https://%s.example/%s" % (slug(payee), rng.choice(["pay", "billing", "account/pay", "paybill"]))
    remit = remit_address(rng, locale, payee) if layout in ("stub", "us_utility", "water", "two_column") \
        or rng.random() < 0.5 else None
    return {
        "layout": layout, "locale": locale, "currency": cur, "sector": sector, "payee": payee,
        "customer": rng.choice(PEOPLE), "service_address": street_address(rng, locale),
        "biller_address": street_address(rng, locale),
        "account": acct, "bill_number": bill_no, "statement_date": base, "due": due,
        "period": (period_start, period_end), "items": items, "current": current,
        "previous": prev, "payments": paid, "total": total, "url": url, "remit": remit,
        "multipage": multipage, "trap": trap,
        "meter": "M%08d" % rng.randint(0, 10 ** 8 - 1),
        "customer_no": "%07d" % rng.randint(0, 10 ** 7 - 1),
        "show_summary": True,
    }


# --- drawing -----------------------------------------------------------------

class Page:
    """A reportlab canvas with y measured from the top of the page."""

    def __init__(self, path, size, fonts):
        self.c = canvas.Canvas(path, pagesize=size, invariant=1, pageCompression=1)
        self.W, self.H = size
        self.reg, self.bold = fonts
        self.pages = 1

    def text(self, x, y, s, size=10, bold=False, align="l"):
        self.c.setFont(self.bold if bold else self.reg, size)
        if align == "r":
            self.c.drawRightString(x, self.H - y, s)
        elif align == "c":
            self.c.drawCentredString(x, self.H - y, s)
        else:
            self.c.drawString(x, self.H - y, s)

    def lines(self, x, y, rows, size=10, lead=None, bold=False):
        lead = lead or size * 1.3
        for r in rows:
            self.text(x, y, r, size, bold)
            y += lead
        return y

    def rule(self, x0, x1, y, width=0.6, dash=None):
        self.c.setLineWidth(width)
        if dash:
            self.c.setDash(*dash)
        self.c.line(x0, self.H - y, x1, self.H - y)
        self.c.setDash()

    def box(self, x, y, w, h, width=0.8, fill=None):
        self.c.setLineWidth(width)
        if fill is not None:
            self.c.setFillGray(fill)
            self.c.rect(x, self.H - y - h, w, h, stroke=1, fill=1)
            self.c.setFillGray(0)
        else:
            self.c.rect(x, self.H - y - h, w, h, stroke=1, fill=0)

    def kv(self, x, xr, y, rows, size=10, lead=None):
        """Label at x, value right-aligned at xr; a row (label, value, bold)."""
        lead = lead or size * 1.55
        for row in rows:
            label, value = row[0], row[1]
            bold = len(row) > 2 and row[2]
            self.text(x, y, label, size + (1 if bold else 0), bold)
            self.text(xr, y, value, size + (1 if bold else 0), bold, "r")
            y += lead
        return y

    def new_page(self):
        self.c.showPage()
        self.pages += 1

    def save(self):
        self.c.showPage()
        self.c.save()


def pick(rng, *choices):
    return rng.choice(choices)


class Labels:
    """One document's label vocabulary, drawn once per document."""

    def __init__(self, rng, layout, locale):
        uk = locale == "UK"
        voc = {
            "us_utility": dict(
                acct=["Account Number", "Account No.", "Account #"],
                stmt=["Statement Date", "Bill Date", "Date of Bill"],
                prev=["Previous Balance", "Balance from Last Bill"],
                paid=["Payment Received - Thank You", "Payments Received", "Payment(s) Received"],
                cur=["Current Charges", "Total Current Charges", "New Charges"],
                total=["Total Amount Due", "Amount Due", "Total Due"],
                due=["Due Date", "Payment Due Date", "Please Pay By"],
                period=["Service Period", "Billing Period", "Service From"],
                bill=["Bill Number", "Statement Number"]),
            "uk_energy": dict(
                acct=["Account number", "Your account number"],
                stmt=["Bill date", "Date of bill"],
                prev=["Balance brought forward", "Your last bill", "Previous balance"],
                paid=["Payments received", "Payment received, thank you"],
                cur=["Charges this period", "Your new charges", "Total charges"],
                total=["Amount to pay", "Total amount to pay", "Balance to pay"],
                due=["Please pay by", "Payment due by"],
                period=["Billing period", "Charges for the period"],
                bill=["Bill number", "Bill reference"]),
            "eu_energy": dict(
                acct=["Customer account", "Account number", "Contract account"],
                stmt=["Invoice date", "Date of issue"],
                prev=["Previous balance", "Balance carried forward"],
                paid=["Payments received", "Payments credited"],
                cur=["Current period charges", "Charges for this period"],
                total=["Amount payable", "Invoice total", "Total amount due"],
                due=["Due date", "Payable by", "Payment due"],
                period=["Billing period", "Supply period"],
                bill=["Invoice number", "Invoice no."]),
            "telecom": dict(
                acct=["Account number", "Account", "Billing account number"],
                stmt=["Invoice date", "Bill date"],
                prev=["Previous bill", "Balance forward", "Last invoice"],
                paid=["Payment received", "Payments - thank you"],
                cur=["New charges", "This month's charges", "Current invoice"],
                total=["Total due", "Total amount due", "Amount due"],
                due=["Payment due date", "Due by", "Due"],
                period=["Billing cycle", "Bill period"],
                bill=["Invoice number", "Invoice #", "Bill number"]),
            "water": dict(
                acct=["Account Number", "Customer Account"],
                stmt=["Billing Date", "Statement Date"],
                prev=["Balance from Last Bill", "Previous Balance"],
                paid=["Payments Applied", "Payments", "Payments received"],
                cur=["Water & Sewer Charges", "Current Charges", "Current period charges"],
                total=["Amount Due", "Total Due", "Total amount to pay" if uk else "Balance Due"],
                due=["Due By", "Due Date", "Please pay by" if uk else "Pay By"],
                period=["Reading Period", "Service Period"],
                bill=["Bill Number", "Invoice No."]),
            "stub": dict(
                acct=["ACCOUNT NUMBER", "Account Number"],
                stmt=["STATEMENT DATE", "Statement Date"],
                prev=["Previous Balance", "PREVIOUS BALANCE"],
                paid=["Payment Received", "PAYMENTS"],
                cur=["Current Charges", "CURRENT CHARGES"],
                total=["AMOUNT DUE", "TOTAL AMOUNT DUE"],
                due=["DUE DATE", "PAYMENT DUE"],
                period=["Service Period", "SERVICE PERIOD"],
                bill=["Statement No.", "BILL NUMBER"]),
            "two_column": dict(
                acct=["Account number", "Account"],
                stmt=["Statement date", "Date"],
                prev=["Previous balance", "Last bill"],
                paid=["Payments", "Payments received"],
                cur=["Current charges", "New charges this month"],
                total=["Total due", "Amount due", "Total amount due"],
                due=["Due date", "Payment due"],
                period=["For service", "Service period"],
                bill=["Bill no.", "Bill number"]),
            "table_heavy": dict(
                acct=["Account number", "Account ID", "Account No."],
                stmt=["Invoice date", "Statement date"],
                prev=["Previous balance", "Opening balance"],
                paid=["Payments received", "Payments"],
                cur=["Total current charges", "Current charges", "Total new charges"],
                total=["Balance due", "Total amount due", "Amount payable"],
                due=["Due date", "Payment due by"],
                period=["Billing period", "Period"],
                bill=["Invoice number", "Invoice No."]),
            "letter_multipage": dict(
                acct=["Account number", "Your account"],
                stmt=["Date", "Statement date"],
                prev=["Previous balance", "Balance at last statement"],
                paid=["Payments received", "Payments since last statement"],
                cur=["Charges this statement", "New charges", "Current charges"],
                total=["Total amount due", "Amount due", "Total to pay"],
                due=["Due date", "Please pay by", "Payment due"],
                period=["Statement period", "Period covered"],
                bill=["Statement number", "Reference"]),
        }[layout]
        for k, v in voc.items():
            setattr(self, k, rng.choice(v))


def period_text(rng, f, start, end):
    a, b = f.date(start), f.date(end)
    return rng.choice(["%s to %s" % (a, b), "%s - %s" % (a, b), "from %s to %s" % (a, b)])


def summary_rows(b, f, L, rng):
    """The balance rows: previous, payments, current, total (bold)."""
    rows = []
    if b["show_summary"]:
        rows.append((L.prev, f.amount(b["previous"])))
        paid = b["payments"]
        rows.append((L.paid, f.amount(paid, negative=paid > 0)))
        rows.append((L.cur, f.amount(b["current"])))
    rows.append((L.total, f.amount(b["total"]), True))
    return rows


def trap_lines(b, f, rng):
    """Lines that carry another amount next to the total: what a naive reader takes."""
    t = b["trap"]
    cur = b["currency"]
    if t == "late_amount":
        fee = money(cur, rand_amount(rng, cur, 5, 25))
        return ["Amount due after %s: %s" % (f.date(b["due"]), f.amount(b["total"] + fee)),
                "A late payment charge of %s applies after the due date." % f.amount(fee)]
    if t == "budget":
        return ["Your budget plan amount: %s" % f.amount(money(cur, b["total"] * Decimal("1.3"))),
                "Average monthly bill last 12 months: %s" % f.amount(money(cur, b["current"] * Decimal("0.9")))]
    if t == "minimum_payment":
        return ["Minimum payment to avoid disconnection: %s" % f.amount(money(cur, b["total"] / 3))]
    if t == "prior_bill_amount":
        return ["Last bill amount %s was issued on %s" % (
            f.amount(b["previous"]), f.date(b["statement_date"] - datetime.timedelta(days=30)))]
    return []


def draw_items(p, x, xr, y, b, f, L, size=9.5, title=None, total_row=True):
    if title:
        p.text(x, y, title, size + 1.5, True)
        y += size * 1.8
    for it in b["items"]:
        a = it["amount"]
        p.text(x + 6, y, it["description"], size)
        p.text(xr, y, f.amount(-a if a < 0 else a, negative=a < 0), size, align="r")
        y += size * 1.5
    if total_row:
        p.rule(xr - 90, xr, y - size * 0.9)
        label = "Total" if b["trap"] == "items_total" else L.cur
        p.text(x + 6, y + 2, label, size, True)
        p.text(xr, y + 2, f.amount(b["current"]), size, True, "r")
        y += size * 1.8
    return y


def header(p, b, f, L, rng, x=40, y=54, caps=False):
    name = b["payee"].upper() if caps else b["payee"]
    size = 20
    while size > 12 and pdfmetrics.stringWidth(name, p.bold, size) > 270:
        size -= 1
    p.text(x, y, name, size, True)
    p.lines(x, y + 16, b["biller_address"], 8)
    return y


def customer_block(p, b, x, y, title=None):
    if title:
        p.text(x, y, title, 8, True)
        y += 12
    return p.lines(x, y, [b["customer"]] + b["service_address"], 10)


def footer_url_remit(p, b, f, rng, x, y, remit_label=None):
    if b["url"]:
        p.text(x, y, rng.choice(["Pay online at ", "Pay online: ", "View and pay your bill at "]) + b["url"], 9)
        y += 14
    if b["remit"]:
        p.text(x, y, remit_label or rng.choice(["Remit payment to:", "Please send payments to:",
                                                "Mail payments to:"]), 9, True)
        y = p.lines(x, y + 12, b["remit"], 9)
    return y


def render_us_utility(p, b, f, L, rng):
    header(p, b, f, L, rng, caps=rng.random() < 0.3)
    r = p.W - 40
    rows = [(L.acct, b["account"]), (L.stmt, f.date(b["statement_date"]))]
    if b["bill_number"]:
        rows.append((L.bill, b["bill_number"]))
    p.kv(330, r, 56, rows, 9.5)
    customer_block(p, b, 40, 130, "SERVICE ADDRESS")
    p.text(330, 135, "%s: %s" % (L.period, period_text(rng, f, *b["period"])), 8.5)
    p.box(30, 180, 280, 140)
    p.text(40, 198, "Account Summary", 12, True)
    y = p.kv(40, 300, 222, summary_rows(b, f, L, rng))
    p.text(40, y, "%s: %s" % (L.due, f.date(b["due"])), 10, True)
    p.box(330, 180, p.W - 370, 80, fill=0.93)
    p.text(340, 204, L.total, 11, True)
    p.text(r - 10, 232, f.amount(b["total"]), 18, True, "r")
    p.text(340, 252, "%s %s" % (L.due, f.date(b["due"])), 9)
    y = 290
    for line in trap_lines(b, f, rng):
        p.text(330, y, line, 8.5)
        y += 12
    y = draw_items(p, 40, r, 350, b, f, L, title="Details of Current Charges")
    p.text(40, y + 10, "Meter number %s   Customer number %s" % (b["meter"], b["customer_no"]), 8)
    footer_url_remit(p, b, f, rng, 40, max(y + 40, 640))


def render_uk_energy(p, b, f, L, rng):
    header(p, b, f, L, rng)
    r = p.W - 40
    p.text(r, 54, "Your energy bill", 14, True, "r")
    rows = [(L.acct, b["account"]), (L.stmt, f.date(b["statement_date"]))]
    if b["bill_number"]:
        rows.append((L.bill, b["bill_number"]))
    p.kv(320, r, 80, rows, 9.5)
    customer_block(p, b, 40, 130)
    p.box(300, 150, r - 300, 70, fill=0.9)
    p.text(312, 172, L.total, 12, True)
    p.text(r - 12, 172, f.amount(b["total"]), 16, True, "r")
    p.text(312, 198, "%s %s" % (L.due, f.date(b["due"])), 11, True)
    p.text(40, 240, "%s %s" % (L.period, period_text(rng, f, *b["period"])), 10)
    p.text(40, 270, "Your account balance", 12, True)
    y = p.kv(40, 330, 292, summary_rows(b, f, L, rng))
    for line in trap_lines(b, f, rng):
        p.text(40, y, line, 9)
        y += 13
    y = draw_items(p, 40, 330, y + 16, b, f, L, title="What you are paying for")
    p.text(360, 292, "Meter serial number", 8, True)
    p.text(360, 304, b["meter"], 9)
    p.text(360, 326, "Direct debit, card or bank transfer:", 8)
    p.text(360, 338, "Sort code 20-00-00 Ref " + b["account"].replace(" ", ""), 8)
    footer_url_remit(p, b, f, rng, 40, max(y + 24, 660))


def render_eu_energy(p, b, f, L, rng):
    header(p, b, f, L, rng)
    r = p.W - 40
    p.text(r, 54, "INVOICE", 16, True, "r")
    rows = [(L.bill, b["bill_number"] or "-"), (L.stmt, f.date(b["statement_date"])),
            (L.acct, b["account"]), ("Customer number", b["customer_no"])]
    p.kv(330, r, 80, rows, 9)
    customer_block(p, b, 40, 140)
    p.text(40, 210, "%s: %s" % (L.period, period_text(rng, f, *b["period"])), 10)
    p.text(40, 232, "Metering point " + b["meter"], 8.5)
    y = draw_items(p, 40, r, 262, b, f, L, size=9.5, title="Charges")
    p.rule(40, r, y)
    y = p.kv(300, r, y + 18, summary_rows(b, f, L, rng), 10)
    p.text(300, y + 4, "%s: %s" % (L.due, f.date(b["due"])), 11, True)
    y += 24
    for line in trap_lines(b, f, rng):
        p.text(40, y, line, 9)
        y += 13
    p.text(40, y + 14, "IBAN DE12 5001 0517 0648 4898 90   BIC INGDDEFFXXX", 8)
    footer_url_remit(p, b, f, rng, 40, max(y + 40, 680))


def render_telecom(p, b, f, L, rng):
    header(p, b, f, L, rng, caps=rng.random() < 0.5)
    r = p.W - 40
    p.text(r, 54, "Your monthly invoice", 13, True, "r")
    rows = [(L.bill, b["bill_number"] or "-"), (L.acct, b["account"]),
            (L.stmt, f.date(b["statement_date"])), (L.period, period_text(rng, f, *b["period"]))]
    p.kv(300, r, 78, rows, 9)
    customer_block(p, b, 40, 130)
    p.text(40, 200, "Summary", 13, True)
    p.rule(40, r, 206)
    y = p.kv(40, r, 226, summary_rows(b, f, L, rng), 10.5)
    p.text(40, y, "%s %s" % (L.due, f.date(b["due"])), 11, True)
    y += 18
    for line in trap_lines(b, f, rng):
        p.text(40, y, line, 9)
        y += 13
    y = draw_items(p, 40, r, y + 20, b, f, L, title="Charges by line")
    p.text(40, y + 6, "Mobile number 07700 900%03d   Data used 14.2 GB of unlimited" % rng.randint(0, 999), 8.5)
    footer_url_remit(p, b, f, rng, 40, max(y + 40, 660))


def render_water(p, b, f, L, rng):
    header(p, b, f, L, rng)
    r = p.W - 40
    p.kv(330, r, 56, [(L.acct, b["account"]), (L.stmt, f.date(b["statement_date"]))]
         + ([(L.bill, b["bill_number"])] if b["bill_number"] else []), 9.5)
    customer_block(p, b, 40, 130, "SERVICE LOCATION")
    p.text(40, 200, "Meter Reading Information", 11, True)
    cols = [40, 130, 230, 330, 430]
    heads = ["Meter", "Previous read", "Current read", "Usage", "Read dates"]
    for x, h in zip(cols, heads):
        p.text(x, 218, h, 8.5, True)
    prev_read = rng.randint(10000, 90000)
    use = rng.randint(2, 18)
    unit = "m3" if b["locale"] == "UK" else "kgal"
    vals = [b["meter"], str(prev_read), str(prev_read + use), "%d %s" % (use, unit),
            "%s - %s" % (f.date(b["period"][0]), f.date(b["period"][1]))]
    for x, v in zip(cols, vals):
        p.text(x, 232, v, 8.5)
    p.rule(40, r, 240)
    p.text(40, 262, "%s: %s" % (L.period, period_text(rng, f, *b["period"])), 9.5)
    y = draw_items(p, 40, 300, 290, b, f, L, title="Current Charges")
    p.box(330, 282, r - 330, 130)
    yy = p.kv(340, r - 10, 302, summary_rows(b, f, L, rng), 9.5)
    p.text(340, yy, "%s %s" % (L.due, f.date(b["due"])), 10, True)
    y = max(y, yy + 30)
    for line in trap_lines(b, f, rng):
        p.text(40, y, line, 9)
        y += 13
    p.text(40, y + 10, "Usage history: average %d %s per day" % (rng.randint(80, 400), "litres" if unit == "m3" else "gallons"), 8.5)
    footer_url_remit(p, b, f, rng, 40, max(y + 36, 640))


def render_stub(p, b, f, L, rng):
    header(p, b, f, L, rng, caps=True)
    r = p.W - 40
    p.kv(330, r, 56, [(L.acct, b["account"]), (L.stmt, f.date(b["statement_date"]))]
         + ([(L.bill, b["bill_number"])] if b["bill_number"] else []), 9)
    customer_block(p, b, 40, 120)
    p.text(40, 186, "%s %s" % (L.period, period_text(rng, f, *b["period"])), 9)
    y = p.kv(40, 290, 214, summary_rows(b, f, L, rng), 9.5)
    p.text(40, y, "%s %s" % (L.due, f.date(b["due"])), 9.5, True)
    y = draw_items(p, 320, r, 214, b, f, L, size=9, title="Charge details")
    y2 = 420
    for line in trap_lines(b, f, rng):
        p.text(40, y2, line, 9)
        y2 += 13
    if b["url"]:
        p.text(40, y2 + 10, "Pay online: " + b["url"], 9)
    # the stub
    p.rule(20, p.W - 20, 560, 0.8, dash=(4, 3))
    p.text(p.W / 2, 572, "Please detach and return this portion with your payment", 7.5, align="c")
    p.text(40, 598, b["payee"].upper(), 12, True)
    cols = [(40, L.acct, b["account"]), (210, L.due, f.date(b["due"])),
            (330, L.total, f.amount(b["total"])), (460, "AMOUNT ENCLOSED", "_________")]
    for x, lab, val in cols:
        p.text(x, 622, lab, 7.5, True)
        p.text(x, 638, val, 11, lab == L.total)
    p.text(40, 670, "Make checks payable to " + b["payee"], 8)
    p.lines(330, 672, b["remit"] or [], 10)
    p.lines(40, 690, [b["customer"]] + b["service_address"], 9)


def render_two_column(p, b, f, L, rng):
    header(p, b, f, L, rng)
    r = p.W - 40
    p.text(40, 110, "%s %s" % (L.acct, b["account"]), 10, True)
    p.text(40, 124, "%s %s" % (L.stmt, f.date(b["statement_date"])), 9.5)
    if b["bill_number"]:
        p.text(40, 138, "%s %s" % (L.bill, b["bill_number"]), 9.5)
    customer_block(p, b, 40, 166)
    p.text(40, 226, "%s %s" % (L.period, period_text(rng, f, *b["period"])), 9)
    y = draw_items(p, 40, 270, 256, b, f, L, size=9, title="Your charges")
    for line in trap_lines(b, f, rng):
        p.text(40, y, line, 8.5)
        y += 12
    # the summary box on the right
    bx = 290
    p.box(bx, 100, r - bx, 170, fill=0.95)
    p.text(bx + 10, 120, "Account summary", 12, True)
    rows = summary_rows(b, f, L, rng)
    rows[-1] = ("%s by %s" % (L.total, f.date(b["due"])), rows[-1][1], True)
    p.kv(bx + 10, r - 10, 144, rows, 9, 20)
    footer_url_remit(p, b, f, rng, 40, max(y + 24, 480))


def render_table_heavy(p, b, f, L, rng):
    def page_head(first):
        p.text(40, 50, b["payee"], 16, True)
        p.text(p.W - 40, 50, "Page %d" % p.pages, 8, align="r")
        p.text(p.W - 40, 62, "%s %s" % (L.acct, b["account"]), 8, align="r")
        if first:
            rows = [(L.bill, b["bill_number"] or "-"), (L.stmt, f.date(b["statement_date"])),
                    (L.acct, b["account"]), (L.period, period_text(rng, f, *b["period"]))]
            p.kv(300, p.W - 40, 90, rows, 9)
            customer_block(p, b, 40, 90)
            return 170
        return 90
    y = page_head(True)
    cols = [40, 300, 360, 440, p.W - 40]
    def table_head(y):
        p.box(36, y - 11, p.W - 72, 16, 0.5, fill=0.88)
        for x, h in zip(cols, ["Description", "Qty", "Unit price", "Category"]):
            p.text(x + 2, y, h, 8.5, True)
        p.text(cols[-1] - 2, y, "Amount", 8.5, True, "r")
        return y + 18
    y = table_head(y)
    for it in b["items"]:
        if y > p.H - 90:
            p.text(p.W - 40, y + 10, "continued on next page", 8, align="r")
            p.new_page()
            y = table_head(page_head(False))
        a = it["amount"]
        p.text(cols[0] + 2, y, it["description"][:44], 8.5)
        p.text(cols[1] + 2, y, "1", 8.5)
        p.text(cols[2] + 2, y, f.amount(abs(a), bare=True), 8.5)
        p.text(cols[3] + 2, y, it["category"], 8.5)
        p.text(cols[4] - 2, y, f.amount(-a if a < 0 else a, negative=a < 0), 8.5, align="r")
        p.rule(36, p.W - 36, y + 4, 0.2)
        y += 14
    label = "Total" if b["trap"] == "items_total" else L.cur
    p.text(cols[0] + 2, y + 4, label, 9, True)
    p.text(cols[4] - 2, y + 4, f.amount(b["current"]), 9, True, "r")
    y += 30
    if y > p.H - 200:
        p.new_page()
        y = page_head(False)
    p.text(40, y, "Summary", 12, True)
    y = p.kv(40, 320, y + 22, summary_rows(b, f, L, rng), 10)
    p.text(40, y, "%s %s" % (L.due, f.date(b["due"])), 10.5, True)
    y += 18
    for line in trap_lines(b, f, rng):
        p.text(40, y, line, 9)
        y += 13
    footer_url_remit(p, b, f, rng, 40, y + 14)


def render_letter_multipage(p, b, f, L, rng):
    header(p, b, f, L, rng)
    r = p.W - 40
    p.kv(330, r, 56, [(L.acct, b["account"]), (L.stmt, f.date(b["statement_date"]))]
         + ([(L.bill, b["bill_number"])] if b["bill_number"] else []), 9.5)
    y = customer_block(p, b, 40, 130)
    y += 20
    text = [
        "Dear %s," % b["customer"],
        "",
        "Thank you for being a customer. This statement covers the %s" % L.period.lower(),
        "%s." % period_text(rng, f, *b["period"]),
        "The details of your charges are below; your account summary and the",
        "amount to pay are on the next page.",
    ]
    if not b["multipage"]:
        text[-2:] = ["The details of your charges and your account summary are below."]
    y = p.lines(40, y, text, 10, 14)
    y = draw_items(p, 40, r, y + 20, b, f, L, title="Details of your charges")
    p.text(40, y + 10, "Meter %s. Estimated readings are marked E." % b["meter"], 8.5)
    if b["multipage"]:
        p.text(p.W / 2, p.H - 40, "Page 1 of 2", 8, align="c")
        p.new_page()
        p.text(40, 54, b["payee"], 14, True)
        p.text(r, 54, "%s %s" % (L.acct, b["account"]), 9, align="r")
        y = 100
    else:
        y += 40
    p.text(40, y, "Your account summary", 13, True)
    y = p.kv(40, 360, y + 26, summary_rows(b, f, L, rng), 10.5)
    p.text(40, y + 4, "%s %s" % (L.due, f.date(b["due"])), 11, True)
    y += 26
    for line in trap_lines(b, f, rng):
        p.text(40, y, line, 9)
        y += 13
    footer_url_remit(p, b, f, rng, 40, y + 20)
    if b["multipage"]:
        p.text(p.W / 2, p.H - 40, "Page 2 of 2", 8, align="c")


RENDER = {
    "us_utility": render_us_utility, "uk_energy": render_uk_energy,
    "eu_energy": render_eu_energy, "telecom": render_telecom, "water": render_water,
    "stub": render_stub, "two_column": render_two_column, "table_heavy": render_table_heavy,
    "letter_multipage": render_letter_multipage,
}


def render_pdf(path, b, f, rng):
    size = A4 if b["locale"] in ("UK", "EU") else letter
    p = Page(path, size, rng.choice(FONTS))
    L = Labels(rng, b["layout"], b["locale"])
    if b["trap"] == "big_current":
        L.cur = "Total current charges"
    RENDER[b["layout"]](p, b, f, L, rng)
    if b["currency"] == "CAD" and f.sym == ("$", ""):
        p.text(40, p.H - 24, "All amounts are in Canadian dollars (CAD).", 7.5)
    if b["trap"] == "big_current":
        p.text(p.W - 40, p.H - 60, "This month: %s" % f.amount(b["current"]), 16, True, "r")
    pages = p.pages
    p.save()
    return pages


# --- scanning ----------------------------------------------------------------

def degrade(rng, img, dpi):
    """A page as a scanner might give it: rotated, blurred, specked."""
    img = img.convert("L")
    angle = rng.choice([0, rng.uniform(-1.5, 1.5), rng.uniform(-5, 5)])
    if angle:
        img = img.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=255)
    radius = rng.uniform(0.3, 1.0) * dpi / 300
    img = img.filter(ImageFilter.GaussianBlur(radius))
    w, h = img.size
    amp = rng.randint(6, 22)
    noise = Image.frombytes("L", (w, h), rng.randbytes(w * h))
    noise = noise.point(lambda v: 128 + (v - 128) * amp // 128)
    img = ImageChops.add(img, noise, scale=1.0, offset=-128)
    sw, sh = w // 3, h // 3                  # dust: rare 3x3 specks, ~1 in 4096 cells
    specks = ImageChops.lighter(
        Image.frombytes("L", (sw, sh), rng.randbytes(sw * sh)).point(lambda v: 0 if v < 2 else 255),
        Image.frombytes("L", (sw, sh), rng.randbytes(sw * sh)).point(lambda v: 0 if v < 8 else 255))
    img = ImageChops.darker(img, specks.resize((w, h), Image.NEAREST))
    return img, angle, radius, amp


def rasterize(pdf, dpi, tmp):
    out = os.path.join(tmp, "page-%d.png")
    run = subprocess.run(["mutool", "draw", "-q", "-r", str(dpi), "-c", "gray", "-o", out, pdf],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.exit("gen.py: mutool draw %s: %s" % (pdf, run.stderr.strip()))
    pages = []
    n = 1
    while os.path.exists(out % n):
        with Image.open(out % n) as im:
            pages.append(im.copy())
        n += 1
    return pages


def write_scan(rng, kind, pdf, dest, tmp):
    dpi = rng.choice([150, 200, 240, 300, 300])
    pages = rasterize(pdf, dpi, tmp)
    done = [degrade(rng, im, dpi) for im in pages]
    info = {"dpi": dpi, "rotation": [round(d[1], 2) for d in done],
            "blur": [round(d[2], 2) for d in done], "noise": [d[3] for d in done]}
    if kind == "png":
        done[0][0].save(dest, "PNG", dpi=(dpi, dpi), optimize=False)
    elif kind == "jpg":
        q = rng.randint(60, 90)
        info["jpeg_quality"] = q
        done[0][0].save(dest, "JPEG", dpi=(dpi, dpi), quality=q)
    else:
        first = done[0][0]
        c = canvas.Canvas(dest, pagesize=(first.width * 72 / dpi, first.height * 72 / dpi),
                          invariant=1, pageCompression=1)
        q = rng.randint(70, 90)
        info["jpeg_quality"] = q
        for im, *_ in done:
            c.setPageSize((im.width * 72 / dpi, im.height * 72 / dpi))
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=q)
            buf.seek(0)
            c.drawImage(ImageReader(buf), 0, 0, im.width * 72 / dpi, im.height * 72 / dpi)
            c.showPage()
        c.save()
    return info


# --- ground truth ---------------------------------------------------------------

def amount_obj(cur, v):
    return None if v is None else {"value": dec(cur, v), "currency": cur}


def truth(b, name, kind, pages, scan):
    cur = b["currency"]
    shown = b["show_summary"]
    return {
        "file": name,
        "kind": "image" if kind in ("png", "jpg") else kind,
        "content_type": CONTENT_TYPE[kind],
        "layout": b["layout"],
        "locale": b["locale"],
        "pages": pages,
        "multipage": pages > 1,
        "trap": b["trap"],
        "scan": scan,
        "payee_name": b["payee"],
        "account_number": b["account"],
        "bill_number": b["bill_number"],
        "total_amount": amount_obj(cur, b["total"]),
        "currency": cur,
        "due_date_iso": b["due"].isoformat(),
        "statement_date": b["statement_date"].isoformat(),
        "service_period": {"start_date": b["period"][0].isoformat(),
                           "end_date": b["period"][1].isoformat()},
        "previous_balance": amount_obj(cur, b["previous"]) if shown else None,
        "payments_received": amount_obj(cur, b["payments"]) if shown else None,
        "current_charges": amount_obj(cur, b["current"]) if shown else None,
        "line_items": [{"description": i["description"], "amount": amount_obj(cur, i["amount"]),
                        "category": i["category"]} for i in b["items"]],
        "remit_to_address": {"lines": b["remit"], "text": ", ".join(b["remit"])} if b["remit"] else None,
        "payment_url": b["url"],
    }


def plan(count):
    """(layout, kind, trap) for every document: the layouts in turn, each
    through the kinds in turn (half text PDFs, the rest scans), a trap on
    every seventh."""
    cycle = ["text_pdf", "scan_pdf", "text_pdf", "png", "text_pdf", "jpg"]
    out = []
    for i in range(count):
        li = i % len(LAYOUTS)
        kind = cycle[(i // len(LAYOUTS) + li) % len(cycle)]
        trap = TRAPS[(i // 7) % len(TRAPS)] if i % 7 == 3 else None
        out.append((LAYOUTS[li], kind, trap))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="directory to write (created)")
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--count", type=int, default=96)
    args = ap.parse_args()
    if args.count < 1:
        ap.error("--count must be at least 1")
    if shutil.which("mutool") is None:
        sys.exit("gen.py: mutool (mupdf-tools) is needed to render the scans")
    os.makedirs(args.out, exist_ok=True)
    index = []
    with tempfile.TemporaryDirectory(prefix="bds-corpus-") as tmp:
        for i, (layout, kind, trap) in enumerate(plan(args.count)):
            rng = random.Random("%d/%d" % (args.seed, i))
            b = make_bill(rng, i, layout, kind, trap)
            f = Fmt(rng, b["locale"], b["currency"])
            name = "%03d-%s-%s" % (i, layout.replace("_", "-"), b["locale"].lower())
            ext = {"text_pdf": "pdf", "scan_pdf": "pdf", "png": "png", "jpg": "jpg"}[kind]
            name += "-scan" if kind == "scan_pdf" else ""
            fname = "%s.%s" % (name, ext)
            dest = os.path.join(args.out, fname)
            src = dest if kind == "text_pdf" else os.path.join(tmp, "src-%d.pdf" % i)
            pages = render_pdf(src, b, f, rng)
            scan = None
            if kind != "text_pdf":
                page_dir = os.path.join(tmp, "r%d" % i)
                os.mkdir(page_dir)
                scan = write_scan(rng, kind, src, dest, page_dir)
                if kind != "scan_pdf":
                    pages = 1
            t = truth(b, fname, kind, pages, scan)
            t["date_style"] = f.date_style
            t["number_style"] = f.num
            with open(os.path.join(args.out, name + ".json"), "w") as out:
                json.dump(t, out, indent=1, ensure_ascii=False)
                out.write("\n")
            index.append({"file": fname, "truth": name + ".json", "kind": t["kind"],
                          "content_type": t["content_type"], "layout": layout,
                          "locale": b["locale"], "pages": pages, "trap": trap})
    with open(os.path.join(args.out, "index.json"), "w") as out:
        json.dump({"generator": "t/corpus/gen.py", "seed": args.seed, "count": args.count,
                   "documents": index}, out, indent=1)
        out.write("\n")
    kinds = {}
    for d in index:
        kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
    print("gen.py: %d documents in %s (%s)" % (len(index), args.out,
          ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))


if __name__ == "__main__":
    main()
