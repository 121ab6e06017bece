//! Binary glTF 2.0 (`.glb`) and Wavefront OBJ text of mesh chunks ([`crate::mesh`]).
//!
//! Both are written by hand, deterministically: the same chunks give the same bytes. Numbers are
//! printed in Rust's shortest round-trip form.
//!
//! GLB: a 12-byte header, a JSON chunk (padded with spaces) and a BIN chunk (padded with zeros),
//! every length a multiple of 4. Each mesh chunk is one node (its translation places it) with one
//! mesh of one triangle primitive: `POSITION` (with the `min` and `max` glTF requires), `NORMAL`,
//! `TEXCOORD_0` and 16-bit `indices`, each in its own buffer view at a 4-byte aligned offset.

use std::fmt::Write as _;

use crate::mesh::Chunk;

const GLB_MAGIC: u32 = 0x4654_6C67; // "glTF"
const CHUNK_JSON: u32 = 0x4E4F_534A; // "JSON"
const CHUNK_BIN: u32 = 0x004E_4942; // "BIN\0"
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const FLOAT: u32 = 5126;
const UNSIGNED_SHORT: u32 = 5123;
const TRIANGLES: u32 = 4;

/// Shortest round-trip text of a finite number (glTF JSON allows no NaN or infinity; the mesh
/// builder never makes one, but a 0 keeps the file valid if it ever did).
fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "0".to_string()
    }
}

fn number32(x: f32) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "0".to_string()
    }
}

fn pad_to_4(bytes: &mut Vec<u8>, fill: u8) {
    while !bytes.len().is_multiple_of(4) {
        bytes.push(fill);
    }
}

/// The most bytes a `.glb` can hold: its header stores the total length in 32 bits.
pub const GLB_MAX_BYTES: u64 = u32::MAX as u64;

