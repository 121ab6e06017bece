//! What natives may see of the world: the seed, the common random sequence, the map and render
//! geometry, the message sink and the limits. Nothing here reaches the file system or the clock.

use geogen_diag::Span;
use geogen_random::Mt19937;

use crate::value::ObjectId;

/// Map size and render rectangle, as `Parameters.MapWidth`, `RenderOriginX`, ... show them.
#[derive(Clone, Debug, PartialEq)]
pub struct MapGeometry {
    /// `None` when the map is infinite in that dimension.
    pub map_width: Option<u32>,
    pub map_height: Option<u32>,
    /// Top-left corner of the render, in physical (scaled) pixels.
    pub render_origin_x: i64,
    pub render_origin_y: i64,
    /// Render size in physical pixels.
    pub render_width: u32,
    pub render_height: u32,
    /// 1 = one pixel per map unit; 0.5 = zoomed out twice.
    pub render_scale: f64,
}

impl Default for MapGeometry {
    fn default() -> MapGeometry {
        MapGeometry {
            map_width: None,
            map_height: None,
            render_origin_x: 0,
            render_origin_y: 0,
            render_width: 1000,
            render_height: 1000,
            render_scale: 1.0,
        }
    }
}

/// Configurable limits of one run (spec §6).
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Nested function calls (GGE2501).
    pub max_call_depth: usize,
    /// Nested code blocks within one call (GGE2502).
    pub max_block_depth: usize,
    /// Values on the object stack (GGE2503).
    pub max_object_stack: usize,
    /// Instructions executed in one run (GGE2505).
    pub instruction_budget: u64,
    /// Rendering steps recorded (GGE2504).
    pub max_rendering_steps: usize,
    /// Items in one array (GGE2506).
    pub max_array_len: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_call_depth: 1000,
            max_block_depth: 1000,
            max_object_stack: 100_000,
            instruction_budget: 100_000_000,
            max_rendering_steps: 100_000,
            max_array_len: 10_000_000,
        }
    }
}

/// A message from `Print`.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub text: String,
    pub span: Span,
}

/// The state natives share with the VM during one run.
#[derive(Debug)]
pub struct Env {
    pub script_seed: u32,
    /// The common random sequence of `Random()`: MT19937 seeded with the script seed.
    pub random: Mt19937,
    pub geometry: MapGeometry,
    pub limits: Limits,
    pub messages: Vec<Message>,
    next_object_id: u64,
}

impl Env {
    pub fn new(script_seed: u32, geometry: MapGeometry, limits: Limits) -> Env {
        Env {
            script_seed,
            random: Mt19937::new(script_seed),
            geometry,
            limits,
            messages: Vec::new(),
            next_object_id: 1,
        }
    }

    /// A fresh identity for a new shared object.
    pub fn new_object_id(&mut self) -> ObjectId {
        let id = ObjectId(self.next_object_id);
        self.next_object_id += 1;
        id
    }
}
