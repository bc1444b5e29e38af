#!/usr/bin/env python3
"""png_check.py — a tiny PNG reader (standard library only: zlib, struct) for the browser test:
checks that a screenshot has the expected size and is not blank, and can crop a region out.

usage: png_check.py SHOT.png --min-width W --min-height H [--min-ink FRACTION]
       png_check.py SHOT.png --crop X Y W H OUT.png
Exit status 0 when the checks hold, 1 when not, 2 on a file this reader cannot decode.
"""
import struct
import sys
import zlib


def read_png(path):
    """(width, height, rows): rows a list of bytes objects, RGB(A) 8-bit, filters undone."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError("only 8-bit RGB/RGBA, non-interlaced PNGs are read here")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if w is None:
        raise ValueError("no IHDR")
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def write_png(path, w, h, bpp, rows):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2 if bpp == 3 else 6, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    try:
        w, h, bpp, rows = read_png(argv[1])
    except (OSError, ValueError, zlib.error) as e:
        print(f"png_check: {argv[1]}: {e}")
        return 2
    args = argv[2:]
    if args[:1] == ["--crop"]:
        x, y, cw, ch = (int(v) for v in args[1:5])
        out = [r[x * bpp:(x + cw) * bpp] for r in rows[y:y + ch]]
        write_png(args[5], cw, len(out), bpp, out)
        return 0
    opts = dict(zip(args[::2], args[1::2]))
    min_w, min_h = int(opts.get("--min-width", 1)), int(opts.get("--min-height", 1))
    min_ink = float(opts.get("--min-ink", 0.01))
    # background: the top-left pixel's colour; ink: any pixel that differs from it
    bg = rows[0][:3]
    ink = sum(1 for r in rows[::4] for i in range(0, len(r), 4 * bpp) if r[i:i + 3] != bg)
    total = len(rows[::4]) * len(range(0, w * bpp, 4 * bpp))
    frac = ink / total if total else 0.0
    ok = w >= min_w and h >= min_h and frac >= min_ink
    print(f"png_check: {argv[1]}: {w}x{h}, {100 * frac:.1f}% non-background pixels "
          f"(need >= {min_w}x{min_h}, >= {100 * min_ink:.1f}%): {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
