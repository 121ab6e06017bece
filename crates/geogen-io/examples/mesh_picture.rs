//! Draws a `.glb` geogen wrote as an engine would show it: a small software rasteriser (orthographic
//! view from the south-east, 35° above the horizon, Lambert shading, a z-buffer), for the pictures
//! of `docs/engines/`. It reads the file back with the `gltf` crate, so the picture shows what an
//! importer sees.
//!
//! ```text
//! cargo run -p geogen-io --example mesh_picture -- main.glb picture.png [WIDTH HEIGHT]
//! ```

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: mesh_picture IN.glb OUT.png [WIDTH HEIGHT]");
        std::process::exit(2);
    }
    let width: usize = args.get(3).and_then(|w| w.parse().ok()).unwrap_or(480);
    let height: usize = args.get(4).and_then(|h| h.parse().ok()).unwrap_or(300);
    let bytes = std::fs::read(&args[1]).expect("read the glb");
    let gltf = gltf::Gltf::from_slice(&bytes).expect("a glb");
    let blob = gltf.blob.as_deref().unwrap_or(&[]);
    let mut triangles: Vec<[[f64; 3]; 3]> = Vec::new();
    for node in gltf.nodes() {
        let t = node.transform().decomposed().0;
        let Some(mesh) = node.mesh() else { continue };
        for primitive in mesh.primitives() {
            let reader = primitive.reader(|_| Some(blob));
            let positions: Vec<[f64; 3]> = reader
                .read_positions()
                .expect("positions")
                .map(|p| [f64::from(p[0] + t[0]), f64::from(p[1] + t[1]), f64::from(p[2] + t[2])])
                .collect();
            let indices: Vec<u32> = reader.read_indices().expect("indices").into_u32().collect();
            for tri in indices.chunks_exact(3) {
                triangles.push([0, 1, 2].map(|k| positions[tri[k] as usize]));
            }
        }
    }
    // View from the south-east: screen right and up, and the depth axis towards the viewer.
    let (azimuth, elevation) = (35f64.to_radians(), 35f64.to_radians());
    let right = [azimuth.cos(), 0.0, -azimuth.sin()];
    let toward = [azimuth.sin() * elevation.cos(), elevation.sin(), azimuth.cos() * elevation.cos()];
    let up = cross(toward, right);
    let project = |p: [f64; 3]| (dot(p, right), dot(p, up), dot(p, toward));
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    let (mut low, mut high) = (f64::MAX, f64::MIN);
    for tri in &triangles {
        for p in tri {
            let (x, y, _) = project(*p);
            lo = [lo[0].min(x), lo[1].min(y)];
            hi = [hi[0].max(x), hi[1].max(y)];
            low = low.min(p[1]);
            high = high.max(p[1]);
        }
    }
    let fit = ((width as f64 - 20.0) / (hi[0] - lo[0])).min((height as f64 - 20.0) / (hi[1] - lo[1]));
    let to_screen = |p: [f64; 3]| {
        let (x, y, z) = project(p);
        (10.0 + (x - lo[0]) * fit, height as f64 - 10.0 - (y - lo[1]) * fit, z)
    };
    let light = normalise([-0.5, 0.8, -0.3]);
    let mut depth = vec![f64::MIN; width * height];
    let mut rgb = vec![250u8; width * height * 3];
    for tri in &triangles {
        let normal = normalise(cross(sub(tri[1], tri[0]), sub(tri[2], tri[0])));
        let shade = 0.25 + 0.75 * dot(normal, light).max(0.0);
        let mean = (tri[0][1] + tri[1][1] + tri[2][1]) / 3.0;
        let colour = terrain_colour((mean - low) / (high - low).max(1e-9));
        let s = tri.map(to_screen);
        let (x0, x1) = (s.iter().map(|p| p.0).fold(f64::MAX, f64::min), s.iter().map(|p| p.0).fold(f64::MIN, f64::max));
        let (y0, y1) = (s.iter().map(|p| p.1).fold(f64::MAX, f64::min), s.iter().map(|p| p.1).fold(f64::MIN, f64::max));
        let area = edge(s[0], s[1], s[2]);
        if area.abs() < 1e-12 {
            continue;
        }
        for py in (y0.floor().max(0.0) as usize)..=(y1.ceil().min(height as f64 - 1.0) as usize) {
            for px in (x0.floor().max(0.0) as usize)..=(x1.ceil().min(width as f64 - 1.0) as usize) {
                let p = (px as f64 + 0.5, py as f64 + 0.5, 0.0);
                let w = [edge(s[1], s[2], p) / area, edge(s[2], s[0], p) / area, edge(s[0], s[1], p) / area];
                if w.iter().any(|&w| w < 0.0) {
                    continue;
                }
                let z = w[0] * s[0].2 + w[1] * s[1].2 + w[2] * s[2].2;
                let i = py * width + px;
                if z > depth[i] {
                    depth[i] = z;
                    for c in 0..3 {
                        rgb[i * 3 + c] = (f64::from(colour[c]) * shade).min(255.0) as u8;
                    }
                }
            }
        }
    }
    let file = std::fs::File::create(&args[2]).expect("create the picture");
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width as u32, height as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header().and_then(|mut w| w.write_image_data(&rgb)).expect("write the picture");
    eprintln!("drew {} triangles into {}", triangles.len(), args[2]);
}

/// Low ground green, then brown, then white.
fn terrain_colour(t: f64) -> [u8; 3] {
    let stops = [(0.0, [70.0, 120.0, 60.0]), (0.55, [150.0, 130.0, 90.0]), (1.0, [245.0, 245.0, 245.0])];
    let t = t.clamp(0.0, 1.0);
    let k = if t <= stops[1].0 { 0 } else { 1 };
    let (a, b) = (stops[k], stops[k + 1]);
    let f = (t - a.0) / (b.0 - a.0);
    [0, 1, 2].map(|c| (a.1[c] + (b.1[c] - a.1[c]) * f) as u8)
}

fn edge(a: (f64, f64, f64), b: (f64, f64, f64), p: (f64, f64, f64)) -> f64 {
    (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0)
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normalise(a: [f64; 3]) -> [f64; 3] {
    let length = dot(a, a).sqrt().max(1e-12);
    [a[0] / length, a[1] / length, a[2] / length]
}
