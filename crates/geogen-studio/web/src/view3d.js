// The 3D view: the rendered map as a lit mesh (colored by the preview's palette) with a water
// plane at height 0, orbited with the mouse (drag turns, wheel zooms). Plain WebGL 1.

const VERTEX = `
attribute vec3 position; attribute vec3 normal; attribute vec2 uv;
uniform mat4 matrix; varying vec3 vNormal; varying vec2 vUv;
void main() { vNormal = normal; vUv = uv; gl_Position = matrix * vec4(position, 1.0); }`;
const FRAGMENT = `
precision mediump float;
uniform sampler2D tex; uniform vec3 light; uniform vec4 tint; uniform float lit;
varying vec3 vNormal; varying vec2 vUv;
void main() {
  vec4 base = tint.a > 0.0 ? tint : texture2D(tex, vUv);
  float shade = mix(1.0, 0.35 + 0.75 * max(dot(normalize(vNormal), light), 0.0), lit);
  gl_FragColor = vec4(base.rgb * shade, tint.a > 0.0 ? tint.a : 1.0);
}`;

const MAX_GRID = 256;
const RELIEF = 0.18; // height of the range [-1, 1] relative to the map's width

export class View3D {
  constructor(canvas) {
    this.canvas = canvas;
    this.gl = canvas.getContext("webgl", { antialias: true });
    this.yaw = 0.7; this.pitch = 0.7; this.distance = 3.2;
    this.mesh = null;
    if (!this.gl) return;
    const gl = this.gl;
    const shader = (type, source) => { const s = gl.createShader(type); gl.shaderSource(s, source); gl.compileShader(s); return s; };
    const program = gl.createProgram();
    gl.attachShader(program, shader(gl.VERTEX_SHADER, VERTEX));
    gl.attachShader(program, shader(gl.FRAGMENT_SHADER, FRAGMENT));
    gl.linkProgram(program);
    this.program = program;
    this.texture = gl.createTexture();
    let drag = null;
    canvas.addEventListener("pointerdown", (e) => { drag = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); });
    canvas.addEventListener("pointerup", () => { drag = null; });
    canvas.addEventListener("pointermove", (e) => {
      if (!drag) return;
      this.yaw += (e.clientX - drag[0]) * 0.01;
      this.pitch = Math.min(1.5, Math.max(0.1, this.pitch + (e.clientY - drag[1]) * 0.01));
      drag = [e.clientX, e.clientY];
      this.draw();
    });
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.distance = Math.min(8, Math.max(0.6, this.distance * Math.exp(e.deltaY * 0.001)));
      this.draw();
    }, { passive: false });
  }

  // `heights`: Float32Array of width × height; `image`: the colored preview (a canvas).
  setMap(heights, width, height, image) {
    const gl = this.gl;
    if (!gl || !heights) { this.mesh = null; return; }
    const step = Math.max(1, Math.ceil(Math.max(width, height) / MAX_GRID));
    const gw = Math.floor((width - 1) / step) + 1, gh = Math.floor((height - 1) / step) + 1;
    const span = Math.max(width, height);
    const at = (gx, gy) => {
      const h = heights[Math.min(height - 1, gy * step) * width + Math.min(width - 1, gx * step)];
      return Number.isFinite(h) ? Math.max(-1, Math.min(1, h)) : 0;
    };
    const positions = new Float32Array(gw * gh * 3), normals = new Float32Array(gw * gh * 3), uvs = new Float32Array(gw * gh * 2);
    const sx = (width / span) * 2, sz = (height / span) * 2;
    for (let gy = 0; gy < gh; gy++) {
      for (let gx = 0; gx < gw; gx++) {
        const i = gy * gw + gx;
        const u = gw > 1 ? gx / (gw - 1) : 0, v = gh > 1 ? gy / (gh - 1) : 0;
        positions.set([(u - 0.5) * sx, Math.max(at(gx, gy), 0) * RELIEF * 2 + Math.min(at(gx, gy), 0) * RELIEF, (v - 0.5) * sz], i * 3);
        uvs.set([u, v], i * 2);
        const dx = (at(Math.min(gw - 1, gx + 1), gy) - at(Math.max(0, gx - 1), gy)) * RELIEF * 2 / (2 * sx / Math.max(1, gw - 1));
        const dz = (at(gx, Math.min(gh - 1, gy + 1)) - at(gx, Math.max(0, gy - 1))) * RELIEF * 2 / (2 * sz / Math.max(1, gh - 1));
        const n = Math.hypot(dx, 1, dz);
        normals.set([-dx / n, 1 / n, -dz / n], i * 3);
      }
    }
    const indices = new Uint32Array((gw - 1) * (gh - 1) * 6);
    let k = 0;
    for (let gy = 0; gy + 1 < gh; gy++) {
      for (let gx = 0; gx + 1 < gw; gx++) {
        const a = gy * gw + gx, b = a + 1, c = a + gw, d = c + 1;
        indices.set([a, c, b, b, c, d], k); k += 6;
      }
    }
    gl.getExtension("OES_element_index_uint");
    const buffer = (data, target = gl.ARRAY_BUFFER) => { const b = gl.createBuffer(); gl.bindBuffer(target, b); gl.bufferData(target, data, gl.STATIC_DRAW); return b; };
    const half = [sx / 2, sz / 2];
    const water = new Float32Array([-half[0], 0, -half[1], half[0], 0, -half[1], -half[0], 0, half[1], half[0], 0, half[1]]);
    this.mesh = {
      positions: buffer(positions), normals: buffer(normals), uvs: buffer(uvs),
      indices: buffer(indices, gl.ELEMENT_ARRAY_BUFFER), count: indices.length,
      water: buffer(water), waterNormals: buffer(new Float32Array([0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0])), waterUvs: buffer(new Float32Array(8)),
    };
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGB, gl.RGB, gl.UNSIGNED_BYTE, image);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    this.draw();
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
    const eye = [Math.sin(this.yaw) * Math.cos(this.pitch) * this.distance, Math.sin(this.pitch) * this.distance, Math.cos(this.yaw) * Math.cos(this.pitch) * this.distance];
    const matrix = multiply(perspective(0.8, w / h, 0.05, 50), lookAt(eye, [0, 0, 0], [0, 1, 0]));
    const p = this.program, m = this.mesh;
    gl.uniformMatrix4fv(gl.getUniformLocation(p, "matrix"), false, matrix);
    const l = [-0.5, 0.8, -0.3], ln = Math.hypot(...l);
    gl.uniform3f(gl.getUniformLocation(p, "light"), l[0] / ln, l[1] / ln, l[2] / ln);
    const attribute = (name, buf, size) => {
      const loc = gl.getAttribLocation(p, name);
      gl.bindBuffer(gl.ARRAY_BUFFER, buf);
      gl.enableVertexAttribArray(loc);
      gl.vertexAttribPointer(loc, size, gl.FLOAT, false, 0, 0);
    };
    attribute("position", m.positions, 3); attribute("normal", m.normals, 3); attribute("uv", m.uvs, 2);
    gl.uniform4f(gl.getUniformLocation(p, "tint"), 0, 0, 0, 0);
    gl.uniform1f(gl.getUniformLocation(p, "lit"), 1);
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, m.indices);
    gl.drawElements(gl.TRIANGLES, m.count, gl.UNSIGNED_INT, 0);
    // The water plane, translucent, over everything below height 0.
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
    attribute("position", m.water, 3); attribute("normal", m.waterNormals, 3); attribute("uv", m.waterUvs, 2);
    gl.uniform4f(gl.getUniformLocation(p, "tint"), 0.15, 0.4, 0.75, 0.55);
    gl.uniform1f(gl.getUniformLocation(p, "lit"), 0);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    gl.disable(gl.BLEND);
  }
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
