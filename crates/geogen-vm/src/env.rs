//! What natives may see of the world: the seed, the common random sequence, the map and render
//! geometry, the message sink and the limits. Nothing here reaches the file system or the clock.

use std::collections::BTreeMap;
use std::sync::Arc;

use geogen_diag::{SourceFile, Span};
use geogen_random::Mt19937;
use geogen_render::{InputRaster, Location, Rect, RenderingSequence};

use crate::heap::Heap;
use crate::host::{Extensions, Label, NamedTexts};
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

impl MapGeometry {
    /// The physical extent of a finite dimension: `floor(map size × scale)` pixels from 0.
    fn physical_extent(map_size: Option<u32>, scale: f64) -> Option<i64> {
        map_size.map(|size| (f64::from(size) * scale).floor() as i64)
    }

    /// The rectangle a `yield` renders, in physical pixels: the render rectangle, clipped to the
    /// map in finite dimensions (the original compared a physical origin with a logical map size;
    /// here both are physical). Empty when the render lies outside a finite map.
    pub fn yield_rect(&self) -> Rect {
        let clip = |origin: i64, size: u32, extent: Option<i64>| -> (i64, u64) {
            let end = origin.saturating_add(i64::from(size));
            match extent {
                None => (origin, u64::from(size)),
                Some(extent) => {
                    let start = origin.max(0);
                    let end = end.min(extent);
                    (start, end.saturating_sub(start).max(0) as u64)
                }
            }
        };
        let scale = self.render_scale;
        let (x, width) = clip(self.render_origin_x, self.render_width, Self::physical_extent(self.map_width, scale));
        let (y, height) = clip(self.render_origin_y, self.render_height, Self::physical_extent(self.map_height, scale));
        if width == 0 || height == 0 {
            return Rect::EMPTY;
        }
        Rect { x, y, width, height }
    }

    /// The yield rectangle grown by `margin` pixels on every side, clipped to the map's physical
    /// extent in finite dimensions (empty when the yield rectangle is). Hosts that derive maps from
    /// neighbouring pixels (normal maps, meshes) ask for a margin so that a tile's derived pixels
    /// equal those of a larger render; at the edge of a finite map there is no neighbour, and both
    /// renders see the same edge.
    pub fn yield_rect_with_margin(&self, margin: u32) -> Rect {
        let core = self.yield_rect();
        if margin == 0 || core.is_empty() {
            return core;
        }
        let grown = core.expand(u64::from(margin));
        let extent = |size: Option<u32>| match Self::physical_extent(size, self.render_scale) {
            Some(end) => geogen_render::Interval::new(0, end.max(0) as u64),
            None => geogen_render::Interval::from_range(i128::from(i64::MIN), i128::from(i64::MAX)),
        };
        grown.intersect(&Rect::from_intervals(extent(self.map_width), extent(self.map_height)))
    }
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
    /// Bytes in one string built by the script: a concatenation, a `Print` or `TriggerError`
    /// message (GGE2507). Without it, `s = s + s` in a short loop asks for terabytes.
    pub max_string_len: usize,
    /// Bytes the script's live data may hold: arrays, built strings, random sequences and the
    /// messages kept for the caller (GGE2508). See [`crate::heap`].
    pub max_heap_bytes: u64,
}

/// The default script heap limit: 1 GiB.
pub const DEFAULT_MAX_HEAP_BYTES: u64 = 1 << 30;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_call_depth: 1000,
            max_block_depth: 1000,
            max_object_stack: 100_000,
            instruction_budget: 100_000_000,
            max_rendering_steps: 100_000,
            max_array_len: 10_000_000,
            max_string_len: 10_000_000,
            max_heap_bytes: DEFAULT_MAX_HEAP_BYTES,
        }
    }
}

/// A message from `Print`.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub text: String,
    pub span: Span,
}

impl Message {
    /// The bytes a kept message of `len` bytes holds (its text and its place in the list).
    pub fn footprint(len: usize) -> u64 {
        (len + std::mem::size_of::<Message>() + 16) as u64
    }
}

/// Where `Print` messages go as they are printed, instead of being kept in [`Env::messages`].
pub struct MessageSink(Box<dyn FnMut(&Message)>);

impl MessageSink {
    pub fn new(sink: impl FnMut(&Message) + 'static) -> MessageSink {
        MessageSink(Box::new(sink))
    }
}

impl std::fmt::Debug for MessageSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MessageSink")
    }
}

