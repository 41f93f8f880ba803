# Counts the pixels of given colours in a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's
# --screenshot writes), for tests/t_html.sh: prints "RRGGBB COUNT" for each colour asked.
#   python3 tests/png_colours.py FILE.png RRGGBB...
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG: " + sys.argv[1])
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        if depth != 8 or ctype not in (2, 6) or interlace:
            sys.exit("unsupported PNG: depth %d, colour type %d, interlace %d" % (depth, ctype, interlace))
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), width * bpp
prev, rows, at = bytearray(stride), [], 0
for _ in range(height):
    f, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
    at += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
want = {bytes.fromhex(h): 0 for h in sys.argv[2:]}
for line in rows:
    for i in range(0, stride, bpp):
        px = line[i:i + 3]
        if px in want:
            want[px] += 1
for h, n in want.items():
    print(h.hex(), n)
