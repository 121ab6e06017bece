// The infinite-map view: 256-pixel tiles from the server's tile endpoint, panned by dragging and
// zoomed with the wheel or the buttons. Zoom levels are render scales (zoom 8 is scale 1), so
// zooming out shows the same world at a lower scale; tiles are exact, so it is seamless.

export class Slippy {
  constructor(container, { tileUrl, maxZoom, zoomScale1, onCursor }) {
    this.container = container;
    this.tileUrl = tileUrl;
    this.maxZoom = maxZoom;
    this.zoom = zoomScale1 - 1;
    this.zoomScale1 = zoomScale1;
    this.onCursor = onCursor;
    this.center = [0, 0]; // the point at the view's centre, in physical pixels at this zoom
    this.tiles = new Map();
    this.layer = document.createElement("div");
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
    container.addEventListener("wheel", (e) => { e.preventDefault(); this.zoomBy(e.deltaY < 0 ? 1 : -1); }, { passive: false });
  }

  scale() { return Math.pow(2, this.zoom - this.zoomScale1); }

  zoomBy(d) {
    const z = Math.max(0, Math.min(this.maxZoom, this.zoom + d));
    if (z === this.zoom) return;
    const f = Math.pow(2, z - this.zoom);
    this.center = [this.center[0] * f, this.center[1] * f];
    this.zoom = z;
    this.clear();
    this.update();
  }

  // Centres the view on a map point (map units).
  centreOn(x, y) { this.center = [x * this.scale(), y * this.scale()]; }

  clear() { for (const img of this.tiles.values()) img.remove(); this.tiles.clear(); }

  refresh() { this.clear(); this.update(); }

  update() {
    const { clientWidth: w, clientHeight: h } = this.container;
    if (!w || !h) return;
    const left = this.center[0] - w / 2, top = this.center[1] - h / 2;
    const x0 = Math.floor(left / 256), x1 = Math.floor((left + w) / 256), y0 = Math.floor(top / 256), y1 = Math.floor((top + h) / 256);
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
          img.src = this.tileUrl(this.zoom, x, y);
          this.tiles.set(key, img);
          this.layer.appendChild(img);
        }
        img.style.left = `${Math.round(x * 256 - left)}px`;
        img.style.top = `${Math.round(y * 256 - top)}px`;
      }
    }
    for (const [key, img] of this.tiles) if (!wanted.has(key)) { img.remove(); this.tiles.delete(key); }
    this.label.textContent = `zoom ${this.zoom} · scale ${this.scale()} · centre ${Math.round(this.center[0] / this.scale())}, ${Math.round(this.center[1] / this.scale())}`;
  }
}