/// The bytes of a `.glb` holding the chunks (an empty scene when there are none), or `None` when
/// they would not fit in one (more than [`GLB_MAX_BYTES`]). `name` becomes the scene's name.
pub fn glb(chunks: &[Chunk], name: &str) -> Option<Vec<u8>> {
    let estimate: u64 =
        chunks.iter().map(|c| c.positions.len() as u64 * 32 + c.indices.len() as u64 * 2 + 1024).sum::<u64>() + 1024;
    if estimate > GLB_MAX_BYTES {
        return None;
    }
    let mut bin: Vec<u8> = Vec::new();
    let mut views = String::new();
    let mut accessors = String::new();
    let mut meshes = String::new();
    let mut nodes = String::new();
    let mut view_count = 0usize;
    let mut add_view = |bin: &mut Vec<u8>, views: &mut String, bytes: &[u8], target: u32| -> usize {
        pad_to_4(bin, 0);
        let offset = bin.len();
        bin.extend_from_slice(bytes);
        if view_count > 0 {
            views.push(',');
        }
        let _ = write!(
            views,
            "{{\"buffer\":0,\"byteOffset\":{offset},\"byteLength\":{},\"target\":{target}}}",
            bytes.len()
        );
        view_count += 1;
        view_count - 1
    };
    let mut accessor_count = 0usize;
    for (i, chunk) in chunks.iter().enumerate() {
        let floats = |values: &mut dyn Iterator<Item = f32>| -> Vec<u8> { values.flat_map(f32::to_le_bytes).collect() };
        let positions = floats(&mut chunk.positions.iter().flatten().copied());
        let normals = floats(&mut chunk.normals.iter().flatten().copied());
        let uvs = floats(&mut chunk.uvs.iter().flatten().copied());
        let indices: Vec<u8> = chunk.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let pv = add_view(&mut bin, &mut views, &positions, ARRAY_BUFFER);
        let nv = add_view(&mut bin, &mut views, &normals, ARRAY_BUFFER);
        let tv = add_view(&mut bin, &mut views, &uvs, ARRAY_BUFFER);
        let iv = add_view(&mut bin, &mut views, &indices, ELEMENT_ARRAY_BUFFER);
        let count = chunk.positions.len();
        let (min, max) = chunk.bounds();
        let vec3 = |v: [f32; 3]| format!("[{},{},{}]", number32(v[0]), number32(v[1]), number32(v[2]));
        if accessor_count > 0 {
            accessors.push(',');
        }
        let _ = write!(
            accessors,
            "{{\"bufferView\":{pv},\"componentType\":{FLOAT},\"count\":{count},\"type\":\"VEC3\",\"min\":{},\"max\":{}}},\
             {{\"bufferView\":{nv},\"componentType\":{FLOAT},\"count\":{count},\"type\":\"VEC3\"}},\
             {{\"bufferView\":{tv},\"componentType\":{FLOAT},\"count\":{count},\"type\":\"VEC2\"}},\
             {{\"bufferView\":{iv},\"componentType\":{UNSIGNED_SHORT},\"count\":{},\"type\":\"SCALAR\"}}",
            vec3(min),
            vec3(max),
            chunk.indices.len()
        );
        let a = accessor_count;
        accessor_count += 4;
        if i > 0 {
            meshes.push(',');
            nodes.push(',');
        }
        let _ = write!(
            meshes,
            "{{\"name\":\"chunk_{x}_{y}\",\"primitives\":[{{\"attributes\":{{\"POSITION\":{a},\"NORMAL\":{},\"TEXCOORD_0\":{}}},\"indices\":{},\"mode\":{TRIANGLES}}}]}}",
            a + 1,
            a + 2,
            a + 3,
            x = chunk.pixel.0,
            y = chunk.pixel.1
        );
        let t = chunk.translation;
        let _ = write!(
            nodes,
            "{{\"name\":\"chunk_{x}_{y}\",\"mesh\":{i},\"translation\":[{},{},{}]}}",
            number(t[0]),
            number(t[1]),
            number(t[2]),
            x = chunk.pixel.0,
            y = chunk.pixel.1
        );
    }
    pad_to_4(&mut bin, 0);
    let node_list: Vec<String> = (0..chunks.len()).map(|i| i.to_string()).collect();
    let scene_name: String = name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
    // glTF forbids empty arrays: a mesh without quads is a scene without nodes.
    let scene_nodes = if chunks.is_empty() { String::new() } else { format!(",\"nodes\":[{}]", node_list.join(",")) };
    let mut json = format!(
        "{{\"asset\":{{\"version\":\"2.0\",\"generator\":\"geogen {}\"}},\"scene\":0,\"scenes\":[{{\"name\":\"{scene_name}\"{scene_nodes}}}]",
        env!("CARGO_PKG_VERSION"),
    );
    if !chunks.is_empty() {
        let _ = write!(
            json,
            ",\"nodes\":[{nodes}],\"meshes\":[{meshes}],\"accessors\":[{accessors}],\"bufferViews\":[{views}],\"buffers\":[{{\"byteLength\":{}}}]",
            bin.len()
        );
    }
    json.push('}');
    let mut json = json.into_bytes();
    pad_to_4(&mut json, b' ');
    let has_bin = !chunks.is_empty();
    let total = 12 + 8 + json.len() + if has_bin { 8 + bin.len() } else { 0 };
    let total32 = u32::try_from(total).ok()?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&GLB_MAGIC.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total32.to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(&json);
    if has_bin {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(&bin);
    }
    Some(out)
}

/// The text of an `.obj` holding the chunks: one object per chunk, positions in world metres
/// (the translation added), `vt` with v counted upwards as OBJ expects (1 − the glTF v), faces
/// `v/vt/vn` counter-clockwise seen from above.
pub fn obj(chunks: &[Chunk], name: &str) -> String {
    let mut out = format!("# geogen {} mesh of \"{name}\": x east, y up, z south, metres\n", env!("CARGO_PKG_VERSION"));
    let mut base = 1usize;
    for chunk in chunks {
        let _ = writeln!(out, "o chunk_{}_{}", chunk.pixel.0, chunk.pixel.1);
        let t = chunk.translation;
        for p in &chunk.positions {
            let world = [f64::from(p[0]) + t[0], f64::from(p[1]) + t[1], f64::from(p[2]) + t[2]];
            let _ = writeln!(out, "v {} {} {}", number(world[0]), number(world[1]), number(world[2]));
        }
        for uv in &chunk.uvs {
            let _ = writeln!(out, "vt {} {}", number32(uv[0]), number(1.0 - f64::from(uv[1])));
        }
        for n in &chunk.normals {
            let _ = writeln!(out, "vn {} {} {}", number32(n[0]), number32(n[1]), number32(n[2]));
        }
        for t in chunk.indices.chunks(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| base + usize::from(i));
            let _ = writeln!(out, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}");
        }
        base += chunk.positions.len();
    }
    out
}
