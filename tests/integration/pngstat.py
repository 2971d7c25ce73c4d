#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What a headless Chromium screenshot shows, for the client tests (timeline_chromium.sh,
speedscope_chromium.sh): no imaging library, the PNG decoded here (8-bit RGB or RGBA, the
five filters).

usage: pngstat.py FILE.png [--box X0,Y0,X1,Y1] [#RRGGBB...]
prints one line: "WxH colours=N saturated=S #rrggbb=COUNT ...", where colours counts the
distinct colours in the box (default: all), saturated the pixels whose max - min channel is
at least 60 (drawn in colour, not grey or white), and each #rrggbb the pixels within 12 of
that colour in every channel."""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype = hdr[:4]
    if depth != 8 or ctype not in (2, 6):
        sys.exit(f"{path}: unsupported PNG {hdr}")
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, rows, i = bytearray(stride), [], 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path, box, wanted = args[0], None, []
    i = 1
    while i < len(args):
        if args[i] == "--box":
            box = [int(v) for v in args[i + 1].split(",")]
            i += 2
            continue
        wanted.append(args[i])
        i += 1
    w, h, bpp, rows = decode(path)
    x0, y0, x1, y1 = box if box else (0, 0, w, h)
    targets = [tuple(int(c[k:k + 2], 16) for k in (1, 3, 5)) for c in wanted]
    counts = [0] * len(targets)
    colours, saturated = set(), 0
    for y in range(max(0, y0), min(h, y1)):
        line = rows[y]
        for x in range(max(0, x0), min(w, x1)):
            px = line[x * bpp:x * bpp + 3]
            r, g, b = px[0], px[1], px[2]
            colours.add((r, g, b))
            if max(r, g, b) - min(r, g, b) >= 60:
                saturated += 1
            for k, (tr, tg, tb) in enumerate(targets):
                if abs(r - tr) <= 12 and abs(g - tg) <= 12 and abs(b - tb) <= 12:
                    counts[k] += 1
    out = [f"{w}x{h}", f"colours={len(colours)}", f"saturated={saturated}"]
    out += [f"{c.lower()}={n}" for c, n in zip(wanted, counts)]
    print(" ".join(out))


if __name__ == "__main__":
    main()
