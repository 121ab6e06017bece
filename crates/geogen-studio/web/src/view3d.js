// The 3D view: the rendered map as a lit mesh (colored by the preview's palette) with a water
// plane at height 0. Drag turns, right-drag or Shift-drag pans, the wheel zooms; the height
// exaggeration and the sun (azimuth, elevation) are settings. Plain WebGL 1.
//
// Shading comes from a slope texture at the map's full resolution, not from the mesh's vertices,
// so sharp features (terrace edges, cliffs) are lit along their true outline even where the mesh
// is coarser than the map; each quad of the mesh is split along the diagonal that follows the
// terrain (the one joining the closer heights), so such edges are not cut into a sawtooth.

const VERTEX = `
attribute vec3 position; attribute vec2 uv;
uniform mat4 matrix; uniform float exaggeration;
varying vec2 vUv;
void main() { vUv = uv; gl_Position = matrix * vec4(position.x, position.y * exaggeration, position.z, 1.0); }`;
const FRAGMENT = `
precision mediump float;
uniform sampler2D colors; uniform sampler2D slopes; uniform vec3 light; uniform vec4 tint; uniform float slopeScale;
varying vec2 vUv;
void main() {
  if (tint.a > 0.0) { gl_FragColor = tint; return; }
  // The slope texture holds atan of the gradient along x and z, mapped to [0, 1].
  vec2 angle = (texture2D(slopes, vUv).rg - 0.5) * 3.14159;
  vec2 gradient = tan(clamp(angle, -1.56, 1.56)) * slopeScale;
  vec3 normal = normalize(vec3(-gradient.x, 1.0, -gradient.y));
  float shade = 0.3 + 0.8 * max(dot(normal, light), 0.0);
  gl_FragColor = vec4(texture2D(colors, vUv).rgb * shade, 1.0);
}`;

// Vertices per side at most: a 512² preview is meshed at full resolution.
const MAX_GRID = 512;
// The height of the range [0, 1] relative to the map's larger side; below the water, half that.
const RELIEF = 0.18;
const meshHeight = (h) => (Number.isFinite(h) ? Math.max(0, Math.min(1, h)) * RELIEF * 2 + Math.max(-1, Math.min(0, h)) * RELIEF : 0);

const CAMERA = { yaw: 0.7, pitch: 0.7, distance: 3.2, target: [0, 0, 0] };

