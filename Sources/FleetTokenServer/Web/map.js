// A map drawn in SVG without tiles (or on tiles from a configured URL template): Web Mercator, fitted to the
// points it is given. Places are `{latitude, longitude}`.

const svgNS = "http://www.w3.org/2000/svg";
const tileSize = 256;

function project({ latitude, longitude }) {
  const sin = Math.sin((Math.max(-85, Math.min(85, latitude)) * Math.PI) / 180);
  return { x: (longitude + 180) / 360, y: 0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI) };
}

function element(name, attributes = {}, text) {
  const node = document.createElementNS(svgNS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

export class SVGMap {
  constructor(svg, { tileURL } = {}) {
    this.svg = svg;
    this.tileURL = tileURL;
    this.width = 640;
    this.height = 480;
    svg.setAttribute("viewBox", `0 0 ${this.width} ${this.height}`);
  }

  /**
   * Redraws the map with `paths` (arrays of places, drawn as lines) and `markers` (`{place, kind, label, id}`),
   * fitted to all of them.
   */
  draw({ paths = [], markers = [] }) {
    const places = [...paths.flat(), ...markers.map((marker) => marker.place)].filter(Boolean).map(project);
    this.svg.replaceChildren();
    this.svg.append(element("rect", { class: "map-background", width: this.width, height: this.height }));
    if (places.length === 0) return;
    const xs = places.map((p) => p.x);
    const ys = places.map((p) => p.y);
    const spanX = Math.max(Math.max(...xs) - Math.min(...xs), 1e-6);
    const spanY = Math.max(Math.max(...ys) - Math.min(...ys), 1e-6);
    // Scale in pixels per world unit, fitted with a margin, and capped near street level.
    const scale = Math.min(((this.width - 80) / spanX), ((this.height - 80) / spanY), tileSize * 2 ** 18);
    const centerX = (Math.max(...xs) + Math.min(...xs)) / 2;
    const centerY = (Math.max(...ys) + Math.min(...ys)) / 2;
    const toScreen = (place) => {
      const p = project(place);
      return { x: this.width / 2 + (p.x - centerX) * scale, y: this.height / 2 + (p.y - centerY) * scale };
    };
    if (this.tileURL) this.#drawTiles(scale, centerX, centerY);
    else this.#drawGrid();
    for (const path of paths) {
      if (path.length < 2) continue;
      const points = path.map(toScreen).map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(" ");
      this.svg.append(element("polyline", { class: "map-path", points }));
    }
    for (const marker of markers) {
      if (!marker.place) continue;
      const { x, y } = toScreen(marker.place);
      const group = element("g", { class: `marker marker-${marker.kind}`, transform: `translate(${x.toFixed(1)} ${y.toFixed(1)})` });
      if (marker.id) group.id = marker.id;
      if (marker.kind === "vehicle" || marker.kind === "idle") group.append(element("circle", { r: 9 }));
      else if (marker.kind === "pickup") group.append(element("circle", { r: 7 }));
      else group.append(element("rect", { x: -7, y: -7, width: 14, height: 14 }));
      if (marker.label) group.append(element("text", { x: 12, y: 4 }, marker.label));
      group.append(element("title", {}, marker.title ?? marker.label ?? marker.kind));
      this.svg.append(group);
    }
  }

  #drawGrid() {
    for (let x = 0; x <= this.width; x += 40) {
      this.svg.append(element("line", { class: "map-grid", x1: x, y1: 0, x2: x, y2: this.height }));
    }
    for (let y = 0; y <= this.height; y += 40) {
      this.svg.append(element("line", { class: "map-grid", x1: 0, y1: y, x2: this.width, y2: y }));
    }
  }

  #drawTiles(scale, centerX, centerY) {
    const zoom = Math.max(0, Math.min(19, Math.floor(Math.log2(scale / tileSize))));
    const tiles = 2 ** zoom;
    const tilePixels = scale / tiles;
    const left = centerX - this.width / 2 / scale;
    const top = centerY - this.height / 2 / scale;
    for (let tx = Math.floor(left * tiles); tx < (left + this.width / scale) * tiles; tx += 1) {
      for (let ty = Math.floor(top * tiles); ty < (top + this.height / scale) * tiles; ty += 1) {
        if (ty < 0 || ty >= tiles) continue;
        const href = this.tileURL.replace("{z}", zoom).replace("{x}", ((tx % tiles) + tiles) % tiles).replace("{y}", ty);
        this.svg.append(element("image", {
          href, x: ((tx / tiles - left) * scale).toFixed(1), y: ((ty / tiles - top) * scale).toFixed(1),
          width: tilePixels.toFixed(1), height: tilePixels.toFixed(1),
        }));
      }
    }
  }
}
