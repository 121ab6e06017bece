// The preview's pictures, made in the page from the heights the server sends (docs/studio.md): the
// binary preview answer read back into heights, the palettes (the colored preview's land and water
// ramp and others), the multidirectional hillshade of `geogen render --format hillshade`, and the
// histogram of a map's heights. Changing the palette or the picture kind needs no new render.

// ---- the preview answer ------------------------------------------------------------------------
const MAGIC = "GGPREV1\0";

// `buffer`: the answer's bytes. Returns the header (as JSON, see api.rs) with each map's
// `heights` as a Float32Array of width × height, row by row.
export function decodePreview(buffer) {
  const bytes = new Uint8Array(buffer);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== MAGIC) throw new Error("not a geogen preview answer");
  const headerLength = new DataView(buffer).getUint32(8, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + headerLength)));
  for (const map of header.maps) {
    const n = map.width * map.height;
    const samples = new Uint16Array(buffer, map.offset, n);
    const heights = new Float32Array(n);
    const step = (map.max - map.min) / 65535;
    for (let i = 0; i < n; i++) heights[i] = map.min + samples[i] * step;
    map.heights = heights;
  }
  header.bytes = buffer.byteLength;
  return header;
}

// ---- palettes ------------------------------------------------------------------------------------
// A palette is a list of [height, [r, g, b]] anchors over [-1, 1], interpolated linearly. With
// `sea`, heights at or below 0 take the water anchors and above 0 the land ones (the coastline is
// a step); without, it is one sequential `ramp`. They are the server's (geogen-io's palettes, sent
// with the session), so the Map tab's tiles and the debugger's pictures match the preview.
export const PALETTES = {};
export function setPalettes(list) {
  for (const key of Object.keys(PALETTES)) delete PALETTES[key];
  for (const { name, ...palette } of list || []) PALETTES[name] = palette;
  lutCache.clear();
}
export const DEFAULT_PALETTE = "land and water";

// A 4096-entry lookup of the palette over [-1, 1] (a colour per 1/2048 of height): fast enough to
// repaint a 1024² preview while a slider drags.
const LUT_SIZE = 4096;
const lutCache = new Map();
function lutOf(name) {
  if (lutCache.has(name)) return lutCache.get(name);
  const palette = PALETTES[name] || PALETTES[DEFAULT_PALETTE];
  const lut = new Uint8ClampedArray(LUT_SIZE * 3);
  for (let i = 0; i < LUT_SIZE; i++) {
    const h = -1 + (2 * i) / (LUT_SIZE - 1);
    const anchors = palette.sea ? (h <= 0 ? palette.water : palette.land) : palette.ramp;
    lut.set(ramp(anchors, h), i * 3);
  }
  // The land's first colour starts just above 0: the entry at 0 is water.
  const result = { lut, sea: palette.sea, shore: palette.sea ? ramp(palette.land, 0) : null };
  lutCache.set(name, result);
  return result;
}

function ramp(anchors, h) {
  let i = 1;
  while (i < anchors.length - 1 && h > anchors[i][0]) i++;
  const [h0, c0] = anchors[i - 1], [h1, c1] = anchors[i];
  const t = Math.min(1, Math.max(0, (h - h0) / (h1 - h0)));
  return [0, 1, 2].map((k) => Math.floor(c0[k] + (c1[k] - c0[k]) * t + 0.5));
}

