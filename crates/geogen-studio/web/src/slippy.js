// The infinite-map view: 256-pixel tiles from the server's tile endpoint, panned by dragging and
// zoomed with the wheel (about the cursor) or the buttons. Zoom levels are render scales (zoom 8
// is scale 1), so zooming out shows the same world at a lower scale; tiles are exact, so it is
// seamless. On a zoom the old tiles stay, scaled, under the new ones until those have loaded; a
// finite map's tiles are asked for only where the map is.

export class Slippy {
  constructor(container, { tileUrl, maxZoom, zoomScale1, onCursor, bounds }) {
    this.container = container;
    this.tileUrl = tileUrl;
    // `bounds()`: the map's size in map units, `null` for an infinite axis.
    this.bounds = bounds || (() => ({ width: null, height: null }));
    this.previous = null;
    this.maxZoom = maxZoom;
    this.zoom = zoomScale1 - 1;
    this.zoomScale1 = zoomScale1;
    this.onCursor = onCursor;
    this.center = [0, 0]; // the point at the view's centre, in physical pixels at this zoom
    this.tiles = new Map();
    this.layer = document.createElement("div");
    this.layer.className = "tiles";
    container.appendChild(this.layer);
    const zoom = document.createElement("div");
    zoom.className = "zoom";
    zoom.innerHTML = '<button data-d="1" title="zoom in">+</button><button data-d="-1" title="zoom out">−</button>';
    zoom.addEventListener("click", (e) => { const d = Number(e.target.dataset.d); if (d) this.zoomBy(d); });
    container.appendChild(zoom);
    this.label = document.createElement("div");
    this.label.className = "label";
    container.appendChild(this.label);
    let drag = null;
    container.addEventListener("pointerdown", (e) => { if (e.target.tagName === "BUTTON") return; drag = [e.clientX, e.clientY]; container.setPointerCapture(e.pointerId); });
    container.addEventListener("pointerup", () => { drag = null; });
    container.addEventListener("pointermove", (e) => {
      const rect = container.getBoundingClientRect();
      if (drag) {
        this.center[0] -= e.clientX - drag[0];
        this.center[1] -= e.clientY - drag[1];
        drag = [e.clientX, e.clientY];
        this.update();
      }
      const px = this.center[0] + e.clientX - rect.left - rect.width / 2, py = this.center[1] + e.clientY - rect.top - rect.height / 2;
      this.onCursor && this.onCursor(px / this.scale(), py / this.scale());
    });
    container.addEventListener("wheel", (e) => {
      e.preventDefault();
      const rect = container.getBoundingClientRect();
      this.zoomBy(e.deltaY < 0 ? 1 : -1, [e.clientX - rect.left, e.clientY - rect.top]);
    }, { passive: false });
  }

  scale() { return Math.pow(2, this.zoom - this.zoomScale1); }

  // Zooms by `d` levels about `anchor` (a point of the view, in pixels from its top-left corner;
  // its centre by default): the map point under it stays under it.
  zoomBy(d, anchor) {
    const z = Math.max(0, Math.min(this.maxZoom, this.zoom + d));
    if (z === this.zoom) return;
    const { clientWidth: w, clientHeight: h } = this.container;
    const [ax, ay] = anchor || [w / 2, h / 2];
    const [dx, dy] = [ax - w / 2, ay - h / 2];
    const f = Math.pow(2, z - this.zoom);
    this.center = [(this.center[0] + dx) * f - dx, (this.center[1] + dy) * f - dy];
    this.zoom = z;
    this.keepScaled(f, ax, ay);
    this.update();
  }

  // The current tiles, scaled by `f` about (ax, ay), stay under the new ones until those load.
  keepScaled(f, ax, ay) {
    if (this.previous) this.previous.remove();
    const old = this.layer;
    old.classList.add("previous");
    old.style.transformOrigin = `${ax}px ${ay}px`;
    old.style.transform = `${old.style.transform || ""} scale(${f})`;
    this.previous = old;
    this.tiles = new Map();
    this.layer = document.createElement("div");
    this.layer.className = "tiles";
    this.container.insertBefore(this.layer, old.nextSibling);
  }

  // Drops the scaled old tiles once every new one has loaded (or failed).
  dropPreviousWhenLoaded() {
    if (!this.previous) return;
    const pending = [...this.tiles.values()].some((img) => !img.complete);
    if (!pending) { this.previous.remove(); this.previous = null; }
  }

  // Centres the view on a map point (map units).
  centreOn(x, y) { this.center = [x * this.scale(), y * this.scale()]; }

  clear() {
    for (const img of this.tiles.values()) img.remove();
    this.tiles.clear();
    if (this.previous) { this.previous.remove(); this.previous = null; }
  }

  refresh() { this.clear(); this.update(); }

  update() {
    const { clientWidth: w, clientHeight: h } = this.container;
    if (!w || !h) return;
    const left = this.center[0] - w / 2, top = this.center[1] - h / 2;
    let x0 = Math.floor(left / 256), x1 = Math.floor((left + w) / 256), y0 = Math.floor(top / 256), y1 = Math.floor((top + h) / 256);
    // A finite axis: only the tiles over the map (pixels 0 .. size × scale).
    const { width: mw, height: mh } = this.bounds();
    if (mw != null) { x0 = Math.max(x0, 0); x1 = Math.min(x1, Math.ceil(mw * this.scale() / 256) - 1); }
    if (mh != null) { y0 = Math.max(y0, 0); y1 = Math.min(y1, Math.ceil(mh * this.scale() / 256) - 1); }
    const wanted = new Set();
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const key = `${this.zoom}/${x}/${y}`;
        wanted.add(key);
        let img = this.tiles.get(key);
        if (!img) {
          img = document.createElement("img");
          img.alt = "";
          img.draggable = false;
          const done = () => this.dropPreviousWhenLoaded();
          img.addEventListener("load", done);
          img.addEventListener("error", done);
          img.src = this.tileUrl(this.zoom, x, y);
          this.tiles.set(key, img);
          this.layer.appendChild(img);
        }
        img.style.left = `${Math.round(x * 256 - left)}px`;
        img.style.top = `${Math.round(y * 256 - top)}px`;
      }
    }
    for (const [key, img] of this.tiles) if (!wanted.has(key)) { img.remove(); this.tiles.delete(key); }
    this.dropPreviousWhenLoaded();
    this.label.textContent = `zoom ${this.zoom} · scale ${this.scale()} · centre ${Math.round(this.center[0] / this.scale())}, ${Math.round(this.center[1] / this.scale())}`;
  }
}