export class View3D {
  constructor(canvas) {
    this.canvas = canvas;
    this.gl = canvas.getContext("webgl", { antialias: true });
    this.resetCamera();
    this.exaggeration = 1;
    // Degrees: the azimuth clockwise from the map's top (north), the elevation above the horizon.
    this.sun = { azimuth: 315, elevation: 45 };
    this.mesh = null;
    if (!this.gl) return;
    const gl = this.gl;
    const shader = (type, source) => { const s = gl.createShader(type); gl.shaderSource(s, source); gl.compileShader(s); return s; };
    const program = gl.createProgram();
    gl.attachShader(program, shader(gl.VERTEX_SHADER, VERTEX));
    gl.attachShader(program, shader(gl.FRAGMENT_SHADER, FRAGMENT));
    gl.linkProgram(program);
    this.program = program;
    gl.getExtension("OES_element_index_uint");
    this.colors = gl.createTexture();
    this.slopes = gl.createTexture();
    let drag = null;
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
    canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointerup", () => { drag = null; });
    canvas.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX; drag.y = e.clientY;
      if (drag.pan) this.pan(dx, dy);
      else {
        this.yaw += dx * 0.01;
        this.pitch = Math.min(1.5, Math.max(0.1, this.pitch + dy * 0.01));
      }
      this.draw();
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.distance = Math.min(8, Math.max(0.4, this.distance * Math.exp(e.deltaY * 0.001)));
      this.draw();
    }, { passive: false });
  }

  resetCamera() {
    this.yaw = CAMERA.yaw; this.pitch = CAMERA.pitch; this.distance = CAMERA.distance;
    this.target = [...CAMERA.target];
  }

  // Moves the point looked at across the ground, with the pointer: `dx`, `dy` in pixels.
  pan(dx, dy) {
    const k = this.distance * 0.0016;
    const right = [Math.cos(this.yaw), -Math.sin(this.yaw)], away = [-Math.sin(this.yaw), -Math.cos(this.yaw)];
    const clamp = (v) => Math.max(-1.5, Math.min(1.5, v));
    this.target = [clamp(this.target[0] - right[0] * dx * k + away[0] * dy * k), 0, clamp(this.target[2] - right[1] * dx * k + away[1] * dy * k)];
  }

  // `heights`: Float32Array of width × height; `image`: the colored preview (a canvas).
  setMap(heights, width, height, image) {
    const gl = this.gl;
    if (!gl || !heights) { this.mesh = null; return; }
    const span = Math.max(width, height);
    const sx = (width / span) * 2, sz = (height / span) * 2;
    const step = Math.max(1, Math.ceil(Math.max(width, height) / MAX_GRID));
    const gw = Math.max(2, Math.ceil((width - 1) / step) + 1), gh = Math.max(2, Math.ceil((height - 1) / step) + 1);
    // The height at a point between pixel centres, bilinear: the vertices stay on the pixels'
    // grid whatever the step, so the colors and the slopes lie where the mesh does.
    const pixel = (x, y) => meshHeight(heights[Math.min(height - 1, y) * width + Math.min(width - 1, x)]);
    const sample = (x, y) => {
      const x0 = Math.floor(x), y0 = Math.floor(y), fx = x - x0, fy = y - y0;
      const top = pixel(x0, y0) * (1 - fx) + pixel(x0 + 1, y0) * fx;
      const bottom = pixel(x0, y0 + 1) * (1 - fx) + pixel(x0 + 1, y0 + 1) * fx;
      return top * (1 - fy) + bottom * fy;
    };
    const positions = new Float32Array(gw * gh * 3), uvs = new Float32Array(gw * gh * 2), ys = new Float32Array(gw * gh);
    for (let gy = 0; gy < gh; gy++) {
      for (let gx = 0; gx < gw; gx++) {
        const i = gy * gw + gx;
        const u = gx / (gw - 1), v = gy / (gh - 1);
        const px = u * (width - 1), py = v * (height - 1);
        ys[i] = sample(px, py);
        positions.set([(px + 0.5) / width * sx - sx / 2, ys[i], (py + 0.5) / height * sz - sz / 2], i * 3);
        uvs.set([(px + 0.5) / width, (py + 0.5) / height], i * 2);
      }
    }
    const indices = triangulate(ys, gw, gh);
    // Slopes at every pixel (central differences in the mesh's units), as atan mapped to [0, 255].
    const slopes = new Uint8Array(width * height * 4);
    const dxUnit = sx / width, dzUnit = sz / height;
    const encode = (g) => Math.round((Math.atan(g) / Math.PI + 0.5) * 255);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const l = Math.max(0, x - 1), r = Math.min(width - 1, x + 1), t = Math.max(0, y - 1), b = Math.min(height - 1, y + 1);
        const gx = (pixel(r, y) - pixel(l, y)) / (Math.max(1, r - l) * dxUnit);
        const gz = (pixel(x, b) - pixel(x, t)) / (Math.max(1, b - t) * dzUnit);
        const o = (y * width + x) * 4;
        slopes[o] = encode(gx); slopes[o + 1] = encode(gz); slopes[o + 3] = 255;
      }
    }
    const buffer = (data, target = gl.ARRAY_BUFFER) => { const b = gl.createBuffer(); gl.bindBuffer(target, b); gl.bufferData(target, data, gl.STATIC_DRAW); return b; };
    if (this.mesh) for (const b of this.mesh.buffers) gl.deleteBuffer(b);
    const half = [sx / 2, sz / 2];
    const water = new Float32Array([-half[0], 0, -half[1], half[0], 0, -half[1], -half[0], 0, half[1], half[0], 0, half[1]]);
    this.mesh = {
      positions: buffer(positions), uvs: buffer(uvs),
      indices: buffer(indices, gl.ELEMENT_ARRAY_BUFFER), count: indices.length,
      water: buffer(water), waterUvs: buffer(new Float32Array(8)),
    };
    this.mesh.buffers = [this.mesh.positions, this.mesh.uvs, this.mesh.indices, this.mesh.water, this.mesh.waterUvs];
    this.mesh.grid = [gw, gh];
    const texture = (t, upload) => {
      gl.bindTexture(gl.TEXTURE_2D, t);
      upload();
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    };
    texture(this.colors, () => gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, image));
    texture(this.slopes, () => gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, width, height, 0, gl.RGBA, gl.UNSIGNED_BYTE, slopes));
    this.draw();
  }

  // The direction towards the sun: the map's top is north (−z), the azimuth turns clockwise.
  light() {
    const az = this.sun.azimuth * Math.PI / 180, el = this.sun.elevation * Math.PI / 180;
    return [Math.sin(az) * Math.cos(el), Math.sin(el), -Math.cos(az) * Math.cos(el)];
  }

  draw() {
    const gl = this.gl;
    if (!gl) return;
    const canvas = this.canvas;
    const w = canvas.clientWidth || 1, h = canvas.clientHeight || 1;
    if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.07, 0.08, 0.1, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    if (!this.mesh) return;
    gl.enable(gl.DEPTH_TEST);
    gl.useProgram(this.program);
    const t = this.target;
    const eye = [
      t[0] + Math.sin(this.yaw) * Math.cos(this.pitch) * this.distance,
      t[1] + Math.sin(this.pitch) * this.distance,
      t[2] + Math.cos(this.yaw) * Math.cos(this.pitch) * this.distance,
    ];
    const matrix = multiply(perspective(0.8, w / h, 0.05, 50), lookAt(eye, t, [0, 1, 0]));
    const p = this.program, m = this.mesh;
    const uniform = (name) => gl.getUniformLocation(p, name);
    gl.uniformMatrix4fv(uniform("matrix"), false, matrix);
    gl.uniform3f(uniform("light"), ...this.light());
    // One value, two names: a uniform both shaders declare must have one precision in both.
    gl.uniform1f(uniform("exaggeration"), this.exaggeration);
    gl.uniform1f(uniform("slopeScale"), this.exaggeration);
    gl.uniform1i(uniform("colors"), 0);
    gl.uniform1i(uniform("slopes"), 1);
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D, this.slopes);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.colors);
    const attribute = (name, buf, size) => {
      const loc = gl.getAttribLocation(p, name);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf);
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, size, gl.FLOAT, false, 0, 0);
    };
    attribute("position", m.positions, 3); attribute("uv", m.uvs, 2);
    gl.uniform4f(uniform("tint"), 0, 0, 0, 0);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, m.indices);
    gl.drawElements(gl.TRIANGLES, m.count, gl.UNSIGNED_INT, 0);
    // The water plane, translucent, over everything below height 0.
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    attribute("position", m.water, 3); attribute("uv", m.waterUvs, 2);
    gl.uniform4f(uniform("tint"), 0.15, 0.4, 0.75, 0.55);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    gl.disable(gl.BLEND);
    this.frames = (this.frames || 0) + 1;
  }

  // A digest of the drawn picture (read right after drawing it), for the browser walk.
  digest() {
    const gl = this.gl;
    if (!gl || !this.mesh) return null;
    this.draw();
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const pixels = new Uint8Array(w * h * 4);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    let hash = 0, lit = 0;
    for (let i = 0; i < pixels.length; i += 4) {
      hash = (hash * 31 + pixels[i] + pixels[i + 1] * 7 + pixels[i + 2] * 13) >>> 0;
      lit += pixels[i] + pixels[i + 1] + pixels[i + 2];
    }
    return { hash, brightness: lit / (w * h * 3) };
  }
}

