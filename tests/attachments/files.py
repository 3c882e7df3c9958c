"""Small files for attachment tests, made here (no binary fixtures in the repository)."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 2, height: int = 2) -> bytes:
    """A valid PNG of red pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def pdf(text: str = "Hello from a PDF") -> bytes:
    """A one-page PDF whose text pypdf reads back."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return pdf_file(objects)


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalog), with its cross-reference table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


BROKEN_PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R >>\nthis is not a pdf at all\n"


def slow_pdf(pages: int = 10, operators: int = 200_000) -> bytes:
    """A small PDF (under 5 KB at these numbers) that keeps pypdf busy: its pages share one compressed content stream
    of `operators` text operators, which pypdf parses again for every page (about 3 s of CPU a page, pypdf 7.1)."""
    packer = zlib.compressobj(9)
    stream = packer.compress(b"BT /F1 12 Tf ")
    for start in range(0, operators, 100_000):  # (never the whole stream in memory here)
        stream += packer.compress(b"(a) Tj " * min(100_000, operators - start))
    stream += packer.compress(b"ET") + packer.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % (5 + n) for n in range(pages)), pages),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R"
    page += b" /Resources << /Font << /F1 4 0 R >> >> >>"
    objects += [page] * pages
    return pdf_file(objects)
