#!/usr/bin/env python3
"""Generate data/billers.csv, the shipped biller catalog (DOMAIN.md "Billers").

The CSV is the shipped data; this script only made it. Ids are fixed per
entry (never derived from a position that could shift): the sandbox billers
have the contract's ids blr_01900000-0000-7000-8000-00000000000N, the rest
blr_01900001-0000-7000-8000-<serial>, where serial is the entry's number in
the lists below; append new entries at the end of a list's serial range,
never renumber. Domains use .example (the names are real-world-shaped, not
real companies' sites).

    python3 data/gen-billers.py > data/billers.csv
"""
import csv
import sys
import unicodedata

HEADER = ["id", "name", "type", "status", "domains", "website", "login_url", "logo_url",
          "country", "connectivity_types", "consent_scopes", "capabilities", "connector",
          "base_url"]
ALL_SCOPES = "bills|statements|payment_history|usage|account_details|payments"
SANDBOX_CAPS = "bills|statements|payment_history|usage|mfa"

SANDBOX = [
    (1, "Sandbox Power & Light", "electric", "sandbox-power.example"),
    (2, "Sandbox Water Works", "water", "sandbox-water.example"),
    (3, "Sandbox Gas Co.", "gas", "sandbox-gas.example"),
    (4, "Sandbox Mobile", "mobile", "sandbox-mobile.example"),
    (5, "Sandbox Internet", "internet", "sandbox-internet.example"),
    (6, "Sandbox Insurance", "insurance", "sandbox-insurance.example"),
]

# Hand-written billers: (name, type, country, domains or None for a slug).
NAMED = [
    ("Pacific Gas and Electric", "electric", "US", "pge.example|pacificgas.example"),
    ("Électricité de France", "electric", "FR", "edf.example"),
    ("Compañía de Aguas de Córdoba", "water", "ES", "aguascordoba.example"),
    ("Wasserwerke Düsseldorf", "water", "DE", "wasser-duesseldorf.example"),
    ("Énergie Québec-Sud", "electric", "CA", "energie-quebec-sud.example"),
    ("São Paulo Gás Natural", "gas", "BR", "spgas.example"),
    ("Øresund Energi A/S", "electric", "DK", "oresund-energi.example"),
    ("O'Brien Waste & Recycling", "waste", "IE", "obrien-waste.example"),
    ("Consolidated Edison \"ConEd\"", "electric", "US", "coned.example|conedison.example"),
    ("Thames Valley Water", "water", "GB", "thamesvalleywater.example"),
    ("Große Stadtwerke München", "electric", "DE", "swm.example"),
    ("Mälardalens Energi", "electric", "SE", "malarenergi.example"),
    ("Zürich Wasserversorgung", "water", "CH", "wvz.example"),
    ("Acqua Pública di Torino", "water", "IT", "acquatorino.example"),
    ("Kraków Ciepło i Gaz", "gas", "PL", "krakow-gaz.example"),
    ("Northwind Telecom, LLC", "phone", "US", "northwind-telecom.example"),
    ("Vodacell Mobile", "mobile", "GB", "vodacell.example|vodacell-business.example"),
    ("Bell Fibre & TV", "cable", "CA", "bellfibre.example"),
    ("Telstra-like Broadband Pty", "internet", "AU", "tlbroadband.example"),
    ("Kiwi Power Co-op", "electric", "NZ", "kiwipower.example"),
    ("Mutual Home Insurance", "insurance", "US", "mutualhome.example"),
    ("Assurances Crédit Agricole-ish", "insurance", "FR", "assur-ca.example"),
    ("Citywide Sewer Authority", "sewer", "US", "citywidesewer.example"),
    ("Municipal Refuse & Recycling Dept.", "waste", "US", "refuse-dept.example"),
    ("Comcastle Xfinite", "cable", "US", "xfinite.example"),
    ("Verizen Wireless", "mobile", "US", "verizen.example"),
    ("T-Mobilé Nederland", "mobile", "NL", "tmobile-nl.example"),
    ("Iberdrola-Sur Energía", "electric", "ES", "iberdrola-sur.example"),
    ("Enel Energía Italia", "electric", "IT", "enel-energia.example"),
    ("HomeShield Warranty", "other", "US", "homeshield.example"),
    ("Duke Power & Light", "electric", "US", "dukepower.example"),
    ("Southern California Edisun", "electric", "US", "sce.example"),
    ("National Grid Gas", "gas", "GB", "nationalgrid-gas.example"),
    ("British Gaz", "gas", "GB", "britishgaz.example"),
    ("Ørsted Varme", "gas", "DK", "orsted-varme.example"),
    ("Eau de Paris", "water", "FR", "eaudeparis.example"),
    ("Aguas Andinas S.A.", "water", "CL", "aguasandinas.example"),
    ("Telefónica Móviles México", "mobile", "MX", "telefonica-mx.example"),
    ("Rogers Cable & Internet", "cable", "CA", "rogers-cable.example"),
    ("Shaw Direct TV", "cable", "CA", "shawdirect.example"),
    ("Optimum Fiber", "internet", "US", "optimum-fiber.example"),
    ("Spectrum Home Phone", "phone", "US", "spectrum-phone.example"),
    ("State Farmstead Insurance", "insurance", "US", "statefarmstead.example"),
    ("Allstate-ish Auto & Home", "insurance", "US", "allstateish.example"),
    ("Waste Managers Inc.", "waste", "US", "wastemanagers.example"),
    ("Republic Recycling Services", "waste", "US", "republic-recycling.example"),
    ("Metro Sewer District", "sewer", "US", "msd.example"),
    ("Wiener Netze Strom", "electric", "AT", "wienernetze.example"),
    ("Ελληνική Ενέργεια (Hellenic Energy)", "electric", "GR", "hellenic-energy.example"),
    ("Tokyo Denryoku Services", "electric", "JP", "tokyo-denryoku.example"),
]

