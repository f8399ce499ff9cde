#!/usr/bin/python3
"""Hostile documents for bds-extract, and one good one.

    hostile.py OUTDIR

writes one file a case into OUTDIR and OUTDIR/cases.json:

    {"<file>": {"type": "<the content type to declare>",
                "outcome": "extracted" | "rejected",
                "rejection_reason": "<code>" | null,
                "upload": true | false}}   # false: over the 20 MiB upload cap

Python's standard library only (PIL, a Debian python3 module, for the one
real JPEG when it is there; without it that case is left out). Used by
t/imports/extract.test and the jobs runner's end-to-end suite.
"""
import json
import os
import struct
import sys
import zipfile
import io
import zlib


def pdf(objects, root=1, trailer_extra=b"", tail=b""):
    """A PDF of objects (bytes bodies, numbered from 1) with a correct xref."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, root, trailer_extra, xref)
    return bytes(out) + tail


def stream(data, extra=b""):
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
BILL = [
    "Riverside Water Utility",
    "PO Box 500, Springfield, IL 62704",
    "Account number: 4417-2210-09",
    "Statement date: 11/02/2026",
    "Previous balance $80.00",
    "Payment received -$80.00",
    "Current charges $57.25",
    "Total amount due $57.25",
    "Due date: 12/01/2026",
]


def text_content(lines):
    ops = [b"BT /F1 12 Tf 72 760 Td 16 TL"]
    for line in lines:
        ops.append(b"(%s) Tj T*" % line.encode().replace(b"(", b"\\(").replace(b")", b"\\)"))
    ops.append(b"ET")
    return b"\n".join(ops)


def page_pdf(content, catalog_extra=b"", page_extra=b"", more=(), content_extra=b"",
             count=1, tail=b"", trailer_extra=b""):
    """Catalog 1, Pages 2, Page 3, content 4, font 5, then `more` (6...)."""
    return pdf([
        b"<< /Type /Catalog /Pages 2 0 R " + catalog_extra + b">>",
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> " + page_extra + b">> >>",
        stream(content, content_extra),
        FONT,
    ] + list(more), tail=tail, trailer_extra=trailer_extra)


def good():
    return page_pdf(text_content(BILL))


def zip_bomb():
    """A page whose content stream inflates to 1 GiB of zeros (about 1 MB here)."""
    z = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    data = b"".join(z.compress(chunk) for _ in range(1024)) + z.flush()
    return page_pdf(data, content_extra=b"/Filter /FlateDecode ")


def many_pages():
    """A page tree that claims 100,000 pages and holds one."""
    return page_pdf(text_content(BILL), count=100000)


def javascript():
    return page_pdf(text_content(BILL),
                    catalog_extra=b"/OpenAction 6 0 R ",
                    more=[b"<< /Type /Action /S /JavaScript /JS (app.alert\\(1\\)) >>"])


def launch():
    return page_pdf(text_content(BILL),
                    catalog_extra=b"/OpenAction << /S /Launch /F (cmd.exe) >> ")


def embedded():
    return page_pdf(text_content(BILL),
                    catalog_extra=b"/Names << /EmbeddedFiles << /Names [(a.exe) 6 0 R] >> >> ",
                    more=[b"<< /Type /Filespec /F (a.exe) /EF << /F 7 0 R >> >>",
                          stream(b"MZ", b"/Type /EmbeddedFile ")])


def encrypted():
    """RC4 40-bit standard security (the values need not open it: it is refused)."""
    enc = (b"/Encrypt << /Filter /Standard /V 1 /R 2 /P -44 "
           b"/O <" + b"11" * 32 + b"> /U <" + b"22" * 32 + b"> >> "
           b"/ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>] ")
    return page_pdf(text_content(BILL), trailer_extra=enc)


def polyglot():
    """The good PDF with a ZIP archive after its %%EOF."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("payload.js", "WScript.Echo(1)")
    return good() + buf.getvalue()


def big_image_pdf():
    """A page drawing an image XObject whose header says 30,000 x 30,000."""
    img = stream(zlib.compress(bytes(64)),
                 b"/Type /XObject /Subtype /Image /Width 30000 /Height 30000 "
                 b"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode ")
    return page_pdf(b"q 612 0 0 792 0 0 cm /Im1 Do Q",
                    page_extra=b"/XObject << /Im1 6 0 R >> ", more=[img])


def blank():
    return page_pdf(b"")


def truncated_pdf():
    """The good PDF cut inside its page's content stream."""
    data = good()
    return data[:data.index(b"stream\n") + 60]


def png(width, height, idat):
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) +
            chunk(b"IEND", b""))


def huge_png():
    """30,000 x 30,000 grey in the header; a few bytes of data behind it."""
    return png(30000, 30000, zlib.compress(bytes(30001 * 4)))


def small_png():
    """A 64 x 64 grey image (a real PNG: what is declared wrongly below)."""
    raw = b"".join(b"\0" + bytes((x * 4) & 0xff for x in range(64)) for _ in range(64))
    return png(64, 64, zlib.compress(raw))


def truncated_jpeg():
    """A real 400 x 300 JPEG cut in the middle of its scan."""
    try:
        from PIL import Image
    except ImportError:
        return None
    img = Image.effect_noise((400, 300), 64).convert("L")
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=90)
    data = buf.getvalue()
    return data[:len(data) * 3 // 5]


def oversize():
    """21 MiB: past the 20 MiB cap (never an upload: the API refuses its size)."""
    return good() + b" " * (21 << 20)


CASES = [
    # file, declared type, builder, expected rejection (None: extracted), fits an upload
    ("good.pdf", "application/pdf", good, None, True),
    ("zip_bomb.pdf", "application/pdf", zip_bomb, "too_large", True),
    ("many_pages.pdf", "application/pdf", many_pages, "too_many_pages", True),
    ("huge.png", "image/png", huge_png, "image_too_large", True),
    ("truncated.jpg", "image/jpeg", truncated_jpeg, "unreadable_document", True),
    ("javascript.pdf", "application/pdf", javascript, "active_content", True),
    ("launch.pdf", "application/pdf", launch, "active_content", True),
    ("embedded.pdf", "application/pdf", embedded, "active_content", True),
    ("polyglot.pdf", "application/pdf", polyglot, "polyglot", True),
    ("png_as_pdf.png", "application/pdf", small_png, "content_type_mismatch", True),
    ("encrypted.pdf", "application/pdf", encrypted, "encrypted_document", True),
    ("big_image.pdf", "application/pdf", big_image_pdf, "image_too_large", True),
    ("truncated.pdf", "application/pdf", truncated_pdf, "unreadable_document", True),
    ("blank.pdf", "application/pdf", blank, "no_text", True),
    ("oversize.pdf", "application/pdf", oversize, "too_large", False),
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: hostile.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = {}
    for name, ctype, build, reason, upload in CASES:
        data = build()
        if data is None:
            continue
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        cases[name] = {"type": ctype,
                       "outcome": "rejected" if reason else "extracted",
                       "rejection_reason": reason, "upload": upload}
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