// The palette's colour bar, as CSS (for the legend).
export function paletteGradient(name) {
  const { lut } = lutOf(name);
  const stops = [];
  for (let i = 0; i <= 16; i++) {
    const k = Math.round((i / 16) * (LUT_SIZE - 1)) * 3;
    stops.push(`rgb(${lut[k]},${lut[k + 1]},${lut[k + 2]}) ${(i / 16) * 100}%`);
  }
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

// How a height maps onto the palette's [-1, 1]: as it is (clamped), or stretched to the map's own
// range. Stretching keeps sea level at 0 for the palettes with a sea (water spans min..0, land
// 0..max) and spreads a sequential palette over min..max.
export function paletteInput(name, stretch, min, max) {
  const palette = PALETTES[name] || PALETTES[DEFAULT_PALETTE];
  if (!stretch || !(max > min)) return (h) => h;
  if (palette.sea) {
    const below = min < 0 ? -1 / min : 1, above = max > 0 ? 1 / max : 1;
    return (h) => (h <= 0 ? h * below : h * above);
  }
  return (h) => -1 + (2 * (h - min)) / (max - min);
}

// ---- pictures ------------------------------------------------------------------------------------
// Paints `heights` (width × height) into `imageData` as `kind`: "colored" (with `palette`,
// stretched or not), "hillshade" (shaded for the render's `scale`) or "gray" (the png8 writer's
// quantisation).
export function paint(imageData, heights, width, height, { kind, palette = DEFAULT_PALETTE, stretch = false, min = -1, max = 1, scale = 1 }) {
  const out = imageData.data;
  const n = width * height;
  if (kind === "hillshade") {
    const shade = hillshade(heights, width, height, scale);
    for (let i = 0; i < n; i++) { const v = shade[i]; out[i * 4] = v; out[i * 4 + 1] = v; out[i * 4 + 2] = v; out[i * 4 + 3] = 255; }
    return;
  }
  if (kind === "gray") {
    for (let i = 0; i < n; i++) {
      const v = Math.floor(127.5 * clampHeight(heights[i]) + 128);
      out[i * 4] = v; out[i * 4 + 1] = v; out[i * 4 + 2] = v; out[i * 4 + 3] = 255;
    }
    return;
  }
  const { lut, sea, shore } = lutOf(palette);
  const input = paletteInput(palette, stretch, min, max);
  for (let i = 0; i < n; i++) {
    const h = clampHeight(input(clampHeight(heights[i])));
    let r, g, b;
    if (sea && h > 0 && h < 2 / (LUT_SIZE - 1)) { [r, g, b] = shore; } else {
      const k = Math.round(((h + 1) / 2) * (LUT_SIZE - 1)) * 3;
      r = lut[k]; g = lut[k + 1]; b = lut[k + 2];
    }
    out[i * 4] = r; out[i * 4 + 1] = g; out[i * 4 + 2] = b; out[i * 4 + 3] = 255;
  }
}

function clampHeight(h) {
  return Number.isNaN(h) ? 0 : Math.min(1, Math.max(-1, h));
}

// The hillshade of geogen-io (hillshade.rs): the light from the north-west (azimuth 315°) at 45°
// altitude and 45° either side of it, weighted 1:2:1; central differences, one-sided on the border;
// the exaggeration of the default terrain (1 m map units, height 1.0 = 100 m) at the render's
// scale, so that zooming does not steepen the shading.
const LIGHTS = [[-45, 0.25], [0, 0.5], [45, 0.25]].map(([offset, weight]) => {
  const az = ((315 + offset) * Math.PI) / 180, alt = (45 * Math.PI) / 180;
  return [Math.cos(alt) * Math.sin(az), -Math.cos(alt) * Math.cos(az), Math.sin(alt), weight];
});
export function hillshade(heights, width, height, scale) {
  const z = 100 * scale;
  const out = new Uint8ClampedArray(width * height);
  const at = (x, y) => clampHeight(heights[y * width + x]);
  for (let y = 0; y < height; y++) {
    const up = Math.max(0, y - 1), down = Math.min(height - 1, y + 1), dyDist = down - up;
    for (let x = 0; x < width; x++) {
      const left = Math.max(0, x - 1), right = Math.min(width - 1, x + 1), dxDist = right - left;
      const dhdx = dxDist > 0 ? (at(right, y) - at(left, y)) / dxDist : 0;
      const dhdy = dyDist > 0 ? (at(x, down) - at(x, up)) / dyDist : 0;
      const nx = -z * dhdx, ny = -z * dhdy;
      const len = Math.sqrt(nx * nx + ny * ny + 1);
      let shade = 0;
      for (const [lx, ly, lz, weight] of LIGHTS) {
        const lit = (nx * lx + ny * ly + lz) / len;
        shade += weight * (lit > 0 ? Math.min(1, lit) : 0);
      }
      out[y * width + x] = Math.floor(Math.min(1, shade) * 255 + 0.5);
    }
  }
  return out;
}

// ---- histogram -----------------------------------------------------------------------------------
// Counts of the heights in `bins` equal bins over [min, max] (NaN left out).
export function histogram(heights, min, max, bins = 64) {
  const counts = new Uint32Array(bins);
  const span = max - min;
  for (const h of heights) {
    if (Number.isNaN(h)) continue;
    const k = span > 0 ? Math.min(bins - 1, Math.max(0, Math.floor(((h - min) / span) * bins))) : 0;
    counts[k]++;
  }
  return counts;
}