# Generated regional billers: place x pattern, deterministic.
PLACES = [
    ("Springfield", "US"), ("Riverside", "US"), ("Fairview", "US"), ("Greenville", "US"),
    ("Franklin", "US"), ("Madison", "US"), ("Georgetown", "US"), ("Clinton", "US"),
    ("Salem", "US"), ("Arlington", "US"), ("Ashland", "US"), ("Dover", "US"),
    ("Oakland Hills", "US"), ("Lakewood", "US"), ("Cedar Falls", "US"), ("Bristol", "GB"),
    ("Manchester", "GB"), ("Leeds", "GB"), ("Cardiff", "GB"), ("Glasgow", "GB"),
    ("Montréal", "CA"), ("Trois-Rivières", "CA"), ("Hamilton", "CA"), ("Lyon", "FR"),
    ("Nîmes", "FR"), ("Besançon", "FR"), ("Köln", "DE"), ("Nürnberg", "DE"),
    ("Málaga", "ES"), ("A Coruña", "ES"), ("Göteborg", "SE"), ("Tromsø", "NO"),
]
PATTERNS = [
    ("{p} Electric Cooperative", "electric", "credentials"),
    ("{p} Natural Gas", "gas", "credentials"),
    ("{p} Water Utility", "water", "credentials|document"),
    ("{p} Sewer & Stormwater", "sewer", "document"),
    ("{p} Waste Collection", "waste", "credentials"),
    ("{p} Fiber Internet", "internet", "credentials|oauth"),
    ("{p} Wireless", "mobile", "oauth|credentials"),
    ("{p} Telephone Co.", "phone", "credentials"),
    ("{p} Cablevision", "cable", "credentials"),
    ("{p} Mutual Insurance", "insurance", "credentials"),
]
SCOPE_SETS = ["bills|statements|payment_history", "bills|statements|usage",
              "bills|statements|payment_history|usage|account_details",
              ALL_SCOPES, "bills|statements"]
CAP_SETS = ["bills|statements|payment_history", "bills|statements|usage|mfa",
            "bills|statements|payment_history|usage|pay", "bills|statements",
            "bills|statements|payment_history|mfa"]


def slug(name):
    s = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    out, dash = [], False
    for ch in s:
        if ch.isalnum():
            out.append(ch)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    return "".join(out).strip("-")[:60].strip("-")


def main():
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(HEADER)
    for n, name, typ, dom in SANDBOX:
        w.writerow([f"blr_01900000-0000-7000-8000-{n:012x}", name, typ, "ACTIVE", dom,
                    f"https://{dom}", f"https://{dom}/login", "", "US", "credentials",
                    ALL_SCOPES, SANDBOX_CAPS, "sandbox", ""])
    entries = [(name, typ, country, dom, "credentials") for name, typ, country, dom in NAMED]
    for p, country in PLACES:
        for pat, typ, conn in PATTERNS:
            entries.append((pat.format(p=p), typ, country, None, conn))
    for serial, (name, typ, country, dom, conn) in enumerate(entries, start=1):
        domains = dom or f"{slug(name)}.example"
        first = domains.split("|")[0]
        status = "UNSUPPORTED" if serial % 41 == 0 else "DEGRADED" if serial % 17 == 0 \
            else "ACTIVE"
        logo = f"https://{first}/logo.png" if serial % 3 else ""
        w.writerow([f"blr_01900001-0000-7000-8000-{serial:012x}", name, typ, status, domains,
                    f"https://{first}", f"https://{first}/login", logo, country, conn,
                    SCOPE_SETS[serial % len(SCOPE_SETS)], CAP_SETS[serial % len(CAP_SETS)],
                    "portal", f"https://{first}/bpp/v1"])


if __name__ == "__main__":
    main()