/// The state natives share with the VM during one run.
#[derive(Debug)]
pub struct Env {
    pub script_seed: u32,
    /// The common random sequence of `Random()`: MT19937 seeded with the script seed.
    pub random: Mt19937,
    pub geometry: MapGeometry,
    pub limits: Limits,
    /// The live bytes of the script's data, against `limits.max_heap_bytes`.
    pub heap: Heap,
    /// Messages printed so far, when there is no sink (they count on the heap).
    pub messages: Vec<Message>,
    /// Receives each message as it is printed; then nothing is kept.
    pub message_sink: Option<MessageSink>,
    /// The rendering sequence map operations record into (the VM never computes pixels).
    pub sequence: RenderingSequence,
    /// When set, only yields of these map names record a rendering step (`--maps a,b`); the
    /// others still count as yielded.
    pub enabled_maps: Option<Vec<String>>,
    /// The script's text, so recorded steps can carry line:column locations.
    pub source: Option<Arc<SourceFile>>,
    /// Height maps the host gave by name (`HeightMap.Input(name)`); shared, never read by the VM.
    pub inputs: BTreeMap<String, Arc<InputRaster>>,
    /// Pixels a yield records beyond the render rectangle on every side (see
    /// [`MapGeometry::yield_rect_with_margin`]); 0 unless the host derives maps from neighbours.
    pub yield_margin: u32,
    /// Labels placed by the script, in order (each counted on the heap).
    pub labels: Vec<Label>,
    /// Texts the host named for the run (`--rules NAME=FILE`).
    pub named_texts: NamedTexts,
    /// State natives keep during the run (see [`Extensions`]).
    pub extensions: Extensions,
    next_object_id: u64,
    /// Work done so far against `limits.instruction_budget`: one unit per instruction, plus what
    /// natives charge for work proportional to their data (see [`Env::spend`]).
    spent: u64,
}

impl Env {
    /// A fresh environment; fails only for a render scale that is not finite and positive.
    pub fn new(script_seed: u32, geometry: MapGeometry, limits: Limits) -> Result<Env, crate::RuntimeError> {
        let sequence = RenderingSequence::new(geometry.render_scale)
            .map_err(crate::RuntimeError::from_render)?
            .with_max_steps(limits.max_rendering_steps);
        Ok(Env {
            script_seed,
            random: Mt19937::new(script_seed),
            geometry,
            heap: Heap::new(limits.max_heap_bytes),
            limits,
            messages: Vec::new(),
            message_sink: None,
            sequence,
            enabled_maps: None,
            source: None,
            inputs: BTreeMap::new(),
            yield_margin: 0,
            labels: Vec::new(),
            named_texts: NamedTexts::default(),
            extensions: Extensions::default(),
            next_object_id: 1,
            spent: 0,
        })
    }

    /// The line and column of a span, for recorded steps; `None` without source text.
    pub fn location(&self, span: Span) -> Location {
        self.source.as_ref().map(|file| {
            let lc = file.line_col(span.start);
            (lc.line, lc.column)
        })
    }

    /// Hands a `Print` message to the sink, or keeps it (counted on the heap: GGE2508 when full).
    pub fn print(&mut self, message: Message) -> Result<(), crate::RuntimeError> {
        match &mut self.message_sink {
            Some(sink) => (sink.0)(&message),
            None => {
                self.heap.charge(Message::footprint(message.text.len()))?;
                self.messages.push(message);
            }
        }
        Ok(())
    }

    /// Whether a yield of `name` records a rendering step.
    pub fn map_enabled(&self, name: &str) -> bool {
        self.enabled_maps.as_ref().is_none_or(|maps| maps.iter().any(|m| m == name))
    }

    /// Charges `units` of work to the instruction budget; GGE2505 once it is used up. The VM spends
    /// one unit per instruction; a native whose work grows with its data (building, sorting or
    /// searching an array, building a long string) spends in proportion, so a single call cannot
    /// run unbounded under the cover of one instruction.
    pub fn spend(&mut self, units: u64) -> Result<(), crate::RuntimeError> {
        self.spent = self.spent.saturating_add(units);
        if self.spent > self.limits.instruction_budget {
            return Err(crate::RuntimeError::new(
                geogen_diag::codes::GGE2505,
                format!("the script used up its budget of {} instructions", self.limits.instruction_budget),
            )
            .with_hint("is there an endless loop? long array and string operations count in proportion to their size; otherwise raise the budget with --max-instructions N"));
        }
        Ok(())
    }

    /// Work charged so far (instructions plus native work).
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// A fresh identity for a new shared object.
    pub fn new_object_id(&mut self) -> ObjectId {
        let id = ObjectId(self.next_object_id);
        self.next_object_id += 1;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(map: Option<u32>, origin: i64, size: u32, scale: f64) -> MapGeometry {
        MapGeometry {
            map_width: map,
            map_height: map,
            render_origin_x: origin,
            render_origin_y: origin,
            render_width: size,
            render_height: size,
            render_scale: scale,
        }
    }

    #[test]
    fn infinite_maps_yield_the_render_rectangle_anywhere() {
        let r = geometry(None, -500, 300, 1.0).yield_rect();
        assert_eq!((r.x, r.y, r.width, r.height), (-500, -500, 300, 300));
    }

    #[test]
    fn finite_maps_clip_the_render_to_the_scaled_map() {
        // A 1000-unit map at scale 0.5 is 500 physical pixels.
        let r = geometry(Some(1000), 400, 300, 0.5).yield_rect();
        assert_eq!((r.x, r.y, r.width, r.height), (400, 400, 100, 100));
        let r = geometry(Some(1000), -50, 100, 1.0).yield_rect();
        assert_eq!((r.x, r.y, r.width, r.height), (0, 0, 50, 50));
        assert!(geometry(Some(100), 200, 50, 1.0).yield_rect().is_empty());
    }
}
