/**
 * Just enough PNG decoding to ask a screenshot which colours a person would see (8-bit RGB or RGBA,
 * not interlaced: what Chromium writes). Node's zlib does the inflating; no dependency.
 */
import * as fs from "node:fs";
import * as zlib from "node:zlib";

export interface Image {
  width: number;
  height: number;
  /** RGB triples, row by row. */
  rgb: Uint8Array;
}

export function readPng(file: string): Image {
  const buf = fs.readFileSync(file);
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error(`${file} is not a PNG`);
  let width = 0,
    height = 0,
    colourType = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at);
    const type = buf.toString("latin1", at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      colourType = data[9];
      if (data[8] !== 8 || data[12] !== 0 || (colourType !== 2 && colourType !== 6))
        throw new Error(`${file}: only 8-bit RGB(A), non-interlaced PNGs are read here`);
    } else if (type === "IDAT") idat.push(data);
    at += 12 + len;
  }
  const bpp = colourType === 6 ? 4 : 3;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const cur = Buffer.alloc(stride),
    prev = Buffer.alloc(stride);
  const rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp] : 0,
        b = prev[i],
        c = i >= bpp ? prev[i - bpp] : 0;
      const p = a + b - c,
        pa = Math.abs(p - a),
        pb = Math.abs(p - b),
        pc = Math.abs(p - c);
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      cur[i] = (line[i] + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) rgb.set(cur.subarray(x * bpp, x * bpp + 3), (y * width + x) * 3);
    cur.copy(prev);
  }
  return { width, height, rgb };
}

/** How many pixels have exactly this colour ("#rrggbb"). */
export function countColour(img: Image, hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  let n = 0;
  for (let i = 0; i < img.rgb.length; i += 3) if (img.rgb[i] === r && img.rgb[i + 1] === g && img.rgb[i + 2] === b) n++;
  return n;
}