// The triangles of a grid of `gw` × `gh` heights (row by row): each quad is split along the
// diagonal whose ends are closer in height, so it runs along an edge of the terrain (a terrace's,
// a cliff's) rather than across it, and a diagonal edge stays a straight line.
export function triangulate(ys, gw, gh) {
  const indices = new Uint32Array((gw - 1) * (gh - 1) * 6);
  let k = 0;
  for (let gy = 0; gy + 1 < gh; gy++) {
    for (let gx = 0; gx + 1 < gw; gx++) {
      const a = gy * gw + gx, b = a + 1, c = a + gw, d = c + 1;
      if (Math.abs(ys[a] - ys[d]) <= Math.abs(ys[b] - ys[c])) indices.set([a, c, d, a, d, b], k);
      else indices.set([a, c, b, b, c, d], k);
      k += 6;
    }
  }
  return indices;
}

function perspective(fov, aspect, near, far) {
  // A narrow view keeps the whole width in sight.
  const f = Math.min(1, aspect) / Math.tan(fov / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
}

function lookAt(eye, center, up) {
  const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
  const norm = (v) => { const l = Math.hypot(...v) || 1; return [v[0] / l, v[1] / l, v[2] / l]; };
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const z = norm(sub(eye, center)), x = norm(cross(up, z)), y = cross(z, x);
  return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
}

function multiply(a, b) {
  const out = new Array(16).fill(0);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) for (let k = 0; k < 4; k++) out[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
  return out;
}
